"""BaseAgent: one immutable agent, one loop and its seams.

Layers, each knowing only the one below::

    drivers        run / arun / invoke / stream / ... (``_surface``): the only place sync and async differ,
                   besides how ``approve`` is asked (``_execute.check``/``acheck``; a sync driver refuses an
                   ``async def`` approve when its run starts)
    journal layer  ``_driver.drive``: answers replayed effects from the run's journal, records new ones,
                   applies the deadline, the token budget and the error policy; lets only raw I/O through
    loop           ``BaseAgent.loop(state)``: decide -> act -> observe -> review; yields effects, does no I/O
    pure parts     parser, prompt rendering (``_render``), tool calls (``_execute``), answer schema

Error policy, in one place (``_driver`` and the drivers): the model's failures after retries
(:class:`ModelCallError`) end the run with status ``"error"``; the deadline ends it with ``"timeout"``;
tool failures are observations (``execute`` never raises); any other exception - a bug in this library or in
a user's override - propagates as :class:`RunError` carrying the steps so far, with secrets masked.

An agent never changes after ``__init__``: everything a run changes lives in its :class:`RunState`, so one
agent serves any number of concurrent ``run``/``arun`` calls.
"""

from __future__ import annotations

import json
import time
from abc import ABCMeta
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, Literal

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig

from react_agent._prompts import PromptSet
from react_agent._types import FINISH, AgentAction, AgentResult, AgentStep, CallContext, ToolInfo, Usage
from react_agent.core import _execute, _protocols
from react_agent.core._borrowed import borrowed, example_values
from react_agent.core._config import AgentConfig, build_config
from react_agent.core._profile import profile_options
from react_agent.core._render import check_examples, example_variables, history_entry, step_messages
from react_agent.core._repetition import MAX_FAILURES, MAX_REPEATS, failures, last_result, repeats
from react_agent.errors import ConfigError, OutputParseError
from react_agent.integrations import AgentRunnable, output_json_schema, structured_answer
from react_agent.models import (
    accepts_call_context,
    check_model_setup,
    model_call_kwargs,
    resolve_mode,
    structured_kwargs,
)
from react_agent.parsing import parse_response
from react_agent.runtime import (
    Loop,
    ModelCall,
    ModelReply,
    RunState,
    StepDone,
    StepDraft,
    ToolCall,
    ToolCalls,
    ainvoke_model,
    completed_step,
    default_model_call,
    invoke_model,
    message_text,
    message_usage,
    model_error,
    session_references,
)
from react_agent.tools import Outcome, ToolLike, ToolRegistry, answer_schema

__all__ = ["BaseAgent", "RunState", "message_text", "message_usage"]


class _Sealed(ABCMeta):
    """Seals an agent once the most derived ``__init__`` has returned: later attribute writes raise."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        agent = super().__call__(*args, **kwargs)
        agent.example_variables = [example_variables(e, agent.config.max_observation_chars, agent.prompts)
                                   for e in agent.examples]  # after the most derived __init__ chose them
        agent.__dict__["_sealed"] = True
        return agent


class BaseAgent(AgentRunnable, metaclass=_Sealed):
    """The shared loop of every text-protocol agent. Subclass it (or :class:`ReactAgent`) to customise.

    ``BaseAgent(llm, tools, **options)``: ``llm`` is any langchain-core chat model or LLM (bound and wrapped
    ones too); ``tools`` are ``BaseTool`` objects or typed, documented functions; the keyword options are
    validated into :attr:`config` (:class:`AgentConfig` lists them). The agent never changes afterwards:
    a run's data lives in its :class:`RunState`, so one agent serves many concurrent runs.
    """

    Config: ClassVar[type[AgentConfig]] = AgentConfig
    State: ClassVar[type[RunState]] = RunState
    config: AgentConfig
    example_variables: list[dict[str, str]]
    """The worked examples as the step prompt's ``examples`` variable (rendered once, when the agent is built)."""

    def __init__(self, llm: Any, tools: Sequence[ToolLike], **options: Any) -> None:
        if not isinstance(llm, Runnable):
            raise ConfigError(f"llm must be a langchain-core chat model or LLM (or a Runnable wrapping one), "
                              f"got {type(llm).__name__}")
        check_model_setup(llm)
        self.registry = ToolRegistry(tools)
        self.config = build_config(type(self).Config, profile_options(llm, list(self.registry.tools.values()), options))
        self.llm = llm
        self.prompts = PromptSet.load(self.config.prompts, lang=self.config.lang)
        self.name = self.config.name or type(self).__name__
        self.mode = resolve_mode(llm, self.config.constrained)
        output = self.config.output_schema
        self.answer_schema: dict[str, Any] = answer_schema(
            list(self.registry.tools.values()), finish_schema=None if output is None else output_json_schema(output))
        """The JSON schema of a decision: one branch per tool plus FINISH."""
        if self.mode == "grammar":  # a client that cannot carry a grammar is a ConfigError now, not at run()
            structured_kwargs(llm, self.answer_schema, self.mode)
        self.tools_text = self.prompts.render("tools", tool_specs=self.registry.specs)
        self.tool_names = ", ".join([*self.registry.names, FINISH])
        check_examples(self.config.examples, self.registry, self.prompts)
        self.examples = self.config.examples
        self.example_values = example_values(self.examples)
        self.call_facts = _execute.CallFacts.of(self.registry)
        self.tool_infos = tuple(ToolInfo(name=name, description=str(tool.description or ""),
                                         parameters=self.registry.schemas[name])
                                for name, tool in self.registry.tools.items())
        self.valid_call = partial(_execute.valid_call, self.registry)
        self.reads_call_context = accepts_call_context(llm)
        """Whether the model reads a decision's :class:`CallContext` (only then is one built per decision)."""
        self.native_llm = (None if self.config.protocol == "text" else _protocols.bind_native(
            llm, self.registry, None if output is None else output_json_schema(output)))
        """Under ``protocol="native"``: the model with the tools bound (``llm.bind_tools``), for decisions."""
        limit = self.config.max_parallel_calls
        self.call_limit: int | None = limit if limit is not None else (1 if self.native_llm is None else None)
        """The most tool calls one decision may hold (``None``: every call of a native reply)."""
        several = self.native_llm is None and self.call_limit is not None and self.call_limit > 1
        self.decision_schema: dict[str, Any] | None = (
            None if not self.mode or self.native_llm is not None else
            _protocols.parallel_answer_schema(self.answer_schema, self.call_limit or 1) if several
            else self.answer_schema)
        """The schema of a decision under constrained decoding (``None`` when off, and under the native protocol)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_sealed"):
            raise AttributeError(f"{type(self).__name__} is immutable after __init__ (so that concurrent runs "
                                 f"cannot interfere); set {name!r} in __init__ or keep per-run data in the RunState")
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:  # the options read as attributes too: agent.max_iterations, ...
        config = self.__dict__.get("config")
        if config is not None and name in type(config).model_fields:
            return getattr(config, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def tools(self) -> dict[str, Any]:
        return self.registry.tools

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The ``response_format`` of a decision call under constrained decoding (``None`` when off)."""
        kwargs = self.model_kwargs(ModelCall([], schema=self.answer_schema))
        found = kwargs.get("response_format") or kwargs.get("extra_body", {}).get("response_format")
        return dict(found) if found else None

    # ---------------------------------------------------------------- the loop
    def new_state(self, task: str, session: Mapping[str, Any]) -> RunState:
        """The state of a new run (override to add per-run data through a :class:`RunState` subclass)."""
        state = type(self).State(task, session=session, references=session_references(session))
        if self.config.max_execution_time is not None:
            state.deadline = state.started + self.config.max_execution_time
        return state

    def loop(self, state: RunState) -> Loop[None]:
        """decide -> act -> observe -> review, bounded by ``max_iterations``; yields effects, no I/O."""
        while state.iterations < self.config.max_iterations and not self.out_of_time(state):
            state.iterations += 1
            reply: ModelReply = yield self.decision_call(state)
            try:
                decision = self.decide(state, reply)
            except OutputParseError as exc:
                state.parse_failures += 1
                exhausted = state.parse_failures >= self.config.max_parse_errors
                yield from self.record(state, self._parse_failure(exc, reply), review=not exhausted)
                if exhausted:
                    state.end("error", state.last_observation, f"{state.parse_failures} unparseable replies in a row")
                    return
                continue
            state.parse_failures = 0
            if decision.finish is not None:
                yield from self.finish(state, decision.finish, reply)
                if state.done:
                    return
                continue  # the answer did not match output_schema: the model was told why
            if len(decision.calls) == 1 and decision.calls[0].refusal is None:
                action = decision.calls[0].action
                count, earlier = repeats(state.steps, action)
                if earlier is not None:  # a call that succeeded, again: its result is already there
                    yield from self.repeated(state, action, reply, earlier, count, call_id=decision.calls[0].call_id)
                    if state.done:
                        return
                    continue
                failed, first = failures(state.steps, action)
                if first is not None and failed >= MAX_FAILURES:  # a call that keeps failing: not run again
                    yield from self.failing(state, action, reply, first, failed, call_id=decision.calls[0].call_id)
                    if state.done:
                        return
                    continue
            yield from self.act(state, decision, reply)
        if not state.done:
            yield from self._limit(state)

    def act(self, state: RunState, decision: _protocols.Decision, reply: ModelReply) -> Loop[None]:
        """Run the decision's calls (several at once as :class:`ToolCalls`, each one's step published as it
        completes) and record a step per call, in call order; a refused call is recorded with its refusal. The
        review follows the last step (which a reviewing agent publishes after it, with its reflection)."""
        calls = decision.calls
        group = state.iterations if len(calls) > 1 or self.native_llm is not None else None
        if len(calls) == 1 and calls[0].refusal is None:
            yield from self._act_once(state, calls[0], reply, group)
            return
        first, last = len(state.steps) + 1, len(calls) - 1
        drafts = [StepDraft(AgentStep(thought=c.action.thought, action=c.action.action,
                                      action_input=c.action.action_input, raw_output=reply.text,
                                      duration_s=reply.seconds, usage=reply.usage if k == 0 else Usage(),
                                      call_id=c.call_id, decision=group), first + k,
                            publish=k < last or not self.reviews)
                  for k, c in enumerate(calls)]
        runnable = [k for k, c in enumerate(calls) if c.refusal is None]
        steps: dict[int, AgentStep] = {}
        started = time.monotonic()
        if len(runnable) == 1:
            outcome: Outcome = yield ToolCall(calls[runnable[0]].action)
            steps[runnable[0]] = completed_step(drafts[runnable[0]], outcome, time.monotonic() - started)
        elif runnable:
            done = yield ToolCalls(tuple(calls[k].action for k in runnable), tuple(drafts[k] for k in runnable))
            steps.update(zip(runnable, done, strict=True))
        for k, call in enumerate(calls):
            step = steps.get(k) or completed_step(drafts[k], call.refusal or Outcome(""), 0.0)
            yield from self.record(state, step, review=k == last)

    def _act_once(self, state: RunState, call: _protocols.Call, reply: ModelReply, group: int | None) -> Loop[None]:
        """:meth:`act` for a decision of one call: the step it would complete from its draft, made once the
        outcome is known (the same fields, with the arguments as they were before the call)."""
        action = call.action
        arguments = dict(action.action_input) if isinstance(action.action_input, dict) else action.action_input
        started = time.monotonic()
        outcome: Outcome = yield ToolCall(action)
        step = AgentStep(thought=action.thought, action=action.action, action_input=arguments, raw_output=reply.text,
                         duration_s=float(reply.seconds) + (time.monotonic() - started), usage=reply.usage,
                         call_id=call.call_id, decision=group, observation=outcome.observation,
                         is_error=outcome.is_error)
        yield from self.record(state, step, review=True)

    @property
    def reviews(self) -> bool:
        """Whether this agent's :meth:`review` may change a step after it is recorded (it overrides it)."""
        return type(self).review is not BaseAgent.review

    # ---------------------------------------------------------------- decide
    def decision_call(self, state: RunState) -> ModelCall:
        """The model call of the next decision: the step prompt, or under the native protocol the native
        messages with the tools bound."""
        if self.native_llm is not None:
            return ModelCall(self.build_native_messages(state), "decision", tool_calls=True)
        return ModelCall(self.build_messages(state), "decision", self._decision_schema,
                         context=self.call_context(state) if self.reads_call_context else None)

    def decide(self, state: RunState, reply: ModelReply) -> _protocols.Decision:
        """The model's decision in its reply; raises :class:`OutputParseError` when the text protocol cannot
        read one (the native protocol always can: a reply without calls is the answer)."""
        if self.native_llm is not None:
            return _protocols.native_decision(reply, state, limit=self.call_limit, prompts=self.prompts,
                                              structured=self.config.output_schema is not None,
                                              registry=self.registry)
        return _protocols.text_decision(reply.text, self.parse, self.registry.names, limit=self.call_limit or 1,
                                        allow_plain_answer=self.config.allow_plain_answer,
                                        validate=self.valid_call, prompts=self.prompts)

    def build_native_messages(self, state: RunState) -> list[BaseMessage]:
        """The messages of a native decision: the ``native`` system prompt, the task, and each decision so far
        as ``AIMessage(tool_calls)`` + ``ToolMessage`` s (reflections as human messages after them)."""
        final = _protocols.FINAL_TOOL if self.config.output_schema is not None else None
        system = self.prompts.render("native", task=state.task, max_parallel_calls=self.call_limit, final_tool=final)
        return _protocols.native_messages(self.prompts, state, system=system,
                                          limit=self.config.max_observation_chars, window=self.config.history_window,
                                          one_call=_protocols.one_call_models(self.llm))

    def build_messages(self, state: RunState) -> list[BaseMessage]:
        """The messages of the next decision: the ``step`` prompt, with the history inside it or, under
        ``history_layout="messages"``, rendered as on the first step and followed by the decisions as chat turns."""
        own = (self.registry.specs, self.example_variables)
        if self.config.history_layout == "messages":
            first = step_messages(self.prompts, state, self.prompt_variables(state, window=0), own)
            return first + _protocols.turn_messages(self.prompts, state.steps, limit=self.config.max_observation_chars,
                                                    window=self.config.history_window)
        return step_messages(self.prompts, state, self.prompt_variables(state), own)

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
        entries = [self._entry(state, i, s) for i, s in shown]
        steps = [entry for _, entry, _ in entries]
        texts = [text for _, _, text in entries if text is not None]
        history = (self.prompts.join_items("history", texts) if texts and len(texts) == len(entries)
                   else self.prompts.render("history", steps=steps))  # each entry is rendered once when it can be
        variables: dict[str, Any] = {"task": state.task, "tools": self.tools_text, "tool_names": self.tool_names,
                     "history": history, "steps": steps, "tool_specs": self.registry.specs,
                     "examples": self.example_variables}
        if self.call_limit is not None and self.call_limit > 1:
            variables["max_parallel_calls"] = self.call_limit
        return variables

    def _entry(self, state: RunState, index: int,
               step: AgentStep) -> tuple[AgentStep, dict[str, Any], str | None]:
        """The history entry of one step and the text the ``history`` template writes for it, made once per
        step object: a step is a frozen value, so code that changes one replaces it (``model_copy``) and the
        entry is made again; a change made in place inside its ``action_input`` dict is not seen."""
        cached = state.entries.get(index)
        if cached is None or cached[0] is not step:
            entry = history_entry(index, step, self.config.max_observation_chars, self.prompts)
            cached = state.entries[index] = (step, entry, self.prompts.render_item("history", entry))
        return cached

    @property
    def _decision_schema(self) -> dict[str, Any] | None:
        return self.decision_schema

    def model_kwargs(self, call: ModelCall | None) -> dict[str, Any]:
        """The extra keyword arguments of one model call: the structured-output request of its schema."""
        schema = None if call is None else call.schema
        name = "agent_action" if call is None or call.purpose == "decision" else f"agent_{call.purpose}"
        return model_call_kwargs(self.llm, schema, self.mode, name=name, context=None if call is None else call.context)

    def call_context(self, state: RunState) -> CallContext:
        """What a decision is about, for a model that reads it (``accepts_call_context``): the task, the
        observations so far and the tools."""
        observations = tuple(s.observation for s in state.steps if s.observation and s.action != FINISH)
        return CallContext(task=state.task, observations=observations, tools=self.tool_infos)

    def call_model(self, messages: list[BaseMessage], config: RunnableConfig, call: ModelCall | None = None) -> Any:
        """Invoke the model (with retries for transient errors); returns its message. The model's failures
        are raised as :class:`ModelCallError`; anything else an override raises is a bug."""
        kwargs = self.model_kwargs(call)
        llm = self._model_for(call)
        try:
            if self.config.retry is None:
                return invoke_model(llm, messages, config, kwargs, call)
            return self.config.retry.call(lambda: invoke_model(llm, messages, config, kwargs, call))
        except Exception as exc:
            raise model_error(exc) from exc

    @default_model_call
    async def acall_model(self, messages: list[BaseMessage], config: RunnableConfig,
                          call: ModelCall | None = None) -> Any:
        kwargs = self.model_kwargs(call)
        llm = self._model_for(call)
        try:
            if self.config.retry is None:
                return await ainvoke_model(llm, messages, config, kwargs, call)
            return await self.config.retry.acall(lambda: ainvoke_model(llm, messages, config, kwargs, call))
        except Exception as exc:
            raise model_error(exc) from exc

    def _model_for(self, call: ModelCall | None) -> Any:
        """The bound model for a native decision (the call's own tools bound when it names them), else the
        model."""
        if call is None or not call.tool_calls:
            return self.llm
        if call.tools is not None:
            return _protocols.bind_tool_schemas(self.llm, call.tools)
        return self.native_llm if self.native_llm is not None else self.llm

    def parse(self, text: str) -> AgentAction:
        """Turn the model's text into an action; raise :class:`OutputParseError` when it cannot. A reply cut
        off after a complete value is completed only when the completed call validates for its tool."""
        return parse_response(text, self.call_facts.names, allow_plain_answer=self.config.allow_plain_answer,
                              validate=self.valid_call)

    def _parse_failure(self, exc: OutputParseError, reply: ModelReply) -> AgentStep:
        feedback = self.prompts.render("parse_error", error=exc.message, reason=exc.reason, text=exc.text,
                                       tool_names=self.tool_names, key=exc.key, limit=exc.limit)
        return AgentStep(observation=feedback, is_error=True, raw_output=reply.text, duration_s=reply.seconds,
                         usage=reply.usage)

    # ---------------------------------------------------------------- act
    def execute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                timeout: float | None = None, idempotency_key: str | None = None) -> Outcome:
        """Validate, approve and run a tool call; every failure is an :class:`Outcome`, never raised."""
        return _execute.execute(self, action, config, timeout, idempotency_key)

    async def aexecute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                       timeout: float | None = None, idempotency_key: str | None = None) -> Outcome:
        return await _execute.aexecute(self, action, config, timeout, idempotency_key)

    # ---------------------------------------------------------------- observe and review
    def record(self, state: RunState, step: AgentStep, *, review: bool = False) -> Loop[None]:
        """Append a step; with ``review``, let :meth:`review` run first; then publish the step."""
        state.steps.append(step)
        if review:
            reflection = yield from self.review(state)
            if reflection is not None:
                state.steps[-1] = step.model_copy(update={"reflection": reflection})
        yield StepDone(state.steps[-1])

    def review(self, state: RunState) -> Loop[str | None]:
        """After a step: a generator that may yield model calls and returns a reflection text (kept on the
        step, shown to the next decision) or ``None``. The base agent never reflects."""
        return None
        yield  # a generator

    # ---------------------------------------------------------------- end
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
        results = [s.observation for s in state.steps if s.action and s.action != FINISH]  # tools' results only
        copied = borrowed(answer, self.example_values, "\n".join([state.task, *results]))
        if copied:  # facts only the worked examples have: not this task's answer
            feedback = self.prompts.render("example_facts", values=copied)
            last = state.steps[-1] if state.steps else None
            again = last is not None and last.action is None and last.is_error and last.observation == feedback
            yield from self.record(state, AgentStep(thought=action.thought, observation=feedback, is_error=True,
                                                    raw_output=reply.text, duration_s=reply.seconds,
                                                    usage=reply.usage), review=not again)
            if again:  # told once, and the same facts again: the run ends with what the tools gave
                state.end("repeated", last_result(state.steps), "the answer wrote values of the worked examples "
                          f"({', '.join(copied)}) again after it was told they are not this task's facts")
            return
        yield from self.record(state, AgentStep(thought=action.thought, action=FINISH, action_input=answer,
                                                raw_output=reply.text, duration_s=reply.seconds, usage=reply.usage))
        state.end("finished", answer)

    def repeated(self, state: RunState, action: AgentAction, reply: ModelReply, earlier: AgentStep,
                 count: int, *, call_id: str | None = None) -> Loop[None]:
        """The decided call repeats the last one (``count`` times already, :func:`_repetition.repeats`): the tool is
        not run again; the model is told the result is already there (``repeated_call``), and at the second repeat
        the run ends with status ``"repeated"`` and that result."""
        observation = self.prompts.render("repeated_call", action=action.action, action_input=action.action_input,
                                          observation=earlier.observation)
        yield from self.record(state, AgentStep(
            thought=action.thought, action=action.action, action_input=action.action_input, observation=observation,
            raw_output=reply.text, duration_s=reply.seconds, usage=reply.usage, call_id=call_id,
            decision=state.iterations if self.native_llm is not None else None), review=count < MAX_REPEATS)
        if count >= MAX_REPEATS:
            state.end("repeated", earlier.observation)

    def failing(self, state: RunState, action: AgentAction, reply: ModelReply, first: AgentStep,
                failed: int, *, call_id: str | None = None) -> Loop[None]:
        """The decided call failed ``failed`` times since the last success (:func:`_repetition.failures`): the
        tool is not run again; the model is told so with the error (``repeated_error``), and at the next repeat
        the run ends with status ``"repeated"`` and that error."""
        observation = self.prompts.render("repeated_error", action=action.action, action_input=action.action_input,
                                          observation=first.observation, failures=failed)
        yield from self.record(state, AgentStep(
            thought=action.thought, action=action.action, action_input=action.action_input, observation=observation,
            is_error=True, raw_output=reply.text, duration_s=reply.seconds, usage=reply.usage, call_id=call_id,
            decision=state.iterations if self.native_llm is not None else None), review=failed <= MAX_FAILURES)
        if failed > MAX_FAILURES:
            state.end("repeated", first.observation, f"{action.action} failed {failed} times with these arguments "
                      "and was decided again")

    def out_of_time(self, state: RunState) -> bool:
        """Whether the run's deadline has passed (then the run is ended with status ``"timeout"``)."""
        left = state.time_left()
        if left is None or left > 0:
            return False
        self.end_timeout(state)
        return True

    def end_timeout(self, state: RunState) -> None:
        """End the run with status ``"timeout"`` (its deadline passed)."""
        state.end("timeout", self.prompts.render("timeout", last_observation=state.last_observation,
                                                 steps=state.steps, seconds=self.config.max_execution_time))

    def _limit(self, state: RunState) -> Loop[None]:
        output = self.prompts.render("max_iterations", last_observation=state.last_observation, steps=state.steps)
        if self.config.final_answer == "always":
            final: ModelReply = yield ModelCall(self.build_final_messages(state), "final_answer")
            output = final.text.strip()
        state.end("max_iterations", output)

    def build_result(self, state: RunState) -> AgentResult:
        """The run's :class:`AgentResult` (a subclass may return a richer one)."""
        return state.result()

