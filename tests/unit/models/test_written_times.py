"""A small model leaves an optional time argument out though the task gives the time («в 9 утра», "at 3:30 pm"): the
embedded model fills in the one time of day the task writes; a call that has its time, or a task whose time is not
plain, stays as it is decoded."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent._types import FINISH, CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES
from react_agent.models.local._times import clock_times, is_clock_schema, time_value

HH_MM = r"^([01]\d|2[0-3]):[0-5]\d$"
REMINDER = {
    "type": "object",
    "required": ["person", "date", "text"],
    "properties": {
        "person": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "text": {"type": "string"},
        "time": {"anyOf": [{"type": "string", "pattern": HH_MM}, {"type": "null"}], "default": None},
    },
}
CREATE_REMINDER = ToolInfo(name="create_reminder", description="Create a reminder", parameters=REMINDER)


@pytest.mark.parametrize(("text", "times"), [
    ("Напомни Марии 20 марта 2026 в 9 утра оплатить счёт", {"09:00"}),
    ("Set up a call on March 12, 2026 at 3:30 pm", {"15:30"}),
    ("Meet at 14:30", {"14:30"}),
    ("at 9 a.m. sharp", {"09:00"}),
    ("at nine am", {"09:00"}),
    ("в девять вечера", {"21:00"}),
    ("созвон в 3 дня", {"15:00"}),
    ("в 15 часов", {"15:00"}),
    ("at noon", {"12:00"}),
    ("в полночь", {"00:00"}),
    ("at 12 am", {"00:00"}),
    ("в 12 ночи", {"00:00"}),
    ("с 14:00 до 15:00", {"14:00", "15:00"}),
    ("open 9-11 am", {"09:00", "11:00"}),  # a range: its start takes the half of the day of its end
    ("from 9 to 11 pm", {"21:00", "23:00"}),
    ("с 9 до 11 утра", {"09:00", "11:00"}),
    ("с 11 до 2 дня", {"11:00", "14:00"}),
])
def test_times_of_day_are_read_in_both_languages(text: str, times: set[str]) -> None:
    assert clock_times(text) == times


@pytest.mark.parametrize("text", [
    "Закажи отель на 2 ночи",  # nights, not a time
    "Отпуск через 3 дня",  # days
    "в 9 часов",  # morning or evening
    "at 5 o'clock",
    "Встреча в переговорной 9",  # a bare number is no time
    "Call me at 9",
    "14:00 pm",
    "Это займёт полдня",  # half a day, not noon
])
def test_what_is_no_plain_time_of_day_is_not_read(text: str) -> None:
    assert clock_times(text) == frozenset()


@pytest.mark.parametrize("node", [
    {"type": "string", "pattern": HH_MM},
    {"anyOf": [{"type": "string", "pattern": HH_MM}, {"type": "null"}], "default": None},
    {"type": ["string", "null"], "pattern": r"^\d{1,2}:\d{2}(:\d{2})?$"},
    {"type": "string", "format": "time"},
    {"type": "string", "description": "Start time, HH:MM"},
])
def test_a_string_that_holds_a_time_of_day_is_a_clock_argument(node: dict[str, Any]) -> None:
    assert is_clock_schema(node)


@pytest.mark.parametrize("node", [
    {"type": "string"},
    {"type": "string", "description": "When, e.g. 9 am"},
    {"type": "string", "pattern": r"\d\d:\d\d"},  # also takes a date and a time
    {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": HH_MM, "enum": ["09:00", "21:30"]},
    {"type": "integer", "description": "Hour, HH:MM"},
    {"anyOf": [{"type": "string", "pattern": HH_MM}, {"type": "integer"}]},
    {"type": "string", "pattern": "(unclosed"},
    {"type": [{"not": "hashable"}, "string"], "pattern": HH_MM},
    {"anyOf": ["string", None]},
])
def test_other_arguments_are_no_clock_arguments(node: dict[str, Any]) -> None:
    assert not is_clock_schema(node)


def test_a_time_takes_the_form_its_pattern_asks_for() -> None:
    assert time_value({"type": "string", "pattern": HH_MM}, "09:00") == "09:00"
    assert time_value({"type": "string", "pattern": r"^\d{2}:\d{2}:\d{2}$"}, "09:00") == "09:00:00"
    assert time_value({"type": "string", "format": "time"}, "09:00") == "09:00"


def call(**args: Any) -> dict[str, Any]:
    return {"thought": "", "action": "create_reminder", "action_input": args}


def decided(answer: dict[str, Any], task: str, *, tools: tuple[ToolInfo, ...] = (CREATE_REMINDER,),
            model: LocalChatModel | None = None) -> Any:
    return (model or LocalChatModel()).after_decoding(answer, CallContext(task=task, tools=tools))


def test_the_time_the_task_writes_fills_the_time_argument_left_out() -> None:
    assert "written_times" in DEFAULT_TECHNIQUES
    task = "Напомни Марии 20 марта 2026 в 9 утра оплатить счёт"
    answer = call(person="Мария", date="2026-03-20", text="оплатить счёт")
    assert decided(answer, task)["action_input"] == {**answer["action_input"], "time": "09:00"}


@pytest.mark.parametrize(("task", "args"), [
    ("Remind Maria on March 20, 2026 at 9 am to pay the bill",
     {"person": "Maria", "date": "2026-03-20", "text": "pay the bill", "time": "09:00"}),  # the right call
    ("Remind Maria on March 20, 2026 at 9 am to pay the bill",
     {"person": "Maria", "date": "2026-03-20", "text": "pay the bill", "time": "09:30"}),  # the model's time stands
    ("Remind Maria on March 20, 2026 to pay the bill",
     {"person": "Maria", "date": "2026-03-20", "text": "pay the bill"}),  # no time written
    ("Remind Maria on March 20, 2026 about the 3 pm call",
     {"person": "Maria", "date": "2026-03-20", "text": "the 3 pm call"}),  # the time is in the text
    ("Remind Maria on March 20, 2026 to call at 15:00",
     {"person": "Maria", "date": "2026-03-20", "text": "call at 15:00"}),
    ("Remind Maria on March 20, 2026 to move the 9 am call to 11 am",
     {"person": "Maria", "date": "2026-03-20", "text": "move the call"}),  # two times
    ("Remind Maria on March 20, 2026: the office is open 9-11 am",
     {"person": "Maria", "date": "2026-03-20", "text": "office hours"}),  # a range is two times
])
def test_a_call_with_its_time_or_a_task_without_one_time_is_left_alone(task: str, args: dict[str, Any]) -> None:
    answer = call(**args)
    assert decided(answer, task) == answer


def test_a_tool_with_a_start_and_an_end_time_is_left_alone() -> None:
    two = {**REMINDER, "properties": {**REMINDER["properties"], "end": {"type": "string", "pattern": HH_MM}}}
    tool = ToolInfo(name="create_reminder", parameters=two)
    answer = call(person="Maria", date="2026-03-20", text="pay the bill")
    assert decided(answer, "Remind Maria on March 20 at 9 am to pay the bill", tools=(tool,)) == answer


def test_a_finish_answer_and_a_call_without_call_context_are_left_alone() -> None:
    finish = {"thought": "", "action": FINISH, "action_input": "Готово в 9 утра"}
    assert decided(finish, "Напомни Марии в 9 утра") == finish
    answer = call(person="Мария", date="2026-03-20", text="оплатить счёт")
    assert LocalChatModel().after_decoding(answer, CallContext()) == answer
    assert decided(answer, "Напомни Марии 20 марта 2026 в 9 утра", tools=()) == answer


def test_written_times_can_be_left_out() -> None:
    model = LocalChatModel(techniques=[name for name in DEFAULT_TECHNIQUES if name != "written_times"])
    answer = call(person="Мария", date="2026-03-20", text="оплатить счёт")
    assert decided(answer, "Напомни Марии 20 марта 2026 в 9 утра оплатить счёт", model=model) == answer
