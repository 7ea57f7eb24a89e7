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
from langchain_core.tools import InjectedToolArg, InjectedToolCallId, StructuredTool, ToolException
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


# =========================================================================================== the direct tool path
def test_a_validation_error_raised_inside_a_tool_is_handled_as_invoke_handles_it() -> None:
    class Inner(BaseModel):
        n: int

    def strict(key: str) -> str:
        """Builds a model from its input."""
        Inner.model_validate({"n": key})
        return "ok"

    for handle in (True, "bad input, try again", lambda exc: f"handled {type(exc).__name__}"):
        tool = StructuredTool.from_function(strict, handle_validation_error=handle)
        script = [call("strict", key="x"), finish("done")]
        plain, traced, _ = both(lambda s=script: ScriptedChatModel(s), [tool])
        same(plain, traced)
        plain, traced, _ = aboth(lambda s=script: ScriptedChatModel(s), [tool])
        same(plain, traced)


_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("attack_seen", default="unset")


def test_context_variables_a_tool_sets_stay_inside_the_call() -> None:
    """``invoke`` runs a tool in a copy of the context: what it sets is not seen after it (nor by the next call)."""
    seen: list[str] = []

    def setter(key: str) -> str:
        """Sets a context variable."""
        seen.append(_SEEN.get())
        _SEEN.set(key)
        return "set"

    script = [call("setter", key="a"), call("setter", key="b"), finish("done")]
    plain = ReactAgent(ScriptedChatModel(script), [setter], prompts="en").run("t")
    after_plain = _SEEN.get()
    direct_seen = list(seen)
    seen.clear()
    traced = ReactAgent(ScriptedChatModel(script), [setter], prompts="en").run("t", config={"callbacks": [Events()]})
    same(plain, traced)
    assert direct_seen == seen == ["unset", "unset"]
    assert after_plain == _SEEN.get() == "unset"


def test_context_variables_an_async_tool_sets_stay_inside_the_call() -> None:
    seen: list[str] = []

    async def asetter(key: str) -> str:
        """Sets a context variable."""
        seen.append(_SEEN.get())
        _SEEN.set(key)
        return "set"

    tool = StructuredTool.from_function(coroutine=asetter, name="asetter", description="Sets a variable.")
    script = [call("asetter", key="a"), call("asetter", key="b"), finish("done")]

    async def run(config: Any) -> tuple[Any, str]:
        result = await ReactAgent(ScriptedChatModel(script), [tool], prompts="en").arun("t", config=config)
        return result, _SEEN.get()

    plain, after_plain = asyncio.run(run(None))
    direct_seen = list(seen)
    seen.clear()
    traced, after_traced = asyncio.run(run({"callbacks": [Events()]}))
    same(plain, traced)
    assert direct_seen == seen == ["unset", "unset"]
    assert after_plain == after_traced == "unset"


def test_a_field_excluded_from_dumps_reaches_the_tool_as_through_invoke() -> None:
    class Args(BaseModel):
        key: str
        hidden: str = Field(default="schema default", exclude=True)

    seen: list[dict[str, Any]] = []

    def search(key: str, hidden: str = "function default") -> str:
        """Search."""
        seen.append({"key": key, "hidden": hidden})
        return "ok"

    tool = StructuredTool.from_function(search, args_schema=Args)
    script = [call("search", key="a"), call("search", key="b", hidden="given"), finish("done")]
    plain, traced, _ = both(lambda: ScriptedChatModel(script), [tool])
    same(plain, traced)
    assert seen[:2] == seen[2:] and len(seen) == 4


def test_aliases_and_optional_fields_reach_the_tool_as_through_invoke() -> None:
    from pydantic import ConfigDict

    class Args(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        key: str = Field(alias="k")
        page: int | None = None
        size: Annotated[int, Field(ge=1)] = 10

    seen: list[dict[str, Any]] = []

    def search(key: str = "f", page: int | None = 3, size: int = 99) -> str:
        """Search."""
        seen.append({"key": key, "page": page, "size": size})
        return "ok"

    tool = StructuredTool.from_function(search, args_schema=Args)
    script = [call("search", k="a"), call("search", key="b", page=None), call("search", k="c", size="4"),
              finish("done")]
    plain, traced, _ = both(lambda: ScriptedChatModel(script), [tool])
    same(plain, traced)
    assert seen[:3] == seen[3:]
    # the model may write a field's name (what the prompt shows) or its alias: the tool gets it either way
    assert not any(s.is_error for s in plain.steps[:3])
    assert seen[:3] == [{"key": "a", "page": None, "size": 10}, {"key": "b", "page": None, "size": 10},
                        {"key": "c", "page": None, "size": 4}]  # the schema's defaults, as invoke passes them


def test_pydantic_v1_and_json_schema_tools_run_the_same() -> None:
    from pydantic import v1

    class V1Args(v1.BaseModel):
        key: str
        limit: int = 3

    seen: list[Any] = []

    def v1search(key: str, limit: int = 10) -> str:
        """Search (pydantic v1 schema)."""
        seen.append((key, limit))
        return "ok"

    tools = [StructuredTool.from_function(v1search, args_schema=V1Args)]
    script = [call("v1search", key="a"), call("v1search", key="b", limit="7"), finish("done")]
    plain, traced, _ = both(lambda: ScriptedChatModel(script), tools)
    same(plain, traced)
    assert seen[:2] == seen[2:] and len(seen) == 4


class Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class HostileError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


async def _coro_value() -> str:
    return "from an awaitable"


_RESULTS: dict[str, Any] = {
    "dict": lambda: {"a": [1, 2], "b": None},
    "list": lambda: [1, "two", {"three": 3}],
    "none": lambda: None,
    "bytes": lambda: b"\xff\x00raw",
    "tool_message": lambda: ToolMessage(content="tm", tool_call_id="x"),
    "error_message": lambda: ToolMessage(content="failed", tool_call_id="x", status="error"),
    "awaitable": lambda: _coro_value(),
    "hostile": lambda: Hostile(),
    "raises_hostile": lambda: (_ for _ in ()).throw(HostileError()),
    "raises_tool_exception": lambda: (_ for _ in ()).throw(ToolException("te")),
    "raises_keyerror": lambda: {}["missing"],
}


@pytest.mark.parametrize("kind", sorted(_RESULTS))
def test_odd_results_and_errors_are_the_same_observation(kind: str) -> None:
    def odd(key: str) -> Any:
        """Returns something odd."""
        return _RESULTS[kind]()

    async def aodd(key: str) -> Any:
        """Returns something odd."""
        return _RESULTS[kind]()

    script = [call("odd", key="a"), finish("done")]
    sync_tool = StructuredTool.from_function(odd)
    plain, traced, _ = both(lambda: ScriptedChatModel(script), [sync_tool])
    same(plain, traced)
    aplain, atraced, _ = aboth(lambda: ScriptedChatModel(script), [sync_tool])
    same(aplain, atraced)
    assert steps_of(aplain) == steps_of(plain)
    async_tool = StructuredTool.from_function(coroutine=aodd, name="odd", description="Returns something odd.")
    for runner in (both, aboth):
        plain2, traced2, _ = runner(lambda: ScriptedChatModel(script), [async_tool])
        same(plain2, traced2)


def test_async_only_tool_from_run_and_sync_tool_from_arun() -> None:
    async def alookup(key: str) -> str:
        """Look up a value."""
        await asyncio.sleep(0)
        return f"value of {key}"

    atool = StructuredTool.from_function(coroutine=alookup, name="alookup", description="Look up.")
    script = [call("alookup", key="a"), call("lookup", key="b"), finish("done")]
    plain, traced, events = both(lambda: ScriptedChatModel(script), [atool, lookup])
    same(plain, traced)
    assert events.names.count("tool_start") == 2
    aplain, atraced, events = aboth(lambda: ScriptedChatModel(script), [atool, lookup])
    same(aplain, atraced)
    assert steps_of(aplain) == steps_of(plain)


def test_hung_tools_time_out_the_same() -> None:
    import time

    release = threading.Event()

    def hang(key: str) -> str:
        """Hangs."""
        release.wait(5)
        return "late"

    async def ahang(key: str) -> str:
        """Hangs."""
        await asyncio.sleep(5)
        return "late"

    tools = [hang, StructuredTool.from_function(coroutine=ahang, name="ahang", description="Hangs.")]
    script = [call("hang", key="a"), call("ahang", key="b"), finish("done")]
    try:
        started = time.monotonic()
        plain, traced, _ = both(lambda: ScriptedChatModel(script), tools, timeout=0.2)
        same(plain, traced)
        aplain, atraced, _ = aboth(lambda: ScriptedChatModel(script), tools, timeout=0.2)
        same(aplain, atraced)
        assert time.monotonic() - started < 4
        assert [s.is_error for s in plain.steps[:2]] == [True, True]
        assert "0.2" in plain.steps[0].observation
    finally:
        release.set()


def test_a_tool_sees_the_same_config_on_both_paths() -> None:
    seen: list[dict[str, Any]] = []

    def peek(key: str) -> str:
        """Reads the current config."""
        config = ensure_config()
        seen.append({k: v for k, v in config.items() if k != "callbacks"})
        inner = RunnableLambda(lambda x: ensure_config().get("metadata", {}).get("team")).invoke(1)
        seen.append({"inner": inner})
        return "ok"

    script = [call("peek", key="a"), finish("done")]
    options: RunnableConfig = {"configurable": {"user": "u1", "n": 3}, "metadata": {"team": "t1"}, "tags": ["x"],
                               "recursion_limit": 7, "max_concurrency": 2, "run_name": "outer"}
    ReactAgent(ScriptedChatModel(script), [peek], prompts="en").run("t", config=dict(options))  # type: ignore[arg-type]
    direct = list(seen)
    seen.clear()
    ReactAgent(ScriptedChatModel(script), [peek], prompts="en").run(
        "t", config={**options, "callbacks": [Events()]})
    assert direct == seen
    assert direct[0]["configurable"]["user"] == "u1" and direct[1] == {"inner": "t1"}


def test_a_nested_agent_as_a_tool_counts_its_usage_on_both_paths() -> None:
    def make() -> Any:
        inner = ReactAgent(ScriptedChatModel([finish("inner answer")], usage=True), [lookup], prompts="en")
        return inner.as_tool(name="helper", description="Answers subtasks.")

    script = [call("helper", task="sub"), finish("done")]
    plain = ReactAgent(ScriptedChatModel(script, usage=True), [make()], prompts="en").run("t")
    events = Events()
    traced = ReactAgent(ScriptedChatModel(script, usage=True), [make()], prompts="en").run(
        "t", config={"callbacks": [events]})
    same(plain, traced)
    assert plain.usage.total_tokens > 0
    assert events.names.count("chat_model_start") == 3  # the nested agent's call is observed too


def test_an_injected_argument_tool_and_content_and_artifact_take_invoke_and_match() -> None:
    def injected(key: str, secret: Annotated[str, InjectedToolArg] = "s") -> str:
        """Uses an injected argument."""
        return f"{key}:{secret}"

    def artifact(key: str) -> tuple[str, dict[str, Any]]:
        """Returns content and artifact."""
        return f"content {key}", {"raw": key}

    tools = [StructuredTool.from_function(injected),
             StructuredTool.from_function(artifact, response_format="content_and_artifact")]
    script = [call("injected", key="a"), call("artifact", key="b"), finish("done")]
    plain, traced, _ = both(lambda: ScriptedChatModel(script), tools)
    same(plain, traced)
    assert plain.steps[1].observation == "content b"


def test_an_invalid_argument_for_the_function_is_handled_the_same() -> None:
    """Arguments that validate for the schema but make the function raise a TypeError."""

    class Args(BaseModel):
        key: str
        unknown: int = 1

    def narrow(key: str) -> str:
        """Takes only key."""
        return key

    tool = StructuredTool.from_function(narrow, args_schema=Args)
    script = [call("narrow", key="a"), finish("done")]
    plain, traced, _ = both(lambda: ScriptedChatModel(script), [tool])
    same(plain, traced)


def test_validation_error_from_the_schema_with_a_handler() -> None:
    class Args(BaseModel):
        n: int

        @classmethod
        def model_validate(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return super().model_validate(*args, **kwargs)

    def double(n: int) -> str:
        """Double."""
        return str(2 * n)

    for handle in (True, "bad"):
        tool = StructuredTool.from_function(double, args_schema=Args, handle_validation_error=handle)
        script = [call("double", n="x"), call("double", n="4"), finish("done")]
        plain, traced, _ = both(lambda s=script: ScriptedChatModel(s), [tool])
        same(plain, traced)


# silence "imported but unused" for names kept for later attacks
_ = (PromptSet, ReflectionAgent, ValidationError, json)


# =========================================================================================== who listens
class HandlerSpy(BaseChatModel):
    """Replies from a script and records the handlers of the run manager each call receives."""

    replies: list[str]
    seen: list[list[str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "spy"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.seen.append(sorted(type(h).__name__ for h in (run_manager.handlers if run_manager else [])))
        text = self.replies[len(self.seen) - 1]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def test_set_debug_and_tracing_context_reach_the_model_call() -> None:
    from langchain_core.globals import set_debug
    from langchain_core.tracers.context import collect_runs

    script = [call("lookup", key="a"), finish("done")]
    set_debug(True)
    try:
        debug = HandlerSpy(replies=script)
        ReactAgent(debug, [lookup], prompts="en").run("t")
    finally:
        set_debug(False)
    assert all("ConsoleCallbackHandler" in names for names in debug.seen) and len(debug.seen) == 2
    with collect_runs() as collector:
        collected = HandlerSpy(replies=script)
        ReactAgent(collected, [lookup], prompts="en").run("t")
    assert all("RunCollectorCallbackHandler" in names for names in collected.seen) and len(collected.seen) == 2
    (run,) = collector.traced_runs  # collect_runs sees the model and tool calls, as with invoke
    assert [(child.run_type, child.name) for child in run.child_runs] == [
        ("llm", "decision"), ("tool", "lookup"), ("llm", "decision")]
    quiet = HandlerSpy(replies=script)
    ReactAgent(quiet, [lookup], prompts="en").run("t")
    assert quiet.seen == [[], []]


@pytest.mark.parametrize("option", ["streaming_disabled", "v1", "tags"])
def test_model_options_that_change_nothing_or_everything_run_the_same(option: str) -> None:
    script = [call("lookup", key="a"), finish("done")]

    def make() -> ScriptedChatModel:
        if option == "streaming_disabled":
            return ScriptedChatModel(script, disable_streaming=True)
        if option == "v1":
            return ScriptedChatModel(script, output_version="v1")
        return ScriptedChatModel(script, tags=["model-tag"], metadata={"m": 1})

    plain, traced, _ = both(make, [lookup])
    same(plain, traced)
    aplain, atraced, _ = aboth(make, [lookup])
    same(aplain, atraced)


# =========================================================================================== history item by item
_HISTORIES = [
    "{%- for s in steps -%}\n  {{ s.index }}: {{ s.action }} -> {{ s.observation }}\n{%- endfor %}",
    "{# head #}Head {% raw %}{{ not a var }}{% endraw %}\n{% for s in steps %}{{ s.index }}{# c #} "
    "{{ s.observation }}\n{% endfor %}\n{% raw %}{% tail %}{% endraw %}  ",
    "{% for s in steps %}{% for k in s %}{{ loop.index }}{{ k }}={{ s[k] }};{% endfor %}\n{% endfor %}",
    "{% for s in steps %}{% if s.action is none %}parse: {{ s.observation | truncate(30) }}"
    "{% elif s.is_error %}error {{ s.action }}: {{ s.observation | replace('\\n', ' ') }}"
    "{% else %}{{ s.action }}({{ s.action_input | e }}) = {{ s.observation | indent(2) }}{% endif %}"
    "{% if s.reflection %} [reflect: {{ s.reflection }}]{% endif %}{% if s.index is odd %} odd{% endif %}\n"
    "{% else %}EMPTY{% endfor %}",
    "Steps:\n{% for s in steps %}- {{ s.thought | default('-', true) }} / {{ s | tojson }}\n{% endfor %}",
    "{% for s in steps %}{{ s.index }}. {{ s.action }}\n{% endfor %}{{ steps | length }} steps",  # whole
    "{% for s in steps %}{{ loop.index }}/{{ loop.length }} {{ s.observation }}\n{% endfor %}",  # whole
    "{% macro m(x) %}[{{ x }}]{% endmacro %}{% for s in steps %}{{ m(s.observation) }}\n{% endfor %}",  # whole
]


def _checking(base: type) -> tuple[type, list[tuple[str, str]]]:
    """A subclass of ``base`` recording, for each prompt, the history it got and the whole rendering of the
    entries it was built from, and checking each entry against a fresh one."""
    from react_agent._render import history_entry
    from react_agent._types import FINISH

    checks: list[tuple[str, str]] = []

    class Checking(base):  # type: ignore[misc, valid-type]
        def prompt_variables(self, state, *, window="default"):  # type: ignore[no-untyped-def]
            variables = super().prompt_variables(state, window=window)
            size = self.config.history_window if window == "default" else window
            shown = [(i, s) for i, s in enumerate(state.steps, 1) if s.action != FINISH]
            if size is not None:
                shown = shown[-size:] if size else []
            fresh = [history_entry(i, s, self.config.max_observation_chars, self.prompts) for i, s in shown]
            assert variables["steps"] == fresh
            checks.append((variables["history"], self.prompts.render("history", steps=fresh)))
            return variables

    return Checking, checks


_MIXED_SCRIPT = [
    call("lookup", key="a"),
    "not json at all",
    call("broken", key="b"),
    call("lookup", key="x" * 400),
    call("lookup", key="{{ braces }}\n  line two  "),
    finish("done"),
]


def broken(key: str) -> str:
    """Always fails."""
    raise ValueError(f"broken {key}\n  with a second line")


@pytest.mark.parametrize("source", _HISTORIES)
@pytest.mark.parametrize("window", [None, 0, 1, 3])
def test_history_item_by_item_is_the_whole_rendering(source: str, window: int | None) -> None:
    agent_class, checks = _checking(ReactAgent)
    llm = ScriptedChatModel(_MIXED_SCRIPT)
    result = agent_class(llm, [lookup, broken], prompts={"history": source}, lang="en", history_window=window,
                         max_observation_chars=60, max_iterations=10).run("task")
    assert result.status == "finished" and len(checks) == 6
    for fast, whole in checks:
        assert fast == whole


@pytest.mark.parametrize("source", _HISTORIES[:5])
def test_history_item_by_item_with_reflections_is_the_whole_rendering(source: str) -> None:
    agent_class, checks = _checking(ReflectionAgent)
    script = [call("broken", key="a"), "reflection one", call("lookup", key="b"), "not json", "reflection two",
              finish("done")]
    result = agent_class(ScriptedChatModel(script), [lookup, broken], prompts={"history": source}, lang="en",
                         max_iterations=10).run("task")
    assert result.status == "finished"
    assert any(s.reflection for s in result.steps)
    assert checks and all(fast == whole for fast, whole in checks)


def test_history_of_a_state_whose_steps_are_replaced_between_steps() -> None:
    """A subclass that rewrites the history (drops the oldest step, replaces another) gets it rendered anew."""
    from react_agent import AgentStep

    agent_class, checks = _checking(ReactAgent)

    class Rewriting(agent_class):  # type: ignore[misc, valid-type]
        def record(self, state, step, *, review=False):  # type: ignore[no-untyped-def]
            yield from super().record(state, step, review=review)
            if len(state.steps) == 3:
                del state.steps[0]
                state.steps[0] = AgentStep(thought="", action="lookup", action_input={"key": "z"},
                                           observation="rewritten")

    source = _HISTORIES[3]
    script = [call("lookup", key="a"), call("lookup", key="b"), call("lookup", key="c"), call("lookup", key="d"),
              finish("done")]
    result = Rewriting(ScriptedChatModel(script), [lookup], prompts={"history": source}, lang="en").run("t")
    assert result.status == "finished" and len(checks) == 5
    assert all(fast == whole for fast, whole in checks)
    assert "rewritten" in checks[-1][0]


def test_render_item_of_the_builtin_sets_matches_whole_on_odd_entries() -> None:
    entries = [
        {"index": 1, "thought": None, "action": None, "action_input": "", "observation": "",
         "is_error": True, "reflection": ""},
        {"index": 2, "thought": "t", "action": "x", "action_input": "{}", "observation": "{% raw %}\n\n",
         "is_error": False, "reflection": "r"},
        {"index": 10, "thought": "t\n", "action": "FINISH", "action_input": "   ", "observation": "  ",
         "is_error": False, "reflection": None},
    ]
    for name in ("en", "ru", "en-compact", "ru-compact"):
        prompts = PromptSet.load(name)
        texts = [prompts.render_item("history", e) for e in entries]
        if None in texts:
            continue
        for count in range(1, 4):
            assert prompts.join_items("history", texts[:count]) == prompts.render("history",  # type: ignore[arg-type]
                                                                                   steps=entries[:count])


# =========================================================================================== one agent, many runs
def test_one_agent_serves_32_threads_and_32_tasks_with_and_without_handlers() -> None:
    """Mixed ``run``/``arun`` on one agent, the direct path on the quiet runs and ``invoke`` on the observed
    ones: each run sees only its own history and config, each handler only its own run's events."""
    import re
    from concurrent.futures import ThreadPoolExecutor

    def reply(messages: list[BaseMessage]) -> str:
        text = str(messages[-1].content)
        task = re.search(r"TASK-\d+", text)
        assert task is not None
        done = text.count(f"value of {task.group()}")
        if done == 0:
            return call("lookup", key=task.group())
        if "whoami says" not in text:
            return call("whoami", key="x")
        return finish(f"done {task.group()}")

    def whoami(key: str) -> str:
        """Says which run this is, from the current config."""
        config = ensure_config()
        return f"whoami says {config['metadata'].get('run')} {config['configurable'].get('run')}"

    agent = ReactAgent(FunctionChatModel(function=reply, delay=0.002), [lookup, whoami], prompts="en")
    handlers: dict[int, Events] = {n: Events() for n in range(64) if n % 3 == 0}

    def config_of(n: int) -> RunnableConfig:
        config: RunnableConfig = {"metadata": {"run": n}, "configurable": {"run": n}}
        if n in handlers:
            config["callbacks"] = [handlers[n]]
        return config

    def check(n: int, result: Any) -> None:
        assert result.status == "finished" and result.output == f"done TASK-{n}", (n, result)
        assert [s.observation for s in result.steps[:2]] == [f"value of TASK-{n}", f"whoami says {n} {n}"]

    async def tasks() -> list[Any]:
        return await asyncio.gather(*(agent.arun(f"solve TASK-{n}", config=config_of(n)) for n in range(32, 64)))

    with ThreadPoolExecutor(max_workers=33) as pool:
        async_results = pool.submit(lambda: asyncio.run(tasks()))
        sync_results = list(pool.map(lambda n: agent.run(f"solve TASK-{n}", config=config_of(n)), range(32)))
        for n, result in enumerate([*sync_results, *async_results.result(timeout=60)]):
            check(n, result)
    for n, events in handlers.items():
        assert events.names.count("chat_model_start") == 3 and events.names.count("llm_end") == 3, n
        assert events.names.count("tool_start") == 2 and events.names.count("tool_end") == 2, n
        others = {t for text in events.tasks for t in re.findall(r"TASK-\d+", text)}
        assert others == {f"TASK-{n}"}, (n, others)


# =========================================================================================== the parser's shortcut
def _parsed(text: str, names: list[str], monkeypatch: pytest.MonkeyPatch | None = None) -> Any:
    from react_agent import OutputParseError, parse_response

    try:
        action = parse_response(text, names)
    except OutputParseError as exc:
        return ("refused", exc.reason, exc.message)
    return (action.thought, action.action, action.action_input)


_ODD = [
    {"thought": 5, "action": "echo", "action_input": {"text": "a"}},
    {"thought": None, "action": "echo", "action_input": {"text": "a"}},
    {"thought": ["a", "b"], "action": "echo", "action_input": {}},
    {"thought": {"text": "inner thought"}, "action": "echo", "action_input": {}},
    {"thought": "t", "action": " echo\n", "action_input": {"text": "a"}},
    {"thought": "t", "action": "echo\nFINISH", "action_input": {"text": "a"}},
    {"thought": "t", "action": "\tFINISH\t", "action_input": {"answer": "x"}},
    {"thought": "t", "action": "Final_Answer", "action_input": "x"},
    {"thought": "t", "action": "x" * 129, "action_input": {}},
    {"thought": "t", "action": "N/A", "action_input": {}},
    {"thought": "t", "action": 7, "action_input": {}},
    {"thought": "t", "action": ["echo"], "action_input": {}},
    {"thought": "t", "action": {"name": "echo", "args": {"text": "env"}}, "action_input": {}},
    {"thought": "t", "action": "echo", "action_input": '{"text": "json in a string"}'},
    {"thought": "t", "action": "echo", "action_input": '  {"text": "padded"}  trailing words'},
    {"thought": "t", "action": "echo", "action_input": '"{\\"text\\": \\"doubly encoded\\"}"'},
    {"thought": "t", "action": "echo", "action_input": '{"text": "{\\"a\\": 1}"}'},
    {"thought": "t", "action": "echo", "action_input": '{"text": "never closed"'},
    {"thought": "t", "action": "echo", "action_input": "[1, 2]"},
    {"thought": "t", "action": "echo", "action_input": [1, 2]},
    {"thought": "t", "action": "echo", "action_input": True},
    {"thought": "t", "action": "echo", "action_input": "   "},
    {"thought": "t", "action": "echo", "action_input": {"name": "other", "arguments": {"x": 1}}},
    {"thought": "t", "action": "FINISH", "action_input": {"answer": {"nested": [1]}}},
    {"thought": "t", "action": "FINISH", "action_input": {}},
    {"thought": "t", "action": "FINISH", "action_input": {"a": 1, "b": 2}},
    {"thought": "t", "action": "FINISH", "action_input": None},
    {"thought": "t", "action": "call_tool", "action_input": {"name": "echo"}},
    {"thought": "<think>hidden</think>", "action": "echo", "action_input": {}},
    {"thought": "t", "action": "echo", "action_input": {"text": "x" * 100_000}},
    {"thought": "t" * 100_000, "action": "FINISH", "action_input": "y" * 100_000},
    {"thought": "t", "action": "echo", "action_input": {"items": [{"a": {"b": i}} for i in range(4000)]}},
    {"thought": "t", "action": "echo", "action_input": json.dumps({"items": [{"a": {"b": i}} for i in range(4000)]})},
    {"thought": "t", "action": "echo", "action_input": "{" * 300 + "}" * 300},
]


@pytest.mark.parametrize("reply", _ODD, ids=lambda r: repr(r)[:60])
@pytest.mark.parametrize("indent", [None, 2])
def test_the_parser_shortcut_agrees_with_the_general_path_on_odd_replies(reply: dict[str, Any],
                                                                          indent: int | None) -> None:
    text = json.dumps(reply, indent=indent, ensure_ascii=False)
    padded = json.dumps({**reply, "id": "reserved"}, indent=indent, ensure_ascii=False)
    assert _parsed(text, ["echo"]) == _parsed(padded, ["echo"])
    wrapped = f"\n  {text}\n"
    assert _parsed(wrapped, ["echo"]) == _parsed(text, ["echo"])


def test_duplicate_and_respelled_keys_agree_with_the_general_path() -> None:
    replies = [
        '{"thought": "t", "action": "echo", "action": "FINISH", "action_input": "x"}',
        '{"thought": "t", "action": "echo", "action_input": {"text": "a"}, "action_input": {"text": "b"}}',
        '{"Thought": "t", "Action": "echo", "Action Input": {"text": "a"}}',
        '{"thought": "t", "action": "echo", "action input": {"text": "a"}}',
        '{"thought": "t\\u0000", "action": "echo", "action_input": {"text": "\\ud800"}}',
        '{"thought": "line\nbreak", "action": "echo", "action_input": {"text": "raw\ttab"}}',
    ]
    for text in replies:
        padded = text[:-1] + ', "type": "x"}'
        assert _parsed(text, ["echo"]) == _parsed(padded, ["echo"]), text


@pytest.mark.parametrize("reply", [r for r in _ODD if "items" not in str(r)[:60]], ids=lambda r: repr(r)[:60])
def test_the_whole_object_path_agrees_with_the_scanning_pipeline(reply: dict[str, Any],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``_whole_object`` is a shortcut of the scanning pipeline for a reply that is one JSON object. (Not
    for a complete object so nested and long that the bounded scan gives up on it - 4,000 nested items
    above: the scan counts it as never closed and refuses it as cut off; the shortcut reads it.)"""
    import react_agent._parser as parser

    text = json.dumps(reply, ensure_ascii=False)
    shortcut = _parsed(text, ["echo"])
    monkeypatch.setattr(parser, "_whole_object", lambda text, ctx: None)
    assert _parsed(text, ["echo"]) == shortcut


# =========================================================================================== more tool attacks
@pytest.mark.parametrize("handle", [False, True, "bad arguments", lambda exc: f"handled {type(exc).__name__}"])
def test_a_pydantic_v1_schema_that_refuses_the_arguments_is_handled_as_invoke_handles_it(handle: Any) -> None:
    from pydantic import v1

    class V1Args(v1.BaseModel):
        key: str
        limit: int = 3

        @v1.validator("key", allow_reuse=True)
        def no_spaces(cls, value: str) -> str:
            if " " in value:
                raise ValueError("no spaces in keys")
            return value

    def v1search(key: str, limit: int = 10) -> str:
        """Search (pydantic v1 schema)."""
        return f"{key} {limit}"

    tool = StructuredTool.from_function(v1search, args_schema=V1Args, handle_validation_error=handle)
    script = [call("v1search", key="a", limit="many"), call("v1search", key="a b"), finish("done")]
    for runner in (both, aboth):
        plain, traced, _ = runner(lambda: ScriptedChatModel(script), [tool])
        same(plain, traced)
        assert plain.steps[0].is_error and plain.steps[1].is_error


def test_a_v2_schema_validator_that_refuses_is_handled_as_invoke_handles_it() -> None:
    from pydantic import field_validator

    class Args(BaseModel):
        key: str

        @field_validator("key")
        @classmethod
        def no_spaces(cls, value: str) -> str:
            if " " in value:
                raise ValueError("no spaces in keys")
            return value

    def search(key: str) -> str:
        """Search."""
        return key

    for handle in (False, True, "bad arguments"):
        tool = StructuredTool.from_function(search, args_schema=Args, handle_validation_error=handle)
        script = [call("search", key="a b"), finish("done")]
        plain, traced, _ = both(lambda s=script: ScriptedChatModel(s), [tool])
        same(plain, traced)


def test_explicit_no_cache_with_a_global_cache_runs_the_model() -> None:
    from langchain_core.caches import InMemoryCache
    from langchain_core.globals import set_llm_cache

    set_llm_cache(InMemoryCache())
    try:
        script = [call("lookup", key="a"), finish("done")]
        plain, traced, _ = both(lambda: ScriptedChatModel(script, cache=False), [lookup])
        same(plain, traced)
        second = ScriptedChatModel(script, cache=False)
        ReactAgent(second, [lookup], prompts="en").run("task")
        assert len(second.calls) == 2  # never answered from the global cache
    finally:
        set_llm_cache(None)


@pytest.mark.parametrize("extra", [
    {"ls_structured_output_format": {"kwargs": {"method": "json_schema"}, "schema": {"type": "object"}}},
    {"structured_output_format": {"kwargs": {"method": "json_schema"}, "schema": {"type": "object"}}},
    {"ls_structured_output_format": {"kwargs": {"method": "json_schema"}, "schema": {"type": "object"}},
     "structured_output_format": {"kwargs": {}, "schema": {"type": "object"}}},
    {"ls_structured_output_format": None, "structured_output_format": {"kwargs": {}, "schema": {"type": "object"}}},
    {"stop": ["\nObservation:"], "temperature": 0},
])
def test_model_kwargs_reach_generate_as_through_invoke(extra: dict[str, Any]) -> None:
    class Extra(ReactAgent):
        def model_kwargs(self, call):  # type: ignore[no-untyped-def]
            return {**super().model_kwargs(call), **extra}

    script = [call("lookup", key="a"), finish("done")]
    direct, stock = ScriptedChatModel(script), ScriptedChatModel(script)
    Extra(direct, [lookup], prompts="en").run("t")
    Extra(stock, [lookup], prompts="en").run("t", config={"callbacks": [Events()]})
    assert [c.kwargs for c in direct.calls] == [c.kwargs for c in stock.calls]


def test_a_model_that_changes_its_message_list_does_not_change_the_agents() -> None:
    """``invoke`` hands ``_generate`` a list of its own: a model that inserts a message into it (then fails
    and is retried) does not grow the agent's prompt."""
    from react_agent import RetryPolicy

    class Inserting(BaseChatModel):
        sizes: list[int] = Field(default_factory=list)

        @property
        def _llm_type(self) -> str:
            return "inserting"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            messages.insert(0, SystemMessage("house rules"))
            self.sizes.append(len(messages))
            if len(self.sizes) == 1:
                raise TimeoutError("transient")
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=finish("ok")))])

    retry = RetryPolicy(max_attempts=2, retry_on=lambda exc: isinstance(exc, TimeoutError), initial_wait=0,
                        jitter=0)
    direct, stock = Inserting(), Inserting()
    ReactAgent(direct, [lookup], prompts="en", retry=retry).run("t")
    ReactAgent(stock, [lookup], prompts="en", retry=retry).run("t", config={"callbacks": [Events()]})
    assert direct.sizes == stock.sizes == [2, 2]


def test_an_async_model_that_uses_its_run_manager_unguarded_works_on_the_direct_path() -> None:
    class AsyncUnguarded(Unguarded):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:
            await run_manager.on_llm_new_token("")
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=finish("ok")))])

    plain, traced, _ = aboth(AsyncUnguarded, [lookup])
    same(plain, traced)
    assert plain.status == "finished"


def test_a_usage_callback_counts_every_model_call() -> None:
    from langchain_core.callbacks import get_usage_metadata_callback

    script = [AIMessage(content=text, response_metadata={"model_name": "m"})  # the handler counts per model name
              for text in (call("lookup", key="a"), finish("done"))]
    with get_usage_metadata_callback() as counted:
        result = ReactAgent(ScriptedChatModel(script, usage=True), [lookup], prompts="en").run("t")
    (usage,) = counted.usage_metadata.values()
    assert usage["input_tokens"] == result.usage.input_tokens and usage["output_tokens"] == result.usage.output_tokens


def test_astream_events_sees_the_model_and_tool_events() -> None:
    script = [call("lookup", key="a"), finish("done")]
    agent = ReactAgent(ScriptedChatModel(script), [lookup], prompts="en")

    async def kinds() -> list[str]:
        return [event["event"] async for event in agent.astream_events("t", version="v2")]

    seen = asyncio.run(kinds())
    assert seen.count("on_chat_model_start") == 2 and seen.count("on_tool_start") == 1


def _raising_handler(exc: Exception) -> str:
    raise RuntimeError(f"the handler failed on {exc}")


@pytest.mark.parametrize("handle", [_raising_handler, lambda exc: None, lambda exc: {"error": str(exc)},
                                    lambda exc: HostileError()])
def test_odd_error_handlers_give_the_same_observation(handle: Any) -> None:
    def flaky(key: str) -> str:
        """Fails."""
        raise ToolException(f"no value for {key}")

    class Inner(BaseModel):
        n: int

    def strict(key: str) -> str:
        """Fails validation inside."""
        Inner.model_validate({"n": key})
        return "ok"

    tools = [StructuredTool.from_function(flaky, handle_tool_error=handle),
             StructuredTool.from_function(strict, handle_validation_error=handle)]
    script = [call("flaky", key="a"), call("strict", key="b"), finish("done")]
    for runner in (both, aboth):
        plain, traced, _ = runner(lambda: ScriptedChatModel(script), tools)
        same(plain, traced)
        assert plain.steps[0].is_error and plain.steps[1].is_error


def test_a_model_that_always_streams_streams_on_both_paths() -> None:
    """A model that decides itself to stream (overriding ``_should_stream``) answers from ``_stream``."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    class StreamOnly(BaseChatModel):
        replies: list[str]
        used: list[int] = Field(default_factory=list)

        @property
        def _llm_type(self) -> str:
            return "stream-only"

        def _should_stream(self, **kwargs: Any) -> bool:
            return True

        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
            raise NotImplementedError("this model only streams")

        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            text = self.replies[len(self.used)]
            self.used.append(1)
            for part in (text[: len(text) // 2], text[len(text) // 2:]):
                yield ChatGenerationChunk(message=AIMessageChunk(content=part))

    script = [call("lookup", key="a"), finish("done")]
    plain, traced, _ = both(lambda: StreamOnly(replies=script), [lookup])
    same(plain, traced)
    assert plain.status == "finished"


def test_a_model_that_converts_its_input_itself_gets_its_conversion() -> None:
    from langchain_core.prompt_values import ChatPromptValue

    class HouseRules(ScriptedChatModel):
        def _convert_input(self, model_input: Any) -> Any:
            value = super()._convert_input(model_input)
            return ChatPromptValue(messages=[SystemMessage("house rules"), *value.to_messages()])

    script = [call("lookup", key="a"), finish("done")]
    direct, stock = HouseRules(script), HouseRules(script)
    ReactAgent(direct, [lookup], prompts="en").run("t")
    ReactAgent(stock, [lookup], prompts="en").run("t", config={"callbacks": [Events()]})
    assert [c.messages for c in direct.calls] == [c.messages for c in stock.calls]
    assert direct.calls[0].messages[0].content == "house rules"


def test_generated_one_loop_history_templates_join_to_the_whole_rendering() -> None:
    """Many one-loop templates built from fragments (whitespace control on every tag, comments, raw blocks,
    branches, filters, nested loops): each item rendered once and joined is the whole rendering."""
    import random

    from react_agent._prompts import TEMPLATE_VARIABLES as TEMPLATE_NAMES

    heads = ["", "History:\n", "  \n  ", "{# a comment #}H ", "{% raw %}{{ x }}{% endraw %}\n", "\n\n"]
    tails = ["", "\nEnd", "  \n", "{# c #}", "\n{% raw %}{% endfor %}{% endraw %}\n"]
    opens = ["{% for s in steps %}", "{%- for s in steps %}", "{% for s in steps -%}", "{%- for s in steps -%}",
             "{%+ for s in steps %}", "{% for s in steps %}\n", "  {% for s in steps %}\n"]
    closes = ["{% endfor %}", "{%- endfor %}", "{% endfor -%}", "{%+ endfor %}", "\n  {% endfor %}\n",
              "{% else %}none{% endfor %}"]
    parts = ["{{ s.index }}", "{{ s.observation }}", "{% if s.is_error %}E{% else %}ok{% endif %}",
             "{{ s.action | default('none', true) }}", "\n", "  ", "{%- if s.reflection %} R{% endif -%}",
             "{{ s.thought | trim }}", "{% for k, v in s | dictsort %}{{ k }}{% if not loop.last %},{% endif %}"
             "{% endfor %}", "{{ s.action_input | length }}", "{# inner #}", "\n    {% if s.action %}\n"
             "  x\n    {% endif %}\n", "{{ '%-5s' | format(s.index) }}", "{{ s.observation | wordwrap(8) }}"]
    from react_agent._prompts import _compile

    entries = [*_ENTRIES_FOR_GEN]
    base = {name: PromptSet.load("en")._templates[name] for name in TEMPLATE_NAMES}
    rng = random.Random(7)
    split = 0
    for _ in range(300):
        body = "".join(rng.choice(parts) for _ in range(rng.randint(1, 5)))
        source = rng.choice(heads) + rng.choice(opens) + body + rng.choice(closes) + rng.choice(tails)
        compiled, used = _compile("history", source, "generated")  # the history template alone: fast
        prompts = PromptSet({**base, "history": compiled}, lang="en", variables={"history": used})
        texts = [prompts.render_item("history", e) for e in entries]
        if None in texts:
            continue
        split += 1
        for count in range(1, len(entries) + 1):
            whole = prompts.render("history", steps=entries[:count])
            assert prompts.join_items("history", texts[:count]) == whole, source  # type: ignore[arg-type]
    assert split > 200  # most of them are one plain loop


_ENTRIES_FOR_GEN = [
    {"index": 1, "thought": " t ", "action": "echo", "action_input": '{"text": "a"}', "observation": "echo: a b c d e",
     "is_error": False, "reflection": None},
    {"index": 2, "thought": "", "action": None, "action_input": "", "observation": "  could not parse {{ x }}\n",
     "is_error": True, "reflection": "try again"},
    {"index": 3, "thought": "t", "action": "echo", "action_input": "plain", "observation": "",
     "is_error": True, "reflection": ""},
]


def test_debug_switched_on_during_a_run_reaches_the_next_model_call() -> None:
    """``set_debug(True)`` is read by every ``invoke``: switched on by a tool, the next model call is logged."""
    from langchain_core.globals import set_debug

    def switch(key: str) -> str:
        """Switches LangChain's debug mode on."""
        set_debug(True)
        return "on"

    spy = HandlerSpy(replies=[call("switch", key="a"), finish("done")])
    try:
        ReactAgent(spy, [switch], prompts="en").run("t")
    finally:
        set_debug(False)
    assert spy.seen[0] == [] and "ConsoleCallbackHandler" in spy.seen[1]


def test_replies_with_content_blocks_run_the_same() -> None:
    def blocks(text: str) -> AIMessage:
        return AIMessage(content=[{"type": "text", "text": text[:5]}, {"type": "reasoning", "reasoning": "r"},
                                  {"type": "text", "text": text[5:]}])

    script = [blocks(call("lookup", key="a")), blocks(finish("done"))]
    plain, traced, _ = both(lambda: ScriptedChatModel(script), [lookup])
    same(plain, traced)
    assert plain.output == "done"


def test_a_reflection_agent_runs_the_same_on_both_paths() -> None:
    def run(config: Any) -> Any:
        script = [call("broken", key="a"), "the tool is broken", call("lookup", key="b"), finish("done")]
        return ReflectionAgent(ScriptedChatModel(script), [lookup, broken], prompts="en").run("t", config=config)

    plain, traced = run(None), run({"callbacks": [Events()]})
    same(plain, traced)
    assert [s.reflection for s in plain.steps] == [s.reflection for s in traced.steps]


def test_a_plan_and_execute_agent_runs_the_same_on_both_paths() -> None:
    from react_agent.plan import PlanAndExecuteAgent

    def notify(to: str, text: str) -> str:
        """Send a notification."""
        return f"sent {text!r} to {to}"

    plan = json.dumps([{"tool": "lookup", "args": {"key": "a"}, "open": []},
                       {"tool": "broken", "args": {"key": "b"}, "open": []}])
    replan = json.dumps([{"tool": "notify", "args": {"to": "x@y.z"}, "open": ["text"]}])
    script = [plan, replan, '{"text": "hi"}']

    def run(config: Any) -> Any:
        agent = PlanAndExecuteAgent(ScriptedChatModel(script), [lookup, broken, notify], prompts="en")
        return agent.run("t", config=config)

    plain, traced = run(None), run({"callbacks": [Events()]})
    same(plain, traced)


def test_handlers_given_through_with_config_and_batch_see_every_event() -> None:
    def reply(messages: list[BaseMessage]) -> str:
        text = str(messages[-1].content)
        return finish("done") if "value of" in text else call("lookup", key="a")

    agent = ReactAgent(FunctionChatModel(function=reply), [lookup], prompts="en")
    bound = Events()
    agent.with_config(callbacks=[bound]).invoke("t")
    batched = Events()
    results = agent.batch(["t1", "t2", "t3"], config={"callbacks": [batched]})
    quiet = agent.batch(["t4", "t5"])
    assert bound.names.count("chat_model_start") == 2 and bound.names.count("tool_start") == 1
    assert batched.names.count("chat_model_start") == 6 and batched.names.count("tool_end") == 3
    assert [r.output for r in [*results, *quiet]] == ["done"] * 5


@pytest.mark.parametrize("serialize_by_alias", [False, True])
def test_aliased_arguments_reach_the_tool_as_through_invoke(serialize_by_alias: bool) -> None:
    """``run_sync``/``run_async`` with aliased arguments (below the registry, which hands the tool its
    arguments under their aliases): the direct call passes what ``invoke`` passes, or fails as it fails."""
    from pydantic import ConfigDict

    from react_agent._tools import ToolError, run_async, run_sync

    class Args(BaseModel):
        model_config = ConfigDict(serialize_by_alias=serialize_by_alias, populate_by_name=True)
        key: str = Field(alias="k")
        size: int = Field(default=2, alias="n")

    def search(key: str = "f", size: int = 9, **extra: Any) -> str:
        """Search."""
        return f"{key} {size} {sorted(extra)}"

    tool = StructuredTool.from_function(search, args_schema=Args)

    def outcome(runner: Any, args: dict[str, Any], config: RunnableConfig) -> Any:
        try:
            result = runner(tool, dict(args), config, None)
            return asyncio.run(result) if asyncio.iscoroutine(result) else result
        except ToolError as exc:
            return ("error", str(exc))

    for args in ({"k": "a"}, {"key": "b", "n": "4"}, {"k": "c", "size": 5}):
        for runner in (run_sync, run_async):
            assert outcome(runner, args, quiet_config()) == outcome(runner, args, loud_config()), (args, runner)


def test_a_tool_with_an_injected_tool_call_id_fails_the_same_on_both_paths() -> None:
    def traced_call(key: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Wants the id of its tool call."""
        return f"{key} {tool_call_id}"

    script = [call("traced_call", key="a"), finish("done")]
    for runner in (both, aboth):
        plain, traced, _ = runner(lambda: ScriptedChatModel(script), [StructuredTool.from_function(traced_call)])
        same(plain, traced)
