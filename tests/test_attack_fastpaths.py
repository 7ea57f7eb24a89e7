"""Attacks on the per-step fast paths: each must give exactly what the general path gives.

The direct model and tool calls (``_fastpath``), the history rendered item by item (``PromptSet.render_item``)
and the parser's whole-object shortcut are compared with the stock path on the same input: a run with a
callback handler takes langchain-core's ``invoke``, the same run without one takes the direct path.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from typing import Annotated, Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import InjectedToolArg, StructuredTool, ToolException
from pydantic import BaseModel, Field, ValidationError

from react_agent import PromptSet, ReactAgent, ReflectionAgent
from react_agent._fastpath import direct_model, invoke_model
from react_agent.testing import FunctionChatModel, ScriptedChatModel
from tests.conftest import call, finish


class Events(BaseCallbackHandler):
    """Records the callback events of the runs it is given to, with their run ids."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.tasks: set[str] = set()
        self.lock = threading.Lock()

    def _add(self, name: str) -> None:
        with self.lock:
            self.names.append(name)

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if isinstance(inputs, dict) and "task" in inputs:
            self.tasks.add(str(inputs["task"]))

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._add("chat_model_start")
        for batch in messages:
            for message in batch:
                with self.lock:
                    self.tasks.add(str(message.content))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._add("llm_end")

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, **kwargs: Any) -> None:
        self._add("tool_start")

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._add("tool_end")

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._add("tool_error")


def lookup(key: str) -> str:
    """Look up a value."""
    return f"value of {key}"


def steps_of(result: Any) -> list[tuple[Any, ...]]:
    return [(s.action, s.action_input, s.observation, s.is_error) for s in result.steps]


def both(make_model: Any, tools: list[Any], task: str = "task", **options: Any) -> tuple[Any, Any, Events]:
    """The same run without listeners (the direct path) and with a callback handler (stock ``invoke``)."""
    plain = ReactAgent(make_model(), tools, prompts="en", **options).run(task)
    events = Events()
    traced = ReactAgent(make_model(), tools, prompts="en", **options).run(task, config={"callbacks": [events]})
    return plain, traced, events


def aboth(make_model: Any, tools: list[Any], task: str = "task", **options: Any) -> tuple[Any, Any, Events]:
    """:func:`both` under ``arun``."""
    plain = asyncio.run(ReactAgent(make_model(), tools, prompts="en", **options).arun(task))
    events = Events()
    traced = asyncio.run(ReactAgent(make_model(), tools, prompts="en", **options).arun(
        task, config={"callbacks": [events]}))
    return plain, traced, events


def same(plain: Any, traced: Any) -> None:
    assert (plain.status, plain.output, plain.usage, plain.llm_calls, plain.error) == (
        traced.status, traced.output, traced.usage, traced.llm_calls, traced.error)
    assert steps_of(plain) == steps_of(traced)


def quiet_config() -> RunnableConfig:
    """A config whose callbacks are a manager without handlers: what a run without listeners passes."""
    return ensure_config({"callbacks": CallbackManager(handlers=[])})


def loud_config() -> RunnableConfig:
    return ensure_config({"callbacks": CallbackManager(handlers=[Events()])})


# =========================================================================================== the direct model path
class Unguarded(BaseChatModel):
    """Uses its run manager without checking it for ``None``, as ``invoke`` always hands one."""

    @property
    def _llm_type(self) -> str:
        return "unguarded"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        run_manager.on_llm_new_token("")
        assert isinstance(run_manager.run_id, UUID)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=finish("ok")))])


def test_a_model_that_uses_its_run_manager_unguarded_works_on_the_direct_path() -> None:
    plain, traced, _ = both(Unguarded, [lookup])
    same(plain, traced)
    assert plain.status == "finished"


class Several(BaseChatModel):
    """Two generations, ``llm_output``, ``generation_info`` with the gateway key, no run manager parameter."""

    @property
    def _llm_type(self) -> str:
        return "several"

    def _generate(self, messages: Any, stop: Any = None, **kwargs: Any) -> ChatResult:  # no run_manager
        text = finish(f"stop={stop} kw={sorted(kwargs)}")
        gens = [ChatGeneration(message=AIMessage(content=text, response_metadata={"a": 1}),
                               generation_info={"finish_reason": "stop", "lc_gateway_metadata": {"x": 1}, "a": 2}),
                ChatGeneration(message=AIMessage(content="second"), generation_info=None)]
        return ChatResult(generations=gens, llm_output={"token_usage": {"prompt_tokens": 5, "completion_tokens": 1}})


def _without_id(message: BaseMessage) -> dict[str, Any]:
    return {k: v for k, v in message.model_dump().items() if k != "id"}


@pytest.mark.parametrize("kwargs", [{}, {"stop": ["\nObservation"]}, {"temperature": 0.1, "stream": False}])
def test_direct_reply_is_invokes_reply_for_several_generations(kwargs: dict[str, Any]) -> None:
    messages: list[BaseMessage] = [HumanMessage("hi")]
    assert direct_model(Several(), messages, quiet_config(), kwargs, asynchronous=False)
    direct = invoke_model(Several(), messages, quiet_config(), dict(kwargs))
    stock = invoke_model(Several(), messages, loud_config(), dict(kwargs))
    assert _without_id(direct) == _without_id(stock)
    assert direct.response_metadata == {"finish_reason": "stop", "a": 1}  # two generations: no llm_output
    assert direct.id is None and stock.id is not None  # the documented difference


def test_async_direct_reply_is_ainvokes_reply() -> None:
    from react_agent._fastpath import ainvoke_model

    def make() -> FunctionChatModel:
        return FunctionChatModel(function=lambda m: AIMessage(content="x", response_metadata={"m": 1}), usage=True)

    messages: list[BaseMessage] = [HumanMessage("hi there")]
    direct = asyncio.run(ainvoke_model(make(), messages, quiet_config(), {}))
    stock = asyncio.run(ainvoke_model(make(), messages, loud_config(), {}))
    assert _without_id(direct) == _without_id(stock)


@pytest.mark.parametrize("content", [[{"type": "text", "text": "hi"}], ["hi", "there"]])
def test_content_blocks_take_invoke(content: Any) -> None:
    assert not direct_model(ScriptedChatModel([]), [HumanMessage(content=content)], quiet_config(), {},
                            asynchronous=False)

    class Blocks(ReactAgent):
        def build_messages(self, state):  # type: ignore[no-untyped-def]
            return [SystemMessage(content=content), *super().build_messages(state)]

    script = [call("lookup", key="a"), finish("done")]
    plain = Blocks(ScriptedChatModel(script), [lookup], prompts="en").run("t")
    traced = Blocks(ScriptedChatModel(script), [lookup], prompts="en").run("t", config={"callbacks": [Events()]})
    same(plain, traced)


@pytest.mark.parametrize("wrap", ["bind_stop", "with_config", "with_retry", "with_fallbacks", "configurable"])
def test_wrapped_models_run_the_same_and_are_observed(wrap: str) -> None:
    from langchain_core.runnables import ConfigurableField

    script = [call("lookup", key="a"), finish("done")]

    def make() -> Any:
        model = ScriptedChatModel(script, usage=True)
        if wrap == "bind_stop":
            return model.bind(stop=["\nObservation:"])
        if wrap == "with_config":
            return model.with_config(tags=["mine"])
        if wrap == "with_retry":
            return model.with_retry(stop_after_attempt=2)
        if wrap == "with_fallbacks":
            return model.with_fallbacks([ScriptedChatModel(script)])
        return model.configurable_fields(usage=ConfigurableField(id="usage"))

    plain, traced, events = both(make, [lookup])
    same(plain, traced)
    assert events.names.count("chat_model_start") == 2 and events.names.count("tool_start") == 1


def test_a_configure_hook_sees_every_model_and_tool_event() -> None:
    """A handler switched on by a registered configure hook (how tracers plug in) observes the run."""
    from langchain_core.tracers.context import register_configure_hook

    var: contextvars.ContextVar[Events | None] = contextvars.ContextVar("attack_hook", default=None)
    register_configure_hook(var, inheritable=True)
    events = Events()
    script = [call("lookup", key="a"), call("lookup", key="b"), finish("done")]
    token = var.set(events)
    try:
        traced = ReactAgent(ScriptedChatModel(script), [lookup], prompts="en").run("t")
    finally:
        var.reset(token)
    plain = ReactAgent(ScriptedChatModel(script), [lookup], prompts="en").run("t")
    same(plain, traced)
    assert events.names.count("chat_model_start") == 3 and events.names.count("llm_end") == 3
    assert events.names.count("tool_start") == 2 and events.names.count("tool_end") == 2


def test_a_model_cache_of_its_own_is_consulted() -> None:
    from langchain_core.caches import InMemoryCache

    cache = InMemoryCache()
    script = [call("lookup", key="a"), finish("done")]
    first = ReactAgent(ScriptedChatModel(script, cache=cache), [lookup], prompts="en").run("t")
    empty = ScriptedChatModel([], cache=cache)
    second = ReactAgent(empty, [lookup], prompts="en").run("t")
    assert first.output == second.output == "done" and empty.calls == []


# silence "imported but unused" for names kept for later attacks
_ = (PromptSet, ReflectionAgent, ValidationError, json, Annotated, InjectedToolArg, StructuredTool, ToolException,
     ToolMessage, RunnableLambda, BaseModel, Field)
