"""The Ray backend: tasks spread over worker actors, each holding one agent built by the factory.

Every worker runs up to its share of ``concurrency`` tasks at once (an async actor calling ``arun``), journals
to the shared ``journal_dir`` exactly as the local backend does, and is restarted by Ray when its process
dies (``max_restarts``); the calls it was running are retried on the new process (``max_task_retries``)
and resume from their journals, so no completed model call or tool call runs twice. The driver keeps at
most ``concurrency`` tasks submitted (backpressure) and writes the results file itself.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from react_agent.batch._records import TaskResult
from react_agent.batch._task import build_agent, run_task
from react_agent.batch._tasks import Task
from react_agent.core import BaseAgent
from react_agent.errors import ConfigError, install_hint

__all__ = ["RayBackend"]

logger = logging.getLogger("react_agent")


class _Worker:
    """The actor: one agent, many concurrent tasks."""

    def __init__(self, factory: Callable[[], BaseAgent], journal_dir: str | None, task_timeout: float | None) -> None:
        self.agent = build_agent(factory)
        self.journal_dir, self.task_timeout = journal_dir, task_timeout

    def pid(self) -> int:
        return os.getpid()

    async def run(self, task: dict[str, Any]) -> dict[str, Any]:
        result = await run_task(self.agent, Task.model_validate(task), journal_dir=self.journal_dir,
                                task_timeout=self.task_timeout)
        return result.model_dump(mode="json")


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise ConfigError(f"backend='ray' needs Ray: {install_hint('ray', 'ray')}") from None


class RayBackend:
    """Submits tasks to ``workers`` actors (default: the cluster's CPUs), at most ``concurrency`` in flight."""

    def __init__(self, agent_or_factory: BaseAgent | Callable[[], BaseAgent], *, concurrency: int,
                 journal_dir: Path | None, task_timeout: float | None, ray_address: str | None = None,
                 workers: int | None = None, worker_cpus: float = 1.0, max_restarts: int = 3,
                 max_task_retries: int = 3) -> None:
        self.ray = _import_ray()
        if isinstance(agent_or_factory, BaseAgent):
            agent = agent_or_factory

            def factory() -> BaseAgent:
                return agent
        else:
            factory = agent_or_factory
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ConfigError(f"workers must be a positive integer or None, got {workers!r}")
        self.factory, self.capacity, self.workers = factory, concurrency, workers
        self.journal_dir, self.task_timeout, self.address = journal_dir, task_timeout, ray_address
        self.worker_cpus, self.max_restarts, self.max_task_retries = worker_cpus, max_restarts, max_task_retries
        self.actors: list[Any] = []
        self.load: list[int] = []
        self._started_ray = False

    async def start(self) -> None:
        ray = self.ray
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, logging_level=logging.WARNING)
            self._started_ray = True
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1) // max(self.worker_cpus, 1e-9)))
        count = min(count, self.capacity)
        share = math.ceil(self.capacity / count)
        actor = ray.remote(num_cpus=self.worker_cpus, max_restarts=self.max_restarts,
                           max_task_retries=self.max_task_retries, max_concurrency=max(share, 1))(_Worker)
        try:
            ray.cloudpickle.dumps(self.factory)
        except Exception as exc:
            raise ConfigError(f"the agent factory cannot be sent to Ray workers ({type(exc).__name__}: {exc}); pass "
                              f"a picklable factory (a module-level function) instead of an agent") from exc
        journal_dir = None if self.journal_dir is None else str(self.journal_dir)
        self.actors = [actor.remote(self.factory, journal_dir, self.task_timeout) for _ in range(count)]
        self.load = [0] * count
        await asyncio.gather(*(asyncio.wrap_future(a.pid.remote().future()) for a in self.actors))
        logger.info("ray backend: %d workers, %d tasks each at most", count, share)

    def pids(self) -> list[int]:
        """The process ids of the workers (for tests and monitoring)."""
        return list(self.ray.get([a.pid.remote() for a in self.actors]))

    def submit(self, task: Task) -> Awaitable[TaskResult]:
        slot = min(range(len(self.actors)), key=self.load.__getitem__)
        self.load[slot] += 1
        return self._run(slot, task)

    async def _run(self, slot: int, task: Task) -> TaskResult:
        started = time.monotonic()
        try:
            ref = self.actors[slot].run.remote(task.model_dump(mode="json"))
            data = await asyncio.wrap_future(ref.future())
            return TaskResult.model_validate(data)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the worker died more often than max_restarts / max_task_retries allow
            logger.warning("ray task %s failed: %s", task.id, type(exc).__name__)
            text = str(exc).strip().splitlines()
            return TaskResult(id=task.id, task=task.task, status="error",
                              error=f"{type(exc).__name__}: {text[0] if text else ''}",
                              seconds=round(time.monotonic() - started, 6),
                              passed=False if task.checks else None)
        finally:
            self.load[slot] -= 1

    async def close(self) -> None:
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone
                logger.debug("ray actor already gone at close")
        self.actors = []
        if self._started_ray:
            self.ray.shutdown()
