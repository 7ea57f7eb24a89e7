"""Small-model techniques that need no model: examples generated from tool schemas (``react_agent.tools``),
grammar patterns, the two decoding stages and grounding (``models.local._decoding``), and the staged answer of
``LocalChatModel`` driven by a scripted completion function."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import jsonschema
import pytest
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from react_agent import ConfigError, ReactAgent, RunState
from react_agent._types import FINISH
from react_agent.decompose import run_subtasks, split_task
from react_agent.demo import make_demo_tools
from react_agent.testing import ScriptedChatModel
from react_agent.tools._examples import examples_for_tools, humanize, sample_value
from react_agent.tools._schema import tool_args_schema

SEED_TASK = "Register user Viacheslav with email Viacheslav@test.com and find user Ivan"


def _noop(**kwargs: Any) -> str:
    return "ok"


def dict_tool(name: str, schema: dict[str, Any], description: str = "A tool.") -> StructuredTool:
    return StructuredTool(name=name, description=description, args_schema=schema, func=_noop)


class _Booking(BaseModel):
    city: str
    guests: int = Field(ge=1, le=4)
    room: Literal["single", "double"]
    contact_email: str
    late_checkout: bool
    nights: list[int]


@pytest.fixture
def demo_tools(tmp_path: Any) -> list[Any]:
    return make_demo_tools(db_path=tmp_path / "users.db", lang="en")


# --------------------------------------------------------------------------- generated examples


def test_one_example_per_tool_after_an_irrelevant_one(demo_tools: list[Any]) -> None:
    examples = examples_for_tools(demo_tools)
    assert [e.answer.action for e in examples] == [FINISH, *(t.name for t in demo_tools)]
    assert examples[0].task == "How many minutes are in an hour?" and isinstance(examples[0].answer.action_input, str)
    register = examples[1]
    assert register.task == "Register user with username Orlena and email orlena.vask@example.org."
    assert register.answer.action_input == {"username": "Orlena", "email": "orlena.vask@example.org"}
    assert all(not e.steps for e in examples)
    assert [e.answer.action for e in examples_for_tools(demo_tools, irrelevant=False)] == [t.name for t in demo_tools]


def test_generated_arguments_validate_against_each_tool(demo_tools: list[Any]) -> None:
    """The demo tools (pydantic models) accept every generated call as it is."""
    for example in examples_for_tools(demo_tools)[1:]:
        tool = next(t for t in demo_tools if t.name == example.answer.action)
        tool.args_schema.model_validate(example.answer.action_input)


def test_values_follow_the_schema() -> None:
    """Bounds, enums, formats, booleans and arrays; sibling values differ; all values show in the task."""
    tool = StructuredTool(name="book_hotel.reserve", description="Book a hotel.", args_schema=_Booking, func=_noop)
    [_, example] = examples_for_tools([tool])
    args = example.answer.action_input
    assert isinstance(args, dict)
    jsonschema.validate(args, tool_args_schema(tool))
    assert args["city"] == "Velmora" and 1 <= args["guests"] <= 4 and args["room"] == "single"
    assert re.fullmatch(r"[^@ ]+@[^@ ]+[.][^@ ]+", args["contact_email"]) and args["late_checkout"] is True
    assert len(args["nights"]) == 2 and args["nights"][0] != args["nights"][1]
    assert example.task.startswith("Book hotel reserve with city Velmora, guests ")
    for value in ("Velmora", "single", args["contact_email"], "yes"):
        assert value in example.task


def test_dict_schemas_get_values_in_range_and_distinct_siblings() -> None:
    schema = {"type": "object", "properties": {
        "side1": {"type": "integer"}, "side2": {"type": "integer"}, "ratio": {"type": "number", "maximum": 1},
        "year": {"type": "integer"}, "unit": {"type": "string", "description": "Unit"},
        "note": {"type": "string"}}, "required": ["side1", "side2", "ratio", "year", "unit"]}
    [_, example] = examples_for_tools([dict_tool("triangle_area", schema)])
    args = example.answer.action_input
    assert args == {"side1": 7, "side2": 4, "ratio": 1, "year": 2021, "unit": "meters"}  # note: optional, left out
    jsonschema.validate(args, schema)
    assert example.task == "Triangle area with side1 7, side2 4, ratio 1, year 2021 and unit meters."


def test_no_required_argument_takes_the_first_one() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}
    [_, example] = examples_for_tools([dict_tool("webSearch", schema)])
    assert example.answer.action_input == {"query": "amber kettles"}
    assert example.task == "Web search with query amber kettles."


def test_russian_sentences_and_unknown_language(demo_tools: list[Any]) -> None:
    examples = examples_for_tools(demo_tools, lang="ru")
    assert examples[0].task == "Сколько минут в одном часе?"
    assert examples[1].task.startswith("Нужно: register user, username Orlena")
    with pytest.raises(ConfigError, match="lang must be one of en, ru"):
        examples_for_tools(demo_tools, lang="de")


def test_the_agent_renders_the_generated_examples(demo_tools: list[Any]) -> None:
    examples = examples_for_tools(demo_tools)
    agent = ReactAgent(ScriptedChatModel([]), demo_tools, prompts="en-compact", examples=examples)
    prompt = str(agent.build_messages(RunState(SEED_TASK))[0].content)
    assert "Example 2\nTask: Register user with username Orlena and email orlena.vask@example.org." in prompt
    assert prompt.index("Example 4") < prompt.index("Now your turn") < prompt.index(SEED_TASK)


@pytest.mark.parametrize(("name", "words"), [
    ("calculate_triangleArea.get", "calculate triangle area get"), ("math.hcf", "math hcf"), ("x", "x")])
def test_humanize(name: str, words: str) -> None:
    assert humanize(name) == words


def test_sample_value_prefers_const_enum_default() -> None:
    assert sample_value("x", {"const": 3}) == 3
    assert sample_value("x", {"enum": ["b", "a"]}) == "b"
    assert sample_value("x", {"type": "string", "default": "kg"}) == "kg"
    assert sample_value("x", {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 20}]}) == 20


# --------------------------------------------------------------------------- grammar patterns


# --------------------------------------------------------------------------- two stages and grounding


class _Script:
    """A scripted ``complete(prompt, schema)``: returns the next reply, records each call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, Mapping[str, Any], str, list[str]]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append((prompt, schema, suffix, list(stop)))
        return self.replies.pop(0)


PROMPT = "Example 1\nTask: Register Anna\nNow your turn\nTask: " + SEED_TASK + "\nHistory: none\nAnswer:"


# --------------------------------------------------------------------------- decomposition


@pytest.mark.parametrize(("task", "lang", "parts"), [
    (SEED_TASK, "en", ["Register user Viacheslav with email Viacheslav@test.com", "Find user Ivan"]),
    ("Зарегистрируй пользователя Viacheslav с email Viacheslav@test.com и найди пользователя Ivan", "ru",
     ["Зарегистрируй пользователя Viacheslav с email Viacheslav@test.com", "Найди пользователя Ivan"]),
    ("Register Anna, then search Anna; compute 2+2", "en", ["Register Anna", "Search Anna", "Compute 2+2"]),
    ("Find the area of a triangle with a base of 10 and height of 5.", "en",
     ["Find the area of a triangle with a base of 10 and height of 5."]),
    ("Find Tom and Jerry", "en", ["Find Tom and Jerry"]),
    ("and find Ivan", "en", ["And find Ivan"]),
])
def test_split_task(task: str, lang: str, parts: list[str]) -> None:
    assert split_task(task, lang=lang) == parts


def test_run_subtasks_runs_each_part(demo_tools: list[Any]) -> None:
    script = ScriptedChatModel([
        '{"thought": "t", "action": "register_user", "action_input": {"username": "Viacheslav", '
        '"email": "Viacheslav@test.com"}}',
        '{"thought": "t", "action": "FINISH", "action_input": "Registered."}',
        '{"thought": "t", "action": "search_db", "action_input": {"username": "Viacheslav"}}',
        '{"thought": "t", "action": "FINISH", "action_input": "Found."}',
    ])
    agent = ReactAgent(script, demo_tools, prompts="en-compact")
    results = run_subtasks(agent, "Register user Viacheslav with email Viacheslav@test.com and find user Viacheslav")
    assert [r.output for r in results] == ["Registered.", "Found."]
    assert [r.status for r in results] == ["finished", "finished"]
    with pytest.raises(ValueError, match="lang must be one of en, ru"):
        split_task("x", lang="de")


