"""ReflectionAgent: the ReAct loop plus error detection, a reflection call and a corrective prompt."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.messages import BaseMessage
from pydantic import Field, StrictInt, StrictStr, field_validator

from react_agent.core import AgentConfig, BaseAgent, Seconds
from react_agent.runtime import Loop, ModelCall, ModelReply, RunState

__all__ = ["DEFAULT_ERROR_KEYWORDS", "ReflectionAgent", "ReflectionConfig", "ReflectionState"]

logger = logging.getLogger("react_agent")

DEFAULT_ERROR_KEYWORDS = ("error", "fail", "unknown", "exception", "ошибка")


class ReflectionConfig(AgentConfig):
    """The options of :class:`ReflectionAgent`: those of :class:`AgentConfig` plus the reflection ones."""

    timeout: Seconds | None = Field(10, description="None or positive seconds (a finite number)")
    error_keywords: tuple[StrictStr, ...] = Field(DEFAULT_ERROR_KEYWORDS, description="a list of words")
    repeat_action_limit: Annotated[StrictInt, Field(ge=2)] = Field(3, description="an integer >= 2")
    repeat_call_limit: Annotated[StrictInt, Field(ge=2)] = Field(2, description="an integer >= 2")
    max_reflections: Annotated[StrictInt, Field(ge=0)] = Field(3, description="an integer >= 0")

    @field_validator("error_keywords", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("got one string; pass a list of words")
        return value


@dataclass(eq=False)
class ReflectionState(RunState):
    """A run of :class:`ReflectionAgent`: the pending reflection (shown by the next decision) and the count."""

    reflection: str | None = None
    reflections: int = 0


class ReflectionAgent(BaseAgent):
    """An agent that adapts to its own errors: after a failed step it reflects, and the next decision reads it.

    After each step :meth:`needs_reflection` checks whether to reflect: an error keyword in the last
    observation (``error_keywords``, case-insensitive), the same action ``repeat_action_limit`` times in a
    row, or the same action with the same input ``repeat_call_limit`` times in a row. A reflection is one
    model call over the whole history (the ``reflection`` template); its text goes into the ``corrective``
    template for the next decision. At most ``max_reflections`` per run. ``timeout`` defaults to 10 s.
    """

    Config = ReflectionConfig
    State = ReflectionState
    config: ReflectionConfig

    def __init__(self, llm: Any, tools: Any, **options: Any) -> None:
        super().__init__(llm, tools, **options)
        self.error_keywords = tuple(k.lower() for k in self.config.error_keywords)

    def needs_reflection(self, state: RunState) -> bool:
        """Whether the last step calls for a reflection."""
        if not state.steps:
            return False
        observation = state.steps[-1].observation.lower()
        if any(keyword in observation for keyword in self.error_keywords):
            return True
        actions = [(s.action, s.action_input) for s in state.steps if s.action is not None]
        limit = self.config.repeat_action_limit
        if len(actions) >= limit and len({name for name, _ in actions[-limit:]}) == 1:
            return True
        last_calls = actions[-self.config.repeat_call_limit:]
        return len(last_calls) == self.config.repeat_call_limit and all(c == last_calls[0] for c in last_calls)

    def review(self, state: RunState) -> Loop[str | None]:
        """One reflection call when :meth:`needs_reflection` says so (at most ``max_reflections``)."""
        if not isinstance(state, ReflectionState) or state.reflections >= self.config.max_reflections:
            return None
        if not self.needs_reflection(state):
            return None
        reply: ModelReply = yield ModelCall(self.build_reflection_messages(state), "reflection")
        state.reflections += 1
        state.reflection = reply.text.strip()
        logger.info("reflection %d after step %d", state.reflections, len(state.steps))
        return state.reflection

    def build_messages(self, state: RunState) -> list[BaseMessage]:
        """The ``corrective`` prompt right after a reflection (which it consumes), else the ``step`` prompt."""
        pending = state.reflection if isinstance(state, ReflectionState) else None
        if pending is None:
            return super().build_messages(state)
        state.reflection = None  # type: ignore[attr-defined]
        return self.prompts.messages("corrective", **self.prompt_variables(state), reflection=pending)
