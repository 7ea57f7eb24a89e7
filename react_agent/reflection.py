"""ReflectionAgent: the ReAct loop plus error detection, a reflection call and a corrective prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseLanguageModel

from react_agent._core import BaseAgent, RunState
from react_agent._errors import ConfigError
from react_agent._tools import ToolLike

__all__ = ["DEFAULT_ERROR_KEYWORDS", "ReflectionAgent"]

DEFAULT_ERROR_KEYWORDS = ("error", "fail", "unknown", "exception", "ошибка")


class ReflectionAgent(BaseAgent):
    """An agent that adapts to its own errors (the seed article's ReflectionAgent).

    After each step it checks whether to reflect: an error keyword in the last observation
    (``error_keywords``, case-insensitive), the same action three times in a row
    (``repeat_action_limit``), or the same action with the same input twice in a row
    (``repeat_call_limit``). A reflection is one model call over the whole history (the ``reflection``
    template); its text goes into the ``corrective`` template for the next decision. At most
    ``max_reflections`` per run. ``timeout`` (default 10 s) abandons a tool that runs longer.
    """

    def __init__(
        self,
        llm: BaseLanguageModel[Any],
        tools: Sequence[ToolLike],
        *,
        max_iterations: int = 5,
        timeout: float | None = 10,
        error_keywords: Sequence[str] = DEFAULT_ERROR_KEYWORDS,
        repeat_action_limit: int = 3,
        repeat_call_limit: int = 2,
        max_reflections: int = 3,
        **options: Any,
    ) -> None:
        super().__init__(llm, tools, max_iterations=max_iterations, timeout=timeout, **options)
        if isinstance(error_keywords, str):
            raise ConfigError("error_keywords must be a list of words, not one string")
        for option, value in (("repeat_action_limit", repeat_action_limit),
                              ("repeat_call_limit", repeat_call_limit)):
            if not isinstance(value, int) or value < 2:
                raise ConfigError(f"{option} must be an integer >= 2, got {value!r}")
        if not isinstance(max_reflections, int) or max_reflections < 0:
            raise ConfigError(f"max_reflections must be an integer >= 0, got {max_reflections!r}")
        self.error_keywords = tuple(k.lower() for k in error_keywords)
        self.repeat_action_limit = repeat_action_limit
        self.repeat_call_limit = repeat_call_limit
        self.max_reflections = max_reflections

    def needs_reflection(self, state: RunState) -> bool:
        if not state.steps:
            return False
        observation = state.steps[-1].observation.lower()
        if any(keyword in observation for keyword in self.error_keywords):
            return True
        actions = [(s.action, s.action_input) for s in state.steps if s.action is not None]
        last_names = {name for name, _ in actions[-self.repeat_action_limit:]}
        if len(actions) >= self.repeat_action_limit and len(last_names) == 1:
            return True
        last_calls = actions[-self.repeat_call_limit:]
        return len(last_calls) == self.repeat_call_limit and all(c == last_calls[0] for c in last_calls)
