"""Small-model techniques that need no model: examples generated from tool schemas (``react_agent.tools``),
grammar patterns, the two decoding stages and grounding (``models.local._decoding``), and the staged answer of
``LocalChatModel`` driven by a scripted completion function."""

from __future__ import annotations

import importlib.util
import json
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
from react_agent.models.local._decoding import (
    EMAIL_PATTERN,
    LOGIN_PATTERN,
    PHONE_PATTERN,
    action_schema,
    branches,
    format_pattern,
    grounded_schema,
    grounding_source,
    is_grounded,
    should_abstain,
    spans,
    ungrounded,
    unsupported,
    with_format_patterns,
)
from react_agent.models.local._model import _staged_answer
from react_agent.testing import ScriptedChatModel
from react_agent.tools._examples import examples_for_tools, humanize, sample_value
from react_agent.tools._schema import answer_schema, tool_args_schema

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
    assert examples[0].task == "Tell me a joke about cats." and isinstance(examples[0].answer.action_input, str)
    register = examples[1]
    assert register.task == "Register user with username Anna and email leo@post.net."
    assert register.answer.action_input == {"username": "Anna", "email": "leo@post.net"}
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
    assert args["city"] == "Paris" and 1 <= args["guests"] <= 4 and args["room"] == "single"
    assert re.fullmatch(EMAIL_PATTERN[1:-1], args["contact_email"]) and args["late_checkout"] is True
    assert len(args["nights"]) == 2 and args["nights"][0] != args["nights"][1]
    assert example.task.startswith("Book hotel reserve with city Paris, guests ")
    for value in ("Paris", "single", args["contact_email"], "yes"):
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
    assert example.answer.action_input == {"query": "coffee"}
    assert example.task == "Web search with query coffee."


def test_russian_sentences_and_unknown_language(demo_tools: list[Any]) -> None:
    examples = examples_for_tools(demo_tools, lang="ru")
    assert examples[0].task == "Расскажи анекдот про котов."
    assert examples[1].task.startswith("Нужно: register user, username Anna")
    with pytest.raises(ConfigError, match="lang must be one of en, ru"):
        examples_for_tools(demo_tools, lang="de")


def test_the_agent_renders_the_generated_examples(demo_tools: list[Any]) -> None:
    examples = examples_for_tools(demo_tools)
    agent = ReactAgent(ScriptedChatModel([]), demo_tools, prompts="en-compact", examples=examples)
    prompt = str(agent.build_messages(RunState(SEED_TASK))[0].content)
    assert "Example 2\nTask: Register user with username Anna and email leo@post.net." in prompt
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


@pytest.mark.parametrize(("name", "schema", "pattern"), [
    ("email", {"type": "string"}, EMAIL_PATTERN),
    ("contact_email", {"type": "string"}, EMAIL_PATTERN),
    ("to", {"type": "string", "format": "email"}, EMAIL_PATTERN),
    ("username", {"type": "string"}, LOGIN_PATTERN),
    ("phone_number", {"type": "string"}, PHONE_PATTERN),
    ("email", {"type": "string", "enum": ["a@b.c"]}, None),
    ("email", {"type": "integer"}, None),
    ("city", {"type": "string"}, None),
    ("emailing_list", {"type": "string"}, None),
])
def test_format_pattern(name: str, schema: dict[str, Any], pattern: str | None) -> None:
    assert format_pattern(name, schema) == pattern


def test_patterns_tell_addresses_from_names() -> None:
    assert re.search(EMAIL_PATTERN, "Viacheslav@test.com") and not re.search(EMAIL_PATTERN, "Viacheslav")
    assert not re.search(EMAIL_PATTERN, "a b@test.com") and not re.search(EMAIL_PATTERN, "a@test")
    assert re.search(LOGIN_PATTERN, "Viacheslav") and not re.search(LOGIN_PATTERN, "Viacheslav@test.com")
    assert re.search(PHONE_PATTERN, "+7999123456") and not re.search(PHONE_PATTERN, "Ivan")


def test_answer_schema_gets_patterns_in_every_branch(demo_tools: list[Any]) -> None:
    schema = answer_schema(demo_tools)
    patterned = with_format_patterns(schema)
    register = branches(patterned)["register_user"]  # type: ignore[index]
    assert register["properties"]["username"]["pattern"] == LOGIN_PATTERN
    assert register["properties"]["email"]["pattern"] == EMAIL_PATTERN
    assert register["properties"]["phone"]["anyOf"][0]["pattern"] == PHONE_PATTERN
    assert "pattern" not in branches(patterned)["search_db"]["properties"]["limit"]  # type: ignore[index]
    assert "pattern" not in json.dumps(schema)  # the input is not changed
    answer = {"thought": "t", "action": "register_user",
              "action_input": {"username": "Viacheslav@test.com", "email": "Ivan"}}
    jsonschema.validate(answer, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, patterned)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_llama_cpp_compiles_the_patterned_and_grounded_schemas(demo_tools: list[Any]) -> None:
    from react_agent.models.local._model import _grammar_for

    patterned = with_format_patterns(answer_schema(demo_tools))
    assert _grammar_for(json.dumps(patterned)) is not None
    register = branches(patterned)["register_user"]  # type: ignore[index]
    grounded = grounded_schema(register, ["username", "email"], SEED_TASK)
    assert _grammar_for(json.dumps(grounded)) is not None
    assert _grammar_for(json.dumps(action_schema(patterned))) is not None
    assert _grammar_for(json.dumps(register), "}") is not None  # stage two: the arguments, then the closing brace


# --------------------------------------------------------------------------- two stages and grounding


def test_branches_and_action_schema(demo_tools: list[Any]) -> None:
    schema = answer_schema(demo_tools)
    parts = branches(schema)
    assert parts is not None and list(parts) == ["register_user", "search_db", "calculator", FINISH]
    assert parts[FINISH] == {"type": "string"}
    head = action_schema(schema)
    assert head == {"type": "object", "properties": {"thought": {"type": "string", "maxLength": 160},
                                                     "action": {"enum": list(parts)}},
                    "required": ["thought", "action"], "additionalProperties": False}
    assert branches({"type": "object"}) is None and branches({"anyOf": [{"type": "string"}]}) is None
    assert action_schema({"type": "object"}) is None


def test_grounding_source_skips_the_examples() -> None:
    prompt = ("Tools: ...\nExample 1\nTask: Register Anna\nAnswer: {...}\nNow your turn\nTask: " + SEED_TASK
              + "\nHistory: User Ivan registered\nAnswer:")
    source = grounding_source(prompt)
    assert source == "\n " + SEED_TASK + "\n User Ivan registered\n"  # no marker, no labels, no example
    full = "intro\n**Task**: find Ivan\n**Examples**:\nTask: find Anna"
    assert grounding_source(full).startswith(" find Ivan")
    assert grounding_source("no marker") == "no marker"


def test_ungrounded_values_are_found() -> None:
    schema = {"type": "object", "properties": {
        "username": {"type": "string"}, "email": {"type": "string"}, "kind": {"type": "string", "enum": ["x"]},
        "phone": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "n": {"type": "integer"}}}
    args = {"username": "viacheslav", "email": "Ivan@test.com", "kind": "x", "phone": "+7999", "n": 5}
    assert ungrounded(args, schema, SEED_TASK) == ["email", "phone"]
    assert is_grounded("VIACHESLAV @test.com", SEED_TASK) and is_grounded("", SEED_TASK)
    assert ungrounded("not a dict", schema, SEED_TASK) == []


def test_spans_and_grounded_schema() -> None:
    found = spans("Find 'user Ivan', please.", max_words=2)
    assert found == ["Find", "Find user", "user", "user Ivan", "Ivan", "Ivan please", "please"]
    schema = {"type": "object", "properties": {"username": {"type": "string", "pattern": LOGIN_PATTERN},
                                               "email": {"type": "string", "pattern": EMAIL_PATTERN},
                                               "city": {"type": "string"}}}
    grounded = grounded_schema(schema, ["username", "email", "missing"], SEED_TASK)
    assert grounded["properties"]["email"] == {"type": "string", "enum": ["Viacheslav@test.com"]}
    assert "Viacheslav" in grounded["properties"]["username"]["enum"]
    assert all(" " not in s and "@" not in s for s in grounded["properties"]["username"]["enum"])
    assert grounded["properties"]["city"] == {"type": "string"}  # not a suspect: unchanged
    no_fit = grounded_schema(schema, ["email"], "no address here")
    assert no_fit["properties"]["email"] == schema["properties"]["email"]


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


def test_two_stages_compose_one_answer(demo_tools: list[Any]) -> None:
    schema = with_format_patterns(answer_schema(demo_tools))
    script = _Script('{"thought": "I must register Viacheslav.", "action": "register_user", ',
                     '{"username": "Viacheslav", "email": "Viacheslav@test.com"}}')
    text = _staged_answer(script, PROMPT, schema, two_stage=True, grounding=False)
    assert json.loads(text) == {"thought": "I must register Viacheslav.", "action": "register_user",
                                "action_input": {"username": "Viacheslav", "email": "Viacheslav@test.com"}}
    (p1, s1, x1, stop1), (p2, s2, x2, stop2) = script.calls
    assert (p1, s1, x1, stop1) == (PROMPT, schema, "", ['"action_input"'])  # stage 1 stops at the arguments
    assert p2 == PROMPT + '{"thought": "I must register Viacheslav.", "action": "register_user", "action_input":'
    assert (s2, x2, stop2) == (branches(schema)["register_user"], "}", [])  # type: ignore[index]


def test_grounding_decodes_an_invented_value_again(demo_tools: list[Any]) -> None:
    schema = with_format_patterns(answer_schema(demo_tools))
    script = _Script('{"thought": "x", "action": "register_user", ',
                     '{"username": "Viacheslav", "email": "Ivan@test.com"}}',
                     '{"username": "Viacheslav", "email": "Viacheslav@test.com"}}')
    text = _staged_answer(script, PROMPT, schema, two_stage=True, grounding=True)
    assert json.loads(text)["action_input"] == {"username": "Viacheslav", "email": "Viacheslav@test.com"}
    retry_prompt, retry_schema, suffix, _ = script.calls[2]
    assert suffix == "}"
    assert retry_prompt == script.calls[1][0]
    assert retry_schema["properties"]["email"] == {"type": "string", "enum": ["Viacheslav@test.com"]}
    assert retry_schema["properties"]["username"] == branches(schema)["register_user"]["properties"]["username"]  # type: ignore[index]


def test_grounding_alone_keeps_a_grounded_single_answer(demo_tools: list[Any]) -> None:
    schema = answer_schema(demo_tools)
    good = '{"thought": "x", "action": "search_db", "action_input": {"username": "Ivan"}}'
    script = _Script(good)
    assert _staged_answer(script, PROMPT, schema, two_stage=False, grounding=True) == good
    assert len(script.calls) == 1
    bad = '{"thought": "x", "action": "search_db", "action_input": {"username": "Anna"}}'
    script = _Script(bad, '{"username": "Ivan"}}')
    text = _staged_answer(script, PROMPT, schema, two_stage=False, grounding=True)
    assert json.loads(text) == {"thought": "x", "action": "search_db", "action_input": {"username": "Ivan"}}
    assert script.calls[1][0].endswith('Answer:{"thought": "x", "action": "search_db", "action_input":')


def test_finish_and_cut_replies(demo_tools: list[Any]) -> None:
    schema = answer_schema(demo_tools)
    script = _Script('{"thought": "done", "action": "FINISH", ', '"Viacheslav is registered."}')
    text = _staged_answer(script, PROMPT, schema, two_stage=True, grounding=True)
    assert json.loads(text) == {"thought": "done", "action": FINISH, "action_input": "Viacheslav is registered."}
    assert script.calls[1][1] == {"type": "string"}
    cut = _Script('{"thought": "I must regis')
    assert _staged_answer(cut, PROMPT, schema, two_stage=True, grounding=True) == '{"thought": "I must regis'


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


def test_grounding_text_replaces_the_prompt_heuristic(demo_tools: list[Any]) -> None:
    """With an explicit source, a value that the prompt shows (an example's Anna) is still suspect."""
    schema = answer_schema(demo_tools)
    script = _Script('{"thought": "x", "action": "search_db", ', '{"username": "Anna"}}', '{"username": "Ivan"}}')
    text = _staged_answer(script, "Task: find Anna\n" + PROMPT, schema, two_stage=True, grounding=True,
                          source="Find user Ivan")
    assert json.loads(text)["action_input"] == {"username": "Ivan"}
    assert script.calls[2][1]["properties"]["username"]["enum"] == ["Find", "Find user", "Find user Ivan", "user",
                                                                     "user Ivan", "Ivan"]


def test_unsupported_counts_invented_required_values() -> None:
    schema = {"type": "object", "properties": {
        "weight": {"type": "number"}, "height": {"type": "integer"}, "unit": {"type": "string"},
        "kind": {"type": "string", "enum": ["a"]}, "flag": {"type": "boolean"}, "note": {"type": "string"}},
        "required": ["weight", "height", "unit", "kind", "flag"]}
    task = "A person is 1,180 mm tall and weighs 72.5 kg; use metres."
    assert unsupported({"weight": 72.5, "height": 1180, "unit": "metres", "kind": "a", "flag": True}, schema, task) \
        == (0, 3)
    assert unsupported({"weight": 70, "height": 2024, "unit": "metres", "note": "x"}, schema, task) == (2, 3)
    assert should_abstain({"weight": 70, "height": 2024, "unit": "metres"}, schema, task)
    assert should_abstain({"weight": 72.5, "height": 3, "unit": "metres"}, schema, task)  # one invented is enough
    assert not should_abstain({"weight": 72.5, "height": 1180, "unit": "metres", "kind": "a"}, schema, task)
    assert not should_abstain({"kind": "a"}, schema, task) and unsupported("x", schema, task) == (0, 0)


def test_abstaining_turns_an_invented_call_into_finish(demo_tools: list[Any]) -> None:
    schema = answer_schema(demo_tools)
    script = _Script('{"thought": "I must compute.", "action": "calculator", ', '{"expression": "12 * 3"}}',
                     '"No tool can tell a joke."}')
    text = _staged_answer(script, PROMPT.replace(SEED_TASK, "Tell me a joke"), schema, two_stage=True,
                          grounding=False, abstain=True)
    assert json.loads(text) == {"thought": "I must compute.", "action": FINISH,
                                "action_input": "No tool can tell a joke."}
    assert script.calls[2][0].endswith('"action": "FINISH", "action_input":') and script.calls[2][1] == {
        "type": "string", "maxLength": 160}  # a refusal is short: unbounded, the model rambles to max_tokens
    good = '{"thought": "x", "action": "search_db", "action_input": {"username": "Ivan"}}'
    assert _staged_answer(_Script(good), PROMPT, schema, two_stage=False, grounding=False, abstain=True) == good


def test_stage_two_keeps_hoisted_definitions() -> None:
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/t__Node"}}}
    schema = {"anyOf": [{"type": "object", "properties": {"thought": {"type": "string"}, "action": {"const": "t"},
                                                           "action_input": node}}],
              "$defs": {"t__Node": node}}
    script = _Script('{"thought": "x", "action": "t", ', '{}}')
    _staged_answer(script, PROMPT, schema, two_stage=True, grounding=False)
    assert script.calls[1][1] == {**node, "$defs": {"t__Node": node}}


def test_patterned_values_must_occur_exactly() -> None:
    schema = {"type": "object", "properties": {"email": {"type": "string", "pattern": EMAIL_PATTERN},
                                               "city": {"type": "string"}}}
    assert ungrounded({"email": "viacheslav@test.com", "city": "VIACHESLAV"}, schema, SEED_TASK) == ["email"]
    assert ungrounded({"email": "Viacheslav@test.com"}, schema, SEED_TASK) == []
