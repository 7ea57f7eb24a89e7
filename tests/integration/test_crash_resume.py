"""Real crashes: a child process running a journaled agent (tools writing to SQLite) is SIGKILLed, then resumed
in this process. Every intended write must happen exactly once and the run must end as an uninterrupted one."""

from __future__ import annotations

import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import crash_worker as worker
import pytest
from conftest import HELPERS, ROOT

from react_agent import AgentResult, read_journal
from react_agent.testing import ScriptedChatModel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash worker forks (POSIX only)")

DELAY = 0.01  # seconds per model call and per tool call in the child: kills land in every phase
TRIALS = 30


class ForkServer:
    """The crash_worker fork server: imports once, forks one child per trial."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HELPERS / "crash_worker.py"), "serve"], cwd=ROOT, text=True, bufsize=1,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lines: queue.Queue[list[str] | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.expect("ready", timeout=60)

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.split())
        self.lines.put(None)

    def expect(self, word: str, timeout: float = 30) -> str:
        got = self.lines.get(timeout=timeout)
        assert got and got[0] == word, f"fork server said {got!r}, expected {word!r}"
        return got[1] if len(got) > 1 else ""

    def start(self, folder: Path, crash: str | None = None, *, journal: Path | None = None,
              run_id: str | None = None) -> int:
        assert self.proc.stdin is not None
        shared = f" journal={journal} run_id={run_id}" if journal else ""
        self.proc.stdin.write(f"run {folder} {DELAY}{' ' + crash if crash else ''}{shared}\n")
        self.proc.stdin.flush()
        return int(self.expect("pid"))

    def wait(self, folder: Path) -> int:
        status = int(self.expect("exit"))
        assert status in (0, -signal.SIGKILL), (folder / "stderr.txt").read_text()
        return status

    def close(self) -> None:
        assert self.proc.stdin is not None
        with suppress(BrokenPipeError):
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        self.proc.wait(10)


@dataclass(frozen=True)
class Reference:
    result: AgentResult
    prompts: list[str]
    child_seconds: float


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    fork_server = ForkServer()
    yield fork_server
    fork_server.close()


@pytest.fixture(scope="module")
def reference(server: ForkServer, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """An uninterrupted run here (result, prompts) and one in a child (how long a run takes there)."""
    folder = tmp_path_factory.mktemp("reference")
    worker.init_db(folder / "ledger.db")
    llm = ScriptedChatModel(worker.SCRIPT)
    result = worker.build_agent(folder / "ledger.db", llm).run(worker.TASK)
    assert result.status == "finished" and worker.writes(folder / "ledger.db") == worker.ITEMS
    child = tmp_path_factory.mktemp("reference-child")
    started = time.monotonic()
    server.start(child)
    assert server.wait(child) == 0
    return Reference(result, [c.text for c in llm.calls], time.monotonic() - started)


def phase(folder: Path) -> str:
    """Where the kill landed, read from what survived it."""
    journal = folder / "run.jsonl"
    if journal.exists() and not journal.read_bytes().endswith(b"\n") and journal.stat().st_size:
        return "torn record"
    records = read_journal(journal)
    if not any(r["type"] == "run" for r in records):
        return "before the run"
    if any(r["type"] == "end" for r in records):
        return "finished"
    effects = [r for r in records if r["type"] in ("model", "tool_start", "tool_end")]
    if not effects:
        return "before the first reply"
    last = effects[-1]
    if last["type"] == "tool_start":
        conn = sqlite3.connect(folder / "ledger.db")
        try:
            committed = conn.execute("SELECT 1 FROM calls WHERE key = ?", (last["key"],)).fetchone()
        finally:
            conn.close()
        return "in a tool, committed" if committed else "in a tool, not committed"
    return "after a model reply" if last["type"] == "model" else "after a tool result"


def resume_and_check(folder: Path, reference: Reference) -> None:
    """Resume the killed run here and check it against the uninterrupted one."""
    journal, db = folder / "run.jsonl", folder / "ledger.db"
    worker.init_db(db)
    records = read_journal(journal)
    done = sum(r["type"] == "model" for r in records)
    llm = ScriptedChatModel(worker.SCRIPT[done:])
    agent = worker.build_agent(db, llm, journal=journal)
    result = agent.resume(journal) if any(r["type"] == "run" for r in records) else agent.run(worker.TASK)
    assert result.status == "finished" and result.output == reference.result.output == worker.ANSWER
    assert [s.observation for s in result.steps] == [s.observation for s in reference.result.steps]
    assert worker.writes(db) == worker.ITEMS  # every intended write, exactly once
    assert len(llm.calls) == len(worker.SCRIPT) - done and llm.remaining == 0
    assert [c.text for c in llm.calls] == reference.prompts[done:]


def test_random_sigkills_then_resume_write_exactly_once(server: ForkServer, reference: Reference,
                                                        tmp_path: Path) -> None:
    """30 runs SIGKILLed at random moments each resume to the uninterrupted answer, every write made once."""
    rng = random.Random(6)
    phases: Counter[str] = Counter()
    for trial in range(TRIALS):
        folder = tmp_path / f"trial-{trial}"
        folder.mkdir()
        pid = server.start(folder)
        time.sleep(rng.uniform(0, reference.child_seconds * 1.1))
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        server.wait(folder)
        phases[phase(folder)] += 1
        resume_and_check(folder, reference)
    assert len(phases) >= 3, f"kills landed in too few phases: {dict(phases)}"


@pytest.mark.parametrize(("crash", "expected"), [
    ("in_model:3", "after a tool result"),
    ("before_commit:2", "in a tool, not committed"),
    ("after_commit:4", "in a tool, committed"),
    ("torn_record:4", "torn record"),
    ("after_commit:5", "in a tool, committed"),
])
def test_crash_at_a_precise_point_resumes_exactly_once(server: ForkServer, reference: Reference, tmp_path: Path,
                                                        crash: str, expected: str) -> None:
    """A child that kills itself at a chosen point (mid-model, mid-transaction, after commit, mid-record)
    resumes to the uninterrupted answer with every write made exactly once."""
    server.start(tmp_path, crash)
    assert server.wait(tmp_path) == -signal.SIGKILL
    assert phase(tmp_path) == expected
    resume_and_check(tmp_path, reference)


@pytest.fixture(scope="module")
def second_server() -> Iterator[ForkServer]:
    fork_server = ForkServer()
    yield fork_server
    fork_server.close()


def resume_shared_and_check(folder: Path, journal: Path, run_id: str, reference: Reference) -> None:
    """Resume one run of a journal shared by two processes and check it against the uninterrupted one."""
    db = folder / "ledger.db"
    worker.init_db(db)
    records = [r for r in read_journal(journal) if r["run"] == run_id]
    done = sum(r["type"] == "model" for r in records)
    llm = ScriptedChatModel(worker.SCRIPT[done:])
    agent = worker.build_agent(db, llm)
    if any(r["type"] == "run" for r in records):
        result = agent.resume(journal, run_id=run_id)
    else:
        result = agent.run(worker.TASK, journal=journal, config={"run_id": run_id})
    assert result.status == "finished" and result.output == worker.ANSWER
    assert worker.writes(db) == worker.ITEMS  # every intended write, exactly once
    assert [c.text for c in llm.calls] == reference.prompts[done:]


def test_two_processes_sharing_one_journal_killed_at_random_resume_exactly_once(
        server: ForkServer, second_server: ForkServer, reference: Reference, tmp_path: Path) -> None:
    """Two children journal into one file at once and are SIGKILLed at independent random moments; each
    run resumes from the shared file to the uninterrupted answer, every write made once, no record lost."""
    rng = random.Random(11)
    for trial in range(10):
        journal = tmp_path / f"shared-{trial}.jsonl"
        folders = [tmp_path / f"trial-{trial}-{side}" for side in "ab"]
        for folder in folders:
            folder.mkdir()
        pids = [fork.start(folder, journal=journal, run_id=f"run-{trial}-{side}")
                for fork, folder, side in zip((server, second_server), folders, "ab", strict=True)]
        kills = sorted((rng.uniform(0, reference.child_seconds * 1.1), pid) for pid in pids)
        started = time.monotonic()
        for moment, pid in kills:
            time.sleep(max(0.0, moment - (time.monotonic() - started)))
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for fork, folder in zip((server, second_server), folders, strict=True):
            fork.wait(folder)
        for folder, side in zip(folders, "ab", strict=True):
            resume_shared_and_check(folder, journal, f"run-{trial}-{side}", reference)
