"""Every parser pattern family is linear on hostile input: a label followed by a run of blanks, or one
fragment repeated. Each family is timed at 10 KB and 100 KB; quadratic growth (x100) fails the bound."""

from __future__ import annotations

import contextlib
import time

import pytest

from react_agent.errors import OutputParseError
from react_agent.parsing import extract_json, parse_response

LABELS = ["Action", "Thought", "Final Answer", "Answer", "Action Input", "Observation", "Action: search",
          "Action: search Action Input: x", "**Action**", "1. Action", "search", "search(", "<tool_call>",
          "<invoke name='a'>", "<parameter name='a'>", "[[ ## action ## ]]", "Final Answer: Action", "{", '"']
BLANKS = [" ", "\t", " \t", "_", "*", "1", " 1 "]
REPEATS = ["Action: ", "Action:\n", "Thought: a\n", "Final Answer:\n", '{"action": "x"}\n', "{", "}", "[", '"',
           "'", "a(", "a {", "<tool_call>", "[[ ## a ## ]]", "\\", "Observation: ", "Action Input: {", " (", "*_"]
SIZES = (10_000, 100_000)


def _seconds(text: str) -> float:
    started = time.perf_counter()
    with contextlib.suppress(OutputParseError):
        parse_response(text, ["search"])
    with contextlib.suppress(ValueError):
        extract_json(text)
    return time.perf_counter() - started


def _grows_linearly(make: object) -> None:
    small = _seconds(make(SIZES[0]))  # type: ignore[operator]
    assert small < 2.0, f"{small:.2f} s at 10 KB"
    large = _seconds(make(SIZES[1]))  # type: ignore[operator]
    assert large < 2.0 and large < 30 * small + 0.3, f"10 KB: {small:.3f} s, 100 KB: {large:.3f} s"


@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("label", LABELS)
@pytest.mark.parametrize("tail", ["x", "", "\n"])
def test_a_label_and_a_run_of_blanks_parse_in_linear_time(label: str, blank: str, tail: str) -> None:
    _grows_linearly(lambda size: label + blank * (size // len(blank)) + tail)


@pytest.mark.parametrize("fragment", REPEATS)
def test_a_repeated_fragment_parses_in_linear_time(fragment: str) -> None:
    _grows_linearly(lambda size: fragment * (size // len(fragment)) + "x")


def test_a_reply_beyond_the_cap_is_refused_unread() -> None:
    with pytest.raises(OutputParseError) as info:
        parse_response("Action: search\nAction Input: {}" + " " * 2_000_000)
    assert info.value.reason == "too_long"
