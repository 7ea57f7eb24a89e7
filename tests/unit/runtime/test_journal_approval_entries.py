"""A journaled human decision is replayed only when its ``approved`` is exactly ``true`` or ``false`` (as the run
writes it): an edited or damaged ``approval`` record (``"no"``, ``1``, ``null``, no field...) makes resume a
:class:`JournalError` naming the record and the field, and the tool does not run; ``bool()`` would have read
``"no"`` as a yes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import call, finish
from langchain_core.tools import StructuredTool

from react_agent import JournalError, ReactAgent, read_journal
from react_agent.testing import ScriptedChatModel

SCRIPT = [call("store", item="a"), finish("done")]
MISSING = object()


class Store:
    """A tool that needs approval and counts its runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def tool(self) -> StructuredTool:
        def store(item: str) -> str:
            """Store an item."""
            self.runs.append(item)
            return f"stored {item}"

        tool = StructuredTool.from_function(store)
        return tool.model_copy(update={"metadata": {"requires_approval": True}})


def journaled_run(tmp_path: Path, store: Store, *, crash: bool) -> Path:
    """A run whose only tool call was approved; with ``crash``, the journal ends right after the approval
    (the process died inside the tool, so a resume would run the call again)."""
    journal = tmp_path / "run.jsonl"
    result = ReactAgent(ScriptedChatModel(SCRIPT), [store.tool()], prompts="en", journal=journal,
                        approve=lambda name, args: True).run("task")
    assert result.status == "finished" and store.runs == ["a"]
    if crash:
        lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
        end = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "approval")
        journal.write_text("".join(lines[:end + 1]), encoding="utf-8")
    return journal


def edit_approval(journal: Path, value: Any) -> None:
    """Set (or, for ``MISSING``, remove) the ``approved`` field of the journal's approval record on disk."""
    lines = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "approval":
            record.pop("approved")
            if value is not MISSING:
                record["approved"] = value
        lines.append(json.dumps(record) + "\n")
    journal.write_text("".join(lines), encoding="utf-8")


def must_not_ask(name: str, args: Any) -> bool:
    raise AssertionError("asked for approval")


BAD = [pytest.param("no", id="str-no"), pytest.param("false", id="str-false"), pytest.param("yes", id="str-yes"),
       pytest.param("", id="empty-str"), pytest.param(1, id="one"), pytest.param(0, id="zero"),
       pytest.param(None, id="null"), pytest.param([], id="list"), pytest.param({}, id="object"),
       pytest.param(MISSING, id="missing")]


@pytest.mark.parametrize("value", BAD)
def test_a_malformed_decision_of_an_unfinished_call_stops_the_resume_before_the_tool_runs(
        tmp_path: Path, value: Any) -> None:
    store = Store()
    journal = journaled_run(tmp_path, store, crash=True)
    edit_approval(journal, value)
    llm = ScriptedChatModel(SCRIPT[1:])
    found = "no 'approved' field" if value is MISSING else f"'approved': {value!r}"
    with pytest.raises(JournalError, match=f"approval record of tool call 2 \\('store'\\) has {re.escape(found)}; "
                                          f"it must be true or false"):
        ReactAgent(llm, [store.tool()], prompts="en", approve=lambda name, args: True).resume(journal)
    assert store.runs == ["a"]  # only the original run: the resume ran nothing
    assert llm.calls == []


@pytest.mark.parametrize("value", ["no", 1, None, MISSING], ids=["str-no", "one", "null", "missing"])
def test_the_error_is_raised_whatever_the_resumed_agent_would_answer(tmp_path: Path, value: Any) -> None:
    """Without ``approve`` (a refusal) or with one that must not be asked: still the journal error, not a decision."""
    store = Store()
    journal = journaled_run(tmp_path, store, crash=True)
    edit_approval(journal, value)
    for approve in (None, must_not_ask):
        with pytest.raises(JournalError, match="approval record of tool call 2"):
            ReactAgent(ScriptedChatModel(SCRIPT[1:]), [store.tool()], prompts="en", approve=approve).resume(journal)
    assert store.runs == ["a"]


def test_a_malformed_decision_of_a_finished_call_is_a_corrupt_journal_too(tmp_path: Path) -> None:
    store = Store()
    journal = journaled_run(tmp_path, store, crash=False)
    edit_approval(journal, "no")
    before = read_journal(journal)
    with pytest.raises(JournalError, match="approval record of tool call 2 \\('store'\\) has 'approved': 'no'"):
        ReactAgent(ScriptedChatModel([]), [store.tool()], prompts="en", approve=must_not_ask).resume(journal)
    assert store.runs == ["a"]
    assert read_journal(journal) == before  # nothing appended: no resume record


def test_an_async_resume_is_as_strict(tmp_path: Path) -> None:
    store = Store()
    journal = journaled_run(tmp_path, store, crash=True)
    edit_approval(journal, "no")
    agent = ReactAgent(ScriptedChatModel(SCRIPT[1:]), [store.tool()], prompts="en", approve=lambda name, args: True)
    with pytest.raises(JournalError, match="'approved': 'no'"):
        asyncio.run(agent.aresume(journal))
    assert store.runs == ["a"]
