"""What a run shows a LangGraph graph: its answer (and tool calls) as messages, its steps on the graph's
``custom`` stream, and LangGraph's own control-flow exceptions (``interrupt()``) left to LangGraph.

langgraph is an optional dependency: without it (or outside a graph) there is no stream writer and no
control-flow exception, and a run behaves as anywhere else.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from react_agent._types import FINISH, AgentResult, AgentStep

__all__ = ["STEP_CHUNK", "graph_control", "step_chunk", "stream_writer", "tool_call_messages", "with_messages"]

STEP_CHUNK = "react_agent.step"
"""The ``type`` of a step chunk on a graph's ``stream_mode="custom"``."""


def with_messages(result: AgentResult, name: str) -> AgentResult:
    """``result`` with its answer as one ``AIMessage`` named after the agent (``result.messages``)."""
    return result.model_copy(update={"messages": [AIMessage(content=result.output, name=name)]})


def tool_call_messages(result: AgentResult, name: str) -> list[BaseMessage]:
    """The run's tool calls as ``AIMessage(tool_calls=...)``/``ToolMessage`` pairs, as a LangChain tool-calling
    agent writes them (unparseable replies and FINISH are left out)."""
    messages: list[BaseMessage] = []
    for step in result.steps:
        if step.action is None or step.action == FINISH:
            continue
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        args = step.action_input if isinstance(step.action_input, dict) else {"input": step.action_input}
        messages.append(AIMessage(content=step.thought, name=name,
                                  tool_calls=[{"name": step.action, "args": args, "id": call_id}]))
        messages.append(ToolMessage(content=step.observation, tool_call_id=call_id, name=step.action,
                                    status="error" if step.is_error else "success"))
    return messages


def step_chunk(agent: str, index: int, step: AgentStep) -> dict[str, Any]:
    """The chunk a completed step writes to the graph's custom stream: plain data (``AgentStep.model_validate(
    chunk["step"])`` rebuilds the step)."""
    return {"type": STEP_CHUNK, "agent": agent, "index": index, "step": step.model_dump(mode="json")}


def stream_writer() -> Callable[[Any], None] | None:
    """LangGraph's stream writer of the graph node this run is part of, or ``None`` outside a graph."""
    try:
        from langgraph.config import get_stream_writer
    except ImportError:
        return None
    try:
        writer: Callable[[Any], None] = get_stream_writer()
    except (RuntimeError, LookupError, AttributeError, TypeError):  # not inside a graph node
        return None
    return writer


def graph_control(exc: BaseException) -> bool:
    """Whether ``exc`` is LangGraph's control flow (``interrupt()``, ``Command`` to a parent graph): it must
    reach LangGraph as it is, not become the run's error."""
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:
        return False
    return isinstance(exc, GraphBubbleUp)
