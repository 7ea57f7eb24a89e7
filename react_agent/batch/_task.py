"""Running one task of a batch: a run, or the resume of its journal, reported as a :class:`TaskResult`."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from react_agent._types import AgentResult
from react_agent.batch._checks import run_checks, tool_calls_of
from react_agent.batch._records import TaskResult
from react_agent.batch._tasks import Task, journal_name
from react_agent.core import BaseAgent
from react_agent.errors import ConfigError
from react_agent.runtime import read_journal

__all__ = ["AgentFactory", "build_agent", "run_task", "task_result"]

logger = logging.getLogger("react_agent")

AgentFactory = Callable[[], BaseAgent]


# ---------------------------------------------------------------------------------------------- one task
def _journaled_task(path: Path) -> str | None:
    """The task text of the last run journaled in ``path``, or ``None`` when it holds no run."""
    if not path.exists():
        return None
    runs = [r for r in read_journal(path) if r.get("type") == "run"]
    return str(runs[-1].get("task", "")) if runs else None


def _error(task: Task, message: str, started: float, *, status: str = "error", resumed: bool = False) -> TaskResult:
    return TaskResult(id=task.id, task=task.task, status=status, error=message, resumed=resumed,
                      seconds=round(time.monotonic() - started, 6), passed=False if task.checks else None)


def task_result(task: Task, result: AgentResult, seconds: float, *, resumed: bool = False) -> TaskResult:
    """The :class:`TaskResult` of a run, with its checks evaluated."""
    checks = run_checks(task.checks, result, task) if task.checks is not None else []
    return TaskResult(
        id=task.id, task=task.task, status=result.status, output=result.output, error=result.error,
        steps=len(result.steps), llm_calls=result.llm_calls, input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens, total_tokens=result.usage.total_tokens,
        seconds=round(seconds, 6), resumed=resumed, tool_calls=tool_calls_of(result), checks=checks,
        passed=all(c.passed for c in checks) if task.checks is not None else None)


async def run_task(agent: BaseAgent, task: Task, *, journal_dir: str | os.PathLike[str] | None = None,
                   task_timeout: float | None = None) -> TaskResult:
    """Run (or resume from its journal) one task and return its :class:`TaskResult`; never raises for the
    run's failures: an exception, a journal problem or ``task_timeout`` become the result's status."""
    started = time.monotonic()
    path = None if journal_dir is None else Path(journal_dir) / journal_name(task.id)
    config: RunnableConfig = {"metadata": {"batch_task_id": task.id}}
    session = dict(task.session) or None
    resumed = False
    try:
        journaled = None if path is None else _journaled_task(path)
        if journaled is not None and path is not None:
            if journaled != task.task:
                return _error(task, f"the journal {path} holds another task text for the id {task.id!r}; the "
                                    f"tasks file changed: give the task a new id or remove its journal", started)
            resumed = True
            coro: Awaitable[AgentResult] = (agent.aresume(path, config=config, session=session) if session
                                            else agent.aresume(path, config=config))
        else:
            coro = agent.arun(task.task, config=config, journal=path, session=session)
        result = await (coro if task_timeout is None else asyncio.wait_for(coro, task_timeout))
    except asyncio.TimeoutError:
        return _error(task, f"the task took longer than {task_timeout} s (task_timeout)", started, status="timeout",
                      resumed=resumed)
    except Exception as exc:  # one task's failure never stops the batch
        logger.warning("batch task %s failed: %s", task.id, type(exc).__name__)
        return _error(task, f"{type(exc).__name__}: {exc}", started, resumed=resumed)
    return task_result(task, result, time.monotonic() - started, resumed=resumed)


def build_agent(agent_or_factory: BaseAgent | AgentFactory) -> BaseAgent:
    """The agent itself, or the one its factory builds (a worker builds its own: local models hold memory)."""
    agent = agent_or_factory if isinstance(agent_or_factory, BaseAgent) else agent_or_factory()
    if not isinstance(agent, BaseAgent):
        raise ConfigError(f"the agent factory returned a {type(agent).__name__}, not a react_agent agent")
    return agent
