"""Properties of the parser: it never crashes, round-trips real actions, and stays fast on hostile input."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent._errors import OutputParseError
from react_agent._parser import parse_response
from react_agent._types import FINISH, AgentAction

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FRAGMENTS = [
    "{", "}", "[", "]", '"', "'", ":", ",", "\\", "\n", " ", "```", "```json", "True", "None", "null", "//",
    "<think>", "</think>", "Thought:", "Action:", "Action Input:", "Observation:", "Final Answer:", "Answer:",
    '"action"', '"action_input"', '"name"', '"arguments"', "FINISH", "search", "Иван", "\\u0418", "x", "1",
]  # fmt: skip
NOT_NAMES = {"finish", "final_answer", "finalanswer", "none", "null", "na", "nothing"}

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,24}", fullmatch=True).filter(lambda n: n.lower() not in NOT_NAMES)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
arguments = st.dictionaries(st.text(min_size=1, max_size=12), json_values, max_size=5)
prose = st.text(alphabet="abcdefghij XYZ.!?-Ёжик", max_size=40)
wrappers = st.sampled_from(["{}", "```\n{}\n```", "```json\n{}\n```", "````json\n{}\n````", "``` {} ```"])


def parse_or_refuse(text: str, **kwargs: Any) -> AgentAction | OutputParseError:
    try:
        return parse_response(text, **kwargs)
    except OutputParseError as error:
        return error


@SETTINGS
@given(st.text(), st.booleans())
def test_any_text_gives_an_action_or_a_refusal(text: str, allow_plain: bool) -> None:
    """Any text yields an AgentAction or an OutputParseError, never another exception."""
    result = parse_or_refuse(text, allow_plain_answer=allow_plain)
    assert isinstance(result, (AgentAction, OutputParseError))


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join), st.none() | st.just(("search",)))
def test_protocol_soup_gives_an_action_or_a_refusal(text: str, tool_names: tuple[str, ...] | None) -> None:
    """Random mixtures of braces, quotes and protocol markers never raise anything else."""
    result = parse_or_refuse(text, tool_names=tool_names)
    assert isinstance(result, (AgentAction, OutputParseError))
    if isinstance(result, AgentAction):
        assert result.action and (result.action != FINISH or isinstance(result.action_input, str))


@SETTINGS
@given(names, arguments, st.text(max_size=30), prose, prose, wrappers, st.booleans())
def test_json_action_round_trips(
    name: str, args: dict[str, Any], thought: str, before: str, after: str, wrapper: str, ascii_only: bool
) -> None:
    """A JSON action with any name, arguments and thought survives prose and fences around it."""
    blob = json.dumps({"thought": thought, "action": name, "action_input": args}, ensure_ascii=ascii_only)
    text = f"{before}\n{wrapper.replace('{}', blob)}\n{after}"
    assert parse_response(text) == AgentAction(thought=thought, action=name, action_input=args)


@SETTINGS
@given(names, arguments, st.sampled_from(["\nObservation: ok", '\n{"action": "FINISH", "action_input": "x"}', ""]))
def test_text_format_action_round_trips(name: str, args: dict[str, Any], continuation: str) -> None:
    """The classic Action / Action Input format round-trips JSON arguments; continuations are dropped."""
    text = f"Thought: go\nAction: {name}\nAction Input: {json.dumps(args, ensure_ascii=False)}{continuation}"
    assert parse_response(text) == AgentAction(thought="go", action=name, action_input=args)


@SETTINGS
@given(st.text(), st.sampled_from(["FINISH", "finish", "Final Answer", "final_answer"]))
def test_finish_answer_round_trips(answer: str, name: str) -> None:
    """A FINISH answer string comes back unchanged."""
    text = json.dumps({"thought": "", "action": name, "action_input": answer}, ensure_ascii=False)
    assert parse_response(text) == AgentAction(action=FINISH, action_input=answer)


@SETTINGS
@given(names, arguments)
def test_truncated_action_is_always_refused(name: str, args: dict[str, Any]) -> None:
    """Any proper prefix of an action object that cuts into its body is refused, never repaired."""
    blob = json.dumps({"action": name, "action_input": args or {"k": "v"}})
    for cut in range(blob.index('"action"') + 1, len(blob) - 1, max(1, len(blob) // 7)):
        result = parse_or_refuse(blob[:cut])
        assert isinstance(result, OutputParseError), blob[:cut]


N = 100_000
ADVERSARIAL: dict[str, Callable[[], str]] = {
    "open_braces": lambda: "{" * N,
    "close_braces": lambda: "}" * N,
    "double_quotes": lambda: '"' * N,
    "single_quotes": lambda: "'" * N,
    "backslashes": lambda: "\\" * N,
    "nested_brackets": lambda: "[" * (N // 2) + "]" * (N // 2),
    "nested_objects": lambda: "{" * (N // 2) + "}" * (N // 2),
    "open_keys": lambda: '{"a":' * (N // 5),
    "empty_objects": lambda: "{}" * (N // 2),
    "small_objects": lambda: '{"a": 1}' * (N // 8),
    "bad_objects": lambda: "{'a': 'b' 'c'}" * (N // 14),
    "action_repeated": lambda: "Action:" * (N // 7),
    "action_lines": lambda: "Action: x\n" * (N // 10),
    "action_input_objects": lambda: "Action: x\nAction Input: " + "{}" * (N // 2),
    "think_opened": lambda: "<think>" * (N // 7),
    "think_closed": lambda: "</think>" * (N // 8),
    "markers": lambda: "Observation:\nThought:\nFinal Answer:" * (N // 34),
    "whitespace_run": lambda: "Action: x\n" + " " * N,
    "big_invalid_object": lambda: "{" + "'k': 'v', " * (N // 11) + "}",
    "unclosed_action": lambda: '{"action": "x", "action_input": "' + "a" * N,
    "prose": lambda: "I will call the tool " * (N // 21),
    "parentheses": lambda: "Action: " + "(" * N + "\nAction Input: x",
}


@pytest.mark.parametrize("make", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_100kb_is_fast(make: Callable[[], str]) -> None:
    """A 100 KB hostile input is parsed or refused in under 100 ms (best of three runs)."""
    text = make()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        assert isinstance(parse_or_refuse(text, tool_names=("x", "search")), (AgentAction, OutputParseError))
        best = min(best, time.perf_counter() - start)
    assert best < 0.1, f"{best * 1000:.1f} ms"
