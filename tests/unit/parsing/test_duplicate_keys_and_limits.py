"""JSON the parser cannot take as written goes back to the model with what is wrong, never raised, never guessed.

* A key given twice with different values (``json`` alone keeps the last one silently) is refused as
  ``duplicate_key``, naming the key: at any depth of the decision, in every form a decision is read from
  (plain, fenced, relaxed, repaired, ``Action Input:``, inline, ``<tool_call>``, XML parameters, field markers,
  a string holding an object) and in the list form of :func:`parse_actions`. An identical repeat is accepted.
* JSON nested deeper than the decoder goes (``RecursionError``) or deeper than the scan's cap is refused as
  ``too_deep`` saying "nested deeper than 64 levels", not as "no action" / prose / "cut off".
* An integer longer than ``sys.get_int_max_str_digits()`` (``int()`` refuses it) is refused as
  ``too_many_digits`` saying how many digits are allowed.

Correct replies (distinct keys, arguments nested below the bound, long but allowed numbers) parse to exactly
the decision they gave before.
"""

from __future__ import annotations

import json
import sys

import pytest
from langchain_core.tools import StructuredTool

from react_agent import FINISH, AgentAction, OutputParseError, ReactAgent, parse_actions, parse_response
from react_agent.parsing import MAX_NESTING
from react_agent.testing import ScriptedChatModel

TOOLS = ("f", "g", "search")
DIGITS = sys.get_int_max_str_digits()
TOO_LONG = "9" * (DIGITS + 700)  # int() refuses it
LONGEST = "9" * DIGITS  # int() still reads it


def refused(text: str, reason: str, *, multi: bool = False) -> OutputParseError:
    """The refusal of ``text`` (by parse_actions with ``multi``); anything else, a raise included, fails."""
    with pytest.raises(OutputParseError) as info:
        (parse_actions if multi else parse_response)(text, TOOLS)
    assert info.value.reason == reason, info.value.message
    assert info.value.text == text
    return info.value


def lists(depth: int) -> str:
    return "[" * depth + "]" * depth


def objects(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


# -- duplicate keys -------------------------------------------------------------------------------------

DUPLICATED_ARGUMENT = {  # the key "a" twice with different values, in every form a decision is read from
    "object": '{"thought": "t", "action": "f", "action_input": {"a": 1, "a": 2}}',
    "prose_and_fence": 'Here:\n```json\n{"action": "f", "action_input": {"a": 1, "a": 2}}\n```\nDone.',
    "single_quotes": "{'action': 'f', 'action_input': {'a': 1, 'a': 2,},}",  # the relaxed pass
    "missing_comma": '{"action": "f", "action_input": {"a": 1 "a": 2}}',  # json_repair
    "list_item": '{"action": "f", "action_input": {"x": [{"b": 0, "a": 1, "a": 2}]}}',
    "string_input": '{"action": "f", "action_input": "{\\"a\\": 1, \\"a\\": 2}"}',
    "text_format": 'Thought: t\nAction: f\nAction Input: {"a": 1, "a": 2}',
    "inline": 'Action: f({"a": 1, "a": 2})',
    "tool_call": '<tool_call>{"name": "f", "arguments": {"a": 1, "a": 2}}</tool_call>',
    "xml_parameter": '<invoke name="f"><parameter name="x">{"a": 1, "a": 2}</parameter></invoke>',
    "field_markers": '[[ ## next_tool_name ## ]]\nf\n[[ ## next_tool_args ## ]]\n{"a": 1, "a": 2}',
    "after_answer_label": 'Final Answer: {"action": "f", "action_input": {"a": 1, "a": 2}}',
    "types_differ": '{"action": "f", "action_input": {"a": 1, "a": true}}',  # 1 == True, yet not the same value
}


@pytest.mark.parametrize("text", DUPLICATED_ARGUMENT.values(), ids=DUPLICATED_ARGUMENT.keys())
def test_an_argument_given_twice_with_different_values_is_refused_naming_it(text: str) -> None:
    error = refused(text, "duplicate_key")
    assert 'key "a" twice' in error.message


@pytest.mark.parametrize(
    "text",
    [
        '{"thought": "t", "action": "search", "action": "FINISH", "action_input": "x"}',
        'Sure.\n{"action": "search", "action_input": {"q": "x"}, "action": "FINISH"}',
        "{action: 'search', action: 'FINISH', action_input: 'x'}",
        '<tool_call>{"name": "f", "arguments": {}, "name": "g"}</tool_call>',
    ],
    ids=["object", "after_prose", "unquoted_keys", "tool_call"],
)
def test_a_decision_key_given_twice_with_different_values_is_refused_naming_it(text: str) -> None:
    key = "name" if "tool_call" in text else "action"
    assert f'key "{key}" twice' in refused(text, "duplicate_key").message


@pytest.mark.parametrize(
    "text",
    [
        '[{"action": "f", "action_input": {}}, {"action": "g", "action_input": {"a": 1, "a": 2}}]',
        '[{"action": "f", "action_input": {}}, {"action": "g", "action": "f", "action_input": {}}]',
        '{"actions": [{"action": "f", "action_input": {"a": 1, "a": 2}}]}',
        '{"action": "f", "action_input": {}}\n{"action": "g", "action_input": {"a": 1, "a": 2}}',
        '```json\n[{"action": "f", "action_input": {"a": 1, "a": 2}}]\n```',
    ],
    ids=["list_argument", "list_action", "actions_envelope", "objects_in_a_row", "fenced_list"],
)
def test_the_list_form_refuses_a_key_given_twice_in_any_item(text: str) -> None:
    """Read as one action, the items after the first would be dropped without a word: the reply is refused."""
    assert "twice" in refused(text, "duplicate_key", multi=True).message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"thought": "t", "action": "f", "action": "f", "action_input": {"a": 1}}',
         AgentAction(thought="t", action="f", action_input={"a": 1})),
        ('{"action": "f", "action_input": {"a": {"b": [1, "x"]}, "a": {"b": [1, "x"]}}}',
         AgentAction(action="f", action_input={"a": {"b": [1, "x"]}})),
        ("{'action': 'f', 'action_input': {'a': 1, 'a': 1,},}", AgentAction(action="f", action_input={"a": 1})),
        ('{"action": "f", "action_input": {"a": 1 "a": 1}}', AgentAction(action="f", action_input={"a": 1})),
    ],
    ids=["action", "nested_value", "relaxed", "repaired"],
)
def test_a_key_repeated_with_the_same_value_is_accepted(text: str, expected: AgentAction) -> None:
    assert parse_response(text, TOOLS) == expected
    assert parse_actions(text, TOOLS) == [expected]


def test_a_data_object_with_a_repeated_key_before_the_action_is_not_the_decision() -> None:
    """Objects that are not an action are skipped, as before; only the action they precede is taken."""
    data = 'The user wrote {"city": "Paris", "city": "Rome"}.'
    text = data + '\n{"action": "search", "action_input": {"q": "x"}}'
    assert parse_response(text, TOOLS) == AgentAction(thought=data, action="search", action_input={"q": "x"})


# -- nesting --------------------------------------------------------------------------------------------

def deep_forms(nested: str) -> dict[str, str]:
    return {
        "object": f'{{"action": "f", "action_input": {nested}}}',
        "argument": f'{{"thought": "t", "action": "f", "action_input": {{"a": {nested}}}}}',
        "prose_before": f'I will call f.\n{{"action": "f", "action_input": {{"a": {nested}}}}}',
        "string_input": json.dumps({"action": "f", "action_input": f'{{"a": {nested}}}'}),
        "text_format": f'Thought: t\nAction: f\nAction Input: {{"a": {nested}}}',
        "inline": f'Action: f({{"a": {nested}}})',
        "tool_call": f'<tool_call>{{"name": "f", "arguments": {{"a": {nested}}}}}</tool_call>',
        "xml_parameter": f'<invoke name="f"><parameter name="a">{nested}</parameter></invoke>',
        "field_markers": f'[[ ## next_tool_name ## ]]\nf\n[[ ## next_tool_args ## ]]\n{{"a": {nested}}}',
    }


DEEP = {f"{shape}-{depth}-{form}": text
        for shape, make in (("lists", lists), ("objects", objects)) for depth in (2_000, 100_000)
        for form, text in deep_forms(make(depth)).items()}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_json_nested_beyond_what_is_read_is_refused_as_too_deep(text: str) -> None:
    """Before: "no action" / "you described the action in words" / "cut off", or a string argument."""
    assert f"nested deeper than {MAX_NESTING} levels" in refused(text, "too_deep").message


@pytest.mark.parametrize("depth", [2_000, 100_000])
def test_the_list_form_refuses_a_deep_item_as_too_deep(depth: int) -> None:
    """Before: the deep second call was dropped and the first one run alone."""
    text = f'[{{"action": "f", "action_input": {{}}}}, {{"action": "g", "action_input": {{"a": {lists(depth)}}}}}]'
    assert f"nested deeper than {MAX_NESTING} levels" in refused(text, "too_deep", multi=True).message


def test_arguments_nested_below_the_bound_parse_as_before() -> None:
    for make in (lists, objects):
        arguments = {"a": json.loads(make(MAX_NESTING - 1))}
        text = json.dumps({"thought": "t", "action": "f", "action_input": arguments})
        expected = AgentAction(thought="t", action="f", action_input=arguments)
        assert parse_response(text, TOOLS) == expected
        assert parse_actions(f"[{text}, {text}]", TOOLS) == [expected, expected]


# -- long numbers ---------------------------------------------------------------------------------------

LONG_NUMBER = {
    "object": f'{{"action": "f", "action_input": {{"n": {TOO_LONG}}}}}',
    "prose_before": f'Calling f now: {{"action": "f", "action_input": {{"n": {TOO_LONG}}}}}',
    "single_quotes": f"{{'action': 'f', 'action_input': {{'n': {TOO_LONG}}}}}",
    "nested": f'{{"action": "f", "action_input": {{"a": [{{"n": -{TOO_LONG}}}]}}}}',
    "string_input": json.dumps({"action": "f", "action_input": f'{{"n": {TOO_LONG}}}'}),
    "text_format": f'Action: f\nAction Input: {{"n": {TOO_LONG}}}',
    "inline": f'Action: f({{"n": {TOO_LONG}}})',  # before: run with no arguments at all
    "tool_call": f'<tool_call>{{"name": "f", "arguments": {{"n": {TOO_LONG}}}}}</tool_call>',
    "xml_parameter": f'<invoke name="f"><parameter name="n">{TOO_LONG}</parameter></invoke>',
    "list_form": f'[{{"action": "f", "action_input": {{"n": {TOO_LONG}}}}}]',
}


@pytest.mark.parametrize("text", LONG_NUMBER.values(), ids=LONG_NUMBER.keys())
def test_an_integer_longer_than_python_reads_is_refused_saying_so(text: str) -> None:
    assert f"a number with more than {DIGITS} digits" in refused(text, "too_many_digits").message
    assert f"a number with more than {DIGITS} digits" in refused(text, "too_many_digits", multi=True).message


def test_the_list_form_refuses_a_long_number_in_a_later_item() -> None:
    text = f'[{{"action": "f", "action_input": {{}}}}, {{"action": "g", "action_input": {{"n": {TOO_LONG}}}}}]'
    refused(text, "too_many_digits", multi=True)


@pytest.mark.parametrize("number", [LONGEST, "-" + LONGEST, "12345678901234567890", "1" + "0" * 5000 + ".5"])
def test_long_but_readable_numbers_parse_as_before(number: str) -> None:
    text = f'{{"thought": "t", "action": "f", "action_input": {{"n": {number}}}}}'
    expected = AgentAction(thought="t", action="f", action_input={"n": json.loads(number)})
    assert parse_response(text, TOOLS) == expected
    assert parse_actions(text, TOOLS) == [expected]


# -- correct replies pass through unchanged -------------------------------------------------------------

CORRECT: dict[str, tuple[str, AgentAction]] = {
    "object": ('{"thought": "t", "action": "search", "action_input": {"q": "x", "limit": 3}}',
               AgentAction(thought="t", action="search", action_input={"q": "x", "limit": 3})),
    "same_key_in_sibling_objects": (
        '{"action": "f", "action_input": {"rows": [{"id": 1}, {"id": 2}], "meta": {"id": 3}}}',
        AgentAction(action="f", action_input={"rows": [{"id": 1}, {"id": 2}], "meta": {"id": 3}})),
    "key_also_nested": ('{"action": "f", "action_input": {"action": {"action": "x"}}}',
                        AgentAction(action="f", action_input={"action": {"action": "x"}})),
    "finish": ('{"thought": "done", "action": "FINISH", "action_input": "42"}',
               AgentAction(thought="done", action=FINISH, action_input="42")),
    "relaxed": ("{'action': 'f', 'action_input': {'a': True, 'b': None,},}",
                AgentAction(action="f", action_input={"a": True, "b": None})),
    "repaired": ('{"action": "f", "action_input": {"a": 1 "b": 2}}',
                 AgentAction(action="f", action_input={"a": 1, "b": 2})),
    "text_format": ('Thought: go\nAction: f\nAction Input: {"a": 1, "b": {"a": 2}}',
                    AgentAction(thought="go", action="f", action_input={"a": 1, "b": {"a": 2}})),
    "xml": ('<invoke name="f"><parameter name="a">{"b": 1}</parameter><parameter name="c">9</parameter></invoke>',
            AgentAction(action="f", action_input={"a": {"b": 1}, "c": 9})),
}


@pytest.mark.parametrize(("text", "expected"), CORRECT.values(), ids=CORRECT.keys())
def test_a_correct_reply_passes_through_unchanged(text: str, expected: AgentAction) -> None:
    assert parse_response(text, TOOLS) == expected
    assert parse_actions(text, TOOLS) == [expected]


def test_a_correct_list_of_calls_passes_through_unchanged() -> None:
    calls = [{"thought": "a", "action": "f", "action_input": {"x": 1}}, {"action": "g", "action_input": {"x": 2}}]
    assert parse_actions(json.dumps(calls), TOOLS) == [AgentAction(thought="a", action="f", action_input={"x": 1}),
                                                      AgentAction(action="g", action_input={"x": 2})]


# -- what the model is told -----------------------------------------------------------------------------

def echo(text: str) -> str:
    """Echo the text."""
    return text


@pytest.mark.parametrize(("lang", "reply", "told"), [
    ("en", '{"thought": "t", "action": "echo", "action": "FINISH", "action_input": {"text": "x"}}',
     'gives the key "action" twice'),
    ("ru", '{"thought": "t", "action": "echo", "action": "FINISH", "action_input": {"text": "x"}}',
     'ключ "action" повторяется'),
    ("en", '{"action": "echo", "action_input": {"text": ' + lists(100_000) + "}}", f"deeper than {MAX_NESTING} levels"),
    ("ru", '{"action": "echo", "action_input": {"text": ' + lists(100_000) + "}}", f"глубже {MAX_NESTING} уровней"),
    ("en", '{"action": "echo", "action_input": {"text": ' + TOO_LONG + "}}", f"more than {DIGITS} digits"),
    ("ru", '{"action": "echo", "action_input": {"text": ' + TOO_LONG + "}}", f"длиннее {DIGITS} цифр"),
], ids=["duplicate_key-en", "duplicate_key-ru", "too_deep-en", "too_deep-ru", "too_many_digits-en",
        "too_many_digits-ru"])
def test_the_model_is_told_what_is_wrong(lang: str, reply: str, told: str) -> None:
    """The observation names the repeated key or the bound, in the prompt set's language (the words come from its
    ``parse_error`` template, never from the parser's English message); before, it said "no action was found"."""
    llm = ScriptedChatModel([reply, json.dumps({"thought": "t", "action": "FINISH", "action_input": "done"})])
    result = ReactAgent(llm, [StructuredTool.from_function(echo)], prompts=lang).run("task")
    assert result.status == "finished" and result.output == "done"
    assert result.steps[0].is_error and told in result.steps[0].observation
    assert told in llm.calls[1].text
    if lang == "ru":
        assert "Your reply" not in result.steps[0].observation and "The JSON" not in result.steps[0].observation


def test_the_error_carries_the_key_and_the_limit_for_templates() -> None:
    """``OutputParseError.key`` and ``.limit`` are what a custom ``parse_error`` template can show."""
    with pytest.raises(OutputParseError) as duplicate:
        parse_response('{"action": "echo", "action_input": {"a": 1, "a": 2}}', TOOLS)
    assert (duplicate.value.reason, duplicate.value.key, duplicate.value.limit) == ("duplicate_key", "a", None)
    with pytest.raises(OutputParseError) as deep:
        parse_response('{"action": "echo", "action_input": {"text": ' + lists(2_000) + "}}", TOOLS)
    assert (deep.value.reason, deep.value.key, deep.value.limit) == ("too_deep", None, MAX_NESTING)
    with pytest.raises(OutputParseError) as digits:
        parse_response('{"action": "echo", "action_input": {"n": ' + TOO_LONG + "}}", TOOLS)
    assert (digits.value.reason, digits.value.key, digits.value.limit) == ("too_many_digits", None, DIGITS)
