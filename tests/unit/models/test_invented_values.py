"""A call whose identifier, e-mail address or date nothing in the task or the observations gives is decided again
without that tool; a call whose values the text writes (in digits or words) stands as it is decoded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from completions import Script
from langchain_core.tools import StructuredTool

from react_agent._types import FINISH, CallContext, ToolInfo
from react_agent.models import LocalChatModel
from react_agent.models.local._invented import MAX_WRITTEN_INTEGERS, invented
from react_agent.models.local._numbers import spelled_numbers
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES, context_identifiers, select
from react_agent.models.local._staged import answered, prepared
from react_agent.tools import answer_schema


def find_deals(company: str) -> str:
    """Find the deals of a company."""
    return "[]"


def apply_discount(deal_id: int, percent: float) -> str:
    """Apply a discount to a deal."""
    return "ok"


def send_email(to: str, subject: str) -> str:
    """Send an e-mail."""
    return "sent"


TOOLS = [StructuredTool.from_function(f) for f in (find_deals, apply_discount, send_email)]
PIPELINE = select(DEFAULT_TECHNIQUES)


@pytest.mark.parametrize(("text", "numbers"), [
    ("Reassign ticket twenty-seven to Sarah", {27}),
    ("Переназначь тридцать первый тикет на Соколову", {31}),
    ("two hundred and five boxes", {205}),
    ("на ста двадцати страницах", {120}),
    ("first and second", {1, 2}),
    ("девятьсот девяносто девять", {999}),
    ("no numbers here, нет чисел", set()),
])
def test_numbers_spelled_in_words_are_read_in_both_languages(text: str, numbers: set[int]) -> None:
    assert spelled_numbers(text) == numbers


@pytest.mark.parametrize(("args", "text"), [
    ({"deal_id": 42, "percent": 10}, "Apply 10% to deal 42"),
    ({"ticket_id": 31, "assignee": "Соколова"}, "Переназначь тридцать первый тикет на Соколову"),
    ({"ticketId": 27}, "Close ticket twenty-seven"),
    ({"order_id": "A-1007"}, "Where is my order a-1007?"),
    ({"to": "ann@x.org", "subject": "Hi"}, "Write to Ann <Ann@X.org>"),
    ({"date": "2026-03-12"}, "a call on March 12"),
    ({"date": "2025-03-21"}, "Поставь напоминание на двадцать первое марта"),
    ({"date": "2026-03-13"}, "What day is it?\n\nToday is 2026-03-10, Tuesday"),
    ({"date": "2026-03-12"}, "Встреча 12 марта"),
    ({"date": "2026-03-12"}, "срок — 12.03"),
    ({"date": "2026-03-12"}, "due 03/12"),
    ({"date": "2026-03-12"}, "due on the 12th"),
    ({"date": "2026-03-12"}, "до 12-го"),
    ({"date": "2026-03-12"}, "Назначь на двенадцатое марта"),
    ({"limit": 5, "query": "VPN", "urgent": True, "id_card": "x"}, "tickets about VPN"),
    ({"items": [{"product_id": 7}], "note": "call 555"}, "order product 7"),
])
def test_values_the_text_writes_are_not_invented(args: dict[str, Any], text: str) -> None:
    assert invented(args, text) == []


@pytest.mark.parametrize(("args", "text", "paths"), [
    ({"deal_id": 1, "percent": 10}, "Give the Maple deal a 10% discount", ["deal_id"]),
    ({"ticket_id": 301, "assignee": "Соколова"}, "Переназначь тридцать первый тикет на Соколову", ["ticket_id"]),
    ({"to": "tom.hayes@example.com", "subject": "Hi"}, "Email Tom Hayes", ["to"]),
    ({"date": "2026-03-13", "text": "report"}, "Remind me on Friday about the report", ["date"]),
    ({"id": "INV-2024-77"}, "Show my last invoice", ["id"]),
    # a day number written alone (an id, a phone number) is no day of a month
    ({"close_date": "2023-10-01"}, 'Create a deal with his company\n\n[{"id": 1, "phone": "+7 903 111-22-33"}]',
     ["close_date"]),
    ({"date": "2026-03-12"}, "Book room 12 for the team", ["date"]),
    ({"events": [{"event_id": 9}]}, "Cancel my meetings", ["events[0].event_id"]),
])
def test_identifiers_addresses_and_dates_nothing_gives_are_invented(args: dict[str, Any], text: str,
                                                                      paths: list[str]) -> None:
    assert invented(args, text) == paths


def test_the_oracle_entry_rejects_an_invented_call_and_keeps_a_written_one() -> None:
    model = LocalChatModel()
    context = CallContext(task="Give the Maple deal a 10% discount", tools=())
    made_up = {"thought": "", "action": "apply_discount", "action_input": {"deal_id": 1, "percent": 10}}
    assert model.after_decoding(made_up, context) is None
    written = {"thought": "", "action": "apply_discount", "action_input": {"deal_id": 1, "percent": 10}}
    assert model.after_decoding(written, CallContext(task="Give deal 1 a 10% discount")) == written
    finish = {"thought": "", "action": FINISH, "action_input": "Which deal? tom@x.org"}
    assert model.after_decoding(finish, context) == finish


def test_an_invented_call_is_decided_again_without_its_tool() -> None:
    context = CallContext(task="Give the Maple Systems deal a 10% discount", tools=())
    step = prepared(PIPELINE, answer_schema(TOOLS), context)
    script = Script('{"thought": "discount", "action": "apply_discount", ', '{"deal_id": 1, "percent": 10}}',
                    '{"thought": "find it first", "action": "find_deals", ', '{"company": "Maple Systems"}}')
    text = answered(script, "PROMPT", step, context, PIPELINE)
    assert json.loads(text) == {"thought": "find it first", "action": "find_deals",
                                "action_input": {"company": "Maple Systems"}}
    first, again = script.calls[0][1], script.calls[2][1]
    names = [b["properties"]["action"]["const"] for b in again["anyOf"]]
    assert "apply_discount" in json.dumps(first) and "apply_discount" not in names and "find_deals" in names
    assert script.outputs == []


def test_a_call_whose_values_the_task_writes_is_decoded_once() -> None:
    context = CallContext(task="Give deal 42 a 10% discount", tools=())
    step = prepared(PIPELINE, answer_schema(TOOLS), context)
    script = Script('{"thought": "t", "action": "apply_discount", ', '{"deal_id": 42, "percent": 10}}')
    assert json.loads(answered(script, "P", step, context, PIPELINE))["action_input"] == {"deal_id": 42, "percent": 10}
    assert len(script.calls) == 2


def _two_invented_then(*last: str) -> tuple[CallContext, Any, Script]:
    """A decision whose first two answers invent a value (an address, a deal id), then ``last`` (head, body)."""
    context = CallContext(task="Email Tom about the Maple deal", tools=())
    step = prepared(PIPELINE, answer_schema(TOOLS), context)
    return context, step, Script('{"thought": "t", "action": "send_email", ', '{"to": "tom@x.org", "subject": "M"}}',
                                 '{"thought": "t", "action": "apply_discount", ', '{"deal_id": 3, "percent": 1}}',
                                 *last)


def test_when_every_tool_invents_the_answer_left_stands() -> None:
    """Each rejected tool leaves the schema in turn; the last action left (here FINISH) stands."""
    context, step, script = _two_invented_then('{"thought": "I need his address", "action": "FINISH", ',
                                               ' "What is Tom\'s address?"}')
    assert json.loads(answered(script, "P", step, context, PIPELINE))["action"] == FINISH
    last = [b["properties"]["action"]["const"] for b in script.calls[-2][1]["anyOf"]]
    assert "send_email" not in last and "apply_discount" not in last


def test_a_single_tool_schema_without_finish_keeps_its_call() -> None:
    context = CallContext(task="Email Tom", tools=())
    schema = answer_schema([TOOLS[2]])
    schema = {**schema, "anyOf": [b for b in schema["anyOf"] if b["properties"]["action"].get("const") != FINISH]}
    step = prepared(PIPELINE, schema, context)
    script = Script('{"thought": "t", "action": "send_email", ', '{"to": "tom@x.org", "subject": "Hi"}}')
    assert json.loads(answered(script, "P", step, context, PIPELINE))["action_input"]["to"] == "tom@x.org"
    assert len(script.calls) == 2


def test_without_the_technique_an_invented_call_stands() -> None:
    techniques = select([name for name in DEFAULT_TECHNIQUES if name != "invented_values"])
    context = CallContext(task="Give the Maple deal a 10% discount", tools=())
    step = prepared(techniques, answer_schema(TOOLS), context)
    script = Script('{"thought": "t", "action": "apply_discount", ', '{"deal_id": 1, "percent": 10}}')
    assert json.loads(answered(script, "P", step, context, techniques))["action"] == "apply_discount"


def test_an_identifier_may_only_take_the_numbers_the_text_writes() -> None:
    schema = {"type": "object", "properties": {
        "ticket_id": {"type": "integer"}, "limit": {"type": "integer"}, "orderId": {"type": "integer", "minimum": 1},
        "deal_id": {"type": "integer", "enum": [5, 6]}, "user_id": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"product_id": {"type": "integer"}}}}}}
    out = context_identifiers(schema, "Переназначь тридцать первый тикет, заказ 0 и 2026-03-10")
    props = out["properties"]
    assert props["ticket_id"]["enum"] == [0, 2026, 3, 10, 31]
    assert props["orderId"]["enum"] == [2026, 3, 10, 31]
    assert props["items"]["items"]["properties"]["product_id"]["enum"] == [0, 2026, 3, 10, 31]
    for name in ("limit", "deal_id", "user_id"):
        assert props[name] == schema["properties"][name]


def test_a_text_without_numbers_or_with_too_many_leaves_identifiers_free() -> None:
    schema = {"type": "object", "properties": {"ticket_id": {"type": "integer"}}}
    assert context_identifiers(schema, "Close the VPN ticket") == schema
    many = " ".join(str(n) for n in range(MAX_WRITTEN_INTEGERS + 1))
    assert context_identifiers(schema, many) == schema


def test_deciding_again_uses_the_prompt_built_from_the_rejected_answers_and_a_fresh_budget() -> None:
    context, step, script = _two_invented_then('{"thought": "t", "action": "find_deals", ', '{"company": "Maple"}}')
    seen: list[list[tuple[str, tuple[str, ...]]]] = []
    restarts: list[int] = []

    def again(rejected: Any) -> str:
        seen.append([(action, paths) for _, action, paths in rejected])
        return f"PROMPT+{len(rejected)}"

    text = answered(script, "PROMPT", step, context, PIPELINE, again=again, restart=lambda: restarts.append(1))
    assert json.loads(text)["action"] == "find_deals"
    assert seen == [[("send_email", ("to",))], [("send_email", ("to",)), ("apply_discount", ("deal_id",))]]
    assert [script.calls[i][0] for i in (0, 2, 4)] == ["PROMPT", "PROMPT+1", "PROMPT+2"]
    assert len(restarts) == 2


def test_a_made_up_value_of_the_worked_examples_is_invented_unless_the_text_writes_it() -> None:
    assert invented({"assignee": "Тамрик", "query": "Война и мир"}, "Кто написал «Войну и мир»?") == ["assignee"]
    assert invented({"city": "Velmora"}, "Weather in Velmora, please") == []
    assert invented({"currency": "EUR", "unit": "meters"}, "convert to euros, in metres") == []


def test_an_invented_optional_argument_is_left_out_and_the_call_stands() -> None:
    tools = tuple(ToolInfo(name=t.name, description=t.description, parameters=t.args_schema.model_json_schema())
                  for t in TOOLS)
    search = ToolInfo(name="search_tickets", description="Search tickets", parameters={
        "type": "object", "required": ["query"], "properties": {
            "query": {"type": "string"}, "assignee": {"type": "string"}, "since": {"type": "string"}}})
    context = CallContext(task="Find the VPN tickets", tools=(*tools, search))
    call = {"thought": "", "action": "search_tickets",
            "action_input": {"query": "VPN", "assignee": "Tamrik", "since": "2023-10-01"}}
    assert LocalChatModel().after_decoding(call, context) == {**call, "action_input": {"query": "VPN"}}
    required = {"thought": "", "action": "apply_discount", "action_input": {"deal_id": 3, "percent": 10}}
    assert LocalChatModel().after_decoding(required, context) is None


def test_without_a_call_context_nothing_is_taken_for_invented() -> None:
    """A direct invoke passes no task: an address or id cannot be told invented, and the call stands."""
    call = {"thought": "", "action": "send_email", "action_input": {"to": "ivan@test.com", "subject": "Hi"}}
    assert LocalChatModel().after_decoding(call, CallContext()) == call
    step = prepared(PIPELINE, answer_schema(TOOLS), CallContext())
    script = Script('{"thought": "t", "action": "send_email", ', '{"to": "ivan@test.com", "subject": "Hi"}}')
    assert json.loads(answered(script, "P", step, CallContext(), PIPELINE))["action"] == "send_email"
    assert len(script.calls) == 2


@pytest.mark.parametrize(("time", "text"), [
    ("09:00", "Напомни Марии 20 марта 2026 в 9 утра"),
    ("21:00", "Позвони в девять вечера"),
    ("15:30", "a call at 3:30 pm"),
    ("15:00", "at 15"),
    ("12:00", "lunch at noon"),
    ("12:00", "обед в полдень"),
    ("00:00", "at midnight"),
    ("08:30", "в половине девятого"),
    ("14:45", "a quarter to three"),
])
def test_a_clock_time_whose_hour_the_text_writes_is_not_invented(time: str, text: str) -> None:
    assert invented({"time": time}, text) == []


def test_a_clock_time_whose_hour_nothing_writes_is_invented_and_left_out_when_optional() -> None:
    assert invented({"time": "14:00", "text": "сдать отчёт"}, "Напомни Ивану в пятницу сдать отчёт") == ["time"]
    remind = ToolInfo(name="create_reminder", description="Create a reminder", parameters={
        "type": "object", "required": ["person", "text"], "properties": {
            "person": {"type": "string"}, "text": {"type": "string"}, "time": {"type": "string"}}})
    context = CallContext(task="Напомни Ивану в пятницу сдать отчёт", tools=(remind,))
    call = {"thought": "", "action": "create_reminder",
            "action_input": {"person": "Иван", "text": "сдать отчёт", "time": "14:00"}}
    assert LocalChatModel().after_decoding(call, context) == {
        **call, "action_input": {"person": "Иван", "text": "сдать отчёт"}}
