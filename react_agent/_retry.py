"""Retries of transient model errors, with exponential backoff and jitter (tenacity)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

__all__ = ["RetryPolicy", "is_transient"]

logger = logging.getLogger("react_agent")
T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_TRANSIENT_NAMES = ("Timeout", "Connect", "Connection", "RateLimit", "ServerError", "ServiceUnavailable",
                    "RemoteProtocolError", "ReadError", "WriteError", "NetworkError", "APIConnection")


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying: connection problems, timeouts, HTTP 408/409/425/429/5xx.

    Recognises the standard library's ``ConnectionError``/``TimeoutError``, httpx's transport errors,
    the GigaChat SDK's ``RateLimitError``/``ServerError`` and any exception carrying an HTTP
    ``status_code`` (or ``status``/``http_status``) in the transient set, plus OpenAI-style names.
    """
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    for attr in ("status_code", "status", "http_status"):
        status = getattr(exc, attr, None)
        if isinstance(status, int):
            return status in TRANSIENT_STATUS
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int):
        return status in TRANSIENT_STATUS
    return any(part in cls.__name__ for cls in type(exc).__mro__ for part in _TRANSIENT_NAMES)


def _log(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    logger.warning("model call failed (%s), attempt %d; retrying", type(exc).__name__, state.attempt_number)


@dataclass(frozen=True)
class RetryPolicy:
    """How transient model errors are retried: ``max_attempts`` in all (1 = no retry), waits growing
    exponentially from ``initial_wait`` seconds up to ``max_wait``, plus up to ``jitter`` seconds of
    random jitter. ``retry_on`` decides which exceptions are transient."""

    max_attempts: int = 3
    initial_wait: float = 0.5
    max_wait: float = 8.0
    jitter: float = 0.5
    retry_on: Callable[[BaseException], bool] = is_transient

    def _options(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.max_attempts),
            "wait": wait_exponential_jitter(multiplier=self.initial_wait, max=self.max_wait, jitter=self.jitter),
            "retry": retry_if_exception(self.retry_on),
            "reraise": True,
            "before_sleep": _log,
        }

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()``, retried on transient errors. The first attempt runs without tenacity's machinery
        (the common case costs nothing); after a transient failure tenacity takes over from attempt 1."""
        try:
            return fn()
        except Exception as exc:
            if self.max_attempts <= 1 or not self.retry_on(exc):
                raise
            first = exc
        replay = [first]

        def attempt() -> T:
            if replay:
                raise replay.pop()
            return fn()

        return Retrying(**self._options())(attempt)

    async def acall(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Async :meth:`call`."""
        try:
            return await fn()
        except Exception as exc:
            if self.max_attempts <= 1 or not self.retry_on(exc):
                raise
            first = exc
        replay = [first]

        async def attempt() -> T:
            if replay:
                raise replay.pop()
            return await fn()

        return await AsyncRetrying(**self._options())(attempt)
