"""Property tests: arbitrary text from users, tools and models never breaks prompt rendering, never injects
template syntax, and never makes a run raise; adversarial 100 KB replies are parsed in bounded time."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.tools import StructuredTool, tool

from react_agent import AgentAction, OutputParseError, PromptSet, ReactAgent, RunState
from react_agent.testing import ScriptedChatModel
from react_agent.tools._registry import name_problem

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TEMPLATE_BITS = st.sampled_from([
    "{{", "}}", "{%", "%}", "{#", "#}", "{", "}", "{{ task }}", "{{ tools }}", "{% for s in steps %}",
    "{% endfor %}", "{% raw %}", "{% endraw %}", "{{ 7 * 7 }}", "{{ ''.__class__ }}", "{% if %}", "${x}",
    "{task}", "{{{{", "\\", '"', "'", "\n", "\r\n", "\t", "ё", "漢字", "🙂", "\u202e", "\u200b", "\x00",
])
TEXT = st.lists(st.one_of(st.text(max_size=16), TEMPLATE_BITS), min_size=1, max_size=12).map("".join)
PROMPTS = PromptSet.load("en")  # loaded once: examples only build agents around it
# any identifier the registry accepts (reserved names, such as FINISH synonyms or "NA", are refused at build time)
NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,24}", fullmatch=True).filter(lambda n: name_problem(n) is None)


def prompt(agent: ReactAgent, state: RunState) -> str:
    return "\n\n".join(str(m.content) for m in agent.build_messages(state))


def make_tool(name: str, description: str) -> StructuredTool:
    def run(text: str) -> str:
        return text

    return StructuredTool.from_function(run, name=name, description=description)


@FUZZ
@given(st.lists(st.tuples(NAME, TEXT), min_size=1, max_size=4, unique_by=lambda t: t[0]))
def test_tool_names_and_descriptions_render_verbatim(specs: list[tuple[str, str]]) -> None:
    """Any identifier as tool name and any description (Unicode, {{ }}, {% %}) appear verbatim in the prompt."""
    tools = [make_tool(name, description) for name, description in specs]
    agent = ReactAgent(ScriptedChatModel([]), tools, prompts=PROMPTS)
    text = prompt(agent, RunState("task"))
    for t in tools:
        assert f"{t.name} - {t.description}" in text
    assert ", ".join([*(t.name for t in tools), "FINISH"]) in agent.tool_names


LOOKUP = make_tool("lookup", "Look something up.")
AGENT = ReactAgent(ScriptedChatModel([]), [LOOKUP], prompts=PROMPTS)


@FUZZ
@given(TEXT.filter(str.strip))
def test_task_renders_verbatim_in_every_prompt(task: str) -> None:
    """Any task text appears verbatim in the step, final-answer and reflection prompts, uninterpreted."""
    state = RunState(task)
    for messages in (AGENT.build_messages(state), AGENT.build_final_messages(state),
                     AGENT.build_reflection_messages(state)):
        assert task in "\n\n".join(str(m.content) for m in messages)


RETURNS: list[str] = [""]


@tool
def fetch(text: str) -> str:
    """Fetch a text."""
    return RETURNS[0]


FINISH_OK = json.dumps({"action": "FINISH", "action_input": "ok"})


def run_fetch(action_input: dict[str, Any]) -> tuple[Any, ScriptedChatModel]:
    llm = ScriptedChatModel([json.dumps({"thought": "t", "action": "fetch", "action_input": action_input}),
                             FINISH_OK])
    agent = ReactAgent(llm, [fetch], prompts=PROMPTS, max_observation_chars=10_000)  # agents are immutable
    return agent.run("task"), llm


@FUZZ
@given(TEXT)
def test_observation_renders_verbatim_in_the_next_prompt(observation: str) -> None:
    """Whatever a tool returns reaches the next prompt verbatim (template syntax stays text)."""
    RETURNS[0] = observation
    result, llm = run_fetch({"text": "x"})
    assert result.steps[0].observation == observation
    # the history block is rendered on its own and stripped: only trailing whitespace of its end may go
    assert f"Result: {observation}".rstrip() in llm.calls[1].text


@FUZZ
@given(TEXT)
def test_tool_arguments_render_verbatim_in_history(value: str) -> None:
    """Arguments the model sent are shown back as their JSON, whatever characters they hold."""
    RETURNS[0] = "ok"
    _, llm = run_fetch({"text": value})
    assert f"fetch({json.dumps({'text': value}, ensure_ascii=False)})" in llm.calls[1].text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(TEXT, st.text(max_size=200)), min_size=3, max_size=3))
def test_any_model_text_ends_in_a_result_never_an_exception(replies: list[str]) -> None:
    """Whatever the model writes, run() returns an AgentResult with a known status; it never raises."""
    llm = ScriptedChatModel(replies)
    result = ReactAgent(llm, [LOOKUP], prompts=PROMPTS, max_iterations=3, final_answer="never").run("task")
    assert result.status in ("finished", "max_iterations", "error")
    assert len(result.steps) == len(llm.calls) <= 3


SIZE = 100_000
ADVERSARIAL = {
    "open_braces": "{" * SIZE,
    "brace_pairs_reversed": "}{" * (SIZE // 2),
    "unclosed_string": '{"action": "' + "a" * SIZE,
    "unclosed_calls": ('{"action":"lookup","action_input":{' * (SIZE // 33))[:SIZE],
    "deep_nesting": '{"a":' * (SIZE // 6) + "1" + "}" * (SIZE // 6),
    "quotes_backslashes": '"\\' * (SIZE // 2),
    "action_lines": ("Action: lookup\nAction Input: {\n" * (SIZE // 28))[:SIZE],
    "think_tags": "<think>" * (SIZE // 7),
    "repair_bait": ("{'action': 'lookup', 'action_input': {'text': 'x',}, " * (SIZE // 50))[:SIZE],
    "final_answer_lines": ("Final Answer: " + "x" * 50 + "\n") * (SIZE // 65),
    "huge_valid_action": '{"action":"lookup","action_input":{"text":"' + "x" * SIZE + '"}}',
    "open_brackets": "[" * SIZE,
    "unicode_controls": "ё{}\u202e\x00" * (SIZE // 5),
}


@pytest.mark.parametrize("text", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_adversarial_100kb_reply_is_parsed_under_100ms(text: str) -> None:
    """A 100 KB adversarial reply gives an AgentAction or OutputParseError through agent.parse within 100 ms."""
    best = float("inf")
    for _ in range(3):  # best of three: the machine is shared
        started = time.perf_counter()
        outcome: Any
        try:
            outcome = AGENT.parse(text)
        except OutputParseError as exc:
            outcome = exc
        best = min(best, time.perf_counter() - started)
    assert isinstance(outcome, (AgentAction, OutputParseError))
    assert best < 0.1
