"""BaseAgent: the loop, written once as a generator of effects and driven sync or async.

The loop (``_loop``) never does I/O itself: it yields a :class:`_ModelCall` or a :class:`_ToolCall`
and receives the reply; a driver (``run``/``stream`` or ``arun``/``astream``) carries the effect out.
So one implementation of a step serves ``run``, ``arun``, ``stream`` and ``astream``.

Overridable seams: :meth:`BaseAgent.build_messages`, :meth:`BaseAgent.parse`,
:meth:`BaseAgent.call_model` / :meth:`BaseAgent.acall_model`, :meth:`BaseAgent.execute` /
:meth:`BaseAgent.aexecute`, :meth:`BaseAgent.needs_reflection`.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config

from react_agent._errors import ConfigError, OutputParseError, RunError
from react_agent._journal import (
    JournalError,
    RecordedApproval,
    RunJournal,
    attach,
    check_journal_path,
    journal_of,
    secret_values,
    with_idempotency_key,
)
from react_agent._parser import parse_response
from react_agent._prompts import PromptSet, PromptSource
from react_agent._retry import RetryPolicy
from react_agent._schema import answer_schema
from react_agent._timeouts import DeadlineExceeded, acall_within, call_within
from react_agent._tools import Outcome, ToolLike, ToolRegistry, ToolTimeout, run_async, run_sync, stringify
from react_agent._types import FINISH, AgentAction, AgentResult, AgentStep, Example, RunStatus, Usage

__all__ = ["BaseAgent", "RunState"]

logger = logging.getLogger("react_agent")

FinalAnswerMode = Literal["auto", "always", "never"]
DEFAULT_RETRY = RetryPolicy()


@dataclass
class RunState:
    """Everything one run knows. Created per run, so two runs never share history."""

    task: str
    started: float = field(default_factory=time.monotonic)
    deadline: float | None = None
    steps: list[AgentStep] = field(default_factory=list)
    iterations: int = 0
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    reflection: str | None = None
    reflections: int = 0
    parse_failures: int = 0
    status: RunStatus | None = None
    output: str = ""
    error: str | None = None
    violations: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status is not None

    @property
    def last_observation(self) -> str:
        return self.steps[-1].observation if self.steps else ""

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def end(self, status: RunStatus, output: str, error: str | None = None) -> None:
        self.status, self.output, self.error = status, output, error

    def result(self) -> AgentResult:
        return AgentResult(
            output=self.output, status=self.status or "error", steps=list(self.steps),
            llm_calls=self.llm_calls, usage=self.usage, error=self.error, violations=list(self.violations),
        )


@dataclass(frozen=True)
class _ModelCall:
    messages: list[BaseMessage]
    constrained: bool = False


@dataclass(frozen=True)
class _ToolCall:
    action: AgentAction


@dataclass(frozen=True)
class _StepDone:
    step: AgentStep


@dataclass(frozen=True)
class ModelReply:
    """A model's answer reduced to text, with the tokens it reports."""

    text: str
    usage: Usage
    seconds: float


_Effect = _ModelCall | _ToolCall | _StepDone
_Loop = Generator[_Effect, Any, None]


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
    meta = getattr(message, "usage_metadata", None)
    if meta:
        return Usage(input_tokens=int(meta.get("input_tokens", 0)), output_tokens=int(meta.get("output_tokens", 0)))
    token_usage = (getattr(message, "response_metadata", None) or {}).get("token_usage") or {}
    return Usage(
        input_tokens=int(token_usage.get("prompt_tokens", 0) or 0),
        output_tokens=int(token_usage.get("completion_tokens", 0) or 0),
    )


class BaseAgent:
    """The shared loop of every text-protocol agent. Subclass it (or :class:`ReactAgent`) to customise.

    Options are keyword-only:

    - ``max_iterations``: model decisions per run (parse failures count) before status ``"max_iterations"``.
    - ``prompts``: ``"ru"`` (default), ``"en"``, a folder of ``*.jinja`` overrides, a LangChain prompt
      template for the step prompt, a ``{name: template}`` mapping, or a :class:`PromptSet`;
      ``lang`` picks the base language when ``prompts`` is not a language code.
    - ``history_window``: how many recent steps the step prompt shows (``None``: all). The result keeps all.
    - ``max_observation_chars``: observations longer than this are truncated in prompts behind a marker.
    - ``final_answer``: ``"auto"`` (default) makes one extra call that writes the answer from the history
      only when FINISH came without an answer; ``"always"`` makes it on FINISH and when the iteration
      limit is reached; ``"never"`` never does.
    - ``allow_plain_answer``: accept a reply of plain prose (no action, no format markers) as the final
      answer. Off by default: such a reply is a parse error fed back to the model.
    - ``max_parse_errors``: consecutive unparseable replies before the run ends with status ``"error"``.
    - ``timeout``: seconds a tool call may take before it is abandoned (an error observation); ``None``: no limit.
    - ``max_execution_time``: seconds for the whole run before status ``"timeout"``; ``None``: no limit.
    - ``constrained``: derive a JSON schema from the tools and ask the model to decode under it.
      ``None`` (default) detects support (the model's ``supports_json_schema`` attribute); ``True`` forces
      it (OpenAI-compatible ``response_format``); ``False`` turns it off.
    - ``retry``: a :class:`RetryPolicy` for transient model errors (``None``: no retries).
    - ``approve``: a callback ``(tool_name, action_input) -> bool`` asked before tools marked with
      ``metadata={"requires_approval": True}`` run; a refusal becomes an observation.
    - ``journal``: path of a JSONL run journal: every effect is appended and fsync-ed as it completes, so
      :meth:`resume` can continue a run after a crash without repeating completed model or tool calls.
    - ``examples``: worked :class:`Example` s shown in the step prompt (template variable ``examples``),
      rendered once here: each history by the ``history`` template, each answer as its JSON text. Each
      example must use the agent's tools with valid arguments, and the step template must show them.
    """

    def __init__(
        self,
        llm: BaseLanguageModel[Any],
        tools: Sequence[ToolLike],
        *,
        max_iterations: int = 5,
        prompts: PromptSource | PromptSet = "ru",
        lang: str | None = None,
        history_window: int | None = 3,
        max_observation_chars: int = 2000,
        final_answer: FinalAnswerMode = "auto",
        allow_plain_answer: bool = False,
        max_parse_errors: int = 3,
        timeout: float | None = None,
        max_execution_time: float | None = None,
        constrained: bool | None = None,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        approve: Callable[[str, dict[str, Any] | str], bool] | None = None,
        name: str | None = None,
        journal: str | os.PathLike[str] | None = None,
        examples: Sequence[Example] = (),
    ) -> None:
        if not isinstance(llm, BaseLanguageModel):
            raise ConfigError(f"llm must be a langchain-core chat model or LLM, got {type(llm).__name__}")
        for option, value in (("max_iterations", max_iterations), ("max_parse_errors", max_parse_errors),
                              ("max_observation_chars", max_observation_chars)):
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{option} must be a positive integer, got {value!r}")
        if history_window is not None and (not isinstance(history_window, int) or history_window < 0):
            raise ConfigError(f"history_window must be None or an integer >= 0, got {history_window!r}")
        if final_answer not in ("auto", "always", "never"):
            raise ConfigError(f"final_answer must be 'auto', 'always' or 'never', got {final_answer!r}")
        for option, seconds in (("timeout", timeout), ("max_execution_time", max_execution_time)):
            if seconds is not None and seconds <= 0:
                raise ConfigError(f"{option} must be None or positive seconds, got {seconds!r}")
        self.llm = llm
        self.registry = ToolRegistry(tools)
        self.prompts = PromptSet.load(prompts, lang=lang)
        self.max_iterations = max_iterations
        self.history_window = history_window
        self.max_observation_chars = max_observation_chars
        self.final_answer = final_answer
        self.allow_plain_answer = allow_plain_answer
        self.max_parse_errors = max_parse_errors
        self.timeout = timeout
        self.max_execution_time = max_execution_time
        self.retry = retry
        self.approve = approve
        self.name = name or type(self).__name__
        try:  # journal
            self.journal = None if journal is None else check_journal_path(journal)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if constrained is None:
            constrained = bool(getattr(llm, "supports_json_schema", False))
        self.response_format: dict[str, Any] | None = (
            {"type": "json_schema", "json_schema": {"name": "agent_action", "schema": answer_schema(
                list(self.registry.tools.values()))}}
            if constrained else None
        )
        self._tools_text = self.prompts.render("tools", tool_specs=self.registry.specs)
        self._tool_names = ", ".join([*self.registry.names, FINISH])
        self.examples: tuple[Example, ...] = self._check_examples(examples)
        self._examples = [self._example_variables(example) for example in self.examples]

    @property
    def tools(self) -> dict[str, Any]:
        return self.registry.tools

    # ---------------------------------------------------------------- public API
    def run(self, task: str, *, config: RunnableConfig | None = None) -> AgentResult:
        """Solve ``task``; returns the :class:`AgentResult` (never raises for model or tool mistakes)."""
        result: AgentResult | None = None
        for item in self.stream(task, config=config):
            if isinstance(item, AgentResult):
                result = item
        assert result is not None
        return result

    async def arun(self, task: str, *, config: RunnableConfig | None = None) -> AgentResult:
        """Async :meth:`run`: awaits the model's and tools' async methods."""
        result: AgentResult | None = None
        async for item in self.astream(task, config=config):
            if isinstance(item, AgentResult):
                result = item
        assert result is not None
        return result

    def stream(self, task: str, *, config: RunnableConfig | None = None,
               _resume: RunJournal | None = None) -> Iterator[AgentStep | AgentResult]:
        """Yield each :class:`AgentStep` as it completes, then the :class:`AgentResult`."""
        state, loop, run_manager, child = self._start(task, config, CallbackManager, _resume)
        journal = journal_of(state)
        reply: Any = None
        try:
            while True:
                try:
                    effect = loop.send(reply)
                except StopIteration:
                    break
                reply = None
                if isinstance(effect, _StepDone):
                    journal.step_done(len(state.steps), effect.step)
                    yield effect.step
                else:
                    reply = self._perform(state, effect, child)
                    if reply is None:
                        loop.close()
        except Exception as exc:  # our bug or an overridden method's: carry the steps
            run_manager.on_chain_error(exc)
            if isinstance(exc, JournalError):
                raise
            raise RunError(journal.redact(f"{self.name} run failed: {exc!r}"), state.steps) from exc
        run_manager.on_chain_end({"output": state.output, "status": state.status})
        result = self._finish_log(state)
        journal.end(result)
        yield result

    async def astream(
        self, task: str, *, config: RunnableConfig | None = None, _resume: RunJournal | None = None
    ) -> AsyncIterator[AgentStep | AgentResult]:
        """Async :meth:`stream`."""
        state, loop, run_manager, child = self._start(task, config, AsyncCallbackManager, _resume)
        journal = journal_of(state)
        run_manager = await run_manager
        child = patch_config(child, callbacks=run_manager.get_child())
        reply: Any = None
        try:
            while True:
                try:
                    effect = loop.send(reply)
                except StopIteration:
                    break
                reply = None
                if isinstance(effect, _StepDone):
                    journal.step_done(len(state.steps), effect.step)
                    yield effect.step
                else:
                    reply = await self._aperform(state, effect, child)
                    if reply is None:
                        loop.close()
        except Exception as exc:
            await run_manager.on_chain_error(exc)
            if isinstance(exc, JournalError):
                raise
            raise RunError(journal.redact(f"{self.name} run failed: {exc!r}"), state.steps) from exc
        await run_manager.on_chain_end({"output": state.output, "status": state.status})
        result = self._finish_log(state)
        journal.end(result)
        yield result

    # ---------------------------------------------------------------- journal: resume a run
    def resume(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
               config: RunnableConfig | None = None) -> AgentResult:
        """Continue the run recorded in ``journal`` (its last run, or ``run_id``) and return its result.

        The loop is re-run and each effect is answered from the journal while records remain: completed
        model calls are not made again, completed tool calls do not run again, journaled approvals are not
        asked again. A tool call that started but has no result runs again with the same idempotency key.
        Then the run continues live, appending to the same journal. Resume with the same agent class,
        prompts, tools and options: a prompt that differs from the journaled one raises
        :class:`JournalMismatchError`. ``max_execution_time`` counts from the resume.
        """
        result: AgentResult | None = None
        for item in self.resume_stream(journal, run_id=run_id, config=config):
            if isinstance(item, AgentResult):
                result = item
        assert result is not None
        return result

    async def aresume(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                      config: RunnableConfig | None = None) -> AgentResult:
        """Async :meth:`resume`."""
        result: AgentResult | None = None
        async for item in self.aresume_stream(journal, run_id=run_id, config=config):
            if isinstance(item, AgentResult):
                result = item
        assert result is not None
        return result

    def resume_stream(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                      config: RunnableConfig | None = None) -> Iterator[AgentStep | AgentResult]:
        """:meth:`resume` step by step: every step of the run (replayed ones first), then the result.
        The journal is read at once: :class:`JournalError` if it holds no run to resume."""
        opened = RunJournal.open(journal, run_id=run_id, secrets=secret_values(self.llm))
        return self.stream(opened.task, config=config, _resume=opened)

    def aresume_stream(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                       config: RunnableConfig | None = None) -> AsyncIterator[AgentStep | AgentResult]:
        """Async :meth:`resume_stream`."""
        opened = RunJournal.open(journal, run_id=run_id, secrets=secret_values(self.llm))
        return self.astream(opened.task, config=config, _resume=opened)

    # ---------------------------------------------------------------- seams
    def build_messages(self, state: RunState) -> list[BaseMessage]:
        """The messages of the next decision: the step prompt, or the corrective one after a reflection."""
        name = "step" if state.reflection is None else "corrective"
        return self.prompts.messages(name, **self.prompt_variables(state), reflection=state.reflection or "")

    def build_reflection_messages(self, state: RunState) -> list[BaseMessage]:
        return self.prompts.messages("reflection", **self.prompt_variables(state, window=None))

    def build_final_messages(self, state: RunState) -> list[BaseMessage]:
        return self.prompts.messages("final_answer", **self.prompt_variables(state, window=None))

    def prompt_variables(self, state: RunState, *, window: int | Literal["default"] | None = "default") -> dict[
        str, Any
    ]:
        """The documented template variables: task, tools, tool_names, history, steps, tool_specs, examples."""
        size = self.history_window if window == "default" else window
        shown = [(i, s) for i, s in enumerate(state.steps, 1) if s.action != FINISH]
        if size is not None:
            shown = shown[-size:] if size else []
        steps = [self._history_entry(i, s) for i, s in shown]
        return {
            "task": state.task, "tools": self._tools_text, "tool_names": self._tool_names,
            "history": self.prompts.render("history", steps=steps), "steps": steps,
            "tool_specs": self.registry.specs, "examples": self._examples,
        }

    def parse(self, text: str) -> AgentAction:
        """Turn the model's text into an action; raise :class:`OutputParseError` when it cannot."""
        return parse_response(text, self.registry.names, allow_plain_answer=self.allow_plain_answer)

    def call_model(self, messages: list[BaseMessage], config: RunnableConfig, call: Any = None) -> Any:
        """Invoke the model (with retries for transient errors); returns its message."""
        kwargs = self._model_kwargs(call)

        def invoke() -> Any:
            return self.llm.invoke(messages, config, **kwargs)

        return self.retry.call(invoke) if self.retry else invoke()

    async def acall_model(self, messages: list[BaseMessage], config: RunnableConfig, call: Any = None) -> Any:
        kwargs = self._model_kwargs(call)

        async def invoke() -> Any:
            return await self.llm.ainvoke(messages, config, **kwargs)

        return await (self.retry.acall(invoke) if self.retry else invoke())

    def execute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                timeout: float | None = None, idempotency_key: str | None = None) -> Outcome:
        """Validate and run a tool call; every failure is an :class:`Outcome` for the model, never raised.

        A tool that declares a hidden ``idempotency_key`` argument (``Annotated[str, InjectedToolArg]``)
        receives ``idempotency_key``, else the key of the run's tool call in progress.
        """
        checked = self._check_call(action)
        if isinstance(checked, Outcome):
            return checked
        tool, args = checked
        args = with_idempotency_key(tool, args, self.registry.schemas[tool.name], idempotency_key)
        try:
            return Outcome(stringify(run_sync(tool, args, config, timeout)))
        except ToolTimeout:
            return self._outcome("tool_timeout", action, timeout=_seconds(timeout))
        except Exception as exc:
            return self._outcome("tool_error", action, error=_error_text(exc))

    async def aexecute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                       timeout: float | None = None, idempotency_key: str | None = None) -> Outcome:
        checked = self._check_call(action)
        if isinstance(checked, Outcome):
            return checked
        tool, args = checked
        args = with_idempotency_key(tool, args, self.registry.schemas[tool.name], idempotency_key)
        try:
            return Outcome(stringify(await run_async(tool, args, config, timeout)))
        except ToolTimeout:
            return self._outcome("tool_timeout", action, timeout=_seconds(timeout))
        except Exception as exc:
            return self._outcome("tool_error", action, error=_error_text(exc))

    def needs_reflection(self, state: RunState) -> bool:
        """Whether to make a reflection call after the last step (ReflectionAgent overrides this)."""
        return False

    # ---------------------------------------------------------------- the loop
    def _loop(self, state: RunState) -> _Loop:
        while state.iterations < self.max_iterations:
            if self._out_of_time(state):
                return
            state.iterations += 1
            reply: ModelReply = yield _ModelCall(self.build_messages(state), constrained=True)
            state.reflection = None
            try:
                action = self.parse(reply.text)
            except OutputParseError as exc:
                state.parse_failures += 1
                exhausted = state.parse_failures >= self.max_parse_errors
                yield from self._record(state, self._parse_failure(exc, reply), review=not exhausted)
                if exhausted:
                    state.end("error", state.last_observation, f"{state.parse_failures} unparseable replies in a row")
                    return
                continue
            state.parse_failures = 0
            if action.is_finish:
                yield from self._finish(state, action, reply)
                return
            started = time.monotonic()
            outcome: Outcome = yield _ToolCall(action)
            yield from self._record(state, AgentStep(
                thought=action.thought, action=action.action, action_input=action.action_input,
                observation=outcome.observation, is_error=outcome.is_error, raw_output=reply.text,
                duration_s=reply.seconds + time.monotonic() - started, usage=reply.usage,
            ), review=True)
        if not state.done:
            yield from self._limit(state)

    def _record(self, state: RunState, step: AgentStep, *, review: bool = False) -> _Loop:
        """Append a step; with ``review``, let the reflection check run first; then publish the step."""
        state.steps.append(step)
        logger.debug("step %d: action=%s error=%s", len(state.steps), step.action, step.is_error)
        if review:
            yield from self._review(state)
        yield _StepDone(state.steps[-1])

    def _review(self, state: RunState) -> _Loop:
        if state.reflections >= self.max_reflections or not self.needs_reflection(state):
            return
        reply: ModelReply = yield _ModelCall(self.build_reflection_messages(state))
        state.reflections += 1
        state.reflection = reply.text.strip()
        state.steps[-1] = state.steps[-1].model_copy(update={"reflection": state.reflection})
        logger.info("reflection %d after step %d", state.reflections, len(state.steps))

    max_reflections = 0

    def _finish(self, state: RunState, action: AgentAction, reply: ModelReply) -> _Loop:
        answer = str(action.action_input).strip()
        if self.final_answer == "always" or (self.final_answer == "auto" and not answer):
            final: ModelReply = yield _ModelCall(self.build_final_messages(state))
            answer = final.text.strip()
        yield from self._record(state, AgentStep(
            thought=action.thought, action=FINISH, action_input=answer, raw_output=reply.text,
            duration_s=reply.seconds, usage=reply.usage,
        ))
        state.end("finished", answer)

    def _limit(self, state: RunState) -> _Loop:
        output = self.prompts.render("max_iterations", last_observation=state.last_observation, steps=state.steps)
        if self.final_answer == "always":
            final: ModelReply = yield _ModelCall(self.build_final_messages(state))
            output = final.text.strip()
        state.end("max_iterations", output)

    def _out_of_time(self, state: RunState) -> bool:
        left = state.time_left()
        if left is None or left > 0:
            return False
        self._end_timeout(state)
        return True

    def _end_timeout(self, state: RunState) -> None:
        """End the run with status ``"timeout"``: the per-run deadline has passed."""
        state.end("timeout", self.prompts.render(
            "timeout", last_observation=state.last_observation, steps=state.steps, seconds=self.max_execution_time))

    def _parse_failure(self, exc: OutputParseError, reply: ModelReply) -> AgentStep:
        feedback = self.prompts.render(
            "parse_error", error=exc.message, reason=exc.reason, text=exc.text, tool_names=self._tool_names)
        return AgentStep(observation=feedback, is_error=True, raw_output=reply.text,
                         duration_s=reply.seconds, usage=reply.usage)

    # ---------------------------------------------------------------- helpers
    def _start(self, task: str, config: RunnableConfig | None, manager: Any, resume: RunJournal | None = None) -> Any:
        if not isinstance(task, str) or not task.strip():
            raise ConfigError("task must be a non-empty string")
        config = ensure_config(config)
        run_id = config.get("run_id") or uuid.uuid4()
        run_manager = manager.configure(
            config.get("callbacks"), None, inheritable_tags=config.get("tags"),
            inheritable_metadata=config.get("metadata"),
        ).on_chain_start({"name": self.name}, {"task": task}, run_id=run_id,
                         name=config.get("run_name") or self.name)
        state = RunState(task)
        if self.max_execution_time is not None:
            state.deadline = state.started + self.max_execution_time
        # journal: bind the run's journal; journal approval decisions (also of an approve set after __init__)
        attach(state, resume or RunJournal.start(
            task, path=self.journal, run_id=str(run_id), agent=self.name, tools=self.registry.names,
            secrets=secret_values(self.llm)))
        if self.approve is not None and not isinstance(self.approve, RecordedApproval):
            self.approve = RecordedApproval(self.approve)
        child = config if manager is AsyncCallbackManager else patch_config(config, callbacks=run_manager.get_child())
        return state, self._loop(state), run_manager, child

    def _tool_timeout(self, state: RunState) -> float | None:
        left = state.time_left()
        if left is None:
            return self.timeout
        return max(0.001, left if self.timeout is None else min(self.timeout, left))

    def _model_kwargs(self, call: Any) -> dict[str, Any]:
        if self.response_format is not None and isinstance(call, _ModelCall) and call.constrained:
            return {"response_format": self.response_format}
        return {}

    def _perform(self, state: RunState, effect: _ModelCall | _ToolCall, config: RunnableConfig) -> Any:
        """Carry out one effect of the loop; ``None`` means the model failed and the run is over.

        Each effect is answered from the run's journal when it holds it (a resumed run), else carried out
        and journaled. The model call is bounded by the run's deadline.
        """
        journal = journal_of(state)
        if isinstance(effect, _ToolCall):
            call = journal.tool_call(effect.action.action, effect.action.action_input, step=len(state.steps) + 1)
            if call.outcome is not None:  # journaled: never run again
                return call.outcome
            with call.active():
                outcome = self.execute(effect.action, config=config, timeout=self._tool_timeout(state))
            return call.finish(outcome)
        recorded = journal.model_call(effect.messages)
        if recorded is not None:
            state.llm_calls += 1
            state.usage = state.usage + recorded.usage
            return ModelReply(recorded.text, recorded.usage, recorded.seconds)
        started = time.monotonic()
        try:
            message = call_within(lambda: self.call_model(effect.messages, config, effect), state.time_left())
        except DeadlineExceeded:  # the run's deadline passed during the call
            self._end_timeout(state)
            return None
        except Exception as exc:
            self._model_failed(state, exc)
            state.error = journal.redact(state.error or "")
            journal.model_failed(state.error)
            return None
        reply = self._reply(state, message, started)
        journal.model_done(reply.text, reply.usage, reply.seconds)
        return reply

    async def _aperform(self, state: RunState, effect: _ModelCall | _ToolCall, config: RunnableConfig) -> Any:
        """Async :meth:`_perform`."""
        journal = journal_of(state)
        if isinstance(effect, _ToolCall):
            call = journal.tool_call(effect.action.action, effect.action.action_input, step=len(state.steps) + 1)
            if call.outcome is not None:
                return call.outcome
            with call.active():
                outcome = await self.aexecute(effect.action, config=config, timeout=self._tool_timeout(state))
            return call.finish(outcome)
        recorded = journal.model_call(effect.messages)
        if recorded is not None:
            state.llm_calls += 1
            state.usage = state.usage + recorded.usage
            return ModelReply(recorded.text, recorded.usage, recorded.seconds)
        started = time.monotonic()
        try:
            message = await acall_within(lambda: self.acall_model(effect.messages, config, effect), state.time_left())
        except DeadlineExceeded:  # the run's deadline passed during the call
            self._end_timeout(state)
            return None
        except Exception as exc:
            self._model_failed(state, exc)
            state.error = journal.redact(state.error or "")
            journal.model_failed(state.error)
            return None
        reply = self._reply(state, message, started)
        journal.model_done(reply.text, reply.usage, reply.seconds)
        return reply

    def _reply(self, state: RunState, message: Any, started: float) -> ModelReply:
        usage = message_usage(message) if isinstance(message, AIMessage) else Usage()
        state.llm_calls += 1
        state.usage = state.usage + usage
        return ModelReply(message_text(message), usage, time.monotonic() - started)

    def _model_failed(self, state: RunState, exc: Exception) -> ModelReply | None:
        """End the run with status ``"error"``: the model failed beyond the retries."""
        logger.warning("%s: model call failed: %s", self.name, type(exc).__name__)
        state.end("error", state.last_observation, f"model call failed: {type(exc).__name__}: {exc}")
        return None

    def _finish_log(self, state: RunState) -> AgentResult:
        result = state.result()
        logger.info("%s finished: status=%s steps=%d llm_calls=%d", self.name, result.status,
                    len(result.steps), result.llm_calls)
        return result

    def _check_examples(self, examples: Sequence[Example]) -> tuple[Example, ...]:
        """The examples as a tuple; :class:`ConfigError` for one that the agent could not act on."""
        if isinstance(examples, (str, Example)) or not isinstance(examples, Sequence):
            raise ConfigError(f"examples must be a sequence of Example, got {type(examples).__name__}")
        names = [*self.registry.names, FINISH]
        for number, example in enumerate(examples, 1):
            if not isinstance(example, Example):
                raise ConfigError(f"example {number} must be an Example, got {type(example).__name__}")
            calls = [(f"step {i}", s.action) for i, s in enumerate(example.steps, 1) if s.action is not None]
            for where, action in [*calls, ("answer", example.answer.action)]:
                if action not in names:
                    raise ConfigError(f"example {number} ({where}) calls {action!r}, which is not a tool of this "
                                      f"agent; its tools: {', '.join(names)}")
            answer = example.answer
            if answer.is_finish and not isinstance(answer.action_input, str):
                raise ConfigError(f"example {number} (answer): FINISH needs the final answer text as action_input")
            if not answer.is_finish:
                try:
                    self.registry.validate(answer.action, answer.action_input)
                except ValueError as exc:
                    raise ConfigError(f"example {number} (answer): invalid arguments for {answer.action}: {exc}"
                                      ) from None
        if examples and not self.prompts.uses("step", "examples"):
            raise ConfigError("examples were given but the step prompt does not show them (it does not use the "
                              "variable 'examples'); use a prompt set that does, such as 'en-compact'")
        return tuple(examples)

    def _example_variables(self, example: Example) -> dict[str, str]:
        """One example as the ``examples`` template variable holds it: task, rendered history, answer JSON."""
        shown = [(i, s) for i, s in enumerate(example.steps, 1) if s.action != FINISH]
        steps = [self._history_entry(i, s) for i, s in shown]
        answer = example.answer
        text = json.dumps({"thought": answer.thought, "action": answer.action, "action_input": answer.action_input},
                          ensure_ascii=False)
        return {"task": example.task, "history": self.prompts.render("history", steps=steps), "answer": text}

    def _history_entry(self, index: int, step: AgentStep) -> dict[str, Any]:
        action_input = (step.action_input if isinstance(step.action_input, str)
                        else json.dumps(step.action_input, ensure_ascii=False))
        return {"index": index, "thought": step.thought, "action": step.action, "action_input": action_input,
                "observation": self._truncate(step.observation), "is_error": step.is_error,
                "reflection": step.reflection}

    def _truncate(self, text: str) -> str:
        limit = self.max_observation_chars
        if len(text) <= limit:
            return text
        return text[:limit] + self.prompts.render("truncated", omitted=len(text) - limit)

    def _check_call(self, action: AgentAction) -> Outcome | tuple[Any, dict[str, Any]]:
        tool = self.registry.tools.get(action.action)
        if tool is None:
            return self._outcome("unknown_tool", action, tool_names=self._tool_names)
        try:
            args = self.registry.validate(action.action, action.action_input)
        except ValueError as exc:
            return self._outcome("invalid_arguments", action, error=str(exc),
                                 arguments=self.registry.arguments_text(action.action))
        needs_approval = bool((tool.metadata or {}).get("requires_approval"))
        if needs_approval and (self.approve is None or not self.approve(action.action, args)):
            return self._outcome("approval_denied", action)
        return tool, args

    def _outcome(self, kind: str, action: AgentAction, **variables: Any) -> Outcome:
        text = self.prompts.render(kind, action=action.action, action_input=action.action_input, **variables)
        return Outcome(text, kind)


def _seconds(value: float | None) -> float | None:
    """Seconds for a message: two decimals are enough (a deadline-clipped timeout is not 0.19872 s)."""
    return None if value is None else round(value, 2)


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__
