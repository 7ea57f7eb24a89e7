"""Checks of a task's result, and the statistics of a success rate (Wilson interval)."""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from react_agent._types import FINISH, AgentResult
from react_agent.batch._records import CheckResult
from react_agent.batch._tasks import Checks, ExpectedCall, Task
from react_agent.errors import ConfigError

__all__ = ["load_predicate", "run_checks", "tool_calls_of", "wilson_interval"]


def tool_calls_of(result: AgentResult) -> list[dict[str, Any]]:
    """The tool calls a run made, in order: ``{"tool", "args", "error"}`` per step with a tool action."""
    return [{"tool": s.action, "args": s.action_input if isinstance(s.action_input, dict) else {},
             "error": s.is_error} for s in result.steps if s.action and s.action != FINISH]


def _matches(expected: Any, actual: Any) -> bool:
    """``expected`` equals ``actual``; strings compare case-insensitively with outer blanks stripped, numbers
    by value, dicts by the expected keys only."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(actual, str):
            try:
                actual = float(actual)
            except ValueError:
                return False
        return isinstance(actual, (int, float)) and not isinstance(actual, bool) and float(actual) == float(expected)
    return bool(expected == actual)


def _check_calls(expected: Sequence[ExpectedCall], made: Sequence[dict[str, Any]]) -> CheckResult:
    """Every expected call, in order, among the calls made (others may come in between)."""
    position = 0
    for number, call in enumerate(expected, 1):
        while position < len(made) and not (made[position]["tool"] == call.tool
                                            and _matches(call.args, made[position]["args"])):
            position += 1
        if position == len(made):
            shown = ", ".join(f"{c['tool']}({c['args']})" for c in made) or "none"
            return CheckResult(name="tool_calls", passed=False,
                               detail=f"expected call {number} {call.tool}({call.args}) not made; calls: {shown}")
        position += 1
    return CheckResult(name="tool_calls", passed=True)


def load_predicate(spec: str) -> Callable[..., Any]:
    """The function named by ``"module:function"``."""
    module_name, _, name = spec.partition(":")
    function = getattr(importlib.import_module(module_name), name)
    if not callable(function):
        raise TypeError(f"{spec} is not callable")
    return function  # type: ignore[no-any-return]


def _check_predicate(spec: str, result: AgentResult, task: Task) -> CheckResult:
    try:
        verdict = load_predicate(spec)(result, task)
    except Exception as exc:  # a broken predicate fails its check, never the batch
        return CheckResult(name="predicate", passed=False, detail=f"{spec} raised {type(exc).__name__}: {exc}")
    detail = ""
    if isinstance(verdict, tuple):
        verdict, detail = verdict[0], str(verdict[1]) if len(verdict) > 1 else ""
    return CheckResult(name="predicate", passed=bool(verdict), detail=detail or ("" if verdict else f"{spec} said no"))


def run_checks(checks: Checks, result: AgentResult, task: Task) -> list[CheckResult]:
    """Each given check of ``checks`` on ``result``."""
    out: list[CheckResult] = []
    if checks.status is not None:
        out.append(CheckResult(name="status", passed=result.status == checks.status,
                               detail="" if result.status == checks.status else f"status is {result.status}"))
    if checks.answer is not None:
        wanted = [checks.answer] if isinstance(checks.answer, str) else checks.answer
        missing = [w for w in wanted if w.casefold() not in result.output.casefold()]
        out.append(CheckResult(name="answer", passed=not missing,
                               detail=f"the answer lacks {missing!r}" if missing else ""))
    if checks.answer_regex is not None:
        found = re.search(checks.answer_regex, result.output) is not None
        out.append(CheckResult(name="answer_regex", passed=found,
                               detail="" if found else f"the answer does not match {checks.answer_regex!r}"))
    if checks.tool_calls:
        out.append(_check_calls(checks.tool_calls, tool_calls_of(result)))
    if checks.predicate is not None:
        out.append(_check_predicate(checks.predicate, result, task))
    return out


def wilson_interval(successes: int, n: int, *, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95 % by default); ``(0, 1)`` when ``n`` is 0. ``successes``
    outside ``0..n`` is a :class:`ConfigError`."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ConfigError(f"wilson_interval: successes must be between 0 and n={n}, got {successes}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
