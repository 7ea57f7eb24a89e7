"""The suites' judge (bench/suites/judge.py): when a decision is the expected call, and when a run reached
the expected outcome."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("bench", reason="the bench/ folder is not in this source tree")

from bench.suites.judge import ExpectedCall, judge_call, judge_outcome  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "ticket_id": {"type": "integer"},
        "assignee": {"type": "string"},
        "priority": {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"},
        "note": {"type": "string", "default": ""},
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "percent": {"type": "number"},
        "notify": {"type": "boolean", "default": True},
    },
    "required": ["ticket_id", "assignee"],
}
ASSIGN = ExpectedCall(tool="assign", arguments={"ticket_id": 17, "assignee": "Петров"})


def call(**arguments):
    return {"tool": "assign", "arguments": arguments}


def test_the_expected_call_is_right():
    assert judge_call(call(ticket_id=17, assignee="Петров"), ASSIGN, SCHEMA).ok


def test_an_inflected_name_is_wrong():
    verdict = judge_call(call(ticket_id=17, assignee="Петрова"), ASSIGN, SCHEMA)
    assert not verdict.ok
    assert "assignee" in verdict.reason


def test_strings_are_compared_after_case_whitespace_and_yo_normalisation():
    expected = ExpectedCall(tool="assign", arguments={"ticket_id": 1, "assignee": "Пётр  Иванов"})
    assert judge_call(call(ticket_id=1, assignee="  петр иванов "), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=1, assignee="Петр Иванова"), expected, SCHEMA).ok


def test_numbers_are_compared_numerically():
    expected = ExpectedCall(tool="assign", arguments={"ticket_id": 17, "assignee": "Петров", "percent": 12})
    assert judge_call(call(ticket_id=17.0, assignee="Петров", percent=12.0), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=17, assignee="Петров", percent=12.5), expected, SCHEMA).ok


def test_a_number_written_as_a_string_is_wrong():
    verdict = judge_call(call(ticket_id="17", assignee="Петров"), ASSIGN, SCHEMA)
    assert not verdict.ok
    assert "ticket_id" in verdict.reason
    assert not judge_call(call(ticket_id=True, assignee="Петров"),
                          ExpectedCall(tool="assign", arguments={"ticket_id": 1, "assignee": "Петров"}), SCHEMA).ok


def test_documented_alternatives_are_right_and_others_are_not():
    expected = ExpectedCall(tool="assign", arguments={"ticket_id": 17, "assignee": "Петров"},
                            accept={"assignee": ["Иван Петров"]})
    assert judge_call(call(ticket_id=17, assignee="Иван Петров"), expected, SCHEMA).ok
    assert judge_call(call(ticket_id=17, assignee="Петров"), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=17, assignee="Ивана Петрова"), expected, SCHEMA).ok


def test_the_tool_name_must_be_exact():
    verdict = judge_call({"tool": "Assign", "arguments": {"ticket_id": 17, "assignee": "Петров"}}, ASSIGN, SCHEMA)
    assert not verdict.ok
    assert "Assign" in verdict.reason


def test_an_argument_left_out_is_right_when_it_is_the_default_or_optional():
    with_default = ExpectedCall(tool="assign", arguments={"ticket_id": 17, "assignee": "Петров", "priority": "medium"})
    assert judge_call(call(ticket_id=17, assignee="Петров"), with_default, SCHEMA).ok
    not_default = ExpectedCall(tool="assign", arguments={"ticket_id": 17, "assignee": "Петров", "priority": "high"})
    assert not judge_call(call(ticket_id=17, assignee="Петров"), not_default, SCHEMA).ok
    optional = not_default.model_copy(update={"optional": ("priority",)})
    assert judge_call(call(ticket_id=17, assignee="Петров"), optional, SCHEMA).ok
    assert not judge_call(call(ticket_id=17), ASSIGN, SCHEMA).ok


def test_an_unasked_argument_must_be_absent_or_its_default():
    assert judge_call(call(ticket_id=17, assignee="Петров", priority="medium", tags=[]), ASSIGN, SCHEMA).ok
    verdict = judge_call(call(ticket_id=17, assignee="Петров", priority="high"), ASSIGN, SCHEMA)
    assert not verdict.ok
    assert "priority" in verdict.reason
    free = ASSIGN.model_copy(update={"free": ("note",)})
    assert judge_call(call(ticket_id=17, assignee="Петров", note="anything"), free, SCHEMA).ok


def test_an_argument_outside_the_schema_is_wrong_even_with_a_default_value():
    verdict = judge_call(call(ticket_id=17, assignee="Петров", urgent=None), ASSIGN, SCHEMA)
    assert not verdict.ok
    assert "urgent" in verdict.reason


def test_free_text_is_judged_by_the_parts_it_must_contain():
    expected = ExpectedCall(tool="assign", contains={"note": ["картридж"]},
                            arguments={"ticket_id": 17, "assignee": "Петров", "note": "Картридж заменили"})
    assert judge_call(call(ticket_id=17, assignee="Петров", note="Сегодня КАРТРИДЖ заменён"), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=17, assignee="Петров", note="Заменили тонер"), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=17, assignee="Петров", note=["картридж"]), expected, SCHEMA).ok


def test_lists_are_compared_as_multisets():
    expected = ExpectedCall(tool="assign",
                            arguments={"ticket_id": 1, "assignee": "Петров", "tags": ["оплата", "сервер"]})
    assert judge_call(call(ticket_id=1, assignee="Петров", tags=["Сервер", "оплата"]), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=1, assignee="Петров", tags=["оплата"]), expected, SCHEMA).ok
    assert not judge_call(call(ticket_id=1, assignee="Петров", tags=["оплата", "оплата"]), expected, SCHEMA).ok


def test_no_call_is_right_only_when_none_is_expected():
    assert judge_call(None, None, None).ok
    assert not judge_call(call(ticket_id=1, assignee="Петров"), None, None).ok
    assert not judge_call(None, ASSIGN, SCHEMA).ok


def test_arguments_that_are_not_an_object_are_wrong():
    assert not judge_call({"tool": "assign", "arguments": "17 Петров"}, ASSIGN, SCHEMA).ok


def test_an_expectation_naming_an_unknown_argument_is_refused():
    with pytest.raises(ValueError, match="priority"):
        ExpectedCall(tool="assign", arguments={"ticket_id": 1}, accept={"priority": ["low"]})


def test_the_outcome_needs_a_finished_run_with_the_expected_calls_in_order():
    find = ExpectedCall(tool="find", arguments={"query": "VPN"})
    schemas = {"assign": SCHEMA, "find": {"type": "object", "properties": {"query": {"type": "string"}}}}
    made = [{"tool": "find", "arguments": {"query": "vpn"}}, {"tool": "other", "arguments": {}},
            {"tool": "assign", "arguments": {"ticket_id": 17, "assignee": "Петров", "priority": "medium"}}]
    assert judge_outcome(status="finished", calls=made, output="", expected=[find, ASSIGN], schemas=schemas).ok
    assert not judge_outcome(status="max_iterations", calls=made, output="", expected=[find, ASSIGN],
                             schemas=schemas).ok
    reverse = judge_outcome(status="finished", calls=made[::-1], output="", expected=[find, ASSIGN], schemas=schemas)
    assert not reverse.ok
    assert "assign" in reverse.reason


def test_a_task_needing_no_tool_fails_its_outcome_when_a_tool_ran():
    made = [{"tool": "find", "arguments": {"query": "weather"}}]
    assert judge_outcome(status="finished", calls=[], output="Hi!", expected=[], schemas={}).ok
    assert not judge_outcome(status="finished", calls=made, output="Hi!", expected=[], schemas={}).ok


def test_the_answer_must_contain_the_fact_ignoring_spaces_and_dashes():
    find = ExpectedCall(tool="find", arguments={"query": "Васильева"})
    schemas = {"find": {"type": "object", "properties": {"query": {"type": "string"}}}}
    made = [{"tool": "find", "arguments": {"query": "Васильева"}}]
    right = judge_outcome(status="finished", calls=made, output="Телефон: +79257654321", expected=[find],
                          schemas=schemas, answer_contains=["+7 925 765-43-21"])
    assert right.ok
    wrong = judge_outcome(status="finished", calls=made, output="Не знаю", expected=[find], schemas=schemas,
                          answer_contains=["+7 925 765-43-21"])
    assert not wrong.ok
