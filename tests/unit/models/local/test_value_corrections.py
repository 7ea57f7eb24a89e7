"""Argument-value techniques (``react_agent.models.local._values``) without the model: the pure corrections of a call
from its task and schema, and their use in ``LocalChatModel``'s staged answer with a scripted completion."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from react_agent import ConfigError, ReactAgent, RunState
from react_agent._types import FINISH
from react_agent.models import LocalChatModel
from react_agent.models.local._decoding import grounded_schema, should_abstain, ungrounded
from react_agent.models.local._model import _staged_answer
from react_agent.models.local._values import (
    VALUE_TECHNIQUES,
    anchored_numbers,
    bounded_lists,
    corrected,
    deduped_lists,
    distinct_schema,
    named_enums,
    number_mentions,
    omitted_unmentioned,
    percent_rates,
    shared_values,
    task_numbers,
    task_ordered,
)
from react_agent.testing import ScriptedChatModel
from react_agent.tools._schema import answer_schema


def _schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required}


NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
TEXT = {"type": "string"}

# --------------------------------------------------------------------------- numbers


def test_number_mentions_read_percentages_and_the_words_around() -> None:
    found = number_mentions("a deposit of $1,000, an annual interest rate of 3% for 1 year")
    assert [(v, p) for v, p, _, _ in found] == [(1000.0, False), (3.0, True), (1.0, False)]
    assert found[1][2] == ["an", "annual", "interest", "rate", "of"]  # back to the previous number
    assert found[2][3] == ["year"]
    assert task_numbers("rate of 3 percent", percent=True) == {3.0, 0.03}
    assert task_numbers("rate of 3 percent") == {3.0}


def test_a_number_takes_the_value_written_next_to_its_name() -> None:
    schema = _schema({"input_synaptic_rate": INTEGER, "weight": NUMBER, "decay_rate": NUMBER},
                     ["input_synaptic_rate", "decay_rate"])
    task = "Neuronal activity for synaptic input rate of 200 and weight 0.5 and decay rate of 0.1."
    copied = {"input_synaptic_rate": 200, "decay_rate": 0.5, "weight": 0.5}
    assert anchored_numbers(copied, schema, task) == {"input_synaptic_rate": 200, "decay_rate": 0.1, "weight": 0.5}
    assert anchored_numbers({"input_synaptic_rate": 200, "decay_rate": 0.1}, schema, task) is None  # already right
    years = _schema({"deposit": INTEGER, "years": INTEGER})
    assert anchored_numbers({"deposit": 1000, "years": 1000}, years, "a deposit of $1000 for 1 year") == {
        "deposit": 1000, "years": 1}


def test_a_number_next_to_two_names_or_of_the_wrong_type_anchors_nothing() -> None:
    schema = _schema({"base": INTEGER, "height": INTEGER})
    task = "the lengths of its base and height as 6cm and 10cm"
    assert anchored_numbers({"base": 6, "height": 10}, schema, task) is None
    assert anchored_numbers({"base": 6, "height": 6}, schema, task) is None  # ambiguous: left to the others
    assert anchored_numbers({"count": 2}, _schema({"count": INTEGER}), "a count of 2.5") is None  # not whole
    assert anchored_numbers({"label": "x"}, _schema({"label": TEXT}), "label 5") is None  # not a number field


def test_a_rate_written_as_a_percentage_becomes_a_fraction() -> None:
    schema = _schema({"deposit": INTEGER, "annual_interest_rate": NUMBER, "tax_percent": NUMBER,
                      "growth": {"type": "number", "description": "Growth as a decimal fraction."}})
    task = "a deposit of $1000, an interest rate of 3%, a tax of 5 percent and a growth of 2%"
    args = {"deposit": 1000, "annual_interest_rate": 3, "tax_percent": 5, "growth": 2}
    assert percent_rates(args, schema, task) == {"deposit": 1000, "annual_interest_rate": 0.03, "tax_percent": 5,
                                                 "growth": 0.02}
    assert percent_rates({"annual_interest_rate": 0.03}, schema, task) is None  # already a fraction
    assert percent_rates({"annual_interest_rate": 4}, schema, task) is None  # 4 is not the task's percentage
    # abstaining accepts the fraction only when the technique is on
    assert should_abstain({"annual_interest_rate": 0.03}, _schema({"annual_interest_rate": NUMBER}), task)
    assert not should_abstain({"annual_interest_rate": 0.03}, _schema({"annual_interest_rate": NUMBER}), task,
                              percent=True)


def test_ground_numbers_redecodes_a_number_the_task_does_not_write() -> None:
    schema = _schema({"current": INTEGER, "distance": INTEGER})
    task = "magnetic field at a distance of 8 meters for a current of 12 Amperes"
    assert ungrounded({"current": 7, "distance": 8}, schema, task) == []  # numbers are not checked by default
    assert ungrounded({"current": 7, "distance": 8}, schema, task, numbers=True) == ["current"]
    assert grounded_schema(schema, ["current"], task)["properties"]["current"] == {"enum": [8, 12]}
    assert ungrounded({"rate": 0.03}, _schema({"rate": NUMBER}), "at 3%", numbers=True) == []


# --------------------------------------------------------------------------- sibling values

CURRENCY = _schema({"amount": INTEGER, "from_currency": TEXT, "to_currency": TEXT})


def test_two_arguments_with_one_value_written_once_are_a_pair() -> None:
    task = "Convert 150 Euros to Canadian dollars."
    copied = {"amount": 150, "from_currency": "Canadian dollars", "to_currency": "Canadian dollars"}
    assert shared_values(copied, CURRENCY, task) == [("from_currency", "to_currency")]
    assert shared_values({**copied, "from_currency": "Euros"}, CURRENCY, task) == []
    # a value the task writes twice may be shared
    assert shared_values({"from_currency": "USD", "to_currency": "USD"}, CURRENCY, "USD to USD") == []


def test_distinct_schema_fixes_the_others_and_excludes_the_shared_value() -> None:
    task = "Convert 150 Euros to Canadian dollars."
    copied = {"amount": 150, "from_currency": "Canadian dollars", "to_currency": "Canadian dollars"}
    retry = distinct_schema(copied, CURRENCY, "to_currency", task)
    assert retry is not None
    assert retry["properties"]["amount"] == {"const": 150}
    assert retry["properties"]["from_currency"] == {"const": "Canadian dollars"}
    options = retry["properties"]["to_currency"]["enum"]
    assert "Euros" in options
    assert not {"Canadian dollars", "Canadian", "dollars", "Euros to Canadian dollars"} & set(options)
    assert retry["required"] == ["amount", "from_currency", "to_currency"]


def test_the_pair_follows_the_order_the_task_names_the_values() -> None:
    task = "Convert 150 Euros to Canadian dollars."
    swapped = {"from_currency": "Canadian dollars", "to_currency": "Euros"}
    assert task_ordered(swapped, "from_currency", "to_currency", task) == {
        "from_currency": "Euros", "to_currency": "Canadian dollars"}
    right = {"from_currency": "Euros", "to_currency": "Canadian dollars"}
    assert task_ordered(right, "from_currency", "to_currency", task) == right


def test_corrected_drops_an_optional_copy_and_redecodes_a_required_one() -> None:
    stats = _schema({"player_name": TEXT, "season": TEXT, "league": TEXT}, ["player_name", "season"])
    task = "Get the player stats of Cristiano Ronaldo in the 2019-2020 season"
    args = {"player_name": "Cristiano Ronaldo", "season": "2019-2020", "league": "Cristiano Ronaldo"}
    assert corrected(args, stats, task, ["distinct_values"]) == {"player_name": "Cristiano Ronaldo",
                                                                "season": "2019-2020"}
    task = "Convert 150 Euros to Canadian dollars."
    copied = {"amount": 150, "from_currency": "Canadian dollars", "to_currency": "Canadian dollars"}
    seen: list[Mapping[str, Any]] = []

    def redecode(schema: Mapping[str, Any]) -> Any:
        seen.append(schema)
        return {"amount": 150, "from_currency": "Canadian dollars", "to_currency": "Euros"}

    assert corrected(copied, CURRENCY, task, ["distinct_values"], redecode=redecode) == {
        "amount": 150, "from_currency": "Euros", "to_currency": "Canadian dollars"}
    assert len(seen) == 1
    assert corrected(copied, CURRENCY, task, ["distinct_values"]) == copied  # no model: left as it is
    assert corrected(copied, CURRENCY, task, []) == copied


# --------------------------------------------------------------------------- enums and lists

PARK = _schema({"park_name": TEXT, "information": {"type": "array", "items": {
    "type": "string", "enum": ["Elevation", "Area", "Location", "Established Year"]}}})


def test_an_enum_list_takes_the_values_the_task_names_in_its_order() -> None:
    task = "What's the elevation and area of Yellowstone National Park?"
    args = {"park_name": "Yellowstone", "information": ["Area", "Area"]}
    assert named_enums(args, PARK, task) == {"park_name": "Yellowstone", "information": ["Elevation", "Area"]}
    game = _schema({"info": {"type": "array", "items": {"enum": ["average_review_rating", "age_range", "genre"]}}})
    assert named_enums({"info": ["age_range"]}, game, "the average review rating and the age range") == {
        "info": ["average_review_rating", "age_range"]}
    assert named_enums({"information": ["Area"]}, PARK, "Tell me about Yellowstone") is None  # nothing named


def test_a_single_enum_value_the_task_does_not_name_becomes_the_one_it_names() -> None:
    schema = _schema({"condition": {"type": "string", "enum": ["Poor", "Good", "Excellent"]}})
    assert named_enums({"condition": "Poor"}, schema, "a guitar in excellent condition") == {"condition": "Excellent"}
    assert named_enums({"condition": "Poor"}, schema, "in poor or good condition") is None  # named: kept
    assert named_enums({"condition": "Good"}, schema, "any guitar") is None


def test_lists_get_a_bound_and_lose_repeats_the_task_does_not_have() -> None:
    schema = {"anyOf": [_schema({
        "columns": {"type": "array", "items": TEXT},
        "data": {"type": "array", "items": NUMBER},
        "amenities": {"type": "array", "items": {"type": "string", "enum": ["Patio", "Wi-Fi"]}},
        "sized": {"type": "array", "items": TEXT, "maxItems": 9}})]}
    task = "remove the email addresses and social security numbers of 3 and 4 users"
    props = bounded_lists(schema, task)["anyOf"][0]["properties"]
    assert props["columns"]["maxItems"] == 3  # two "and" + 1
    assert props["data"]["maxItems"] == 2
    assert props["amenities"]["maxItems"] == 2
    assert props["sized"]["maxItems"] == 9  # its own bound stays
    assert "maxItems" not in schema["anyOf"][0]["properties"]["columns"]  # a copy
    flat = _schema({"amenities": props["amenities"]})
    assert deduped_lists({"amenities": ["Patio", "Patio", "Patio"]}, flat, "sushi with a patio") == {
        "amenities": ["Patio"]}
    assert deduped_lists({"data": [7, 7]}, _schema({"data": props["data"]}), "7, 7 and 8") is None  # written twice


def test_optional_arguments_the_task_never_mentions_are_left_out() -> None:
    schema = _schema({"temp": INTEGER, "volume": INTEGER, "gas": TEXT, "year": INTEGER, "detail": {"type": "boolean"},
                      "period": {"type": "string", "enum": ["Daily", "Yearly"]}}, ["temp", "volume"])
    task = "heat capacity for air at 298K and a volume of 10 m^3"
    args = {"temp": 298, "volume": 10, "gas": ":{", "year": 2023, "detail": True, "period": "Yearly"}
    assert omitted_unmentioned(args, schema, task) == {"temp": 298, "volume": 10, "detail": True}
    assert omitted_unmentioned({"temp": 1, "volume": 10, "gas": "air"}, schema, task) is None  # required stay
    # a schema whose "required" is not a list (a hand-written MCP schema) counts as requiring nothing
    assert omitted_unmentioned({"temp": 298, "year": 2023}, {**schema, "required": 5}, task) == {"temp": 298}


# --------------------------------------------------------------------------- in the staged answer


def _tool(name: str, description: str, props: dict[str, Any], required: list[str] | None = None) -> StructuredTool:
    return StructuredTool(name=name, description=description, args_schema=_schema(props, required),
                          func=lambda **kw: "ok")


CONVERT = _tool("currency_conversion", "Convert an amount of money from one currency to another currency.",
                {"amount": INTEGER, "from_currency": TEXT, "to_currency": TEXT})


def _prompt(task: str, tools: list[StructuredTool]) -> str:
    agent = ReactAgent(ScriptedChatModel(["unused"]), tools, prompts="en-compact")
    [message] = agent.build_messages(RunState(task))
    return str(message.content) + "\n"


class _Script:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, Mapping[str, Any]]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append((prompt, schema))
        return self.replies.pop(0)


def test_the_staged_answer_redecodes_a_copied_value_and_orders_the_pair() -> None:
    prompt = _prompt("Convert 150 Euros to Canadian dollars.", [CONVERT])
    head = '{"thought": "t", "action": "currency_conversion", '
    copied = '{"amount": 150, "from_currency": "Canadian dollars", "to_currency": "Canadian dollars"}}'
    script = _Script(head, copied, '{"amount": 150, "from_currency": "Canadian dollars", "to_currency": "Euros"}}')
    text = _staged_answer(script, prompt, answer_schema([CONVERT]), two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES))
    assert json.loads(text)["action_input"] == {"amount": 150, "from_currency": "Euros",
                                                "to_currency": "Canadian dollars"}
    assert script.calls[2][1]["properties"]["from_currency"] == {"const": "Canadian dollars"}
    # the technique off: the copied value stays and no third call is made
    off = _Script(head, copied)
    text = _staged_answer(off, prompt, answer_schema([CONVERT]), two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES) - {"distinct_values"})
    assert json.loads(text)["action_input"]["from_currency"] == "Canadian dollars" and len(off.calls) == 2


def test_the_staged_answer_grounds_an_invented_number_instead_of_abstaining() -> None:
    field = _tool("magnetic_field", "Magnetic field of a current at a distance.", {"current": INTEGER,
                                                                                  "distance": INTEGER})
    prompt = _prompt("Magnetic field at a distance of 8 meters for a current of 12 Amperes", [field])
    head = '{"thought": "t", "action": "magnetic_field", '
    script = _Script(head, '{"current": 7, "distance": 8}}', '{"current": 12, "distance": 8}}')
    text = _staged_answer(script, prompt, answer_schema([field]), two_stage=True, grounding=True, abstain=True,
                          values=frozenset({"ground_numbers"}))
    assert json.loads(text)["action_input"] == {"current": 12, "distance": 8}
    assert script.calls[2][1]["properties"]["current"] == {"enum": [8, 12]}
    off = _Script(head, '{"current": 7, "distance": 8}}', '"No."}')
    text = _staged_answer(off, prompt, answer_schema([field]), two_stage=True, grounding=True, abstain=True)
    assert json.loads(text)["action"] == FINISH  # without it the invented 7 makes the call an abstention


def test_the_staged_answer_bounds_lists_in_the_grammar() -> None:
    tool = _tool("modify_columns", "Delete columns from a table.", {"table": TEXT,
                                                                   "columns": {"type": "array", "items": TEXT}})
    prompt = _prompt("Delete the email and phone columns from table users", [tool])
    script = _Script('{"thought": "t", "action": "modify_columns", ', '{"table": "users", "columns": ["email"]}}')
    _staged_answer(script, prompt, answer_schema([tool]), two_stage=True, grounding=True,
                   values=frozenset({"bounded_lists"}))
    assert script.calls[1][1]["properties"]["columns"]["maxItems"] == 2


# --------------------------------------------------------------------------- the options


def test_value_options_are_on_by_default_and_validated() -> None:
    model = LocalChatModel()
    assert all(getattr(model, name) is True for name in VALUE_TECHNIQUES)
    assert LocalChatModel(named_enums=False)._values == frozenset(VALUE_TECHNIQUES) - {"named_enums"}
    with pytest.raises(ConfigError, match=r"anchor_numbers=True or anchor_numbers=False"):
        LocalChatModel(anchor_numbers="yes")
    with pytest.raises(ConfigError, match="bounded_lists"):
        LocalChatModel(bounded_lists=1)
