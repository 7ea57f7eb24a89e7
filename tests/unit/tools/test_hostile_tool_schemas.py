"""Tool argument schemas as a hostile or careless author (or an MCP server) writes them.

Promises tested here:

- a malformed schema (``properties`` not an object, ``required`` not a list of names, an ``anyOf`` that refers
  to itself, ...) makes ``ReactAgent(...)`` raise a ``ConfigError`` that names the tool and what is wrong, never
  a raw ``AttributeError`` / ``TypeError`` / ``RecursionError``; schemas that worked before still work;
- ``examples_for_tools`` never crashes on a schema the agent takes: a tool whose schema cannot be sampled gets
  no example, non-finite bounds are ignored, and an agent on a model with a profile (examples generated
  automatically) still builds;
- an example value sampled from a ``pattern`` is short (at most 64 characters), however long the pattern asks
  for, and is never built huge first.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any, ClassVar

import pytest
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from react_agent import ConfigError, ReactAgent, examples_for_tools
from react_agent.testing import ScriptedChatModel


class Compact(ScriptedChatModel):
    """A model that declares what ``LocalChatModel`` declares: the agent generates worked examples itself."""

    agent_profile: ClassVar[str] = "compact"


def schema_tool(schema: dict[str, Any], name: str = "weather_lookup") -> StructuredTool:
    return StructuredTool(name=name, description="Look up the weather.", func=lambda **kw: "ok", args_schema=schema)


SELF_REFERENCE = {"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}]}}}

MALFORMED = {
    "properties is a list": ({"type": "object", "properties": [1, 2]}, "'properties'"),
    "properties is a string": ({"type": "object", "properties": "city"}, "'properties'"),
    "an argument's schema is not an object": ({"type": "object", "properties": {"city": True}}, "'city'"),
    "required holds a list": ({"type": "object", "properties": {"city": {"type": "string"}}, "required": [["city"]]},
                              "'required'"),
    "required is a number": ({"type": "object", "properties": {"city": {"type": "string"}}, "required": 1},
                             "'required'"),
    "an anyOf that refers to itself": ({"type": "object", "properties": {"city": {"$ref": "#/$defs/A"}},
                                        "required": ["city"], **SELF_REFERENCE}, "itself"),
    "an items that refers to itself": ({"type": "object", "properties": {"city": {"$ref": "#/$defs/L"}},
                                        "$defs": {"L": {"type": "array", "anyOf": [{"type": "array"}],
                                                        "items": {"$ref": "#/$defs/L"}}}}, "itself"),
    "$defs is a list": ({"type": "object", "properties": {"city": {"$ref": "#/$defs/A"}}, "$defs": []},
                        "AttributeError"),
    "an enum that is a number": ({"type": "object", "properties": {"city": {"type": "string", "enum": 3}}},
                                 "TypeError"),
}


@pytest.mark.parametrize("label", list(MALFORMED))
def test_a_malformed_tool_schema_is_a_config_error_naming_the_tool_and_the_problem(label: str) -> None:
    schema, problem = MALFORMED[label]
    with pytest.raises(ConfigError) as caught:
        ReactAgent(ScriptedChatModel([]), [schema_tool(schema)])
    message = str(caught.value)
    assert "'weather_lookup'" in message and problem in message, message


def test_an_unexpected_failure_reading_a_schema_keeps_its_cause() -> None:
    schema, _ = MALFORMED["$defs is a list"]
    with pytest.raises(ConfigError) as caught:
        ReactAgent(ScriptedChatModel([]), [schema_tool(schema)])
    assert isinstance(caught.value.__cause__, AttributeError)


@pytest.mark.parametrize("label", list(MALFORMED))
def test_examples_for_a_malformed_schema_are_a_config_error_not_a_crash(label: str) -> None:
    schema, _ = MALFORMED[label]
    with pytest.raises(ConfigError, match="weather_lookup"):
        examples_for_tools([schema_tool(schema)])


class Node(BaseModel):
    label: str
    next: Node | None = None


def walk(start: Node, tags: list[list[str]]) -> str:
    """Walk a linked list of nodes."""
    return "ok"


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ("city",)},
    {"type": "object", "properties": {"city": {"type": "string"}}, "$defs": []},
    {"type": "object", "properties": {"city": {"$ref": "#/$defs/C"}}, "$defs": {"C": {"type": "string"}},
     "required": ["city"]},
    {"type": "object"},
], ids=["required a tuple", "unused $defs a list", "a plain $ref", "no properties"])
def test_schemas_that_worked_before_still_build_an_agent(schema: dict[str, Any]) -> None:
    ReactAgent(ScriptedChatModel([]), [schema_tool(schema)])


def test_a_recursive_model_still_builds_an_agent_and_gets_an_example() -> None:
    tool = StructuredTool.from_function(walk)
    agent = ReactAgent(Compact([]), [tool], lang="en")
    assert [e.answer.action for e in agent.examples if e.answer.action != "FINISH"] == ["walk"]


INFINITE = [
    {"type": "integer", "minimum": float("inf")},
    {"type": "integer", "exclusiveMinimum": float("inf")},
    {"type": "integer", "maximum": float("-inf")},
    {"type": "integer", "minimum": float("nan"), "maximum": float("nan")},
    {"type": "number", "minimum": float("inf")},
    {"type": "number", "maximum": float("-inf")},
]


@pytest.mark.parametrize("prop", INFINITE, ids=[str(p) for p in INFINITE])
def test_non_finite_bounds_are_ignored_when_sampling(prop: dict[str, Any]) -> None:
    tool = schema_tool({"type": "object", "properties": {"days": prop}, "required": ["days"]})
    (example,) = examples_for_tools([tool], irrelevant=False)
    value = example.answer.action_input["days"]
    expected = int if prop["type"] == "integer" else float
    assert type(value) is expected and value == value and abs(value) < 1000  # finite, not nan, small


def test_an_agent_on_a_profiled_model_builds_with_an_infinite_bound() -> None:
    tool = schema_tool({"type": "object", "properties": {"n": {"type": "integer", "minimum": float("inf")}},
                        "required": ["n"]})
    ReactAgent(ScriptedChatModel([]), [tool])
    agent = ReactAgent(Compact([]), [tool], lang="en")
    assert [e.answer.action for e in agent.examples if e.answer.action != "FINISH"] == ["weather_lookup"]


NESTED_SELF_REFERENCE = {  # the agent reads only the top level ("object"); sampling goes down into the cycle
    "type": "object",
    "properties": {"place": {"type": "object", "properties": {"city": {"$ref": "#/$defs/A"}}, "required": ["city"]}},
    "required": ["place"],
    **SELF_REFERENCE,
}


def test_a_tool_whose_schema_cannot_be_sampled_gets_no_example(caplog: pytest.LogCaptureFixture) -> None:
    hostile = schema_tool(NESTED_SELF_REFERENCE)
    fine = schema_tool({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                       name="city_info")
    ReactAgent(ScriptedChatModel([]), [hostile, fine])  # the agent takes it
    with caplog.at_level(logging.DEBUG, logger="react_agent.tools._examples"):
        examples = examples_for_tools([hostile, fine], irrelevant=False)
    assert [e.answer.action for e in examples] == ["city_info"]
    assert any("no worked example for weather_lookup" in r.getMessage() for r in caplog.records)
    agent = ReactAgent(Compact([]), [hostile, fine], lang="en")
    assert [e.answer.action for e in agent.examples if e.answer.action != "FINISH"] == ["city_info"]


def code_value(pattern: str) -> Any:
    tool = schema_tool({"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}},
                        "required": ["code"]})
    examples = examples_for_tools([tool], irrelevant=False)
    return examples[0].answer.action_input["code"] if examples else None


@pytest.mark.parametrize("count", [65, 10**7, 3 * 10**9])
def test_a_pattern_asking_for_a_long_value_gets_no_long_sample(count: int) -> None:
    started = time.monotonic()
    value = code_value(f"^A{{{count}}}$")
    assert value is None or len(value) <= 64
    assert time.monotonic() - started < 5


def test_a_pattern_with_thousands_of_digits_in_its_count_is_no_crash() -> None:
    value = code_value("^A{" + "9" * 5000 + "}$")
    assert value is None or len(value) <= 64


@pytest.mark.parametrize("pattern, sample", [("^A{64}$", "A" * 64), (r"^[A-Z]{3}-\d{8}$", "AAA-77777777")])
def test_a_pattern_asking_for_up_to_64_characters_keeps_its_sample(pattern: str, sample: str) -> None:
    value = code_value(pattern)
    assert value == sample and re.search(pattern, value)
