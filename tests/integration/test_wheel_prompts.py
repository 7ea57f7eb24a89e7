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


def test_wheel_contains_the_serve_page(wheel: Path) -> None:
    """The page of `react-agent serve` and the template of `view` are package data of the wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    static = {f"react_agent/serve/static/{p.name}" for p in (ROOT / "react_agent" / "serve" / "static").iterdir()}
    assert "react_agent/serve/static/index.html" in static
    assert static <= names, sorted(static - names)


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
    step = unzipped / "react_agent" / "prompts" / "en" / "step.jinja"  # the probe task is English
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


_SMOKE = textwrap.dedent("""
    import json, subprocess, sys
    from importlib.metadata import distribution, requires, version
    from pathlib import Path

    import react_agent
    from packaging.requirements import Requirement

    names = distribution("react-agent").metadata.get_all("Provides-Extra") or []
    reqs = [Requirement(text) for text in requires("react-agent") or []]
    extras = {"": [r for r in reqs if r.marker is None]}
    for name in names:
        extras[name] = [r for r in reqs if r.marker is not None and r.marker.evaluate({"extra": name})]
    unmet = {}
    for extra, reqs in extras.items():
        for req in reqs:
            try:
                have = version(req.name)
            except Exception:
                unmet.setdefault(extra, []).append(req.name)
                continue
            if not req.specifier.contains(have, prereleases=True):
                unmet.setdefault(extra, []).append(f"{req.name} {have}")
    print(json.dumps({"file": react_agent.__file__, "extras": sorted(extras), "unmet": unmet,
                      "entry": [e.name for e in distribution("react-agent").entry_points]}))
""")


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (--no-deps); the dependencies are this environment's, reached
    through a .pth file (so nothing is downloaded and the checkout's editable install is not visible)."""
    import sysconfig

    home = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=120)
    python = home / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    checkout = {str(ROOT), str(ROOT.resolve())}
    deps = [p for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]} if p not in checkout]
    (site / "_react_agent_test_deps.pth").write_text("\n".join(deps) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return home


def _in_venv(venv: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(NO_COLOR="1", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_in_a_fresh_venv_imports_from_itself_and_declares_every_extra(venv: Path, tmp_path: Path) -> None:
    """pip-installed into a fresh venv: react_agent comes from the venv, the wheel's metadata has every extra
    of pyproject.toml, and this environment satisfies each extra's requirements (all but the weights of the
    catalogue's other models, which the set-up does not download, and the benchmarks' peers)."""
    tomllib = pytest.importorskip("tomllib")
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    done = _in_venv(venv, str(venv / "bin" / "python"), "-c", _SMOKE, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert Path(report["file"]).resolve().is_relative_to(venv.resolve())
    assert set(report["extras"]) - {""} == extras
    from react_agent.models import CATALOG, DEFAULT_LOCAL_MODEL

    optional = {entry.extra for entry in CATALOG.values() if entry.name != DEFAULT_LOCAL_MODEL}
    optional.add("bench")  # the benchmarks' peers: the lowest-version run (.ci/test-lowest) leaves them out
    assert set(report["unmet"]) <= optional, report["unmet"]
    assert report["entry"] == ["react-agent"]


def test_the_installed_command_runs_a_task_offline(venv: Path, tmp_path: Path) -> None:
    """The venv's react-agent command: --version, a scripted run on the demo tools (exit 0, the answer on
    stdout), and setup-local's help."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"thought": "add", "action": "calculator", "action_input": {"expression": "2 + 40"}},
        {"thought": "done", "action": "FINISH", "action_input": "42"}]))
    command = str(venv / "bin" / "react-agent")
    version = _in_venv(venv, command, "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("react-agent ")
    run = _in_venv(venv, command, "run", "What is 2 + 40?", "--model", f"scripted:{script}", "--db",
                   str(tmp_path / "demo.db"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "42" and "Observation: 42" in run.stderr
    setup = _in_venv(venv, command, "setup-local", "--help", cwd=tmp_path)
    assert setup.returncode == 0 and "portable" in setup.stdout
