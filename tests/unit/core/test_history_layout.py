"""``history_layout="messages"``: the step prompt stays as on the first step and each decision follows it as chat
turns (the decision's JSON from the assistant, its results from the user), which is what instruct models are
tuned on; ``LocalChatModel`` on a model with a chat template asks for it through its profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool

from react_agent import ConfigError, ReactAgent
from react_agent.models import LocalChatModel
from react_agent.testing import ScriptedChatModel


def lookup(city: str) -> str:
    """Look up a city."""
    return f"{city}: 12 degrees"


def population(city: str) -> str:
    """Population of a city."""
    return f"{city}: 1000 people"


TOOLS = [StructuredTool.from_function(lookup), StructuredTool.from_function(population)]


def _call(action: str, **args: Any) -> str:
    return json.dumps({"thought": f"use {action}", "action": action, "action_input": args})


FINISH = json.dumps({"thought": "done", "action": "FINISH", "action_input": "It is 12 degrees."})


def _agent(replies: list[str], **options: Any) -> tuple[ReactAgent, ScriptedChatModel]:
    llm = ScriptedChatModel(replies)
    options.setdefault("prompts", "en")
    return ReactAgent(llm, TOOLS, history_layout="messages", **options), llm


def test_each_decision_follows_the_unchanged_first_prompt_as_an_assistant_and_a_user_turn() -> None:
    agent, llm = _agent([_call("lookup", city="Oslo"), _call("population", city="Oslo"), FINISH])
    result = agent.run("Weather and population of Oslo")
    assert result.status == "finished"
    first, second, third = (call.messages for call in llm.calls)
    assert len(first) == 1 and isinstance(first[0], HumanMessage)
    assert second[0].content == first[0].content == third[0].content  # the prefix never changes
    assert [type(m) for m in third] == [HumanMessage, AIMessage, HumanMessage, AIMessage, HumanMessage]
    assert json.loads(str(second[1].content)) == {"thought": "use lookup", "action": "lookup",
                                                   "action_input": {"city": "Oslo"}}
    assert second[2].content == "Result of lookup: Oslo: 12 degrees"
    assert third[4].content == "Result of population: Oslo: 1000 people"


def test_the_prompt_layout_stays_the_default() -> None:
    llm = ScriptedChatModel([_call("lookup", city="Oslo"), FINISH])
    ReactAgent(llm, TOOLS, prompts="en").run("Weather in Oslo")
    assert len(llm.calls[1].messages) == 1 and "Oslo: 12 degrees" in llm.calls[1].text


def test_an_unparseable_reply_comes_back_as_its_text_and_the_feedback() -> None:
    agent, llm = _agent(["no json here " * 500, FINISH], max_observation_chars=100)
    agent.run("Weather in Oslo")
    ai, feedback = llm.calls[1].messages[1:]
    assert isinstance(ai, AIMessage) and str(ai.content).startswith("no json here") and len(str(ai.content)) < 400
    assert isinstance(feedback, HumanMessage) and str(feedback.content).startswith("Your answer could not be parsed.")


def test_parallel_calls_are_one_assistant_turn_and_one_user_turn() -> None:
    both = json.dumps([json.loads(_call("lookup", city="Oslo")), json.loads(_call("population", city="Oslo"))])
    agent, llm = _agent([both, FINISH], max_parallel_calls=2)
    agent.run("Weather and population of Oslo")
    ai, results = llm.calls[1].messages[1:]
    assert [c["action"] for c in json.loads(str(ai.content))] == ["lookup", "population"]
    assert results.content == "Result of lookup: Oslo: 12 degrees\n\nResult of population: Oslo: 1000 people"


def test_the_history_window_keeps_the_last_decisions() -> None:
    replies = [_call("lookup", city=c) for c in ("A", "B", "C")] + [FINISH]
    agent, llm = _agent(replies, history_window=1)
    agent.run("Weather in A, B and C")
    assert [type(m) for m in llm.calls[3].messages] == [HumanMessage, AIMessage, HumanMessage]
    assert "C: 12 degrees" in str(llm.calls[3].messages[2].content)


def test_russian_prompts_have_their_own_observation_text() -> None:
    agent, llm = _agent([_call("lookup", city="Осло"), FINISH], prompts="ru")
    agent.run("Погода в Осло")
    assert llm.calls[1].messages[2].content == "Результат lookup: Осло: 12 degrees"


def test_a_prompt_folder_can_override_the_observation_turn(tmp_path: Path) -> None:
    (tmp_path / "observation.jinja").write_text("{{ action }} said: {{ observation }}", encoding="utf-8")
    agent, llm = _agent([_call("lookup", city="Oslo"), FINISH], prompts=str(tmp_path), lang="en")
    agent.run("Weather in Oslo")
    assert llm.calls[1].messages[2].content == "lookup said: Oslo: 12 degrees"


def test_a_wrong_layout_is_a_config_error_naming_the_choices() -> None:
    with pytest.raises(ConfigError, match="history_layout must be 'prompt' or 'messages'"):
        ReactAgent(ScriptedChatModel([]), TOOLS, history_layout="chat")


@pytest.mark.parametrize(("options", "profile"), [
    ({"model": "qwen2.5-coder-1.5b"}, "chat"),
    ({"model": "qwen2.5-coder-0.5b"}, "chat"),
    ({"model": "gemma-3-270m"}, "compact"),
    ({"model": "qwen2.5-coder-1.5b", "prompt_format": "plain"}, "compact"),
    ({"model_path": "/nonexistent/own.gguf", "prompt_format": "chat"}, "chat"),
])
def test_a_local_model_on_its_chat_template_asks_for_chat_turns(options: dict[str, Any], profile: str) -> None:
    llm = LocalChatModel(**options)  # nothing is loaded: the profile comes from the catalogue or the options
    assert llm.agent_profile == profile
    agent = ReactAgent(llm, TOOLS, lang="en")
    assert agent.config.prompts == "en-compact"
    assert agent.config.history_layout == ("messages" if profile == "chat" else "prompt")


def test_the_user_s_layout_wins_over_the_profile() -> None:
    agent = ReactAgent(LocalChatModel(model="qwen2.5-coder-1.5b"), TOOLS, lang="en", history_layout="prompt")
    assert agent.config.history_layout == "prompt"
