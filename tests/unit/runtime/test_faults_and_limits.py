"""Model faults, timeouts, the run deadline and size limits: what a run survives and how it reports it."""

from __future__ import annotations

import ast
import asyncio
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import tenacity
from conftest import ROOT, call, finish
from gigachat.exceptions import AuthenticationError, BadRequestError, RateLimitError, ServerError
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool

from react_agent import ConfigError, ReactAgent, RetryPolicy, read_journal
from react_agent.testing import ScriptedChatModel

URL = "https://gigachat.example/api/v1/chat/completions"
FAST = RetryPolicy(max_attempts=3, initial_wait=0.001, max_wait=0.01, jitter=0)


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


class SlowModel(ScriptedChatModel):
    """A scripted model that takes ``delay`` seconds to answer (a hanging backend)."""

    delay: float = 0.0

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        time.sleep(self.delay)
        return super()._generate(messages, stop, run_manager, **kwargs)


TRANSIENT = [
    pytest.param(RateLimitError(URL, 429, b"", None), id="gigachat-429"),
    pytest.param(ServerError(URL, 503, b"busy", None), id="gigachat-503"),
    pytest.param(httpx.ConnectError("connection refused"), id="httpx-connect"),
    pytest.param(httpx.ReadTimeout("read timed out"), id="httpx-read-timeout"),
    pytest.param(ConnectionResetError("reset by peer"), id="connection-reset"),
    pytest.param(TimeoutError("timed out"), id="timeout"),
]

NON_TRANSIENT = [
    pytest.param(AuthenticationError(URL, 401, b"bad credentials", None), "401", id="gigachat-401"),
    pytest.param(BadRequestError(URL, 400, b"bad payload", None), "400", id="gigachat-400"),
    pytest.param(ValueError("malformed request"), "malformed request", id="value-error"),
]


# ------------------------------------------------------------------------------------------ model faults
@pytest.mark.parametrize("error", TRANSIENT)
def test_transient_model_errors_are_retried(error: Exception) -> None:
    """A transient error (GigaChat 429/503, httpx transport error, timeout) is retried and the run finishes."""
    llm = ScriptedChatModel([error, error, finish("ok")])
    result = ReactAgent(llm, [echo], retry=FAST).run("task")
    assert result.status == "finished" and result.output == "ok"
    assert len(llm.calls) == 3


def test_retry_waits_grow_exponentially(monkeypatch: pytest.MonkeyPatch) -> None:
    """Between attempts the policy sleeps initial_wait * 2**n (capped at max_wait), so load backs off."""
    waits: list[float] = []
    monkeypatch.setattr(tenacity.nap.time, "sleep", waits.append)
    error = RateLimitError(URL, 429, b"", None)
    llm = ScriptedChatModel([error, error, error, error, finish("ok")])
    policy = RetryPolicy(max_attempts=5, initial_wait=0.1, max_wait=0.5, jitter=0)
    result = ReactAgent(llm, [echo], retry=policy).run("task")
    assert result.status == "finished"
    assert waits == pytest.approx([0.1, 0.2, 0.4, 0.5])


def test_retry_jitter_stays_within_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jitter adds at most `jitter` seconds of randomness to each wait."""
    waits: list[float] = []
    monkeypatch.setattr(tenacity.nap.time, "sleep", waits.append)
    error = ServerError(URL, 503, b"", None)
    llm = ScriptedChatModel([error] * 2 + [finish("ok")])
    ReactAgent(llm, [echo], retry=RetryPolicy(max_attempts=3, initial_wait=0.1, jitter=0.05)).run("task")
    assert 0.1 <= waits[0] <= 0.15 and 0.2 <= waits[1] <= 0.25


@pytest.mark.parametrize(("options", "named"), [
    ({"max_attempts": 0}, "max_attempts"),
    ({"max_attempts": "3"}, "max_attempts"),  # compared with 1 only once a call had failed: a TypeError mid-run
    ({"max_attempts": True}, "max_attempts"),
    ({"initial_wait": -1}, "initial_wait"),
    ({"max_wait": float("nan")}, "max_wait"),
    ({"jitter": float("inf")}, "jitter"),
    ({"jitter": "0.5"}, "jitter"),
    ({"retry_on": "RateLimitError"}, "retry_on"),
])
def test_a_wrong_retry_policy_is_a_config_error_naming_the_field(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=f"RetryPolicy: {named}"):
        RetryPolicy(**options)


def test_retries_are_bounded_by_max_attempts() -> None:
    """A transient error that never clears is tried max_attempts times, then the run ends with status 'error'."""
    error = RateLimitError(URL, 429, b"", None)
    llm = ScriptedChatModel([call("echo", text="a")] + [error] * 5)
    result = ReactAgent(llm, [echo], retry=FAST).run("task")
    assert result.status == "error"
    assert len(llm.calls) == 1 + 3
    assert "RateLimitError" in (result.error or "") and "429" in (result.error or "")
    assert len(result.steps) == 1


async def test_async_transient_errors_are_retried() -> None:
    """arun() retries transient errors the same way as run()."""
    error = ServerError(URL, 502, b"", None)
    llm = ScriptedChatModel([error, finish("ok")])
    result = await ReactAgent(llm, [echo], retry=FAST).arun("task")
    assert result.status == "finished" and len(llm.calls) == 2


@pytest.mark.parametrize(("error", "text"), NON_TRANSIENT)
def test_non_transient_errors_end_run_without_retry(error: Exception, text: str) -> None:
    """A non-transient error (GigaChat 401/400, ValueError) is not retried: status 'error', its text, every step."""
    llm = ScriptedChatModel([call("echo", text="a"), call("echo", text="b"), error, finish("never")])
    result = ReactAgent(llm, [echo], retry=FAST).run("task")
    assert result.status == "error"
    assert len(llm.calls) == 3
    assert type(error).__name__ in (result.error or "") and text in (result.error or "")
    assert [s.observation for s in result.steps] == ["echo: a", "echo: b"]
    assert result.llm_calls == 2


@pytest.mark.parametrize("reply", ["", "   ", "\n\t  \n"])
def test_empty_or_whitespace_reply_is_parse_error(reply: str) -> None:
    """An empty or whitespace-only reply is a parse error fed back to the model, not an answer."""
    llm = ScriptedChatModel([reply, finish("ok")])
    result = ReactAgent(llm, [echo], prompts="en").run("task")
    assert result.status == "finished" and result.output == "ok"
    assert result.steps[0].action is None and result.steps[0].is_error
    assert "empty" in result.steps[0].observation.lower()


# ------------------------------------------------------------------------------------------ timeouts
def test_sync_tool_timeout_abandons_the_call_and_run_goes_on() -> None:
    """A sync tool past `timeout` is abandoned in its worker thread; the model reads the timeout and goes on."""
    release = threading.Event()

    @tool
    def stuck(text: str) -> str:
        """Never answers in time."""
        release.wait(5)
        return "late"

    llm = ScriptedChatModel([call("stuck", text="x"), call("echo", text="y"), finish("ok")])
    started = time.monotonic()
    result = ReactAgent(llm, [stuck, echo], timeout=0.2, prompts="en").run("task")
    release.set()
    assert time.monotonic() - started < 2
    assert result.steps[0].is_error and "did not answer within 0.2 s" in result.steps[0].observation
    assert result.steps[1].observation == "echo: y" and result.status == "finished"


async def test_async_tool_timeout_cancels_the_coroutine() -> None:
    """An async tool past `timeout` is cancelled (it sees CancelledError) and reported as an observation."""
    cancelled = asyncio.Event()

    @tool
    async def snooze(seconds: float) -> str:
        """Sleep asynchronously."""
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "woke"

    llm = ScriptedChatModel([call("snooze", seconds=5), finish("ok")])
    started = time.monotonic()
    result = await ReactAgent(llm, [snooze], timeout=0.1, prompts="en").arun("task")
    assert time.monotonic() - started < 2
    assert cancelled.is_set()
    assert "did not answer within 0.1 s" in result.steps[0].observation


def test_deadline_ends_run_with_timeout_and_steps_so_far() -> None:
    """max_execution_time ends the run with status 'timeout', the completed steps and the last observation."""

    @tool
    def nap(seconds: float) -> str:
        """Sleep, then report."""
        time.sleep(seconds)
        return "rested"

    llm = ScriptedChatModel([call("nap", seconds=0.15), call("nap", seconds=0.16), call("nap", seconds=0.17)])
    result = ReactAgent(llm, [nap], max_execution_time=0.2, max_iterations=5, prompts="en").run("task")
    assert result.status == "timeout"
    assert len(llm.calls) == 2 and len(result.steps) == 2
    assert result.steps[0].observation == "rested"
    assert result.steps[1].is_error and "did not answer" in result.steps[1].observation
    assert result.output.startswith("Execution time limit reached (0.2 s)")
    assert result.steps[1].observation in result.output


def test_deadline_caps_the_tool_timeout() -> None:
    """A tool without its own timeout is still abandoned when the run's deadline passes."""

    @tool
    def forever(text: str) -> str:
        """Takes far too long."""
        time.sleep(1.5)
        return "done"

    llm = ScriptedChatModel([call("forever", text="x"), finish("ok")])
    started = time.monotonic()
    result = ReactAgent(llm, [forever], max_execution_time=0.3, prompts="en").run("task")
    assert time.monotonic() - started < 1.0
    assert result.status == "timeout" and result.steps[0].is_error


def test_deadline_bounds_a_hanging_model_call() -> None:
    """A model call that hangs past max_execution_time is abandoned: status 'timeout', on time."""
    llm = SlowModel([call("echo", text="a"), finish("late")], delay=1.2)
    agent = ReactAgent(llm, [echo], max_execution_time=0.4, prompts="en")
    started = time.monotonic()
    result = agent.run("task")
    assert time.monotonic() - started < 1.0
    assert result.status == "timeout" and result.llm_calls == 0


async def test_async_deadline_bounds_a_hanging_model_call() -> None:
    """arun(): a model call that hangs past max_execution_time is cancelled: status 'timeout', on time."""
    llm = SlowModel([call("echo", text="a")], delay=1.2)
    started = time.monotonic()
    result = await ReactAgent(llm, [echo], max_execution_time=0.3, prompts="en").arun("task")
    assert time.monotonic() - started < 1.0
    assert result.status == "timeout"


# ------------------------------------------------------------------------------------------ size limits
def test_long_observation_is_truncated_in_prompt_but_kept_whole(tmp_path: Path) -> None:
    """Observations over max_observation_chars are cut in the prompt behind a marker; result and journal keep all."""
    body = "".join(f"row {i};" for i in range(400))

    @tool
    def dump(text: str) -> str:
        """Return a long text."""
        return body

    journal = tmp_path / "run.jsonl"
    llm = ScriptedChatModel([call("dump", text="x"), finish("ok")])
    result = ReactAgent(llm, [dump], max_observation_chars=100, prompts="en", journal=journal).run("task")
    prompt = llm.calls[1].text
    assert body[:100] + f"…[{len(body) - 100} characters truncated]" in prompt
    assert body[100:200] not in prompt
    assert result.steps[0].observation == body
    ends = [r for r in read_journal(journal) if r["type"] == "tool_end"]
    assert ends[0]["observation"] == body


# ------------------------------------------------------------------------------------------ the page
def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")}


def test_guarantees_page_names_only_existing_tests() -> None:
    """Every test docs/guarantees.md cites exists, and every guarantee section cites at least one."""
    page = (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")
    cited = re.findall(r"(tests/[\w/]+\.py)::(test_\w+)", page)
    assert len(cited) >= 11
    missing = [f"{f}::{t}" for f, t in cited if not (ROOT / f).is_file() or t not in _tests_in(ROOT / f)]
    assert missing == []
    sections = re.split(r"\n## ", page)[1:]
    assert sections and all("::test_" in s for s in sections)


def test_cancelling_an_arun_while_a_sync_tool_runs_without_timeout_returns_at_once() -> None:
    """Under ``arun`` a sync tool runs in a daemon thread; with no timeout the run awaits its result directly,
    and cancelling the run cancels that wait at once (the thread is abandoned, its late result dropped)."""
    release = threading.Event()

    @tool
    def slow(text: str) -> str:
        """Wait until released."""
        release.wait(5)
        return text

    async def main() -> float:
        agent = ReactAgent(ScriptedChatModel([call("slow", text="x"), finish("done")]), [slow], prompts="en")
        task = asyncio.ensure_future(agent.arun("task"))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    try:
        assert asyncio.run(main()) < 0.5
    finally:
        release.set()
