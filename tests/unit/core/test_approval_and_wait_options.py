"""The ``approve`` callback fails closed, and its signature is checked when the agent is built; an ``async def``
approve is awaited by ``arun``/``astream``/``ainvoke`` and refused by a sync run when it starts; waits
(``timeout``, ``max_execution_time``, ``RetryPolicy``) above ``threading.TIMEOUT_MAX`` are a ``ConfigError``."""

from __future__ import annotations

import asyncio
import functools
import gc
import inspect
import json
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from react_agent import AgentAction, ConfigError, ReactAgent, RetryPolicy
from react_agent.testing import ScriptedChatModel


def _script() -> ScriptedChatModel:
    return ScriptedChatModel([json.dumps({"thought": "t", "action": "pay", "action_input": {"invoice": "A-1"}}),
                              json.dumps({"thought": "t", "action": "FINISH", "action_input": "done"})])


def _guarded(paid: list[str]) -> StructuredTool:
    def pay(invoice: str) -> str:
        """Pay an invoice."""
        paid.append(invoice)
        return "paid"

    return StructuredTool.from_function(pay, metadata={"requires_approval": True})


def _run(agent: ReactAgent, how: str, **kwargs: Any) -> Any:
    if how == "run":
        return agent.run("pay A-1", **kwargs)
    return asyncio.run(agent.arun("pay A-1", **kwargs))


# ------------------------------------------------------------------------------------- approve answers
@pytest.mark.parametrize("how", ["run", "arun"])
@pytest.mark.parametrize(("answer", "type_name"), [("no", "str"), ("yes", "str"), (1, "int"), (0, "int"),
                                                    (None, "NoneType"), ([], "list")])
def test_an_answer_that_is_not_a_bool_is_a_config_error_and_the_tool_never_runs(
        tmp_path: Path, how: str, answer: Any, type_name: str) -> None:
    """approve returning "no" (truthy), 1 or None is a developer mistake: a ConfigError naming the type, the
    tool does not run and no decision is journaled (a resume would otherwise honour a made-up one)."""
    paid: list[str] = []
    journal = tmp_path / "run.jsonl"
    agent = ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=lambda tool, args: answer)
    with pytest.raises(ConfigError, match=f"approve must return True or False, got a {type_name}"):
        _run(agent, how, journal=journal)
    assert paid == []
    kinds = [json.loads(line)["type"] for line in journal.read_text(encoding="utf-8").splitlines()]
    assert "approval" not in kinds and "tool_end" not in kinds


@pytest.mark.parametrize("how", ["run", "arun"])
def test_an_awaitable_answer_is_closed_and_refused(how: str) -> None:
    """A plain function that returns a coroutine (an async approver behind a sync wrapper) never approves:
    the coroutine is closed (no "never awaited" warning), the run raises ConfigError naming the fix."""
    paid: list[str] = []
    made: list[Any] = []

    async def deny(tool: str, args: Any) -> bool:
        return False

    def approve(tool: str, args: Any) -> bool:
        coroutine = deny(tool, args)
        made.append(coroutine)
        return coroutine  # type: ignore[return-value]

    agent = ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=approve)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError, match="approve must be a plain function returning True or False"):
            _run(agent, how)
        assert len(made) == 1 and inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED
        made.clear()
        gc.collect()
    assert paid == []
    assert not [w for w in caught if "never awaited" in str(w.message)]


# ----------------------------------------------------------------------------------- approve signature
async def _async_approve(asked: list[tuple[str, Any]], answer: bool, tool: str, args: Any) -> bool:
    await asyncio.sleep(0)  # a real await: only an awaiting driver gets past it
    asked.append((tool, args))
    return answer


class _AsyncCallable:
    def __init__(self, asked: list[tuple[str, Any]], answer: bool) -> None:
        self.asked, self.answer = asked, answer

    async def __call__(self, tool: str, args: Any) -> bool:
        return await _async_approve(self.asked, self.answer, tool, args)


def _async_approver(kind: str, asked: list[tuple[str, Any]], answer: bool) -> Any:
    if kind == "async-def":
        async def approve(tool: str, args: Any) -> bool:
            return await _async_approve(asked, answer, tool, args)

        return approve
    if kind == "async-call":
        return _AsyncCallable(asked, answer)
    return functools.partial(_async_approve, asked, answer)


SYNC_REFUSAL = (r"approve is async \(async def\), which a sync run \(run, stream, invoke, resume, execute\) cannot "
                r"await: use arun/astream/ainvoke \(aresume, aexecute\), or a plain function returning True or False")


@pytest.mark.parametrize("kind", ["async-def", "async-call", "partial-of-async"])
def test_an_async_approve_is_built_refused_by_a_sync_run_when_it_starts_and_awaited_by_arun(
        tmp_path: Path, kind: str) -> None:
    """An async approve builds; every sync entry point (run, invoke, stream, resume) raises ConfigError naming
    the fix before anything happens: no model call, no journal record, no question, no tool, no coroutine left
    unawaited. arun/ainvoke await it: only True approves, and the decision is journaled."""
    paid: list[str] = []
    asked: list[tuple[str, Any]] = []
    approve = _async_approver(kind, asked, True)
    llm = _script()
    agent = ReactAgent(llm, [_guarded(paid)], prompts="en", approve=approve)
    assert agent.config.approve is approve
    journal = tmp_path / "run.jsonl"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for start in (lambda: agent.run("pay A-1", journal=journal), lambda: agent.invoke("pay A-1"),
                      lambda: agent.stream("pay A-1", journal=journal)):
            with pytest.raises(ConfigError, match=SYNC_REFUSAL):
                start()
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert llm.calls == [] and not journal.exists() and asked == [] and paid == []

    result = asyncio.run(agent.arun("pay A-1", journal=journal))
    assert result.status == "finished" and result.steps[0].observation == "paid"
    assert paid == ["A-1"] and asked == [("pay", {"invoice": "A-1"})]
    records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert [r["approved"] for r in records if r["type"] == "approval"] == [True]
    written = journal.read_bytes()
    with pytest.raises(ConfigError, match=SYNC_REFUSAL):
        agent.resume(journal)
    assert journal.read_bytes() == written  # refused before the journal was opened

    denied: list[tuple[str, Any]] = []
    refusing = ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=_async_approver(kind, denied, False))
    result = asyncio.run(refusing.ainvoke("pay A-1"))
    assert result.status == "finished" and "was not approved" in result.steps[0].observation
    assert paid == ["A-1"] and denied == [("pay", {"invoice": "A-1"})]


@pytest.mark.parametrize("answer", ["no", 1, None])
def test_an_async_approve_answering_something_else_than_a_bool_is_a_config_error(answer: Any) -> None:
    """Awaited, an async approve's answer is held to the same rule: only True or False, else ConfigError and
    the tool does not run."""
    paid: list[str] = []

    async def approve(tool: str, args: Any) -> Any:
        return answer

    agent = ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=approve)
    with pytest.raises(ConfigError, match="approve must return True or False"):
        asyncio.run(agent.arun("pay A-1"))
    assert paid == []


def _keyword_only(*, tool: str, args: Any) -> bool:
    return True


async def _async_one_argument(tool: str) -> bool:
    return True


@pytest.mark.parametrize("approve", [lambda: True, lambda tool: True, lambda tool, args, extra: True,
                                     _keyword_only, _async_one_argument],
                         ids=["no-argument", "one-argument", "three-arguments", "keyword-only", "async-one-argument"])
def test_approve_that_cannot_take_tool_and_arguments_is_a_config_error_when_built(approve: Any) -> None:
    with pytest.raises(ConfigError, match=r"approve.*approve\(tool_name, action_input\)"):
        ReactAgent(_script(), [_guarded([])], prompts="en", approve=approve)


class _Approver:
    def approve(self, tool: str, args: Any, note: str = "") -> bool:
        return True


def test_approve_signatures_that_fit_are_accepted_and_used() -> None:
    """Wrong signatures are refused; any callable that binds (tool_name, action_input) is kept, also one whose
    signature cannot be read (a builtin)."""
    for approve in (lambda *args: True, lambda tool, args, **more: True, _Approver().approve,
                    functools.partial(lambda flag, tool, args: flag, True), print):
        assert ReactAgent(_script(), [_guarded([])], prompts="en", approve=approve).config.approve is approve
    paid: list[str] = []
    ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=_Approver().approve).run("pay A-1")
    assert paid == ["A-1"]
    with pytest.raises(ConfigError):
        ReactAgent(_script(), [_guarded([])], prompts="en", approve=lambda: True)


# ---------------------------------------------------------------------------------------------- waits
@pytest.mark.parametrize("option", ["timeout", "max_execution_time"])
@pytest.mark.parametrize("value", [1e10, threading.TIMEOUT_MAX * 2, 10**400], ids=["1e10", "twice", "huge-int"])
def test_seconds_above_timeout_max_are_a_config_error_and_the_limit_itself_works(option: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=rf"{option} must be .*TIMEOUT_MAX"):
        ReactAgent(_script(), [_guarded([])], prompts="en", **{option: value})
    paid: list[str] = []
    for how in ("run", "arun"):
        agent = ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=lambda tool, args: True,
                           **{option: threading.TIMEOUT_MAX})
        result = _run(agent, how)
        assert result.status == "finished" and result.steps[0].observation == "paid"
    assert paid == ["A-1", "A-1"]


@pytest.mark.parametrize("name", ["initial_wait", "max_wait", "jitter"])
@pytest.mark.parametrize("value", [1e10, 10**400, 10**5000], ids=["1e10", "huge-int", "int-repr-refuses"])
def test_retry_waits_above_timeout_max_are_a_config_error(name: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=rf"RetryPolicy: {name} must be at most threading.TIMEOUT_MAX"):
        RetryPolicy(**{name: value})
    policy = RetryPolicy(initial_wait=0.01, max_wait=threading.TIMEOUT_MAX, jitter=0)
    llm = ScriptedChatModel([ConnectionError("blip"),
                             json.dumps({"thought": "t", "action": "FINISH", "action_input": "ok"})])
    assert ReactAgent(llm, [], prompts="en", retry=policy).run("t").status == "finished"


def test_a_negative_retry_wait_too_long_to_print_is_a_config_error() -> None:
    """Python refuses to print an int of over 4,300 digits: the message shows it shortened, never a ValueError."""
    with pytest.raises(ConfigError, match="initial_wait must be seconds >= 0"):
        RetryPolicy(initial_wait=-10**5000)


def test_outside_a_run_execute_refuses_an_async_approve_and_aexecute_awaits_it() -> None:
    """A tool call made directly (a custom loop): the sync execute cannot await an async approve (ConfigError
    naming the fix; approve is not even called), aexecute awaits it and only True approves."""
    paid: list[str] = []
    asked: list[tuple[str, Any]] = []
    action = AgentAction(action="pay", action_input={"invoice": "A-1"})
    agent = ReactAgent(_script(), [_guarded(paid)], prompts="en", approve=_async_approver("async-def", asked, True))
    with pytest.raises(ConfigError, match=SYNC_REFUSAL):
        agent.execute(action)
    assert asked == [] and paid == []
    assert asyncio.run(agent.aexecute(action)).observation == "paid"
    assert asked == [("pay", {"invoice": "A-1"})] and paid == ["A-1"]
    refusing = ReactAgent(_script(), [_guarded(paid)], prompts="en",
                          approve=_async_approver("async-def", asked, False))
    assert asyncio.run(refusing.aexecute(action)).kind == "approval_denied" and paid == ["A-1"]
