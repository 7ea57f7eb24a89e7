"""Retries of transient model errors, with exponential backoff and jitter (tenacity).

A request the server *rejects* (HTTP 400/422, or a 500 whose body is a request-validation error, as
llama-cpp-python's server answers a ``response_format`` it does not know) is never retried: the same
request fails the same way. :func:`explain_model_error` turns such failures, and an unreachable
server, into a sentence that says which option to change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import logging
import math
import random
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
)

from react_agent.errors import ConfigError
from react_agent.tools import short_repr

__all__ = ["RetryPolicy", "explain_model_error", "is_request_rejection", "is_transient", "seconds_problem"]

logger = logging.getLogger("react_agent")
T = TypeVar("T")
P = TypeVar("P", bound="RetryPolicy")

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_TRANSIENT_NAMES = ("Timeout", "Connect", "Connection", "RateLimit", "ServerError", "ServiceUnavailable",
                    "RemoteProtocolError", "ReadError", "WriteError", "NetworkError", "APIConnection")


_REJECTED_STATUS = frozenset({400, 422})
# Text of a request-validation failure in an error body: pydantic (llama-cpp-python's server, vLLM),
# OpenAI's error type, and servers that name the offending parameter.
_VALIDATION = re.compile(
    r"validation error|literal_error|Input should be|Field required|Extra inputs are not permitted"
    r"|invalid_request_error|response_format|unsupported parameter|unrecognized request argument",
    re.IGNORECASE,
)
_CONTEXT = re.compile(r"context length|context window|maximum context|context_length_exceeded|exceed.{0,20}context",
                      re.IGNORECASE)
_MAX_DETAIL = 300


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        status = getattr(exc, attr, None)
        if isinstance(status, int):
            return status
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _body_text(exc: BaseException) -> str:
    """What the server said: the error body (OpenAI SDK ``body``, GigaChat ``content``, an httpx
    response's text), else the exception's text."""
    parts: list[str] = []
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") if isinstance(body.get("message"), str) else None
        parts.append(message or json.dumps(body, default=str))
    elif isinstance(body, (str, bytes)):
        parts.append(body.decode("utf-8", "replace") if isinstance(body, bytes) else body)
    content = getattr(exc, "content", None)
    if isinstance(content, (bytes, str)) and content:
        parts.append(content.decode("utf-8", "replace") if isinstance(content, bytes) else content)
    response = getattr(exc, "response", None)
    if not parts and response is not None:
        with contextlib.suppress(Exception):  # a streamed response that was never read has no text
            parts.append(str(response.text))
    if not parts:
        parts.append(str(exc))
    return " ".join(parts)


def is_request_rejection(exc: BaseException) -> bool:
    """Whether the server rejected the request itself (HTTP 400/422, or a 5xx whose body is a
    request-validation error): sending it again cannot help."""
    status = _status_of(exc)
    if status in _REJECTED_STATUS:
        return True
    return status is not None and status >= 500 and bool(_VALIDATION.search(_body_text(exc)))


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying: connection problems, timeouts, HTTP 408/409/425/429/5xx.

    Recognises the standard library's ``ConnectionError``/``TimeoutError``, httpx's transport errors,
    the GigaChat SDK's ``RateLimitError``/``ServerError`` and any exception carrying an HTTP
    ``status_code`` (or ``status``/``http_status``) in the transient set, plus OpenAI-style names.
    A 5xx whose body is a request-validation error is not transient (:func:`is_request_rejection`).
    """
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    status = _status_of(exc)
    if status is not None:
        return status in TRANSIENT_STATUS and not is_request_rejection(exc)
    return any(part in cls.__name__ for cls in type(exc).__mro__ for part in _TRANSIENT_NAMES)


def _detail(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _request_url(exc: BaseException) -> str | None:
    for source in (exc, exc.__cause__, exc.__context__):
        if source is None:
            continue
        try:
            url = source.request.url  # type: ignore[attr-defined]
        except Exception:  # no request (httpx raises RuntimeError when it is unset)
            continue
        if url is not None:
            return str(url)
    return None


def _is_connection_failure(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"APIConnectionError", "ConnectError", "ConnectTimeout"}) and "APITimeoutError" not in names


def _explain_rejection(text: str, said: str) -> str:
    """The option to change for a rejected request whose body is ``text`` (``said`` quotes it)."""
    lowered = text.lower()
    if _CONTEXT.search(text):
        return (f"the prompt does not fit the model's context ({said}); lower history_window or "
                "max_observation_chars, or give the server a larger context")
    # the type itself refused (llama-cpp-python: "Input should be 'text' or 'json_object'"; OpenAI: "not supported")
    type_refused = "json_schema" in lowered and any(
        word in lowered for word in ("json_object", "not supported", "input should be", "unsupported"))
    if "invalid schema" in lowered or ("schema" in lowered and not type_refused and "json_object" not in lowered):
        return (f"the server rejected the answer schema ({said}); pass constrained='json_object' "
                "or constrained=False")
    if "json_schema" in lowered:
        return (f"the server rejected response_format of type 'json_schema' ({said}); pass "
                "constrained='json_object' (llama-cpp-python's server) or constrained=False")
    if "json_object" in lowered:
        return (f"the server rejected response_format of type 'json_object' ({said}); pass "
                "constrained='json_schema' or constrained=False")
    if "response_format" in lowered or "grammar" in lowered:
        return (f"the server rejected the structured-output request ({said}); pass another constrained "
                "mode ('json_schema', 'json_object', 'grammar') or constrained=False")
    return f"the server rejected the request ({said}); check the model name and the agent's model options"


def explain_model_error(exc: BaseException) -> str | None:
    """A sentence for a model call that failed because of the setup, saying what to change; ``None``
    for other failures.

    * a rejected ``response_format`` of type ``json_schema`` -> pass ``constrained='json_object'``
      (llama-cpp-python's server) or ``constrained=False``; of type ``json_object`` -> ``'json_schema'``;
      a rejected answer schema or grammar -> another mode or ``False``;
    * a prompt longer than the model's context -> ``history_window``/``max_observation_chars``;
    * any other rejected request (:func:`is_request_rejection`) -> the server's words and the status;
    * HTTP 401/403 -> the API key; 404 -> the model name and ``base_url``;
    * the OpenAI SDK's ``LengthFinishReasonError`` (a ``response_format`` reply cut by ``max_tokens``) ->
      ``max_tokens``;
    * an unreachable server -> its URL.
    """
    if "LengthFinishReasonError" in {cls.__name__ for cls in type(exc).__mro__}:
        return ("the reply was cut at the token limit before it was complete (OpenAI SDK's parse() of a "
                "response_format); raise the model's max_tokens, or let react_agent pass the response_format")
    status = _status_of(exc)
    if is_request_rejection(exc):
        text = _body_text(exc)
        return _explain_rejection(text, f"HTTP {status}: {_detail(text)}")
    if status in (401, 403):
        return f"the server refused the credentials (HTTP {status}); check the API key"
    if status == 404:
        where = _request_url(exc)
        return f"HTTP 404 from {where or 'the server'}: check the model name and base_url"
    if _is_connection_failure(exc):
        where = _request_url(exc)
        return f"cannot reach the model server at {where or 'its URL'}: is it running? check base_url"
    return None


def _log(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    logger.warning("model call failed (%s), attempt %d; retrying", type(exc).__name__, state.attempt_number)


def seconds_problem(value: object, *, allow_zero: bool = False, allow_none: bool = False) -> str | None:
    """What is wrong with ``value`` as an option of seconds to wait, or ``None`` when it is fine.

    The one check of every wait option (the agent's ``timeout`` and ``max_execution_time``, the waits of a
    :class:`RetryPolicy`, a batch's ``task_timeout``), so that the same value gets the same answer in each:
    a real number (an ``int`` or ``float``, never a ``bool``), finite, positive (``allow_zero``: ``>= 0``),
    and at most ``threading.TIMEOUT_MAX``, the longest a thread or a sleep can wait (an ``int`` too large
    for a float is refused there, never an ``OverflowError``). ``allow_none``: ``None`` (no limit) is fine.

    The answer completes a sentence that begins with the option's name and ends with the value, e.g.
    ``f"task_timeout {problem}, got {short_repr(value)}"``: ``"must be None or positive seconds (a finite
    number)"`` for a wrong type, a non-finite value or one out of range, ``"must be at most
    threading.TIMEOUT_MAX = 9.22337e+09 seconds"`` for one above it.
    """
    if value is None and allow_none:
        return None
    expected = "seconds >= 0" if allow_zero else "positive seconds"
    wrong = (f"must be {'None or ' if allow_none else ''}{expected} "
             f"(a finite number{', not a bool' if isinstance(value, bool) else ''})")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return wrong
    if isinstance(value, float) and not math.isfinite(value):
        return wrong
    if value < 0 if allow_zero else value <= 0:  # an int of any size compares exactly, as below
        return wrong
    if value > threading.TIMEOUT_MAX:  # what a thread or a sleep can wait: a longer wait raises OverflowError
        return f"must be at most threading.TIMEOUT_MAX = {threading.TIMEOUT_MAX:g} seconds"
    return None


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

    def __new__(cls: type[P], *args: Any, **kwargs: Any) -> P:
        """Refuse what the dataclass's ``__init__`` cannot take (an unknown option, too many positional ones,
        one given twice) as a :class:`ConfigError` that lists the options, never a bare ``TypeError``. Only
        the arguments are looked at here: ``__init__`` sets the fields and ``__post_init__`` checks them."""
        names = [field.name for field in dataclasses.fields(cls) if field.init]
        options = ", ".join(names)
        if len(args) > len(names):
            raise ConfigError(f"{cls.__name__}: at most {len(names)} options by position ({options}), got {len(args)}")
        for name in kwargs:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ConfigError(f"{cls.__name__}: unknown option {short_repr(name)}{hint}; options: {options}")
            if name in names[:len(args)]:
                raise ConfigError(f"{cls.__name__}: {name} is given twice, by position and by name")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        attempts = self.max_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ConfigError(f"RetryPolicy: max_attempts must be an integer >= 1 (1: no retry), "
                              f"got {short_repr(attempts)}")
        for name in ("initial_wait", "max_wait", "jitter"):
            value = getattr(self, name)
            problem = seconds_problem(value, allow_zero=True)
            if problem is not None:
                raise ConfigError(f"RetryPolicy: {name} {problem}, got {short_repr(value)}")
        if not callable(self.retry_on):
            raise ConfigError(f"RetryPolicy: retry_on must be a function of the exception returning True to retry, "
                              f"got {short_repr(self.retry_on)}")

    def _options(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.max_attempts),
            "wait": self._wait,
            "retry": retry_if_exception(self.retry_on),
            "reraise": True,
            "before_sleep": _log,
        }

    def _wait(self, retry_state: RetryCallState) -> float:
        """Seconds before the next attempt: ``initial_wait * 2 ** (attempt - 1)`` plus up to ``jitter`` seconds,
        at most ``max_wait`` (tenacity's exponential-jitter wait, written here because its parameters were
        renamed between tenacity releases)."""
        exponential = self.initial_wait * 2.0 ** min(retry_state.attempt_number - 1, 64)  # never an overflow
        return max(0.0, min(exponential + random.uniform(0, self.jitter), self.max_wait))

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
