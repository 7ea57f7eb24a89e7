"""Reliability v3: deep JSON, replay fidelity (secrets, session values, mutated inputs, sub-agent usage),
approvals under arun, the batch results file, and setup mistakes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import finish
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from react_agent import OutputParseError, ReactAgent
from react_agent.batch import ResultsFile, TaskResult, read_results, run_batch
from react_agent.parsing import MAX_NESTING, parse_response
from react_agent.testing import ScriptedChatModel


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for index in range(depth):
        value = {"a": value} if index % 2 else [value]
    return value


def echo_tool(calls: list[Any] | None = None) -> StructuredTool:
    def echo(text: str) -> str:
        """Echo the text."""
        if calls is not None:
            calls.append(text)
        return f"echo {text}"

    return StructuredTool.from_function(echo)


# ------------------------------------------------------------------------------------ 2. deep JSON
def deep_replies(depth: int) -> list[str]:
    deep = "[" * depth + "1" + "]" * depth
    return [
        f'{{"thought": "t", "action": "echo", "action_input": {{"text": {deep}}}}}',
        f'Thought: t\nAction: echo\nAction Input: {{"text": {deep}}}',
        f'<tool_call>{{"name": "echo", "arguments": {{"text": {deep}}}}}</tool_call>',
        f'[[ ## next_tool_name ## ]]\necho\n[[ ## next_tool_args ## ]]\n{{"text": {deep}}}',
    ]


@pytest.mark.parametrize("form", range(4))
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 300, 5000])
def test_a_reply_nested_beyond_the_bound_is_never_accepted_as_nested_arguments(form: int, depth: int) -> None:
    try:
        action = parse_response(deep_replies(depth)[form], ["echo"])
    except OutputParseError as exc:
        assert exc.reason in ("too_deep", "prose", "invalid_input", "no_action")
    else:  # a text-format input that does not decode stays one string
        assert isinstance(action.action_input, str)


@pytest.mark.parametrize("form", range(4))
def test_arguments_nested_up_to_the_bound_are_accepted(form: int) -> None:
    action = parse_response(deep_replies(MAX_NESTING - 2)[form], ["echo"])
    assert action.action == "echo"


@pytest.mark.parametrize("depth", [300, 5000])
def test_a_deep_reply_in_a_journaled_run_is_observed_and_the_run_resumes(tmp_path: Path, depth: int) -> None:
    journal = tmp_path / "j.jsonl"
    llm = ScriptedChatModel([deep_replies(depth)[0], finish("done")])
    result = ReactAgent(llm, [echo_tool()], prompts="en").run("task", journal=journal)
    assert result.status == "finished" and result.output == "done"
    assert result.steps[0].is_error and "Format error" in llm.calls[1].text
    assert ReactAgent(ScriptedChatModel([]), [echo_tool()], prompts="en").resume(journal).output == "done"


def test_a_result_that_cannot_be_written_is_an_error_line_and_the_batch_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    with ResultsFile(out) as results:
        results.write(TaskResult(id="deep", task="t", status="finished", tool_calls=[{"args": nested(300)}]))
        results.write(TaskResult(id="next", task="t", status="finished", output="fine"))
    lines = {r.id: r for r in read_results(out)}
    assert lines["deep"].status == "error" and "could not be written" in (lines["deep"].error or "")
    assert lines["next"].output == "fine"


def test_a_batch_without_journals_survives_a_deep_reply(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"

    def factory() -> ReactAgent:
        return ReactAgent(ScriptedChatModel([deep_replies(300)[0], finish("ok")] * 3), [echo_tool()])

    summary = run_batch(factory, ["a", "b", "c"], concurrency=1, out=out).run()
    assert summary.done == 3
    assert [r.status for r in read_results(out)] == ["finished"] * 3


# ------------------------------------------------------------------------------------ 3. output_schema
class Answer(BaseModel):
    value: Any


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 300, 5000, 100_000])
def test_a_deep_structured_answer_ends_in_a_result(depth: int) -> None:
    text = "[" * depth + "]" * depth
    replies = [json.dumps({"thought": "t", "action": "FINISH", "action_input": "x"})[:-1] + f', "value": {text}}}',
               json.dumps({"thought": "t", "action": "FINISH", "action_input": f'{{"value": {text}}}'}),
               f'{{"thought": "t", "action": "FINISH", "action_input": {{"value": {text}}}}}',
               finish('{"value": 1}')]
    result = ReactAgent(ScriptedChatModel(replies), [], output_schema=Answer, max_iterations=6).run("task")
    assert result.status == "finished" and result.output_object == Answer(value=1)
