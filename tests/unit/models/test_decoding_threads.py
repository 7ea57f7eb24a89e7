"""The embedded model decodes with one thread per physical core unless told otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from react_agent.errors import ConfigError
from react_agent.models import LocalChatModel
from react_agent.models.local._cpus import cpu_quota, physical_cores


def _topology(root: Path, cores: dict[int, tuple[int, int]]) -> Path:
    for cpu, (package, core) in cores.items():
        folder = root / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        (folder / "physical_package_id").write_text(f"{package}\n")
        (folder / "core_id").write_text(f"{core}\n")
    return root


def test_each_cpu_without_smt_is_a_core(tmp_path: Path) -> None:
    root = _topology(tmp_path, {0: (0, 0), 1: (0, 1)})
    assert physical_cores([0, 1], root) == 2


def test_two_hardware_threads_of_one_core_count_once(tmp_path: Path) -> None:
    root = _topology(tmp_path, {0: (0, 0), 1: (0, 1), 2: (0, 0), 3: (0, 1)})
    assert physical_cores([0, 1, 2, 3], root) == 2


def test_cores_of_two_packages_with_the_same_id_are_distinct(tmp_path: Path) -> None:
    root = _topology(tmp_path, {0: (0, 0), 1: (1, 0)})
    assert physical_cores([0, 1], root) == 2


def test_only_the_cpus_the_process_may_use_count(tmp_path: Path) -> None:
    root = _topology(tmp_path, {0: (0, 0), 1: (0, 1), 2: (0, 2), 3: (0, 3)})
    assert physical_cores([1, 3], root) == 2


def test_an_unreadable_topology_leaves_the_choice_to_llama_cpp(tmp_path: Path) -> None:
    root = _topology(tmp_path, {0: (0, 0)})
    assert physical_cores([0, 1], root) is None
    assert physical_cores([], root) is None


def test_the_default_reads_the_cpus_of_this_process() -> None:
    found = physical_cores()
    assert found is None or found >= 1


@pytest.mark.parametrize(("cpu_max", "cpus"), [("200000 100000", 2), ("150000 100000", 2), ("50000 100000", 1),
                                               ("max 100000", None), ("garbage", None)])
def test_a_cgroup_v2_quota_caps_the_threads(tmp_path: Path, cpu_max: str, cpus: int | None) -> None:
    (tmp_path / "cpu.max").write_text(cpu_max + "\n")
    assert cpu_quota(tmp_path) == cpus


@pytest.mark.parametrize(("quota", "cpus"), [("400000", 4), ("-1", None)])
def test_a_cgroup_v1_quota_caps_the_threads(tmp_path: Path, quota: str, cpus: int | None) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text(quota + "\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_quota(tmp_path) == cpus


def test_no_cgroup_files_means_no_quota(tmp_path: Path) -> None:
    assert cpu_quota(tmp_path) is None


@pytest.mark.parametrize(("cores", "quota", "threads"), [(8, 2, 2), (2, 4, 2), (None, 2, None), (4, None, 4)])
def test_the_default_is_the_cores_at_most_the_quota(monkeypatch: pytest.MonkeyPatch, cores: int | None,
                                                    quota: int | None, threads: int | None) -> None:
    import react_agent.models.local._cpus as cpus_module

    monkeypatch.setattr(cpus_module, "physical_cores", lambda: cores)
    monkeypatch.setattr(cpus_module, "cpu_quota", lambda: quota)
    assert cpus_module.decoding_threads() == threads


@pytest.mark.parametrize("threads", [0, -2, 1.5, "2", True])
def test_a_thread_count_that_is_no_positive_whole_number_is_a_config_error(threads: object) -> None:
    with pytest.raises(ConfigError, match="n_threads"):
        LocalChatModel(n_threads=threads)


def test_a_positive_thread_count_is_kept() -> None:
    assert LocalChatModel(n_threads=2).n_threads == 2
    assert LocalChatModel().n_threads is None


class _Loaded:
    """A stand-in for ``llama_cpp``: records how each ``Llama`` is made."""

    made: ClassVar[list[dict[str, object]]] = []

    class Llama:
        def __init__(self, **kwargs: object) -> None:
            _Loaded.made.append(kwargs)

        def close(self) -> None:
            pass


@pytest.mark.parametrize(("given", "cores", "used"), [(None, 2, 2), (None, None, None), (3, 2, 3)])
def test_the_model_is_loaded_with_one_thread_per_core_unless_given(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: int | None, cores: int | None,
        used: int | None) -> None:
    import react_agent.models.local._model as model_module

    weights = tmp_path / f"m{given}{cores}.gguf"
    weights.write_bytes(b"GGUF")
    _Loaded.made.clear()
    monkeypatch.setattr(model_module, "_import_llama_cpp", lambda: _Loaded)
    monkeypatch.setattr(model_module, "route_llama_logs", lambda *a, **k: None)
    monkeypatch.setattr(model_module, "decoding_threads", lambda: cores)
    LocalChatModel.clear_cache()
    try:
        LocalChatModel(model_path=str(weights), n_threads=given)._client()
    finally:
        LocalChatModel.clear_cache()
    assert [made["n_threads"] for made in _Loaded.made] == [used]
