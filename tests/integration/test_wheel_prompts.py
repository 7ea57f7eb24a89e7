"""The wheel carries the prompts: an installed package renders its own copy, not the checkout's.

The wheel is built once per run without network (``python -m build --wheel --no-isolation``, which
needs the build backend ``hatchling`` installed: it is in the ``dev`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from react_agent._prompts import LANGUAGES, PROMPT_SETS, TEMPLATE_VARIABLES, builtin_root


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the checkout."""
    if importlib.util.find_spec("build") is None or importlib.util.find_spec("hatchling") is None:
        pytest.skip("building the wheel offline needs 'build' and 'hatchling' (pip install -e '.[dev]')")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("react_agent-*.whl")
    return built


@pytest.fixture(scope="module")
def unzipped(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's contents, as site-packages would hold them."""
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def test_wheel_contains_every_prompt_template(wheel: Path) -> None:
    """Every template of every language is inside the wheel, under react_agent/prompts/."""
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "react_agent/prompts/ru/step.jinja" in names
    assert "react_agent/prompts/en/step.jinja" in names
    missing = [f"{lang}/{t}" for lang in LANGUAGES for t in TEMPLATE_VARIABLES
               if f"react_agent/prompts/{lang}/{t}.jinja" not in names]
    assert missing == []


def test_wheel_contains_the_compact_prompt_sets(wheel: Path) -> None:
    """Each built-in compact set ships its override folder, with the same files as the checkout."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (n for n in PROMPT_SETS if n not in LANGUAGES):
        files = {f"react_agent/prompts/{name}/{p.name}" for p in (ROOT / "prompts" / name).glob("*.jinja")}
        assert f"react_agent/prompts/{name}/step.jinja" in files
        assert files <= names, sorted(files - names)


def test_wheel_is_typed(wheel: Path) -> None:
    """The wheel ships the py.typed marker, so type checkers use the package's annotations."""
    assert "react_agent/py.typed" in zipfile.ZipFile(wheel).namelist()


def test_wheel_leaves_out_the_checkout_extras(wheel: Path) -> None:
    """Tests, docs and benchmarks are not installed as packages."""
    tops = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {"tests", "docs", "bench", "prompts"}.isdisjoint(tops)


_PROBE = textwrap.dedent("""
    import json
    import react_agent
    from react_agent import ReactAgent
    from react_agent._prompts import builtin_root
    from react_agent.testing import ScriptedChatModel

    llm = ScriptedChatModel(['{"action": "FINISH", "action_input": "ok"}'])
    result = ReactAgent(llm, []).run("probe task")
    print(json.dumps({"file": react_agent.__file__, "root": str(builtin_root()), "status": result.status,
                      "prompt": llm.calls[0].text}))
""")


def test_installed_wheel_renders_its_own_prompts(unzipped: Path, tmp_path: Path) -> None:
    """Imported from the unpacked wheel, away from the checkout, the agent reads the wheel's templates."""
    marker = "WHEEL COPY OF THE STEP PROMPT"
    step = unzipped / "react_agent" / "prompts" / "ru" / "step.jinja"
    step.write_text(marker + "\n" + step.read_text(encoding="utf-8"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(unzipped)
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert Path(report["file"]).resolve().is_relative_to(unzipped.resolve())
    assert Path(report["root"]).resolve() == (unzipped / "react_agent" / "prompts").resolve()
    assert report["status"] == "finished"
    assert report["prompt"].startswith(marker + "\n")
    assert "probe task" in report["prompt"]


def test_checkout_uses_the_repository_prompts() -> None:
    """In the checkout (editable install) the built-in prompts are the repository's prompts/ folder."""
    import react_agent

    if not Path(react_agent.__file__).resolve().is_relative_to(ROOT):
        pytest.skip("react_agent is not imported from this checkout")
    assert builtin_root() == (ROOT / "prompts").resolve()
