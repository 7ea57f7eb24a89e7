"""Two start-up/hostile-text promises:

- a PlanAndExecuteAgent plan (or fill) whose arguments nest deeper than the parser's limit is refused as
  ``too_deep`` and told to the model, and the run ends in a result, never a RunError (docs/guarantees.md,
  "Hostile text", "Size limits");
- a ``prompts=<folder>`` problem (a file that is not UTF-8, a folder named ``<name>.jinja``, a tag that loads
  another template, an expression on constants that always fails) is a ConfigError when the agent is built,
  not a raw error or a failure in the middle of every run (docs/prompts.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.tools import tool

from react_agent import ConfigError, PlanAndExecuteAgent, ReactAgent
from react_agent.parsing import MAX_NESTING
from react_agent.testing import FunctionChatModel, ScriptedChatModel

FIN = json.dumps({"thought": "t", "action": "FINISH", "action_input": "done"})
STORED: list[Any] = []


@tool
def store(data: Any) -> str:
    """Store any data."""
    STORED.append(data)
    return "stored"


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _model(first: str, then: str = "{}") -> Callable[[list[BaseMessage]], str]:
    calls: list[int] = []

    def reply(messages: list[BaseMessage]) -> str:
        calls.append(1)
        return first if len(calls) == 1 else then

    return reply


# ------------------------------------------------------------------------------------------- plan depth
@pytest.mark.parametrize(("levels", "journaled"), [(MAX_NESTING + 1, False), (600, False), (900, True)])
def test_deep_plan_arguments_are_refused_as_too_deep(tmp_path: Path, levels: int, journaled: bool) -> None:
    """args nested over the limit: the plan is refused with the reason shown to the model, no tool runs, and the
    run (journaled or not) ends in a result."""
    STORED.clear()
    plan = '[{"tool": "store", "args": {"data": ' + _nested(levels - 1) + "}}]"  # args: one level + the lists
    journal = tmp_path / "run.jsonl" if journaled else None
    agent = PlanAndExecuteAgent(FunctionChatModel(function=_model(plan)), [store], journal=journal)
    result = agent.run("store it")
    assert result.status == "error" and result.plan is None and STORED == []
    assert "too_deep" in result.steps[0].observation and result.steps[0].is_error
    assert str(MAX_NESTING) in result.steps[0].observation
    if journal is not None:
        assert journal.is_file()


@pytest.mark.parametrize("levels", [950, 5000])
def test_plans_too_deep_to_decode_end_in_a_result(tmp_path: Path, levels: int) -> None:
    """Deeper than the JSON reader goes: no plan is found, told to the model; still a result, never a RunError."""
    STORED.clear()
    plan = '[{"tool": "store", "args": {"data": ' + _nested(levels) + "}}]"
    agent = PlanAndExecuteAgent(FunctionChatModel(function=_model(plan)), [store], journal=tmp_path / "run.jsonl")
    result = agent.run("store it")
    assert result.status == "error" and result.plan is None and STORED == [] and result.steps[0].is_error


def test_plan_arguments_at_the_limit_are_accepted() -> None:
    STORED.clear()
    plan = '[{"tool": "store", "args": {"data": ' + _nested(MAX_NESTING - 1) + "}}]"
    result = PlanAndExecuteAgent(FunctionChatModel(function=_model(plan)), [store]).run("store it")
    assert result.status == "finished" and result.output == "stored" and len(STORED) == 1


def test_deep_open_field_values_are_refused_as_too_deep() -> None:
    """A fill reply nested over the limit is not executed: the model is told, and the run ends in a result."""
    STORED.clear()
    plan = '[{"tool": "store", "args": {}, "open": ["data"]}]'
    fill = '{"data": ' + _nested(900) + "}"
    result = PlanAndExecuteAgent(FunctionChatModel(function=_model(plan, fill)), [store]).run("store it")
    assert result.status == "error" and STORED == []
    assert any("too_deep" in step.observation for step in result.steps)


# ------------------------------------------------------------------------------------------- prompt folders
def _folder(tmp_path: Path, content: bytes | None = None, *, name: str = "step.jinja") -> Path:
    path = tmp_path / name
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    return tmp_path


STEP = b"{{ task }} {{ history }} {{ tools }} "


def test_a_template_that_is_not_utf8_is_a_config_error_naming_it(tmp_path: Path) -> None:
    folder = _folder(tmp_path, b"\xff\xfe " + STEP)
    with pytest.raises(ConfigError, match=r"step\.jinja.*not UTF-8"):
        ReactAgent(ScriptedChatModel([FIN]), [], prompts=folder)


def test_a_folder_named_like_a_template_is_a_config_error_naming_it(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with pytest.raises(ConfigError, match=r"step\.jinja.*not a file"):
        ReactAgent(ScriptedChatModel([FIN]), [], prompts=folder)


@pytest.mark.parametrize(("tag", "shown"), [
    (b"{% include 'x.jinja' %}", "include"),
    (b"{% import 'x.jinja' as x %}", "import"),
    (b"{% from 'x.jinja' import y %}", "from ... import"),
    (b"{% extends 'base.jinja' %}", "extends"),
])
def test_tags_that_load_another_template_are_refused_at_start_up(tmp_path: Path, tag: bytes, shown: str) -> None:
    with pytest.raises(ConfigError, match=rf"'step'.*\{{% {shown} %\}} is not supported"):
        ReactAgent(ScriptedChatModel([FIN]), [], prompts=_folder(tmp_path, STEP + tag))
    with pytest.raises(ConfigError, match="is not supported"):  # jinja text in a mapping too
        ReactAgent(ScriptedChatModel([FIN]), [], prompts={"step": (STEP + tag).decode()})


@pytest.mark.parametrize("expression", [b"{{ 1 // 0 }}", b"{{ 'a' - 1 }}",
                                        b"{% if x is defined %}{{ -'a' }}{% endif %}"])
def test_an_expression_on_constants_that_always_fails_is_refused_at_start_up(tmp_path: Path,
                                                                            expression: bytes) -> None:
    with pytest.raises(ConfigError, match=r"'step'.*line 1: an expression on constants always fails"):
        ReactAgent(ScriptedChatModel([FIN]), [], prompts=_folder(tmp_path, STEP + expression))


def test_valid_templates_with_operators_and_a_folder_of_good_files_still_work(tmp_path: Path) -> None:
    """Operators on run-time values, constants that compute fine and plain files are accepted and render."""
    step = STEP + b"{{ 7 // 2 }} {{ -1 }} {{ steps | length // 1 }} {{ (history ~ '') | length > 0 }}"
    llm = ScriptedChatModel([FIN])
    result = ReactAgent(llm, [], prompts=_folder(tmp_path, step)).run("t")
    assert result.status == "finished" and result.output == "done"
    assert " 3 -1 0 " in llm.calls[0].text
