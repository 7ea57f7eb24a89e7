"""What the drivers, the journal layer and the adapters need of an agent: :class:`Agent`.

``react_agent.core.BaseAgent`` is the one implementation; code below the core depends on this protocol, never
on the agent class or its private attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from react_agent._types import AgentAction, AgentResult
from react_agent.runtime._state import Loop, ModelCall, RunState
from react_agent.tools import Outcome

__all__ = ["Agent", "default_model_call", "is_default_model_call"]


class Agent(Protocol):
    """An agent as its drivers see it: its loop, its state, its model and tool calls, its result."""

    name: str
    llm: Any
    config: Any
    registry: Any
    prompts: Any

    def new_state(self, task: str, session: Mapping[str, Any]) -> RunState: ...

    def loop(self, state: RunState) -> Loop[None]: ...

    def call_model(self, messages: list[BaseMessage], config: RunnableConfig, call: ModelCall | None = None) -> Any:
        ...

    async def acall_model(self, messages: list[BaseMessage], config: RunnableConfig,
                          call: ModelCall | None = None) -> Any: ...

    def execute(self, action: AgentAction, *, config: RunnableConfig | None = None, timeout: float | None = None,
                idempotency_key: str | None = None) -> Outcome: ...

    async def aexecute(self, action: AgentAction, *, config: RunnableConfig | None = None,
                       timeout: float | None = None, idempotency_key: str | None = None) -> Outcome: ...

    def end_timeout(self, state: RunState) -> None: ...

    def build_result(self, state: RunState) -> AgentResult: ...


_DEFAULT = "react_agent_default_model_call"


def default_model_call(method: Any) -> Any:
    """Mark an agent's stock ``acall_model`` (a subclass that overrides it loses the mark)."""
    setattr(method, _DEFAULT, True)
    return method


def is_default_model_call(agent: Agent) -> bool:
    """Whether ``agent``'s ``acall_model`` is the stock one (then a model without async code of its own is
    called in a daemon thread instead)."""
    return bool(getattr(type(agent).acall_model, _DEFAULT, False))
