"""Running the ``react-agent batch`` and ``eval`` commands in-process: a task file, a script, the handler."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

from conftest import call, finish

from react_agent.cli._batch import add_batch_commands
from react_agent.cli._main import Console

TASKS = [
    {"id": "calc", "task": "What is 17 * 23?", "checks": {"answer": "391"}},
    {"id": "ivan", "task": "Register user Ivan with email ivan@test.com",
     "checks": {"tool_calls": [{"tool": "register_user", "args": {"username": "Ivan"}}]}},
    {"id": "olga", "task": "Register user Olga with email olga@test.com"},
]
SCRIPT = [call("calculator", expression="17 * 23"), finish("17 * 23 = 391"),
          call("register_user", username="Ivan", email="ivan@test.com"), finish("Ivan is registered."),
          call("register_user", username="Olga", email="olga@test.com"), finish("Olga is registered.")]


def write(folder: Path, tasks: list[dict[str, Any]] = TASKS, script: list[str] = SCRIPT) -> tuple[Path, Path]:
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    return folder / "tasks.jsonl", folder / "script.json"


def run_cli(argv: list[str], *, tty: bool = False) -> tuple[int, str, str]:
    """Parse ``argv`` with the batch commands and run the handler, as react_agent.cli.main does."""
    parser = argparse.ArgumentParser(prog="react-agent")
    add_batch_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    console = Console()
    console.out, console.err, console.tty = io.StringIO(), io.StringIO(), tty
    code = args.func(args, console)
    return code, console.out.getvalue(), console.err.getvalue()
