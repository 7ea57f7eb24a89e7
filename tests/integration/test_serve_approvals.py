"""Approvals in `react_agent.serve` (FastAPI's TestClient, no browser): two runs' questions wait for a person at
the same time, the concurrent calls of one run are asked one at a time (and reach the page at all), and an
agent's own ``async def`` approve is awaited (``approval="agent"``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from approval_tools import guarded_pay, pay_the_task_invoice
from fastapi.testclient import TestClient

from react_agent import ReactAgent, read_journal
from react_agent.testing import FunctionChatModel, ScriptedChatModel

WAIT = 5.0


def _until(check: Callable[[], Any], what: str, seconds: float = WAIT) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _pending(client: TestClient, run_id: str) -> Any:
    return client.get(f"/runs/{run_id}").json()["pending_approval"]


def test_two_runs_wait_for_a_person_at_the_same_time(tmp_path: Path) -> None:
    from react_agent.serve import create_app

    ran: list[str] = []
    agent = ReactAgent(FunctionChatModel(function=pay_the_task_invoice), [guarded_pay(ran)], prompts="en")
    app = create_app(agent, journal_dir=tmp_path, max_concurrency=2, approval_timeout=WAIT)
    with TestClient(app) as client:
        ids = [client.post("/runs", json={"task": f"pay {n}"}).json()["id"] for n in ("A-7", "B-8")]
        both = _until(lambda: all(_pending(client, i) for i in ids) and [_pending(client, i) for i in ids],
                      "both runs to wait for a person at once", WAIT / 2)
        assert sorted(p["input"]["invoice"] for p in both) == ["A-7", "B-8"]
        for run_id in ids:
            assert client.post(f"/runs/{run_id}/approval", json={"approved": True}).status_code == 200
        done = [_until(lambda i=i: client.get(f"/runs/{i}").json()["result"], "the result") for i in ids]
    assert [d["output"] for d in done] == ["done", "done"] and sorted(ran) == ["A-7", "B-8"]


def test_the_concurrent_calls_of_a_run_reach_the_page_one_at_a_time(tmp_path: Path) -> None:
    """Both calls of a parallel decision are asked of the person (they run in threads of their own), one
    question at a time; the approved calls run."""
    from react_agent.serve import create_app

    ran: list[str] = []
    reply = json.dumps([{"action": "pay", "action_input": {"invoice": "A-1"}},
                        {"action": "pay", "action_input": {"invoice": "A-2"}}])
    llm = ScriptedChatModel([reply, json.dumps({"action": "FINISH", "action_input": "done"})])
    agent = ReactAgent(llm, [guarded_pay(ran)], prompts="en", max_parallel_calls=2)
    with TestClient(create_app(agent, journal_dir=tmp_path, approval_timeout=WAIT)) as client:
        run_id = client.post("/runs", json={"task": "pay both"}).json()["id"]
        asked = []
        for _ in range(2):
            pending = _until(lambda: _pending(client, run_id), "a question")
            asked.append(pending["input"]["invoice"])
            assert client.post(f"/runs/{run_id}/approval",
                               json={"approved": True, "approval_id": pending["id"]}).status_code == 200
        run = _until(lambda: (lambda r: r if r["result"] else None)(client.get(f"/runs/{run_id}").json()), "result")
    assert sorted(asked) == ["A-1", "A-2"] and sorted(ran) == ["A-1", "A-2"]
    assert sorted(s["observation"] for s in run["steps"][:2]) == ["paid A-1", "paid A-2"]


def test_an_agents_own_async_approve_is_awaited(tmp_path: Path) -> None:
    from react_agent.serve import create_app

    ran: list[str] = []
    asked: list[tuple[str, Any]] = []

    async def approve(tool: str, args: Any) -> bool:
        asked.append((tool, args))
        return True

    llm = ScriptedChatModel([json.dumps({"action": "pay", "action_input": {"invoice": "B-8"}}),
                             json.dumps({"action": "FINISH", "action_input": "done"})])
    agent = ReactAgent(llm, [guarded_pay(ran)], prompts="en", approve=approve)
    with TestClient(create_app(agent, journal_dir=tmp_path, approval="agent")) as client:
        run = client.post("/runs?wait=true", json={"task": "pay B-8"}).json()
    assert run["result"]["status"] == "finished" and run["result"]["output"] == "done"
    assert asked == [("pay", {"invoice": "B-8"})] and ran == ["B-8"]
    decisions = [e for e in read_journal(tmp_path / f"{run['id']}.jsonl") if e["type"] == "approval"]
    assert [d["approved"] for d in decisions] == [True]
