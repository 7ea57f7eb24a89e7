"""The decomposition API (``react_agent.decompose``): a compound task runs as its parts, one result, with the
scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from react_agent import AgentResult, ReactAgent, Usage
from react_agent.decompose import arun_decomposed, combine_results, run_decomposed
from react_agent.demo import UserDB, make_demo_tools
from react_agent.testing import ScriptedChatModel

TASK = "Register user Viacheslav with email Viacheslav@test.com and find user Ivan"
REGISTER = ('{"thought": "t", "action": "register_user", "action_input": {"username": "Viacheslav", '
            '"email": "Viacheslav@test.com"}}')
SEARCH = '{"thought": "t", "action": "search_db", "action_input": {"username": "Ivan"}}'


def _agent(replies: list[str], db: Path, **options: Any) -> tuple[ReactAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies)
    return ReactAgent(model, make_demo_tools(db_path=db, lang="en"), prompts="en-compact", **options), model


def test_each_part_runs_as_its_own_task_and_the_results_are_one(tmp_path: Path) -> None:
    db = tmp_path / "users.db"
    agent, model = _agent([REGISTER, '{"thought": "t", "action": "FINISH", "action_input": "Registered."}',
                           SEARCH, '{"thought": "t", "action": "FINISH", "action_input": "No Ivan."}'], db)
    result = run_decomposed(agent, TASK)
    assert result.status == "finished" and result.output == "Registered. No Ivan."
    assert [s.action for s in result.steps] == ["register_user", "FINISH", "search_db", "FINISH"]
    assert result.llm_calls == 4
    assert UserDB(db).get("Viacheslav") is not None  # the first part's side effect is in place
    # each part's prompt states that part only
    first, third = model.calls[0].text.split("Now your turn")[-1], model.calls[2].text.split("Now your turn")[-1]
    assert "Register user Viacheslav" in first and "Ivan" not in first
    assert "Find user Ivan" in third and "Register" not in third


def test_a_part_that_does_not_finish_ends_the_run(tmp_path: Path) -> None:
    agent, model = _agent([REGISTER, REGISTER, SEARCH], tmp_path / "users.db", max_iterations=2)
    result = run_decomposed(agent, TASK)
    assert result.status != "finished"
    assert all(s.action == "register_user" for s in result.steps)
    assert model.remaining == 1  # the search part never started


def test_a_simple_task_is_one_ordinary_run(tmp_path: Path) -> None:
    agent, _ = _agent([SEARCH, '{"thought": "t", "action": "FINISH", "action_input": "Done."}'],
                      tmp_path / "users.db")
    result = run_decomposed(agent, "Find user Ivan")
    assert result.status == "finished" and result.output == "Done." and result.llm_calls == 2


def test_async_and_russian(tmp_path: Path) -> None:
    agent, _ = _agent([REGISTER, '{"thought": "t", "action": "FINISH", "action_input": "Готово."}',
                       SEARCH, '{"thought": "t", "action": "FINISH", "action_input": "Нет."}'], tmp_path / "u.db")
    task = "Зарегистрируй пользователя Viacheslav с email Viacheslav@test.com и найди пользователя Ivan"
    result = asyncio.run(arun_decomposed(agent, task, lang="ru"))
    assert result.status == "finished" and result.output == "Готово. Нет."
    with pytest.raises(ValueError, match="lang must be one of"):
        run_decomposed(agent, task, lang="de")


def test_combine_results() -> None:
    one = AgentResult(output="a", status="finished", llm_calls=1, usage=Usage(input_tokens=3, output_tokens=1))
    two = AgentResult(output="", status="max_iterations", llm_calls=2, usage=Usage(input_tokens=5), error="e")
    both: Any = combine_results([one, two])
    assert (both.output, both.status, both.llm_calls, both.error) == ("a", "max_iterations", 3, "e")
    assert both.usage == Usage(input_tokens=8, output_tokens=1)
    assert combine_results([one]) is one
    with pytest.raises(ValueError):
        combine_results([])
