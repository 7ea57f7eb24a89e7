"""``examples_for_tools``: one worked example per tool from its schema, with values of the form the schema asks
for that no user would type, and no example at all for a tool whose constraints no sample meets."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pytest
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from react_agent import ConfigError, ReactAgent, examples_for_tools
from react_agent.testing import ScriptedChatModel
from react_agent.tools._examples import pattern_sample


@pytest.mark.parametrize("pattern", [r"^D-\d+$", r"[A-Z]{3}", r"^\w+@\w+\.org$", r"^T-\d{4}$",
                                     r"^[a-z0-9_]{3,16}$", r"\d+\.\d+", r"^INV/\d{2,}$"])
def test_a_simple_pattern_gets_a_sample_it_matches(pattern: str) -> None:
    sample = pattern_sample(pattern)
    assert sample is not None and re.search(pattern, sample)


@pytest.mark.parametrize("pattern", [r"^(a|b)$", r"^(?=x)\d$", r"[^0-9]+", r"^\p{L}+$"])
def test_a_pattern_beyond_the_simple_kind_gets_no_sample(pattern: str) -> None:
    assert pattern_sample(pattern) is None


class DealArgs(BaseModel):
    deal_id: str = Field(pattern=r"^D-\d+$", description="Deal id")
    stage: str


class OddArgs(BaseModel):
    code: str = Field(pattern=r"^(red|blue)-\d$")


def update_deal(deal_id: str, stage: str) -> str:
    """Move a deal to a stage."""
    return "ok"


def odd(code: str) -> str:
    """Check a code."""
    return "ok"


DEAL = StructuredTool.from_function(update_deal, args_schema=DealArgs)
ODD = StructuredTool.from_function(odd, args_schema=OddArgs)


def test_a_patterned_argument_gets_a_value_its_tool_accepts() -> None:
    (example,) = examples_for_tools([DEAL], irrelevant=False)
    assert re.fullmatch(r"D-\d+", example.answer.action_input["deal_id"])


def test_a_tool_no_sample_can_satisfy_gets_no_example_and_the_agent_still_builds() -> None:
    examples = examples_for_tools([DEAL, ODD], irrelevant=False)
    assert [e.answer.action for e in examples] == ["update_deal"]

    class Compact(ScriptedChatModel):
        agent_profile: ClassVar[str] = "compact"

    agent = ReactAgent(Compact([]), [DEAL, ODD], lang="en")
    assert [e.answer.action for e in agent.examples if e.answer.action != "FINISH"] == ["update_deal"]


class MeetingArgs(BaseModel):
    title: str
    start_time: str = Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="Start time, HH:MM")


def meeting(title: str, start_time: str) -> str:
    """Add a meeting."""
    return "ok"


MEETING = StructuredTool.from_function(meeting, args_schema=MeetingArgs)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_pattern_beyond_the_sampler_takes_an_example_value_it_accepts(lang: str) -> None:
    (example,) = examples_for_tools([MEETING], irrelevant=False, lang=lang)
    assert re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", example.answer.action_input["start_time"])


def test_a_value_its_pattern_accepts_is_kept() -> None:
    class Plain(BaseModel):
        email: str

    class Patterned(BaseModel):
        email: str = Field(pattern=r"^(\S+)@(\S+)$")  # groups: beyond the sampler

    def mail(email: str) -> str:
        """Send a mail."""
        return "ok"

    (plain,) = examples_for_tools([StructuredTool.from_function(mail, args_schema=Plain)], irrelevant=False)
    (patterned,) = examples_for_tools([StructuredTool.from_function(mail, args_schema=Patterned)], irrelevant=False)
    assert patterned.answer.action_input["email"] == plain.answer.action_input["email"]


def contact(name: str, email: str, city: str, company: str) -> str:
    """Add a contact."""
    return "ok"


def test_example_values_are_invented_not_what_users_type() -> None:
    (example,) = examples_for_tools([StructuredTool.from_function(contact)], irrelevant=False)
    values = example.answer.action_input
    assert values["email"].endswith((".example.org", "@example.org", "@example.net"))
    common = {"anna", "john", "paris", "london", "moscow", "acme", "google", "ivan", "maria"}
    assert not {str(v).lower() for v in values.values()} & common
    assert len(set(values.values())) == len(values)  # every argument its own value


def test_russian_examples_keep_names_places_and_companies_in_russian() -> None:
    (example,) = examples_for_tools([StructuredTool.from_function(contact)], lang="ru", irrelevant=False)
    values = example.answer.action_input
    for key in ("name", "city", "company"):
        assert re.fullmatch(r"[А-Яа-яЁё ]+", values[key]), values
    assert values["email"].isascii()  # an address keeps its form
    for key in ("name", "city", "company"):
        assert values[key] in example.task


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_an_examples_thought_names_every_value_of_its_call(lang: str) -> None:
    (example,) = examples_for_tools([StructuredTool.from_function(contact)], lang=lang, irrelevant=False)
    for value in example.answer.action_input.values():
        assert str(value) in example.answer.thought, (value, example.answer.thought)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_no_tool_example_answers_the_question_itself(lang: str) -> None:
    first = examples_for_tools([StructuredTool.from_function(contact)], lang=lang)[0]
    assert first.answer.action == "FINISH" and not first.steps
    assert "60" in first.answer.action_input  # an answer, not a refusal


@pytest.mark.parametrize("tools", [5, "lookup", None])
def test_examples_for_something_other_than_a_list_of_tools_is_a_config_error(tools: Any) -> None:
    with pytest.raises(ConfigError, match="examples_for_tools: tools must be a list of tools"):
        examples_for_tools(tools)


def trip(start: str, end: str, start_date: str, end_time: str, gender: str, sender: str, original_text: str) -> str:
    """Plan a trip."""
    return "ok"


def test_an_argument_gets_the_kind_its_whole_words_name() -> None:
    (example,) = examples_for_tools([StructuredTool.from_function(trip)], irrelevant=False)
    values = example.answer.action_input
    places = {"Velmora", "Quarnby", "Ostrelin"}
    assert {values["start"], values["end"]} <= places  # a route's ends are places
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", values["start_date"])  # a start date is a date, not a place
    assert re.fullmatch(r"\d{2}:\d{2}", values["end_time"])
    for key in ("gender", "sender", "original_text"):  # "end", "origin" inside a longer word name no place
        assert values[key] not in places, (key, values[key])
