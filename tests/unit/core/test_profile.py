"""A model's agent profile: ``ReactAgent(LocalChatModel(), tools)`` uses the compact prompt set of its language
and worked examples generated from the tools' schemas, unless the user says otherwise."""

from __future__ import annotations

from langchain_core.tools import StructuredTool

from react_agent import Example, ReactAgent, examples_for_tools
from react_agent.models import LocalChatModel
from react_agent.testing import ScriptedChatModel


def create_ticket(title: str, priority: int) -> str:
    """Create a support ticket."""
    return "ok"


TOOLS = [StructuredTool.from_function(create_ticket)]


def test_a_local_model_gets_the_compact_prompt_and_generated_examples() -> None:
    agent = ReactAgent(LocalChatModel(), TOOLS)
    assert agent.config.prompts == "ru-compact"
    assert list(agent.examples) == examples_for_tools(TOOLS, lang="ru")
    english = ReactAgent(LocalChatModel(), TOOLS, lang="en")
    assert english.config.prompts == "en-compact" and list(english.examples) == examples_for_tools(TOOLS, lang="en")
    assert list(ReactAgent(LocalChatModel(), TOOLS, prompts="en").examples) == examples_for_tools(TOOLS, lang="en")


def test_a_wrapped_local_model_keeps_its_profile() -> None:
    agent = ReactAgent(LocalChatModel().bind(max_tokens=64), TOOLS, prompts="en-compact")
    assert list(agent.examples) == examples_for_tools(TOOLS, lang="en")


def test_what_the_user_gives_wins() -> None:
    own = [Example(task="Close ticket QX-0", answer={"action": "FINISH", "action_input": "done"})]
    agent = ReactAgent(LocalChatModel(), TOOLS, prompts="en", examples=own)
    assert agent.config.prompts == "en" and list(agent.examples) == own
    assert ReactAgent(LocalChatModel(), TOOLS, examples=()).examples == ()


def test_other_models_get_no_profile() -> None:
    agent = ReactAgent(ScriptedChatModel([]), TOOLS)
    assert agent.config.prompts == "ru" and agent.examples == ()
