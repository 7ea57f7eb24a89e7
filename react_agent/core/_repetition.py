"""Repeated calls: a small model that got its result calls the same tool with the same arguments again.

:func:`repeats` tells how often the decided call repeats the call right before it. The loop answers the first
repeat with the ``repeated_call`` template (the result is already there) instead of running the tool again, and
ends the run with status ``"repeated"`` and that result at the second.
"""

from __future__ import annotations

from collections.abc import Sequence

from react_agent._types import AgentAction, AgentStep

__all__ = ["MAX_REPEATS", "repeats"]

MAX_REPEATS = 2
"""Repeats of one call that end the run (the first is answered by the ``repeated_call`` template)."""


def repeats(steps: Sequence[AgentStep], action: AgentAction) -> tuple[int, AgentStep | None]:
    """How many of the last steps made exactly ``action``'s call (the same tool, the same arguments), and the first
    of them: the call that ran and whose result the others repeat. ``(0, None)`` when the last step made another
    call, or when that first call failed (a failed call may be worth trying again; its error says why)."""
    count, first = 0, None
    for step in reversed(steps):
        if step.action != action.action or step.action_input != action.action_input:
            break
        count, first = count + 1, step
    if first is None or first.is_error:
        return 0, None
    return count, first
