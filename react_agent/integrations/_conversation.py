"""``Conversation``: the turns of one dialogue with an agent, kept across its runs."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from react_agent._types import AgentResult
from react_agent.errors import ConfigError
from react_agent.integrations._runnable import history_of
from react_agent.integrations._surface import AgentRunnable

__all__ = ["Conversation"]


class Conversation:
    """The turns of one dialogue with an agent, kept across runs.

    ``Conversation(agent)``; each :meth:`run` passes the previous turns as ``chat_history`` and then
    records the question and the answer (only those: the tool steps of a run stay in that run).
    ``messages`` is the dialogue as LangChain messages, a plain list to checkpoint (LangGraph state,
    a database); ``Conversation(agent, messages)`` continues it. ``max_turns`` bounds how many recent
    turns (a question and its answer) are shown to the model (``None``: all).
    """

    def __init__(self, agent: AgentRunnable, messages: Sequence[Any] = (), *, max_turns: int | None = None) -> None:
        if not isinstance(agent, AgentRunnable):
            raise ConfigError(f"Conversation needs a react_agent agent, got {type(agent).__name__}")
        if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int)
                                      or max_turns < 1):
            raise ConfigError(f"max_turns must be None or a positive integer, got {max_turns!r}")
        self.agent = agent
        self.max_turns = max_turns
        self._messages = list(history_of(list(messages)))
        self._lock = threading.Lock()

    @property
    def messages(self) -> list[BaseMessage]:
        """The whole dialogue so far (a copy)."""
        with self._lock:
            return list(self._messages)

    def history(self) -> list[BaseMessage]:
        """The messages shown to the next run (the last ``max_turns`` turns)."""
        messages = self.messages
        return messages if self.max_turns is None else messages[-2 * self.max_turns:]

    def run(self, task: str, *, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        """Run the agent on the next question of the dialogue and record the turn."""
        result = self.agent.run(task, config=config, chat_history=self.history(), **kwargs)
        self._record(task, result)
        return result

    async def arun(self, task: str, *, config: RunnableConfig | None = None, **kwargs: Any) -> AgentResult:
        """Async :meth:`run`."""
        result = await self.agent.arun(task, config=config, chat_history=self.history(), **kwargs)
        self._record(task, result)
        return result

    def _record(self, task: str, result: AgentResult) -> None:
        with self._lock:
            self._messages += [HumanMessage(content=task), AIMessage(content=result.output)]

    def clear(self) -> None:
        """Forget every turn."""
        with self._lock:
            self._messages.clear()

    def __len__(self) -> int:
        """The number of recorded messages."""
        with self._lock:
            return len(self._messages)
