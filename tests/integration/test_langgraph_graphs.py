"""Agents in real LangGraph graphs: as plain nodes, through as_node, with a checkpointer, with MessagesState."""

from __future__ import annotations

import asyncio
import logging
import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest
from conftest import call, finish
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde import jsonplus
from langgraph.graph import END, START, MessagesState, StateGraph

from react_agent import AgentNode, AgentResult, ConfigError, ReactAgent
from react_agent.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def agent(*replies: str, name: str, **options: Any) -> tuple[ReactAgent, ScriptedChatModel]:
    llm = ScriptedChatModel(list(replies), usage=True)
    return ReactAgent(llm, [add], prompts="en", name=name, **options), llm


@pytest.fixture
def serde_warnings(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """The checkpoint serializer's "unregistered type" warnings of this test (its warn-once memory cleared)."""
    monkeypatch.setattr(jsonplus, "_warned_unregistered_types", set(), raising=False)
    caplog.set_level(logging.WARNING, logger=jsonplus.__name__)
    return lambda: [r.getMessage() for r in caplog.records if "unregistered type" in r.getMessage()]


THREAD = {"configurable": {"thread_id": "t1"}}


class Pipeline(TypedDict, total=False):
    input: str
    draft: str
    output: str
    draft_result: dict[str, Any]
    result: dict[str, Any]


def test_two_agents_in_a_checkpointed_graph_serialise_cleanly(serde_warnings: Callable[[], list[str]]) -> None:
    """A researcher and a writer (as_node) in a StateGraph with InMemorySaver: the results are plain data in the
    checkpoint, read back without any "Deserializing unregistered type" warning, and rebuild an AgentResult."""
    researcher, _ = agent(call("add", a=2, b=40), finish("The sum is 42."), name="researcher")
    writer, writer_llm = agent(finish("Dear reader: 2 + 40 = 42."), name="writer")
    graph = StateGraph(Pipeline)
    graph.add_node("research", researcher.as_node(input_key="input", output_key="draft", result_key="draft_result"))
    graph.add_node("write", writer.as_node(input_key="draft", result_key="result"))
    graph.add_edge(START, "research")
    graph.add_edge("research", "write")
    graph.add_edge("write", END)
    app = graph.compile(checkpointer=InMemorySaver())

    final = app.invoke({"input": "What is 2 + 40?"}, THREAD)
    assert final["draft"] == "The sum is 42." and final["output"] == "Dear reader: 2 + 40 = 42."
    assert "**Task**: The sum is 42." in writer_llm.calls[0].text

    saved = app.get_state(THREAD).values  # read back from the checkpointer
    history = list(app.get_state_history(THREAD))
    assert len(history) >= 3
    result = AgentResult.model_validate(saved["result"])
    research = AgentResult.model_validate(saved["draft_result"])
    assert result.status == "finished" and result.output == final["output"]
    assert [s.action for s in research.steps] == ["add", "FINISH"] and research.usage.total_tokens > 0
    assert serde_warnings() == []


@pytest.mark.skipif(not hasattr(jsonplus, "_warned_unregistered_types"),
                    reason="this langgraph-checkpoint does not warn about unregistered types")
def test_a_result_object_in_the_state_would_warn(serde_warnings: Callable[[], list[str]]) -> None:
    """The control: an AgentResult object in a checkpointed state does make LangGraph warn; that is why
    as_node stores the result as plain data."""

    class Raw(TypedDict, total=False):
        input: str
        result: Any

    sub, _ = agent(finish("ok"), name="raw")
    graph = StateGraph(Raw)
    graph.add_node("a", lambda state: {"result": sub.invoke(state["input"])})
    graph.add_edge(START, "a")
    graph.add_edge("a", END)
    app = graph.compile(checkpointer=InMemorySaver())
    app.invoke({"input": "x"}, THREAD)
    app.get_state(THREAD)
    assert any("react_agent._types" in w for w in serde_warnings())


class Direct(TypedDict, total=False):
    input: str
    output: str
    status: str
    llm_calls: int


def test_an_agent_is_a_node_as_it_is(serde_warnings: Callable[[], list[str]]) -> None:
    """graph.add_node("agent", agent): the task is read from state["input"] (or task/question/messages) and the
    result's fields that are state keys (output, status, llm_calls...) are written back."""
    direct, _ = agent(call("add", a=1, b=2), finish("3"), name="direct")
    graph = StateGraph(Direct)
    graph.add_node("agent", direct)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    app = graph.compile(checkpointer=InMemorySaver())
    final = app.invoke({"input": "1 + 2?"}, THREAD)
    assert final == {"input": "1 + 2?", "output": "3", "status": "finished", "llm_calls": 2}
    assert app.get_state(THREAD).values["output"] == "3"
    assert serde_warnings() == []


def test_messages_state_conversation_across_turns(serde_warnings: Callable[[], list[str]]) -> None:
    """MessagesState: as_node(input_key="messages") answers the last human message, appends an AIMessage named
    after the agent, and sees the earlier turns of the thread (restored from the checkpoint) as conversation."""
    chat, llm = agent(finish("Ivan registered last."), finish("ivan@test.com"), name="support")
    graph = StateGraph(MessagesState)
    graph.add_node("support", chat.as_node(input_key="messages"))
    graph.add_edge(START, "support")
    graph.add_edge("support", END)
    app = graph.compile(checkpointer=InMemorySaver())

    app.invoke({"messages": [HumanMessage("Who registered last?")]}, THREAD)
    final = app.invoke({"messages": [HumanMessage("And his email?")]}, THREAD)
    messages = final["messages"]
    assert [m.type for m in messages] == ["human", "ai", "human", "ai"]
    assert isinstance(messages[-1], AIMessage) and messages[-1].content == "ivan@test.com"
    assert messages[-1].name == "support"
    second = llm.calls[1].text
    assert "User: Who registered last?\nAssistant: Ivan registered last." in second
    assert "conversation above): And his email?" in second
    assert "Who registered last?" not in llm.calls[0].text.split("**Task**")[0]
    assert serde_warnings() == []


def test_as_node_runs_async_in_a_graph() -> None:
    """ainvoke of the graph awaits the agent's async run."""
    node_agent, _ = agent(finish("async ok"), name="async_agent")
    graph = StateGraph(Pipeline)
    graph.add_node("a", node_agent.as_node(result_key="result"))
    graph.add_edge(START, "a")
    graph.add_edge("a", END)
    final = asyncio.run(graph.compile().ainvoke({"input": "x"}))
    assert final["output"] == "async ok" and final["result"]["status"] == "finished"


def test_as_node_names_the_missing_state_key() -> None:
    """A node whose input key is not in the state says which key it reads and which keys arrived."""
    node = AgentNode(agent(name="n")[0], input_key="question")
    with pytest.raises(ConfigError, match=r"state\['question'\].*\['input'\]"):
        node.invoke({"input": "x"})
    with pytest.raises(ConfigError, match="input_key"):
        agent(name="n")[0].as_node(input_key="")


class Fanout(TypedDict, total=False):
    input: str
    answers: Annotated[list[str], operator.add]


def test_agents_as_parallel_branches() -> None:
    """Two agents on parallel branches of one graph, their answers merged by a reducer."""
    first, _ = agent(finish("from first"), name="first")
    second, _ = agent(finish("from second"), name="second")
    graph = StateGraph(Fanout)
    graph.add_node("first", lambda s: {"answers": [first.invoke(s["input"]).output]})
    graph.add_node("second", lambda s: {"answers": [second.invoke(s["input"]).output]})
    graph.add_edge(START, "first")
    graph.add_edge(START, "second")
    graph.add_edge("first", END)
    graph.add_edge("second", END)
    assert sorted(graph.compile().invoke({"input": "x"})["answers"]) == ["from first", "from second"]
