"""react_agent's parser: the public corpus first, then one focused test per point of the policy."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from parser_corpus import CASES, Case

from react_agent import FINISH, AgentAction, parse_response
from react_agent.errors import OutputParseError

REASONS = {"empty", "no_action", "truncated", "missing_action", "invalid_action", "invalid_input", "prose"}


def refusal(text: str, tool_names: tuple[str, ...] | None = None, **kwargs: Any) -> OutputParseError:
    with pytest.raises(OutputParseError) as info:
        parse_response(text, tool_names, **kwargs)
    assert info.value.reason in REASONS
    assert info.value.text == text
    return info.value


# -- the corpus ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus(case: Case) -> None:
    """Each public fixture or issue reply parses to its expected action, or is refused."""
    if case.expected is None:
        error = refusal(case.text, case.tool_names)
        if case.reason is not None:
            assert error.reason == case.reason
        return
    action = parse_response(case.text, case.tool_names)
    assert action.action == case.expected["action"]
    assert action.action_input == case.expected["action_input"]
    if "thought" in case.expected:
        assert action.thought == case.expected["thought"]


def test_corpus_is_large_and_cited() -> None:
    """The corpus holds at least 80 uniquely named cases, each with a source."""
    assert len(CASES) >= 80
    assert len({c.id for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.source.startswith(("https://", "react_agent: ")), case.id
        assert case.reason is None or case.reason in REASONS
        if case.expected is not None:
            assert {"action", "action_input"} <= case.expected.keys()


# -- extraction ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fence", ["```", "```json", "````", "````json", "``` json", "```JSON"])
def test_fences_of_any_length(fence: str) -> None:
    """An action inside a code fence of any length, with or without a language tag, is found."""
    text = f'Here you go:\n{fence}\n{{"action": "search", "action_input": {{"q": "x"}}}}\n{fence[:3]}\nBye.'
    assert parse_response(text) == AgentAction(thought="Here you go:", action="search", action_input={"q": "x"})


def test_first_object_that_looks_like_an_action_wins() -> None:
    """Data objects before the action are skipped; of several actions only the first is taken."""
    text = (
        'The user gave {"username": "Ivan"}.\n{"action": "first", "action_input": {}}\n'
        '{"action": "second", "action_input": {}}'
    )
    assert parse_response(text).action == "first"


def test_never_first_brace_to_last_brace() -> None:
    """Two objects are never glued together into one from the first '{' to the last '}'."""
    text = '{"action": "a", "action_input": {"x": 1}} and then {"y": 2}'
    assert parse_response(text).action_input == {"x": 1}


def test_braces_and_quotes_inside_strings_do_not_confuse_the_scan() -> None:
    """Braces, escaped quotes and apostrophes inside strings do not end the object early."""
    text = '{"action": "echo", "action_input": {"text": "a } b { \\" c \' d"}}'
    assert parse_response(text).action_input == {"text": "a } b { \" c ' d"}


def test_stray_brace_in_prose_before_the_action() -> None:
    """An unbalanced '{' in the prose before the action does not hide the action."""
    text = 'Set notation {1, 2 is wrong. {"action": "search", "action_input": "sets"}'
    assert parse_response(text).action == "search"


def test_apostrophes_in_prose_are_not_strings() -> None:
    """An apostrophe in the surrounding prose does not open a string."""
    text = 'I\'ll search now: {"action": "search", "action_input": "it\'s"} That\'s it.'
    assert parse_response(text).action_input == "it's"


# -- fabricated continuations ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "continuation",
    [
        "\nObservation: the user was registered",
        '\nThought: done\n{"action": "FINISH", "action_input": "Registered"}',
        "\nAction: delete_user\nAction Input: Ivan",
        "\nFinal Answer: Ivan is registered",
        "\nНаблюдение: пользователь зарегистрирован\nОтвет: готово",
    ],
)
def test_fabricated_continuation_is_cut_off(continuation: str) -> None:
    """Whatever the model writes after its first action is never executed."""
    text = '{"action": "register_user", "action_input": {"username": "Ivan"}}' + continuation
    assert parse_response(text) == AgentAction(action="register_user", action_input={"username": "Ivan"})


def test_text_format_continuation_is_cut_off() -> None:
    """In the text format the Action Input ends at the fabricated Observation."""
    text = "Thought: t\nAction: search\nAction Input: weather\nObservation: sunny\nFinal Answer: sunny"
    assert parse_response(text).action_input == "weather"


# -- repair and truncation ------------------------------------------------------------------------------


def test_json_repair_fixes_python_literals_and_quotes() -> None:
    """Single quotes, True/None/False, trailing commas and comments are repaired."""
    text = "{'action': 'set', 'action_input': {'a': True, 'b': None, 'c': False,}, /* note */}"
    assert parse_response(text).action_input == {"a": True, "b": None, "c": False}


def test_unescaped_newline_inside_string() -> None:
    """A raw newline inside a JSON string is kept, not an error."""
    text = '{"action": "note", "action_input": {"text": "line 1\nline 2"}}'
    assert parse_response(text).action_input == {"text": "line 1\nline 2"}


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "register_user", "action_input": {"username": "Iv',
        '{"action": "register_user", "action_input": {"username": "Ivan"}',
        '```json\n{"thought": "registering the user and',
        '{"name": "register_user", "arguments": {"username": "Ivan", "email": ',
        "Action: register_user\nAction Input: {'username': 'Iv",
        "{action: register_user, action_input: {username: Iv",
        '{"action": "register_user", "action_input": "{\\"username\\": \\"Iv"}',
    ],
)
def test_cut_off_output_is_refused_not_repaired(text: str) -> None:
    """An action whose braces never balance is refused as truncated, never completed by guessing."""
    assert refusal(text).reason == "truncated"


def test_complete_action_before_a_cut_off_one() -> None:
    """A complete first action is taken even if the text after it was cut off."""
    text = '{"action": "a", "action_input": {}}\n{"action": "b", "action_input": {"x": "cut'
    assert parse_response(text).action == "a"


# -- key synonyms and envelopes ---------------------------------------------------------------------------


@pytest.mark.parametrize("name_key", ["action", "tool", "tool_name", "Action", "TOOL"])
@pytest.mark.parametrize("input_key", ["action_input", "tool_input", "args", "arguments", "parameters", "input"])
def test_key_synonyms(name_key: str, input_key: str) -> None:
    """Every name key and every input key synonym is accepted."""
    text = json.dumps({name_key: "search", input_key: {"q": "x"}})
    assert parse_response(text) == AgentAction(action="search", action_input={"q": "x"})


@pytest.mark.parametrize("thought_key", ["thought", "though", "reasoning", "thinking"])
def test_thought_synonyms(thought_key: str) -> None:
    """The thought is read from any of its synonyms, including the seed article's 'though'."""
    text = json.dumps({thought_key: "why", "action": "search", "action_input": {}})
    assert parse_response(text).thought == "why"


def test_name_and_function_keys_need_an_input_or_a_known_tool() -> None:
    """A bare {"name": ...} is data unless it also has arguments or names a known tool."""
    assert refusal('{"name": "Ivan", "email": "ivan@test.com"}').reason == "missing_action"
    assert parse_response('{"function": "ping"}', ["ping"]) == AgentAction(action="ping")
    assert parse_response('{"function": "ping", "args": {}}').action == "ping"


@pytest.mark.parametrize(
    "payload",
    [
        {"action": "call_tool", "name": "register_user", "arguments": {"u": 1}},
        {"action": "tool", "tool_name": "register_user", "tool_input": {"u": 1}},
        {"action": "use_tool", "tool": "register_user", "args": {"u": 1}},
        {"function": {"name": "register_user", "arguments": '{"u": 1}'}},
        {"id": "c1", "type": "function", "function": {"name": "register_user", "arguments": {"u": 1}}},
        {"tool_calls": [{"function": {"name": "register_user", "arguments": {"u": 1}}}]},
        {"thought": "t", "action": {"name": "register_user", "input": {"u": 1}}},
    ],
)
def test_envelopes(payload: dict[str, Any]) -> None:
    """Envelopes and OpenAI-style calls resolve to the real tool name and its arguments."""
    assert parse_response(json.dumps(payload)) == AgentAction(
        thought=payload.get("thought", ""), action="register_user", action_input={"u": 1}
    )


def test_tool_names_disambiguate_an_envelope() -> None:
    """When 'action' is not a known tool but another name key is, the known tool is taken."""
    text = '{"action": "weather", "name": "get_weather", "arguments": {"city": "Paris"}}'
    assert parse_response(text, ["get_weather"]).action == "get_weather"
    assert parse_response(text).action == "weather"  # without tool names "action" wins


def test_a_known_tool_named_like_a_generic_word() -> None:
    """A tool really called 'run' is not mistaken for a generic envelope word."""
    text = '{"action": "run", "name": "job-7", "action_input": {}}'
    assert parse_response(text, ["run"]).action == "run"


def test_unknown_tool_names_are_not_refused() -> None:
    """The parser passes unknown tool names on; the agent loop reports them."""
    assert parse_response('{"action": "no_such_tool", "action_input": {}}', ["search"]).action == "no_such_tool"


def test_flat_arguments_beside_the_name() -> None:
    """Arguments written beside the name (no input key) become the input; protocol keys do not."""
    text = '{"thought": "t", "action": "search", "query": "weather", "limit": 3, "observation": "fake"}'
    assert parse_response(text) == AgentAction(
        thought="t", action="search", action_input={"query": "weather", "limit": 3}
    )


# -- FINISH ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["finish", "FINISH", "Finish", "final answer", "Final Answer", "final_answer", "Final-Answer"]
)
def test_finish_synonyms(name: str) -> None:
    """Every FINISH synonym, in any case, becomes FINISH."""
    assert parse_response(json.dumps({"action": name, "action_input": "42"})) == AgentAction(
        action=FINISH, action_input="42"
    )


@pytest.mark.parametrize(
    ("value", "answer"),
    [
        ("Paris", "Paris"),
        (None, ""),
        ({"answer": "Paris"}, "Paris"),
        ({"output": "Paris", "confidence": 1}, "Paris"),
        ({"result": 42}, "42"),
        ({"city": "Paris"}, "Paris"),
        ({"city": "Paris", "country": "France"}, '{"city": "Paris", "country": "France"}'),
        (["a", "b"], '["a", "b"]'),
        (42, "42"),
        ({"answer": {"city": "Париж"}}, '{"city": "Париж"}'),
    ],
)
def test_finish_input_becomes_text(value: Any, answer: str) -> None:
    """The FINISH input always becomes the answer text, by the documented rules."""
    text = json.dumps({"action": "FINISH", "action_input": value}, ensure_ascii=False)
    assert parse_response(text).action_input == answer


def test_text_final_answer() -> None:
    """'Final Answer:' text is a FINISH whose answer runs to the next marker line."""
    text = "Thought: done\nFinal Answer: line one\nline two\nObservation: invented"
    assert parse_response(text) == AgentAction(thought="done", action=FINISH, action_input="line one\nline two")


def test_text_action_final_answer_with_input() -> None:
    """'Action: Final Answer' with an Action Input is a FINISH too."""
    assert parse_response("Action: Final Answer\nAction Input: 42").action_input == "42"


def test_empty_text_final_answer_is_refused() -> None:
    """An empty 'Final Answer:' is refused rather than ending the run with nothing."""
    assert refusal("Thought: done\nFinal Answer:").reason == "invalid_input"


# -- tool input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"a": 1}', {"a": 1}),
        ("{'a': 1}", {"a": 1}),
        (None, {}),
        ("", {}),
        ("  ", {}),
        ("plain words", "plain words"),
        ("{not json}", "{not json}"),
    ],
)
def test_tool_input_forms(value: Any, expected: Any) -> None:
    """Tool input: objects and JSON-object strings become dicts, null/empty {}, other strings stay."""
    assert parse_response(json.dumps({"action": "t", "action_input": value})).action_input == expected


@pytest.mark.parametrize("value", [[1, 2], 3, 2.5, True])
def test_tool_input_of_wrong_type_is_refused(value: Any) -> None:
    """A list, number or boolean cannot be mapped onto arguments: refused as invalid_input."""
    assert refusal(json.dumps({"action": "t", "action_input": value})).reason == "invalid_input"


def test_text_format_action_input_forms() -> None:
    """Text format: JSON input, bare string, quoted string and multi-line input."""
    assert parse_response('Action: t\nAction Input: {"a": 1}').action_input == {"a": 1}
    assert parse_response("Action: t\nAction Input: hello world").action_input == "hello world"
    assert parse_response('Action: t\nAction Input: "hello"').action_input == "hello"
    assert parse_response("Action: t\nAction Input: a\nb\n\nc").action_input == "a\nb\n\nc"
    assert parse_response("Action: t\nAction Input:").action_input == {}


# -- think blocks and unicode ---------------------------------------------------------------------------


def test_think_blocks_are_skipped() -> None:
    """<think> and <thinking> blocks, in any case, are dropped before parsing."""
    text = '<THINK>{"action": "evil", "action_input": {}}</THINK>\n<thinking>x</thinking>Final Answer: ok'
    assert parse_response(text) == AgentAction(action=FINISH, action_input="ok")


def test_unclosed_think_is_refused() -> None:
    """An unclosed <think> with nothing before it is refused; its content is never executed."""
    assert refusal('<think>{"action": "evil", "action_input": {}}').reason == "truncated"


def test_think_only_is_refused() -> None:
    """A reply holding only a closed <think> block has no action."""
    assert refusal("<think>hmm</think>\n").reason == "no_action"


def test_cyrillic_and_escaped_unicode() -> None:
    """Cyrillic is kept intact and \\u escapes are decoded."""
    text = (
        '{"thought": "Иван", "action": "register_user", "action_input": {"username": "\\u0418\\u0432\\u0430\\u043d"}}'
    )
    assert parse_response(text) == AgentAction(
        thought="Иван", action="register_user", action_input={"username": "Иван"}
    )


# -- refusals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n\t  \n"])
def test_empty(text: str) -> None:
    """Empty or whitespace-only text is refused as empty."""
    assert refusal(text).reason == "empty"


@pytest.mark.parametrize(
    "text",
    ['{"action_input": {"a": 1}}', '{"action": ""}', '{"action": null, "action_input": {}}', '{"answer": "42"}'],
)
def test_missing_action(text: str) -> None:
    """A JSON object without an action name is refused as missing_action."""
    assert refusal(text).reason == "missing_action"


@pytest.mark.parametrize(
    "text",
    [
        '{"action": ["search"]}',
        '{"action": 5, "action_input": {}}',
        '{"action": "None", "action_input": {}}',
        "Action: None\nAction Input: None",
        "Action: N/A\nAction Input: x",
        "Action: search Final Answer: 4\nAction Input: x",
    ],
)
def test_invalid_action(text: str) -> None:
    """An action that is not one tool name (None, a list, a number, an action mixed with an answer)."""
    assert refusal(text).reason == "invalid_action"


def test_prose_about_a_tool_is_refused() -> None:
    """Prose that talks about calling a tool is refused as prose, with or without tool names."""
    assert refusal("I will call register_user with username Ivan", ("register_user",)).reason == "prose"
    assert refusal("I will use the search tool to find it.").reason == "prose"
    assert refusal("Я вызову инструмент регистрации.").reason == "prose"


def test_prose_without_action_is_no_action() -> None:
    """Prose that neither acts nor talks about acting is refused as no_action by default."""
    assert refusal("The capital of France is Paris.").reason == "no_action"


def test_plain_answer_when_allowed() -> None:
    """With allow_plain_answer=True plain prose becomes the FINISH answer, stripped."""
    action = parse_response("  The capital of France is Paris.\n", ["search"], allow_plain_answer=True)
    assert action == AgentAction(action=FINISH, action_input="The capital of France is Paris.")


def test_plain_answer_mentioning_a_tool_is_still_refused() -> None:
    """Even with allow_plain_answer=True, prose mentioning a tool name or a call is refused."""
    assert refusal("Let me check with search.", ("search",), allow_plain_answer=True).reason == "prose"
    assert refusal("I will call the registration tool now.", allow_plain_answer=True).reason == "prose"


def test_plain_answer_with_format_markers_is_refused() -> None:
    """With allow_plain_answer=True, a half-written protocol reply is still not an answer."""
    assert refusal("Thought: I should look this up.", allow_plain_answer=True).reason == "no_action"
    assert refusal('{"thought": "t"}', allow_plain_answer=True).reason == "missing_action"


def test_plain_answer_default_is_off() -> None:
    """allow_plain_answer defaults to False."""
    assert refusal("Paris.").reason == "no_action"


def test_messages_are_for_the_model() -> None:
    """Every refusal carries an English message meant for the model, without the raw text."""
    for text in ["", '{"action": ""}', '{"action": "x", "action_input": [1]}', '{"action": "x", "a', "hi"]:
        error = refusal(text + " " * 3)
        assert error.message and error.message[0].isupper() and error.message.isascii()
        assert str(error) == error.message


def test_no_raw_text_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """The parser logs nothing at INFO or above, so raw model text never reaches INFO logs."""
    with caplog.at_level(logging.INFO, logger="react_agent"):
        refusal("secret prose with no action")
        parse_response('{"action": "x", "action_input": {}}')
    assert not caplog.records


def test_result_is_frozen_agent_action() -> None:
    """The parser returns the frozen AgentAction model."""
    action = parse_response('{"action": "x", "action_input": {"a": 1}}')
    assert isinstance(action, AgentAction)
    assert action.model_config.get("frozen") is True


# -- wave 2: an answer label never turns an action into an answer ------------------------------------------

ACTION_JSON = '{"thought": "t", "action": "register_user", "action_input": {"username": "Ivan"}}'


@pytest.mark.parametrize(
    "label", ["Answer: ", "Final Answer: ", "Answer:\n", "Final Answer:\n\n", "**Final Answer:** ", "answer: "]
)
@pytest.mark.parametrize("wrap", ["{}", "```json\n{}\n```", "```\n{}\n```"])
def test_json_action_after_an_answer_label_is_that_action(label: str, wrap: str) -> None:
    """A JSON action after 'Answer:' / 'Final Answer:' is the action, not FINISH."""
    text = label + wrap.replace("{}", ACTION_JSON)
    expected = AgentAction(thought="t", action="register_user", action_input={"username": "Ivan"})
    assert parse_response(text, ["register_user"]) == expected
    assert parse_response(text) == expected  # without tool names too


@pytest.mark.parametrize("label", ["Answer: ", "Final Answer:\n", "Answer: **Action:** "])
def test_text_action_after_an_answer_label_is_that_action(label: str) -> None:
    """'Answer: Action: search' / 'Action Input: x' is the search, not an answer that reads 'Action: search'."""
    text = label + ("" if "Action" in label else "Action: ") + "search\nAction Input: weather"
    assert parse_response(text) == AgentAction(action="search", action_input="weather")


def test_cut_off_json_action_after_an_answer_label_is_refused() -> None:
    """A cut-off action after an answer label is neither an answer nor a call."""
    assert refusal('Answer: {"action": "register_user", "action_input": {"username": "Iv').reason == "truncated"


def test_answer_holding_an_action_later_is_refused() -> None:
    """An answer with an action object after its first words is ambiguous: refused, nothing executed."""
    assert refusal("Final Answer: Done.\n" + ACTION_JSON).reason == "invalid_action"


def test_json_data_after_an_answer_label_stays_the_answer() -> None:
    """A JSON object that is not an action is still a valid (structured) answer."""
    text = 'Final Answer: {"name": "Ivan", "email": "ivan@test.com"}'
    assert parse_response(text) == AgentAction(action=FINISH, action_input=text.removeprefix("Final Answer: "))


# -- wave 2: ReAct text variants -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'Thought\ngo\nAction\nsearch\nAction Input\n{"q": "x"}',
        'Thought: go\nAction: search\nInput: {"q": "x"}',
        'Thought: go\nAction: search ({"q": "x"})',
        'Thought: go\nAction: search({"q": "x"})',
        'Thought: go\nAction: search {"q": "x"}',
        'Thought: go\nAction:searchAction Input:{"q": "x"}',
        'Thought: go\nAction: search Action Input: {"q": "x"}',
        'Thought: go Action: search Action Input: {"q": "x"}',
        'Thought: goAction:search Action Input:{"q": "x"} Observation: found',
    ],
)
def test_react_text_variants(text: str) -> None:
    """Labels without colons, 'Input:', inline and glued arguments, a whole step on one line: one call."""
    assert parse_response(text, ["search"]) == AgentAction(thought="go", action="search", action_input={"q": "x"})


def test_inline_arguments_and_an_action_input_are_refused_when_both_given() -> None:
    """Arguments given twice (inline and after 'Action Input:') are ambiguous."""
    assert refusal('Action: search({"q": "x"})\nAction Input: {"q": "y"}').reason == "invalid_input"


def test_empty_parentheses_are_a_call_without_arguments() -> None:
    """'Action: get_time()' with nothing after it calls the tool with no arguments."""
    assert parse_response("Action: get_time()") == AgentAction(action="get_time", action_input={})


def test_quoted_example_loses_to_the_explicit_action() -> None:
    """A JSON example inside the thought, right before 'Action:', is not the call; the explicit action is."""
    text = 'Thought: like {"action": "delete_all", "action_input": {}} - no, search.\nAction: search\nAction Input: x'
    assert parse_response(text).action == "search"


@pytest.mark.parametrize("between", ["\nObservation: done\n", "\n```\n"])
def test_json_action_on_its_own_is_not_an_example(between: str) -> None:
    """A JSON action on its own line (or with an invented Observation after it) stays the first action."""
    text = f'Thought: t\n{{"action": "first", "action_input": {{}}}}{between}Action: second\nAction Input: x'
    assert parse_response(text).action == "first"


@pytest.mark.parametrize("name", ["None", "N/A", "I will answer directly", "none needed, answering now"])
def test_prose_action_then_final_answer_is_the_answer(name: str) -> None:
    """'Action:' with prose or None for a name, no input, then 'Final Answer:': the answer stands."""
    text = f"Thought: no tool needed\nAction: {name}\nFinal Answer: 42"
    assert parse_response(text, ["search"]) == AgentAction(thought="no tool needed", action=FINISH, action_input="42")


def test_tool_name_action_then_final_answer_is_refused() -> None:
    """A real tool name without input, then an answer, is ambiguous: refused."""
    assert refusal("Action: search\nFinal Answer: 42", ("search",)).reason == "invalid_input"


# -- wave 2: field markers and XML calls ---------------------------------------------------------------------


def test_field_markers() -> None:
    """DSPy markers: name, arguments and thought; 'finish' is FINISH; an answer field alone is FINISH."""
    marker = "[[ ## {} ## ]]\n"
    text = marker.format("next_thought") + "t\n" + marker.format("next_tool_name") + "search\n"
    assert parse_response(text + marker.format("next_tool_args") + '{"q": "x"}') == AgentAction(
        thought="t", action="search", action_input={"q": "x"}
    )
    assert parse_response(text.replace("search", "finish") + marker.format("next_tool_args") + "{}").action == FINISH
    assert parse_response(marker.format("answer") + "Paris") == AgentAction(action=FINISH, action_input="Paris")
    assert refusal(text).reason == "truncated"  # the reply stops before the arguments
    assert refusal(text + marker.format("completed")).reason == "invalid_input"
    assert refusal(marker.format("next_tool_args") + "{}").reason == "missing_action"


def test_xml_parameters_are_typed_by_json() -> None:
    """Parameter values that decode as JSON keep their type; anything else is text, surrounding newlines cut."""
    text = (
        '<invoke name="t"><parameter name="n">3</parameter><parameter name="f">1.5</parameter>'
        '<parameter name="b">false</parameter><parameter name="s">"quoted"</parameter>'
        '<parameter name="o">{"k": [1]}</parameter><parameter name="w">\nsome words\n</parameter></invoke>'
    )
    assert parse_response(text).action_input == {"n": 3, "f": 1.5, "b": False, "s": "quoted", "o": {"k": [1]},
                                                  "w": "some words"}  # fmt: skip


def test_xml_first_call_wins_and_broken_calls_are_refused() -> None:
    """Only the first <invoke> runs; an unclosed parameter or stray text inside the call is refused."""
    two = '<invoke name="a"></invoke><invoke name="b"></invoke>'
    assert parse_response(two) == AgentAction(action="a", action_input={})
    assert refusal('<invoke name="a"><parameter name="x">1').reason == "truncated"
    assert refusal('<invoke name="a"><parameter name="x">1</parameter>').reason == "truncated"
    assert refusal('<invoke name="a">x = 1</invoke>').reason == "invalid_input"
    assert refusal('<invoke name="None"></invoke>').reason == "invalid_action"
    assert refusal("<tool_call>search</tool_call>").reason == "invalid_input"
    assert refusal('<tool_call>{"arguments": {}}</tool_call>').reason == "missing_action"


@pytest.mark.parametrize(
    "payload",
    [
        {"tool_call": {"name": "register_user", "arguments": {"u": 1}}},
        {"function_call": {"name": "register_user", "arguments": {"u": 1}}},
        {"tools": {"tool": "register_user", "tool_input": {"u": 1}}},
        {"command": {"name": "register_user", "args": {"u": 1}}, "thoughts": {"text": "t", "plan": "p"}},
        {"tool_calls": {"name": "register_user", "arguments": {"u": 1}}},
    ],
)
def test_wrapper_objects(payload: dict[str, Any]) -> None:
    """Wrapper objects resolve to the call inside; AutoGPT's thoughts object gives its text."""
    action = parse_response(json.dumps(payload))
    assert (action.action, action.action_input) == ("register_user", {"u": 1})
    assert action.thought == ("t" if "thoughts" in payload else "")


# -- wave 2: completing output cut after a complete value, only with a validator ------------------------------

FULL = {"username": "Ivan", "email": "ivan@test.com"}


def exact(name: str, args: dict[str, Any]) -> bool:
    """A validator that accepts only the complete registration call."""
    return name == "register_user" and args == FULL


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "register_user", "action_input": {"username": "Ivan", "email": "ivan@test.com"',
        '{"action": "register_user", "action_input": {"username": "Ivan", "email": "ivan@test.com"}',
        '```json\n{"action": "register_user", "action_input": {"username": "Ivan", "email": "ivan@test.com"}\n',
        'Action: register_user\nAction Input: {"username": "Ivan", "email": "ivan@test.com"',
        'Action: register_user({"username": "Ivan", "email": "ivan@test.com"',
    ],
)
def test_cut_after_a_complete_value_is_completed_when_it_validates(text: str) -> None:
    """Only closers missing: completed when validate() accepts the call, refused without validate or when it rejects."""
    assert parse_response(text, validate=exact) == AgentAction(action="register_user", action_input=FULL)
    assert refusal(text).reason == "truncated"
    assert refusal(text, validate=lambda name, args: False).reason == "truncated"


def test_a_raising_validator_accepts_nothing() -> None:
    """A validator that raises is a rejection, never an escape."""

    def broken(name: str, args: dict[str, Any]) -> bool:
        raise RuntimeError("schema service down")

    assert refusal('{"action": "register_user", "action_input": {"username": "Ivan"', validate=broken).reason == (
        "truncated"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "register_user", "action_input": {"username": "Ivan", "email": "ivan@te',  # inside a string
        '{"action": "register_user", "action_input": {"username": "Ivan", "age": 4',  # a number may go on
        '{"action": "register_user", "action_input": {"username": "Ivan",',  # a key was coming
        '{"action": "register_user", "action_input": {"username": "Ivan", "email"',  # a key without value
        '{"action": "register_user", "action_input": {"username": "Ivan", "email":',  # a value was coming
        '{"action": "register_user", "action_input": {"username": "Ivan", "ok": tru',  # a cut literal
        "{'action': 'register_user', 'action_input': {'username': 'Ivan'",  # not strict JSON
        '{"action": "FINISH", "action_input": "The user is registered"',  # an answer is never completed
    ],
)
def test_cut_inside_or_before_a_value_stays_refused(text: str) -> None:
    """Even with a validator that accepts anything, a cut inside or before a value is never completed."""
    assert refusal(text, validate=lambda name, args: True).reason == "truncated"


def test_validate_is_not_called_for_complete_calls() -> None:
    """validate() is consulted only to complete a cut-off call, never for complete ones."""
    calls: list[str] = []

    def spy(name: str, args: dict[str, Any]) -> bool:
        calls.append(name)
        return True

    parse_response('{"action": "register_user", "action_input": {"username": "Ivan"}}', validate=spy)
    parse_response("Action: search\nAction Input: x", validate=spy)
    assert calls == []
