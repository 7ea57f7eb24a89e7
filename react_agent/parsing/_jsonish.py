"""Decode one JSON-ish candidate in bounded time: strict JSON, a linear relaxed pass, then ``json_repair``.

Shared by the action parser (``_parser``) and the plan parser (``_planparse``). ``json_repair`` handles
more than the relaxed pass, but its cost is superlinear on some inputs (``{1"1"1"…}`` or ``[" [" …``
take about 50 ms at 1 KB and 0.2 s at 2 KB; deep nesting is worse), so it only ever sees small
candidates, within a per-reply character budget. Everything else is linear in the candidate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import json_repair

__all__ = ["Budget", "decode", "strings_in"]

REPAIR_MAX = 1_000  # longest candidate handed to json_repair
REPAIR_BUDGET = 1_000  # characters per reply handed to json_repair in all
RELAXED_BUDGET = 32_000  # characters per reply given to the relaxed pass in all
REPAIR_MAX_DEPTH = 10  # deeper candidates are never handed to json_repair

_COMMENT = r"//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/"
_FIX = re.compile(
    r"""("[^"\\]*(?:\\.[^"\\]*)*")"""  # 1 a JSON string: kept
    r"""|('[^'\\]*(?:\\.[^'\\]*)*')"""  # 2 a single-quoted string
    rf"|({_COMMENT})"  # 3 a comment: dropped
    rf"|,(?=(?:\s|{_COMMENT})*[}}\]])"  # a trailing comma: dropped
    r"|(?<![\w$.])([A-Za-z_$][\w$]*)(\s*:)?",  # 4 a bare word, 5 the colon after a key
    re.DOTALL,
)
_LITERALS = {"True": "true", "False": "false", "None": "null", "none": "null"}


class Budget:
    """Characters still allowed through the relaxed pass and through ``json_repair`` for one reply."""

    def __init__(self, relaxed: int = RELAXED_BUDGET, repair: int = REPAIR_BUDGET) -> None:
        self.relaxed, self.repair = relaxed, repair


def decode(candidate: str, budget: Budget, *, depth: int | None = None) -> Any:
    """The value of ``candidate``, or ``None`` when it does not decode within the budget.

    ``depth`` is the candidate's bracket nesting when the caller's scan knows it (deep candidates are
    never repaired, whatever their length).
    """
    try:
        return json.loads(candidate, strict=False)
    except (ValueError, RecursionError):
        pass
    if len(candidate) <= budget.relaxed:
        budget.relaxed -= len(candidate)
        try:
            return json.loads(_relaxed(candidate), strict=False)
        except (ValueError, RecursionError):
            pass
    if len(candidate) > min(REPAIR_MAX, budget.repair) or (depth if depth is not None else _depth(candidate)) > (
        REPAIR_MAX_DEPTH
    ):
        return None
    budget.repair -= len(candidate)
    try:
        return json_repair.loads(candidate, skip_json_loads=True)
    except Exception:  # json_repair's own failures on pathological input
        return None


def _depth(text: str) -> int:
    """Maximal bracket nesting, ignoring strings (an upper bound is enough)."""
    depth = deepest = 0
    for char in re.findall(r"[\[\]{}]", text):
        depth = depth + 1 if char in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def _relaxed(text: str) -> str:
    """Rewrite Python/JSON5-style text towards JSON in one pass (``json.loads`` judges the result).

    Single-quoted strings, ``True``/``False``/``None``, unquoted keys, trailing commas and ``//`` /
    ``/* */`` comments; raw newlines inside strings are left for ``json.loads(strict=False)``.
    """
    return _FIX.sub(_fix, text)


def _fix(token: re.Match[str]) -> str:
    kind = token.lastindex
    if kind == 1:
        return token.group()
    if kind == 2:
        inner = re.sub(r"\\(u[0-9a-fA-F]{4}|.)", _unescape, token.group()[1:-1], flags=re.DOTALL)
        return json.dumps(inner, ensure_ascii=False)
    if kind is None or kind == 3:
        return ""
    word = token.group(4)
    if token.group(5):
        return json.dumps(word) + token.group(5)
    return _LITERALS.get(word, word)


def _unescape(escape: re.Match[str]) -> str:
    char = escape.group(1)
    if len(char) == 5:
        return chr(int(char[1:], 16))
    return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(char, char)


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a decoded value (a call's arguments), at any depth: the value itself, the values of its
    mappings and the items of its lists and tuples. Keys and other scalars are not strings of the value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings_in(item)
