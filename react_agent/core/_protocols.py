"""Where a decision comes from: the text protocol (the step prompt, the reply parsed) or the native one (the
model's tools bound, its ``tool_calls`` read). Both give a :class:`Decision`; everything after it - checks,
approvals, running, the journal, review, budgets - is the loop's shared code.

The native protocol's prompt is the ``native`` system prompt, the task, and the run's steps as
``AIMessage(tool_calls)`` + ``ToolMessage`` pairs (one call per ``AIMessage`` for a model that takes one,
GigaChat), with the reply's ``functions_state_id`` sent back. The text protocol's ``history_layout="messages"``
lays the run's decisions out the same way in text: the decision's JSON as an ``AIMessage``, its results (the
``observation`` template) as a ``HumanMessage``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from react_agent._prompts import PromptSet
from react_agent._types import FINISH, AgentAction, AgentStep
from react_agent.core._render import decision_fields, history_entry, truncate
from react_agent.errors import ConfigError
from react_agent.parsing import parse_actions
from react_agent.runtime import ModelReply, NativeReply, RunState, read_native_reply
from react_agent.tools import Outcome, ToolRegistry

__all__ = ["FINAL_TOOL", "Call", "Decision", "bind_native", "native_decision", "native_messages", "one_call_models",
           "text_decision", "turn_messages"]

FINAL_TOOL = "final_answer"
"""Under the native protocol with ``output_schema``: the tool whose arguments are the final answer."""


@dataclass(frozen=True)
class Call:
    """One tool call of a decision; ``refusal`` is the outcome recorded instead of running it."""

    action: AgentAction
    call_id: str | None = None
    refusal: Outcome | None = None


@dataclass(frozen=True)
class Decision:
    """What the model decided: the run's answer (``finish``), or tool calls in order."""

    calls: tuple[Call, ...] = ()
    finish: AgentAction | None = None


def capped(calls: Sequence[Call], limit: int | None, prompts: PromptSet) -> tuple[Call, ...]:
    """``calls`` with those beyond ``limit`` and a FINISH among calls refused (each one an observation)."""
    result, taken = [], 0
    for call in calls:
        action = call.action
        if call.refusal is None and action.is_finish:
            text = prompts.render("not_run", action=action.action, reason="finish")
            call = Call(action, call.call_id, Outcome(text, "not_run"))
        elif call.refusal is None and limit is not None and taken >= limit:
            text = prompts.render("not_run", action=action.action, action_input=action.action_input, reason="limit",
                                  limit=limit)
            call = Call(action, call.call_id, Outcome(text, "not_run"))
        elif call.refusal is None:
            taken += 1
        result.append(call)
    return tuple(result)


def text_decision(text: str, parse: Callable[[str], AgentAction], names: Sequence[str], *, limit: int,
                  allow_plain_answer: bool, validate: Callable[[str, dict[str, Any]], bool],
                  prompts: PromptSet) -> Decision:
    """The text protocol: one action (``parse``, the agent's seam) or, when ``limit`` allows several, a list."""
    actions = [parse(text)] if limit <= 1 else parse_actions(text, names, allow_plain_answer=allow_plain_answer,
                                                              validate=validate)
    if len(actions) == 1 and actions[0].is_finish:
        return Decision(finish=actions[0])
    return Decision(capped([Call(a) for a in actions], limit, prompts))


def native_decision(reply: ModelReply, state: RunState, *, limit: int | None, structured: bool,
                    prompts: PromptSet, registry: ToolRegistry) -> Decision:
    """The native protocol: the reply's tool calls, or FINISH with its text when it calls none (with
    ``structured``, a call of :data:`FINAL_TOOL` is FINISH with its arguments as the answer's JSON)."""
    native = read_native_reply(reply.text)
    if not native.calls:
        return Decision(finish=AgentAction(action=FINISH, action_input=native.content))
    thought = native.content.strip()
    calls = []
    for k, call in enumerate(native.calls, 1):
        call_id = call.id or f"call_{state.iterations}_{k}"
        if structured and call.name == FINAL_TOOL:
            answer = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments,
                                                                                       ensure_ascii=False)
            if len(native.calls) == 1:
                return Decision(finish=AgentAction(thought=thought, action=FINISH, action_input=answer))
            calls.append(Call(AgentAction(thought=thought, action=FINISH, action_input=answer), call_id))
        elif call.error is not None:
            known = call.name in registry.tools
            text = prompts.render("invalid_arguments", action=call.name, action_input=call.arguments,
                                  error=call.error, arguments=registry.arguments_text(call.name) if known else "")
            calls.append(Call(AgentAction(thought=thought, action=call.name, action_input=str(call.arguments)),
                              call_id, Outcome(text, "invalid_arguments")))
        else:
            calls.append(Call(AgentAction(thought=thought, action=call.name, action_input=_as_dict(call.arguments)),
                              call_id))
    return Decision(capped(calls, limit, prompts))


# ------------------------------------------------------------------------------------------------ native prompt
def native_messages(prompts: PromptSet, state: RunState, *, system: str, limit: int, window: int | None,
                    one_call: bool) -> list[BaseMessage]:
    """The native prompt: the system prompt, the task, then each decision as its messages."""
    messages: list[BaseMessage] = [SystemMessage(content=system), HumanMessage(content=state.task)]
    for group in _groups(state.steps, window):
        messages += _decision_messages(group, prompts, limit, one_call)
    return messages


def turn_messages(prompts: PromptSet, steps: Sequence[AgentStep], *, limit: int,
                  window: int | None) -> list[BaseMessage]:
    """The text protocol's decisions as chat turns: each decision's JSON (a list for parallel calls; the reply
    itself, cut to ``limit``, when it could not be parsed) as an ``AIMessage``, then its results rendered by
    the ``observation`` template as one ``HumanMessage``, and a reflection as a ``HumanMessage`` after them."""
    messages: list[BaseMessage] = []
    for group in _groups(steps, window):
        calls = [decision_fields(s) for s in group if s.action is not None]
        if calls:
            content = json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)
        else:
            content = truncate(group[0].raw_output, limit, prompts)
        entries = [history_entry(0, s, limit, prompts) for s in group]  # what the history template shows of it
        results = [prompts.render("observation", **{k: e[k] for k in ("action", "action_input", "observation",
                                                                        "is_error")}) for e in entries]
        messages += [AIMessage(content=content), HumanMessage(content="\n\n".join(results))]
        messages += [HumanMessage(content=s.reflection) for s in group if s.reflection]
    return messages


def _groups(steps: Sequence[AgentStep], window: int | None) -> list[list[AgentStep]]:
    """The steps by decision (FINISH steps left out), the last ones covering the ``window`` last steps."""
    groups: list[list[AgentStep]] = []
    for step in steps:
        if step.action == FINISH:
            continue
        if groups and step.decision is not None and groups[-1][0].decision == step.decision:
            groups[-1].append(step)
        else:
            groups.append([step])
    if window is None:
        return groups
    kept, count = [], 0
    for group in reversed(groups):
        if count >= window:
            break
        kept.append(group)
        count += len(group)
    return kept[::-1]


def _decision_messages(group: list[AgentStep], prompts: PromptSet, limit: int, one_call: bool) -> list[BaseMessage]:
    reply = read_native_reply(group[0].raw_output)
    calls = [s for s in group if s.call_id is not None]
    messages: list[BaseMessage] = []
    if calls:
        kwargs = dict(reply.kwargs)
        batches = [[s] for s in calls] if one_call else [calls]
        for n, batch in enumerate(batches):
            content = reply.content if n == 0 else ""
            messages.append(AIMessage(content=content, additional_kwargs=kwargs,
                                      tool_calls=[_tool_call(s) for s in batch]))
            messages += [ToolMessage(content=truncate(s.observation, limit, prompts), tool_call_id=str(s.call_id),
                                     name=str(s.action), status="error" if s.is_error else "success") for s in batch]
    for step in group:
        if step.call_id is None:  # feedback on an answer that did not validate
            messages += _feedback_messages(reply, truncate(step.observation, limit, prompts))
        if step.reflection:
            messages.append(HumanMessage(content=step.reflection))
    return messages


def _as_dict(value: dict[str, Any] | str) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _tool_call(step: AgentStep) -> dict[str, Any]:
    args = step.action_input if isinstance(step.action_input, dict) else {}
    return {"name": str(step.action), "args": args, "id": str(step.call_id), "type": "tool_call"}


def _feedback_messages(reply: NativeReply, feedback: str) -> list[BaseMessage]:
    """An answer and the feedback on it: a ``final_answer`` call and its tool message, or the answer's text
    and a human message."""
    final = next((c for c in reply.calls if c.name == FINAL_TOOL), None)
    if final is None:
        return [AIMessage(content=reply.content), HumanMessage(content=feedback)]
    call_id = final.id or FINAL_TOOL
    args = final.arguments if isinstance(final.arguments, dict) else {}
    call = {"name": FINAL_TOOL, "args": args, "id": call_id, "type": "tool_call"}
    return [AIMessage(content=reply.content, additional_kwargs=dict(reply.kwargs), tool_calls=[call]),
            ToolMessage(content=feedback, tool_call_id=call_id, name=FINAL_TOOL, status="error")]


def parallel_answer_schema(schema: dict[str, Any], limit: int) -> dict[str, Any]:
    """The JSON schema of a text decision of up to ``limit`` actions under constrained decoding: an object
    ``{"actions": [...]}`` (servers want an object at the root) of one to ``limit`` answers; ``$defs`` stay
    at the root, so the answers' references still resolve."""
    one = {k: v for k, v in schema.items() if k != "$defs"}
    envelope: dict[str, Any] = {
        "type": "object", "additionalProperties": False, "required": ["actions"],
        "properties": {"actions": {"type": "array", "items": one, "minItems": 1, "maxItems": limit}}}
    if "$defs" in schema:
        envelope["$defs"] = schema["$defs"]
    return envelope


# ------------------------------------------------------------------------------------------------ binding
def native_tools(registry: ToolRegistry, output_schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The registry's tools as OpenAI-format function schemas (the schemas the model sees), plus
    :data:`FINAL_TOOL` when the answer has a schema."""
    tools = [{"type": "function", "function": {"name": name, "description": registry.tools[name].description or name,
                                               "parameters": dict(registry.schemas[name])}}
             for name in registry.names]
    if output_schema is not None:
        if FINAL_TOOL in registry.tools:
            raise ConfigError(f"protocol='native' with output_schema adds a tool {FINAL_TOOL!r} for the final "
                              f"answer, and this agent already has a tool of that name; rename that tool")
        tools.append({"type": "function", "function": {"name": FINAL_TOOL, "description": "The final answer.",
                                                       "parameters": output_schema}})
    return tools


def bind_native(llm: Any, registry: ToolRegistry, output_schema: dict[str, Any] | None) -> Any:
    """``llm.bind_tools(schemas)``; :class:`ConfigError` for a model that cannot bind tools."""
    bind = getattr(llm, "bind_tools", None)
    if not callable(bind):
        raise ConfigError(f"protocol='native' needs a chat model with bind_tools (native tool calls); "
                          f"{type(llm).__name__} has none: use protocol='text' or a model that calls tools")
    try:
        return bind(native_tools(registry, output_schema))
    except NotImplementedError:
        raise ConfigError(f"protocol='native' needs a chat model that implements bind_tools (native tool calls); "
                          f"{type(llm).__name__} does not: use protocol='text' or a model that calls "
                          f"tools") from None


def bind_tool_schemas(llm: Any, tools: Sequence[Any]) -> Any:
    """``llm.bind_tools(tools)`` for one call (tools given as OpenAI-format function schemas)."""
    bind = getattr(llm, "bind_tools", None)
    if not callable(bind):
        raise ConfigError(f"a model call with its own tools needs a chat model with bind_tools; "
                          f"{type(llm).__name__} has none: use protocol='text' or a model that calls tools")
    return bind([dict(t) for t in tools])


def one_call_models(llm: Any) -> bool:
    """Whether the model takes one tool call per message (GigaChat's functions API), looking through
    bindings and wrappers."""
    todo, seen = [llm], 0
    while todo and seen < 16:
        item = todo.pop()
        seen += 1
        if item is None:
            continue
        if type(item).__module__.split(".")[0] == "langchain_gigachat":
            return True
        todo += [getattr(item, "bound", None), getattr(item, "runnable", None)]
    return False
