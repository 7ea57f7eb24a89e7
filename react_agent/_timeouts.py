"""Calls bounded in time: a sync call abandoned in a worker thread, an async call cancelled.

Used for the run's deadline around model calls and for tool timeouts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["DeadlineExceeded", "acall_within", "call_within"]

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The time allowed for a call ran out (the run's deadline, or a tool's timeout)."""


def call_within(fn: Callable[[], T], seconds: float | None, *, name: str = "call") -> T:
    """``fn()``, abandoned (left running in a worker thread) after ``seconds``: :class:`DeadlineExceeded`."""
    if seconds is None:
        return fn()
    if seconds <= 0:
        raise DeadlineExceeded
    ctx = contextvars.copy_context()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
    try:
        future = pool.submit(ctx.run, fn)
        done, _ = concurrent.futures.wait([future], timeout=seconds)
        if not done:
            future.cancel()
            raise DeadlineExceeded
        return future.result()
    finally:
        pool.shutdown(wait=False)


async def acall_within(fn: Callable[[], Awaitable[T]], seconds: float | None) -> T:
    """``await fn()``, cancelled after ``seconds``: :class:`DeadlineExceeded`."""
    if seconds is None:
        return await fn()
    if seconds <= 0:
        raise DeadlineExceeded
    task = asyncio.ensure_future(fn())
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except BaseException:  # the run itself was cancelled: do not leave the call running
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        raise DeadlineExceeded
    return task.result()
