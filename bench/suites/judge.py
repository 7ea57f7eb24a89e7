"""The judge of the suites: is a decision the expected tool call, and did a run reach the expected outcome?

A call is right when the tool name is exactly the expected one and every argument is right:

* strings are equal after Unicode (NFKC) normalisation, casefolding, ``ё`` -> ``е`` and collapsing runs
  of whitespace; nothing else (no stemming: the expected value is the form the tool needs, so an
  inflected name is wrong); ``accept`` lists other values that are equally right;
* numbers are equal numerically (``15`` and ``15.0``), but a number written as a string is wrong, and so
  is a boolean for a number;
* lists are equal as multisets (order does not matter), objects key by key;
* an expected argument may be left out when ``optional`` names it or its expected value is the schema's
  default; an argument the expectation does not name must be absent or equal to its default, unless
  ``free`` names it (any value);
* ``contains`` judges a free-text argument instead: it must be a string containing each given part;
* an argument the tool's schema does not have is wrong.

A run's outcome is right when the run finished, the store's log of successful calls holds the expected
calls in order (other calls may come between), a task that needs no tool made no call at all, and the
final answer contains each of ``answer_contains`` (compared without spaces, dashes and brackets).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["ExpectedCall", "Verdict", "judge_call", "judge_outcome", "normal_text", "same_value"]


class ExpectedCall(BaseModel):
    """One expected tool call: the values in the form the tool needs, and what else is equally right."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    arguments: dict[str, Any] = {}
    accept: dict[str, list[Any]] = {}
    """Per argument, other values that are equally right."""
    optional: tuple[str, ...] = ()
    """Arguments that may be left out."""
    contains: dict[str, list[str]] = {}
    """Per free-text argument, the parts its value must contain (instead of equality)."""
    free: tuple[str, ...] = ()
    """Arguments that may take any value or be left out."""

    @model_validator(mode="after")
    def _names_are_arguments(self) -> ExpectedCall:
        for key in (*self.accept, *self.optional, *self.contains):
            if key not in self.arguments:
                raise ValueError(f"{self.tool}: {key!r} is in accept/optional/contains but not in arguments")
        return self

    def call(self) -> dict[str, Any]:
        """The canonical call: ``{"tool": ..., "arguments": {...}}``."""
        return {"tool": self.tool, "arguments": dict(self.arguments)}


class Verdict(BaseModel):
    """Whether a decision or run is right and, when it is not, why."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    reason: str = ""


RIGHT = Verdict(ok=True)


def _wrong(reason: str) -> Verdict:
    return Verdict(ok=False, reason=reason)


def normal_text(text: str) -> str:
    """``text`` as the judge compares strings: NFKC, casefolded, ``ё`` as ``е``, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().replace("ё", "е").split())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_value(actual: Any, expected: Any) -> bool:
    """Whether ``actual`` is ``expected`` under the judge's rules (module docstring)."""
    if isinstance(expected, bool) or expected is None:
        return actual is expected
    if _is_number(expected):
        return _is_number(actual) and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str):
        return isinstance(actual, str) and normal_text(actual) == normal_text(expected)
    if isinstance(expected, list):
        return isinstance(actual, list) and _same_multiset(actual, expected)
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and set(actual) == set(expected)
                and all(same_value(actual[k], v) for k, v in expected.items()))
    return bool(actual == expected)


def _same_multiset(actual: Sequence[Any], expected: Sequence[Any]) -> bool:
    if len(actual) != len(expected):
        return False
    left = list(actual)
    for item in expected:
        index = next((i for i, candidate in enumerate(left) if same_value(candidate, item)), None)
        if index is None:
            return False
        left.pop(index)
    return True


def _default(schema: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    prop = schema.get("properties", {}).get(key, {})
    return ("default" in prop, prop.get("default"))


def _argument(key: str, actual: Any, expected: ExpectedCall) -> Verdict:
    if key in expected.free:
        return RIGHT
    if key in expected.contains:
        if not isinstance(actual, str):
            return _wrong(f"{key}: expected text, got {actual!r}")
        missing = [part for part in expected.contains[key] if normal_text(part) not in normal_text(actual)]
        return _wrong(f"{key}={actual!r} lacks {missing!r}") if missing else RIGHT
    wanted = [expected.arguments[key], *expected.accept.get(key, [])]
    if any(same_value(actual, value) for value in wanted):
        return RIGHT
    shown = wanted[0] if len(wanted) == 1 else wanted
    return _wrong(f"{key}={actual!r}, expected {shown!r}")


def judge_call(decision: Mapping[str, Any] | None, expected: ExpectedCall | None,
               schema: Mapping[str, Any] | None) -> Verdict:
    """Whether ``decision`` (``{"tool", "arguments"}``, or ``None`` for no call) is ``expected`` (``None``: no
    call is right); ``schema`` is the JSON schema of the expected tool's arguments."""
    if expected is None:
        return RIGHT if decision is None else _wrong(f"called {decision.get('tool')!r}, expected no call")
    if decision is None:
        return _wrong(f"no call, expected {expected.tool!r}")
    if decision.get("tool") != expected.tool:
        return _wrong(f"called {decision.get('tool')!r}, expected {expected.tool!r}")
    arguments = decision.get("arguments")
    if not isinstance(arguments, Mapping):
        return _wrong(f"arguments {arguments!r} are not an object")
    schema = schema or {}
    properties = schema.get("properties", {})
    for key in arguments:
        if key not in properties:
            return _wrong(f"argument {key!r} is not in the schema of {expected.tool!r}")
    for key, value in expected.arguments.items():
        if key in arguments:
            verdict = _argument(key, arguments[key], expected)
            if not verdict.ok:
                return verdict
            continue
        has_default, default = _default(schema, key)
        if not (key in expected.optional or key in expected.free or (has_default and same_value(default, value))):
            return _wrong(f"{key} missing, expected {value!r}")
    for key, value in arguments.items():
        if key in expected.arguments or key in expected.free:
            continue
        has_default, default = _default(schema, key)
        if not (has_default and same_value(value, default)):
            return _wrong(f"unexpected {key}={value!r}")
    return RIGHT


def _answer_text(text: str) -> str:
    return "".join(ch for ch in normal_text(text) if ch not in " -‐–—()")


def judge_outcome(*, status: str, calls: Iterable[Mapping[str, Any]], output: str,
                  expected: Sequence[ExpectedCall], schemas: Mapping[str, Mapping[str, Any]],
                  answer_contains: Sequence[str] = ()) -> Verdict:
    """Whether a run reached the outcome: ``status`` is ``finished``, the successful ``calls`` (the store's log,
    in order) hold ``expected`` in order (no call at all when it is empty) and ``output`` contains each of
    ``answer_contains``; ``schemas`` maps tool names to their argument schemas."""
    if status != "finished":
        return _wrong(f"the run ended {status!r}")
    made = list(calls)
    if not expected and made:
        return _wrong(f"called {made[0].get('tool')!r}, expected no call")
    position = 0
    for call in made:
        if position < len(expected) and judge_call(call, expected[position],
                                                   schemas.get(expected[position].tool)).ok:
            position += 1
    if position < len(expected):
        return _wrong(f"no successful call matched {expected[position].call()}")
    answer = _answer_text(output)
    missing = [part for part in answer_contains if _answer_text(part) not in answer]
    return _wrong(f"the answer lacks {missing!r}") if missing else RIGHT
