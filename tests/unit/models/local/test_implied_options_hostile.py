"""The session-5 value techniques under hostile input: any call, schema and task text must give a dict or
``None`` (never raise), keep the call's keys' types, and stay fast on a 100 KB task."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent.models.local._decoding import named_tools, spelled_numbers, with_argument_descriptions
from react_agent.models.local._values import (
    VALUE_TECHNIQUES,
    corrected,
    implied_options,
    overlapping_optionals,
    shared_values,
    sibling_order,
    whole_names,
)

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                     st.text(max_size=30))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=10)
_subschemas = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "boolean", "integer", "number", "array", "object",
                                                    ["string", "null"], 7])}),
    st.fixed_dictionaries({"type": st.just("string"), "description": st.text(max_size=60)}),
    st.fixed_dictionaries({"enum": st.lists(_scalars, max_size=3)}),
    st.just("not a schema"), st.none())
_names = st.one_of(st.sampled_from(["place1", "place2", "pointA", "pointB", "detail", "include_owner",
                                    "return_type", "state", "county", "n_1", "n_2", "A", "1"]), st.text(max_size=10))
_schemas = st.one_of(
    st.builds(lambda props, req: {"type": "object", "properties": props, "required": req},
              st.dictionaries(_names, _subschemas, max_size=6),
              st.one_of(st.lists(_names, max_size=3), st.text(max_size=5), st.none(), st.integers())),
    st.just({"properties": "odd"}), st.just({}), st.none().map(lambda _: {"properties": None}))
_args = st.one_of(st.dictionaries(_names, _values, max_size=6), st.text(max_size=5), st.none(), st.lists(_scalars))
_tasks = st.one_of(st.text(max_size=200), st.sampled_from([
    "between San Francisco and Sydney, with detailed description, as a 'dictionary'",
    "rolling a six twice, quarterly, twenty-five, две ночи", "Gibson Les Paul of Bank of America's land disputes",
    "5% of $5000 for 5 years", "without any detail, don't include owner"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=_args, schema=_schemas, task=_tasks)
def test_the_new_techniques_never_raise(args: Any, schema: Any, task: str) -> None:
    for fix in (implied_options, sibling_order, whole_names):
        out = fix(args, schema, task)
        assert out is None or (isinstance(out, dict) and set(args) <= set(out))
    assert isinstance(overlapping_optionals(args, schema, task), list)
    assert isinstance(shared_values(args, schema, task), list)
    if isinstance(args, dict):
        assert isinstance(corrected(args, schema, task, VALUE_TECHNIQUES), dict)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300))
def test_spelled_numbers_and_named_tools_take_any_text(text: str) -> None:
    for value, start, end in spelled_numbers(text):
        assert isinstance(value, int) and 0 <= start < end <= len(text)
    assert named_tools(["book_room", "a.b", "", "(", "[x"], text) in ([], ["book_room"])
    assert with_argument_descriptions({"properties": {"x": {}}}, text, "(") is not None


@pytest.mark.parametrize("fix", [implied_options, sibling_order, whole_names])
def test_a_100_kb_task_is_read_in_well_under_a_second(fix: Any) -> None:
    task = ("Book a single room at The Plaza Hotel New York for two nights with detailed description "
            "between San Francisco and Sydney; land disputes at 5% of $5000. ") * 700
    assert len(task) > 100_000
    schema = {"type": "object", "properties": {
        "place1": {"type": "string"}, "place2": {"type": "string"}, "detail": {"type": "boolean"},
        "hotel": {"type": "string"}, "topic": {"type": "string"}}, "required": ["hotel"]}
    args = {"place1": "Sydney", "place2": "San Francisco", "hotel": "The", "topic": "land dispute"}
    started = time.perf_counter()
    fix(args, schema, task)
    corrected(args, schema, task, VALUE_TECHNIQUES)
    spelled_numbers(task)
    named_tools(["book_room", *[f"tool_{i}" for i in range(100)]], task)
    assert time.perf_counter() - started < 5.0  # a bound against quadratic blow-ups, not a performance claim
