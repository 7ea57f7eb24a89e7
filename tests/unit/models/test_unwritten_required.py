"""``unwritten_required`` names the required values of a call that the task writes in no form, and
``fit_check_unwritten`` (on by default) asks the model whether the tool fits only for such a call: a call whose
required values the task writes is never asked about, and a call the model says fits stands as decoded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from completions import Script
from langchain_core.tools import StructuredTool

from react_agent._types import FINISH, CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES, OPT_IN_TECHNIQUES, select
from react_agent.models.local._staged import FIT_CHECK, answered, prepared
from react_agent.models.local._unwritten import unwritten_required, written_numbers
from react_agent.tools import answer_schema


def schema(**props: Any) -> dict[str, Any]:
    """A tool schema whose arguments are all required; a property given as a type name is ``{"type": name}``."""
    nodes = {k: ({"type": v} if isinstance(v, str) else v) for k, v in props.items()}
    return {"type": "object", "properties": nodes, "required": list(nodes)}


# ------------------------------------------------------------------------------------------ written values
@pytest.mark.parametrize(("text", "value"), [
    ("Convert 250 US dollars into euros", 250),
    ("revenue of $200,000", 200000),
    ("a rate of 3.5 m/s^2", 3.5),
    ("a discount of 5%", 0.05),
    ("capacitance of 100µF", 0.0001),
    ("inductance of 50mH", 0.05),
    ("revenues of $1.2M", 1200000),
    ("charges of 1e-9 and 2e-9", 2e-9),
    ("Создай сделку на 150 тысяч рублей", 150000),
    ("двести тысяч долларов", 200000),
    ("twenty-seven tickets", 27),
    ("a velocity of -5 m/s", -5),
    ("Десятичная запятая: 2,5 кг", 2.5),
])
def test_a_number_the_text_writes_in_any_form_is_written(text: str, value: float) -> None:
    assert unwritten_required({"x": value}, schema(x="number"), text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Calculate the probability of drawing a king from a deck of cards", 52),
    ("started from rest and accelerated for 5 s", 0),
    ("the final price after a 25% discount and a 10% tax", 100),  # 10 x 10 is another number, not a scale
    ("What is the weight of an elephant?", 70),
])
def test_a_number_the_text_does_not_write_is_named(text: str, value: float) -> None:
    assert unwritten_required({"x": value}, schema(x="number"), text) == ["x"]


def test_numbers_written_as_a_list_without_spaces_are_each_written() -> None:
    text = "Scores of Sample1: [22,33,42] and points A(3,4)"
    assert {22.0, 33.0, 42.0, 3.0, 4.0} <= written_numbers(text)
    args = {"sample": [22, 33, 42], "point": [3, 4]}
    items = {"type": "array", "items": {"type": "integer"}}
    assert unwritten_required(args, schema(sample=items, point=items), text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Найди погоду в Москве", "Москва"),  # another form of the word
    ("Find the VPN ticket", "VPN tickets"),
    ("What is the weather in Moscow?", "moscow"),
    ("Найди погоду в Москве", "Moscow"),  # another alphabet: a translation, perhaps
    ("Convert 150 Euros to Canadian dollars", "CAD"),  # a code is meant rather than written
    ("Calculate 2 raised to 5", "2^5"),
    ("Book it for March 12 at 3 pm", "2026-03-12"),  # dates and times are left to invented_values
    ("Book it for March 12 at 3 pm", "15:00"),
    ("Book it for March 12 at 3 pm", "12/03/2026"),
    ("Anything", ""),
])
def test_a_string_the_text_writes_or_may_mean_is_written(text: str, value: str) -> None:
    assert unwritten_required({"x": value}, schema(x="string"), text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Provide the crime rate of San Francisco", "California"),
    ("How long will it take to paint the Eiffel Tower?", "Lawsuit"),
    ("Какая погода в Сочи?", "Иванов"),
    ("Calculate 2 raised to 5", "3^7"),
])
def test_a_string_the_text_does_not_write_is_named(text: str, value: str) -> None:
    assert unwritten_required({"x": value}, schema(x="string"), text) == ["x"]


@pytest.mark.parametrize("node", [{"type": "string", "enum": ["won", "lost"]}, {"type": "string", "const": "won"},
                                  {"type": "string", "format": "email"}, {"type": "string", "pattern": "^[a-z]+$"}])
def test_a_string_whose_form_the_schema_fixes_is_never_named(node: dict[str, Any]) -> None:
    assert unwritten_required({"x": "won"}, schema(x=node), "Open a deal with Gorizont") == []


def test_optional_arguments_booleans_and_nulls_are_never_named() -> None:
    tool = {"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"},
                                             "exact": {"type": "boolean"}, "note": {"type": "string"}},
            "required": ["q", "exact", "note"]}
    args = {"q": "Patel", "limit": 1, "exact": True, "note": None}
    assert unwritten_required(args, tool, "What's Nina Patel's phone number?") == []


def test_nested_values_are_named_by_their_path_in_order() -> None:
    tool = schema(filter={"type": "object", "properties": {"city": {"type": "string"}, "code": {"type": "string",
                                                                                               "enum": ["a"]}}},
                  points={"type": "array", "items": {"type": "number"}})
    args = {"filter": {"city": "Paris", "code": "a"}, "points": [3, 99, 4]}
    assert unwritten_required(args, tool, "Points 3 and 4 in London") == ["filter.city", "points[1]"]


@pytest.mark.parametrize(("args", "tool", "text"), [
    ({"x": 5}, schema(x="number"), ""),  # no text to compare with: a direct invoke
    ("5", schema(x="number"), "5"),
    ({"x": 5}, {"type": "object"}, "nothing"),
    ({"x": 5}, None, "nothing"),
    ({"x": float("nan")}, {"type": "object", "properties": {}, "required": "x"}, "nothing"),
])
def test_without_a_text_arguments_or_a_schema_nothing_is_named(args: Any, tool: Any, text: str) -> None:
    assert unwritten_required(args, tool, text) == []


def test_a_non_finite_number_is_never_written() -> None:
    assert unwritten_required({"x": float("inf")}, schema(x="number"), "inf 1e999 nan") == ["x"]


def test_the_check_reads_a_long_hostile_text_in_linear_time() -> None:
    text = ("1," * 50_000) + " " * 100_000 + "word " * 20_000
    assert unwritten_required({"x": 7, "y": "zebra"}, schema(x="number", y="string"), text) == ["x", "y"]


# ------------------------------------------------------------------------------------------ the check in the decoder
def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount of money into another currency."""
    return "converted"


CONVERT = StructuredTool.from_function(convert_currency)
CONVERT_INFO = ToolInfo(name="convert_currency", description="Convert an amount of money.",
                        parameters=schema(amount="number", currency="string"))


class Judged(Script):
    """A completion function that gives FINISH 0.1 of the finish vote and "no" ``no`` when asked whether a tool
    fits; records every question."""

    def __init__(self, no: float, *outputs: str) -> None:
        super().__init__(*outputs)
        self.no, self.questions = no, []  # type: float, list[str]

    def share(self, prompt: str, options: list[str], option: str) -> float | None:
        if option == FINISH:
            return 0.1
        self.questions.append(prompt)
        return self.no


def _decide(script: Judged, task: str, techniques: tuple[str, ...] = DEFAULT_TECHNIQUES) -> dict[str, Any]:
    chosen = select(list(techniques))
    context = CallContext(task=task, tools=(CONVERT_INFO,))
    step = prepared(chosen, answer_schema([CONVERT]), context)
    return json.loads(answered(script, "P", step, context, chosen, again=lambda rejected: "AGAIN",
                               judge=lambda action: (f"FITS {action}?", " yes", " no")))


def _call(amount: str) -> tuple[str, str]:
    return '{"thought": "t", "action": "convert_currency", ', '{"amount": ' + amount + ', "currency": "EUR"}}'


def test_the_check_is_on_by_default_and_fit_check_stays_opt_in() -> None:
    assert "fit_check_unwritten" in LocalChatModel().techniques
    assert "fit_check_unwritten" not in OPT_IN_TECHNIQUES and "fit_check" in OPT_IN_TECHNIQUES


def test_a_first_call_with_an_unwritten_required_value_is_asked_about_and_decided_again_on_no() -> None:
    script = Judged(FIT_CHECK + 0.01, *_call("70"), '{"thought": "no tool", "action": "FINISH", ', ' "I cannot."}')
    answer = _decide(script, "What is the weight of an elephant?")
    assert answer == {"thought": "no tool", "action": FINISH, "action_input": "I cannot."}
    assert script.questions == ["FITS convert_currency?"]


def test_a_call_the_model_says_fits_stands_as_decoded() -> None:
    script = Judged(FIT_CHECK, *_call("52"))
    answer = _decide(script, "How many euros is a deck of cards worth?")
    assert answer["action_input"] == {"amount": 52, "currency": "EUR"}
    assert script.questions == ["FITS convert_currency?"]


def test_a_call_whose_required_values_the_task_writes_is_never_asked_about() -> None:
    script = Judged(0.99, *_call("250"))
    answer = _decide(script, "Convert 250 dollars into euros")
    assert answer["action_input"] == {"amount": 250, "currency": "EUR"}
    assert script.questions == []


def test_without_the_technique_the_call_is_never_asked_about() -> None:
    script = Judged(0.99, *_call("70"))
    off = tuple(t for t in DEFAULT_TECHNIQUES if t != "fit_check_unwritten")
    assert _decide(script, "What is the weight of an elephant?", off)["action"] == "convert_currency"
    assert script.questions == []
