"""The embedded model's ``duration_values`` technique: an argument that holds a duration in a unit its name or
description states gets the one duration the task writes, in that unit; correct calls and every value the text does
not prove misread are kept."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent._types import CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local._durations import argument_unit, duration_phrases, in_unit
from react_agent.models.local._pipeline import duration_values


@pytest.mark.parametrize(("text", "seconds"), [
    ("длительность полтора часа", [5400]),
    ("поставь встречу на полчаса", [1800]),
    ("for half an hour", [1800]),
    ("an hour and a half long", [5400]),
    ("one and a half hours", [5400]),
    ("running ten minutes late", [600]),
    ("2 hours 15 minutes", [8100]),
    ("1 час 30 минут", [5400]),
    ("за пять минут", [300]),
    ("a 30 minute call", [1800]),
    ("a 5-day forecast", [432_000]),
    ("забронируй переговорную на сутки", [86_400]),
    ("на час", [3600]),
    ("встреча в 9 часов на 2 часа", [7200]),      # «в 9 часов» is a clock time
    ("twice a day for two weeks", [1_209_600]),   # "a day" after "twice" is a frequency
    ("meet at 5 hours", []),
    ("10 минут, потом ещё 20 минут", [600, 1200]),  # two durations, not one compound
    ("в 11:00 на 10 марта", []),
])
def test_durations_are_read_in_seconds(text: str, seconds: list[float]) -> None:
    assert [s for _, _, s in duration_phrases(text)] == seconds


@pytest.mark.parametrize(("name", "node", "unit"), [
    ("duration_minutes", {}, 60),
    ("timeoutSeconds", {}, 1),
    ("length", {"description": "Length in minutes"}, 60),
    ("duration", {"description": "Длительность в минутах"}, 60),
    ("days", {"description": "Number of days"}, 86_400),
    ("duration", {"description": "How long the meeting lasts"}, None),
    ("hours_or_minutes", {}, None),                # two units: no telling which
    ("time", {}, None),
    ("start", {"description": "Start time, HH:MM"}, None),
])
def test_an_arguments_unit_comes_from_its_name_or_description(name: str, node: dict[str, Any],
                                                              unit: int | None) -> None:
    assert argument_unit(name, node) == unit


@pytest.mark.parametrize(("value", "unit", "text", "wanted"), [
    (180, 60, "Назначь созвон на 15:30, длительность полтора часа", 90),
    (1.5, 60, "an hour and a half long", 90),
    (10, 1, "set a timer for ten minutes", 600),
    (1, 60, "поставь планёрку на 11:00 на полчаса", 30),
])
def test_a_misread_duration_gets_the_texts_duration_in_the_arguments_unit(value: float, unit: int, text: str,
                                                                          wanted: float) -> None:
    assert in_unit(value, unit, text, {"type": "number"}, integer=False) == wanted


@pytest.mark.parametrize(("value", "unit", "text", "node"), [
    (90, 60, "длительность полтора часа", {"type": "integer"}),                # already right
    (10, 86_400, "the past 10 and 15 days", {"type": "integer"}),             # 10 is written: another call's
    (5, 86_400, "a 5-day forecast for Paris and a 3-day one for Rome", {"type": "integer"}),  # two durations
    (3, 86_400, "no duration here, just 3 apples", {"type": "integer"}),       # no duration at all
    (1, 3600, "for 45 minutes", {"type": "integer"}),                          # 0.75 is no integer
    (60, 60, "for two weeks", {"type": "integer", "maximum": 720}),            # outside the schema's bounds
])
def test_values_the_text_does_not_prove_misread_are_kept(value: float, unit: int, text: str,
                                                         node: dict[str, Any]) -> None:
    assert in_unit(value, unit, text, node, integer=node["type"] == "integer") is None


def test_an_object_with_several_duration_arguments_is_left_as_it_is() -> None:
    schema = {"type": "object", "properties": {"hours": {"type": "integer"}, "minutes": {"type": "integer"}}}
    args = {"hours": 1, "minutes": 30}
    assert duration_values(args, schema, "1 hour 30 minutes") == args


def test_duration_values_follow_the_schema() -> None:
    schema = {"type": "object", "properties": {
        "title": {"type": "string"}, "duration_minutes": {"type": "integer"},
        "options": {"type": "object", "properties": {"timeout_seconds": {"type": "number"}}}}}
    args = {"title": "Созвон", "duration_minutes": 180, "options": {"timeout_seconds": 1.5}}
    assert duration_values(args, schema, "созвон на полтора часа") == {
        "title": "Созвон", "duration_minutes": 90, "options": {"timeout_seconds": 5400}}
    assert duration_values({"title": "x"}, schema, "на полтора часа") == {"title": "x"}  # nothing is added
    enum = {"type": "object", "properties": {"minutes": {"type": "integer", "enum": [15, 180]}}}
    assert duration_values({"minutes": 180}, enum, "полтора часа") == {"minutes": 180}


def test_the_default_pipeline_fixes_a_misread_duration_and_keeps_the_correct_call() -> None:
    tool = ToolInfo(name="create_event", parameters={"type": "object", "properties": {
        "title": {"type": "string"}, "start_time": {"type": "string"},
        "duration_minutes": {"type": "integer", "minimum": 5, "maximum": 720}}})
    context = CallContext(task="Назначь созвон на 15:30, длительность полтора часа", tools=(tool,))
    model = LocalChatModel()
    wrong = {"thought": "", "action": "create_event",
             "action_input": {"title": "Созвон", "start_time": "15:30", "duration_minutes": 180}}
    right = {"thought": "", "action": "create_event",
             "action_input": {"title": "Созвон", "start_time": "15:30", "duration_minutes": 90}}
    assert model.after_decoding(wrong, context) == right
    assert model.after_decoding(right, context) == right
    off = LocalChatModel(techniques=[t for t in LocalChatModel().techniques if t != "duration_values"])
    assert off.after_decoding(wrong, context) == wrong


def test_a_long_tool_result_full_of_numbers_is_read_in_linear_time() -> None:
    # a guard against a quadratic scan, not a speed claim: the scan that looked back over the whole text for
    # every number took about 50 s on this text, the bounded one a fraction of a second
    import time

    text = " ".join(str(i) for i in range(20_000)) + " and then 5 minutes"
    started = time.perf_counter()
    assert [s for _, _, s in duration_phrases(text)] == [300]
    assert time.perf_counter() - started < 20
