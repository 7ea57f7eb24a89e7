"""The agent's side of the tool registry: check, approve and run one tool call, and render every refusal or
failure as the :class:`Outcome` the model reads (``BaseAgent.execute``/``aexecute`` are these functions).

What a check needs that never changes after an agent is built (which tools take an idempotency key) is
worked out once, in :class:`CallFacts`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from react_agent._types import AgentAction
from react_agent.runtime import accepts_idempotency_key, adecide_approval, decide_approval, with_idempotency_key
from react_agent.tools import Outcome, Rejection, ToolRegistry, ToolTimeout, error_text, run_async, run_sync, stringify

__all__ = ["CallFacts", "Executor", "acheck", "aexecute", "check", "execute", "failure", "refusal", "valid_call"]


@dataclass(frozen=True)
class CallFacts:
    """Per-agent facts about its tools, worked out once when the agent is built."""

    names: frozenset[str]
    """The tool names (what the parser disambiguates with)."""
    keyed: frozenset[str]
    """The tools that take a hidden ``idempotency_key`` argument."""

    @classmethod
    def of(cls, registry: ToolRegistry) -> CallFacts:
        keyed = {name for name, tool in registry.tools.items() if accepts_idempotency_key(tool, registry.schemas[name])}
        return cls(frozenset(registry.names), frozenset(keyed))


class Executor(Protocol):
    """What executing a call needs of an agent (``BaseAgent`` is one)."""

    config: Any
    prompts: Any
    registry: ToolRegistry
    tool_names: str
    call_facts: CallFacts


def valid_call(registry: ToolRegistry, name: str, arguments: Any) -> bool:
    """Whether ``arguments`` validate for the tool ``name`` (the parser's check of a completed cut-off call)."""
    if name not in registry.tools:
        return False
    try:
        registry.validate(name, arguments)
    except ValueError:
        return False
    return True


def refusal(agent: Executor, kind: str, action: AgentAction, **variables: Any) -> Outcome:
    """The :class:`Outcome` of a refused or failed call: the ``kind`` template, rendered for the model."""
    text = agent.prompts.render(kind, action=action.action, action_input=action.action_input, **variables)
    return Outcome(text, kind)


def check(agent: Executor, action: AgentAction, key: str | None) -> Outcome | tuple[BaseTool, dict[str, Any]]:
    """The tool and its arguments, or the :class:`Outcome` that refuses the call (unknown tool, invalid
    arguments, approval denied: a journaled decision first, then the ``approve`` callback)."""
    checked = _validated(agent, action)
    if isinstance(checked, Outcome):
        return checked
    tool, args = checked
    if agent.registry.requires_approval(tool.name) and not decide_approval(tool.name, args, agent.config.approve):
        return refusal(agent, "approval_denied", action)
    return _keyed(agent, tool, args, key)


async def acheck(agent: Executor, action: AgentAction, key: str | None) -> Outcome | tuple[BaseTool, dict[str, Any]]:
    """Async :func:`check`: ``approve`` is awaited when it is an ``async def`` and runs in a worker thread when
    it is a plain function, so a decision that waits for a person never blocks the event loop."""
    checked = _validated(agent, action)
    if isinstance(checked, Outcome):
        return checked
    tool, args = checked
    approve = agent.config.approve
    if agent.registry.requires_approval(tool.name) and not await adecide_approval(tool.name, args, approve):
        return refusal(agent, "approval_denied", action)
    return _keyed(agent, tool, args, key)


def _validated(agent: Executor, action: AgentAction) -> Outcome | tuple[BaseTool, dict[str, Any]]:
    """The tool and its validated arguments, or the refusal of an unknown tool or invalid arguments."""
    checked = agent.registry.check(action.action, action.action_input)
    if isinstance(checked, Rejection):
        variables = {"tool_names": agent.tool_names} if checked.kind == "unknown_tool" else checked.variables
        return refusal(agent, checked.kind, action, **variables)
    return checked


def _keyed(agent: Executor, tool: BaseTool, args: dict[str, Any], key: str | None) -> tuple[BaseTool, dict[str, Any]]:
    """The arguments with the hidden idempotency key, for a tool that takes one."""
    if tool.name not in agent.call_facts.keyed:
        return tool, args
    return tool, with_idempotency_key(tool, args, agent.registry.schemas[tool.name], key)


def execute(agent: Executor, action: AgentAction, config: RunnableConfig | None, timeout: float | None,
            key: str | None) -> Outcome:
    """Check, approve and run a tool call; every failure is an :class:`Outcome`, never raised."""
    checked = check(agent, action, key)
    if isinstance(checked, Outcome):
        return checked
    tool, args = checked
    try:
        return Outcome(stringify(run_sync(tool, _own_copy(args), config, timeout)))
    except Exception as exc:
        return failure(agent, action, exc, timeout)


async def aexecute(agent: Executor, action: AgentAction, config: RunnableConfig | None, timeout: float | None,
                   key: str | None) -> Outcome:
    """Async :func:`execute` (the approval asked through :func:`acheck`)."""
    checked = await acheck(agent, action, key)
    if isinstance(checked, Outcome):
        return checked
    tool, args = checked
    try:
        return Outcome(stringify(await run_async(tool, _own_copy(args), config, timeout)))
    except Exception as exc:
        return failure(agent, action, exc, timeout)


def _own_copy(args: dict[str, Any]) -> dict[str, Any]:
    """The tool's own copy of its arguments: what it changes in them never reaches the step, the history or
    the journal (which keep what the model sent)."""
    try:
        copied: dict[str, Any] = _json_copy(args, set())
        return copied
    except _NotJson:
        pass
    try:
        return copy.deepcopy(args)
    except Exception:  # an argument that cannot be copied (a custom loop passed one): the original
        return args


_ATOMS = frozenset({str, int, float, bool, type(None)})
"""The types ``copy.deepcopy`` returns as they are."""


class _NotJson(Exception):
    """A value :func:`_json_copy` leaves to ``copy.deepcopy``."""


def _json_copy(value: Any, seen: set[int]) -> Any:
    """``copy.deepcopy(value)`` of what a JSON reply decodes to - dicts and lists of strings, numbers, booleans
    and ``None`` - without deepcopy's memo and dispatch; :class:`_NotJson` for anything else, and for a dict or
    list met twice (deepcopy keeps such sharing)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if (kind is not dict and kind is not list) or id(value) in seen:
        raise _NotJson
    seen.add(id(value))
    if kind is list:
        return [_json_copy(item, seen) for item in value]
    copied = {}
    for key, item in value.items():
        if type(key) not in _ATOMS:
            raise _NotJson
        copied[key] = _json_copy(item, seen)
    return copied


def failure(agent: Executor, action: AgentAction, exc: Exception, timeout: float | None) -> Outcome:
    """The :class:`Outcome` of a tool call that failed: it ran out of time, or raised."""
    if isinstance(exc, ToolTimeout):
        return refusal(agent, "tool_timeout", action, timeout=_seconds(timeout))
    return refusal(agent, "tool_error", action, error=error_text(exc))


def _seconds(value: float | None) -> float | None:
    """Seconds for a message: two decimals are enough (a deadline-clipped timeout is not 0.19872 s)."""
    return None if value is None else round(value, 2)
