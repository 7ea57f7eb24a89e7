"""Plain helpers of a run, outside the agent class: the task of a Runnable input, the model's failure as the
run reports it, and the payloads of the run's callback events."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue

from react_agent._types import AgentResult, AgentStep
from react_agent.errors import ConfigError
from react_agent.runtime._driver import message_text, safe_str
from react_agent.runtime._retry import explain_model_error
from react_agent.runtime._state import ModelCallError

__all__ = ["STEP_EVENT", "end_payload", "last", "model_error", "step_data", "task_of"]

STEP_EVENT = "react_agent.step"
"""The name of the custom callback event sent for each completed step (``astream_events``: ``on_custom_event``)."""


def task_of(input: Any) -> tuple[str, dict[str, Any]]:
    """The task text of a Runnable input, and the run options it carries (``session``, ``journal``)."""
    extra: dict[str, Any] = {}
    value = input
    if isinstance(input, Mapping) and "role" in input and "content" in input:  # one OpenAI-style message
        value = [input]
    elif isinstance(input, Mapping):
        key = next((k for k in ("input", "task", "question", "messages") if k in input), None)
        if key is None:
            raise ConfigError(f"a dict input needs the key 'input' (or 'task', 'question', 'messages'); got keys "
                              f"{sorted(map(str, input))}")
        value = input[key]
        extra = {k: input[k] for k in ("session", "journal", "chat_history") if k in input}
    if isinstance(value, PromptValue):
        value = value.to_messages()
    if isinstance(value, BaseMessage):
        value = [value]
    if isinstance(value, (list, tuple)) and value and not all(isinstance(m, BaseMessage) for m in value):
        value = _messages(value)
    if isinstance(value, list) and value and all(isinstance(m, BaseMessage) for m in value):
        last = max((i for i, m in enumerate(value) if m.type == "human"), default=len(value) - 1)
        if last and "chat_history" not in extra:  # the earlier messages are the conversation
            extra["chat_history"] = value[:last]
        value = message_text(value[last])
    if not isinstance(value, str):
        where = "" if value is input else f" (in the {type(input).__name__})"
        raise ConfigError(f"the task must be a string, a PromptValue, a list of messages or a dict with 'input'; "
                          f"got {type(value).__name__}{where}")
    if not value.strip():
        raise ConfigError("the task is empty: pass the text of the task")
    return value, extra


def _messages(value: list[Any] | tuple[Any, ...]) -> list[BaseMessage]:
    """Message-like items (``(role, text)`` pairs, ``{"role": ..., "content": ...}`` dicts, strings,
    messages) as messages."""
    try:
        return convert_to_messages(list(value))
    except (ValueError, TypeError, NotImplementedError, KeyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"the task must be a string, a PromptValue, a list of messages or a dict with 'input' "
                          f"((role, text) pairs and {{'role': ..., 'content': ...}} dicts are messages too); got "
                          f"{type(value).__name__} with an item that is not a message: {first}") from None


def model_error(exc: Exception) -> ModelCallError | ConfigError:
    """The model's failure, with what to change when it comes from the setup (a rejected request...); a
    :class:`ConfigError` for a setup mistake every call would meet (a package or a file that is missing)."""
    setup = setup_error(exc)
    if setup is not None:
        return setup
    hint = explain_model_error(exc)
    return ModelCallError(f"{type(exc).__name__}: {safe_str(exc)}" + (f" ({hint})" if hint else ""))


def setup_error(exc: BaseException) -> ConfigError | None:
    """The :class:`ConfigError` of a model call that failed on a missing package or a missing file (a CA
    bundle, a certificate, weights), looked for along the exception's causes; ``None`` otherwise."""
    seen: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(seen) < 8 and not any(cause is s for s in seen):
        seen.append(cause)
        if isinstance(cause, ConfigError):
            return cause
        if isinstance(cause, ImportError):
            package = cause.name or "a package"
            return ConfigError(f"the model needs {package}, which is not installed ({safe_str(cause)}): install it")
        if isinstance(cause, (FileNotFoundError, IsADirectoryError)) and cause.filename:
            return ConfigError(f"the model's setup names a file that does not exist: {cause.filename} (check its "
                               f"path settings: a CA bundle, certificate, key or weights file)")
        if isinstance(cause, FileNotFoundError):
            return ConfigError(f"the model's setup names a file that does not exist ({safe_str(cause)}): check "
                               f"its path settings (ca_bundle_file, cert_file, key_file, SSL_CERT_FILE)")
        cause = cause.__cause__ or cause.__context__
    return None


def step_data(index: int, step: AgentStep) -> dict[str, Any]:
    """The data of the :data:`STEP_EVENT` of a completed step (``index``: its 1-based place in the run)."""
    return {"index": index, "step": step}


def end_payload(result: AgentResult) -> dict[str, Any]:
    """The outputs the run's callback ``on_chain_end`` reports."""
    return {"output": result.output, "status": result.status, "steps": len(result.steps),
            "llm_calls": result.llm_calls, "usage": result.usage.model_dump()}


def last(items: Iterator[AgentStep | AgentResult]) -> AgentResult:
    """The last item of a run's stream: its result."""
    result = None
    for result in items:  # noqa: B007 - the last item is the result
        pass
    assert isinstance(result, AgentResult)
    return result
