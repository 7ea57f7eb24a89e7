"""A small model that looked today's date up copies it where the task asks for "tomorrow" or «в пятницу»: the
embedded model counts the days on; a date the model got right, or a task whose day is not plain, stays as it is."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from react_agent._types import FINISH, CallContext
from react_agent.models import LocalChatModel
from react_agent.models.local._dates import relative_offset
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES

WEDNESDAY = dt.date(2026, 3, 4)
TODAY = '{"date": "2026-03-04", "weekday": "Wednesday"}'


@pytest.mark.parametrize(("task", "offset"), [
    ("Какие встречи у меня завтра?", 1),
    ("What meetings do I have tomorrow?", 1),
    ("Напомни Ивану в пятницу сдать отчёт", 2),
    ("Remind John on Friday to send the report", 2),
    ("Что было вчера?", -1),
    ("Поставь созвон на послезавтра", 2),
    ("the day after tomorrow", 2),
    ("в понедельник", 5),
    ("Какие встречи сегодня?", 0),
])
def test_a_plain_relative_day_is_counted_from_today(task: str, offset: int) -> None:
    assert relative_offset(task, WEDNESDAY) == offset


@pytest.mark.parametrize("task", [
    "Найди контакт Морозова",  # no relative day
    "Remind John next Friday",  # ambiguous modifiers
    "в следующую пятницу", "в прошлую пятницу", "this Friday",
    "завтра или в пятницу",  # two days
    "Перенеси сегодняшнюю встречу на завтра", "Move today's meeting to tomorrow", "tonight or tomorrow",
    "on Wednesday",  # today's weekday: today or in a week
    "завтра, 12 марта", "tomorrow, March 12", "завтра 12.03",  # a date of its own
    "Разверни в тестовой среде",  # «среда» the environment, not the weekday
])
def test_no_plain_relative_day_gives_no_offset(task: str) -> None:
    assert relative_offset(task, WEDNESDAY) is None


def call(**args: Any) -> dict[str, Any]:
    return {"thought": "", "action": "create_reminder", "action_input": args}


def decided(answer: dict[str, Any], task: str, *observations: str, model: LocalChatModel | None = None) -> Any:
    return (model or LocalChatModel()).after_decoding(answer, CallContext(task=task, observations=observations))


def test_todays_date_copied_for_a_relative_day_is_counted_on() -> None:
    assert "relative_dates" in DEFAULT_TECHNIQUES
    task = "Напомни Ивану в пятницу сдать отчёт"
    answer = call(person="Иван", date="2026-03-04", text="сдать отчёт")
    assert decided(answer, task, TODAY) == call(person="Иван", date="2026-03-06", text="сдать отчёт")
    nested = {"thought": "", "action": "list_events", "action_input": {"filter": {"dates": ["2026-03-04"]}}}
    assert decided(nested, "What meetings do I have tomorrow?", TODAY)["action_input"] == {
        "filter": {"dates": ["2026-03-05"]}}
    off = LocalChatModel(techniques=[t for t in DEFAULT_TECHNIQUES if t != "relative_dates"])
    assert decided(answer, task, TODAY, model=off) == answer


@pytest.mark.parametrize(("answer", "task", "observations"), [
    (call(person="Иван", date="2026-03-06", text="сдать отчёт"), "Напомни Ивану в пятницу сдать отчёт", (TODAY,)),
    (call(person="Иван", date="2026-03-04", text="x"), "Напомни Ивану сегодня", (TODAY,)),
    (call(person="Иван", date="2026-03-04", text="x"), "Напомни Ивану 4 марта 2026, то есть завтра", (TODAY,)),
    (call(person="Иван", date="2026-03-04", text="x"), "Напомни Ивану 2026-03-04 завтра", (TODAY,)),
    (call(person="Иван", date="2026-03-04", text="x"), "Напомни Ивану завтра", ()),  # no result gives today
    (call(person="Иван", date="2026-03-04", text="x"), "Напомни Ивану завтра",
     (TODAY, '[{"date": "2026-03-09"}]')),  # results with several dates
    ({"thought": "", "action": FINISH, "action_input": "2026-03-04"}, "Что было вчера?", (TODAY,)),
])
def test_a_correct_or_unclear_call_is_left_as_it_is(answer: dict[str, Any], task: str,
                                                    observations: tuple[str, ...]) -> None:
    assert decided(answer, task, *observations, model=LocalChatModel(techniques=["relative_dates"])) == answer


def test_a_right_date_passes_the_default_pipeline_unchanged() -> None:
    answer = call(person="Иван", date="2026-03-06", text="сдать отчёт")
    assert decided(answer, "Напомни Ивану в пятницу сдать отчёт", TODAY) == answer
