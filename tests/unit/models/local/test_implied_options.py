"""Session-5 decision techniques of the local model, without the model: spelled-out numbers, tools a task
names (``commit_named``) and optional arguments a task asks for in words (``implied_options``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from react_agent import ConfigError, ReactAgent, RunState
from react_agent._types import FINISH
from react_agent.models import LocalChatModel
from react_agent.models.local._decoding import (
    named_tools,
    opening_turn,
    should_abstain,
    spelled_numbers,
    ungrounded,
    with_argument_descriptions,
)
from react_agent.models.local._model import TECHNIQUES, _staged_answer
from react_agent.models.local._values import (
    VALUE_TECHNIQUES,
    anchored_numbers,
    corrected,
    implied_options,
    number_mentions,
    overlapping_optionals,
    shared_values,
    sibling_order,
    task_numbers,
    whole_names,
)
from react_agent.testing import ScriptedChatModel
from react_agent.tools._examples import examples_for_tools
from react_agent.tools._schema import answer_schema


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


def _tool(name: str, description: str, props: dict[str, Any], required: list[str] | None = None) -> StructuredTool:
    schema = _schema(props, list(props) if required is None else required)
    return StructuredTool(name=name, description=description, args_schema=schema, func=lambda **kw: "ok")


class _Script:
    """A scripted ``complete(prompt, schema, ...)``: returns the next reply, records each call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, Mapping[str, Any]]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append((prompt, schema))
        return self.replies.pop(0)


def _offered(schema: Mapping[str, Any]) -> list[str]:
    return [b["properties"]["action"]["const"] for b in schema["anyOf"]]


def _prompt(task: str, tools: list[StructuredTool], *, examples: bool = True) -> str:
    """The compact prompt for ``task``, with worked examples generated from ``tools`` (as the demo and the
    benchmark use them) unless ``examples`` is false."""
    agent = ReactAgent(ScriptedChatModel(["unused"]), tools, prompts="en-compact",
                       examples=examples_for_tools(tools) if examples else ())
    [message] = agent.build_messages(RunState(task))
    return str(message.content) + "\n"


# --------------------------------------------------------------------------- spelled-out numbers


def test_spelled_numbers_are_read_in_english_and_russian() -> None:
    text = "rolling a six on a six-sided die twice, twenty-five guests, a dozen eggs; две ночи для трёх гостей"
    assert [v for v, _, _ in spelled_numbers(text)] == [6, 2, 25, 12, 2, 3]
    six = spelled_numbers(text)[0]
    assert text[six[1]:six[2]] == "six"
    assert spelled_numbers("someone is alone; the sixth; oneself") == []  # whole words only
    assert spelled_numbers("nothing here") == []
    assert [v for v, _, _ in spelled_numbers("compounded quarterly, paid monthly, ежемесячно")] == [4, 12, 12]


def test_spelled_numbers_count_as_written_numbers() -> None:
    task = "What's the probability of rolling a six on a die twice in a row?"
    assert task_numbers(task) == {6.0, 2.0}
    found = number_mentions("book a room for two nights")
    assert [(v, b) for v, _, b, _ in found] == [(2.0, ["book", "a", "room", "for"])]
    schema = _schema({"desired_number": {"type": "integer"}, "number_of_rolls": {"type": "integer"}},
                     ["desired_number", "number_of_rolls"])
    assert not should_abstain({"desired_number": 6, "number_of_rolls": 2}, schema, task)
    assert should_abstain({"desired_number": 3, "number_of_rolls": 2}, schema, task)  # 3 is still invented
    assert ungrounded({"desired_number": 3, "number_of_rolls": 2}, schema, task, numbers=True) == ["desired_number"]


# --------------------------------------------------------------------------- tools the task names


def test_named_tools_need_two_words_of_the_name_and_no_call_yet() -> None:
    names = ["book_room", "probability.dice_roll", "find_user"]
    assert named_tools(names, "I would like to book a single room for two nights.") == ["book_room"]
    assert named_tools(names, "roll a die") == []  # one word of the name is not enough
    assert named_tools(names, "find user Ivan") == []  # "find" is a generic verb: one content word
    assert named_tools(names, "book a room\nIteration 1: you called book_room({}). Result: ok") == []
    assert named_tools(names, "book a room", words=3) == []


BOOK = _tool("book_room", "Book a hotel room.", {"hotel": {"type": "string"}, "nights": {"type": "integer"}})
WEATHER = _tool("get_weather", "Current weather of a city.", {"city": {"type": "string"}})


def test_commit_named_withholds_finish_on_the_opening_turn() -> None:
    task = "Please book a room at The Plaza for 2 nights."
    prompt = _prompt(task, [BOOK, WEATHER])
    script = _Script('{"thought": "t", "action": "book_room", ', '{"hotel": "The Plaza", "nights": 2}}')
    text = _staged_answer(script, prompt, answer_schema([BOOK, WEATHER]), two_stage=True, grounding=True,
                          abstain=True, commit_named=True)
    assert FINISH not in _offered(script.calls[0][1])
    assert json.loads(text)["action_input"] == {"hotel": "The Plaza", "nights": 2}

    off = _Script('{"thought": "t", "action": "FINISH", ', '"done"}')
    _staged_answer(off, prompt, answer_schema([BOOK, WEATHER]), two_stage=True, grounding=True, abstain=True)
    assert FINISH in _offered(off.calls[0][1])


def _after_a_step(prompt: str, entry: str) -> str:
    """``prompt`` with the current turn's empty history replaced by ``entry``."""
    head, marker, turn = prompt.rpartition("Now your turn")
    return head + marker + turn.replace("No history yet", entry)


def test_opening_turn_is_told_by_the_examples_empty_history() -> None:
    prompt = _prompt("Please book a room at The Plaza for 2 nights.", [BOOK, WEATHER])
    assert opening_turn(prompt)
    assert not opening_turn(_after_a_step(prompt, "Step 1 gave: ok"))  # a history template of one's own
    assert not opening_turn(_prompt("Please book a room.", [BOOK, WEATHER], examples=False))  # nothing tells
    assert not opening_turn("no marker at all")


def test_commit_named_offers_finish_once_the_tool_was_called_or_when_nothing_is_named() -> None:
    called = _after_a_step(_prompt("Please book a room at The Plaza for 2 nights.", [BOOK, WEATHER]),
                           "Iteration 1: you called book_room({\"hotel\": \"The Plaza\", \"nights\": 2}). Result: ok")
    script = _Script('{"thought": "t", "action": "FINISH", ', '"Booked."}')
    _staged_answer(script, called, answer_schema([BOOK, WEATHER]), two_stage=True, commit_named=True, grounding=False)
    assert FINISH in _offered(script.calls[0][1])

    hidden = _Script('{"thought": "t", "action": "FINISH", ', '"Booked."}')  # no tool name in its history
    _staged_answer(hidden, _after_a_step(_prompt("Please book a room at The Plaza.", [BOOK, WEATHER]), "Done: ok"),
                   answer_schema([BOOK, WEATHER]), two_stage=True, commit_named=True, grounding=False)
    assert FINISH in _offered(hidden.calls[0][1])

    bare = _Script('{"thought": "t", "action": "FINISH", ', '"Booked."}')  # no worked examples
    _staged_answer(bare, _prompt("Please book a room at The Plaza.", [BOOK, WEATHER], examples=False),
                   answer_schema([BOOK, WEATHER]), two_stage=True, commit_named=True, grounding=False)
    assert FINISH in _offered(bare.calls[0][1])

    other = _Script('{"thought": "t", "action": "FINISH", ', '"Paris."}')
    _staged_answer(other, _prompt("What is the capital of France?", [BOOK, WEATHER]), answer_schema([BOOK, WEATHER]),
                   two_stage=True, commit_named=True, grounding=False)
    assert FINISH in _offered(other.calls[0][1])


def test_commit_named_still_lets_abstaining_answer_finish() -> None:
    prompt = _prompt("Please book a room at The Plaza.", [BOOK, WEATHER])
    script = _Script('{"thought": "t", "action": "book_room", ', '{"hotel": "The Plaza", "nights": 7}}',
                     '"How many nights?"}')
    text = _staged_answer(script, prompt, answer_schema([BOOK, WEATHER]), two_stage=True, grounding=False,
                          abstain=True, commit_named=True)
    assert FINISH not in _offered(script.calls[0][1])
    assert '"action": "FINISH"' in text and "How many nights?" in text


# --------------------------------------------------------------------------- options the task asks for


SCULPTURE = _schema({"artist_name": {"type": "string"},
                     "detail": {"type": "boolean", "description": "If True, a detailed description."},
                     "return_type": {"type": "string", "description": "Can be 'list' or 'dictionary'. "
                                                                      "Default is 'list'."}},
                    ["artist_name"])


@pytest.mark.parametrize(("task", "added"), [
    ("Find the latest sculpture by James Plensa with detailed description.", {"detail": True}),
    ("Sculptures by James Plensa as a dictionary.", {"return_type": "dictionary"}),
    ("Sculptures by James Plensa without any details.", {}),
    ("Sculptures by James Plensa, I don't need detail.", {}),
    ("Sculptures by James Plensa as a list or a dictionary.", {}),  # two quoted values named: none chosen
    ("Sculptures by James Plensa.", {}),
    ("Sculptures by James Plensa, with a detailed description!", {"detail": True}),
])
def test_implied_options_adds_what_the_task_spells_out(task: str, added: dict[str, Any]) -> None:
    args = {"artist_name": "James Plensa"}
    assert implied_options(args, SCULPTURE, task) == ({**args, **added} if added else None)


def test_implied_options_keeps_what_the_call_has_and_skips_required_and_odd_schemas() -> None:
    task = "Plensa sculptures with detailed description"
    assert implied_options({"artist_name": "x", "detail": True}, SCULPTURE, task) is None
    kept = {"artist_name": "x", "return_type": "list"}
    assert implied_options(kept, SCULPTURE, "Plensa sculptures as a dictionary") is None  # a value the call has
    required = _schema({"detail": {"type": "boolean"}}, ["detail"])
    assert implied_options({}, required, task) is None
    assert implied_options({}, {"type": "object", "properties": "odd"}, task) is None
    assert implied_options("not a dict", SCULPTURE, task) is None
    flags = _schema({"includeImages": {"type": "boolean"}, "is_open": {"type": "boolean"}}, [])
    assert implied_options({}, flags, "open shops, show me images") == {"includeImages": True, "is_open": True}


def test_implied_options_is_a_value_technique_of_corrected_and_the_model() -> None:
    task = "Find the latest sculpture by James Plensa with detailed description."
    args = {"artist_name": "James Plensa"}
    assert corrected(args, SCULPTURE, task, ["implied_options"]) == {**args, "detail": True}
    assert corrected(args, SCULPTURE, task, [n for n in VALUE_TECHNIQUES if n != "implied_options"]) == args
    assert "implied_options" in VALUE_TECHNIQUES and "commit_named" in TECHNIQUES
    model = LocalChatModel()
    assert model.implied_options is True and model.commit_named is True
    assert "implied_options" not in LocalChatModel(implied_options=False)._values
    for name in ("implied_options", "commit_named"):
        with pytest.raises(ConfigError, match=name):
            LocalChatModel(**{name: "yes"})


def test_a_raw_control_character_in_the_thought_does_not_break_the_staged_answer() -> None:
    """The grammar lets the model write a raw tab or newline inside a JSON string; the staged answer read
    such a thought with ``json.loads`` and raised, and the whole model call failed."""
    prompt = _prompt("Please book a room at The Plaza.", [BOOK, WEATHER])
    script = _Script('{"thought": "book\tit\n", "action": "book_room", ', '{"hotel": "The Plaza", "nights": 7}}',
                     '"How many nights?"}')
    text = _staged_answer(script, prompt, answer_schema([BOOK, WEATHER]), two_stage=True, grounding=False,
                          abstain=True)
    assert json.loads(text, strict=False) == {"thought": "book\tit\n", "action": FINISH,
                                              "action_input": "How many nights?"}
    agent = ReactAgent(ScriptedChatModel(["unused"]), [BOOK, WEATHER], prompts="en-compact")
    assert agent.parse(text).is_finish
    plain = _Script('{"thought": "book\tit", "action": "book_room", ', '{"hotel": "The Plaza", "nights": 2}}')
    text = _staged_answer(plain, _prompt("Please book a room at The Plaza for 2 nights.", [BOOK, WEATHER]),
                          answer_schema([BOOK, WEATHER]), two_stage=True, grounding=True, abstain=True)
    assert agent.parse(text).action_input == {"hotel": "The Plaza", "nights": 2}


def test_implied_options_turns_a_named_flag_the_call_set_false_on() -> None:
    args = {"artist_name": "James Plensa", "detail": False}
    assert implied_options(args, SCULPTURE, "Plensa, with detailed description") == {**args, "detail": True}
    assert implied_options(args, SCULPTURE, "Plensa, without detailed description") is None


# --------------------------------------------------------------------------- numbered siblings


PLACES = _schema({"place1": {"type": "string"}, "place2": {"type": "string"}, "pointA": {"type": "string"},
                  "pointB": {"type": "string"}, "unit_1": {"type": "string"}, "unit_2": {"type": "integer"}}, [])


def test_sibling_order_follows_the_order_the_task_names_the_values() -> None:
    task = "What's the time difference between San Francisco and Sydney?"
    assert sibling_order({"place1": "Sydney", "place2": "San Francisco"}, PLACES, task) == {
        "place1": "San Francisco", "place2": "Sydney"}
    assert sibling_order({"place1": "San Francisco", "place2": "Sydney"}, PLACES, task) is None  # in order
    assert sibling_order({"pointA": "Sydney", "pointB": "San Francisco"}, PLACES, task) == {
        "pointA": "San Francisco", "pointB": "Sydney"}
    assert sibling_order({"place1": "Sydney", "place2": "Tokyo"}, PLACES, task) is None  # Tokyo is not named
    assert sibling_order({"place1": "Sydney", "place2": "Sydney"}, PLACES, task) is None  # one place
    assert sibling_order({"unit_1": "Sydney", "unit_2": 3}, PLACES, task) is None  # not both strings
    assert sibling_order({"place1": "Sydney"}, PLACES, task) is None
    assert sibling_order("odd", PLACES, task) is None
    assert "sibling_order" in VALUE_TECHNIQUES and LocalChatModel().sibling_order is True
    assert corrected({"place1": "Sydney", "place2": "San Francisco"}, PLACES, task,
                     ["sibling_order"]) == {"place1": "San Francisco", "place2": "Sydney"}


def test_argument_descriptions_come_back_from_the_prompt_for_implied_options() -> None:
    """The answer schema adapted for llama.cpp has lost its descriptions; the prompt still lists them, and
    ``implied_options`` reads the quoted values from there."""
    tool = _tool("prime_factorize", "Prime factors of a number.",
                 {"number": {"type": "integer", "description": "The number."},
                  "return_type": {"type": "string", "description": "Can be 'list' or 'dictionary'."}}, ["number"])
    prompt = _prompt("Prime factorization of 60, as a dictionary", [tool, WEATHER])
    bare = _schema({"number": {"type": "integer"}, "return_type": {"type": "string"}}, ["number"])
    described = with_argument_descriptions(bare, prompt, "prime_factorize")
    assert "'dictionary'" in described["properties"]["return_type"]["description"]
    assert with_argument_descriptions(bare, prompt, "no_such_tool") is bare
    assert with_argument_descriptions(described, prompt, "prime_factorize") is described  # nothing to add
    schema = answer_schema([tool, WEATHER])
    for branch in schema["anyOf"]:
        for sub in branch["properties"]["action_input"].get("properties", {}).values():
            sub.pop("description", None)
    script = _Script('{"thought": "t", "action": "prime_factorize", ', '{"number": 60}}')
    text = _staged_answer(script, prompt, schema, two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES))
    assert json.loads(text)["action_input"] == {"number": 60, "return_type": "dictionary"}


# --------------------------------------------------------------------------- whole names

NAMES = _schema({"model": {"type": "string"}, "location": {"type": "string"},
                 "email": {"type": "string", "pattern": "^[^@]+@[^@]+$"}}, [])


@pytest.mark.parametrize(("value", "task", "grown"), [
    ("Gibson", "Price of a used Gibson Les Paul guitar in the Chicago area.", "Gibson Les Paul"),
    ("Louvre", "Open hours for the Louvre Museum in Paris.", "Louvre Museum"),
    ("Bank", "Stock price of Bank of America today", "Bank of America"),
    ("The Weeknd", "When is The Weeknd's concert?", None),  # a possessive ends the name
    ("New York", "Hotels in New York. Then flights.", None),  # punctuation ends it
    ("Gibson", "Gibson guitars and a Gibson Les Paul", None),  # written twice: which one?
    ("guitar", "a guitar Les Paul", None),  # lower case: not the start of a name
    ("Paris", "Museums in Paris", None),
])
def test_whole_names_grows_a_value_to_the_capitalised_name(value: str, task: str, grown: str | None) -> None:
    assert whole_names({"model": value}, NAMES, task) == ({"model": grown} if grown else None)


def test_whole_names_skips_patterned_fields_and_a_sibling_that_has_the_rest() -> None:
    assert whole_names({"email": "Ann"}, NAMES, "mail Ann Lee") is None
    task = "Hotels in San Francisco Bay"
    assert whole_names({"model": "San", "location": "Francisco Bay"}, NAMES, task) is None  # the rest is taken
    assert whole_names({"model": "San"}, NAMES, task) == {"model": "San Francisco Bay"}
    assert "whole_names" in VALUE_TECHNIQUES and LocalChatModel().whole_names is True


def test_whole_names_completes_a_value_cut_inside_a_word() -> None:
    task = "Find state law cases related to land disputes in New York."
    assert whole_names({"model": "land dispute"}, NAMES, task) == {"model": "land disputes"}
    assert whole_names({"model": "land disputes"}, NAMES, task) is None
    assert whole_names({"model": "dispute"}, NAMES, "disputes and disputed claims") is None  # twice: which one?
    assert whole_names({"model": "land dispute", "location": "land disputes"}, NAMES, task) is None


def test_an_optional_value_overlapping_a_siblings_is_dropped() -> None:
    schema = _schema({"entity": {"type": "string"}, "county": {"type": "string"}, "state": {"type": "string"}},
                     ["entity", "county"])
    task = "Search for current lawsuits filed against Apple in Santa Clara County."
    args = {"entity": "Apple", "county": "Santa Clara", "state": "Santa Clara County"}
    assert overlapping_optionals(args, schema, task) == ["state"]
    assert corrected(args, schema, task, ["distinct_values"]) == {"entity": "Apple", "county": "Santa Clara"}
    twice = "Lawsuits in Santa Clara County, Santa Clara County courts"
    assert overlapping_optionals(args, schema, twice) == []  # the task writes it twice: both may be meant
    assert overlapping_optionals({**args, "state": "California"}, schema, task) == []
    assert overlapping_optionals({"entity": "Apple", "county": "CA", "state": "CA County"}, schema, task) == []


def test_a_percentage_feeds_the_rate_and_not_another_number_too() -> None:
    props = {"present_value": {"type": "integer"}, "annual_interest_rate": {"type": "number"},
             "time_years": {"type": "integer"}}
    schema = _schema(props, list(props))
    task = "Future value of a $5000 investment with an annual interest rate of 5% in 3 years."
    args = {"present_value": 5, "annual_interest_rate": 0.05, "time_years": 3}
    assert shared_values(args, schema, task) == [("annual_interest_rate", "present_value")]
    assert shared_values({**args, "present_value": 5000}, schema, task) == []
    retried: list[Mapping[str, Any]] = []

    def redecode(retry: Mapping[str, Any]) -> Any:
        retried.append(retry)
        return {"present_value": 5000, "annual_interest_rate": 0.05, "time_years": 3}

    assert corrected(args, schema, task, ["distinct_values"], redecode=redecode) == {
        **args, "present_value": 5000}
    assert retried[0]["properties"]["present_value"]["enum"] == [3, 5000]  # not 5 again
    optional_rate = _schema(props, ["present_value", "time_years"])
    assert corrected(args, optional_rate, task, ["distinct_values"], redecode=redecode)["annual_interest_rate"] == 0.05
    optional_amount = _schema(props, ["annual_interest_rate", "time_years"])
    assert corrected(args, optional_amount, task, ["distinct_values"]) == {"annual_interest_rate": 0.05,
                                                                           "time_years": 3}


# --------------------------------------------------------------------------- anchors from descriptions, list order


def test_a_number_is_anchored_by_its_descriptions_first_words_when_its_name_says_nothing() -> None:
    schema = _schema({"mu": {"type": "integer", "description": "Mean of the normal distribution."},
                      "sigma": {"type": "integer", "description": "Standard deviation of the distribution."}},
                     ["mu", "sigma"])
    task = "Generate a random number from a normal distribution with mean 0 and standard deviation 1."
    assert anchored_numbers({"mu": 1, "sigma": 0}, schema, task) == {"mu": 0, "sigma": 1}  # a swap is free


def test_a_description_anchor_never_takes_a_value_another_argument_keeps_or_names() -> None:
    props = {"num_trials": {"type": "integer", "description": "Number of independent experiments."},
             "num_success": {"type": "integer", "description": "Number of times the event occurred."},
             "prob_success": {"type": "number", "description": "Probability of the event."}}
    task = "Probability of observing 60 heads if I flip a coin 100 times with probability of heads 0.5."
    args = {"num_success": 60, "num_trials": 100, "prob_success": 0.5}
    assert anchored_numbers(args, _schema(props, list(props)), task) is None
    area = _schema({"base": {"type": "integer", "description": "The length of the base."},
                    "height": {"type": "integer", "description": "The height of the triangle."}}, ["base", "height"])
    task = "Area of a triangle given its base and height as 6cm and 10cm."
    assert anchored_numbers({"base": 6, "height": 10}, area, task) is None  # 6 is next to two names


def test_list_items_the_task_writes_once_follow_its_order() -> None:
    schema = _schema({"floors": {"type": "array", "items": {"type": "integer"}},
                      "topics": {"type": "array", "items": {"type": "string"}}}, [])
    task = "Structural analysis for the 2nd, 3rd and 4th floors on behaviour and group dynamics"
    assert sibling_order({"floors": [2, 4, 3]}, schema, task) == {"floors": [2, 3, 4]}
    assert sibling_order({"topics": ["group dynamics", "behaviour"]}, schema, task) == {
        "topics": ["behaviour", "group dynamics"]}
    assert sibling_order({"floors": [2, 3, 4]}, schema, task) is None  # already in order
    assert sibling_order({"floors": [2, 5]}, schema, task) is None  # 5 is not in the task
    assert sibling_order({"floors": [4, 2]}, schema, "floors 2, 4 and 2 again") is None  # 2 twice: unclear
    assert sibling_order({"topics": ["dynamics", 3]}, schema, task) is None  # mixed kinds
