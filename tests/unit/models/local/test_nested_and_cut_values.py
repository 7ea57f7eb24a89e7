"""Session-7 techniques of the local model, without the model: values that hold a sibling's value
(``nested_spans``), arguments cut by the token budget (``retry_cut``), a FINISH decided again on the opening
turn (``reconsider_finish``) and the web-site pattern of ``website`` arguments."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from react_agent import ConfigError, ReactAgent, RunState
from react_agent._types import FINISH
from react_agent.models import LocalChatModel
from react_agent.models.local._decoding import SITE_PATTERN, URL_PATTERN, copied_fields, format_pattern
from react_agent.models.local._model import TECHNIQUES, _staged_answer
from react_agent.models.local._spans import NESTED_WORDS, nested_spans
from react_agent.models.local._values import VALUE_TECHNIQUES, corrected
from react_agent.testing import ScriptedChatModel
from react_agent.tools._examples import examples_for_tools, sample_value
from react_agent.tools._schema import answer_schema


def _schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required}


TEXT: dict[str, Any] = {"type": "string"}


# --------------------------------------------------------------------------- values that hold a sibling's value
@pytest.mark.parametrize(("args", "task", "fixed"), [
    ({"artist": "David by Michelangelo", "title": "David"}, "Find the size of the sculpture with title 'David' by "
     "Michelangelo.", {"artist": "Michelangelo", "title": "David"}),
    ({"team": "Barcelona", "league": "La Liga", "season": "2021 La Liga"}, "What's the ranking of Barcelona in the "
     "2021 La Liga season?", {"team": "Barcelona", "league": "La Liga", "season": "2021"}),
    ({"key": "C major", "type": "major"}, "What is the third major chord in C major scale?",
     {"key": "C", "type": "major"}),
])
def test_a_value_running_over_its_siblings_value_is_cut_to_the_rest(args: dict[str, Any], task: str,
                                                                    fixed: dict[str, Any]) -> None:
    schema = _schema(dict.fromkeys(args, TEXT))
    assert nested_spans(args, schema, task) == fixed
    assert corrected(args, schema, task, ["nested_spans"]) == fixed
    assert corrected(args, schema, task, []) == args  # off: unchanged


@pytest.mark.parametrize(("args", "task"), [
    ({"address": "5th Avenue, New York", "city": "New York"}, "Deliver it to 5th Avenue, New York today."),
    ({"location": "New York City", "date": "New York"}, "Events in New York City next week"),  # one name
    ({"message": "Send hello to Bob", "to": "Bob"}, "Send hello to Bob"),  # about its sibling
    ({"query": "weather in Paris", "city": "Paris"}, "What is the weather in Paris"),
    ({"query": "weather in the lovely old Paris", "city": "Paris"}, "weather in the lovely old Paris"),  # long
    ({"a": "xx yy", "b": "yy"}, "zz"),  # the rest is not in the task
    ({"a": "ab cd", "b": "cd"}, "ab cd"),  # "cd": too short to compare (MIN_OVERLAP)
    ({"artist": "David by Michelangelo", "title": "Michelangelo", "x": "David"}, "'David' by Michelangelo"),
])
def test_names_commas_cut_spans_long_texts_and_invented_rests_stay(args: dict[str, Any], task: str) -> None:
    schema = _schema(dict.fromkeys(args, TEXT))
    assert nested_spans(args, schema, task) is None


def test_only_free_text_is_cut() -> None:
    task = "Find the size of the sculpture with title 'David' by Michelangelo."
    args = {"artist": "David by Michelangelo", "title": "David"}
    assert nested_spans(args, _schema({"artist": {"enum": ["David by Michelangelo"]}, "title": TEXT}), task) is None
    assert nested_spans(args, _schema({"artist": {**TEXT, "pattern": "^.+$"}, "title": TEXT}), task) is None
    assert NESTED_WORDS == 6 and "nested_spans" in VALUE_TECHNIQUES and "nested_spans" in TECHNIQUES


_scalars = st.one_of(st.text(max_size=30), st.integers(), st.none(), st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=st.one_of(st.dictionaries(st.sampled_from(["a", "b", "c"]), _scalars, max_size=3), st.none(),
                      st.text(max_size=5)),
       task=st.one_of(st.text(max_size=120), st.just("David by Michelangelo, 2021 La Liga. C major")))
def test_nested_spans_never_raises_and_keeps_the_keys(args: Any, task: str) -> None:
    out = nested_spans(args, _schema({"a": TEXT, "b": TEXT, "c": {"type": "integer"}}), task)
    assert out is None or (isinstance(out, dict) and set(out) == set(args))


def test_a_100_kb_task_is_read_in_well_under_a_second() -> None:
    task = "Find the size of the sculpture with title 'David' by Michelangelo. " * 1600
    assert len(task) > 100_000
    args = {f"v{i}": f"David by Michelangelo {i}"[:30] for i in range(6)} | {"title": "David"}
    started = time.perf_counter()
    nested_spans(args, _schema(dict.fromkeys(args, TEXT)), task)
    assert time.perf_counter() - started < 5.0  # a bound against blow-ups, not a performance claim


# --------------------------------------------------------------------------- web sites
def test_a_website_argument_takes_a_host_name_with_or_without_a_scheme() -> None:
    site = format_pattern("website", TEXT)
    assert site == SITE_PATTERN and format_pattern("recipe_site", TEXT) == SITE_PATTERN
    for good in ("Foodnetwork.com", "www.example.org", "https://example.org", "example.org/recipes/1"):
        assert re.search(SITE_PATTERN, good), good
    for bad in ("Food Network", "foodnetwork", "a.b c", '"x".com', "https://"):
        assert not re.search(SITE_PATTERN, bad), bad
    assert format_pattern("url", TEXT) == URL_PATTERN  # a URL still has its scheme
    assert format_pattern("website", {**TEXT, "format": "uri"}) == URL_PATTERN  # the format wins
    assert sample_value("website", TEXT) == "example.org"  # the worked examples show the form
    assert sample_value("url", TEXT) == "https://example.org"


# --------------------------------------------------------------------------- cut arguments
class _Script:
    """A scripted ``complete(prompt, schema, ...)``: returns the next reply, records each call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, Mapping[str, Any], int]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1, spare: bool = False) -> str:
        self.calls.append((prompt, schema, min_tokens))
        self.spare = spare
        return self.replies.pop(0)


def _tool(name: str, description: str, props: dict[str, Any], required: list[str] | None = None) -> StructuredTool:
    return StructuredTool(name=name, description=description, args_schema=_schema(props, required),
                          func=lambda **kw: "ok")


PRICE = _tool("check_price", "Total price of items at a store.",
              {"items": {"type": "array", "items": TEXT}, "quantities": {"type": "array", "items": {"type": "integer"}},
               "store": TEXT, "express": {"type": "boolean"}}, ["items", "quantities"])
WEATHER = _tool("get_weather", "Current weather of a city.", {"city": TEXT})


def _prompt(task: str, tools: list[StructuredTool]) -> str:
    agent = ReactAgent(ScriptedChatModel(["unused"]), tools, prompts="en-compact", examples=examples_for_tools(tools))
    [message] = agent.build_messages(RunState(task))
    return str(message.content) + "\n"


TASK = "Check the total price for three pumpkins and two dozen eggs at Walmart."
HEAD = '{"thought": "t", "action": "check_price", '
RUNAWAY = '{"items": ["pumpkins", "eggs"], "quantities": [3, 2], "store": "all_eggs_1000000000000000'


def test_arguments_cut_by_the_budget_are_decoded_again_among_the_tasks_values() -> None:
    script = _Script(HEAD, RUNAWAY, '{"items": ["pumpkins", "eggs"], "quantities": [3, 2], "store": "Walmart"}}')
    text = _staged_answer(script, _prompt(TASK, [PRICE]), answer_schema([PRICE]), two_stage=True, grounding=False,
                          retry_cut=True)
    assert json.loads(text)["action_input"] == {"items": ["pumpkins", "eggs"], "quantities": [3, 2], "store": "Walmart"}
    _, retry, reserve = script.calls[-1]
    props = retry["properties"]
    assert "Walmart" in props["store"]["enum"] and "all_eggs" not in " ".join(props["store"]["enum"])
    assert set(props["quantities"]["items"]["enum"]) == {3, 2, 12}  # "three", "two dozen": the task's numbers
    assert props["express"] == {"type": "boolean"}  # not a copied field: as it was
    assert reserve > 1  # the budget the runaway spent does not starve the retry


def test_without_retry_cut_or_when_the_retry_is_cut_too_the_reply_stays_cut() -> None:
    off = _Script(HEAD, RUNAWAY)
    text = _staged_answer(off, _prompt(TASK, [PRICE]), answer_schema([PRICE]), two_stage=True, grounding=False)
    assert text.endswith(RUNAWAY) and len(off.calls) == 2
    twice = _Script(HEAD, RUNAWAY, '{"items": ["pumpkins", "eggs"], "quantities": [3, 2], "store": "Wal')
    text = _staged_answer(twice, _prompt(TASK, [PRICE]), answer_schema([PRICE]), two_stage=True, grounding=False,
                          retry_cut=True)
    assert text.endswith(RUNAWAY)  # never a call made of a cut value
    with pytest.raises(ValueError):
        json.loads(text)


def test_a_cut_finish_text_is_closed_where_it_was_cut() -> None:
    head = '{"thought": "t", "action": "FINISH", '
    script = _Script(head, '"I am not sure, I am not sure, I am not \\')
    text = _staged_answer(script, _prompt("What is love?", [PRICE]), answer_schema([PRICE]), two_stage=True,
                          grounding=False, retry_cut=True)
    decided = json.loads(text)
    assert decided["action"] == FINISH and decided["action_input"] == "I am not sure, I am not sure, I am not "


def test_copied_fields_are_free_text_numbers_and_their_lists() -> None:
    schema = _schema({"s": TEXT, "n": {"type": "number"}, "l": {"type": "array", "items": TEXT},
                      "e": {"type": "string", "enum": ["a"]}, "b": {"type": "boolean"}, "o": {"type": "object"},
                      "opt": {"anyOf": [TEXT, {"type": "null"}]}, "bad": "x"})
    assert copied_fields(schema) == ["s", "n", "l", "opt"]
    assert copied_fields({"properties": "odd"}) == [] and copied_fields({}) == []


# --------------------------------------------------------------------------- FINISH decided again
def _offered(schema: Mapping[str, Any]) -> list[str]:
    return [b["properties"]["action"]["const"] for b in schema["anyOf"]]


def test_reconsider_finish_decides_the_opening_turn_again_without_finish() -> None:
    prompt = _prompt("How warm is it in Oslo now?", [WEATHER, PRICE])
    script = _Script('{"thought": "t", "action": "FINISH", ', '{"thought": "t", "action": "get_weather", ',
                     '{"city": "Oslo"}}')
    text = _staged_answer(script, prompt, answer_schema([WEATHER, PRICE]), two_stage=True, grounding=True,
                          abstain=True, reconsider_finish=True)
    assert FINISH in _offered(script.calls[0][1]) and FINISH not in _offered(script.calls[1][1])
    assert json.loads(text)["action_input"] == {"city": "Oslo"}


def test_after_reconsidering_abstaining_may_still_answer_finish() -> None:
    prompt = _prompt("How warm is it on the moon?", [WEATHER, PRICE])
    script = _Script('{"thought": "t", "action": "FINISH", ', '{"thought": "t", "action": "get_weather", ',
                     '{"city": "Paris"}}', '"No tool knows the moon."}')
    text = _staged_answer(script, prompt, answer_schema([WEATHER, PRICE]), two_stage=True, grounding=False,
                          abstain=True, reconsider_finish=True)
    assert json.loads(text) == {"thought": "t", "action": FINISH, "action_input": "No tool knows the moon."}


def test_reconsider_finish_leaves_later_turns_unrelated_tasks_and_the_default_alone() -> None:
    head, marker, turn = _prompt("How warm is it in Oslo now?", [WEATHER]).rpartition("Now your turn")
    later = head + marker + turn.replace("No history yet", "Iteration 1: called get_weather. Result: 12 C")
    for prompt, options in ((later, {"reconsider_finish": True}),
                            (_prompt("How warm is it in Oslo now?", [WEATHER]), {}),
                            (_prompt("Write me a sonnet about love", [WEATHER]),
                             {"reconsider_finish": True, "abstain_unrelated": True})):
        script = _Script('{"thought": "t", "action": "FINISH", ', '"12 C."}')
        text = _staged_answer(script, prompt, answer_schema([WEATHER]), two_stage=True, grounding=False,
                              **options)
        assert json.loads(text)["action"] == FINISH and len(script.calls) == 2
    assert LocalChatModel.model_fields["reconsider_finish"].default is False
    assert LocalChatModel.model_fields["retry_cut"].default is True
    assert LocalChatModel.model_fields["ask_optionals"].default is True


@pytest.mark.parametrize("name", ["retry_cut", "reconsider_finish", "nested_spans", "ask_optionals"])
def test_the_new_options_take_booleans_only(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        LocalChatModel(**{name: "yes"})


# --------------------------------------------------------------------------- optional arguments asked for
from react_agent.models.local._values import asked_optionals, kept_optionals  # noqa: E402

DRAW = _schema({"width": {"type": "integer"}, "height": {"type": "integer"}, "color": TEXT, "unit": TEXT,
                "filled": {"type": "boolean"}, "style": {"type": "string", "enum": ["solid", "dashed"]},
                "tags": {"type": "array", "items": TEXT}}, ["width", "height"])
DRAW_TASK = "Draw a rectangle with a width of 20 units and height of 10 units in red."


def test_asked_optionals_are_the_left_out_copied_fields() -> None:
    assert asked_optionals({"width": 20, "height": 10}, DRAW) == ["color", "unit", "tags"]
    assert asked_optionals({"width": 20, "height": 10, "color": "red"}, DRAW) == ["unit", "tags"]


def test_kept_optionals_keeps_what_the_task_gives_and_drops_the_rest() -> None:
    decided = {"width": 20, "height": 10}
    filled = {**decided, "color": "red", "unit": "10", "tags": ["blue"]}
    # "red" is in the task; "10" is the height's value; "blue" is invented
    assert kept_optionals(decided, filled, DRAW, DRAW_TASK) == {"width": 20, "height": 10, "color": "red"}
    assert kept_optionals(decided, {**decided, "color": "in", "unit": "", "tags": []}, DRAW, DRAW_TASK) == \
        {"width": 20, "height": 10, "tags": []}  # a fragment and an empty text are no values
    assert kept_optionals(decided, None, DRAW, DRAW_TASK) == decided
    assert kept_optionals(decided, {**decided, "width": 99, "filled": True}, DRAW, DRAW_TASK) == decided


def test_ask_optionals_decodes_the_left_out_options_with_the_decided_ones_fixed() -> None:
    tool = _tool("draw_rectangle", "Draw a rectangle.", DRAW["properties"], ["width", "height"])
    script = _Script('{"thought": "t", "action": "draw_rectangle", ', '{"width": 20, "height": 10}}',
                     '{"width": 20, "height": 10, "color": "red", "unit": "units", "tags": ["x"]}}')
    text = _staged_answer(script, _prompt(DRAW_TASK, [tool]), answer_schema([tool]), two_stage=True,
                          grounding=False, ask_optionals=True)
    assert json.loads(text)["action_input"] == {"width": 20, "height": 10, "color": "red", "unit": "units"}
    _, ask, _ = script.calls[-1]
    assert ask["properties"]["width"] == {"const": 20} and ask["properties"]["height"] == {"const": 10}
    assert ask["required"] == ["width", "height", "color", "unit", "tags"]
    off = _Script('{"thought": "t", "action": "draw_rectangle", ', '{"width": 20, "height": 10}}')
    text = _staged_answer(off, _prompt(DRAW_TASK, [tool]), answer_schema([tool]), two_stage=True, grounding=False)
    assert json.loads(text)["action_input"] == {"width": 20, "height": 10} and len(off.calls) == 2


# --------------------------------------------------------------------------- values a list allows, in the prompt
NUTRITION = _tool("nutritional_info", "Retrieve nutritional information for a given food item from a store",
                  {"store": TEXT, "food": TEXT,
                   "information": {"type": "array", "items": {"type": "string",
                                                              "enum": ["Protein", "Calories", "Fat"]}}})
AVOCADO = "Check the amount of protein, calories and carbs in an avocado from Walmart."


def test_a_list_of_an_enum_shows_its_values_in_the_prompt_and_the_examples() -> None:
    from react_agent.tools._registry import tool_spec

    [information] = [a for a in tool_spec(NUTRITION)["args"] if a["name"] == "information"]
    assert information["enum"] == ["Protein", "Calories", "Fat"]
    prompt = _prompt(AVOCADO, [NUTRITION])
    assert "(array of string, required; one of: Protein, Calories, Fat)" in prompt
    assert sample_value("information", NUTRITION.args_schema["properties"]["information"]) == ["Protein", "Calories"]
    assert sample_value("tags", {"type": "array", "items": {"enum": ["only"]}}) == ["only", "only"]


def test_relevance_reads_the_values_an_argument_allows() -> None:
    from react_agent.models.local._decoding import relevant_tools, task_text, tool_descriptions

    prompt = _prompt(AVOCADO, [NUTRITION, WEATHER])
    described = tool_descriptions(prompt, ["nutritional_info", "get_weather"], arguments=True)
    assert "Protein, Calories, Fat" in described["nutritional_info"]
    assert "required" not in described["nutritional_info"]  # the type suffix itself is no description
    assert relevant_tools(described, task_text(prompt)) == ["nutritional_info"]


def test_two_options_filled_with_one_span_are_both_left_out() -> None:
    schema = _schema({"to": TEXT, "body": TEXT, "cc": TEXT, "bcc": TEXT, "subject": TEXT}, ["to", "body"])
    task = "Send an email to John Doe at john.doe@example.com about the meeting: Let's meet at 10 AM."
    decided = {"to": "john.doe@example.com", "body": "Let's meet at 10 AM."}
    filled = {**decided, "cc": "John Doe", "bcc": "John Doe", "subject": "meeting"}
    assert kept_optionals(decided, filled, schema, task) == {**decided, "subject": "meeting"}


class _Llama:
    """A stand-in for ``llama_cpp.Llama.create_completion``: each call uses ``tokens`` (at most its limit)."""

    def __init__(self, *tokens: int) -> None:
        self.tokens, self.limits = list(tokens), []

    def create_completion(self, prompt: str, *, grammar: Any, max_tokens: int, **options: Any) -> dict[str, Any]:
        self.limits.append(max_tokens)
        wanted = self.tokens.pop(0)
        used = min(wanted, max_tokens)
        return {"usage": {"prompt_tokens": 1, "completion_tokens": used},
                "choices": [{"text": "{}", "finish_reason": "length" if wanted > max_tokens else "stop"}]}


def test_a_spare_completion_uses_only_what_is_left_and_never_cuts_the_answer() -> None:
    from react_agent.models.local._model import _Calls

    calls = _Calls(_Llama(90, 40), {}, 96)
    calls("p", TEXT)
    assert calls("p", TEXT, spare=True) == "" and calls.completion_tokens == 90  # 6 left: not made
    roomy = _Calls(_Llama(40, 80), {}, 96)
    roomy("p", TEXT)
    roomy("p", TEXT, spare=True)
    assert roomy.llama.limits == [96, 56] and roomy.completion_tokens == 96 and roomy.finish == "stop"
    plain = _Calls(_Llama(40, 80), {}, 96)
    plain("p", TEXT)
    plain("p", TEXT)
    assert plain.finish == "length"


# --------------------------------------------------------------------------- whole spans, round 7
from react_agent.models.local._decoding import filled_enums  # noqa: E402
from react_agent.models.local._spans import whole_spans  # noqa: E402
from react_agent.models.local._values import implied_options  # noqa: E402

CITY_STATE = {"type": "string", "description": "The city and state, e.g. Denver, CO"}


@pytest.mark.parametrize(("args", "props", "task", "fixed"), [
    ({"color_name": "green"}, {"color_name": TEXT}, "Identify the basic RGB value of Sea Green color?",
     {"color_name": "Sea Green"}),
    ({"case_title": "Roe v Wade'.Include dissent information"}, {"case_title": TEXT},
     "Retrieve the case titled 'Roe v. Wade'.Include dissent information.", {"case_title": "Roe v. Wade"}),
    ({"location": "Denver"}, {"location": CITY_STATE}, "Find a hospital around Denver, Colorado with pediatrics.",
     {"location": "Denver, Colorado"}),
    ({"start": "Boston"}, {"start": {**TEXT, "description": "Specify the location in the format of City, State."}},
     "What's the distance between Boston, MA, and Washington, D.C.?", {"start": "Boston, MA"}),
])
def test_whole_spans_takes_the_tasks_casing_quotes_and_regions(args: dict[str, Any], props: dict[str, Any],
                                                             task: str, fixed: dict[str, Any]) -> None:
    assert whole_spans(args, _schema(props), task) == fixed


@pytest.mark.parametrize(("args", "props", "task"), [
    ({"color": "green"}, {"color": TEXT}, "green and Green"),  # written twice: which one is unknown
    ({"color": "green"}, {"color": TEXT}, "paint it green"),  # already as written
    ({"title": "Python tutorials"}, {"title": TEXT}, "Search 'Python' tutorials"),  # no quote in the value
    ({"location": "Denver"}, {"location": TEXT}, "around Denver, Colorado"),  # the description asks no state
    ({"location": "Denver, CO"}, {"location": CITY_STATE}, "around Denver, CO, Colorado"),  # has one
    ({"location": "Denver"}, {"location": CITY_STATE}, "from Denver, and then"),  # no region after it
])
def test_whole_spans_leaves_ambiguous_cased_unquoted_and_unasked_values(args: dict[str, Any],
                                                                     props: dict[str, Any], task: str) -> None:
    assert whole_spans(args, _schema(props), task) is None


def test_flags_read_past_allow_and_consider_and_enums_by_their_singular() -> None:
    flags = _schema({"origin": TEXT, "consider_terrain": {"type": "boolean"},
                     "allow_transfer": {"type": "boolean"}}, ["origin"])
    assert implied_options({"origin": "New York"}, flags, "From New York to Boston, accounting for terrain.") == \
        {"origin": "New York", "consider_terrain": True}
    assert implied_options({"origin": "NY"}, flags, "NY to LA by train, and you can transfer") == \
        {"origin": "NY", "allow_transfer": True}
    assert implied_options({"origin": "NY"}, flags, "NY to LA, no transfer and no terrain") is None
    traits = _schema({"type": TEXT, "traits": {"type": "array", "items": {"enum": ["strengths", "weaknesses"]}}},
                     ["type"])
    assert filled_enums({"type": "ENFJ"}, traits, "strength and weakness traits for ENFJ") == \
        {"type": "ENFJ", "traits": ["strengths", "weaknesses"]}
    assert filled_enums({"type": "ENFJ"}, traits, "traits for ENFJ") is None


def test_nested_spans_cuts_a_five_word_span_over_its_sibling() -> None:
    args = {"team_name": "Los Angeles Lakers", "league": "Los Angeles Lakers in NBA"}
    assert nested_spans(args, _schema({"team_name": TEXT, "league": TEXT}),
                        "Get the latest game score for Los Angeles Lakers in NBA.") == \
        {"team_name": "Los Angeles Lakers", "league": "NBA"}


# --------------------------------------------------------------------------- hostile inputs
_values_st = st.one_of(st.text(max_size=20), st.integers(), st.floats(allow_nan=True), st.none(), st.booleans(),
                       st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                                   max_size=2))
_schemas_st = st.one_of(
    st.just(DRAW), st.just({"properties": "odd"}), st.just({}), st.just({"properties": {"a": "x", "b": None}}),
    st.just(_schema({"a": {"anyOf": [TEXT, {"type": "null"}]}, "b": {"type": "array"}, "c": {"items": 3}}, ["a"])))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=st.dictionaries(st.sampled_from(["width", "height", "color", "unit", "tags", "a", "b", "c"]), _values_st,
                            max_size=4),
       filled=st.one_of(st.none(), st.text(max_size=5),
                        st.dictionaries(st.sampled_from(["color", "unit", "tags", "a", "b", "c", "zz"]), _values_st,
                                        max_size=5)),
       schema=_schemas_st, task=st.one_of(st.text(max_size=80), st.just(DRAW_TASK)))
def test_optionals_and_copied_fields_never_raise(args: dict[str, Any], filled: Any, schema: Any, task: str) -> None:
    assert isinstance(copied_fields(schema), list)
    asked = asked_optionals(args, schema)
    assert not set(asked) & set(args)
    kept = kept_optionals(args, filled, schema, task)
    assert {k: kept[k] for k in args} == args  # what was decided stays as it was
    assert set(kept) - set(args) <= set(asked)  # only asked-for options are added


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.text(max_size=40), description=st.one_of(st.text(max_size=40), st.just("The city and state, e.g. "
                                                                                         "Denver, CO")),
       task=st.one_of(st.text(max_size=120), st.just("'Roe v. Wade'.Include, Sea Green, Denver, Colorado")))
def test_the_new_span_rules_never_raise(value: str, description: str, task: str) -> None:
    out = whole_spans({"v": value}, _schema({"v": {**TEXT, "description": description}}), task)
    assert out is None or set(out) == {"v"}


def test_span_rules_on_a_100_kb_task_stay_fast() -> None:
    task = ("Find 'Roe v. Wade' in Denver, Colorado and Sea Green " * 2000)[:120_000]
    schema = _schema({"a": CITY_STATE, "b": TEXT, "c": TEXT})
    args = {"a": "Denver", "b": "green", "c": "Roe v Wade'.Include dissent"}
    started = time.perf_counter()
    whole_spans(args, schema, task)
    nested_spans({"a": "Denver in Colorado", "b": "Denver"}, schema, task)
    kept_optionals({"a": "Denver"}, {"a": "Denver", "b": "Sea Green", "c": "x" * 50_000}, schema, task)
    assert time.perf_counter() - started < 5.0  # a bound against blow-ups, not a performance claim


class Node(BaseModel):
    name: str
    children: list[Node] = []


def store(root: Node, label: str = "") -> str:
    """Store a tree."""
    return "ok"


def test_asking_for_optionals_of_a_recursive_tool_needs_no_definitions() -> None:
    """The hoisted ``$defs`` of a recursive schema are not carried into the ask schema: only free text, numbers
    and their lists are asked for, and the decided arguments are constants."""
    tool = StructuredTool.from_function(store, name="store_tree", description="Store a tree with a label.")
    script = _Script('{"thought": "t", "action": "store_tree", ', '{"root": {"name": "a", "children": []}}}',
                     '{"root": {"name": "a", "children": []}, "label": "oak"}}')
    text = _staged_answer(script, _prompt("Store the tree a labelled oak", [tool]), answer_schema([tool]),
                          two_stage=True, grounding=False, ask_optionals=True)
    assert json.loads(text)["action_input"] == {"root": {"name": "a", "children": []}, "label": "oak"}
    _, ask, _ = script.calls[-1]
    assert "$ref" not in json.dumps(ask) and ask["properties"]["root"] == {"const": {"name": "a", "children": []}}


class Address(BaseModel):
    city: str
    zip_code: str


class Chain(BaseModel):
    name: str
    next: Chain | None
    links: list[Chain]


def ship(to: Address, weight: float) -> str:
    """Ship a parcel."""
    return "ok"


def chain(head: Chain) -> str:
    """Store a chain."""
    return "ok"


def test_worked_examples_fill_nested_and_recursive_models_from_their_definitions() -> None:
    """A tool whose argument is a pydantic model (a ``$ref`` into ``$defs``) gets an example value that its
    schema accepts: the agent is built with the generated examples (it validates them) instead of raising."""
    shipping = StructuredTool.from_function(ship, name="ship", description="Ship a parcel.")
    chained = StructuredTool.from_function(chain, name="chain", description="Store a chain.")
    examples = examples_for_tools([shipping, chained])
    by_tool = {e.answer.action: e.answer.action_input for e in examples if not e.answer.is_finish}
    assert set(by_tool["ship"]["to"]) == {"city", "zip_code"} and isinstance(by_tool["ship"]["weight"], float)
    head = by_tool["chain"]["head"]
    assert isinstance(head, dict) and {"name", "next", "links"} <= set(head)  # a bounded depth, no recursion error
    ReactAgent(ScriptedChatModel(["unused"]), [shipping, chained], examples=examples)
