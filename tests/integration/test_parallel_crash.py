"""Crash and resume in the middle of a parallel decision: killed between the second and third of three
concurrent calls, the resumed run runs the third once and never the first two again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import parallel_crash_worker as worker
import pytest
from conftest import HELPERS, ROOT

from react_agent.runtime._journal import read_journal


def spawn(mode: str, folder: Path, protocol: str, hang: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HELPERS), os.environ.get("PYTHONPATH", "")])}
    worker_file = str(HELPERS / "parallel_crash_worker.py")
    return subprocess.Popen([sys.executable, worker_file, mode, str(folder), protocol, hang],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def ended_items(journal: Path) -> list[str]:
    records = read_journal(journal) if journal.exists() else []
    started = {r["seq"]: r["input"]["item"] for r in records if r["type"] == "tool_start"}
    return sorted(started[r["seq"]] for r in records if r["type"] == "tool_end")


@pytest.mark.parametrize(("protocol", "hang"), [("native", "item-3"), ("text", "item-3"), ("native", "item-1"),
                                               ("plan", "item-2")])
def test_killed_between_the_second_and_third_call_each_call_runs_once(tmp_path: Path, protocol: str,
                                                                       hang: str) -> None:
    """The call for ``hang`` is still running when the process is killed (the third of three, or the first
    while the other two have finished): on resume only that one runs again, with its journaled key."""
    journal = tmp_path / "run.jsonl"
    child = spawn("run", tmp_path, protocol, hang)
    others = sorted(set(worker.ITEMS) - {hang})
    deadline = time.monotonic() + 60
    while ended_items(journal) != others:
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        assert time.monotonic() < deadline, "the first two calls never completed"
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    ledger = tmp_path / "ledger.txt"
    assert sorted(line.split()[0] for line in ledger.read_text().splitlines()) == others

    resumed = spawn("resume", tmp_path, protocol, hang)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["status"] == "finished" and result["output"] == worker.answer(protocol)
    assert result["observations"][:3] == [f"recorded {item}" for item in worker.ITEMS]
    lines = ledger.read_text().splitlines()
    assert Counter(line.split()[0] for line in lines) == Counter(worker.ITEMS)
    records = read_journal(journal)
    starts = Counter(r["input"]["item"] for r in records if r["type"] == "tool_start")
    assert starts == {item: 2 if item == hang else 1 for item in worker.ITEMS}  # only the unfinished one again
    keys = {r["input"]["item"]: r["key"] for r in records if r["type"] == "tool_start"}
    assert {line.split()[0]: line.split()[1] for line in lines} == keys  # each with its own, unchanged key
    assert ended_items(journal) == worker.ITEMS
