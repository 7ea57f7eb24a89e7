"""BaseAgent: one immutable agent, one loop, one driver core, driven sync or async.

Layers, each knowing only the one below::

    drivers        stream / astream (run, arun, invoke, ... use them): the only place sync and async differ
    journal layer  _drive(): answers replayed effects from the run's journal, records new ones, applies the
                   deadline, the token budget and the error policy; lets only raw I/O through to the driver
    loop           loop(state): decide -> act -> observe -> review; yields effects, does no I/O
    pure parts     parser, prompt rendering (_render), tool registry, answer schema

Error policy, in one place (``_drive`` and the drivers): the model's failures after retries
(:class:`ModelCallError`) end the run with status ``"error"``; the deadline ends it with ``"timeout"``;
tool failures are observations (``execute`` never raises); any other exception - a bug in this library or in
a user's override - propagates as :class:`RunError` carrying the steps so far, with secrets masked.

An agent never changes after ``__init__``: everything a run changes lives in its :class:`RunState`, so one
agent serves any number of concurrent ``run``/``arun`` calls.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from abc import ABCMeta
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar, Literal

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager
from langchain_core.messages import BaseMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config

from react_agent._config import AgentConfig, build_config
from react_agent._driver import (
    advance,
    aoutcome_of,
    aperform,
    close,
    drive,
    failed,
    journal_of,
    masked_cause,
    message_text,
    message_usage,
    outcome_of,
    perform,
)
from react_agent._errors import ConfigError, OutputParseError
from react_agent._fastpath import ainvoke_model, invoke_model
from react_agent._journal import (
    RunJournal,
    ToolCallRecord,
    decide_approval,
    secret_values,
    session_references,
    with_idempotency_key,
)
from react_agent._parser import parse_response
from react_agent._prompts import PromptSet
from react_agent._render import check_examples, example_variables, history_entry
from react_agent._retry import explain_model_error
from react_agent._runnable import (
    AgentNode,
    AgentTool,
    ConfigurableAgent,
    agent_tool,
    compose_task,
    history_of,
    output_json_schema,
    rebuild,
    structured_answer,
)
from react_agent._schema import answer_schema
from react_agent._state import Loop, ModelCall, ModelCallError, ModelReply, RunState, StepDone, ToolCall
from react_agent._structured import model_call_kwargs, resolve_mode, structured_kwargs
from react_agent._timeouts import acall_in_thread
from react_agent._tools import Outcome, Rejection, ToolLike, ToolRegistry, ToolTimeout, run_async, run_sync, stringify
from react_agent._types import FINISH, AgentAction, AgentResult, AgentStep, Usage

__all__ = ["BaseAgent", "message_text", "message_usage"]

logger = logging.getLogger("react_agent")
_ZERO = Usage()


class _Sealed(ABCMeta):
    """Seals an agent once the most derived ``__init__`` has returned: later attribute writes raise."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        agent = super().__call__(*args, **kwargs)
        agent.__dict__["_sealed"] = True
        return agent


class _ModelIO:
    call: ModelCall
    timeout: float | None


class _ToolIO:
    action: AgentAction
    record: ToolCallRecord
    timeout: float | None


class BaseAgent(Runnable[Any, AgentResult], metaclass=_Sealed):
    """The shared loop of every text-protocol agent. Subclass it (or :class:`ReactAgent`) to customise.

    ``BaseAgent(llm, tools, **options)``: ``llm`` is any langchain-core chat model or LLM (bound and wrapped
    ones too); ``tools`` are ``BaseTool`` objects or typed, documented functions; the keyword options are
    validated into :attr:`config` (:class:`AgentConfig` lists them). The agent never changes afterwards:
    a run's data lives in its :class:`RunState`, so one agent serves many concurrent runs.
    """

    Config: ClassVar[type[AgentConfig]] = AgentConfig
    State: ClassVar[type[RunState]] = RunState
    config: AgentConfig

    def __init__(self, llm: Any, tools: Sequence[ToolLike], **options: Any) -> None:
        if not isinstance(llm, Runnable):
            raise ConfigError(f"llm must be a langchain-core chat model or LLM (or a Runnable wrapping one), "
                              f"got {type(llm).__name__}")
        self.config = build_config(type(self).Config, options)
        self.llm = llm
        self.registry = ToolRegistry(tools)
        self.prompts = PromptSet.load(self.config.prompts, lang=self.config.lang)
        self.name = self.config.name or type(self).__name__
        self.mode = resolve_mode(llm, self.config.constrained)
        if self.mode == "grammar":  # a client that cannot carry a grammar is a ConfigError now, not at run()
            structured_kwargs(llm, self.answer_schema, self.mode)
        self.tools_text = self.prompts.render("tools", tool_specs=self.registry.specs)
        self.tool_names = ", ".join([*self.registry.names, FINISH])
        check_examples(self.config.examples, self.registry, self.prompts)
        self.examples = self.config.examples

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_sealed"):
            raise AttributeError(f"{type(self).__name__} is immutable after __init__ (so that concurrent runs "
                                 f"cannot interfere); set {name!r} in __init__ or keep per-run data in the RunState")
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:  # wave-1 attribute names of options: agent.max_iterations, ...
        config = self.__dict__.get("config")
        if config is not None and name in type(config).model_fields:
            return getattr(config, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def tools(self) -> dict[str, Any]:
        return self.registry.tools

    @cached_property
    def answer_schema(self) -> dict[str, Any]:
        """The JSON schema of a decision: one branch per tool plus FINISH."""
        schema = self.config.output_schema
        return answer_schema(list(self.registry.tools.values()),
                             finish_schema=None if schema is None else output_json_schema(schema))

    @cached_property
    def _examples(self) -> list[dict[str, str]]:
        return [example_variables(e, self.config.max_observation_chars, self.prompts) for e in self.examples]

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The ``response_format`` of a decision call under constrained decoding (``None`` when off)."""
        kwargs = self.model_kwargs(ModelCall([], schema=self.answer_schema))
        found = kwargs.get("response_format") or kwargs.get("extra_body", {}).get("response_format")
        return dict(found) if found else None

    # ---------------------------------------------------------------- public API
    def run(self, task: Any, *, config: RunnableConfig | None = None, journal: str | os.PathLike[str] | None = None,
            session: Mapping[str, Any] | None = None, chat_history: Any = None) -> AgentResult:
        """Solve ``task``; returns the :class:`AgentResult` (never raises for model or tool mistakes).

        ``journal``: a JSONL file this run appends every effect to (fsync-ed), so :meth:`resume` can finish
        it after a crash; many runs and processes may share one file. ``session``: per-run values that
        ``$session.<key>`` references resolve to (:class:`PlanAndExecuteAgent`). ``chat_history``: the
        previous turns of a dialogue (messages, ``(role, text)`` pairs or a :class:`Conversation`), shown to
        the model before the task; the tool steps of a run never cross into another.
        """
        return _last(self.stream(task, config, journal=journal, session=session, chat_history=chat_history))

    async def arun(self, task: Any, *, config: RunnableConfig | None = None,
                   journal: str | os.PathLike[str] | None = None,
                   session: Mapping[str, Any] | None = None, chat_history: Any = None) -> AgentResult:
        """Async :meth:`run`: awaits the model's and tools' async methods."""
        result = None
        async for item in self.astream(task, config, journal=journal, session=session, chat_history=chat_history):
            result = item
        assert isinstance(result, AgentResult)
        return result

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        """Runnable entry point: :meth:`run` with ``input`` a task string, a ``PromptValue``, a message list
        or ``{"input": ..., "session": ..., "journal": ...}``."""
        return _last(self.stream(input, config, **kwargs))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        result = None
        async for item in self.astream(input, config, **kwargs):
            result = item
        assert isinstance(result, AgentResult)
        return result

    def stream(self, input: Any, config: RunnableConfig | None = None,  # type: ignore[override]
               **kwargs: Any) -> Iterator[AgentStep | AgentResult]:
        """Yield each :class:`AgentStep` as it completes, then the :class:`AgentResult`."""
        state, config = self._start(input, config, **kwargs)
        manager = CallbackManager.configure(config.get("callbacks"), None, inheritable_tags=config.get("tags"),
                                            inheritable_metadata=config.get("metadata"))
        run = manager.on_chain_start({"name": self.name}, {"task": state.task}, run_id=config.get("run_id"),
                                     name=config.get("run_name") or self.name)
        child = patch_config(config, callbacks=run.get_child())
        layer, reply = drive(self, state), None
        try:
            while (item := advance(layer, reply)) is not None:
                if isinstance(item, StepDone):
                    reply = None
                    if run.handlers:
                        run.get_child().on_custom_event(STEP_EVENT, _step_data(state, item), run_id=run.run_id)
                    yield item.step
                else:
                    reply = outcome_of(lambda: perform(self, item, child))
        except Exception as exc:
            run.on_chain_error(exc)
            raise failed(self, state, exc) from masked_cause(exc, state)
        result = close(self, state)
        run.on_chain_end(_end_payload(result))
        yield result

    async def astream(self, input: Any, config: RunnableConfig | None = None,  # type: ignore[override]
                      **kwargs: Any) -> AsyncIterator[AgentStep | AgentResult]:
        """Async :meth:`stream`. Journal records are written and fsync-ed in a worker thread, before the
        run goes on, so a journaled run never blocks the event loop on the disk."""
        state, config = self._start(input, config, _deferred=True, **kwargs)
        journal = journal_of(state)
        journal.defer()
        manager = AsyncCallbackManager.configure(config.get("callbacks"), None, inheritable_tags=config.get("tags"),
                                                 inheritable_metadata=config.get("metadata"))
        run = await manager.on_chain_start({"name": self.name}, {"task": state.task}, run_id=config.get("run_id"),
                                           name=config.get("run_name") or self.name)
        child = patch_config(config, callbacks=run.get_child())
        layer, reply = drive(self, state), None
        try:
            while (item := advance(layer, reply)) is not None:
                if journal.outbox:
                    await acall_in_thread(journal.flush, None, name="journal")
                if isinstance(item, StepDone):
                    reply = None
                    if run.handlers:
                        await run.get_child().on_custom_event(STEP_EVENT, _step_data(state, item), run_id=run.run_id)
                    yield item.step
                else:
                    reply = await aoutcome_of(aperform(self, item, child))
            result = close(self, state)
            if journal.outbox:
                await acall_in_thread(journal.flush, None, name="journal")
        except Exception as exc:
            await run.on_chain_error(exc)
            raise failed(self, state, exc) from masked_cause(exc, state)
        await run.on_chain_end(_end_payload(result))
        yield result

    # ---------------------------------------------------------------- resume a journaled run
    def resume(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
               config: RunnableConfig | None = None, session: Mapping[str, Any] | None = None) -> AgentResult:
        """Continue the run recorded in ``journal`` (its last run, or ``run_id``) and return its result.

        The loop is re-run and each effect is answered from the journal while records remain: completed
        model calls are not made again, completed tool calls do not run again, journaled approvals are
        honoured whatever this agent's ``approve`` is. A tool call that started but has no result runs
        again with the same idempotency key. Then the run continues live, appending to the same journal.
        Resume with the same agent class, prompts, tools and options: a run whose journaled options or
        prompts differ raises :class:`JournalMismatchError`. ``max_execution_time`` counts from the resume.
        """
        return _last(self.resume_stream(journal, run_id=run_id, config=config, session=session))

    async def aresume(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                      config: RunnableConfig | None = None, session: Mapping[str, Any] | None = None) -> AgentResult:
        """Async :meth:`resume`."""
        result = None
        async for item in self.aresume_stream(journal, run_id=run_id, config=config, session=session):
            result = item
        assert isinstance(result, AgentResult)
        return result

    def resume_stream(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                      config: RunnableConfig | None = None,
                      session: Mapping[str, Any] | None = None) -> Iterator[AgentStep | AgentResult]:
        """:meth:`resume` step by step (replayed steps first). :class:`JournalError` if there is no run.
        ``session``: the run's own session values (they are not journaled), as given to :meth:`run`."""
        opened = RunJournal.open(journal, run_id=run_id, secrets=secret_values(self.llm), identity=self.identity())
        return self.stream(opened.task, config, _resume=opened, session=session)

    def aresume_stream(self, journal: str | os.PathLike[str], *, run_id: str | None = None,
                       config: RunnableConfig | None = None,
                       session: Mapping[str, Any] | None = None) -> AsyncIterator[AgentStep | AgentResult]:
        """Async :meth:`resume_stream`."""
        opened = RunJournal.open(journal, run_id=run_id, secrets=secret_values(self.llm), identity=self.identity())
        return self.astream(opened.task, config, _resume=opened, session=session)

    def identity(self) -> dict[str, Any]:
        """The options that change a run's outcome; a resume with other values is refused."""
        keep = ("max_iterations", "history_window", "max_observation_chars", "final_answer", "allow_plain_answer",
                "max_parse_errors", "max_tokens_budget")
        return {"agent": type(self).__name__, "tools": self.registry.names,
                **{k: getattr(self.config, k) for k in keep if k in type(self.config).model_fields}}

    # ---------------------------------------------------------------- LangChain / LangGraph
    def as_tool(self, args_schema: Any = None, *, name: str | None = None, description: str | None = None,
                arg_types: Any = None) -> AgentTool:
        """This agent as a ``BaseTool`` another agent (or any LangChain tool caller) can call with a subtask.

        ``description`` (required) tells the calling model what the agent does; ``name`` defaults to the
        agent's name. The tool takes ``{"task": "..."}`` unless ``args_schema`` (a pydantic model) or
        ``arg_types`` (``{name: type}``) say otherwise; then its arguments are the run's dict input (with an
        ``input``/``task``/``question`` key) or, without one, their JSON text is the task. The sub-run is a
        child of the tool call in traces, its token usage is added to the calling run's usage, and a sub-run
        that does not finish is a tool error (an observation for the caller)."""
        return agent_tool(self, args_schema, name=name, description=description, arg_types=arg_types)

    def as_node(self, *, input_key: str = "input", output_key: str | None = None,
                result_key: str | None = None) -> AgentNode:
        """This agent as a LangGraph node that maps state keys (see :class:`AgentNode`): the task from
        ``state[input_key]``, the answer to ``state[output_key]`` (``"messages"``: an ``AIMessage``; default:
        ``"messages"`` when reading messages, else ``"output"``), the result as plain data to
        ``state[result_key]`` when set."""
        return AgentNode(self, input_key=input_key, output_key=output_key, result_key=result_key)

    def with_options(self, **changes: Any) -> BaseAgent:
        """A new agent of this class with the same model and tools and these options changed (agents are
        immutable, so this is how to derive one); the options are validated as in ``__init__``."""
        return rebuild(self, changes)

    def configurable_fields(self, **fields: Any) -> ConfigurableAgent:
        """LangChain's ``configurable_fields`` for agent options: ``agent.configurable_fields(
        max_iterations=ConfigurableField(id="steps"))`` gives a Runnable whose option is chosen per call by
        ``config={"configurable": {"steps": 8}}`` (each distinct choice builds one validated agent)."""
        return ConfigurableAgent(self, fields)

    # ---------------------------------------------------------------- seams
    def build_messages(self, state: RunState) -> list[BaseMessage]:
        """The messages of the next decision (the ``step`` prompt)."""
        return self.prompts.messages("step", **self.prompt_variables(state))

    def build_reflection_messages(self, state: RunState) -> list[BaseMessage]:
        return self.prompts.messages("reflection", **self.prompt_variables(state, window=None))

    def build_final_messages(self, state: RunState) -> list[BaseMessage]:
        return self.prompts.messages("final_answer", **self.prompt_variables(state, window=None))

    def prompt_variables(self, state: RunState, *,
                         window: int | Literal["default"] | None = "default") -> dict[str, Any]:
        """The documented template variables: task, tools, tool_names, history, steps, tool_specs, examples."""
        size = self.config.history_window if window == "default" else window
        shown = [(i, s) for i, s in enumerate(state.steps, 1) if s.action != FINISH]
        if size is not None:
            shown = shown[-size:] if size else []
        steps = [self._entry(state, i, s) for i, s in shown]
        return {"task": state.task, "tools": self.tools_text, "tool_names": self.tool_names,
                "history": self.prompts.render("history", steps=steps), "steps": steps,
                "tool_specs": self.registry.specs, "examples": self._examples}

    def parse(self, text: str) -> AgentAction:
        """Turn the model's text into an action; raise :class:`OutputParseError` when it cannot. A reply cut
        off after a complete value is completed only when the completed call validates for its tool."""
        return parse_response(text, self.registry.names, allow_plain_answer=self.config.allow_plain_answer,
                              validate=self._valid_call)

    def _valid_call(self, name: str, arguments: Any) -> bool:
        if name not in self.registry.tools:
            return False
        try:
            self.registry.validate(name, arguments)
        except ValueError:
            return False
        return True

    def model_kwargs(self, call: ModelCall | None) -> dict[str, Any]:
        """The extra keyword arguments of one model call: the structured-output request of its schema."""
        schema = None if call is None else call.schema
        name = "agent_action" if call is None or call.purpose == "decision" else f"agent_{call.purpose}"
        return model_call_kwargs(self.llm, schema, self.mode, name=name)

    def call_model(self, messages: list[BaseMessage], config: RunnableConfig, call: ModelCall | None = None) -> Any:
        """Invoke the model (with retries for transient errors); returns its message. The model's failures
        are raised as :class:`ModelCallError`; anything else an override raises is a bug."""
        kwargs = self.model_kwargs(call)
        config = _named(config, call)
        try:
            if self.config.retry is None:
                return invoke_model(self.llm, messages, config, kwargs)
            return self.config.retry.call(lambda: invoke_model(self.llm, messages, config, kwargs))
        except Exception as exc:
            raise _model_error(exc) from exc

    async def acall_model(self, messages: list[BaseMessage], config: RunnableConfig,
                          call: ModelCall | None = None) -> Any:
        kwargs = self.model_kwargs(call)
        config = _named(config, call)
        try:
            if self.config.retry is None:
                return await ainvoke_model(self.llm, messages, config, kwargs)
            return await self.config.retry.acall(lambda: ainvoke_model(self.llm, messages, config, kwargs))
        except Exception as exc:
            raise _model_error(exc) from exc

    def execute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                timeout: float | None = None, idempotency_key: str | None = None) -> Outcome:
        """Validate, approve and run a tool call; every failure is an :class:`Outcome`, never raised."""
        checked = self._check(action, idempotency_key)
        if isinstance(checked, Outcome):
            return checked
        tool, args = checked
        try:
            return Outcome(stringify(run_sync(tool, args, config, timeout)))
        except ToolTimeout:
            return self._outcome("tool_timeout", action, timeout=_seconds(timeout))
        except Exception as exc:
            return self._outcome("tool_error", action, error=_error_text(exc))

    async def aexecute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                       timeout: float | None = None, idempotency_key: str | None = None) -> Outcome:
        checked = self._check(action, idempotency_key)
        if isinstance(checked, Outcome):
            return checked
        tool, args = checked
        try:
            return Outcome(stringify(await run_async(tool, args, config, timeout)))
        except ToolTimeout:
            return self._outcome("tool_timeout", action, timeout=_seconds(timeout))
        except Exception as exc:
            return self._outcome("tool_error", action, error=_error_text(exc))

    def review(self, state: RunState) -> Loop[str | None]:
        """After a step: a generator that may yield model calls and returns a reflection text (kept on the
        step, shown to the next decision) or ``None``. The base agent never reflects."""
        return None
        yield  # a generator

    def new_state(self, task: str, session: Mapping[str, Any]) -> RunState:
        """The state of a new run (override to add per-run data through a :class:`RunState` subclass)."""
        state = type(self).State(task, session=session, references=session_references(session))
        if self.config.max_execution_time is not None:
            state.deadline = state.started + self.config.max_execution_time
        return state

    def build_result(self, state: RunState) -> AgentResult:
        """The run's :class:`AgentResult` (a subclass may return a richer one)."""
        return state.result()

    # ---------------------------------------------------------------- the loop
    def loop(self, state: RunState) -> Loop[None]:
        """decide -> act -> observe -> review, bounded by ``max_iterations``; yields effects, no I/O."""
        while state.iterations < self.config.max_iterations and not self.out_of_time(state):
            state.iterations += 1
            reply: ModelReply = yield ModelCall(self.build_messages(state), "decision", self._decision_schema)
            try:
                action = self.parse(reply.text)
            except OutputParseError as exc:
                state.parse_failures += 1
                exhausted = state.parse_failures >= self.config.max_parse_errors
                yield from self.record(state, self._parse_failure(exc, reply), review=not exhausted)
                if exhausted:
                    state.end("error", state.last_observation, f"{state.parse_failures} unparseable replies in a row")
                    return
                continue
            state.parse_failures = 0
            if action.is_finish:
                yield from self.finish(state, action, reply)
                if state.done:
                    return
                continue  # the answer did not match output_schema: the model was told why
            started = time.monotonic()
            outcome: Outcome = yield ToolCall(action)
            yield from self.record(state, AgentStep(
                thought=action.thought, action=action.action, action_input=action.action_input,
                observation=outcome.observation, is_error=outcome.is_error, raw_output=reply.text,
                duration_s=reply.seconds + time.monotonic() - started, usage=reply.usage,
            ), review=True)
        if not state.done:
            yield from self._limit(state)

    def record(self, state: RunState, step: AgentStep, *, review: bool = False) -> Loop[None]:
        """Append a step; with ``review``, let :meth:`review` run first; then publish the step."""
        state.steps.append(step)
        if review:
            reflection = yield from self.review(state)
            if reflection is not None:
                state.steps[-1] = step.model_copy(update={"reflection": reflection})
        yield StepDone(state.steps[-1])

    def finish(self, state: RunState, action: AgentAction, reply: ModelReply) -> Loop[None]:
        """End the run with the model's answer (one extra call writes it when ``final_answer`` asks). With
        ``output_schema`` the answer must validate against it, or the run goes on with the error observed."""
        answer = str(action.action_input).strip()
        if self.config.output_schema is not None:
            parsed, error = structured_answer(self.config.output_schema, answer, reply.text)
            if parsed is None:
                schema = json.dumps(output_json_schema(self.config.output_schema), ensure_ascii=False)
                feedback = self.prompts.render("invalid_answer", error=error, schema=schema)
                yield from self.record(state, AgentStep(thought=action.thought, observation=feedback, is_error=True,
                                                        raw_output=reply.text, duration_s=reply.seconds,
                                                        usage=reply.usage), review=True)
                return
            state.output_object = parsed
            answer = parsed.model_dump_json()
            yield from self.record(state, AgentStep(thought=action.thought, action=FINISH, action_input=answer,
                                                    raw_output=reply.text, duration_s=reply.seconds, usage=reply.usage))
            state.end("finished", answer)
            return
        if self.config.final_answer == "always" or (self.config.final_answer == "auto" and not answer):
            final: ModelReply = yield ModelCall(self.build_final_messages(state), "final_answer")
            answer = final.text.strip()
        yield from self.record(state, AgentStep(thought=action.thought, action=FINISH, action_input=answer,
                                                raw_output=reply.text, duration_s=reply.seconds, usage=reply.usage))
        state.end("finished", answer)

    def out_of_time(self, state: RunState) -> bool:
        """Whether the run's deadline has passed (then the run is ended with status ``"timeout"``)."""
        left = state.time_left()
        if left is None or left > 0:
            return False
        self.end_timeout(state)
        return True

    @property
    def _decision_schema(self) -> dict[str, Any] | None:
        return self.answer_schema if self.mode else None

    def _limit(self, state: RunState) -> Loop[None]:
        output = self.prompts.render("max_iterations", last_observation=state.last_observation, steps=state.steps)
        if self.config.final_answer == "always":
            final: ModelReply = yield ModelCall(self.build_final_messages(state), "final_answer")
            output = final.text.strip()
        state.end("max_iterations", output)

    def end_timeout(self, state: RunState) -> None:
        """End the run with status ``"timeout"`` (its deadline passed)."""
        state.end("timeout", self.prompts.render("timeout", last_observation=state.last_observation,
                                                 steps=state.steps, seconds=self.config.max_execution_time))

    def _parse_failure(self, exc: OutputParseError, reply: ModelReply) -> AgentStep:
        feedback = self.prompts.render("parse_error", error=exc.message, reason=exc.reason, text=exc.text,
                                       tool_names=self.tool_names)
        return AgentStep(observation=feedback, is_error=True, raw_output=reply.text, duration_s=reply.seconds,
                         usage=reply.usage)

    def _entry(self, state: RunState, index: int, step: AgentStep) -> dict[str, Any]:
        cached = state.entries.get(index)
        if cached is None or cached[0] is not step:
            cached = (step, history_entry(index, step, self.config.max_observation_chars, self.prompts))
            state.entries[index] = cached
        return cached[1]

    # ---------------------------------------------------------------- driver helpers
    def _start(self, input: Any, config: RunnableConfig | None, *, journal: Any = None,
               session: Mapping[str, Any] | None = None, chat_history: Any = None,
               _resume: RunJournal | None = None, _deferred: bool = False) -> tuple[RunState, RunnableConfig]:
        task, extra = task_of(input)
        if _resume is None:  # a journaled task is already composed
            history = history_of(extra.get("chat_history", chat_history))
            task = compose_task(self.prompts, task, history, self.config.output_schema)
        journal = extra.get("journal", journal)
        session = extra.get("session", session)
        if session is not None and not isinstance(session, Mapping):
            raise ConfigError(f"session must be a mapping of key to value, got {type(session).__name__}")
        config = ensure_config(config)
        state = self.new_state(task, dict(session or {}))
        if _resume is not None:
            _resume.references = tuple(state.references)
            state.journal = _resume
        else:
            path = self.config.journal if journal is None else journal
            if path is not None and not isinstance(path, (str, os.PathLike)):
                raise ConfigError(f"journal must be the path of a .jsonl file or None, got {type(path).__name__}")
            state.journal = RunJournal.start(
                task, path=None if path is None else os.fspath(path), run_id=str(config.get("run_id") or uuid.uuid4()),
                agent=str(self.name), tools=self.registry.names, secrets=secret_values(self.llm),
                references=state.references, identity=self.identity() if path is not None else None,
                deferred=_deferred)
        return state, config

    def _check(self, action: AgentAction, key: str | None) -> Outcome | tuple[Any, dict[str, Any]]:
        """The tool and its arguments, or the :class:`Outcome` that refuses the call (unknown tool, invalid
        arguments, approval denied: a journaled decision first, then the ``approve`` callback)."""
        checked = self.registry.check(action.action, action.action_input)
        if isinstance(checked, Rejection):
            variables = {"tool_names": self.tool_names} if checked.kind == "unknown_tool" else checked.variables
            return self._outcome(checked.kind, action, **variables)
        tool, args = checked
        if self.registry.requires_approval(tool.name) and not decide_approval(tool.name, args, self.config.approve):
            return self._outcome("approval_denied", action)
        return tool, with_idempotency_key(tool, args, self.registry.schemas[tool.name], key)

    def _outcome(self, kind: str, action: AgentAction, **variables: Any) -> Outcome:
        text = self.prompts.render(kind, action=action.action, action_input=action.action_input, **variables)
        return Outcome(text, kind)


# -------------------------------------------------------------------------------------------- functions
def task_of(input: Any) -> tuple[str, dict[str, Any]]:
    """The task text of a Runnable input, and the run options it carries (``session``, ``journal``)."""
    extra: dict[str, Any] = {}
    value = input
    if isinstance(input, Mapping):
        key = next((k for k in ("input", "task", "question", "messages") if k in input), None)
        if key is None:
            raise ConfigError(f"a dict input needs the key 'input' (or 'task', 'question', 'messages'); got keys "
                              f"{sorted(map(str, input))}")
        value = input[key]
        extra = {k: input[k] for k in ("session", "journal", "chat_history") if k in input}
    if isinstance(value, PromptValue):
        value = value.to_messages()
    if isinstance(value, BaseMessage):
        value = [value]
    if isinstance(value, list) and value and all(isinstance(m, BaseMessage) for m in value):
        last = max((i for i, m in enumerate(value) if m.type == "human"), default=len(value) - 1)
        if last and "chat_history" not in extra:  # the earlier messages are the conversation
            extra["chat_history"] = value[:last]
        value = message_text(value[last])
    if not isinstance(value, str):
        where = "" if value is input else f" (in the {type(input).__name__})"
        raise ConfigError(f"the task must be a string, a PromptValue, a list of messages or a dict with 'input'; "
                          f"got {type(value).__name__}{where}")
    if not value.strip():
        raise ConfigError("the task is empty: pass the text of the task")
    return value, extra


def _model_error(exc: Exception) -> ModelCallError:
    """The model's failure, with what to change when it comes from the setup (a rejected request...)."""
    hint = explain_model_error(exc)
    return ModelCallError(f"{type(exc).__name__}: {_safe_str(exc)}" + (f" ({hint})" if hint else ""))


def _named(config: RunnableConfig, call: ModelCall | None) -> RunnableConfig:
    """The config of one model call: named and tagged by its purpose, so a tracer shows what it was for."""
    purpose = call.purpose if call is not None else "decision"
    named = ensure_config(config)  # a copy with every key, as patch_config makes
    named["run_name"] = purpose
    named["tags"] = [*config.get("tags", []), f"react_agent:{purpose}"]
    named["metadata"] = {**config.get("metadata", {}), "react_agent_purpose": purpose}
    return named


STEP_EVENT = "react_agent.step"
"""The name of the custom callback event sent for each completed step (``astream_events``: ``on_custom_event``)."""


def _step_data(state: RunState, done: StepDone) -> dict[str, Any]:
    return {"index": len(state.steps), "step": done.step}


class _Failure:
    exc: BaseException


def _last(items: Iterator[AgentStep | AgentResult]) -> AgentResult:
    result = None
    for result in items:  # noqa: B007 - the last item is the result
        pass
    assert isinstance(result, AgentResult)
    return result


def _end_payload(result: AgentResult) -> dict[str, Any]:
    return {"output": result.output, "status": result.status, "steps": len(result.steps),
            "llm_calls": result.llm_calls, "usage": result.usage.model_dump()}


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "(unprintable)"


def _seconds(value: float | None) -> float | None:
    """Seconds for a message: two decimals are enough (a deadline-clipped timeout is not 0.19872 s)."""
    return None if value is None else round(value, 2)


def _error_text(exc: BaseException) -> str:
    text = _safe_str(exc).strip()
    return text or type(exc).__name__
