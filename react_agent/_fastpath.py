"""Model calls: ``invoke_model``/``ainvoke_model``, the one place the agent calls a chat model.

(Being built: a direct path around langchain-core's callback machinery when nothing listens.)
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

__all__ = ["ainvoke_model", "invoke_model"]


def invoke_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig, kwargs: dict[str, Any]) -> Any:
    """``llm.invoke(messages, config, **kwargs)``."""
    return llm.invoke(messages, config, **kwargs)


async def ainvoke_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig,
                        kwargs: dict[str, Any]) -> Any:
    """``await llm.ainvoke(messages, config, **kwargs)``."""
    return await llm.ainvoke(messages, config, **kwargs)
