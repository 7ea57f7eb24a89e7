"""Run many tasks: one task's run (shared by every backend), the local backend, and the batch driver.

The driver keeps at most ``concurrency`` tasks in flight (tasks are read one at a time as slots free up:
backpressure, memory flat in the number of tasks), writes each result to the results file as it arrives
and yields it. Every task is journaled to ``<journal_dir>/<task id>.jsonl``; a task whose journal holds a
run is resumed from it, so a batch killed at any point and started again re-runs no completed model call
or tool call, and tasks already in the results file are not run at all.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Iterable, Iterator, Sized
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from react_agent._types import RunStatus
from react_agent.batch._ray import RayBackend
from react_agent.batch._records import BatchSummary, ResultsFile, TaskResult
from react_agent.batch._task import AgentFactory, build_agent, run_task
from react_agent.batch._tasks import Task, count_tasks, iter_tasks
from react_agent.core import BaseAgent
from react_agent.errors import ConfigError
from react_agent.runtime import seconds_problem
from react_agent.tools import short_repr

__all__ = ["AgentFactory", "BatchRun", "arun_batch", "run_batch", "run_task"]

logger = logging.getLogger("react_agent")

Backend = Literal["local", "ray"]


# ---------------------------------------------------------------------------------------------- backends
class _Backend(Protocol):
    capacity: int

    async def start(self) -> None: ...

    def submit(self, task: Task) -> Awaitable[TaskResult]: ...

    async def close(self) -> None: ...


class _LocalBackend:
    """Runs tasks as asyncio tasks of this process, on one agent (built once by the factory)."""

    def __init__(self, agent_or_factory: BaseAgent | AgentFactory, *, concurrency: int,
                 journal_dir: Path | None, task_timeout: float | None) -> None:
        self.agent_or_factory, self.capacity = agent_or_factory, concurrency
        self.journal_dir, self.task_timeout = journal_dir, task_timeout
        self.agent: BaseAgent | None = None

    async def start(self) -> None:
        self.agent = build_agent(self.agent_or_factory)

    def submit(self, task: Task) -> Awaitable[TaskResult]:
        assert self.agent is not None
        return asyncio.ensure_future(run_task(self.agent, task, journal_dir=self.journal_dir,
                                              task_timeout=self.task_timeout))

    async def close(self) -> None:
        return None


def _backend(agent_or_factory: BaseAgent | AgentFactory, *, backend: Backend, concurrency: int,
             journal_dir: Path | None, task_timeout: float | None, ray_options: dict[str, Any]) -> _Backend:
    if backend == "local":
        if ray_options:
            raise ConfigError(f"{', '.join(sorted(ray_options))}: only for backend='ray'")
        return _LocalBackend(agent_or_factory, concurrency=concurrency, journal_dir=journal_dir,
                             task_timeout=task_timeout)
    if backend == "ray":
        return RayBackend(agent_or_factory, concurrency=concurrency, journal_dir=journal_dir,
                          task_timeout=task_timeout, **ray_options)
    raise ConfigError(f"backend must be 'local' or 'ray', got {backend!r}")


# ---------------------------------------------------------------------------------------------- the driver
_STATUSES = frozenset(get_args(RunStatus))


def _check_options(concurrency: int, task_timeout: float | None, *, journal_dir: Any = None, out: Any = None,
                   retry: Any = ()) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    problem = seconds_problem(task_timeout, allow_none=True)  # the check of the agent's own waits
    if problem is not None:
        raise ConfigError(f"task_timeout {problem}, got {short_repr(task_timeout)}")
    for name, path in (("journal_dir", journal_dir), ("out", out)):
        if path is not None and (not isinstance(path, (str, os.PathLike)) or not os.fspath(path)):
            raise ConfigError(f"{name} must be a path (a non-empty str or os.PathLike) or None, got {path!r}")
    if isinstance(retry, (str, bytes)) or not isinstance(retry, Collection):
        raise ConfigError(f"retry must be a collection of statuses, e.g. retry=('error', 'timeout'), got {retry!r}")
    unknown = sorted(repr(status) for status in retry if status not in _STATUSES)
    if unknown:
        raise ConfigError(f"retry: unknown status {', '.join(unknown)}; statuses are {', '.join(sorted(_STATUSES))}")


def _journal_dir(journal_dir: str | os.PathLike[str] | None) -> Path | None:
    if journal_dir is None:
        return None
    path = Path(journal_dir)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"journal_dir {os.fspath(journal_dir)!r} is a file; pass a folder")
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


async def arun_batch(agent_or_factory: BaseAgent | AgentFactory, tasks: Iterable[Any] | str | os.PathLike[str], *,
                     concurrency: int = 16, journal_dir: str | os.PathLike[str] | None = None,
                     out: str | os.PathLike[str] | None = None, backend: Backend = "local",
                     task_timeout: float | None = None, retry: Collection[str] = (),
                     summary: BatchSummary | None = None, **ray_options: Any) -> AsyncGenerator[TaskResult, None]:
    """Async :func:`run_batch`: an async iterator of the results as tasks complete (in this event loop)."""
    _check_options(concurrency, task_timeout, journal_dir=journal_dir, out=out, retry=retry)
    summary = summary if summary is not None else BatchSummary()
    if summary.total is None:
        summary.total = _total(tasks)
    journals = _journal_dir(journal_dir)
    results = ResultsFile(out) if out is not None else None
    runner = _backend(agent_or_factory, backend=backend, concurrency=concurrency, journal_dir=journals,
                      task_timeout=task_timeout, ray_options=ray_options)
    started = time.monotonic()
    pending: dict[asyncio.Future[TaskResult], Task] = {}
    try:
        if results is not None:
            results.drop(retry)
            for previous in results.previous():
                summary.add(previous, previous=True)
        done_before = results.done if results is not None else set()
        source: Iterator[Task] = iter_tasks(tasks)
        exhausted = False
        await runner.start()
        while True:
            while not exhausted and len(pending) < runner.capacity:
                task = next(source, None)
                if task is None:
                    exhausted = True
                elif task.id not in done_before:
                    pending[asyncio.ensure_future(runner.submit(task))] = task
                    summary.running = len(pending)
            if not pending:
                break
            finished, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in finished:
                task = pending.pop(future)
                summary.running = len(pending)
                result = _result_of(future, task)
                if results is not None:
                    _write(results, result)
                summary.add(result)
                summary.elapsed = time.monotonic() - started
                yield result
    finally:
        for future in pending:
            future.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        summary.running = 0
        summary.elapsed = time.monotonic() - started
        try:
            await runner.close()
        finally:
            if results is not None:
                results.close()


def _result_of(future: asyncio.Future[TaskResult], task: Task) -> TaskResult:
    """The task's result; a backend's failure to report one is that task's error, never the batch's."""
    try:
        return future.result()
    except Exception as exc:
        logger.warning("batch task %s: no result: %s", task.id, type(exc).__name__)
        return TaskResult(id=task.id, task=task.task, status="error", error=f"{type(exc).__name__}: {exc}",
                          passed=False if task.checks else None)


def _write(results: ResultsFile, result: TaskResult) -> None:
    """Append one result; a failed write (disk full, a value that cannot be written) is logged, and the batch
    goes on (the task runs again, from its journal, in the next batch on this file)."""
    try:
        results.write(result)
    except Exception as exc:
        logger.error("results file %s: the result of task %s was not written: %s", results.path, result.id, exc)


class BatchRun:
    """The results of :func:`run_batch` as they complete (iterate once), and :attr:`summary`, live while
    the batch runs and final after it. Iterating runs the batch in a private event loop of this thread."""

    def __init__(self, make: Callable[[BatchSummary], AsyncGenerator[TaskResult, None]], concurrency: int) -> None:
        self.summary = BatchSummary()
        self._make, self._concurrency, self._started = make, concurrency, False

    def __iter__(self) -> Iterator[TaskResult]:
        if self._started:
            raise RuntimeError("a BatchRun can be iterated once")
        self._started = True
        loop = asyncio.new_event_loop()
        executor = ThreadPoolExecutor(max_workers=min(max(self._concurrency, 8), 256),
                                      thread_name_prefix="react-agent-batch")
        loop.set_default_executor(executor)  # sync-only models run here: as many threads as runs in flight
        results = self._make(self.summary)
        try:
            while True:
                try:
                    yield loop.run_until_complete(results.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            try:
                loop.run_until_complete(results.aclose())
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()
                executor.shutdown(wait=False, cancel_futures=True)

    def run(self) -> BatchSummary:
        """Run the whole batch (results go to the results file only) and return the summary."""
        for _ in self:
            pass
        return self.summary


def run_batch(agent_or_factory: BaseAgent | AgentFactory, tasks: Iterable[Any] | str | os.PathLike[str], *,
              concurrency: int = 16, journal_dir: str | os.PathLike[str] | None = None,
              out: str | os.PathLike[str] | None = None, backend: Backend = "local",
              task_timeout: float | None = None, retry: Collection[str] = (), **ray_options: Any) -> BatchRun:
    """Run ``tasks`` with an agent; returns a :class:`BatchRun` yielding each :class:`TaskResult` as it
    completes, with a live :attr:`BatchRun.summary`.

    - ``agent_or_factory``: an agent (one agent serves every concurrent run) or a callable building one
      (called once for the local backend, once per worker on Ray).
    - ``tasks``: a JSONL file path, or an iterable of task strings, mappings (``id``, ``task``, ``session``,
      ``checks``) or :class:`Task` s; read one at a time.
    - ``concurrency``: tasks in flight at most (all workers together).
    - ``journal_dir``: a folder for one journal per task (``<task id>.jsonl``); a task whose journal holds a
      run is resumed from it. ``None``: no journals (a killed batch then runs its unfinished tasks anew).
    - ``out``: the results file (JSONL, one line per task, appended as tasks end); tasks already in it are
      not run again.
    - ``backend``: ``"local"`` (asyncio in this process) or ``"ray"`` (the extra ``react-agent[ray]``);
      Ray options: ``ray_address``, ``workers``, ``worker_cpus``, ``max_restarts``, ``max_task_retries``.
    - ``task_timeout``: seconds a task may take before it is cancelled with status ``"timeout"``.
    - ``retry``: statuses (e.g. ``("error", "timeout")``) whose results are removed from ``out`` so that
      those tasks run again (resumed from their journals: a run ended by a model error continues from it).
    """
    _check_options(concurrency, task_timeout, journal_dir=journal_dir, out=out, retry=retry)

    def make(summary: BatchSummary) -> AsyncGenerator[TaskResult, None]:
        return arun_batch(agent_or_factory, tasks, concurrency=concurrency, journal_dir=journal_dir, out=out,
                          backend=backend, task_timeout=task_timeout, retry=retry, summary=summary,
                          **ray_options)

    batch = BatchRun(make, concurrency)
    batch.summary.total = _total(tasks)
    return batch


def _total(tasks: Iterable[Any] | str | os.PathLike[str]) -> int | None:
    """The number of tasks, when it is known before they run: a file's task lines, a sized collection's length."""
    if isinstance(tasks, (str, os.PathLike)):
        return count_tasks(tasks)
    return len(tasks) if isinstance(tasks, Sized) else None
