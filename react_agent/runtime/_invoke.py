"""The one place a run calls its model: ``invoke``/``ainvoke`` with the call's config named and tagged by
its purpose, so a tracer shows what each call was for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from react_agent.runtime._state import ModelCall

__all__ = ["NOSTREAM", "STREAM_DECISIONS", "ainvoke_model", "invoke_model", "named_config"]

NOSTREAM = "nostream"
"""LangGraph's tag for model calls left out of ``stream_mode="messages"``: a decision is protocol JSON, not
an answer for the user (the steps reach ``stream_mode="custom"``; ``astream_events`` still shows the calls)."""

STREAM_DECISIONS = "react_agent_stream_decisions"
"""The config metadata key that, when true, lets a run's model calls into ``stream_mode="messages"``:
``graph.stream(state, {"metadata": {STREAM_DECISIONS: True}}, stream_mode="messages")``."""


def named_config(config: RunnableConfig | None, call: ModelCall | None) -> RunnableConfig:
    """The config of one model call: named (``run_name``), tagged and with metadata of its purpose.

    A plain copy of ``config`` with those three keys set: the model's ``invoke`` completes the config itself
    (``ensure_config``), so completing it here too would only do that work twice per call."""
    purpose = call.purpose if call is not None else "decision"
    named: dict[str, Any] = dict(config or {})
    named["run_name"] = purpose
    metadata = named.get("metadata") or {}
    hidden = [] if metadata.get(STREAM_DECISIONS) else [NOSTREAM]
    named["tags"] = [*(named.get("tags") or []), f"react_agent:{purpose}", *hidden]
    named["metadata"] = {**metadata, "react_agent_purpose": purpose}
    return cast(RunnableConfig, named)


def invoke_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig, kwargs: dict[str, Any],
                 call: ModelCall | None = None) -> Any:
    """``llm.invoke(messages, config, **kwargs)`` with the config named for ``call``."""
    return llm.invoke(messages, named_config(config, call), **kwargs)


async def ainvoke_model(llm: Any, messages: list[BaseMessage], config: RunnableConfig,
                        kwargs: dict[str, Any], call: ModelCall | None = None) -> Any:
    """Async :func:`invoke_model`."""
    return await llm.ainvoke(messages, named_config(config, call), **kwargs)
