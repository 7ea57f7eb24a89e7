"""Helper process of test_crash_resume.py: a journaled agent whose tool writes to SQLite exactly once per key.

``python tests/helpers/crash_worker.py serve`` is a fork server: it imports everything once, prints ``ready``, then
for each line ``run <folder> <delay> [<crash point>]`` forks a child that runs the agent in ``<folder>``
(``run.jsonl`` journal, ``ledger.db`` database), prints ``pid <pid>`` and, once the child is gone,
``exit <status>`` (negative: killed by that signal). The test kills children with SIGKILL at random
moments; a crash point makes the child kill itself at a precise place instead:

- ``in_model:<n>``        inside the n-th model call
- ``before_commit:<n>``   inside the n-th tool call, its transaction written but not committed
- ``after_commit:<n>``    inside the n-th tool call, committed but its result not yet journaled
- ``torn_record:<n>``     half-way through writing the n-th journal record

``journal=<path> run_id=<id>`` after the delay makes the child journal into a file shared with other
children (each with its own run id and database).

The same module gives the test its task, script, tool and database helpers, so both sides agree.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
import traceback
from pathlib import Path
from typing import Annotated, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import BaseTool, InjectedToolArg, tool

import react_agent.runtime._journal as journal_module
from react_agent import ReactAgent
from react_agent.testing import ScriptedChatModel

TASK = "Record the five items in the ledger"
ITEMS = [f"item-{i}" for i in range(1, 6)]
ANSWER = "All five items are recorded."


def _reply(action: str, action_input: Any) -> str:
    return json.dumps({"thought": "next", "action": action, "action_input": action_input})


SCRIPT = [_reply("record", {"item": item}) for item in ITEMS] + [_reply("FINISH", ANSWER)]


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class Crash:
    """Where this process kills itself (``point``, ``n``), counting the places it passes."""

    def __init__(self, spec: str | None = None) -> None:
        self.point, _, n = (spec or "").partition(":")
        self.n = int(n or 0)
        self.seen: dict[str, int] = {}

    def at(self, point: str) -> None:
        self.seen[point] = self.seen.get(point, 0) + 1
        if point == self.point and self.seen[point] == self.n:
            die()


class SlowScriptedChatModel(ScriptedChatModel):
    """The scripted model, taking ``delay`` seconds per call so kills land inside model calls too."""

    delay: float = 0.0
    crash: Any = None

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        time.sleep(self.delay / 2)
        if self.crash is not None:
            self.crash.at("in_model")
        time.sleep(self.delay / 2)
        return super()._generate(messages, stop, run_manager, **kwargs)


def init_db(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, result TEXT NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS writes (id INTEGER PRIMARY KEY, item TEXT NOT NULL, "
                     "key TEXT NOT NULL)")
        conn.commit()
    finally:
        conn.close()


def writes(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("SELECT item FROM writes ORDER BY id")]
    finally:
        conn.close()


def make_record_tool(db: Path, *, delay: float = 0.0, crash: Crash | None = None) -> BaseTool:
    crash = crash or Crash()

    @tool
    def record(item: str, idempotency_key: Annotated[str, InjectedToolArg]) -> str:
        """Record an item in the ledger."""
        conn = sqlite3.connect(db, timeout=30, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:  # the key is the PRIMARY KEY: a second call with it writes nothing
                conn.execute("INSERT INTO calls (key, result) VALUES (?, '')", (idempotency_key,))
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK")
                row = conn.execute("SELECT result FROM calls WHERE key = ?", (idempotency_key,)).fetchone()
                return str(row[0])
            conn.execute("INSERT INTO writes (item, key) VALUES (?, ?)", (item, idempotency_key))
            count = conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
            result = f"recorded {item} as entry #{count}"
            conn.execute("UPDATE calls SET result = ? WHERE key = ?", (result, idempotency_key))
            time.sleep(delay / 2)
            crash.at("before_commit")
            conn.execute("COMMIT")
        finally:
            conn.close()
        crash.at("after_commit")
        time.sleep(delay / 2)
        return result

    return record


def build_agent(db: Path, llm: ScriptedChatModel, *, delay: float = 0.0, crash: Crash | None = None,
                journal: Path | None = None) -> ReactAgent:
    return ReactAgent(llm, [make_record_tool(db, delay=delay, crash=crash)], prompts="en", max_iterations=10,
                      journal=journal)


def run_child(folder: Path, delay: float, spec: str | None, journal: Path | None = None,
              run_id: str | None = None) -> None:
    """The child's work: one journaled run of the script in ``folder`` (its journal ``run.jsonl`` there, or
    ``journal`` shared with other children, with the run id ``run_id``)."""
    crash = Crash(spec)
    if crash.point == "torn_record":
        real = journal_module._append_durably

        def torn(path: Path, data: bytes) -> None:
            crash.seen["torn_record"] = crash.seen.get("torn_record", 0) + 1
            if crash.seen["torn_record"] == crash.n:
                with open(path, "ab") as handle:
                    handle.write(data[: len(data) // 2])
                die()
            real(path, data)

        journal_module._append_durably = torn
    db = folder / "ledger.db"
    init_db(db)
    llm = SlowScriptedChatModel(SCRIPT, delay=delay, crash=crash)
    path = journal or folder / "run.jsonl"
    config = {"run_id": run_id} if run_id else None
    build_agent(db, llm, delay=delay, crash=crash, journal=path).run(TASK, config=config)


def serve() -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        folder, delay = Path(words[1]), float(words[2])
        options = dict(w.split("=", 1) for w in words[3:] if "=" in w)
        spec = next((w for w in words[3:] if "=" not in w), None)
        pid = os.fork()
        if pid == 0:  # the child: never return into the server loop
            code = 0
            try:
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)
                os.dup2(devnull, 1)
                err = os.open(folder / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(err, 2)
                run_child(folder, delay, spec, Path(options["journal"]) if "journal" in options else None,
                          options.get("run_id"))
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stderr.flush()
                os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {os.waitstatus_to_exitcode(status)}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve()
    elif sys.argv[1:2] == ["run"]:  # one run in this process: python tests/helpers/crash_worker.py run <folder> [delay]
        run_child(Path(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 0.0, None)
    else:
        sys.exit("usage: crash_worker.py serve | run <folder> [delay]")
