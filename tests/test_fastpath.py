"""The direct path around langchain-core's callback machinery (react_agent._fastpath).

A model or tool call skips ``invoke`` only when nothing could observe it; these tests pin both halves: the
direct call gives the same run (output, usage, observations, errors) as ``invoke``, and anything that
listens or changes the call (a callback handler, a cache, a rate limiter, streaming, a tool that takes the
config, a verbose model) gets the stock ``invoke`` path with its events.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import UUID

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.globals import set_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import StructuredTool, ToolException
from pydantic import PrivateAttr

from react_agent import ReactAgent
from react_agent.testing import FunctionChatModel, ScriptedChatModel
from tests.conftest import call, finish


class Events(BaseCallbackHandler):
    """Records which callback events fired."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.names.append("chat_model_start")

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.names.append("llm_end")

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, **kwargs: Any) -> None:
        self.names.append("tool_start")


class MetaModel(BaseChatModel):
    """Replies from a script, reporting usage only through ``llm_output`` and ``generation_info`` (as
    providers such as GigaChat do), and counts how often langchain-core's ``generate`` ran."""

    replies: list[str]
    _index: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "meta"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = self.replies[self._index % len(self.replies)]
        self._index += 1
        generation = ChatGeneration(message=AIMessage(content=text), generation_info={"finish_reason": "stop"})
        return ChatResult(generations=[generation],
                          llm_output={"token_usage": {"prompt_tokens": 7, "completion_tokens": 3}, "model": "m"})


@pytest.fixture
def generate_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every run of langchain-core's ``BaseChatModel.generate``/``agenerate`` (the ``invoke`` machinery)."""
    seen: list[str] = []
    original, aoriginal = BaseChatModel.generate, BaseChatModel.agenerate

    def generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append("generate")
        return original(self, *args, **kwargs)

    async def agenerate(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append("agenerate")
        return await aoriginal(self, *args, **kwargs)

    monkeypatch.setattr(BaseChatModel, "generate", generate)
    monkeypatch.setattr(BaseChatModel, "agenerate", agenerate)
    return seen


def lookup(key: str) -> str:
    """Look up a value."""
    return f"value of {key}"


def script() -> list[str]:
    return [call("lookup", key="a"), call("lookup", key="b"), finish("done")]


def run_both(make_model: Any, tools: list[Any], **options: Any) -> tuple[Any, Any, Events]:
    """The same run without listeners (direct) and with a callback handler (stock ``invoke``)."""
    plain = ReactAgent(make_model(), tools, **options).run("look up a and b")
    events = Events()
    traced = ReactAgent(make_model(), tools, **options).run("look up a and b", config={"callbacks": [events]})
    return plain, traced, events


def same_run(plain: Any, traced: Any) -> None:
    assert plain.status == traced.status == "finished"
    assert plain.output == traced.output
    assert plain.usage == traced.usage
    assert plain.llm_calls == traced.llm_calls
    assert [(s.action, s.action_input, s.observation, s.is_error) for s in plain.steps] == [
        (s.action, s.action_input, s.observation, s.is_error) for s in traced.steps]


# ------------------------------------------------------------------------------------------- models
def test_direct_model_call_skips_generate_and_matches_invoke(generate_calls: list[str]) -> None:
    plain = ReactAgent(MetaModel(replies=script()), [StructuredTool.from_function(lookup)]).run("look up a and b")
    assert generate_calls == []  # nobody listened: langchain-core's generate never ran
    events = Events()
    traced = ReactAgent(MetaModel(replies=script()), [StructuredTool.from_function(lookup)]).run(
        "look up a and b", config={"callbacks": [events]})
    assert generate_calls == ["generate"] * 3
    assert events.names.count("chat_model_start") == 3 and events.names.count("llm_end") == 3
    same_run(plain, traced)
    assert plain.usage.input_tokens == 21 and plain.usage.output_tokens == 9  # llm_output merged as invoke does


def test_async_direct_model_call_matches_ainvoke(generate_calls: list[str]) -> None:
    def make() -> FunctionChatModel:
        replies = iter(script())
        return FunctionChatModel(function=lambda messages: next(replies), usage=True)

    tool = StructuredTool.from_function(lookup)
    plain = asyncio.run(ReactAgent(make(), [tool]).arun("look up a and b"))
    assert generate_calls == []
    events = Events()
    traced = asyncio.run(ReactAgent(make(), [tool]).arun("look up a and b", config={"callbacks": [events]}))
    assert generate_calls == ["agenerate"] * 3
    same_run(plain, traced)


@pytest.mark.parametrize("change", ["verbose", "callbacks", "rate_limiter", "streaming", "cache"])
def test_anything_that_observes_or_changes_the_call_gets_invoke(change: str, generate_calls: list[str]) -> None:
    model = ScriptedChatModel(script())
    if change == "verbose":
        model = ScriptedChatModel(script(), verbose=True)
    elif change == "callbacks":
        model = ScriptedChatModel(script(), callbacks=[Events()])
    elif change == "rate_limiter":
        model = ScriptedChatModel(script(), rate_limiter=InMemoryRateLimiter(requests_per_second=1000))
    elif change == "streaming":
        model = ScriptedChatModel(script(), disable_streaming=False)
        object.__setattr__(model, "__pydantic_fields_set__", {*model.model_fields_set, "streaming"})
        object.__setattr__(model, "streaming", True)
    elif change == "cache":
        set_llm_cache(InMemoryCache())
    try:
        result = ReactAgent(model, [StructuredTool.from_function(lookup)]).run("look up a and b")
    finally:
        set_llm_cache(None)
    assert result.status == "finished"
    assert generate_calls == ["generate"] * 3


def test_a_cached_model_answers_from_the_cache(generate_calls: list[str]) -> None:
    """With a global cache the second, identical run is answered from it (only invoke consults caches)."""
    set_llm_cache(InMemoryCache())
    try:
        first = ReactAgent(ScriptedChatModel(script()), [StructuredTool.from_function(lookup)]).run("look up")
        empty = ScriptedChatModel([])  # a cache miss would raise ScriptExhaustedError
        second = ReactAgent(empty, [StructuredTool.from_function(lookup)]).run("look up")
    finally:
        set_llm_cache(None)
    assert first.output == second.output == "done"
    assert empty.calls == []


def test_a_subclass_that_overrides_invoke_keeps_its_invoke() -> None:
    seen: list[str] = []

    class Wrapped(ScriptedChatModel):
        def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
            seen.append("invoke")
            return super().invoke(input, config, **kwargs)

    result = ReactAgent(Wrapped(script()), [StructuredTool.from_function(lookup)]).run("look up a and b")
    assert result.status == "finished" and seen == ["invoke"] * 3


def test_direct_call_passes_the_same_arguments_to_generate() -> None:
    """Structured-output requests reach ``_generate`` as through ``invoke`` (tracing-only keys dropped)."""
    direct = ScriptedChatModel(script(), supports_json_schema=True)
    ReactAgent(direct, [StructuredTool.from_function(lookup)], constrained="json_schema").run("look up a and b")
    traced = ScriptedChatModel(script(), supports_json_schema=True)
    ReactAgent(traced, [StructuredTool.from_function(lookup)], constrained="json_schema").run(
        "look up a and b", config={"callbacks": [Events()]})
    assert [c.kwargs for c in direct.calls] == [c.kwargs for c in traced.calls]
    assert all("ls_structured_output_format" not in c.kwargs for c in direct.calls)
    assert [c.messages for c in direct.calls] == [c.messages for c in traced.calls]


# ------------------------------------------------------------------------------------------- tools
def test_direct_tool_call_matches_invoke_and_events_come_back_with_a_handler() -> None:
    plain, traced, events = run_both(lambda: ScriptedChatModel(script()), [StructuredTool.from_function(lookup)])
    same_run(plain, traced)
    assert events.names.count("tool_start") == 2


def test_tool_arguments_are_validated_and_coerced_by_the_tool_itself() -> None:
    seen: list[Any] = []

    def double(n: int) -> str:
        """Double a number."""
        seen.append(n)
        return str(2 * n)

    replies = [call("double", n="21"), call("double", n="x"), finish("done")]
    plain, traced, _ = run_both(lambda: ScriptedChatModel(replies), [StructuredTool.from_function(double)])
    same_run(plain, traced)
    assert seen == [21, 21]  # coerced to int on both paths
    assert plain.steps[0].observation.endswith("42") and plain.steps[1].is_error


@pytest.mark.parametrize("handle", [True, "it broke, try another key", lambda exc: f"handled: {exc}"])
def test_tool_exceptions_are_handled_the_same(handle: Any) -> None:
    def flaky(key: str) -> str:
        """Fails."""
        raise ToolException(f"no value for {key}")

    tool = StructuredTool.from_function(flaky, handle_tool_error=handle)
    replies = [call("flaky", key="a"), call("flaky", key="b"), finish("done")]
    plain, traced, _ = run_both(lambda: ScriptedChatModel(replies), [tool])
    same_run(plain, traced)
    assert all(s.is_error for s in plain.steps[:2])


def test_unhandled_tool_errors_are_the_same_observation() -> None:
    def broken(key: str) -> str:
        """Fails."""
        raise ValueError(f"bad key {key}")

    replies = [call("broken", key="a"), call("broken", key="b"), finish("done")]
    plain, traced, _ = run_both(lambda: ScriptedChatModel(replies), [StructuredTool.from_function(broken)])
    same_run(plain, traced)
    assert "bad key a" in plain.steps[0].observation


def test_a_tool_sees_the_run_config_as_its_current_config() -> None:
    """Nested runnables in a tool inherit the run's config (tags, metadata, configurable) on both paths."""
    seen: list[tuple[Any, Any]] = []

    def peek(key: str) -> str:
        """Reads the current config."""
        config = ensure_config()
        seen.append((config.get("configurable", {}).get("user"), config.get("metadata", {}).get("team")))
        return "ok"

    replies = [call("peek", key="a"), finish("done")]
    options: RunnableConfig = {"configurable": {"user": "u1"}, "metadata": {"team": "t1"}}
    ReactAgent(ScriptedChatModel(replies), [StructuredTool.from_function(peek)]).run("peek", config=options)
    ReactAgent(ScriptedChatModel(replies), [StructuredTool.from_function(peek)]).run(
        "peek", config={**options, "callbacks": [Events()]})
    assert seen == [("u1", "t1"), ("u1", "t1")]


def test_a_tool_that_takes_the_config_gets_it() -> None:
    seen: list[Any] = []

    def configured(key: str, config: RunnableConfig) -> str:
        """Reads its config."""
        seen.append(config.get("metadata", {}).get("team"))
        return "ok"

    replies = [call("configured", key="a"), finish("done")]
    ReactAgent(ScriptedChatModel(replies), [StructuredTool.from_function(configured)]).run(
        "x", config={"metadata": {"team": "t1"}})
    assert seen == ["t1"]


def test_async_tools_direct_and_stock_give_the_same_run() -> None:
    async def alookup(key: str) -> str:
        """Look up a value."""
        await asyncio.sleep(0)
        return f"value of {key}"

    tool = StructuredTool.from_function(coroutine=alookup, name="lookup", description="Look up a value.")

    def make() -> FunctionChatModel:
        replies = iter(script())
        return FunctionChatModel(function=lambda messages: next(replies))

    plain = asyncio.run(ReactAgent(make(), [tool]).arun("look up a and b"))
    events = Events()
    traced = asyncio.run(ReactAgent(make(), [tool]).arun("look up a and b", config={"callbacks": [events]}))
    same_run(plain, traced)
    assert events.names.count("tool_start") == 2
    assert json.loads(json.dumps(plain.steps[0].action_input)) == {"key": "a"}


def test_schema_defaults_aliases_and_json_schemas_reach_the_tool_as_through_invoke() -> None:
    """The direct path passes what ``invoke`` passes: schema defaults (not the function's), given fields
    only; a JSON-schema ``args_schema`` (a dict) too."""
    from pydantic import BaseModel, Field

    class Args(BaseModel):
        key: str
        limit: int = Field(default=3)
        page: int | None = None

    seen: list[dict[str, Any]] = []

    def search(key: str, limit: int = 10, page: int | None = 7, **extra: Any) -> str:
        """Search."""
        seen.append({"key": key, "limit": limit, "page": page, **extra})
        return "ok"

    def dict_search(key: str, limit: int = 10) -> str:
        """Search with a JSON schema."""
        seen.append({"key": key, "limit": limit})
        return "ok"

    json_schema = {"type": "object", "properties": {"key": {"type": "string"}, "limit": {"type": "integer"}},
                   "required": ["key"]}
    tools = [StructuredTool.from_function(search, args_schema=Args),
             StructuredTool.from_function(dict_search, args_schema=json_schema)]
    replies = [call("search", key="a"), call("search", key="b", limit="5", page=2), call("dict_search", key="c"),
               finish("done")]
    ReactAgent(ScriptedChatModel(replies), tools).run("x")
    direct = list(seen)
    seen.clear()
    ReactAgent(ScriptedChatModel(replies), tools).run("x", config={"callbacks": [Events()]})
    assert direct == seen
    assert direct[0] == {"key": "a", "limit": 3, "page": None}  # the schema's defaults, as invoke passes them
    assert direct[1] == {"key": "b", "limit": 5, "page": 2}


# ------------------------------------------------------------------------------------------- named config
@pytest.mark.parametrize("given", [{}, {"tags": ["outer"]}, {"metadata": {"user": "u"}, "max_concurrency": 3},
                                   "ensured", {"tags": None, "metadata": None, "callbacks": None,
                                               "recursion_limit": 25, "configurable": None}])
def test_a_model_call_config_is_named_as_patch_config_would_and_the_given_one_is_kept(given: Any) -> None:
    from langchain_core.runnables.config import patch_config

    from react_agent._fastpath import named_config
    from react_agent._state import ModelCall

    config: RunnableConfig = ensure_config({"tags": ["t"], "configurable": {"k": 1}}) if given == "ensured" else given
    before = json.dumps(config, default=str, sort_keys=True)
    named = named_config(config, ModelCall([], "final_answer"))
    expected = patch_config(ensure_config(config), run_name="final_answer")
    assert named["run_name"] == "final_answer"
    assert named["tags"] == [*expected["tags"], "react_agent:final_answer"]
    assert named["metadata"] == {**expected["metadata"], "react_agent_purpose": "final_answer"}
    assert {k: v for k, v in named.items() if k not in ("tags", "metadata")} == {
        k: v for k, v in expected.items() if k not in ("tags", "metadata")}
    assert json.dumps(config, default=str, sort_keys=True) == before  # the caller's config is not changed
    named["configurable"]["new"] = 2
    assert "new" not in (config.get("configurable") or {})
