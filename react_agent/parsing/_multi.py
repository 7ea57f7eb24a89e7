"""Several actions in one reply: a JSON list of action objects, ``{"actions": [...]}``, or objects one after
another. Each action is read by :func:`parse_response`, so a list item is held to the same rules as a reply.

The values are decoded checked (``_jsonish.DECODER``): a reply whose JSON gives a key twice with different
values, nests too deep or holds too long a number is refused with that reason, whichever item it is in (read
as one action instead, the items after the first would be dropped without a word)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from react_agent._types import AgentAction
from react_agent.errors import ConfigError
from react_agent.parsing._jsonish import DECODER, Malformed, malformed
from react_agent.parsing._parser import Validate, malformed_error, parse_response

__all__ = ["parse_actions"]

MAX_ITEMS = 64
"""At most this many actions are read from one reply (the agent's ``max_parallel_calls`` caps what runs)."""

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)


def parse_actions(text: str, tool_names: Collection[str] | None = None, *, allow_plain_answer: bool = False,
                  validate: Validate | None = None) -> list[AgentAction]:
    """Every action of a reply, in order; a reply of one action gives a list of one (:func:`parse_response`
    reads it). Raises :class:`OutputParseError` when an item, or the reply, holds no safe action."""
    if text is not None and not isinstance(text, str):
        raise ConfigError(f"parse_actions reads the text of a reply (a str), got {type(text).__name__}")
    try:
        items = _items(text or "")
    except Malformed as problem:
        raise malformed_error(problem, text) from None
    if items is None:
        return [parse_response(text, tool_names, allow_plain_answer=allow_plain_answer, validate=validate)]
    return [parse_response(_dumps(item, text), tool_names, validate=validate) for item in items]


def _dumps(item: dict[str, Any], text: str) -> str:
    try:
        return json.dumps(item, ensure_ascii=False)
    except RecursionError:  # decoded near the recursion limit, too deep to write back
        raise malformed_error(Malformed("too_deep"), text) from None


def _items(text: str) -> list[dict[str, Any]] | None:
    """The action objects of a multi-action reply, or ``None`` for anything else (then it is one action)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    values = _values(body)
    if not values:
        return None
    if len(values) == 1:
        value = values[0]
        if isinstance(value, dict) and isinstance(value.get("actions"), list):
            value = value["actions"]
        if not isinstance(value, list):
            return None
        values = value
    if not values or len(values) > MAX_ITEMS or not all(isinstance(v, dict) for v in values):
        return None
    return values


def _values(body: str) -> list[Any]:
    """The JSON values the body is made of, one after another (blanks or commas between): none when it is
    anything else. Raises :class:`Malformed` for a value that is JSON but cannot be taken as written, unless
    it is the object the reply opens with (not an ``{"actions": [...]}`` list): then :func:`parse_response` reads
    the reply, as it reads one object."""
    if not body.startswith(("[", "{")):
        return []
    values: list[Any] = []
    pos = 0
    try:
        while pos < len(body) and len(values) <= MAX_ITEMS:
            value, pos = DECODER.raw_decode(body, pos)
            values.append(value)
            while pos < len(body) and (body[pos].isspace() or body[pos] == ","):
                pos += 1
    except (ValueError, RecursionError, Malformed) as error:
        problem = malformed(error, body, pos)
        if problem is None:  # not JSON values: one action
            return []
        envelope = isinstance(problem.value, dict) and isinstance(problem.value.get("actions"), list)
        if pos == 0 and body.startswith("{") and not envelope:
            return []
        raise problem from None
    return values if pos >= len(body) else []
