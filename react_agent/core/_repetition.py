"""Repeated calls: a small model that got its result calls the same tool with the same arguments again, or keeps
making a call that keeps failing.

:func:`repeats` tells how often the decided call repeats a call that succeeded, with nothing but failed calls
after it (a failed call changes nothing, so the result still stands). The loop answers the first repeat with the
``repeated_call`` template (the result is already there) instead of running the tool again, and ends the run with
status ``"repeated"`` and that result at the second. :func:`failures` tells how often the decided call failed since
the last successful call: after :data:`MAX_FAILURES` failures the call is not run again but answered with the
``repeated_error`` template, and the run ends with status ``"repeated"`` at the next repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

from react_agent._types import FINISH, AgentAction, AgentStep

__all__ = ["MAX_FAILURES", "MAX_REPEATS", "failures", "last_result", "repeats"]

MAX_REPEATS = 2
"""Repeats of one call that end the run (the first is answered by the ``repeated_call`` template)."""

MAX_FAILURES = 2
"""Failures of one call (since the last successful call) after which it is not run again (answered by the
``repeated_error`` template; the run ends at the repeat after that)."""


def _same(step: AgentStep, action: AgentAction) -> bool:
    return step.action == action.action and step.action_input == action.action_input


def repeats(steps: Sequence[AgentStep], action: AgentAction) -> tuple[int, AgentStep | None]:
    """How many steps since the last successful other call made exactly ``action``'s call (the same tool, the same
    arguments), and the first of them: the call that ran and whose result the others repeat. Failed calls in
    between do not count. ``(0, None)`` when no such call succeeded."""
    start = len(steps)
    while start > 0 and (_same(steps[start - 1], action) or steps[start - 1].is_error):
        start -= 1
    window = steps[start:]
    first = next((i for i, step in enumerate(window) if _same(step, action) and not step.is_error), None)
    if first is None:
        return 0, None
    return sum(_same(step, action) for step in window[first:]), window[first]


def failures(steps: Sequence[AgentStep], action: AgentAction) -> tuple[int, AgentStep | None]:
    """How many steps since the last successful call made exactly ``action``'s call and failed (other failed
    calls may come between: a model that alternates two failing calls repeats both), and the first of them, whose
    error the model keeps getting; ``(0, None)`` when there is none."""
    count, first = 0, None
    for step in reversed(steps):
        if not step.is_error:
            break
        if _same(step, action):
            count, first = count + 1, step
    return count, first


def last_result(steps: Sequence[AgentStep]) -> str:
    """The result of the last successful tool call, ``""`` when none succeeded; a repeat of it that the
    ``repeated_call`` template answered gives the result of the call that ran, not the note."""
    last = next((s for s in reversed(steps) if s.action and s.action != FINISH and not s.is_error), None)
    if last is None:
        return ""
    _, ran = repeats(steps, AgentAction(action=last.action, action_input=last.action_input))
    return (ran or last).observation
