"""The ``journal`` argument of run()/resume() is checked like the agent's ``journal=`` option: a value that is
not a path, a folder, or a path in a missing folder is a ConfigError naming the fix, raised before the model is
called or anything is written (docs/guarantees.md, "Durable run journal")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from react_agent import ConfigError, JournalError, ReactAgent
from react_agent.testing import ScriptedChatModel

FIN = json.dumps({"thought": "t", "action": "FINISH", "action_input": "done"})


def _agent() -> tuple[ReactAgent, ScriptedChatModel]:
    llm = ScriptedChatModel([FIN])
    return ReactAgent(llm, []), llm


def _bad_paths(tmp_path: Path) -> list[tuple[Any, str]]:
    return [(tmp_path, "is a directory"), (str(tmp_path), "is a directory"),
            (tmp_path / "missing" / "run.jsonl", "does not exist"),
            (str(tmp_path / "missing" / "run.jsonl"), "does not exist")]


@pytest.mark.parametrize("entry", ["run", "arun", "invoke", "stream"])
def test_run_journal_that_is_a_folder_or_in_a_missing_folder_is_a_config_error(tmp_path: Path, entry: str) -> None:
    """As the option: the message names the problem, the model is never called and no file is created."""
    calls: dict[str, Callable[[ReactAgent, Any], Any]] = {
        "run": lambda a, j: a.run("t", journal=j),
        "arun": lambda a, j: asyncio.run(a.arun("t", journal=j)),
        "invoke": lambda a, j: a.invoke({"input": "t", "journal": j}),
        "stream": lambda a, j: list(a.stream("t", journal=j)),
    }
    for value, reason in _bad_paths(tmp_path):
        agent, llm = _agent()
        with pytest.raises(ConfigError, match=rf"journal must be .*\.jsonl.*{reason}"):
            calls[entry](agent, value)
        assert llm.calls == []
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("value", [123, 1.5, b"run.jsonl", ["run.jsonl"], object()])
def test_run_journal_of_a_wrong_type_is_a_config_error(value: Any) -> None:
    agent, llm = _agent()
    with pytest.raises(ConfigError, match=r"journal must be .*path of a \.jsonl"):
        agent.run("t", journal=value)
    assert llm.calls == []


@pytest.mark.parametrize("value", [None, 123, 1.5, b"run.jsonl", ["run.jsonl"]])
def test_resume_journal_of_a_wrong_type_or_none_is_a_config_error(value: Any) -> None:
    """resume() needs a file: None is refused too, and the message does not offer None."""
    agent, llm = _agent()
    with pytest.raises(ConfigError, match=r"journal must be the path of a \.jsonl journal file") as caught:
        agent.resume(value)
    assert "None or" not in str(caught.value)
    with pytest.raises(ConfigError, match=r"journal must be the path of a \.jsonl journal file"):
        asyncio.run(agent.aresume(value))
    with pytest.raises(ConfigError, match=r"journal must be the path of a \.jsonl journal file"):
        agent.resume_stream(value)
    assert llm.calls == []


def test_resume_journal_that_is_a_folder_or_in_a_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    agent, llm = _agent()
    for value, reason in _bad_paths(tmp_path):
        with pytest.raises(ConfigError, match=reason):
            agent.resume(value)
        with pytest.raises(ConfigError, match=reason):
            asyncio.run(agent.aresume(value))
    assert llm.calls == []


def test_valid_journal_arguments_still_work(tmp_path: Path) -> None:
    """A file in an existing folder is journaled and resumable; a missing file there is still a JournalError."""
    journal = tmp_path / "run.jsonl"
    agent, _ = _agent()
    result = agent.run("t", journal=str(journal))
    assert result.status == "finished" and journal.is_file()
    again = ReactAgent(ScriptedChatModel([]), []).resume(journal)
    assert again.output == result.output
    with pytest.raises(JournalError, match="holds no run to resume"):
        ReactAgent(ScriptedChatModel([]), []).resume(tmp_path / "other.jsonl")
