"""Who waits for whom while ``approve`` is asked: each run asks on its own (two runs' questions can be pending at
once), the concurrent calls of one run ask one at a time, and under ``arun`` a plain approve runs in a worker
thread (the event loop goes on) while an ``async def`` approve is awaited; the decision is journaled either way."""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from approval_tools import guarded_pay, pay_the_task_invoice

from react_agent import ReactAgent, read_journal
from react_agent.testing import FunctionChatModel, ScriptedChatModel

WAIT = 5.0  # seconds a test waits for something that should happen at once
_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("caller", default=None)


def _two_calls() -> ScriptedChatModel:
    return ScriptedChatModel([json.dumps([{"thought": "", "action": "pay", "action_input": {"invoice": "A-1"}},
                                          {"thought": "", "action": "pay", "action_input": {"invoice": "B-2"}}]),
                              json.dumps({"thought": "", "action": "FINISH", "action_input": "done"})])


class _Gate:
    """Questions that wait until the test opens the gate; records how many wait at the same time."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.lock = threading.Lock()
        self.waiting = 0
        self.asked: list[Any] = []
        self.all_waiting = threading.Event()
        self.open = threading.Event()

    def arrive(self, args: Any) -> None:
        with self.lock:
            self.asked.append(args)
            self.waiting += 1
            if self.waiting == self.expected:
                self.all_waiting.set()

    def leave(self) -> None:
        with self.lock:
            self.waiting -= 1

    def approve(self, tool: str, args: Any) -> bool:
        self.arrive(args)
        try:
            return self.open.wait(WAIT)  # a question nobody answered in time counts as refused
        finally:
            self.leave()

    async def aapprove(self, tool: str, args: Any) -> bool:
        self.arrive(args)
        try:
            for _ in range(int(WAIT / 0.005)):
                if self.open.is_set():
                    return True
                await asyncio.sleep(0.005)
            return False
        finally:
            self.leave()


# ---------------------------------------------------------------------------------------- runs apart
@pytest.mark.parametrize("how", ["run", "arun"])
def test_two_runs_in_two_threads_ask_at_the_same_time(how: str) -> None:
    """One agent serving two runs in two threads (the served app): the second run's question is asked while
    the first one waits for its answer, not after it."""
    gate, paid = _Gate(expected=2), []
    agent = ReactAgent(FunctionChatModel(function=pay_the_task_invoice), [guarded_pay(paid)], prompts="en",
                       approve=gate.approve)
    results: dict[str, Any] = {}

    def one(invoice: str) -> None:
        task = f"pay {invoice}"
        results[invoice] = agent.run(task) if how == "run" else asyncio.run(agent.arun(task))

    threads = [threading.Thread(target=one, args=(invoice,)) for invoice in ("A-1", "B-2")]
    for thread in threads:
        thread.start()
    both_pending = gate.all_waiting.wait(WAIT / 2)
    gate.open.set()
    for thread in threads:
        thread.join(WAIT * 2)
    assert both_pending, "the second run could not ask while the first run's question was pending"
    assert sorted(paid) == ["A-1", "B-2"]
    assert all(r.status == "finished" for r in results.values())


@pytest.mark.parametrize("kind", ["plain", "async"])
def test_two_runs_on_one_event_loop_ask_at_the_same_time(kind: str) -> None:
    gate, paid = _Gate(expected=2), []
    agent = ReactAgent(FunctionChatModel(function=pay_the_task_invoice), [guarded_pay(paid)], prompts="en",
                       approve=gate.approve if kind == "plain" else gate.aapprove)

    async def main() -> tuple[bool, list[Any]]:
        runs = asyncio.gather(agent.arun("pay A-1"), agent.arun("pay B-2"))
        both_pending = await asyncio.to_thread(gate.all_waiting.wait, WAIT / 2)
        gate.open.set()
        return both_pending, await runs

    both_pending, results = asyncio.run(main())
    assert both_pending, "the second run could not ask while the first run's question was pending"
    assert sorted(paid) == ["A-1", "B-2"] and all(r.status == "finished" for r in results)


# ---------------------------------------------------------------------------------------- one run's calls
@pytest.mark.parametrize("how", ["run", "arun-plain", "arun-async"])
def test_the_concurrent_calls_of_one_run_ask_one_at_a_time(tmp_path: Path, how: str) -> None:
    """Two calls of one decision run concurrently, but their questions never overlap (a person answers one
    question at a time); each decision is journaled."""
    lock, active, most, asked, paid = threading.Lock(), [0], [0], [], []

    def enter(args: Any) -> None:
        with lock:
            asked.append(args["invoice"])
            active[0] += 1
            most[0] = max(most[0], active[0])

    def leave() -> None:
        with lock:
            active[0] -= 1

    def approve(tool: str, args: Any) -> bool:
        enter(args)
        time.sleep(0.1)
        leave()
        return True

    async def aapprove(tool: str, args: Any) -> bool:
        enter(args)
        await asyncio.sleep(0.1)
        leave()
        return True

    journal = tmp_path / "run.jsonl"
    agent = ReactAgent(_two_calls(), [guarded_pay(paid)], prompts="en", max_parallel_calls=2,
                       approve=aapprove if how == "arun-async" else approve)
    result = agent.run("pay", journal=journal) if how == "run" else asyncio.run(agent.arun("pay", journal=journal))
    assert result.status == "finished"
    assert sorted(asked) == sorted(paid) == ["A-1", "B-2"]
    assert most[0] == 1, "two questions of one run were asked at the same time"
    decisions = [r for r in read_journal(journal) if r["type"] == "approval"]
    assert sorted((d["seq"], d["approved"]) for d in decisions) == [(2, True), (3, True)]


# ---------------------------------------------------------------------------------------- the event loop
def test_a_plain_approve_under_arun_runs_off_the_event_loop_and_its_decision_is_journaled(tmp_path: Path) -> None:
    """While a plain approve waits for a person, the run's event loop keeps running other coroutines; the
    approve runs in a copy of the caller's context (a ContextVar the caller set reaches it, as LangGraph's config
    does), and its decision is journaled before the tool runs."""
    asked, answered, paid = threading.Event(), threading.Event(), []
    seen: list[Any] = []
    in_time: list[bool] = []

    def approve(tool: str, args: Any) -> bool:
        seen.append(_CALLER.get())
        asked.set()
        in_time.append(answered.wait(WAIT))  # only the other coroutine answers
        return in_time[-1]

    journal = tmp_path / "run.jsonl"
    agent = ReactAgent(ScriptedChatModel([
        json.dumps({"thought": "", "action": "pay", "action_input": {"invoice": "A-1"}}),
        json.dumps({"thought": "", "action": "FINISH", "action_input": "done"})]), [guarded_pay(paid)], prompts="en",
        approve=approve)

    async def main() -> tuple[Any, int]:
        ticks = 0

        async def person() -> int:
            nonlocal ticks
            while not asked.is_set():
                await asyncio.sleep(0.005)
            start = ticks
            while ticks < start + 10:  # the loop goes on while the question is pending
                await asyncio.sleep(0.005)
            answered.set()
            return ticks - start

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        counting = asyncio.ensure_future(ticker())
        _CALLER.set("the caller")
        try:
            result, during = await asyncio.gather(agent.arun("pay A-1", journal=journal), person())
        finally:
            counting.cancel()
        return result, during

    result, during = asyncio.run(main())
    assert in_time == [True], "the event loop stood still while approve waited"
    assert during >= 10 and result.status == "finished" and paid == ["A-1"]
    records = read_journal(journal)
    start = next(r for r in records if r["type"] == "tool_start")
    approval = next(r for r in records if r["type"] == "approval")
    assert seen == ["the caller"] and approval["key"] == start["key"] and approval["approved"] is True
    assert records.index(approval) < next(i for i, r in enumerate(records) if r["type"] == "tool_end")


def test_an_async_approve_awaits_while_the_loop_runs_and_is_not_asked_again_on_resume(tmp_path: Path) -> None:
    """An async approve waiting on an asyncio.Event is answered by another coroutine of the same loop; a
    resume after a crash inside the tool reuses the journaled decision without asking."""
    paid: list[str] = []
    journal = tmp_path / "run.jsonl"
    script = [json.dumps({"thought": "", "action": "pay", "action_input": {"invoice": "A-1"}}),
              json.dumps({"thought": "", "action": "FINISH", "action_input": "done"})]

    async def main() -> Any:
        answer = asyncio.Event()

        async def approve(tool: str, args: Any) -> bool:
            await answer.wait()
            return True

        async def person() -> None:
            await asyncio.sleep(0.05)
            answer.set()

        agent = ReactAgent(ScriptedChatModel(script), [guarded_pay(paid)], prompts="en", approve=approve)
        result, _ = await asyncio.gather(agent.arun("pay A-1", journal=journal), person())
        return result

    assert asyncio.run(main()).status == "finished" and paid == ["A-1"]
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "approval")
    journal.write_text("".join(lines[:cut + 1]), encoding="utf-8")  # the process died inside the tool

    async def must_not_ask(tool: str, args: Any) -> bool:
        raise AssertionError("a journaled decision was asked again")

    again = ReactAgent(ScriptedChatModel(script[1:]), [guarded_pay(paid)], prompts="en", approve=must_not_ask)
    result = asyncio.run(again.aresume(journal))
    assert result.status == "finished" and paid == ["A-1", "A-1"]
