"""An optional text argument that the model made up in the task's own words (a meeting room nobody mentioned) is left
out of the call, so the tool's default applies; a value the task, a result or the tool's description writes, in any
form, stays as it is decoded."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent._types import CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local._guessed import guessed_text
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES, unwritten_optionals

EVENT = {
    "type": "object",
    "required": ["title", "date"],
    "properties": {
        "title": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "location": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "room": {"type": "string"},
        "level": {"type": "string", "description": "Difficulty. E.g. beginner, intermediate, advanced."},
        "kind": {"type": "string", "enum": ["call", "meeting"]},
        "online": {"type": "boolean"},
        "minutes": {"type": "integer"},
        "notes": {"type": "string", "format": "uri"},
    },
}
CREATE_EVENT = ToolInfo(name="create_event", description="Create a calendar event", parameters=EVENT)


def call(**args: Any) -> dict[str, Any]:
    return {"thought": "", "action": "create_event", "action_input": args}


@pytest.mark.parametrize(("value", "text"), [
    ("Конференцзал", "Назначь созвон с Анной и Олегом на 12 марта 2026 в 15:30"),
    ("Conference room B", "Set up a call with Emily on March 12, 2026 at 3:30 pm"),
    ("Tamrik", "Find the VPN tickets"),
])
def test_a_phrase_in_the_tasks_alphabet_that_shares_no_word_with_it_is_guessed(value: str, text: str) -> None:
    assert guessed_text(value, text)


@pytest.mark.parametrize(("value", "text"), [
    ("Москва", "Какая погода в Москве?"),  # another form of a word the task writes
    ("Переговорная 2", "встреча в переговорной 2"),
    ("women", "Who is the top player in woman tennis?"),  # a letter changed
    ("mi", "What's the distance in miles to the Moon?"),  # an abbreviation
    ("24h", "What time is it in London in 24 hour format?"),
    ("Asia/Tokyo", "What time is it in Tokyo?"),  # one word of several is enough
    ("Europe/Moscow", "Который час в Москве?"),  # another alphabet: maybe a translation
    ("Moscow", "Который час в Москве?"),
    ("", "anything"),
    ("2026", "anything"),  # no word to look for
])
def test_a_value_the_text_writes_in_some_form_or_another_alphabet_is_not_guessed(value: str, text: str) -> None:
    assert not guessed_text(value, text)


def test_only_optional_free_text_arguments_are_left_out() -> None:
    text = "Созвон с Анной 12 марта 2026"
    args = {"title": "Планёрка отдела", "date": "2026-03-12", "location": "Конференцзал", "room": "Зал Б",
            "kind": "meeting", "online": True, "minutes": 45, "notes": "https://meet.example/x"}
    assert unwritten_optionals(args, EVENT, text) == {
        "title": "Планёрка отдела", "date": "2026-03-12", "kind": "meeting", "online": True, "minutes": 45,
        "notes": "https://meet.example/x"}


def test_a_value_the_arguments_description_offers_stays() -> None:
    args = {"title": "Game night", "date": "2026-03-12", "level": "Intermediate"}
    assert guessed_text("Intermediate", "We are not beginners, something in the middle")
    assert unwritten_optionals(args, EVENT, "We are not beginners, something in the middle") == args


def test_a_value_a_result_writes_stays() -> None:
    context = CallContext(task="Поставь встречу с Олегом 12 марта 2026 там же, где прошлая",
                          observations=("Прошлая встреча: Конференцзал, 10:00",), tools=(CREATE_EVENT,))
    answer = call(title="Встреча с Олегом", date="2026-03-12", location="Конференцзал")
    assert LocalChatModel().after_decoding(answer, context) == answer


@pytest.mark.parametrize(("answer", "task"), [
    (call(title="Созвон с Анной и Олегом", date="2026-03-12", location="Переговорная 2"),
     "Назначь созвон с Анной и Олегом на 12 марта 2026 в переговорной 2"),
    (call(title="Stand-up", date="2026-03-10", location="Room 4"), "Schedule a stand-up on March 10, 2026 in room 4"),
    (call(title="Stand-up", date="2026-03-10"), "Schedule a stand-up on March 10, 2026"),
])
def test_a_correct_call_passes_the_default_pipeline_unchanged(answer: dict[str, Any], task: str) -> None:
    assert "unwritten_optionals" in DEFAULT_TECHNIQUES
    context = CallContext(task=task, tools=(CREATE_EVENT,))
    assert LocalChatModel().after_decoding(answer, context) == answer


def test_the_default_pipeline_leaves_a_made_up_location_out_and_the_call_stands() -> None:
    context = CallContext(task="Назначь созвон с Анной и Олегом на 12 марта 2026 в 15:30", tools=(CREATE_EVENT,))
    answer = call(title="Созвон с Анной и Олегом", date="2026-03-12", location="Конференцзал")
    assert LocalChatModel().after_decoding(answer, context) == call(title="Созвон с Анной и Олегом",
                                                                    date="2026-03-12")
    without = LocalChatModel(techniques=[t for t in DEFAULT_TECHNIQUES if t != "unwritten_optionals"])
    assert without.after_decoding(answer, context) == answer


def test_without_a_call_context_or_a_schema_nothing_is_left_out() -> None:
    answer = call(title="Созвон", date="2026-03-12", location="Конференцзал")
    assert LocalChatModel().after_decoding(answer, CallContext()) == answer
    args = {"title": "x", "location": "Конференцзал"}
    assert unwritten_optionals(args, None, "Созвон с Анной") == args
    assert unwritten_optionals(args, {"type": "object", "properties": {}}, "Созвон с Анной") == args


def test_a_huge_result_is_read_whole_and_a_long_value_is_never_guessed() -> None:
    words = [f"слово{chr(0x430 + i % 32)}{i}" for i in range(200_000)]
    observation = " ".join([*words, "Конференцзал"])
    assert not guessed_text("Конференцзал", observation)
    assert guessed_text("Переговорная", observation)
    story = "Короткий рассказ о том, как прошёл наш большой и очень долгий день"
    assert not guessed_text(story, "Созвон с Анной")  # more words than a made-up name has


@pytest.mark.parametrize("value", ["celsius", "USD", "JST", "intermediate", "open", "мск", "24h"])
def test_a_unit_code_or_level_may_be_inferred_and_is_never_guessed(value: str) -> None:
    assert not guessed_text(value, "What is the weather in Paris? Какая погода в Париже?")


def test_a_schema_of_optional_arguments_only_is_looked_at_too() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}, "place": {"type": "string"}}}
    args = {"query": "VPN", "place": "Конференцзал"}
    assert unwritten_optionals(args, schema, "Найди заявки про VPN") == {"query": "VPN"}
    assert unwritten_optionals(args, {**schema, "required": "query"}, "Найди заявки про VPN") == args  # not a list


@pytest.mark.parametrize("value", ["null", "None", " NULL ", "undefined", "nil"])
def test_a_null_written_as_a_word_in_an_optional_argument_is_left_out(value: str) -> None:
    args = {"title": "Созвон", "date": "2026-03-12", "location": value, "room": value}
    assert unwritten_optionals(args, EVENT, "Назначь созвон на 12 марта 2026") == {"title": "Созвон",
                                                                                    "date": "2026-03-12"}


def test_a_null_word_the_task_writes_or_the_schema_requires_or_lists_stays() -> None:
    args = {"title": "null", "date": "2026-03-12", "location": "null"}
    assert unwritten_optionals(args, EVENT, "Call back with the error 'null' on 2026-03-12") == args
    assert unwritten_optionals(args, EVENT, "Schedule it for 2026-03-12") == {"title": "null", "date": "2026-03-12"}
    listed = {**EVENT, "properties": {**EVENT["properties"], "kind": {"type": "string", "enum": ["none", "call"]}}}
    assert unwritten_optionals({"title": "A", "date": "2026-03-12", "kind": "none"}, listed, "no kind") == \
        {"title": "A", "date": "2026-03-12", "kind": "none"}
    assert unwritten_optionals({"title": "A", "date": "2026-03-12", "room": "nullable"}, EVENT, "x") == \
        {"title": "A", "date": "2026-03-12", "room": "nullable"}  # a word that begins with one is another word
