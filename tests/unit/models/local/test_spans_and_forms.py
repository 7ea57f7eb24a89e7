"""Session-6 value techniques of the local model, without the model: whole spans (``whole_spans``), values a
description lists (``listed_values``), numbers in the described unit (``unit_numbers``) and dates in the
described format (``date_formats``); the last three run after abstaining."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent import ConfigError
from react_agent._types import FINISH
from react_agent.models import LocalChatModel
from react_agent.models.local._forms import date_formats, described_unit, unit_numbers
from react_agent.models.local._model import TECHNIQUES, _staged_answer
from react_agent.models.local._spans import described_values, listed_values, whole_spans
from react_agent.models.local._values import FORM_TECHNIQUES, VALUE_TECHNIQUES, corrected, in_forms

NEW = ("whole_spans", "listed_values", "unit_numbers", "date_formats", "clean_spans")


def _schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required}


def _text(description: str = "") -> dict[str, Any]:
    return {"type": "string", "description": description} if description else {"type": "string"}


# --------------------------------------------------------------------------- whole spans
@pytest.mark.parametrize(("value", "task", "grown"), [
    ("Carlsen", "What's the chess classical rating of Magnus Carlsen?", "Magnus Carlsen"),
    ("Weeknd", "When is the concert of The Weeknd in December?", "The Weeknd"),
    ("The Legend of Zelda", "Average score of 'The Legend of Zelda: Breath of the Wild' from GameSpot.",
     "The Legend of Zelda: Breath of the Wild"),
    ("the theory of evolution", "Who first proposed the theory of evolution?", "theory of evolution"),
    ("Magnus Carlsen", "Rating of Magnus Carlsen", None),  # already whole
    ("Paris", "Paris is nice; find hotels in Paris", None),  # written twice: which one is unknown
    ("Smith", "Find John Smith", "John Smith"),
    ("France", "Who was the King of France in 1510?", None),  # "King of France" is a title and a country
    ("Paris", "Hotels of Paris", None),
    ("Find", "Find John Smith", None),  # nothing capitalised before it
    ("Clara", "Weather. Clara wants to know", None),  # the first word of a sentence starts no name
    ("B1004", "the building Id B1004 floors", None),  # an id with digits is not a name to grow
    ("The Plaza", "a room at The Plaza in New York", None),  # a capitalised article is part of the name
    ("Zelda", "Stats of 'Zelda' on Switch", None),  # the whole quote already
])
def test_whole_spans(value: str, task: str, grown: str | None) -> None:
    schema = _schema({"name": _text(), "email": {"type": "string", "pattern": "@"}}, ["name"])
    assert whole_spans({"name": value}, schema, task) == ({"name": grown} if grown else None)


def test_whole_spans_keeps_a_value_whose_growth_holds_a_sibling_and_skips_patterned_fields() -> None:
    schema = _schema({"first": _text(), "last": _text(), "email": {"type": "string", "pattern": "@"}}, [])
    assert whole_spans({"first": "John", "last": "Smith"}, schema, "Register John Smith") is None
    assert whole_spans({"email": "Smith"}, schema, "Register John Smith") is None
    assert whole_spans({"first": 3}, schema, "Register John Smith") is None


# --------------------------------------------------------------------------- listed values
@pytest.mark.parametrize(("description", "listed"), [
    ("Level of detail. Can be 'summary' or 'detailed'.", ["summary", "detailed"]),
    ("Specify the information type needed for the case. i.e., victim, accused, verdict etc.",
     ["victim", "accused", "verdict"]),
    ("Type of room. Options: 'single', 'double', 'deluxe'.", ["single", "double", "deluxe"]),
    ("The dietary restrictions, e.g., 'vegan', 'gluten-free'.", ["vegan", "gluten-free"]),
    ("Either 'summary' or 'full'", ["summary", "full"]),
    ("The name of the hotel.", []),
    (None, []),
    (42, []),
])
def test_described_values(description: Any, listed: list[str]) -> None:
    assert described_values(description) == listed


@pytest.mark.parametrize(("value", "task", "described", "expected"), [
    ("Apple Inc", "Give me detail information about stocks of Apple Inc.", "Can be 'summary' or 'detailed'.",
     "detailed"),
    ("case", "Who was the victim in the case docket numbered 2022/AL2562?", "i.e., victim, accused, verdict etc.",
     "victim"),
    ("pet", "Book a single room at a pet friendly hotel", "Options: 'single', 'double', 'deluxe'.", "single"),
    ("Buddhism", "Retrieve the full history of Buddhism", "either 'summary' or 'full'", "full"),
    ("summary", "a summary please", "Can be 'summary' or 'detailed'.", None),  # already the named one
    ("summary", "summary or details?", "Can be 'summary' or 'detailed'.", None),  # names two: unknown
    ("weekly", "every day", "Can be 'summary' or 'detailed'.", None),  # names none
    ("YYYY", "Put it in the format of YYYY.", "Default is 'MM-DD-YYYY'.", None),  # a part is not the value
])
def test_listed_values(value: str, task: str, described: str, expected: str | None) -> None:
    schema = _schema({"level": _text(described)})
    assert listed_values({"level": value}, schema, task) == ({"level": expected} if expected else None)


def test_listed_values_leaves_enums_patterns_and_absent_arguments() -> None:
    task = "Give me detail information"
    described = "Can be 'summary' or 'detailed'."
    schema = _schema({"a": {"enum": ["summary", "detailed"], "description": described},
                      "b": {"type": "string", "pattern": "x", "description": described},
                      "c": _text(described)}, [])
    assert listed_values({"a": "summary", "b": "x"}, schema, task) is None


# --------------------------------------------------------------------------- unit numbers
@pytest.mark.parametrize(("description", "unit"), [
    ("The inductance (L) in henries (H).", ("H", 1.0)),
    ("The capacitance (C) in farads (F).", ("F", 1.0)),
    ("Length of the mix track in seconds.", ("time", 1.0)),
    ("The duration in minutes", ("time", 60.0)),
    ("The mass of the substance in kg.", ("g", 1000.0)),
    ("The speed in m/s", None),  # a compound unit is not converted
    ("The city in which the hotel is located.", None),
    (None, None),
])
def test_described_unit(description: Any, unit: tuple[str, float] | None) -> None:
    assert described_unit(description) == unit


LC = _schema({"inductance": {"type": "number", "description": "The inductance (L) in henries (H)."},
              "capacitance": {"type": "number", "description": "The capacitance (C) in farads (F)."},
              "round_off": {"type": "integer", "description": "Decimal places, default 2."}}, ["inductance"])


def test_unit_numbers_convert_si_prefixes_and_time_units() -> None:
    task = "The resonant frequency of an LC circuit with capacitance of 100µF and inductance of 50mH."
    assert unit_numbers({"inductance": 50, "capacitance": 100}, LC, task) == {"inductance": 0.05,
                                                                              "capacitance": 0.0001}
    track = _schema({"track_length": {"type": "integer", "description": "Length of the mix track in seconds."}})
    assert unit_numbers({"track_length": 3}, track, "a mix with a duration of 3 minutes") == {"track_length": 180}
    assert unit_numbers({"track_length": 3}, track, "a mix of 3 seconds") is None  # already in seconds
    assert unit_numbers({"track_length": 2}, track, "a mix of 3 minutes") is None  # not the number written


def test_unit_numbers_refuse_what_they_cannot_read() -> None:
    task = "capacitance of 100µF"
    assert unit_numbers({"inductance": 100}, LC, task) is None  # µF is not a unit of inductance
    assert unit_numbers({"capacitance": 100}, LC, "100µF or 100nF") is None  # two readings of 100
    whole = _schema({"n": {"type": "integer", "description": "in henries (H)"}})
    assert unit_numbers({"n": 50}, whole, "50mH") is None  # 0.05 is not an integer
    assert unit_numbers({"capacitance": True}, LC, task) is None
    assert unit_numbers({"capacitance": 100}, LC, "100 µF/s") is None


# --------------------------------------------------------------------------- date formats
@pytest.mark.parametrize(("value", "described", "expected"), [
    ("March 11, 2022", "Date of the stock price. Format: yyyy-mm-dd.", "2022-03-11"),
    ("March.11, 2022", "Format: yyyy-mm-dd.", "2022-03-11"),
    ("10th December 2022", "The start date, in the format YYYY-MM-DD", "2022-12-10"),
    ("2022-12-10", "MM/DD/YYYY", "12/10/2022"),
    ("Dec 10, 2022", "dd.mm.yyyy", "10.12.2022"),
    ("2022-03-11", "Format: yyyy-mm-dd.", None),  # already in the format
    ("next Friday", "Format: yyyy-mm-dd.", None),  # not a whole date
    ("March 11, 2022", "The date of the event.", None),  # no format spelled
    ("Marsh 11, 2022", "Format: yyyy-mm-dd.", None),  # no such month
    ("2022-13-40", "MM/DD/YYYY", None),
])
def test_date_formats(value: str, described: str, expected: str | None) -> None:
    schema = _schema({"date": _text(described)})
    assert date_formats({"date": value}, schema, "any task") == ({"date": expected} if expected else None)


def test_date_formats_read_a_date_schema_format() -> None:
    schema = _schema({"day": {"type": "string", "format": "date"}})
    assert date_formats({"day": "March 10th, 2023"}, schema, "") == {"day": "2023-03-10"}


# --------------------------------------------------------------------------- the pipeline
def test_the_new_options_are_on_by_default_validated_and_listed() -> None:
    model = LocalChatModel()
    assert all(getattr(model, name) is True for name in NEW)
    assert set(NEW) <= set(VALUE_TECHNIQUES) and set(NEW) <= set(TECHNIQUES)
    assert set(FORM_TECHNIQUES) == {"listed_values", "unit_numbers", "date_formats"}
    for name in NEW:
        with pytest.raises(ConfigError, match=name):
            LocalChatModel(**{name: "yes"})
    assert LocalChatModel(unit_numbers=False)._values == frozenset(VALUE_TECHNIQUES) - {"unit_numbers"}


def test_forms_run_after_corrected_and_only_when_named() -> None:
    args = {"inductance": 50, "capacitance": 100}
    task = "capacitance of 100µF and inductance of 50mH"
    assert corrected(args, LC, task, VALUE_TECHNIQUES) == args  # the forms are not part of corrected
    assert in_forms(args, LC, task, ()) == args
    assert in_forms(args, LC, task, ["unit_numbers"]) == {"inductance": 0.05, "capacitance": 0.0001}


class _Script:
    """A scripted ``complete(prompt, schema, ...)``: returns the next reply, records each call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[Mapping[str, Any]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append(schema)
        return self.replies.pop(0)


def _answer_schema(args_schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [
        {"type": "object", "properties": {"thought": {"type": "string"}, "action": {"const": "resonance"},
                                          "action_input": args_schema}, "required": ["thought", "action"]},
        {"type": "object", "properties": {"thought": {"type": "string"}, "action": {"const": FINISH},
                                          "action_input": {"type": "string"}}, "required": ["thought", "action"]}]}


def test_a_converted_value_is_not_taken_for_an_invented_one() -> None:
    """Abstaining checks that required values come from the task: it runs before the forms, so a converted
    0.05 (the task writes 50mH) is a call, not a FINISH."""
    prompt = "Now your turn\nTask: Resonant frequency with capacitance of 100µF and inductance of 50mH.\nAnswer:"
    script = _Script('{"thought": "t", "action": "resonance", ', '{"inductance": 50, "capacitance": 100}}')
    text = _staged_answer(script, prompt, _answer_schema(LC), two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES))
    answer = json.loads(text)
    assert answer["action"] == "resonance"
    assert answer["action_input"] == {"inductance": 0.05, "capacitance": 0.0001}
    off = _Script('{"thought": "t", "action": "resonance", ', '{"inductance": 50, "capacitance": 100}}')
    text = _staged_answer(off, prompt, _answer_schema(LC), two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES) - {"unit_numbers"})
    assert json.loads(text)["action_input"] == {"inductance": 50, "capacitance": 100}


# --------------------------------------------------------------------------- hostile input
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                     st.text(max_size=30))
_subschemas = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number", "array", ["string", "null"], 7]),
                           "description": st.one_of(st.text(max_size=60), st.sampled_from([
                               "in henries (H)", "Format: yyyy-mm-dd", "Can be 'a b' or 'detailed'",
                               "i.e., x, , etc", "in seconds", "e.g. 'vegan'"]), st.integers())}),
    st.fixed_dictionaries({"type": st.just("string"), "format": st.sampled_from(["date", 3])}),
    st.just("not a schema"), st.none())
_schemas = st.one_of(
    st.builds(lambda props: {"type": "object", "properties": props, "required": list(props)[:1]},
              st.dictionaries(st.text(max_size=8), _subschemas, max_size=5)),
    st.just({"properties": "odd"}), st.just({}))
_tasks = st.one_of(st.text(max_size=200), st.sampled_from([
    "100µF and 50mH for 3 minutes on March.11, 2022", "'The Legend of Zelda: Breath' of Magnus Carlsen",
    "detail 'quoted' 12 13 µ", "10th December 2022. The the a an"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=st.one_of(st.dictionaries(st.text(max_size=8), _scalars, max_size=5), st.none(), st.text(max_size=5)),
       schema=_schemas, task=_tasks)
def test_the_new_techniques_never_raise(args: Any, schema: Any, task: str) -> None:
    for fix in (whole_spans, listed_values, unit_numbers, date_formats):
        out = fix(args, schema, task)
        assert out is None or (isinstance(out, dict) and set(out) == set(args))
    if isinstance(args, dict):
        assert isinstance(in_forms(args, schema, task, VALUE_TECHNIQUES), dict)


@pytest.mark.parametrize("fix", [whole_spans, listed_values, unit_numbers, date_formats])
def test_a_100_kb_task_is_read_in_well_under_a_second(fix: Any) -> None:
    task = ("The rating of Magnus Carlsen in 'The Legend of Zelda: Breath of the Wild' with 100µF and 50mH for "
            "3 minutes from March 11, 2022, detail level. ") * 800
    assert len(task) > 100_000
    schema = _schema({"name": _text("Can be 'summary' or 'detailed'."), "title": _text(),
                      "c": {"type": "number", "description": "in farads (F)"},
                      "day": _text("Format: yyyy-mm-dd")})
    args = {"name": "Carlsen", "title": "The Legend of Zelda", "c": 100, "day": "March 11, 2022"}
    started = time.perf_counter()
    fix(args, schema, task)
    assert time.perf_counter() - started < 5.0  # a bound against quadratic blow-ups, not a performance claim


# --------------------------------------------------------------------------- anchors by description words
def test_a_number_next_to_a_word_of_the_description_anchors_it() -> None:
    from react_agent.models.local._values import anchored_numbers

    interest = _schema({
        "principal": {"type": "integer", "description": "The initial amount of money."},
        "rate": {"type": "number", "description": "The annual interest rate."},
        "time": {"type": "integer", "description": "The number of time periods."},
        "n": {"type": "integer", "description": "The number of times that interest is compounded per unit time."}})
    task = ("Calculate the compounded interest on an initial deposit of $5000 at an annual interest rate of 3% "
            "for 5 years, compounded quarterly.")
    fixes = ["anchor_numbers", "percent_rates"]  # "rate of 3%" is anchored as 3, then read as a rate
    assert corrected({"principal": 5000, "rate": 0.03, "time": 5, "n": 5}, interest, task, fixes) == {
        "principal": 5000, "rate": 0.03, "time": 5, "n": 4}
    mountains = _schema({"location": _text(), "radius": {
        "type": "integer", "description": "The radius within which to find mountains, measured in kilometers."},
        "amount": {"type": "integer",
                   "description": "The number of mountains to find, listed from tallest to smallest."}})
    task = "Find me the 5 tallest mountains within 50km of Denver, Colorado."
    assert anchored_numbers({"location": "Denver", "radius": 5, "amount": 50}, mountains, task) == {
        "location": "Denver", "radius": 50, "amount": 5}  # a swap: each takes the number next to its word
    # a value another argument keeps is never taken
    assert anchored_numbers({"location": "Denver", "radius": 50, "amount": 50}, mountains,
                            "5 tallest mountains within 50km") == {"location": "Denver", "radius": 50, "amount": 5}
    assert anchored_numbers({"radius": 7}, _schema({"radius": {"type": "integer", "description": "Radius."}}),
                            "a circle of 7") is None


def test_an_optional_number_the_task_gives_is_added() -> None:
    from react_agent.models.local._values import implied_options

    future = _schema({
        "present_value": {"type": "integer", "description": "The present value of the investment."},
        "annual_interest_rate": {"type": "number", "description": "The annual interest rate of the investment."},
        "compounding_periods_per_year": {"type": "integer", "description":
                                         "The number of times that interest is compounded per year. Default is 1."},
        "time_years": {"type": "integer", "description": "The investment horizon in years."}},
        ["present_value", "annual_interest_rate", "time_years"])
    task = ("Predict the future value of a $5000 investment with an annual interest rate of 5% in 3 years with "
            "monthly compounding.")
    args = {"present_value": 5000, "annual_interest_rate": 0.05, "time_years": 3}
    assert implied_options(args, future, task) == {**args, "compounding_periods_per_year": 12}
    assert implied_options(args, future, "a $5000 investment at 5% for 3 years") is None  # nothing left to give
    task = "the top five sushi restaurants with reviews above 4 in Tokyo"
    rated = _schema({"top": {"type": "integer", "description": "The number of top sushi places."},
                     "review_rate": {"type": "number", "description": "Places with review ratings above this."}},
                    ["top"])
    assert implied_options({"top": 5}, rated, task) == {"top": 5, "review_rate": 4}
    tie = _schema({"top": {"type": "integer", "description": "The number of top sushi places."},
                   "review_rate": {"type": "number", "description": "Sushi places with ratings above this."}},
                  ["top"])
    # 4 is next to "above", 5 ("top five sushi") next to "sushi": the description does not tell them apart
    assert implied_options({"top": 5}, tie, task) is None


def test_long_inputs_stay_bounded() -> None:
    """A value after a long run of capitalised words grows over a name's worth of them, not the whole text; a
    description listing thousands of values reads a few; a 100 KB task full of numbers anchors in time."""
    from react_agent.models.local._spans import LISTED_VALUES, NAME_WORDS_BACK
    from react_agent.models.local._values import anchored_numbers, implied_options

    task = "Find " + "Aa " * 30000 + "Zed"
    started = time.perf_counter()
    grown = whole_spans({"e": "Zed"}, _schema({"e": _text()}), task)
    assert grown == {"e": "Aa " * NAME_WORDS_BACK + "Zed"}
    assert len(described_values("Can be " + "'abc', " * 5000)) <= LISTED_VALUES
    props = {f"n{i}": {"type": "integer", "description": "The number of times interest is compounded per year"}
             for i in range(8)}
    numbers = _schema(props, ["n0", "n1"])
    task = "rate 5 compounded 7 years " * 4000
    anchored_numbers({"n0": 1, "n1": 2}, numbers, task)
    implied_options({"n0": 1, "n1": 2}, numbers, task)
    assert time.perf_counter() - started < 5.0  # a bound against quadratic blow-ups, not a performance claim


# --------------------------------------------------------------------------- clean spans
@pytest.mark.parametrize(("value", "fragment"), [
    ("size of the sculpture with", True), ("University in", True), ("in London", True), ("in", True),
    ("the", True), ("Who", True), ("Michelangelo", False), ("The Alchemist", False), ("A", False),
    ("Bank of America", False), ("New York", False), ("", False),
])
def test_is_fragment(value: str, fragment: bool) -> None:
    from react_agent.models.local._decoding import is_fragment

    assert is_fragment(value, "Find the size of the sculpture with title 'David' by Michelangelo.") is fragment


def test_a_fragment_is_decoded_again_among_clean_spans_and_otherwise_abstained_on() -> None:
    from react_agent.models.local._decoding import grounded_schema, should_abstain, ungrounded

    task = "Find the size of the sculpture with title 'David' by Michelangelo."
    schema = _schema({"artist": _text(), "title": _text()})
    args = {"artist": "size of the sculpture with", "title": "David"}
    assert ungrounded(args, schema, task) == []  # the span occurs in the task: grounding alone lets it pass
    assert ungrounded(args, schema, task, fragments=True) == ["artist"]
    retry = grounded_schema(schema, ["artist"], task, clean=True, taken=["David"])
    offered = retry["properties"]["artist"]["enum"]
    assert "Michelangelo" in offered and "David" not in offered
    assert not any(s.split()[-1] in {"with", "by", "the", "of"} for s in offered)
    assert "size of the sculpture with" in grounded_schema(schema, ["artist"], task)["properties"]["artist"]["enum"]
    assert should_abstain(args, schema, task, fragments=True) and not should_abstain(args, schema, task)


def test_clean_spans_in_the_staged_answer() -> None:
    task = "Find the size of the sculpture with title 'David' by Michelangelo."
    prompt = f"Now your turn\nTask: {task}\nAnswer:"
    schema = _schema({"artist": _text(), "title": _text()})
    answer = {"anyOf": [
        {"type": "object", "properties": {"thought": {"type": "string"}, "action": {"const": "sculpture"},
                                          "action_input": schema}, "required": ["thought", "action"]},
        {"type": "object", "properties": {"thought": {"type": "string"}, "action": {"const": FINISH},
                                          "action_input": {"type": "string"}}, "required": ["thought", "action"]}]}
    script = _Script('{"thought": "t", "action": "sculpture", ',
                     '{"artist": "size of the sculpture with", "title": "David"}}',
                     '{"artist": "Michelangelo", "title": "David"}}')
    text = _staged_answer(script, prompt, answer, two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES))
    assert json.loads(text)["action_input"] == {"artist": "Michelangelo", "title": "David"}
    assert "David" not in script.calls[2]["properties"]["artist"]["enum"]  # the sibling's value is not offered
    off = _Script('{"thought": "t", "action": "sculpture", ',
                  '{"artist": "size of the sculpture with", "title": "David"}}')
    text = _staged_answer(off, prompt, answer, two_stage=True, grounding=True, abstain=True,
                          values=frozenset(VALUE_TECHNIQUES) - {"clean_spans"})
    assert json.loads(text)["action_input"]["artist"] == "size of the sculpture with" and len(off.calls) == 2


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.text(max_size=40), task=_tasks, taken=st.lists(st.text(max_size=10), max_size=3),
       schema=_schemas)
def test_fragments_and_clean_grounding_take_any_text(value: str, task: str, taken: list[str], schema: Any) -> None:
    from react_agent.models.local._decoding import grounded_schema, is_fragment, ungrounded

    assert isinstance(is_fragment(value, task), bool)
    props = schema.get("properties") if isinstance(schema, dict) else None
    fields = list(props) if isinstance(props, dict) else []
    out = grounded_schema(schema, fields, task, clean=True, taken=taken)
    assert isinstance(out, dict)
    args = dict.fromkeys(fields, value)
    assert isinstance(ungrounded(args, schema, task, fragments=True), list)
