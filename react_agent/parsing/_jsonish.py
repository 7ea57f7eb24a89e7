"""Decode one JSON-ish candidate in bounded time: strict JSON, a linear relaxed pass, then ``json_repair``.

Shared by the action parser (``_parser``) and the plan parser (``_planparse``). ``json_repair`` handles
more than the relaxed pass, but its cost is superlinear on some inputs (``{1"1"1"…}`` or ``[" [" …``
take about 50 ms at 1 KB and 0.2 s at 2 KB; deep nesting is worse), so it only ever sees small
candidates, within a per-reply character budget. Everything else is linear in the candidate.

Decoding is *checked* for the action parser (``checked=True``, :func:`loads`, :data:`DECODER`): JSON that
decodes but cannot be taken as written raises :class:`Malformed` with the rule it breaks, so the model can
be told what is wrong instead of "no action found". Those rules: an object that gives one key twice with
different values (``json`` would silently keep the last; identical repeats are accepted), nesting deeper
than the ``json`` module's recursion allows (it raised ``RecursionError``), and an integer longer than
``sys.get_int_max_str_digits()`` (``int()`` raised ``ValueError``). The plan parser decodes unchecked.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from typing import Any

import json_repair

__all__ = ["DECODER", "Budget", "Malformed", "decode", "loads", "malformed", "strings_in"]

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
# tokens of a candidate for json_repair, read to find its repeated keys: a string, a comment, an opener, a
# closer, a comma, a colon, a bare word, any other character
_KEY_TOKEN = re.compile(
    r"""(?P<string>"[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')"""
    rf"|(?P<comment>{_COMMENT}|#[^\n]*)|(?P<open>[{{\[])|(?P<close>[}}\]])|(?P<comma>,)|(?P<colon>:)"
    r"""|(?P<word>[^\s"'{}\[\],:/#]+)|(?P<other>\S)""",
    re.DOTALL,
)


class Malformed(Exception):
    """A candidate that is JSON but cannot be taken as written: ``reason`` says why.

    ``"duplicate_key"``: an object gives ``key`` twice with different values (``value`` is what ``json``
    would have made of it, the last one winning, when that decodes, and ``end`` where that value ends);
    ``"too_deep"``: nested deeper than the ``json`` module goes;
    ``"too_many_digits"``: an integer of more than ``digits`` digits.
    """

    def __init__(self, reason: str, *, key: str = "", digits: int = 0, value: Any = None) -> None:
        super().__init__(reason)
        self.reason, self.key, self.digits, self.value = reason, key, digits, value
        self.end = -1


def _same(first: Any, second: Any) -> bool:
    """Whether two decoded values are equal, types included (``1``, ``1.0`` and ``true`` differ); no recursion."""
    todo = [(first, second)]
    while todo:
        a, b = todo.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if a.keys() != b.keys():
                return False
            todo.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            todo.extend(zip(a, b, strict=True))
        elif a != b:
            return False
    return True


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object, or :class:`Malformed` when a key comes twice with different values."""
    obj = dict(pairs)
    if len(obj) != len(pairs):  # a key came more than once
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                first = seen[key]
                nested = isinstance(value, (dict, list))
                if type(first) is not type(value) or not (_same(first, value) if nested else first == value):
                    raise Malformed("duplicate_key", key=key)
            else:
                seen[key] = value
    return obj


DECODER = json.JSONDecoder(strict=False, object_pairs_hook=_unique)
"""``json.loads(…, strict=False)``'s decoder, checked: its failures mean what :func:`malformed` says."""
_PLAIN = json.JSONDecoder(strict=False)


def malformed(error: Exception, text: str, pos: int = 0) -> Malformed | None:
    """What a failure of ``DECODER.raw_decode(text, pos)`` (or of its ``decode``) means: the :class:`Malformed`
    to raise, or ``None`` when ``text`` is just not JSON there (a ``JSONDecodeError``).

    For a repeated key, ``value`` and ``end`` are what plain ``json`` reads there (the last value winning):
    was it meant as an action? ``RecursionError`` means too deep; the ``ValueError`` of ``int()`` refusing
    a number longer than ``sys.get_int_max_str_digits()`` (not a ``JSONDecodeError``) too many digits.
    """
    if isinstance(error, Malformed):
        with suppress(ValueError, RecursionError):
            error.value, error.end = _PLAIN.raw_decode(text, pos)
        return error
    if isinstance(error, RecursionError):
        return Malformed("too_deep")
    if not isinstance(error, json.JSONDecodeError) and "integer string conversion" in str(error):
        return Malformed("too_many_digits", digits=sys.get_int_max_str_digits())
    return None


def loads(text: str) -> Any:
    """``json.loads(text, strict=False)``, checked: raises :class:`Malformed`, or ``ValueError`` for non-JSON."""
    try:
        return DECODER.decode(text)
    except (ValueError, RecursionError, Malformed) as error:
        problem = malformed(error, text, len(text) - len(text.lstrip()))
        if problem is None:
            raise
        raise problem from None


class Budget:
    """Characters still allowed through the relaxed pass and through ``json_repair`` for one reply."""

    def __init__(self, relaxed: int = RELAXED_BUDGET, repair: int = REPAIR_BUDGET) -> None:
        self.relaxed, self.repair = relaxed, repair


def decode(candidate: str, budget: Budget, *, depth: int | None = None, checked: bool = False) -> Any:
    """The value of ``candidate``, or ``None`` when it does not decode within the budget.

    ``depth`` is the candidate's bracket nesting when the caller's scan knows it (deep candidates are
    never repaired, whatever their length). ``checked``: raise :class:`Malformed` for JSON that breaks
    a rule (a key repeated with another value, too deep, too long a number) in any of the three passes.
    """
    load: Callable[[str], Any] = loads if checked else _PLAIN.decode
    try:
        return load(candidate)
    except (ValueError, RecursionError):
        pass
    if len(candidate) <= budget.relaxed:
        budget.relaxed -= len(candidate)
        try:
            return load(_relaxed(candidate))
        except (ValueError, RecursionError):
            pass
    if len(candidate) > min(REPAIR_MAX, budget.repair) or (depth if depth is not None else _depth(candidate)) > (
        REPAIR_MAX_DEPTH
    ):
        return None
    budget.repair -= len(candidate)
    try:
        value = json_repair.loads(candidate, skip_json_loads=True)
    except Exception:  # json_repair's own failures on pathological input
        return None
    key = _repeated_key(candidate) if checked else None
    if key is not None:  # json_repair keeps the last value of a repeated key, or splits the object
        raise Malformed("duplicate_key", key=key, value=value)
    return value


def _repeated_key(text: str) -> str | None:
    """The first key that an object of ``text`` (JSON-ish, for json_repair) gives twice with different values.

    A linear token scan: in each object, a string or bare word followed by a colon is a key, and its value
    is the text up to the next comma, key or closer at the same level. Two values are the same when their
    texts are, or when both decode (relaxed) to equal values. ``text`` is short: json_repair's candidates are.
    """
    tokens = [t for t in _KEY_TOKEN.finditer(text) if t.lastgroup != "comment"]
    frames: list[tuple[bool, dict[str, str], list[Any]]] = []  # (is an object, values seen, [key, value start])

    def close(frame: tuple[bool, dict[str, str], list[Any]], end: int) -> str | None:
        is_object, seen, current = frame
        key, start = current
        if not is_object or key is None:
            return None
        current[0] = None
        value = text[start:end].strip()
        if key in seen and not _same_text(seen[key], value):
            return str(key)
        seen[key] = value
        return None

    for n, token in enumerate(tokens):
        kind, found = token.lastgroup, None
        if kind == "open":
            frames.append((token.group() == "{", {}, [None, 0]))
        elif kind == "close" and frames:
            found = close(frames.pop(), token.start())
        elif kind == "comma" and frames:
            found = close(frames[-1], token.start())
        elif kind in ("string", "word") and frames and frames[-1][0] and _followed_by_colon(tokens, n):
            found = close(frames[-1], token.start())  # a key: the value before it ends here
            key = token.group()[1:-1] if kind == "string" else token.group()
            frames[-1][2][:] = [key, tokens[n + 1].end()]
        if found is not None:
            return found
    while frames:  # objects left open (json_repair closes them)
        found = close(frames.pop(), len(text))
        if found is not None:
            return found
    return None


def _followed_by_colon(tokens: list[re.Match[str]], n: int) -> bool:
    return n + 1 < len(tokens) and tokens[n + 1].lastgroup == "colon"


def _same_text(first: str, second: str) -> bool:
    if first == second:
        return True
    try:
        return _same(_PLAIN.decode(_relaxed(first)), _PLAIN.decode(_relaxed(second)))
    except (ValueError, RecursionError):
        return False


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
