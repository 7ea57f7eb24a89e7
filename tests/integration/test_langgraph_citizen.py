"""An agent in a real LangGraph graph by LangGraph's conventions: the answer appended to ``messages``, tool
calls as message pairs, steps on the custom stream, decisions kept out of the messages stream, any
message-like input, and a human-in-the-loop ``interrupt()`` before a tool that needs approval."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import call, finish
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from react_agent import AgentStep, ConfigError, ReactAgent
from react_agent.testing import FunctionChatModel, ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def one_node_graph(node: Any, *, after: Any = None) -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("agent", node)
    graph.add_edge(START, "agent")
    if after is None:
        graph.add_edge("agent", END)
    else:
        graph.add_node("after", after)
        graph.add_edge("agent", "after")
        graph.add_edge("after", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_the_agent_itself_as_a_node_appends_its_answer_to_messages() -> None:
    """graph.add_node("agent", agent) in a MessagesState graph: the next node sees the answer as an AIMessage
    named after the agent, and the checkpoint holds it."""
    llm = ScriptedChatModel([call("add", a=2, b=3), finish("2 + 3 = 5")])
    agent = ReactAgent(llm, [add], prompts="en", name="calculator")
    seen: list[list[BaseMessage]] = []

    def after(state: MessagesState) -> dict[str, Any]:
        seen.append(list(state["messages"]))
        return {}

    app = one_node_graph(agent, after=after)
    final = app.invoke({"messages": [HumanMessage("What is 2 + 3?")]}, thread("direct"))
    assert [m.type for m in final["messages"]] == ["human", "ai"]
    answer = final["messages"][-1]
    assert isinstance(answer, AIMessage) and answer.content == "2 + 3 = 5" and answer.name == "calculator"
    assert seen[0][-1].content == "2 + 3 = 5"
    assert app.get_state(thread("direct")).values["messages"][-1].content == "2 + 3 = 5"
    assert "What is 2 + 3?" in llm.calls[0].text


def test_as_node_answers_the_last_human_message_with_earlier_turns_as_conversation() -> None:
    """as_node() with no arguments in a MessagesState graph: a second turn on the same thread is answered with
    the first turn (restored from the checkpointer) shown as the conversation."""
    llm = ScriptedChatModel([finish("Anna registered last."), finish("anna@example.com")])
    app = one_node_graph(ReactAgent(llm, [add], prompts="en", name="support").as_node())
    app.invoke({"messages": [("user", "Who registered last?")]}, thread("turns"))
    final = app.invoke({"messages": [{"role": "user", "content": "And her email?"}]}, thread("turns"))
    assert [m.type for m in final["messages"]] == ["human", "ai", "human", "ai"]
    assert final["messages"][-1].content == "anna@example.com"
    assert "Who registered last?" in llm.calls[1].text and "Anna registered last." in llm.calls[1].text
    assert "And her email?" in llm.calls[1].text


def test_tool_calls_become_ai_and_tool_message_pairs() -> None:
    """as_node(tool_messages=True): each tool call is an AIMessage(tool_calls=...) followed by its ToolMessage
    (matching ids), then the answer, as a tool-calling agent of LangChain writes them."""
    llm = ScriptedChatModel([call("add", a=2, b=3), call("add", a=5, b=1), finish("6")])
    app = one_node_graph(ReactAgent(llm, [add], prompts="en", name="calc").as_node(tool_messages=True))
    messages = app.invoke({"messages": [HumanMessage("2 + 3 + 1?")]}, thread("pairs"))["messages"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage",
                                                    "ToolMessage", "AIMessage"]
    first_call, first_result = messages[1], messages[2]
    assert isinstance(first_call, AIMessage) and isinstance(first_result, ToolMessage)
    assert first_call.tool_calls[0]["name"] == "add" and first_call.tool_calls[0]["args"] == {"a": 2, "b": 3}
    assert first_result.tool_call_id == first_call.tool_calls[0]["id"] and first_result.content == "5"
    assert messages[3].tool_calls[0]["id"] != first_call.tool_calls[0]["id"]
    assert messages[-1].content == "6" and not messages[-1].tool_calls


def test_steps_reach_the_custom_stream_and_decisions_stay_out_of_the_messages_stream() -> None:
    """stream_mode=["custom", "messages"]: one custom chunk per step (rebuildable as AgentStep); the messages
    stream shows the answer but none of the protocol JSON of the decisions."""
    llm = ScriptedChatModel([call("add", a=2, b=3), finish("five")])
    app = one_node_graph(ReactAgent(llm, [add], prompts="en", name="calc"))
    custom, streamed = [], []
    for mode, chunk in app.stream({"messages": [HumanMessage("2 + 3?")]}, thread("stream"),
                                  stream_mode=["custom", "messages"]):
        (custom if mode == "custom" else streamed).append(chunk)
    assert [c["index"] for c in custom] == [1, 2] and {c["agent"] for c in custom} == {"calc"}
    steps = [AgentStep.model_validate(c["step"]) for c in custom]
    assert [s.action for s in steps] == ["add", "FINISH"] and steps[0].observation == "5"
    texts = [str(message.content) for message, _ in streamed]
    assert not any('"action"' in text for text in texts)


def test_decisions_reach_the_messages_stream_when_asked() -> None:
    """The documented switch: config metadata react_agent_stream_decisions=True lets the decision calls into
    stream_mode="messages", tagged react_agent:decision."""
    llm = ScriptedChatModel([finish("ok")])
    app = one_node_graph(ReactAgent(llm, [add], prompts="en", name="calc"))
    config = {**thread("shown"), "metadata": {"react_agent_stream_decisions": True}}
    streamed = list(app.stream({"messages": [HumanMessage("hi")]}, config, stream_mode="messages"))
    decisions = [m for m, meta in streamed if "react_agent:decision" in (meta.get("tags") or [])]
    assert decisions and '"FINISH"' in str(decisions[0].content)


@pytest.mark.parametrize("task", [
    [("user", "What is 2 + 3?")],
    [{"role": "user", "content": "What is 2 + 3?"}],
    {"role": "user", "content": "What is 2 + 3?"},
    {"messages": [("system", "be brief"), ("user", "What is 2 + 3?")]},
])
def test_message_like_inputs_are_tasks(task: Any) -> None:
    """invoke takes what convert_to_messages takes: (role, text) pairs, OpenAI-style dicts, one dict message."""
    llm = ScriptedChatModel([finish("5")])
    result = ReactAgent(llm, [add], prompts="en").invoke(task)
    assert result.output == "5" and "What is 2 + 3?" in llm.calls[0].text


def test_a_malformed_message_list_names_the_accepted_forms() -> None:
    with pytest.raises(ConfigError, match=r"\(role, text\) pairs"):
        ReactAgent(ScriptedChatModel([]), [add], prompts="en").invoke([{"role": "user"}])


def approve_in_graph(tool_name: str, action_input: Any) -> bool:
    """The human in the loop: LangGraph pauses the graph here and resumes with the human's decision."""
    return bool(interrupt({"tool": tool_name, "args": action_input}))


def deleting_model() -> FunctionChatModel:
    def reply(messages: list[BaseMessage]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        if "deleted anna" in text:
            return finish("Anna was deleted.")
        if "denied" in text.lower() or "not approved" in text.lower():
            return finish("The deletion was not approved.")
        return call("delete_user", name="anna")
    return FunctionChatModel(function=reply)


@pytest.mark.parametrize(("decision", "answer", "deleted"), [(True, "Anna was deleted.", True),
                                                             (False, "The deletion was not approved.", False)])
def test_interrupt_before_a_tool_that_needs_approval(decision: bool, answer: str, deleted: bool) -> None:
    """approve= calls LangGraph's interrupt(): the graph pauses before the tool with the call as the interrupt
    value, nothing is deleted; Command(resume=decision) re-runs the node and the decision is honoured."""
    runs: list[str] = []

    def delete_user(name: str) -> str:
        """Delete a user."""
        runs.append(name)
        return f"deleted {name}"

    deleting = StructuredTool.from_function(delete_user, metadata={"requires_approval": True})
    llm = deleting_model()
    agent = ReactAgent(llm, [deleting], prompts="en", name="admin", approve=approve_in_graph)
    app = one_node_graph(agent)
    config = thread(f"approval-{decision}")
    paused = app.invoke({"messages": [HumanMessage("Delete the user anna")]}, config)
    assert runs == []
    (pending,) = paused["__interrupt__"]
    assert pending.value == {"tool": "delete_user", "args": {"name": "anna"}}
    assert app.get_state(config).next == ("agent",)

    final = app.invoke(Command(resume=decision), config)
    assert runs == (["anna"] if deleted else [])
    assert final["messages"][-1].content == answer and final["messages"][-1].name == "admin"
    assert json.dumps([m.type for m in final["messages"]]) == '["human", "ai"]'


def test_async_graph_streams_steps_and_appends_the_answer() -> None:
    """The async path (graph.astream) writes the same custom chunks and the same answer message."""
    import asyncio

    llm = ScriptedChatModel([call("add", a=1, b=1), finish("2")])
    app = one_node_graph(ReactAgent(llm, [add], prompts="en", name="calc"))

    async def main() -> tuple[list[Any], Any]:
        chunks = [c async for c in app.astream({"messages": [HumanMessage("1 + 1?")]}, thread("async"),
                                               stream_mode="custom")]
        return chunks, (await app.aget_state(thread("async"))).values

    chunks, values = asyncio.run(main())
    assert [c["step"]["action"] for c in chunks] == ["add", "FINISH"]
    assert values["messages"][-1].content == "2" and values["messages"][-1].name == "calc"
