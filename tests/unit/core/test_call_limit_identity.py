"""A journal's identity holds the call limit in effect: two spellings of one behaviour resume each other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from tool_call_servers import NativeScriptedModel

from react_agent import JournalMismatchError, ReactAgent
from react_agent.testing import ScriptedChatModel


@tool
def echo(x: int) -> str:
    """Echo x."""
    return f"echo {x}"


def text_run() -> list[str]:
    return [json.dumps({"thought": "", "action": "echo", "action_input": {"x": 1}}),
            json.dumps({"thought": "", "action": "FINISH", "action_input": "done"})]


@pytest.mark.parametrize(("written", "resumed"), [({"max_parallel_calls": 1}, {}), ({}, {"max_parallel_calls": 1}),
                                                  ({"max_parallel_calls": None}, {"max_parallel_calls": 1})])
def test_text_journal_resumes_with_the_other_spelling_of_one_call(tmp_path: Path, written: dict[str, Any],
                                                                   resumed: dict[str, Any]) -> None:
    journal = tmp_path / "run.jsonl"
    first = ReactAgent(ScriptedChatModel(text_run()), [echo], **written).run("go", journal=journal)
    again = ReactAgent(ScriptedChatModel([]), [echo], **resumed)
    assert again.identity() == ReactAgent(ScriptedChatModel([]), [echo], **written).identity()
    replayed = again.resume(journal)
    assert replayed.status == first.status == "finished" and replayed.output == "done"
    assert [s.observation for s in replayed.steps] == [s.observation for s in first.steps]


def test_native_journal_keeps_one_call_and_every_call_apart(tmp_path: Path) -> None:
    """Under the native protocol ``None`` means every call of a reply and ``1`` one call: not the same run."""
    journal = tmp_path / "run.jsonl"
    reply = AIMessage(content="", tool_calls=[{"name": "echo", "args": {"x": 1}, "id": "a"}])
    ReactAgent(NativeScriptedModel([reply, AIMessage(content="ok")]), [echo], protocol="native").run(
        "go", journal=journal)
    with pytest.raises(JournalMismatchError, match="max_parallel_calls"):
        ReactAgent(NativeScriptedModel([]), [echo], protocol="native", max_parallel_calls=1).resume(journal)
    assert ReactAgent(NativeScriptedModel([]), [echo], protocol="native").resume(journal).output == "ok"


def test_a_limit_above_one_is_part_of_the_identity() -> None:
    assert ReactAgent(ScriptedChatModel([]), [echo], max_parallel_calls=3).identity()["max_parallel_calls"] == 3
    assert "max_parallel_calls" not in ReactAgent(ScriptedChatModel([]), [echo], max_parallel_calls=1).identity()
