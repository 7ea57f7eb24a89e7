"""ReactAgent: analyse the task, choose a tool or FINISH, observe, repeat — bounded."""

from __future__ import annotations

from react_agent.core import BaseAgent

__all__ = ["ReactAgent"]


class ReactAgent(BaseAgent):
    """The ReAct loop: decide, act, observe, with the history kept per run and every error an observation.

    ``ReactAgent(llm, tools, *, max_iterations=5, prompts="ru", ...)``; see :class:`BaseAgent` for
    every option. ``run(task)`` returns an :class:`AgentResult`; ``arun`` and ``stream`` do the same
    asynchronously and step by step.
    """
