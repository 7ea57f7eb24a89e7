"""Real kills: a batch process (tests/helpers/batch_worker.py) is SIGKILLed at random moments and started again with
the same command until it completes. Every side effect must happen exactly once, every task must appear
exactly once in the results file, and no model call or tool call whose result was journaled runs again."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from batch_worker import answer, ledger_items
from conftest import HELPERS, ROOT

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")

TASKS, ITEMS, CONCURRENCY, DELAY = 24, 2, 6, 0.01
KILLS = 4


def start(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, str(HELPERS / "batch_worker.py"), "run", str(folder), str(TASKS),
                             str(ITEMS), str(CONCURRENCY), str(DELAY)], cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=open(folder / "stderr.txt", "a"))  # noqa: SIM115
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", (folder / "stderr.txt").read_text()
    return proc


def finished_ids(folder: Path) -> list[str]:
    path = folder / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["id"] for line in path.read_text().splitlines(keepends=True) if line.endswith("\n")]


def check(folder: Path, kills: int) -> None:
    lines = (folder / "results.jsonl").read_text().splitlines()
    results = [json.loads(line) for line in lines]  # every line whole
    assert Counter(r["id"] for r in results) == Counter({f"task-{n}": 1 for n in range(1, TASKS + 1)})
    for result in results:
        number = int(result["id"].split("-")[1])
        assert (result["status"], result["output"], result["passed"]) == ("finished", answer(number, ITEMS), True)
    items = ledger_items(folder / "ledger.txt")
    assert Counter(items) == Counter({f"t{n}-i{j}": 1 for n in range(1, TASKS + 1) for j in range(1, ITEMS + 1)})
    for journal in (folder / "journals").iterdir():
        records = [json.loads(line) for line in journal.read_text().splitlines() if line.endswith("}")]
        assert len({r["run"] for r in records if r["type"] == "run"}) == 1, journal  # resumed, never restarted
        model = Counter((r["run"], r["seq"]) for r in records if r["type"] == "model")
        tool_ends = Counter(r["key"] for r in records if r["type"] == "tool_end")
        assert max(model.values()) == 1 and max(tool_ends.values()) == 1, journal
    made = len((folder / "calls.log").read_text().splitlines())
    ideal = TASKS * (ITEMS + 1)
    assert ideal <= made <= ideal + kills * CONCURRENCY  # only calls in flight at a kill are made again


@pytest.mark.parametrize("trial", [1, 2])
def test_random_sigkills_then_rerun_do_every_task_and_side_effect_once(tmp_path: Path, trial: int) -> None:
    rng = random.Random(trial)
    kills = landed = 0
    for attempt in range(KILLS):
        proc = start(tmp_path)
        if attempt == 0:  # the first kill waits for progress, however loaded the machine: it lands mid-batch
            done = len(finished_ids(tmp_path))
            deadline = time.monotonic() + 120
            while proc.poll() is None and len(finished_ids(tmp_path)) == done and time.monotonic() < deadline:
                time.sleep(0.005)
        else:
            time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is not None:
            assert proc.wait() == 0, (tmp_path / "stderr.txt").read_text()
            break
        before = len(finished_ids(tmp_path))
        os.kill(proc.pid, signal.SIGKILL)
        code = proc.wait()
        if code == 0:  # the batch ended between the poll and the kill
            break
        assert code == -signal.SIGKILL, (tmp_path / "stderr.txt").read_text()
        kills += 1
        landed += 0 < before < TASKS
    proc = start(tmp_path)  # the same command, this time left to finish
    assert proc.wait(timeout=120) == 0, (tmp_path / "stderr.txt").read_text()
    assert kills >= 1 and landed >= 1  # at least one kill hit a batch in mid-flight
    check(tmp_path, kills)
