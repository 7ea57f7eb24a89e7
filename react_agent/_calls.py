"""Checking and approving one tool call before it runs (pure, except for the approval callback)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool

from react_agent._journal import current_tool_call, with_idempotency_key
from react_agent._tools import ToolRegistry

__all__ = ["Rejection", "approved", "check_call", "requires_approval"]


@dataclass(frozen=True)
class Rejection:
    """Why a call is refused before it runs: the template ``kind`` and its variables."""

    kind: str
    variables: dict[str, Any] = field(default_factory=dict)


def check_call(registry: ToolRegistry, name: str, action_input: Any,
               key: str | None = None) -> Rejection | tuple[BaseTool, dict[str, Any]]:
    """The tool and its validated arguments (plus the idempotency key where the tool takes one), or the
    :class:`Rejection` of an unknown tool or invalid arguments."""
    tool = registry.tools.get(name)
    if tool is None:
        return Rejection("unknown_tool")
    try:
        args = registry.validate(name, action_input)
    except ValueError as exc:
        return Rejection("invalid_arguments", {"error": str(exc), "arguments": registry.arguments_text(name)})
    return tool, with_idempotency_key(tool, args, registry.schemas[name], key)


def requires_approval(tool: BaseTool) -> bool:
    """Whether the tool is marked ``metadata={"requires_approval": True}``."""
    return bool((tool.metadata or {}).get("requires_approval"))


def approved(tool: str, args: Any, ask: Callable[[str, Any], bool] | None) -> bool:
    """The approval decision: inside a run, a journaled decision first (whatever ``ask`` is), else ``ask``
    (journaled); without ``ask`` the call is refused."""
    call = current_tool_call()
    if call is not None:
        return call.decide(tool, args, ask)
    return bool(ask(tool, args)) if ask is not None else False
