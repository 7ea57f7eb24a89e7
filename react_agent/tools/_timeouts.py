"""Calls bounded in time, whose abandoned work can never keep the process alive.

Used for the run's deadline around model calls and for tool timeouts.

- A sync call with a time limit runs in a **daemon** thread of its own. When the time runs out the
  caller gets :class:`DeadlineExceeded` at once and the thread is *abandoned*: Python cannot stop a
  thread, so it keeps running until the call returns by itself; whatever it returns or raises then is
  dropped; being a daemon thread, it never delays interpreter exit (``concurrent.futures`` and the
  event loop's default executor use non-daemon threads that are joined at exit, so a hung call in them
  hangs the process).
- An async call is a task, cancelled when the time runs out (it receives ``CancelledError``).
- An awaitable that must be finished from sync code runs on a private event loop in a daemon thread;
  when the time runs out its task is cancelled there, and the thread is abandoned as above.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import queue
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

__all__ = [
    "DaemonExecutor",
    "DeadlineExceeded",
    "acall_in_thread",
    "acall_model_within",
    "acall_within",
    "call_within",
    "implements",
    "in_daemon_thread",
    "native_async",
    "run_awaitable_within",
]

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The time allowed for a call ran out (the run's deadline, or a tool's timeout)."""


def in_daemon_thread(fn: Callable[[], T], *, name: str = "call") -> concurrent.futures.Future[T]:
    """Start ``fn()`` in a daemon thread (with a copy of the caller's context); its future.

    An idle worker of a small pool is reused when there is one (a call under ``arun`` costs no thread
    start); a worker whose call hangs is simply never idle again, and new work gets a new daemon thread.
    The future is running from the start: it cannot be cancelled.
    """
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    future.set_running_or_notify_cancel()
    _submit(_job(fn, functools.partial(_settle, future)))
    return future


def _job(fn: Callable[[], T], deliver: Callable[[T | None, BaseException | None], None]) -> Callable[[], None]:
    """``fn`` as a worker's job, run in a copy of the caller's context; ``deliver(result, exception)`` gets
    its outcome (whoever waits receives it; an abandoned call's outcome is dropped).

    A ``StopIteration`` (an exhausted ``next()`` in a tool or a scripted model) cannot be set on a future, so
    it is delivered as a ``RuntimeError`` caused by it, as a coroutine raises it (PEP 479), instead of leaving
    the caller waiting forever."""
    ctx = contextvars.copy_context()

    def work() -> None:
        try:
            result = ctx.run(fn)
        except StopIteration as exc:
            deliver(None, _escaped(exc))
        except BaseException as exc:
            deliver(None, exc)
        else:
            deliver(result, None)

    return work


def _escaped(exc: StopIteration) -> RuntimeError:
    error = RuntimeError(f"the call raised StopIteration{f': {exc}' if str(exc) else ''}")
    error.__cause__ = exc
    return error


def _settle(future: concurrent.futures.Future[T], result: T | None, exc: BaseException | None) -> None:
    if exc is None:
        future.set_result(cast(T, result))
    else:
        future.set_exception(exc)


def _submit(job: Callable[[], None]) -> None:
    """Run ``job`` on an idle worker of the pool, or on a new daemon thread when none is idle."""
    with _IDLE_LOCK:
        worker = _IDLE.pop() if _IDLE else None
    if worker is None:
        worker = _Worker()
        worker.start()
    worker.jobs.put(job)


_IDLE: list[_Worker] = []
_IDLE_LOCK = threading.Lock()
_MAX_IDLE = 32
_IDLE_SECONDS = 30.0


class _Worker(threading.Thread):
    """A daemon thread that runs jobs and waits, idle, for the next one (it exits after a while idle)."""

    def __init__(self) -> None:
        super().__init__(name="react-agent-worker", daemon=True)
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with _IDLE_LOCK:
                    if self in _IDLE:
                        _IDLE.remove(self)
                        return
                continue  # a job was handed over just now
            job()
            with _IDLE_LOCK:
                if len(_IDLE) >= _MAX_IDLE:
                    return
                _IDLE.append(self)


class DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """An executor with one daemon thread per task; ``shutdown`` never waits for abandoned work.

    Installed as the default executor of the private event loops below, so that a coroutine that
    hands blocking work to ``run_in_executor(None, ...)`` cannot hang the loop's shutdown or the exit.
    (A ``ThreadPoolExecutor`` only because ``loop.set_default_executor`` requires one; no pool is used.)
    """

    def __init__(self, name: str = "executor") -> None:
        super().__init__(max_workers=1, thread_name_prefix=name)
        self._name = name

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        return in_daemon_thread(lambda: fn(*args, **kwargs), name=self._name)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to join: work still running is abandoned (daemon threads)."""


def call_within(fn: Callable[[], T], seconds: float | None, *, name: str = "call") -> T:
    """``fn()``; with ``seconds``, in a daemon thread abandoned after ``seconds``: :class:`DeadlineExceeded`.

    Without a limit ``fn`` runs in the calling thread. What ``fn`` raises is raised here (a
    ``TimeoutError`` of its own included: only the limit gives :class:`DeadlineExceeded`).
    """
    if seconds is None:
        return fn()
    if seconds <= 0:
        raise DeadlineExceeded
    future = in_daemon_thread(fn, name=name)
    done, _ = concurrent.futures.wait([future], timeout=seconds)
    if not done:
        raise DeadlineExceeded
    return future.result()


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
        task.add_done_callback(_retrieve)
        raise DeadlineExceeded
    return task.result()


async def acall_in_thread(fn: Callable[[], T], seconds: float | None, *, name: str = "call") -> T:
    """Await sync ``fn()`` run in a daemon thread (never the loop's default executor).

    After ``seconds`` (``None``: no limit) :class:`DeadlineExceeded` is raised and the thread is
    abandoned. Use it for blocking work under ``arun`` so that ``asyncio.run`` can return and the
    interpreter exit even when the work never ends. The worker hands its result straight to the
    awaiting loop (no ``concurrent.futures.Future`` in between).
    """
    if seconds is not None and seconds <= 0:
        raise DeadlineExceeded
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[T] = loop.create_future()
    _submit(_job(fn, functools.partial(_deliver, loop, waiter)))
    if seconds is None:  # no limit: wait for the result itself (a cancelled run cancels the waiter with it)
        return await waiter
    try:
        done, _ = await asyncio.wait({waiter}, timeout=seconds)
    except BaseException:
        waiter.cancel()
        raise
    if not done:
        waiter.cancel()  # a late result is dropped
        raise DeadlineExceeded
    return waiter.result()


def _deliver(loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[T], result: T | None,
             exc: BaseException | None) -> None:
    """Hand a worker's result (or exception) to ``waiter`` on its loop, unless it is done (cancelled)."""
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
        loop.call_soon_threadsafe(_transfer, waiter, result, exc)


def _transfer(waiter: asyncio.Future[T], result: T | None, exc: BaseException | None) -> None:
    if waiter.done():
        return
    if exc is None:
        waiter.set_result(cast(T, result))
    else:
        waiter.set_exception(exc)


def run_awaitable_within(make: Callable[[], Awaitable[T]], seconds: float | None, *, name: str = "async") -> T:
    """Run ``await make()`` to completion from sync code, on a private event loop in a daemon thread.

    Works whether or not the calling thread runs an event loop itself. After ``seconds`` (``None``: no
    limit) the task is cancelled on its loop (it receives ``CancelledError``), the thread is abandoned
    and :class:`DeadlineExceeded` is raised. The private loop's default executor is a
    :class:`DaemonExecutor`.
    """
    if seconds is not None and seconds <= 0:
        raise DeadlineExceeded
    started = threading.Event()
    holder: dict[str, Any] = {}

    def work() -> T:
        loop = asyncio.new_event_loop()
        loop.set_default_executor(DaemonExecutor(name))
        try:
            asyncio.set_event_loop(loop)
            task = loop.create_task(_await(make))
            holder["cancel"] = lambda: loop.call_soon_threadsafe(task.cancel)
            started.set()
            return loop.run_until_complete(task)
        finally:
            started.set()
            _close_private_loop(loop)

    future = in_daemon_thread(work, name=name)
    done, _ = concurrent.futures.wait([future], timeout=seconds)
    if not done:
        started.wait(timeout=1.0)
        cancel = holder.get("cancel")
        if cancel is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed in between: the call just ended
                cancel()
        raise DeadlineExceeded
    return future.result()


async def _await(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def _close_private_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the call left running, finish async generators, close the loop."""
    try:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a cancelled call's late exception as retrieved (it is dropped on purpose)."""
    if not task.cancelled():
        task.exception()


def native_async(model: Any) -> bool:
    """Whether ``model.ainvoke`` runs the model's own async code.

    ``False`` for a LangChain chat model or LLM that implements only the sync ``_generate``: its
    ``ainvoke`` runs ``_generate`` in the event loop's default executor, whose non-daemon threads
    ``asyncio.run`` joins at the end, so a hung call would hang the process. Anything that is not a
    LangChain model is taken as natively async.
    """
    cls = type(model)
    if model.__class__ is not cls:  # a proxy that claims another class (a mock with a spec): asked each time
        return _native_async_uncached(model)
    native = _NATIVE.get(cls)
    if native is None:
        native = _NATIVE[cls] = _native_async_uncached(model)
    return native


_NATIVE: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()
""":func:`native_async` per model class (the answer depends on the class alone)."""


def _native_async_uncached(model: Any) -> bool:
    from langchain_core.language_models import BaseChatModel, BaseLLM, SimpleChatModel
    from langchain_core.language_models.llms import LLM

    if isinstance(model, BaseChatModel):
        return implements(type(model), "_agenerate", BaseChatModel, SimpleChatModel)
    if isinstance(model, BaseLLM):
        return implements(type(model), "_agenerate", BaseLLM, LLM)
    return True


def implements(cls: type, hook: str, *bases: type) -> bool:
    """Whether ``cls`` defines ``hook`` itself, below ``bases`` in its MRO: the documented extension point
    of a LangChain model or tool (``_agenerate``, ``_arun``), asked about and never called."""
    for klass in cls.__mro__:
        if klass in bases:
            return False
        if hook in vars(klass):
            return True
    return False


async def acall_model_within(
    model: Any, async_call: Callable[[], Awaitable[T]], sync_call: Callable[[], T], seconds: float | None
) -> T:
    """A model call from async code, bounded by ``seconds``: :class:`DeadlineExceeded`.

    ``await async_call()`` (cancelled at the limit) when the model has :func:`native_async` code,
    else ``sync_call()`` in a daemon thread (abandoned at the limit), so that an abandoned call can
    never keep ``asyncio.run`` or the interpreter from ending.
    """
    if native_async(model):
        return await acall_within(async_call, seconds)
    return await acall_in_thread(sync_call, seconds, name="model")
