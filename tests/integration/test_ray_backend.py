"""The Ray backend on a local Ray instance started here (2 CPUs, no dashboard, no network): the same results
and journals as the local backend, and a worker process killed mid-batch costs nothing but a retry."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_worker import AgentFactory, answer, ledger_items, ledger_pids, write_tasks
from conftest import HELPERS, call, finish

from react_agent.batch import read_results, run_batch

ray = pytest.importorskip("ray")



@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    path = os.pathsep.join(p for p in (str(HELPERS), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        yield ray
    finally:
        ray.shutdown()


def test_killed_worker_is_restarted_and_every_task_finishes_exactly_once(local_ray: Any, tmp_path: Path) -> None:
    tasks, items = 30, 2
    write_tasks(tmp_path / "tasks.jsonl", tasks, items)
    ledger, killed = tmp_path / "ledger.txt", []

    def kill_a_worker() -> None:  # once a few side effects are in, SIGKILL the process that made them
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(ledger_items(ledger)) < 12:
            time.sleep(0.02)
        pids = sorted(ledger_pids(ledger))
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    batch = run_batch(AgentFactory(str(tmp_path), delay=0.05), tmp_path / "tasks.jsonl", concurrency=8,
                      journal_dir=tmp_path / "journals", out=tmp_path / "results.jsonl", backend="ray", workers=2)
    results = list(batch)
    killer.join()
    assert killed, "no worker was killed"
    assert Counter(r.id for r in results) == Counter({f"task-{n}": 1 for n in range(1, tasks + 1)})
    for result in results:
        number = int(result.id.split("-")[1])
        assert (result.status, result.output, result.passed) == ("finished", answer(number, items), True), result
    assert any(r.resumed for r in results)  # the killed worker's tasks were retried and resumed
    assert Counter(ledger_items(ledger)) == Counter(
        {f"t{n}-i{j}": 1 for n in range(1, tasks + 1) for j in range(1, items + 1)})
    assert len(ledger_pids(ledger)) >= 2 and killed[0] in ledger_pids(ledger)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(f"task-{n}" for n in range(1, tasks + 1))


def test_ray_continues_a_local_batch_and_runs_the_cli_agent(local_ray: Any, tmp_path: Path) -> None:
    write_tasks(tmp_path / "tasks.jsonl", 6, 1)
    options: dict[str, Any] = {"journal_dir": tmp_path / "j", "out": tmp_path / "out.jsonl"}
    first = [json.loads(line) for line in (tmp_path / "tasks.jsonl").read_text().splitlines()[:3]]
    run_batch(AgentFactory(str(tmp_path)), first, **options).run()
    rest = run_batch(AgentFactory(str(tmp_path)), tmp_path / "tasks.jsonl", backend="ray", workers=2, concurrency=4,
                     **options)
    assert sorted(r.id for r in rest) == ["task-4", "task-5", "task-6"] and rest.summary.previous == 3
    assert len(list(read_results(tmp_path / "out.jsonl"))) == 6 and len(ledger_items(tmp_path / "ledger.txt")) == 6
    # the CLI's picklable agent (demo tools, scripted model) on one worker
    from batch_cli import run_cli, write

    tasks, script = write(tmp_path, script=[call("calculator", expression="17 * 23"), finish("17 * 23 = 391"),
                                            call("register_user", username="Ivan", email="ivan@test.com"),
                                            finish("Ivan is registered."), finish("Olga? no.")])
    code, stdout, _ = run_cli(["batch", str(tasks), "--out", str(tmp_path / "cli.jsonl"), "--model",
                               f"scripted:{script}", "--concurrency", "1", "--backend", "ray", "--workers", "1"])
    assert code == 0 and "checks passed  2/2" in stdout
