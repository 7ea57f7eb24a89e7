"""What a newcomer meets first in the real ``react-agent`` command (a subprocess): a demo database that does not
outlive the command, MCP servers in batch and eval, quiet MCP servers, and install hints that work from a
checkout."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
HELPERS = TESTS / "helpers"
HAS_MCP = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("langchain_mcp_adapters") is not None
needs_mcp = pytest.mark.skipif(not HAS_MCP, reason="the mcp extra is not installed (pip install '.[mcp]')")


def reply(action: str, action_input: object) -> str:
    return json.dumps({"thought": "t", "action": action, "action_input": action_input})


def script(folder: Path, name: str, *replies: str) -> str:
    path = folder / name
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def react_agent(*argv: str, cwd: Path, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """The real command in a fresh interpreter (``prelude``: Python run before it, e.g. to hide a package)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HELPERS)]), "NO_COLOR": "1"}
    code = f"{prelude}\nimport sys\nfrom react_agent.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


# ------------------------------------------------------------------------------ the demo database


def _register_then_search(tmp_path: Path, *db: str) -> str:
    """Run `register Ivan`, then, in a second command, `find Ivan`; the second run's observation."""
    first = react_agent("run", "Register Ivan", *db, "--model", script(
        tmp_path, "register.json", reply("register_user", {"username": "Ivan", "email": "ivan@test.com"}),
        reply("FINISH", "done")), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Observation: " in first.stderr and "Ivan" in first.stderr
    second = react_agent("run", "Find Ivan", *db, "--model", script(
        tmp_path, "search.json", reply("search_db", {"username": "Ivan"}), reply("FINISH", "done")), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    return second.stderr.split("Observation:", 1)[1].split("Step 2", 1)[0]


def test_runs_without_db_do_not_see_each_others_users(tmp_path: Path) -> None:
    observation = _register_then_search(tmp_path)
    assert "ivan@test.com" not in observation and "not found" in observation.lower(), observation


def test_runs_with_the_same_db_share_their_users(tmp_path: Path) -> None:
    observation = _register_then_search(tmp_path, "--db", str(tmp_path / "users.db"))
    assert "ivan@test.com" in observation


# ------------------------------------------------------------------------------ --mcp in batch and eval

CHATTY = f"python {HELPERS / 'chatty_mcp_server.py'}"
TASKS = [{"id": "six", "task": "6 times 7?", "checks": {"answer": "42"}},
         {"id": "seven", "task": "7 times 8?", "checks": {"answer": "56"}}]


def _tasks(folder: Path) -> Path:
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8")
    return path


def _multiply_script(folder: Path) -> str:
    """Both tasks, in order (one task at a time): call multiply, then answer with the product."""
    return script(folder, "multiply.json", reply("multiply", {"a": 6, "b": 7}), reply("FINISH", "42"),
                  reply("multiply", {"a": 7, "b": 8}), reply("FINISH", "56"))


def _observations(journal: Path) -> list[str]:
    records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    return [r["observation"] for r in records if r["type"] == "step" and r.get("action") == "multiply"]


@needs_mcp
def test_batch_tasks_call_the_tools_of_an_mcp_server(tmp_path: Path) -> None:
    done = react_agent("batch", str(_tasks(tmp_path)), "--out", "out.jsonl", "--mcp", CHATTY, "--concurrency", "1",
                       "--model", _multiply_script(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(r["id"], r["passed"], [c["tool"] for c in r["tool_calls"]]) for r in results] == [
        ("six", True, ["multiply"]), ("seven", True, ["multiply"])]
    assert _observations(tmp_path / "out.jsonl.journal" / "six.jsonl") == ["42"]
    assert _observations(tmp_path / "out.jsonl.journal" / "seven.jsonl") == ["56"]


@needs_mcp
def test_eval_variants_call_the_tools_of_an_mcp_server(tmp_path: Path) -> None:
    done = react_agent("eval", str(_tasks(tmp_path)), "--mcp", CHATTY, "--concurrency", "1", "--no-plot",
                       "--out-dir", "ev", "--model", _multiply_script(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _observations(tmp_path / "ev" / "react-en.journal" / "seven.jsonl") == ["56"]


def test_batch_mcp_with_the_ray_backend_names_the_fix(tmp_path: Path) -> None:
    """Ray workers cannot carry this process's MCP sessions: one line saying what to use instead, exit 2,
    before any server starts or task runs."""
    done = react_agent("batch", str(_tasks(tmp_path)), "--out", "out.jsonl", "--mcp", CHATTY, "--backend", "ray",
                       "--model", _multiply_script(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    error = done.stderr.strip().splitlines()[-1]
    assert "--mcp needs --backend local" in error and "--tools" in error
    assert not (tmp_path / "out.jsonl").exists()


# ------------------------------------------------------------------------------ quiet MCP servers


@needs_mcp
@pytest.mark.parametrize("command", ["run", "batch"])
def test_an_mcp_servers_info_logs_stay_out_of_the_terminal(command: str, tmp_path: Path) -> None:
    """FastMCP logs every request at INFO on its stderr: none of it reaches the user's terminal, while the
    server's warnings still do (as react-agent warnings naming the server)."""
    if command == "run":
        argv = ["run", "6 times 7?", "--model", script(tmp_path, "s.json", reply("multiply", {"a": 6, "b": 7}),
                                                       reply("FINISH", "42"))]
    else:
        argv = ["batch", str(_tasks(tmp_path)), "--out", "out.jsonl", "--concurrency", "1", "--model",
                _multiply_script(tmp_path)]
    done = react_agent(*argv, "--mcp", CHATTY, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Processing request" not in done.stderr
    assert [line for line in done.stderr.splitlines() if " INFO " in f" {line} " or "INFO:" in line] == []
    assert any(line.startswith("WARNING react_agent") and "MCP server chatty_mcp_server" in line
               and "multiplying 6 by 7" in line for line in done.stderr.splitlines()), done.stderr


@needs_mcp
def test_debug_shows_an_mcp_servers_info_logs(tmp_path: Path) -> None:
    done = react_agent("run", "6 times 7?", "--debug", "--mcp", CHATTY, "--model", script(
        tmp_path, "s.json", reply("multiply", {"a": 6, "b": 7}), reply("FINISH", "42")), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("DEBUG react_agent") and "Processing request" in line
               for line in done.stderr.splitlines()), done.stderr


# ------------------------------------------------------------------------------ the install hint of --mcp


@pytest.mark.parametrize("missing", ["mcp", "langchain_mcp_adapters"])
def test_mcp_without_the_extra_names_the_extra_and_the_checkout_install(missing: str, tmp_path: Path) -> None:
    """The hint is worded as the other extras' hints: the extra, how to install it from a checkout, and the
    packages themselves; exit 8."""
    done = react_agent("run", "t", "--mcp", CHATTY, "--model", script(tmp_path, "s.json", reply("FINISH", "no")),
                       cwd=tmp_path, prelude=f"import sys; sys.modules[{missing!r}] = None")
    assert done.returncode == 8, done.stderr
    error = done.stderr.strip().splitlines()
    assert len(error) == 1, done.stderr
    assert ("install the extra react-agent[mcp] (pip install '.[mcp]' in a checkout of react-agent, or pip install "
            "mcp langchain-mcp-adapters)") in error[0]
    assert error[0].startswith("react-agent: error: --mcp: ")
