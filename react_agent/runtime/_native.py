"""A native tool-calling reply as text: what the journal records and replays for the native protocol.

A model that calls tools natively answers with an ``AIMessage`` whose ``tool_calls`` hold the decision.
:func:`native_reply_text` keeps what the next decision needs of it as one JSON text (the content, the
calls, the calls whose arguments were not JSON, and GigaChat's ``functions_state_id``), so the journal
layer records it like any reply; :func:`read_native_reply` turns that text back into a :class:`NativeReply`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NativeCall", "NativeReply", "native_reply_text", "read_native_reply"]

KEPT_KWARGS = ("functions_state_id",)
"""``additional_kwargs`` of a reply that must go back with it in the history (GigaChat's function state)."""


@dataclass(frozen=True)
class NativeCall:
    """One tool call of a reply: ``arguments`` is a dict, or the raw text when it was not a JSON object."""

    name: str
    arguments: dict[str, Any] | str
    id: str
    error: str | None = None


@dataclass(frozen=True)
class NativeReply:
    """A decoded native reply: its text, its tool calls in order, and the kwargs that go back with it."""

    content: str
    calls: tuple[NativeCall, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def native_reply_text(message: Any, content: str) -> str:
    """The JSON text of a native reply: ``message`` an ``AIMessage``, ``content`` its text."""
    calls = [{"name": str(c.get("name") or ""), "args": c.get("args") if isinstance(c.get("args"), dict) else {},
              "id": str(c.get("id") or "")} for c in getattr(message, "tool_calls", None) or []]
    invalid = [{"name": str(c.get("name") or ""), "args": str(c.get("args") or ""), "id": str(c.get("id") or ""),
                "error": str(c.get("error") or "")} for c in getattr(message, "invalid_tool_calls", None) or []]
    extra = getattr(message, "additional_kwargs", None) or {}
    kept = {k: extra[k] for k in KEPT_KWARGS if isinstance(extra.get(k), str)}
    data: dict[str, Any] = {"content": content, "tool_calls": calls}
    if invalid:
        data["invalid_tool_calls"] = invalid
    if kept:
        data["kwargs"] = kept
    return json.dumps(data, ensure_ascii=False, default=str)


def read_native_reply(text: str) -> NativeReply:
    """The :class:`NativeReply` of a :func:`native_reply_text` (a text that is not one: its content only)."""
    try:
        data = json.loads(text)
    except ValueError:
        return NativeReply(text)
    if not isinstance(data, dict) or "tool_calls" not in data:
        return NativeReply(text)
    calls = [NativeCall(str(c.get("name", "")), _arguments(c.get("args")), str(c.get("id", "")))
             for c in data.get("tool_calls") or [] if isinstance(c, dict)]
    calls += [NativeCall(str(c.get("name", "")), str(c.get("args", "")), str(c.get("id", "")),
                         str(c.get("error") or "not a JSON object"))
              for c in data.get("invalid_tool_calls") or [] if isinstance(c, dict)]
    kwargs = data.get("kwargs") if isinstance(data.get("kwargs"), dict) else {}
    return NativeReply(str(data.get("content") or ""), tuple(calls), dict(kwargs or {}))


def _arguments(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
