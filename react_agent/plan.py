"""PlanAndExecuteAgent: the model writes the whole plan before any tool runs; code walks the stored plan.

Control-flow integrity (docs/security.md): tool results reach the model only when it fills the ``open``
fields of a step, and from that reply the code copies only those fields. A reply that names another
tool, adds a step or touches a fixed argument is recorded in ``result.violations`` and never executed.
``$session.<key>`` in a fixed argument is replaced by code at execution; the model never sees the value
(session values are also redacted from the results shown to it). Filled values are never substituted.

Choices: tool errors are observations and the plan goes on (``replan=True`` writes a new plan instead,
giving up the integrity above: results then reach the planner). The final answer is the last step's
result, because that keeps a run to two model calls (plan + open field) and gives results no say in the
answer; ``final_answer="always"`` adds one composing call that reads the results (text only, no action).
The plan is exposed as :attr:`PlanResult.plan` (a subclass, so :class:`AgentResult` stays unchanged).
Rejected plan or fill replies are recorded as steps with ``action=None`` (like parse failures).

Steps that the plan marks independent (``depends_on`` lists the earlier steps a step needs; a step without it
needs every earlier one) run together, up to ``max_parallel_calls`` at once (``None``: one at a time under the
text protocol, no limit under the native one); their open fields are filled first, one call each, from the
results before them, and their results are kept in plan order. Under ``protocol="native"`` the plan is still
written as text (the plan is data, not a call), and each fill is a native tool call of the step's tool, bound
with only its open fields as parameters.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator

from react_agent._types import FINISH, AgentAction, AgentResult, AgentStep
from react_agent.core import AgentConfig, BaseAgent, truncate
from react_agent.errors import ConfigError
from react_agent.parsing import MAX_NESTING, extract_json, nesting_depth, outside_fences
from react_agent.runtime import (
    Effect,
    Loop,
    ModelCall,
    ModelReply,
    RunState,
    StepDraft,
    ToolCall,
    ToolCalls,
    completed_step,
    read_native_reply,
    redact_session,
)
from react_agent.tools import Outcome, ToolLike, answer_schema

__all__ = ["Plan", "PlanAndExecuteAgent", "PlanConfig", "PlanResult", "PlanState", "PlanStep", "extract_json",
           "plan_batch_end"]

logger = logging.getLogger("react_agent")

_SESSION = re.compile(r"\$session\.([A-Za-z_][A-Za-z0-9_]*)")
_NAME_KEYS, _ARGS_KEYS = ("tool", "action"), ("args", "action_input", "arguments")
_MIN_SECRET = 4  # session values shorter than this are not redacted (too likely to occur by chance)
_Sub = Generator[Effect, Any, Any]


class _Frozen(BaseModel):
    """Immutable, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class PlanStep(_Frozen):
    """One stored step: call ``tool`` with the fixed ``args``; only the ``open`` fields are filled later."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    open: tuple[str, ...] = ()
    depends_on: tuple[int, ...] | None = None
    """The (1-based) numbers of the earlier steps whose results this step needs; ``None``: every earlier step
    (a plan written without ``depends_on`` runs in order)."""


class Plan(_Frozen):
    """The list of actions fixed before any tool ran. Nothing outside it is ever executed."""

    steps: tuple[PlanStep, ...]


class PlanResult(AgentResult):
    """An :class:`AgentResult` plus the plans: ``plans[0]`` is the original, later ones come from replans."""

    plans: list[Plan] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)
    """Attempts to leave the plan (another tool, an added step, a changed fixed argument): never executed."""

    @property
    def plan(self) -> Plan | None:
        """The plan stored before any tool ran (``None`` when none was accepted)."""
        return self.plans[0] if self.plans else None


@dataclass(eq=False)
class PlanState(RunState):
    """A run of :class:`PlanAndExecuteAgent`: the accepted plans, the results as the model sees them, and
    the violations."""

    plans: list[Plan] = field(default_factory=list)
    shown: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)


def _stand_in(prop: Mapping[str, Any]) -> Any:
    """A value of the property's JSON type, standing in for a value known only at run time."""
    if prop.get("enum"):
        return prop["enum"][0]
    if "const" in prop:
        return prop["const"]
    for branch in prop.get("anyOf", []):
        if branch.get("type") != "null":
            return _stand_in(branch)
    kinds = {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}
    return kinds.get(str(prop.get("type")), "x")


class PlanConfig(AgentConfig):
    """The options of :class:`PlanAndExecuteAgent`: those of :class:`AgentConfig` plus the plan ones."""

    session: Mapping[str, Any] = Field(default_factory=dict, description="a mapping of key to value")
    max_plan_attempts: Annotated[StrictInt, Field(ge=1)] = Field(2, description="an integer >= 1")
    max_fill_attempts: Annotated[StrictInt, Field(ge=1)] = Field(2, description="an integer >= 1")
    replan: StrictBool = Field(False, description="True or False")
    max_replans: Annotated[StrictInt, Field(ge=0)] = Field(1, description="an integer >= 0")
    max_plan_steps: Annotated[StrictInt, Field(ge=1)] = Field(10, description="an integer >= 1")

    @field_validator("session", mode="before")
    @classmethod
    def _session(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError(f"got a {type(value).__name__}")
        return MappingProxyType(dict(value))


class PlanAndExecuteAgent(BaseAgent):
    """Plan first (one model call), then execute the stored plan; the model only fills ``open`` fields.

    - ``session``: values the plan refers to as ``"$session.<key>"``; substituted by code, never shown to
      the model. A run's own ``session=`` values are added to these (and win). A plan that uses a missing
      key ends the run with status ``"error"`` before any tool runs.
    - ``max_plan_attempts``: plan replies tried (a rejected plan is asked again with the reason).
    - ``max_fill_attempts``: replies tried per step with open fields (missing or invalid fields).
    - ``replan`` / ``max_replans``: after a failed step, write a new plan for the rest (off by default).
    - ``max_plan_steps``: longest plan accepted. Other options are those of :class:`BaseAgent`
      (``final_answer="always"`` composes the answer with one extra call; otherwise it is the last result).
    """

    Config = PlanConfig
    State = PlanState
    config: PlanConfig

    def __init__(self, llm: Any, tools: Sequence[ToolLike], **options: Any) -> None:
        super().__init__(llm, tools, **options)
        if self.config.output_schema is not None:
            raise ConfigError("output_schema is not supported by PlanAndExecuteAgent: its answer is the last step's "
                              "result (or a composed text); use ReactAgent or ReflectionAgent for structured answers")
        self.parallel_steps = self.call_limit is None or self.call_limit > 1
        """Whether independent steps may run together (the plan prompt then asks for ``depends_on``)."""
        self.plan_tools_text = self.prompts.render("tools", tool_specs=self.registry.specs, with_finish=False)
        full = answer_schema(list(self.registry.tools.values()))
        self.arg_schemas: Mapping[str, dict[str, Any]] = MappingProxyType({
            b["properties"]["action"]["const"]: b["properties"]["action_input"] for b in full["anyOf"][:-1]})
        self.schema_defs: Mapping[str, Any] = MappingProxyType(full.get("$defs", {}))

    @property
    def session(self) -> Mapping[str, Any]:
        """The agent's session values (a run's ``session=`` values are added to them)."""
        return self.config.session

    def run(self, task: Any, **options: Any) -> PlanResult:
        """Plan, execute, answer; returns a :class:`PlanResult` (never raises for model or tool mistakes).
        The run options are those of :meth:`BaseAgent.run`."""
        result = super().run(task, **options)
        assert isinstance(result, PlanResult)
        return result

    async def arun(self, task: Any, **options: Any) -> PlanResult:
        """Async :meth:`run`."""
        result = await super().arun(task, **options)
        assert isinstance(result, PlanResult)
        return result

    def new_state(self, task: str, session: Mapping[str, Any]) -> RunState:
        """The run's state with the merged session and the references that stand in for its values."""
        return super().new_state(task, {**self.config.session, **session})

    # ------------------------------------------------------------- plan
    def parse_plan(self, text: str, *, allow_empty: bool = False) -> Plan:
        """Extract and validate a plan from the model's reply; ``ValueError`` says what is wrong."""
        raw = next((p for p in map(_plan_items, extract_json(text)) if p is not None), None)
        if raw is None:
            raise ValueError('no plan found: reply with a JSON list [{"tool": ..., "args": {...}, "open": [...]}]')
        steps = []
        for n, item in enumerate(raw, 1):
            if nesting_depth(item, MAX_NESTING + 1) > MAX_NESTING + 1:  # the step object is one level above its args
                raise ValueError(f"step {n}: its arguments are nested more than {MAX_NESTING} levels deep (too_deep), "
                                 "so the plan was refused; write the plan again with flatter arguments")
            tool = next((item[k] for k in _NAME_KEYS if k in item), None) if isinstance(item, dict) else None
            if isinstance(tool, str) and tool.strip().upper() == FINISH and n == len(raw):
                break  # a trailing FINISH step: the answer is the last result anyway
            steps.append(self._plan_step(n, tool, item))
        if len(steps) > self.config.max_plan_steps:
            raise ValueError(f"the plan has {len(steps)} steps; at most {self.config.max_plan_steps} are allowed")
        if not steps and not allow_empty:
            raise ValueError("the plan has no steps")
        return Plan(steps=tuple(steps))

    def _plan_step(self, n: int, tool: Any, item: Any) -> PlanStep:
        """Validate one raw step against the tools: name, open fields, fixed arguments."""
        if not isinstance(tool, str) or tool not in self.registry.tools:
            raise ValueError(f"step {n}: unknown tool {tool!r}; tools: {', '.join(self.registry.names)}")
        args = next((item[k] for k in _ARGS_KEYS if k in item), None) or {}
        opened = item.get("open") or []
        opened = [opened] if isinstance(opened, str) else opened
        if not isinstance(args, dict) or not isinstance(opened, list) or not all(isinstance(f, str) for f in opened):
            raise ValueError(f'step {n} ({tool}): "args" must be an object and "open" a list of argument names')
        props = self.arg_schemas[tool].get("properties", {})
        for name in opened:
            if name not in props:
                raise ValueError(f"step {n} ({tool}): open field {name!r} is not an argument of {tool}; "
                                 f"its arguments: {self.registry.arguments_text(tool)}")
            if name in args:
                raise ValueError(f"step {n} ({tool}): {name!r} is both a fixed argument and an open field")
        step = PlanStep(tool=tool, args=args, open=tuple(dict.fromkeys(opened)),
                        depends_on=_depends_on(n, tool, item.get("depends_on")))
        try:
            self.registry.validate(tool, self._stand_ins(step, {}))
        except ValueError as exc:
            raise ValueError(f"step {n} ({tool}): {exc}") from None
        return step

    def _stand_ins(self, step: PlanStep, values: Mapping[str, Any]) -> dict[str, Any]:
        """The step's arguments for validation: session references and unfilled open fields stood in."""
        props = self.arg_schemas[step.tool].get("properties", {})
        args = {k: _stand_in(props.get(k, {})) if isinstance(v, str) and _SESSION.fullmatch(v) else v
                for k, v in step.args.items()}
        return {**args, **{f: values.get(f, _stand_in(props[f])) for f in step.open}}

    def _write_plan(self, state: PlanState) -> _Sub:
        """Ask for a plan until one is valid (bounded); returns it, or ``None`` when the run is over."""
        error, replanning = "", bool(state.plans)
        for _ in range(self.config.max_plan_attempts):
            if self.out_of_time(state):
                return None
            messages = self.prompts.messages("plan", **self._variables(state, replanning), error=error,
                                             parallel=self.parallel_steps)
            reply: ModelReply = yield ModelCall(messages, "plan", self._plan_schema())
            try:
                plan = self.parse_plan(reply.text, allow_empty=replanning)
            except ValueError as exc:
                error = str(exc)
                yield from self.record(state, AgentStep(observation=error, is_error=True, raw_output=reply.text,
                                                        duration_s=reply.seconds, usage=reply.usage))
                continue
            keys = sorted({m for s in plan.steps for m in _SESSION.findall(json.dumps(s.args))})
            missing = [k for k in keys if k not in state.session]
            if missing:
                state.end("error", "", f"the plan uses $session.{missing[0]}, but the session has no key "
                                       f"{missing[0]!r} (session keys: {', '.join(state.session) or 'none'})")
                return None
            state.plans.append(plan)
            logger.info("%s: plan %d accepted: %s", self.name, len(state.plans), [s.tool for s in plan.steps])
            return plan
        state.end("error", state.last_observation,
                  f"no valid plan after {self.config.max_plan_attempts} attempts: {error}")
        return None

    # ------------------------------------------------------------- execute
    def loop(self, state: RunState) -> Loop[None]:
        """Write the plan, then walk it a batch of independent steps at a time: fill open fields, execute,
        (re)plan on failure if asked, answer."""
        assert isinstance(state, PlanState), "PlanAndExecuteAgent runs need a PlanState (see new_state)"
        plan = yield from self._write_plan(state)
        steps, at, replans = (plan.steps if plan else ()), 0, 0
        while at < len(steps) and not state.done:
            batch = steps[at:plan_batch_end(steps, at, self.call_limit)]
            at += len(batch)
            filled = []
            for k, step in enumerate(batch):
                fill = yield from self._fill(state, step, len(state.shown) + 1 + k)
                if fill is None or self.out_of_time(state):
                    return
                filled.append(fill)
            failed = yield from self._execute(state, batch, filled)
            if failed and self.config.replan and replans < self.config.max_replans:
                replans += 1
                logger.info("%s: a step failed, replanning (%d)", self.name, replans)
                plan = yield from self._write_plan(state)
                steps, at = (plan.steps if plan else ()), 0
        if not state.done:
            yield from self._answer(state)

    def _execute(self, state: PlanState, batch: Sequence[PlanStep],
                 filled: Sequence[tuple[dict[str, Any], ModelReply | None]]) -> _Sub:
        """Run a batch of steps (several at once, each published as it completes) and record them in plan
        order; returns whether one failed."""
        first, drafts, actions = len(state.steps) + 1, [], []
        for k, (step, (values, reply)) in enumerate(zip(batch, filled, strict=True)):
            action = AgentAction(action=step.tool, action_input={**_resolve(step.args, state.session), **values})
            actions.append(action)
            drafts.append(StepDraft(AgentStep(
                action=step.tool, action_input=action.action_input, raw_output=reply.text if reply else "",
                usage=reply.usage if reply else AgentStep().usage, duration_s=reply.seconds if reply else 0.0),
                first + k))
        if len(batch) == 1:
            started = time.monotonic()
            outcome: Outcome = yield ToolCall(actions[0])
            done = [completed_step(drafts[0], outcome, time.monotonic() - started)]
        else:
            done = yield ToolCalls(tuple(actions), tuple(drafts))
        for step, (values, _), result in zip(batch, filled, done, strict=True):
            yield from self.record(state, result)
            shown = truncate(redact_session(result.observation, state.references),
                             self.config.max_observation_chars, self.prompts)
            state.shown.append({"index": len(state.shown) + 1, "thought": "", "action": step.tool,
                                "action_input": truncate(json.dumps({**step.args, **values}, ensure_ascii=False),
                                                         self.config.max_observation_chars, self.prompts),
                                "observation": shown, "is_error": result.is_error, "reflection": None})
        return any(result.is_error for result in done)

    def _fill(self, state: PlanState, step: PlanStep, n: int) -> _Sub:
        """Ask the model for the open fields of step ``n``; copy only those. ``None`` when the run is over.
        Under the native protocol the model calls the step's tool, bound with the open fields alone."""
        if not step.open:
            return {}, None
        error, native = "", self.native_llm is not None
        schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": list(step.open),
                                  "properties": {f: self.arg_schemas[step.tool]["properties"][f] for f in step.open}}
        if self.schema_defs:
            schema["$defs"] = dict(self.schema_defs)
        tool = {"type": "function", "function": {"name": step.tool, "parameters": schema,
                                                 "description": self.registry.tools[step.tool].description or ""}}
        for _ in range(self.config.max_fill_attempts):
            if self.out_of_time(state):
                return None
            messages = self.prompts.messages(
                "fill_open", **self._variables(state, True), tool=step.tool, open_fields=list(step.open),
                args=json.dumps(step.args, ensure_ascii=False), results=self._results(state), error=error,
                native=native)
            call = (ModelCall(messages, "fill", tool_calls=True, tools=(tool,)) if native
                    else ModelCall(messages, "fill", schema))
            reply: ModelReply = yield call
            values, error = (self._read_native_fill(state, step, n, reply.text) if native
                             else self._read_fill(state, step, n, reply.text))
            if not error:
                return values, reply
            yield from self.record(state, AgentStep(observation=error, is_error=True, raw_output=reply.text,
                                                    duration_s=reply.seconds, usage=reply.usage))
        state.end("error", state.last_observation,
                  f"step {n} ({step.tool}): open fields not filled after {self.config.max_fill_attempts} attempts: "
                  f"{error}")
        return None

    def _read_fill(self, state: PlanState, step: PlanStep, n: int, text: str) -> tuple[dict[str, Any], str]:
        """The open-field values in a fill reply and the error to show; records every violation."""
        try:
            found = extract_json(text)
        except ValueError as exc:
            return {}, str(exc)
        objects = [o for v in found for o in (v if isinstance(v, list) else [v])]
        if "```" in text:  # extract_json reads only the fences: the objects around them are extra too
            with suppress(ValueError):
                objects += [o for v in extract_json(outside_fences(text)) for o in (v if isinstance(v, list) else [v])]
        if not objects or not isinstance(objects[0], dict):
            return {}, f"no JSON object with the fields {', '.join(step.open)} was found"
        reply, where = dict(objects[0]), f"step {n} ({step.tool})"
        for extra in objects[1:]:
            self._violation(state, f"{where}: the reply adds a step {_short(extra)}; ignored")
        name = next((reply.pop(k) for k in _NAME_KEYS if k in reply and k not in step.open), None)
        inner = next((reply.pop(k) for k in _ARGS_KEYS if k in reply and k not in step.open), None)
        if name is not None and name != step.tool:
            self._violation(state, f"{where}: the reply names another tool {name!r} with {_short(inner)}; ignored")
        elif isinstance(inner, dict):
            reply = {**inner, **reply}  # {"tool": <this step's tool>, "args": {...}}: the same call, unwrapped
        reply.pop("thought", None)
        return self._take_fields(state, step, where, reply)

    def _read_native_fill(self, state: PlanState, step: PlanStep, n: int, text: str) -> tuple[dict[str, Any], str]:
        """The open-field values in a native fill reply (a call of the step's tool); a reply without a call is
        read as a text fill. Records every violation."""
        native = read_native_reply(text)
        if not native.calls:
            return self._read_fill(state, step, n, native.content)
        where = f"step {n} ({step.tool})"
        first, *extra = native.calls
        for call in extra:
            added = _short({"tool": call.name, "args": call.arguments})
            self._violation(state, f"{where}: the reply adds a step {added}; ignored")
        if first.name != step.tool:
            self._violation(state, f"{where}: the reply names another tool {first.name!r} with "
                                   f"{_short(first.arguments)}; ignored")
            return {}, f"the reply lacks the open field(s): {', '.join(step.open)}"
        if first.error is not None or not isinstance(first.arguments, dict):
            return {}, f"the arguments of {step.tool} are not a JSON object: {first.error or 'not an object'}"
        return self._take_fields(state, step, where, dict(first.arguments))

    def _take_fields(self, state: PlanState, step: PlanStep, where: str,
                     reply: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The open fields of ``reply``; every other key is a violation, ignored."""
        values = {k: v for k, v in reply.items() if k in step.open}
        for key in sorted(set(reply) - set(step.open)):
            change = "changes the fixed argument" if key in step.args else "adds the argument"
            self._violation(state, f"{where}: the reply {change} {key!r} = {_short(reply[key])}; ignored")
        missing = [f for f in step.open if f not in values]
        if missing:
            return {}, f"the reply lacks the open field(s): {', '.join(missing)}"
        if nesting_depth(values, MAX_NESTING) > MAX_NESTING:
            return {}, (f"the open fields are nested more than {MAX_NESTING} levels deep (too_deep), so nothing was "
                        "executed; reply again with flatter values")
        try:
            self.registry.validate(step.tool, self._stand_ins(step, values))
        except ValueError as exc:
            return {}, str(exc)
        return values, ""

    def _violation(self, state: PlanState, text: str) -> None:
        """Record an attempt to leave the plan (it is never executed)."""
        logger.warning("%s: plan violation: %s", self.name, text)
        state.violations.append(text)

    def _answer(self, state: PlanState) -> Loop[None]:
        """Finish with the last result, or with one composing call when ``final_answer="always"``."""
        output = next((s.observation for s in reversed(state.steps) if s.action is not None), "")
        if self.config.final_answer == "always":
            reply: ModelReply = yield ModelCall(self.prompts.messages("final_answer", **self._variables(state, True)),
                                                "final_answer")
            output = reply.text.strip()
        state.end("finished", output)

    # ------------------------------------------------------------- helpers
    def _variables(self, state: PlanState, with_results: bool) -> dict[str, Any]:
        """Template variables; ``history`` shows the results (redacted) when ``with_results`` is true."""
        return {"task": state.task, "tools": self.plan_tools_text, "tool_names": self.tool_names,
                "tool_specs": self.registry.specs, "steps": list(state.shown),
                "history": self._results(state) if with_results else ""}

    def _results(self, state: PlanState) -> str:
        """The results so far, as the model is shown them (session values redacted)."""
        return self.prompts.render("history", steps=state.shown)

    def _plan_schema(self) -> dict[str, Any]:
        """The JSON schema of ``{"plan": [steps]}``: one branch per tool, open fields among its arguments."""
        branches: list[dict[str, Any]] = []
        for name, args in self.arg_schemas.items():
            props = list(args.get("properties", {}))
            branches.append({"type": "object", "additionalProperties": False, "required": ["tool", "args", "open"],
                             "properties": {"tool": {"const": name}, "args": {**args, "required": []},
                                            "open": {"type": "array", "items": {"enum": props}} if props
                                            else {"type": "array", "maxItems": 0}}})
        if self.parallel_steps:
            for branch in branches:
                branch["required"].append("depends_on")
                branch["properties"]["depends_on"] = {"type": "array", "items": {"type": "integer", "minimum": 1}}
        schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": ["plan"],
                                  "properties": {"plan": {"type": "array", "minItems": 1,
                                                          "maxItems": self.config.max_plan_steps,
                                                          "items": {"anyOf": branches}}}}
        return {**schema, "$defs": dict(self.schema_defs)} if self.schema_defs else schema

    def build_result(self, state: RunState) -> PlanResult:
        """The run's :class:`AgentResult` as a :class:`PlanResult`, with the plans and violations."""
        assert isinstance(state, PlanState)
        return PlanResult(**dict(super().build_result(state)), plans=list(state.plans),
                          violations=list(state.violations))


def plan_batch_end(steps: Sequence[PlanStep], start: int, limit: int | None) -> int:
    """The end of the batch of steps that starts at ``start``: the steps after it join while none needs a
    step of the batch, up to ``limit`` steps (``None``: no limit)."""
    end = start + 1
    while end < len(steps) and (limit is None or end - start < limit):
        needs = steps[end].depends_on
        if needs is None or any(start < d <= end for d in needs):  # 1-based: step d is steps[d - 1]
            break
        end += 1
    return end


def _depends_on(n: int, tool: str, value: Any) -> tuple[int, ...] | None:
    """The ``depends_on`` of step ``n``: numbers of earlier steps; ``ValueError`` says what is wrong."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d < n
                                              for d in value):
        earlier = f"1 to {n - 1}" if n > 1 else "none: it is the first step"
        raise ValueError(f'step {n} ({tool}): "depends_on" must be a list of the numbers of earlier steps '
                         f"({earlier}); got {_short(value)}")
    return tuple(sorted(set(value)))


def _resolve(value: Any, session: Mapping[str, Any]) -> Any:
    """Replace ``$session.<key>`` references (a whole string keeps the value's type)."""
    if isinstance(value, str):
        whole = _SESSION.fullmatch(value)
        if whole:
            return session[whole.group(1)]
        return _SESSION.sub(lambda m: str(session[m.group(1)]), value)
    if isinstance(value, list):
        return [_resolve(v, session) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, session) for k, v in value.items()}
    return value


def _plan_items(value: Any) -> list[Any] | None:
    """The step list of a decoded value: a list of objects, ``{"plan": [...]}``, or one bare step object."""
    if isinstance(value, dict):
        if any(k in value for k in _NAME_KEYS):
            return [value]
        value = value.get("plan", value.get("steps"))
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return value
    return None


def _short(value: Any, limit: int = 200) -> str:
    """A value as short JSON, for violation messages."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
