"""Tool relevance (preselection, abstaining on an unrelated task) and list grounding: the pure functions of
``models.local._decoding`` and their use in ``LocalChatModel``'s staged answer, with a scripted completion."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from react_agent import ReactAgent, RunState
from react_agent._types import FINISH
from react_agent.models import LocalChatModel
from react_agent.models.local._decoding import (
    content_stems,
    grounded_schema,
    is_clause,
    relevant_tools,
    should_abstain,
    tool_descriptions,
    ungrounded,
    unsupported,
)
from react_agent.models.local._model import _offered as offered_actions
from react_agent.models.local._model import _staged_answer
from react_agent.testing import ScriptedChatModel
from react_agent.tools._schema import answer_schema


def _tool(name: str, description: str, props: dict[str, Any]) -> StructuredTool:
    schema = {"type": "object", "properties": props, "required": list(props)}
    return StructuredTool(name=name, description=description, args_schema=schema, func=lambda **kw: "ok")


TOOLS = [
    _tool("determine_body_mass_index", "Calculate body mass index given weight and height.",
          {"weight": {"type": "number"}, "height": {"type": "number"}}),
    _tool("calculate_triangle_area", "Calculate the area of a triangle given its base and height.",
          {"base": {"type": "integer"}, "height": {"type": "integer"}}),
    _tool("get_standard_deviation", "Standard deviation of a list of numbers.",
          {"data": {"type": "array", "items": {"type": "number"}}}),
]


def _prompt(task: str, tools: list[StructuredTool] = TOOLS) -> str:
    """The compact step prompt a ReactAgent builds for ``task`` (scripted model: nothing is called)."""
    agent = ReactAgent(ScriptedChatModel(["unused"]), tools, prompts="en-compact")
    [message] = agent.build_messages(RunState(task))
    return str(message.content) + "\n"


class _Script:
    """A scripted ``complete(prompt, schema, ...)``: returns the next reply, records each call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, Mapping[str, Any], str, int]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append((prompt, schema, suffix, min_tokens))
        return self.replies.pop(0)


def _offered(schema: Mapping[str, Any]) -> list[str]:
    return [b["properties"]["action"]["const"] for b in schema["anyOf"]]


# --------------------------------------------------------------------------- the pure functions


def test_content_stems_drop_function_words_numbers_and_generic_verbs() -> None:
    assert content_stems("Calculate the area of a triangle given the base is 10 meters") == {
        "area", "trian", "base", "meter"}
    assert content_stems("calculate_triangleArea") == {"trian", "area"}  # snake and camel case split
    assert content_stems("users") == content_stems("user") == {"user"}  # a plural s is dropped
    assert content_stems("Найди пользователя и его email") == {"найди", "польз", "email"}
    assert content_stems("What is 12 * 3?") == set()


def test_tool_descriptions_are_read_from_the_rendered_tool_list() -> None:
    prompt = _prompt("anything")
    found = tool_descriptions(prompt, ["determine_body_mass_index", "missing"])
    assert found == {"determine_body_mass_index":
                     "determine_body_mass_index Calculate body mass index given weight and height."}


def test_relevant_tools_keep_the_best_overlap() -> None:
    texts = {t.name: f"{t.name} {t.description}" for t in TOOLS}
    assert relevant_tools(texts, "Find the area of a triangle with a base of 10 and height of 5.") == [
        "calculate_triangle_area"]
    assert relevant_tools(texts, "What is the capital of France?") == []  # no tool is about it
    assert relevant_tools(texts, "Which height and weight are normal?") == ["determine_body_mass_index"]
    # nothing to compare: no descriptions, no content word, or another alphabet
    assert relevant_tools({}, "triangle area") is None
    assert relevant_tools(texts, "What is 12 * 3?") is None
    assert relevant_tools(texts, "Найди площадь треугольника") is None


# --------------------------------------------------------------------------- list grounding

LIST_SCHEMA = {"type": "object", "properties": {
    "data": {"type": "array", "items": {"type": "number"}},
    "counts": {"type": "array", "items": {"type": "integer"}},
    "names": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
    "kinds": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
}, "required": ["data", "names", "kinds"]}
LIST_TASK = "Standard deviation of 3.5, 7 and 12 for Anna and Leo"


def test_lists_are_checked_item_by_item() -> None:
    good = {"data": [3.5, 7, 12], "names": ["Anna", "leo"], "kinds": ["a"]}
    assert ungrounded(good, LIST_SCHEMA, LIST_TASK) == []
    assert unsupported(good, LIST_SCHEMA, LIST_TASK) == (0, 2)  # kinds has an enum: not checked
    copied = {"data": [2.5, 1.5], "names": ["Anna", "Bob"], "counts": [7], "kinds": ["b"]}
    assert ungrounded(copied, LIST_SCHEMA, LIST_TASK) == ["data", "names"]
    assert unsupported(copied, LIST_SCHEMA, LIST_TASK) == (2, 2)
    assert should_abstain({"data": [3.5, 99], "names": [], "kinds": []}, LIST_SCHEMA, LIST_TASK)
    assert not should_abstain({"data": [], "names": None, "kinds": []}, LIST_SCHEMA, LIST_TASK)  # claims nothing


def test_grounded_schema_restricts_list_items_to_the_task() -> None:
    grounded = grounded_schema(LIST_SCHEMA, ["data", "counts", "names"], LIST_TASK)
    props = grounded["properties"]
    assert props["data"] == {"type": "array", "items": {"enum": [3.5, 7, 12]}}
    assert props["counts"] == {"type": "array", "items": {"enum": [7, 12]}}  # whole numbers for integers
    assert props["names"]["type"] == "array" and "Anna" in props["names"]["items"]["enum"]
    assert "anyOf" not in props["names"]
    assert grounded_schema(LIST_SCHEMA, ["data"], "no numbers here")["properties"]["data"] == LIST_SCHEMA[
        "properties"]["data"]


# --------------------------------------------------------------------------- the staged answer


def test_preselect_offers_only_the_related_tools() -> None:
    schema = answer_schema(TOOLS)
    prompt = _prompt("Find the area of a triangle with a base of 10 and height of 5.")
    script = _Script('{"thought": "t", "action": "calculate_triangle_area", ', '{"base": 10, "height": 5}}')
    text = _staged_answer(script, prompt, schema, two_stage=True, grounding=True, abstain=True, preselect=True)
    assert json.loads(text)["action_input"] == {"base": 10, "height": 5}
    assert _offered(script.calls[0][1]) == ["calculate_triangle_area", FINISH]
    off = _Script('{"thought": "t", "action": "calculate_triangle_area", ', '{"base": 10, "height": 5}}')
    _staged_answer(off, prompt, schema, two_stage=True, grounding=True, abstain=True, preselect=False)
    assert _offered(off.calls[0][1]) == [*(t.name for t in TOOLS), FINISH]


def test_an_unrelated_task_offers_only_finish_with_a_short_answer() -> None:
    schema = answer_schema(TOOLS)
    prompt = _prompt("What is the capital of France?")
    script = _Script('{"thought": "No tool knows capitals.", "action": "FINISH", ', '"I cannot answer that."}')
    text = _staged_answer(script, prompt, schema, two_stage=True, grounding=True, abstain=True,
                          preselect=True, abstain_unrelated=True)
    assert json.loads(text) == {"thought": "No tool knows capitals.", "action": FINISH,
                                "action_input": "I cannot answer that."}
    assert _offered(script.calls[0][1]) == [FINISH]
    _, answer_schema_, suffix, reserve = script.calls[1]
    assert answer_schema_ == {"type": "string", "maxLength": 160} and suffix == "}" and reserve == 80
    # abstain_unrelated off: every tool stays offered (preselect has nothing to keep)
    kept = _Script('{"thought": "t", "action": "FINISH", ', '"x"}')
    _staged_answer(kept, prompt, schema, two_stage=True, grounding=True, preselect=True, abstain_unrelated=False)
    assert _offered(kept.calls[0][1]) == [*(t.name for t in TOOLS), FINISH]


def test_grounding_redecodes_a_copied_list_and_abstains_when_the_task_has_none() -> None:
    schema = answer_schema(TOOLS)
    prompt = _prompt("Get the standard deviation of 4, 8 and 15.")
    script = _Script('{"thought": "t", "action": "get_standard_deviation", ', '{"data": [2.5, 1.5]}}',
                     '{"data": [4, 8, 15]}}')
    text = _staged_answer(script, prompt, schema, two_stage=True, grounding=True, abstain=True, preselect=True)
    assert json.loads(text)["action_input"] == {"data": [4, 8, 15]}
    assert script.calls[2][1]["properties"]["data"] == {"type": "array", "items": {"enum": [4, 8, 15]}}
    no_numbers = _prompt("Get the standard deviation of my grades.")
    script = _Script('{"thought": "t", "action": "get_standard_deviation", ', '{"data": [2.5, 1.5]}}',
                     '"Which numbers?"}')
    text = _staged_answer(script, no_numbers, schema, two_stage=True, grounding=True, abstain=True, preselect=True)
    assert json.loads(text)["action"] == FINISH
    assert len(script.calls) == 3  # no second decoding of the arguments: no number of the task would fit


def test_local_model_has_the_relevance_options_on_by_default() -> None:
    model = LocalChatModel()
    assert model.preselect and model.abstain_unrelated and model.fill_enums
    assert not LocalChatModel(preselect=False, abstain_unrelated=False).preselect


@pytest.mark.parametrize("task", ["Register user Ivan with email ivan@test.com", "Find user Ivan",
                                  "Зарегистрируй пользователя Ivan с email ivan@test.com",
                                  "Найди пользователя Ivan"])
def test_the_demo_tasks_keep_their_tools(task: str, tmp_path: Any) -> None:
    from react_agent.demo import make_demo_tools

    lang = "ru" if any("\u0400" <= ch <= "\u04ff" for ch in task) else "en"
    tools = make_demo_tools(db_path=tmp_path / "users.db", lang=lang)
    prompt = _prompt(task, tools)
    texts = tool_descriptions(prompt, [t.name for t in tools])
    kept = relevant_tools(texts, task)
    assert kept, (task, kept)
    assert ("register_user" if "egist" in task or "арегистр" in task else "search_db") in kept


def test_task_text_leaves_out_the_templates_own_lines() -> None:
    from react_agent.models.local._decoding import grounding_source, task_text
    from react_agent.tools._examples import examples_for_tools

    agent = ReactAgent(ScriptedChatModel(["unused"]), TOOLS, prompts="en-compact", examples=examples_for_tools(TOOLS))
    [message] = agent.build_messages(RunState("Find the history of triangles"))
    prompt = str(message.content) + "\n"
    assert "No history yet" in grounding_source(prompt)
    assert task_text(prompt).strip() == "Find the history of triangles"  # "history" is not the task's word here
    assert task_text("no marker, no examples") == "no marker, no examples"


# --------------------------------------------------------------------------- optional enums

ENUM_SCHEMA = {"type": "object", "properties": {
    "location": {"type": "string"},
    "diet": {"type": "array", "items": {"type": "string", "enum": ["vegan", "gluten-free", "halal"]}},
    "size": {"type": "string", "enum": ["small", "large"]},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "kind": {"type": "string", "enum": ["Thai", "Greek"]},
}, "required": ["location", "kind"]}


def test_filled_enums_adds_the_optional_values_the_task_names() -> None:
    from react_agent.models.local._decoding import filled_enums

    task = "Find a large Thai place in Manhattan with a vegan and gluten-free menu, a b c."
    assert filled_enums({"location": "Manhattan", "kind": "Thai"}, ENUM_SCHEMA, task) == {
        "location": "Manhattan", "kind": "Thai", "diet": ["vegan", "gluten-free"], "size": "large"}
    # a value the call has is kept; required ones are the model's; short values ("a", "b") are never looked for
    assert filled_enums({"location": "x", "size": "small", "diet": []}, ENUM_SCHEMA, task) is None
    assert filled_enums({"location": "x"}, ENUM_SCHEMA, "Find a place") is None
    assert filled_enums({"location": "x"}, ENUM_SCHEMA, "the largest veganism") is None  # whole words only
    assert filled_enums("not a dict", ENUM_SCHEMA, task) is None


def test_staged_answer_fills_named_optional_enums() -> None:
    tool = _tool("find_restaurants", "Find restaurants by location and cuisine.", {})
    schema = answer_schema([tool])
    schema["anyOf"][0]["properties"]["action_input"] = ENUM_SCHEMA
    prompt = _prompt("Find Thai restaurants in Manhattan with a vegan menu.", [tool])
    script = _Script('{"thought": "t", "action": "find_restaurants", ', '{"location": "Manhattan", "kind": "Thai"}}')
    text = _staged_answer(script, prompt, schema, two_stage=True, grounding=True, abstain=True, fill_enums=True)
    assert json.loads(text)["action_input"] == {"location": "Manhattan", "kind": "Thai", "diet": ["vegan"]}
    script = _Script('{"thought": "t", "action": "find_restaurants", ', '{"location": "Manhattan", "kind": "Thai"}}')
    text = _staged_answer(script, prompt, schema, two_stage=True, grounding=True, abstain=True, fill_enums=False)
    assert json.loads(text)["action_input"] == {"location": "Manhattan", "kind": "Thai"}


def test_a_value_taken_from_the_templates_lines_is_not_grounded() -> None:
    """ "No history yet" is the prompt's line, not the task's: a call with "No" is decoded again from the task."""
    from react_agent.tools._examples import examples_for_tools

    books = _tool("search_holy_books", "Search content, chapters or authors of holy books.",
                  {"book": {"type": "string"}})
    agent = ReactAgent(ScriptedChatModel(["unused"]), [books], prompts="en-compact",
                       examples=examples_for_tools([books]))
    [message] = agent.build_messages(RunState("What is a holy book?"))
    prompt = str(message.content) + "\n"
    script = _Script('{"thought": "t", "action": "search_holy_books", ', '{"book": "No"}}', '{"book": "holy book"}}')
    text = _staged_answer(script, prompt, answer_schema([books]), two_stage=True, grounding=True, abstain=True)
    assert json.loads(text)["action_input"] == {"book": "holy book"}
    assert len(script.calls) == 3  # "No" was suspect: decoded again
    offered = script.calls[2][1]["properties"]["book"]["enum"]
    assert "holy book" in offered and "No" not in offered and not any("history" in v for v in offered)


# --------------------------------------------------------------------------- argument descriptions and clauses
LEADER = StructuredTool(
    name="historic_leader_search", description="Retrieve information about a historical leader given a location.",
    args_schema={"type": "object", "properties": {
        "location": {"type": "string", "description": "The country or region in question."},
        "title": {"type": "string", "description": "The official title of the position. Default is 'King'."}},
        "required": ["location"]}, func=lambda **kw: "ok")


def test_relevance_reads_the_argument_descriptions_the_prompt_lists() -> None:
    task = "Who was the King of France in 1510?"
    prompt = _prompt(task, [LEADER, *TOOLS])
    names = [LEADER.name, *(t.name for t in TOOLS)]
    plain = tool_descriptions(prompt, names)
    described = tool_descriptions(prompt, names, arguments=True)
    assert "King" not in plain[LEADER.name] and "'King'" in described[LEADER.name]
    assert "(string" not in described[LEADER.name]  # the type annotations are not words of the tool
    assert relevant_tools(plain, task) == []  # the tool's own line shares no word with the question
    assert relevant_tools(described, task) == [LEADER.name]
    schema = answer_schema([LEADER, *TOOLS])
    offered, only_finish = offered_actions(prompt, schema, task, preselect=True, abstain_unrelated=True)
    assert not only_finish
    assert _offered(offered) == [LEADER.name, FINISH]


@pytest.mark.parametrize(("value", "task", "clause"), [
    ("Who", "Who won the most valuable player award?", True),
    ("What's the penalty for burglary in", "What's the penalty for burglary in California?", True),
    ("I can buy in-store", "Find a yoga mat that I can buy in-store.", True),
    ("my house", "the records of my house", True),
    ("Кто", "Кто выиграл?", True),
    ("How I Met Your Mother", "Episodes of 'How I Met Your Mother'", False),  # a quoted title is a value
    ("Iceland", "Weather in Iceland", False),
    ("Whole Foods", "at Whole Foods", False),
])
def test_a_piece_of_the_question_is_no_value(value: str, task: str, clause: bool) -> None:
    assert is_clause(value, task) is clause
    schema = {"type": "object", "properties": {"team_name": {"type": "string"}}, "required": ["team_name"]}
    assert should_abstain({"team_name": value}, schema, task) is clause
