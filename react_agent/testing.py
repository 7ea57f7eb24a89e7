"""Public test doubles: a chat model that plays a script and records every call.

Use it to test your own agents the way react_agent tests itself::

    from react_agent import ReactAgent
    from react_agent.testing import ScriptedChatModel

    llm = ScriptedChatModel(responses=['{"action": "FINISH", "action_input": "done"}'])
    result = ReactAgent(llm, tools=[]).run("anything")
    assert result.output == "done"
    assert "anything" in llm.calls[0].text
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from react_agent.errors import ConfigError
from react_agent.runtime import seconds_problem
from react_agent.tools import short_repr

__all__ = ["FunctionChatModel", "RecordedCall", "ScriptExhaustedError", "ScriptedChatModel"]


class ScriptExhaustedError(AssertionError):
    """The model was called more times than its script has responses."""


@dataclass(frozen=True)
class RecordedCall:
    """One call the scripted model received: its messages, keyword options and the reply it gave."""

    messages: list[BaseMessage]
    kwargs: dict[str, Any] = field(default_factory=dict)
    response: str = ""

    @property
    def text(self) -> str:
        """All message contents joined: what the model 'saw'."""
        return "\n\n".join(str(m.content) for m in self.messages)


class ScriptedChatModel(BaseChatModel):
    """A langchain-core chat model that returns ``responses`` in order and records every call.

    - ``responses``: texts (or ``AIMessage`` objects, or exceptions to raise) in the order to return them.
    - ``calls``: one :class:`RecordedCall` per call received.
    - When the script runs out it raises :class:`ScriptExhaustedError` — it never cycles.
    - ``usage``: when true, replies carry ``usage_metadata`` (whitespace-separated word counts), so
      token accounting can be tested.
    - ``supports_json_schema``: declare the constrained-decoding capability, to test that path.
    """

    responses: list[Any]
    usage: bool = False
    supports_json_schema: bool = False
    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, responses: Sequence[Any] | None = None, **kwargs: Any) -> None:
        if isinstance(responses, (str, bytes, AIMessage, Mapping)) or not isinstance(responses, (Iterable, type(None))):
            raise ConfigError(f"ScriptedChatModel takes a list of responses, e.g. ScriptedChatModel([reply]), "
                              f"got {type(responses).__name__}")
        responses = list(responses or [])
        for number, item in enumerate(responses, 1):
            if not isinstance(item, (str, AIMessage, BaseException)):
                raise ConfigError(f"ScriptedChatModel: response {number} must be a text, an AIMessage or an "
                                  f"exception to raise, got {type(item).__name__}")
        super().__init__(responses=responses, **kwargs)

    @property
    def calls(self) -> list[RecordedCall]:
        return self._calls

    @property
    def remaining(self) -> int:
        return len(self.responses) - len(self._calls)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            index = len(self._calls)
            if index >= len(self.responses):
                raise ScriptExhaustedError(
                    f"ScriptedChatModel: call {index + 1} but the script has only {len(self.responses)} responses;"
                    f" last prompt was:\n{messages[-1].content if messages else ''}"
                )
            item = self.responses[index]
            if stop is not None:
                kwargs = {**kwargs, "stop": stop}
            text = item.content if isinstance(item, AIMessage) else ("" if isinstance(item, BaseException) else item)
            self._calls.append(RecordedCall(list(messages), dict(kwargs), str(text)))
        if isinstance(item, BaseException):
            raise item
        message = item if isinstance(item, AIMessage) else AIMessage(content=item)
        return _result(message, messages, usage=self.usage)


def _result(message: AIMessage, messages: list[BaseMessage], *, usage: bool) -> ChatResult:
    """The chat result of ``message``; with ``usage``, it reports whitespace-separated word counts as tokens."""
    if usage and message.usage_metadata is None:
        prompt_words = sum(len(str(m.content).split()) for m in messages)
        out_words = len(str(message.content).split())
        message = message.model_copy(update={"usage_metadata": {
            "input_tokens": prompt_words, "output_tokens": out_words, "total_tokens": prompt_words + out_words}})
    return ChatResult(generations=[ChatGeneration(message=message)])


class FunctionChatModel(BaseChatModel):
    """A langchain-core chat model whose reply is ``function(messages)``, and which records every call.

    Unlike :class:`ScriptedChatModel` (a queue), the reply depends only on the prompt, so one model can
    serve many concurrent runs deterministically::

        def reply(messages):
            text = messages[-1].content
            return '{"action": "FINISH", "action_input": "ok"}' if "Observation" in text else ...

        llm = FunctionChatModel(function=reply)

    The function may return a text, an ``AIMessage``, or raise (the model failed). ``usage`` and
    ``supports_json_schema`` behave as in :class:`ScriptedChatModel`; ``delay`` sleeps that many seconds
    per call (``asyncio.sleep`` in the async path), to test concurrency and deadlines.
    """

    function: Any
    usage: bool = False
    supports_json_schema: bool = False
    delay: float = 0.0
    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, **kwargs: Any) -> None:
        if not callable(kwargs.get("function")):
            raise ConfigError(f"FunctionChatModel needs function=<a callable of the messages returning the reply>, "
                              f"got {kwargs.get('function')!r}")
        delay = kwargs.get("delay", 0.0)
        problem = seconds_problem(delay, allow_zero=True)  # the check of every wait option
        if problem is not None:
            raise ConfigError(f"FunctionChatModel: delay {problem}, got {short_repr(delay)}")
        super().__init__(**kwargs)

    @property
    def calls(self) -> list[RecordedCall]:
        return self._calls

    @property
    def _llm_type(self) -> str:
        return "function"

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        item = self.function(list(messages))
        text = item.content if isinstance(item, AIMessage) else str(item)
        with self._lock:
            self._calls.append(RecordedCall(list(messages), dict(kwargs), str(text)))
        message = item if isinstance(item, AIMessage) else AIMessage(content=str(item))
        return _result(message, messages, usage=self.usage)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.delay:
            time.sleep(self.delay)
        return self._reply(messages, kwargs)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._reply(messages, kwargs)
