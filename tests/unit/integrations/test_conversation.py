"""Conversations: previous turns (chat_history or a Conversation) reach the prompt; tool steps stay per run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import call, finish
from langchain_core.messages import AIMessage, HumanMessage, messages_from_dict, messages_to_dict
from langchain_core.tools import BaseTool

from react_agent import ConfigError, Conversation, ReactAgent
from react_agent.testing import ScriptedChatModel

HISTORY = [("human", "Who registered last?"), ("ai", "Ivan registered last.")]
SHOWN = "User: Who registered last?\nAssistant: Ivan registered last."


def agent_with(seed_tools: list[BaseTool], *replies: str, **options: Any) -> tuple[ReactAgent, ScriptedChatModel]:
    llm = ScriptedChatModel(list(replies))
    options.setdefault("prompts", "en")
    return ReactAgent(llm, seed_tools, **options), llm


def test_chat_history_makes_a_follow_up_answerable(seed_tools: list[BaseTool], users: dict[str, str]) -> None:
    """`and his email?` after a turn about Ivan: the prompt shows the turns, so the model can look Ivan up."""
    users["Ivan"] = "ivan@test.com"
    agent, llm = agent_with(seed_tools, call("search_db", username="Ivan"), finish("ivan@test.com"))
    result = agent.run("And his email?", chat_history=HISTORY)
    assert result.output == "ivan@test.com"
    first = llm.calls[0].text
    assert f"The conversation so far:\n{SHOWN}\n\nThe user's new request" in first
    assert "(read it in the light of the conversation above): And his email?" in first


def test_chat_history_in_dict_input_and_invoke_kwargs(seed_tools: list[BaseTool]) -> None:
    """Runnable inputs carry it too: {"input": ..., "chat_history": [...]} or invoke(..., chat_history=...)."""
    agent, llm = agent_with(seed_tools, finish("a"), finish("b"))
    agent.invoke({"input": "And his email?", "chat_history": [HumanMessage("Who registered last?"),
                                                                AIMessage("Ivan registered last.")]})
    agent.invoke("And his email?", chat_history=HISTORY)
    assert SHOWN in llm.calls[0].text and SHOWN in llm.calls[1].text


def test_no_history_leaves_the_prompt_as_it_was(seed_tools: list[BaseTool]) -> None:
    """Without history (or an empty one) the task is shown as it is."""
    agent, llm = agent_with(seed_tools, finish("a"), finish("b"))
    agent.run("Find Ivan")
    agent.run("Find Ivan", chat_history=[])
    for recorded in llm.calls:
        assert "**Task**: Find Ivan\n" in recorded.text and "conversation" not in recorded.text


def test_russian_conversation_template(seed_tools: list[BaseTool]) -> None:
    agent, llm = agent_with(seed_tools, finish("a"), prompts="ru")
    agent.run("А его почта?", chat_history=[("human", "Кто зарегистрировался последним?"), ("ai", "Иван.")])
    assert "Пользователь: Кто зарегистрировался последним?\nАссистент: Иван." in llm.calls[0].text
    assert "Новый запрос пользователя (понимай его с учётом диалога выше): А его почта?" in llm.calls[0].text


@pytest.mark.parametrize("bad", ["just text", {"role": "user"}, 42, [42]])
def test_wrong_chat_history_is_a_config_error(seed_tools: list[BaseTool], bad: Any) -> None:
    agent, _ = agent_with(seed_tools)
    with pytest.raises(ConfigError, match="chat_history must be a list of messages"):
        agent.run("x", chat_history=bad)


def test_tool_messages_and_tool_call_only_replies_are_not_turns(seed_tools: list[BaseTool]) -> None:
    """What crosses turns is what was said: tool messages and empty tool-call replies are left out."""
    from langchain_core.messages import ToolMessage

    agent, llm = agent_with(seed_tools, finish("a"))
    agent.run("next", chat_history=[HumanMessage("q"), AIMessage("", tool_calls=[
        {"name": "search_db", "args": {"username": "x"}, "id": "1"}]), ToolMessage("secret rows", tool_call_id="1"),
        AIMessage("answer")])
    assert "User: q\nAssistant: answer\n" in llm.calls[0].text and "secret rows" not in llm.calls[0].text


# --------------------------------------------------------------------------- Conversation
def test_conversation_keeps_turns_but_not_tool_steps(seed_tools: list[BaseTool], users: dict[str, str]) -> None:
    """A Conversation passes the earlier questions and answers to each run; the tool steps of a run stay in it."""
    agent, llm = agent_with(seed_tools, call("register_user", username="Ivan", email="ivan@test.com"),
                            finish("Ivan is registered."), call("search_db", username="Ivan"),
                            finish("His email is ivan@test.com."))
    chat = Conversation(agent)
    chat.run("Register Ivan with ivan@test.com")
    result = chat.run("And what is his email?")
    assert result.output == "His email is ivan@test.com."
    follow_up = llm.calls[2].text
    assert "User: Register Ivan with ivan@test.com\nAssistant: Ivan is registered." in follow_up
    assert "успешно зарегистрирован" not in follow_up  # run 1's tool observation stayed in run 1
    assert [m.type for m in chat.messages] == ["human", "ai", "human", "ai"] and len(chat) == 4


def test_conversation_is_checkpointable_and_continues(seed_tools: list[BaseTool]) -> None:
    """Its messages serialise as plain LangChain message dicts; a new Conversation continues from them."""
    agent, llm = agent_with(seed_tools, finish("Ivan."), finish("ivan@test.com"))
    first = Conversation(agent)
    first.run("Who registered last?")
    saved = json.dumps(messages_to_dict(first.messages))
    again = Conversation(agent, messages_from_dict(json.loads(saved)))
    again.run("And his email?")
    assert "User: Who registered last?\nAssistant: Ivan." in llm.calls[1].text
    assert len(first) == 2 and len(again) == 4


def test_conversations_on_one_agent_are_independent(seed_tools: list[BaseTool]) -> None:
    """The agent keeps no history: two conversations with one agent never see each other's turns."""
    agent, llm = agent_with(seed_tools, finish("A1"), finish("B1"), finish("A2"))
    a, b = Conversation(agent), Conversation(agent)
    a.run("alpha question")
    b.run("beta question")
    a.run("alpha follow-up")
    assert "beta" not in llm.calls[2].text and "alpha question" in llm.calls[2].text
    assert "alpha" not in llm.calls[1].text


def test_max_turns_bounds_the_history_shown(seed_tools: list[BaseTool]) -> None:
    agent, llm = agent_with(seed_tools, finish("1"), finish("2"), finish("3"))
    chat = Conversation(agent, max_turns=1)
    for question in ("first?", "second?", "third?"):
        chat.run(question)
    assert "second?" in llm.calls[2].text and "first?" not in llm.calls[2].text
    assert len(chat.messages) == 6
    with pytest.raises(ConfigError, match="max_turns"):
        Conversation(agent, max_turns=0)


def test_conversation_arun(seed_tools: list[BaseTool]) -> None:
    agent, llm = agent_with(seed_tools, finish("one"), finish("two"))
    chat = Conversation(agent)

    async def talk() -> None:
        await chat.arun("q1")
        await chat.arun("q2")

    asyncio.run(talk())
    assert "User: q1\nAssistant: one" in llm.calls[1].text
    chat.clear()
    assert chat.messages == []


def test_conversation_needs_an_agent() -> None:
    with pytest.raises(ConfigError, match="Conversation needs a react_agent agent"):
        Conversation(ScriptedChatModel([]))  # type: ignore[arg-type]


def test_a_resumed_run_keeps_its_conversation(tmp_path: Path, seed_tools: list[BaseTool]) -> None:
    """The task is journaled with its conversation, so a resume shows the same prompt (composed once)."""
    journal = tmp_path / "runs.jsonl"
    agent, _ = agent_with(seed_tools, call("search_db", username="Ivan"))
    crashed = agent.run("And his email?", chat_history=HISTORY, journal=journal)
    assert crashed.status == "error"  # the script ran out: the model "failed"
    resumed_agent, llm = agent_with(seed_tools, finish("ivan@test.com"))
    result = resumed_agent.resume(journal)
    assert result.status == "finished"
    assert llm.calls[0].text.count(SHOWN) == 1
