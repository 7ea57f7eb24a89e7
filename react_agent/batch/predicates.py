"""Predicates for the ``predicate`` check of a task (``"react_agent.batch.predicates:no_tool_errors"``).

A predicate is called as ``function(result, task)`` with the run's :class:`~react_agent.AgentResult` and the
:class:`~react_agent.batch.Task`; it returns a bool or ``(bool, detail)``. Write your own the same way.
"""

from __future__ import annotations

from react_agent._types import FINISH, AgentResult
from react_agent.batch._tasks import Task

__all__ = ["no_tool_errors"]


def no_tool_errors(result: AgentResult, task: Task) -> tuple[bool, str]:
    """Every tool call of the run succeeded (no error observation, no unparseable reply)."""
    bad = [s.action or "(unparseable reply)" for s in result.steps if s.is_error and s.action != FINISH]
    return not bad, f"failed steps: {', '.join(bad)}" if bad else ""
