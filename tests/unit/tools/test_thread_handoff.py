"""Sync work awaited from async code, and the per-class answer of whether a model has async code of its own.

- ``acall_in_thread`` hands the worker's result or exception to the awaiting loop (a ``StopIteration``, which
  no future can hold, as a ``RuntimeError``), runs the work with a copy of the caller's context, raises
  ``DeadlineExceeded`` at its limit and drops a late result;
- ``native_async`` answers per model class the same as it answers each time for a proxy object, and its
  per-class memory does not keep a class alive.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any
from unittest import mock

import pytest
from langchain_core.language_models import BaseChatModel

from react_agent.testing import FunctionChatModel, ScriptedChatModel
from react_agent.tools import DeadlineExceeded, acall_in_thread, native_async

_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("_VAR", default="unset")


def test_the_result_of_the_work_is_awaited_from_a_worker_thread() -> None:
    async def main() -> tuple[str, bool]:
        return await acall_in_thread(lambda: ("done", threading.current_thread() is threading.main_thread()), None)

    assert asyncio.run(main()) == ("done", False)


def test_an_exception_of_the_work_is_raised_to_the_caller() -> None:
    def fails() -> None:
        raise ValueError("broken")

    async def main() -> None:
        await acall_in_thread(fails, None)

    with pytest.raises(ValueError, match="broken"):
        asyncio.run(main())


def _exhausted() -> str:
    return next(iter([]))


@pytest.mark.parametrize("seconds", [None, 5.0])
def test_a_stop_iteration_of_the_work_reaches_the_caller_as_a_runtime_error(seconds: float | None) -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError, match="StopIteration") as caught:
            await asyncio.wait_for(acall_in_thread(_exhausted, seconds), 10)  # a lost result would time out here
        assert isinstance(caught.value.__cause__, StopIteration)

    asyncio.run(main())


def test_the_work_sees_the_callers_context() -> None:
    async def main() -> str:
        _VAR.set("caller")
        return await acall_in_thread(_VAR.get, 5.0)

    assert asyncio.run(main()) == "caller"


def test_the_limit_raises_deadline_exceeded_and_the_late_result_is_dropped() -> None:
    release = threading.Event()

    def slow() -> str:
        release.wait(5)
        return "late"

    async def main() -> None:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            await acall_in_thread(slow, 0.05)
        assert time.monotonic() - started < 2
        release.set()
        await asyncio.sleep(0.05)  # the late result reaches the loop, and is dropped there

    asyncio.run(main())


def test_many_concurrent_calls_each_get_their_own_result() -> None:
    async def main() -> list[int]:
        return list(await asyncio.gather(*(acall_in_thread(lambda k=k: k * k, None) for k in range(200))))

    assert asyncio.run(main()) == [k * k for k in range(200)]


def test_a_cancelled_caller_leaves_no_pending_result() -> None:
    release = threading.Event()

    async def main() -> None:
        task = asyncio.ensure_future(acall_in_thread(lambda: release.wait(5), None))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        await asyncio.sleep(0.05)

    asyncio.run(main())


class _SyncOnly(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "sync-only"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize(("model", "expected"), [
    (FunctionChatModel(function=lambda messages: "x"), True),
    (ScriptedChatModel(["x"]), False),
    (_SyncOnly(), False),
    (object(), True),
])
def test_native_async_is_the_same_answer_each_time(model: Any, expected: bool) -> None:
    assert [native_async(model) for _ in range(3)] == [expected] * 3


def test_a_proxy_that_claims_a_model_class_is_asked_each_time() -> None:
    proxy = mock.MagicMock(spec=ScriptedChatModel)
    assert isinstance(proxy, BaseChatModel)
    assert native_async(proxy) is False  # as for the class it claims: no _agenerate of its own below BaseChatModel
    assert native_async(object()) is True


def test_the_per_class_answer_does_not_keep_a_model_class_alive() -> None:
    import gc
    import weakref

    def make_class() -> type:
        class Transient(_SyncOnly):
            pass
        return Transient

    cls = make_class()
    assert native_async(cls()) is False
    ref = weakref.ref(cls)
    del cls
    gc.collect()
    assert ref() is None
