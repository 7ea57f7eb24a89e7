"""The journal layer and the driver helpers, written once for the sync and async drivers.

``drive(agent, state)`` wraps the agent's loop: it answers replayed effects from the run's journal, records
new ones, applies the token budget, the deadline and the error policy, and lets only raw I/O through to the
driver (``_surface.stream_run``/``astream_run``): a :class:`ModelIO` or :class:`ToolIO` request, which the driver
performs (:func:`perform` or :func:`aperform`) and answers by sending the result back, or a failure the
layer handles (deadline, the model's failure) by throwing it in. Published steps pass through as
:class:`StepDone`. So the sync and async drivers differ only in how they await the I/O.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import traceback
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from react_agent._types import AgentAction, AgentResult, AgentStep, Usage
from react_agent.errors import ConfigError, RunError
from react_agent.runtime._agent import Agent, is_default_model_call
from react_agent.runtime._journal import JournalError, RunJournal, ToolCallRecord, redact, secret_values
from react_agent.runtime._native import native_reply_text
from react_agent.runtime._state import (
    ModelCall,
    ModelCallError,
    ModelReply,
    RunState,
    StepDone,
    StepDraft,
    ToolCall,
    ToolCalls,
    completed_step,
)
from react_agent.runtime._usage import report_subrun_usage, subrun_usage
from react_agent.tools import DeadlineExceeded, Outcome, acall_in_thread, acall_within, call_within, native_async

__all__ = ["BatchProgress", "EarlyStep", "Failure", "ModelIO", "ToolBatch", "ToolIO", "advance", "aperform",
           "aperform_batch", "close", "drive", "failed", "journal_of", "masked_cause", "message_text", "message_usage",
           "perform", "perform_batch", "safe_repr", "safe_str"]

logger = logging.getLogger("react_agent")
ZERO = Usage()
MAX_CONCURRENT_CALLS = 16
"""The calls of one decision that run at the same time at most (threads of ``run``, tasks of ``arun``)."""


@dataclass(frozen=True)
class ModelIO:
    """A model call for the driver to make, within ``timeout`` seconds (the run's deadline)."""

    call: ModelCall
    timeout: float | None


@dataclass(frozen=True)
class ToolIO:
    """A tool call for the driver to run through ``execute``, with its journal record in context."""

    action: AgentAction
    record: ToolCallRecord
    timeout: float | None


@dataclass(frozen=True)
class ToolBatch:
    """Tool calls of one decision for the driver to run concurrently (each one's journal record is finished as
    soon as it completes): the driver publishes the step of each call that has a draft as soon as that call
    completes, and answers with a :class:`BatchProgress` reply (:meth:`BatchProgress.reply`)."""

    calls: tuple[ToolIO, ...]
    drafts: tuple[StepDraft | None, ...] = ()
    """Per call: the draft of the step to publish when it completes (``None``: nothing to publish)."""


@dataclass(frozen=True)
class Finished:
    """One call of a :class:`ToolBatch` as the driver reports it: its outcome, the seconds from the start of
    the batch, and the step published for it (``None`` when none was)."""

    outcome: Outcome
    seconds: float
    step: AgentStep | None = None


class BatchProgress:
    """The calls of a :class:`ToolBatch` as they complete, in any order: the step each completion publishes,
    and at the end the driver's reply (every call in call order)."""

    def __init__(self, batch: ToolBatch) -> None:
        self.batch = batch
        self.done: dict[int, Finished] = {}

    def complete(self, k: int, outcome: Outcome, seconds: float) -> EarlyStep | None:
        """Call ``k`` completed: the step to publish now, if it has a draft."""
        draft = self.batch.drafts[k] if k < len(self.batch.drafts) else None
        step = None if draft is None else completed_step(draft, outcome, seconds)
        self.done[k] = Finished(outcome, seconds, step)
        return None if draft is None or step is None else EarlyStep(draft.index, step)

    def reply(self) -> list[Finished]:
        return [self.done[k] for k in range(len(self.batch.calls))]


@dataclass(frozen=True)
class EarlyStep:
    """A step to publish before the loop records it (a call of a parallel decision that has completed): at
    ``index`` among the run's steps; the driver answers ``None``. The loop's ``StepDone`` of the same step
    later journals it without publishing it again."""

    index: int
    step: AgentStep


@dataclass(frozen=True)
class Failure:
    """A failure of the driver's I/O that the journal layer handles: thrown back into it."""

    exc: BaseException


Layer = Generator[StepDone | EarlyStep | ModelIO | ToolIO | ToolBatch, Any, None]


def journal_of(state: RunState) -> RunJournal:
    """The run's journal (a file-less one for a state built by hand: tests, custom drivers)."""
    if state.journal is None:
        state.journal = RunJournal(run_id=f"adhoc-{id(state)}", task=state.task)
    return state.journal


def drive(agent: Agent, state: RunState) -> Layer:
    """Run the agent's loop: answer replayed effects from the journal, record new ones, and let only the raw
    I/O through to the driver, which sends back its result or throws its failure."""
    loop, reply = agent.loop(state), None
    published: dict[int, AgentStep] = {}  # steps published as their calls completed, by index
    while True:
        try:
            effect = loop.send(reply)
        except StopIteration:
            return
        if isinstance(effect, StepDone):
            journal_of(state).step_done(len(state.steps), effect.step)
            reply = None if published.pop(len(state.steps), None) is effect.step else (yield effect)
        elif isinstance(effect, ModelCall):
            reply = yield from _model_effect(agent, state, effect)
            if reply is None:  # the run is over (model failure, deadline, budget)
                loop.close()
                return
        elif isinstance(effect, ToolCall):
            reply = yield from _tool_effect(agent, state, effect.action)
        elif isinstance(effect, ToolCalls):
            reply = yield from _tools_effect(agent, state, effect, published)
        else:
            raise TypeError(f"the loop yielded {effect!r}; yield ModelCall, ToolCall, ToolCalls or StepDone")


def _model_effect(agent: Agent, state: RunState, call: ModelCall) -> Generator[ModelIO, Any, ModelReply | None]:
    journal = journal_of(state)
    budget = agent.config.max_tokens_budget
    if budget is not None and state.usage.total_tokens >= budget:
        state.end("budget", state.last_observation, f"token budget of {budget} reached "
                                                    f"({state.usage.total_tokens} tokens used)")
        return None
    recorded = journal.model_call(call.messages)
    if recorded is not None:
        return _count(state, ModelReply(recorded.text, recorded.usage, recorded.seconds))
    started = time.monotonic()
    try:
        message = yield ModelIO(call, state.time_left())
    except DeadlineExceeded:
        agent.end_timeout(state)
        return None
    except ModelCallError as exc:
        journal.secrets = secret_values(agent.llm)  # tokens the client obtained during the call too
        error = journal.redact(f"model call failed: {exc}")
        cause = exc.__cause__ if exc.__cause__ is not None else exc  # its text may hold what the server echoed
        logger.warning("%s: model call failed: %s", agent.name, type(cause).__name__)
        state.end("error", state.last_observation, error)
        journal.model_failed(error)
        return None
    text = native_reply_text(message, message_text(message)) if call.tool_calls else message_text(message)
    reply = _count(state, ModelReply(text, message_usage(message), time.monotonic() - started))
    if journal.path is not None and state.llm_calls == 1:
        journal.secrets = secret_values(agent.llm)  # a token the client obtained in its first call
    journal.model_done(reply.text, reply.usage, reply.seconds)
    return reply


def _tool_effect(agent: Agent, state: RunState, action: AgentAction) -> Generator[ToolIO, Any, Outcome]:
    record = journal_of(state).tool_call(action.action, action.action_input, step=len(state.steps) + 1)
    if record.outcome is not None:  # journaled: never run again
        if record.usage is not None:
            state.usage = state.usage + record.usage
        return record.outcome
    timeout = _tool_timeout(agent, state)
    with subrun_usage() as subruns:  # agents run as tools report their usage here
        outcome: Outcome = yield ToolIO(action, record, timeout)
    if subruns.usage.total_tokens:
        state.usage = state.usage + subruns.usage
    return record.finish(_without_secrets(outcome, secret_values(agent.llm)), subruns.usage)


def _without_secrets(outcome: Outcome, secrets: Sequence[str]) -> Outcome:
    """``outcome`` with the model's secrets masked: a tool that prints the key shows the model ``***``
    (and the journal keeps what the model was shown, so a resume replays the same text)."""
    observation = str(redact(outcome.observation, secrets))
    return outcome if observation == outcome.observation else Outcome(observation, outcome.kind)


def _tool_timeout(agent: Agent, state: RunState) -> float | None:
    left = state.time_left()
    timeout: float | None = None if agent.config.timeout is None else float(agent.config.timeout)
    if left is not None:
        timeout = max(0.001, left if timeout is None else min(timeout, left))
    return timeout


def _tools_effect(agent: Agent, state: RunState, effect: ToolCalls,
                  published: dict[int, AgentStep]) -> Generator[EarlyStep | ToolBatch, Any, list[Any]]:
    """Concurrent calls: every record first (journaled ones keep their outcome), then the rest as one batch.
    With drafts, each call's step is published as soon as it has its outcome (replayed ones first), and the
    loop receives the completed steps."""
    actions, drafts = effect.actions, effect.drafts
    if drafts is not None and len(drafts) != len(actions):
        raise TypeError(f"ToolCalls has {len(actions)} actions and {len(drafts)} drafts; give one draft per action")
    first = len(state.steps) + 1
    records = journal_of(state).tool_batch([(a.action, a.action_input) for a in actions], step=first)
    finished: list[Finished | None] = [None if r.outcome is None else Finished(r.outcome, 0.0) for r in records]
    for record in records:
        if record.outcome is not None and record.usage is not None:  # replayed: its sub-agents' usage too
            state.usage = state.usage + record.usage
    shown = [d if d is not None and d.publish else None for d in drafts or [None] * len(actions)]
    for i, done in enumerate(finished):
        draft = shown[i]
        if done is not None and draft is not None:  # replayed: published before the others run
            published[draft.index] = completed_step(draft, done.outcome, 0.0)
            yield EarlyStep(draft.index, published[draft.index])
            finished[i] = Finished(done.outcome, 0.0, published[draft.index])
    todo = [i for i, done in enumerate(finished) if done is None]
    if todo:
        timeout = _tool_timeout(agent, state)
        with subrun_usage() as subruns:
            batch = ToolBatch(tuple(ToolIO(actions[i], records[i], timeout) for i in todo),
                              tuple(shown[i] for i in todo))
            reply: list[Finished] = yield batch
        if subruns.usage.total_tokens:
            state.usage = state.usage + subruns.usage
        for i, done in zip(todo, reply, strict=True):
            finished[i] = done
            draft = shown[i]
            if done.step is not None and draft is not None:
                published[draft.index] = done.step
    results = [f for f in finished if f is not None]
    if drafts is None:
        return [f.outcome for f in results]
    return [f.step if f.step is not None else completed_step(d, f.outcome, f.seconds)
            for d, f in zip(drafts, results, strict=True)]


def _count(state: RunState, reply: ModelReply) -> ModelReply:
    state.llm_calls += 1
    if reply.usage is not ZERO and reply.usage.total_tokens:
        state.usage = state.usage + reply.usage
    return reply


def message_text(message: Any) -> str:
    """The text of a model reply: ``str`` content, or the text blocks of list content, joined."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in ("text", None) and "text" in block:
                parts.append(str(block["text"]))
        return "".join(parts)
    return str(content)


def message_usage(message: Any) -> Usage:
    """The tokens a reply reports (a shared zero :class:`Usage` when it reports none)."""
    if not isinstance(message, AIMessage):
        return ZERO
    meta = message.usage_metadata
    if meta:
        details = meta.get("input_token_details") or {}
        return Usage(input_tokens=int(meta.get("input_tokens", 0)), output_tokens=int(meta.get("output_tokens", 0)),
                     cached_input_tokens=int(details.get("cache_read", 0) or 0))
    token_usage = (message.response_metadata or {}).get("token_usage") or {}
    if not token_usage:
        return ZERO
    return Usage(input_tokens=int(token_usage.get("prompt_tokens", 0) or 0),
                 output_tokens=int(token_usage.get("completion_tokens", 0) or 0))


# ------------------------------------------------------------------------------------------- the drivers' I/O
def advance(layer: Layer, reply: Any) -> Any:
    """The next item of the journal layer, sending it ``reply`` (thrown when it is a :class:`Failure`);
    ``None`` at the end of the run."""
    try:
        if isinstance(reply, Failure):
            return layer.throw(reply.exc)
        return layer.send(reply)
    except StopIteration:
        return None


def perform(agent: Agent, io: ModelIO | ToolIO, config: RunnableConfig) -> Any:
    """Carry out one I/O request in the calling thread (a model call bounded by the deadline)."""
    if isinstance(io, ModelIO):
        if io.timeout is None:
            return agent.call_model(io.call.messages, config, io.call)
        return call_within(lambda: agent.call_model(io.call.messages, config, io.call), io.timeout)
    with io.record.active():
        return agent.execute(io.action, config=config, timeout=io.timeout)


async def aperform(agent: Agent, io: ModelIO | ToolIO, config: RunnableConfig) -> Any:
    """Async :func:`perform`; a model without async code of its own is called in a daemon thread (never the
    loop's default executor, which ``asyncio.run`` joins)."""
    if isinstance(io, ModelIO):
        if not is_default_model_call(agent) or native_async(agent.llm):
            return await acall_within(lambda: agent.acall_model(io.call.messages, config, io.call), io.timeout)
        return await acall_in_thread(lambda: agent.call_model(io.call.messages, config, io.call), io.timeout,
                                     name="model")
    with io.record.active():
        return await agent.aexecute(io.action, config=config, timeout=io.timeout)


def perform_batch(agent: Agent, batch: ToolBatch, config: RunnableConfig) -> Iterator[tuple[int, Outcome, float]]:
    """The calls of a batch, each in a worker thread of its own context (at most :data:`MAX_CONCURRENT_CALLS`
    at once), as ``(call number, outcome, seconds)`` in the order they complete; each call's result is
    journaled before it is reported."""
    started = time.monotonic()

    def one(io: ToolIO) -> tuple[Outcome, float]:
        with io.record.active(), subrun_usage() as subruns:
            outcome = agent.execute(io.action, config=config, timeout=io.timeout)
        report_subrun_usage(subruns.usage)  # to the whole decision's collector
        return io.record.finish(_without_secrets(outcome, secret_values(agent.llm)), subruns.usage), \
            time.monotonic() - started

    workers = min(len(batch.calls), MAX_CONCURRENT_CALLS)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="react_agent-tool") as pool:
        futures = {pool.submit(contextvars.copy_context().run, one, io): k for k, io in enumerate(batch.calls)}
        for future in as_completed(futures):
            outcome, seconds = future.result()
            yield futures[future], outcome, seconds


async def aperform_batch(agent: Agent, batch: ToolBatch,
                         config: RunnableConfig) -> AsyncIterator[tuple[int, Outcome, float]]:
    """Async :func:`perform_batch`: each call as a task; each call's result is journaled (flushed in a worker
    thread) before it is reported. Calls still running when the caller stops iterating are cancelled."""
    lock, slots, started = asyncio.Lock(), asyncio.Semaphore(MAX_CONCURRENT_CALLS), time.monotonic()

    async def one(k: int, io: ToolIO) -> tuple[int, Outcome, float]:
        async with slots:
            with io.record.active(), subrun_usage() as subruns:
                outcome = await agent.aexecute(io.action, config=config, timeout=io.timeout)
        report_subrun_usage(subruns.usage)  # to the whole decision's collector
        outcome = io.record.finish(_without_secrets(outcome, secret_values(agent.llm)), subruns.usage)
        journal = io.record.journal
        if journal.outbox:
            async with lock:
                await acall_in_thread(journal.flush, None, name="journal")
        return k, outcome, time.monotonic() - started

    tasks = [asyncio.ensure_future(one(k, io)) for k, io in enumerate(batch.calls)]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        for task in tasks:
            task.cancel()


def close(agent: Agent, state: RunState) -> AgentResult:
    """The run's result, journaled and logged."""
    result = agent.build_result(state)
    journal_of(state).end(result)
    logger.info("%s finished: status=%s steps=%d llm_calls=%d", agent.name, result.status, len(result.steps),
                result.llm_calls)
    return result


# ------------------------------------------------------------------------------------------- failures
def failed(agent: Agent, state: RunState, exc: Exception) -> Exception:
    """What a run that met ``exc`` raises: journal and config errors as they are, anything else a masked
    :class:`RunError` with the steps so far."""
    if isinstance(exc, (JournalError, ConfigError)):
        return exc
    journal_of(state).secrets = secret_values(agent.llm)
    return RunError(journal_of(state).redact(f"{agent.name} run failed: {safe_repr(exc)}"), state.steps)


def masked_cause(exc: Exception, state: RunState) -> BaseException | None:
    """``exc`` as the cause of the :class:`RunError`, or a masked stand-in when its traceback text would
    show a secret (the stand-in keeps the type name, the masked message and the frames)."""
    if isinstance(exc, (JournalError, ConfigError)):
        return None
    secrets = journal_of(state).secrets
    if not secrets:
        return exc
    try:
        text = "".join(traceback.format_exception(exc))
    except Exception:
        text = safe_repr(exc)
    if not any(secret in text for secret in secrets):
        return exc
    masked = RunError(str(redact(f"{type(exc).__name__}: {safe_str(exc)}", secrets)))
    return masked.with_traceback(exc.__traceback__)


def safe_repr(exc: BaseException) -> str:
    try:
        return repr(exc)
    except Exception:
        return f"<{type(exc).__name__} (unprintable)>"


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "(unprintable)"
