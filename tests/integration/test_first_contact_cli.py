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
