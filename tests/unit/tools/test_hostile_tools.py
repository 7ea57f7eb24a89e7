"""Tools as a hostile user writes them: hung, async, raising unprintable errors, returning anything.

Promises tested here (docs/tools.md):

- a tool or model call abandoned at its time limit never keeps the process alive, in ``run`` and in
  ``asyncio.run(agent.arun(...))`` (checked in a subprocess that must exit by itself);
- ``async def`` tools run under ``run`` and ``arun``; a coroutine never becomes an observation;
- rendering any exception or any return value never fails, and content blocks become plain text;
- error results (MCP ``isError``, ``ToolMessage(status="error")``, handled tool errors) are errors;
- tool names that a model cannot call, or that the parser reads as something else, are refused.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import datetime
import inspect
import json
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
from conftest import call, finish
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool
from pydantic import BaseModel

from react_agent import ConfigError, ReactAgent, parse_response
from react_agent.testing import ScriptedChatModel
from react_agent.tools import call_within
from react_agent.tools._registry import ToolRegistry, name_problem, stringify, tool_outcome


def run_one(tools: list[Any], name: str, args: dict[str, Any], *, mode: str = "sync", **options: Any) -> Any:
    """Run an agent that calls ``name`` once, then finishes; the step of the call."""
    agent = ReactAgent(ScriptedChatModel([call(name, **args), finish("done")]), tools, **options)
    result = agent.run("task") if mode == "sync" else asyncio.run(agent.arun("task"))
    assert result.status == "finished", result
    return result.steps[0]


# -- 1. abandoned calls never keep the process alive ----------------------------------------------------

_CHILD = textwrap.dedent('''
    import asyncio, json, sys, threading
    from langchain_core.tools import tool
    from react_agent import ReactAgent
    from react_agent.testing import ScriptedChatModel

    @tool
    def hang(x: int) -> str:
        """Block forever."""
        threading.Event().wait()
        return "never"

    @tool
    async def ahang(x: int) -> str:
        """Await forever."""
        await asyncio.Event().wait()
        return "never"

    def returns_hanging_coroutine(x: int):
        """A sync function that returns a coroutine that never ends."""
        return asyncio.sleep(3600)

    class HangingModel(ScriptedChatModel):
        def _generate(self, *args, **kwargs):
            threading.Event().wait()

    what, mode = sys.argv[1], sys.argv[2]
    reply = json.dumps({"action": what, "action_input": {"x": 1}})
    done = json.dumps({"action": "FINISH", "action_input": "done"})
    tools = [hang, ahang, returns_hanging_coroutine]
    if what == "model":
        agent = ReactAgent(HangingModel([]), tools, max_execution_time=0.5)
    else:
        agent = ReactAgent(ScriptedChatModel([reply, done]), tools, timeout=0.5)
    result = agent.run("t") if mode == "run" else asyncio.run(agent.arun("t"))
    print(json.dumps({"status": result.status, "errors": [s.is_error for s in result.steps]}), flush=True)
''')


HUNG = [pytest.param(what, mode, id=f"{what}-{mode}")
        for what in ("hang", "ahang", "returns_hanging_coroutine", "model") for mode in ("run", "arun")]


@pytest.mark.parametrize(("what", "mode"), HUNG)
def test_a_hung_call_never_keeps_the_process_alive(what: str, mode: str) -> None:
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, what, mode], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process did not exit after an abandoned {what} call in {mode}")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if what == "model":
        assert report["status"] == "timeout"
    else:
        assert report == {"status": "finished", "errors": [True, False]}


def test_an_abandoned_sync_tool_keeps_running_and_its_result_is_dropped() -> None:
    release, finished = threading.Event(), threading.Event()

    @tool
    def slow(x: int) -> str:
        """Wait to be released."""
        release.wait(10)
        finished.set()
        return "late result"

    step = run_one([slow], "slow", {"x": 1}, timeout=0.2)
    assert step.is_error and "late result" not in step.observation
    assert not finished.is_set()  # still running: Python cannot stop a thread
    release.set()
    assert finished.wait(5)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_sync_tool_under_arun_never_uses_the_loops_default_executor(mode: str) -> None:
    seen: list[bool] = []

    @tool
    def where(x: int) -> str:
        """Report whether this thread is a daemon thread."""
        seen.append(threading.current_thread().daemon)
        return "ok"

    step = run_one([where], "where", {"x": 1}, mode=mode, timeout=5)
    assert step.observation == "ok" and seen == [True]


# -- 2. async tools run under run and arun ---------------------------------------------------------------


async def _add(a: int, b: int) -> int:
    """Add two integers."""
    await asyncio.sleep(0.01)
    return a + b


@tool
async def add_decorated(a: int, b: int) -> int:
    """Add two integers."""
    await asyncio.sleep(0.01)
    return a + b


def add_returning_coroutine(a: int, b: int) -> Any:
    """Add two integers (a sync function that returns a coroutine)."""
    return _add(a, b)


class _AddArgs(BaseModel):
    a: int
    b: int


class AsyncOnlyAdd(BaseTool):
    """A BaseTool subclass that only implements ``_arun``."""

    name: str = "add_subclass"
    description: str = "Add two integers."
    args_schema: type[BaseModel] = _AddArgs

    def _run(self, a: int, b: int) -> int:
        raise NotImplementedError("async only")

    async def _arun(self, a: int, b: int) -> int:
        return await _add(a, b)


ASYNC_TOOLS = {
    "plain async def": lambda: _add,
    "StructuredTool.from_function(async def)": lambda: StructuredTool.from_function(_add, name="add"),
    "@tool async def": lambda: add_decorated,
    "StructuredTool(coroutine=) only": lambda: StructuredTool(
        name="add", description="Add two integers.", args_schema=_AddArgs, coroutine=_add),
    "sync function returning a coroutine": lambda: add_returning_coroutine,
    "BaseTool subclass, async only": lambda: AsyncOnlyAdd(),
}


# A BaseTool subclass whose _run raises NotImplementedError is not bridged under run: it cannot be told
# apart from a sync tool that failed (after side effects, perhaps), so it is only tested under arun.
ASYNC_CASES = [(kind, mode) for kind in ASYNC_TOOLS for mode in ("sync", "async")
               if (kind, mode) != ("BaseTool subclass, async only", "sync")]


@pytest.mark.parametrize("timeout", [None, 5.0])
@pytest.mark.parametrize(("kind", "mode"), ASYNC_CASES)
def test_async_tools_run_under_run_and_arun(kind: str, mode: str, timeout: float | None) -> None:
    made = ASYNC_TOOLS[kind]()
    name = made.name if isinstance(made, BaseTool) else made.__name__
    step = run_one([made], name, {"a": 2, "b": 40}, mode=mode, timeout=timeout)
    assert (step.observation, step.is_error) == ("42", False)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_async_tool_past_its_timeout_is_cancelled_under_run_and_arun(mode: str) -> None:
    cancelled = threading.Event()

    @tool
    async def sleepy(x: int) -> str:
        """Sleep for a long time."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    started = time.monotonic()
    step = run_one([sleepy], "sleepy", {"x": 1}, mode=mode, timeout=0.3)
    assert step.is_error and time.monotonic() - started < 5
    assert cancelled.wait(5)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_async_tool_under_run_sees_a_running_loop_and_may_use_executors(mode: str) -> None:
    @tool
    async def uses_loop(x: int) -> str:
        """Use the running loop's executor."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: f"value {x}")

    assert run_one([uses_loop], "uses_loop", {"x": 7}, mode=mode, timeout=5).observation == "value 7"


def _drained() -> str:
    return next(iter([]))


@pytest.mark.parametrize("timeout", [None, 5.0])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_tool_that_raises_stop_iteration_gives_an_error_observation_never_a_hang(mode: str,
                                                                                 timeout: float | None) -> None:
    def drains(x: int) -> str:
        """Take the next item of an empty iterator."""
        return _drained()

    step = call_within(lambda: run_one([drains], "drains", {"x": 1}, mode=mode, timeout=timeout), 30)
    assert step.is_error and "StopIteration" in step.observation


def test_an_async_tool_whose_executor_work_raises_stop_iteration_gets_the_error_under_run() -> None:
    @tool
    async def drains_in_executor(x: int) -> str:
        """Take the next item of an empty iterator in the loop's executor."""
        return await asyncio.get_running_loop().run_in_executor(None, _drained)

    step = call_within(lambda: run_one([drains_in_executor], "drains_in_executor", {"x": 1}), 30)
    assert step.is_error and "StopIteration" in step.observation


class _DrainedModel(BaseChatModel):
    """A sync-only chat model whose replies ran out: ``next()`` of an exhausted iterator."""

    @property
    def _llm_type(self) -> str:
        return "drained"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        return _drained()


def test_a_sync_model_that_raises_stop_iteration_under_arun_ends_the_run_with_the_error() -> None:
    agent = ReactAgent(_DrainedModel(), [add_decorated])
    result = call_within(lambda: asyncio.run(agent.arun("task")), 30)
    assert result.status == "error" and "StopIteration" in (result.error or "")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("value", [
    pytest.param(lambda: _add(1, 2), id="coroutine"),
    pytest.param(lambda: asyncio.sleep(0, result="slept"), id="asyncio.sleep"),
])
def test_an_awaitable_result_is_awaited_never_shown(value: Any, mode: str) -> None:
    def give(x: int) -> Any:
        """Return an awaitable."""
        return value()

    step = run_one([give], "give", {"x": 1}, mode=mode)
    assert "coroutine" not in step.observation and "object at" not in step.observation
    assert step.observation in ("3", "slept") and not step.is_error


def test_run_works_inside_a_running_event_loop_for_async_tools() -> None:
    async def main() -> Any:
        return run_one([add_decorated], "add_decorated", {"a": 1, "b": 1})  # sync run called from async code

    assert asyncio.run(main()).observation == "2"


# -- 3. rendering never fails --------------------------------------------------------------------------


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class StrOnlyFails(Exception):
    def __str__(self) -> str:
        raise ValueError("no str")


class StrNotText(Exception):
    def __str__(self) -> Any:
        return 42


class Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(("exc", "expected"), [
    (Unprintable(), "Unprintable"),
    (StrOnlyFails(), "StrOnlyFails"),
    (StrNotText(), "StrNotText"),
    (ValueError(), "ValueError"),
    (ToolException(Hostile()), "ToolException"),
])
def test_an_exception_that_cannot_be_printed_is_an_error_observation(exc: Exception, expected: str, mode: str) -> None:
    def explode(x: int) -> str:
        """Raise."""
        raise exc

    step = run_one([explode], "explode", {"x": 1}, mode=mode)
    assert step.is_error and expected in step.observation


@dataclasses.dataclass
class Point:
    x: int
    y: int
    label: str = "p"


class User(BaseModel):
    name: str
    born: datetime.date


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


RETURNS = {
    "hostile __str__": (lambda: Hostile(), "Hostile"),
    "utf-8 bytes": (lambda: "привет".encode(), "привет"),
    "binary bytes": (lambda: b"\xff\xfe\x00" * 10, "[binary data: 30 bytes]"),
    "None": (lambda: None, "null"),
    "pydantic model": (lambda: User(name="Иван", born=datetime.date(2000, 1, 2)),
                       '{"name": "Иван", "born": "2000-01-02"}'),
    "dataclass": (lambda: Point(1, 2), '{"x": 1, "y": 2, "label": "p"}'),
    "nested models": (lambda: {"users": [User(name="a", born=datetime.date(2001, 1, 1))], "p": Point(0, 0)},
                      '{"users": [{"name": "a", "born": "2001-01-01"}], "p": {"x": 0, "y": 0, "label": "p"}}'),
    "integer too large to print": (lambda: 10 ** 5000, "int"),
    "nested too deep": (lambda: _deep(100_000), "list"),
    "cycle": (lambda: _cycle(), "[1, [...]]"),
    "huge string": (lambda: "x" * 2_000_000, "x" * 100),
    "set": (lambda: {3}, "[3]"),
    "hostile inside a list": (lambda: [1, Hostile()], "[1, "),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", list(RETURNS))
def test_any_return_value_renders_as_text(kind: str, mode: str) -> None:
    make, expected = RETURNS[kind]

    def give(x: int) -> Any:
        """Return a value."""
        return make()

    step = run_one([give], "give", {"x": 1}, mode=mode)
    assert isinstance(step.observation, str) and expected in step.observation
    assert not step.is_error


def _hostile_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(),
        st.builds(Hostile), st.builds(Unprintable), st.builds(StrNotText),
        st.builds(Point, st.integers(), st.integers()), st.builds(lambda: 10 ** 5000), st.dates(),
    )
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers()), inner, max_size=4),
        st.builds(lambda t: [{"type": "text", "text": t, "id": "lc_1"}], st.text()),
        st.builds(lambda v: {"content": [{"type": "text", "text": str(v)}], "isError": True}, st.integers()),
    ), max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hostile_values())
def test_rendering_any_value_never_raises(value: Any) -> None:
    text = stringify(value)
    outcome, is_error = tool_outcome(value)
    assert isinstance(text, str) and isinstance(outcome, str) and isinstance(is_error, bool)


# -- 4. results made for models ------------------------------------------------------------------------

PNG = base64.b64encode(b"\x89PNG" + b"\x00" * 1230).decode()

BLOCKS = {
    "one text block with an id": ([{"type": "text", "text": "42", "id": "lc_123"}], "42"),
    "text blocks joined": ([{"type": "text", "text": "a"}, {"type": "text", "text": "b", "id": "x"}], "a\nb"),
    "image (LangChain base64)": ([{"type": "text", "text": "see"}, {"type": "image", "base64": PNG,
                                  "mime_type": "image/png", "id": "i"}], "see\n[image: image/png, 1234 bytes]"),
    "image (MCP data)": ([{"type": "image", "data": PNG, "mimeType": "image/png"}], "[image: image/png, 1234 bytes]"),
    "image (OpenAI data url)": ([{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}],
                                "[image: image/png, 1234 bytes]"),
    "image (Anthropic source)": ([{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                                               "data": PNG}}], "[image: image/jpeg, 1234 bytes]"),
    "file by url": ([{"type": "file", "url": "https://example.org/a.pdf", "mime_type": "application/pdf"}],
                    "[file: application/pdf, https://example.org/a.pdf]"),
    "audio": ([{"type": "audio", "base64": "AAAA", "mime_type": "audio/wav"}], "[audio: audio/wav, 3 bytes]"),
    "json block": ([{"type": "json", "json": {"a": [1, 2]}}], '{"a": [1, 2]}'),
    "MCP embedded text resource": ([{"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}], "body"),
    "strings and blocks": (["plain", {"type": "text", "text": "block"}], "plain\nblock"),
    "a list of strings stays JSON": (["a", "b"], '["a", "b"]'),
    "records that only look like blocks stay JSON": ([{"type": "user", "name": "a"}],
                                                     '[{"type": "user", "name": "a"}]'),
    "ToolMessage": (ToolMessage(content=[{"type": "text", "text": "from message"}], tool_call_id="1"), "from message"),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", list(BLOCKS))
def test_content_blocks_become_plain_text(kind: str, mode: str) -> None:
    value, expected = BLOCKS[kind]

    def give(x: int) -> Any:
        """Return content."""
        return value

    step = run_one([give], "give", {"x": 1}, mode=mode)
    assert (step.observation, step.is_error) == (expected, False)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_content_and_artifact_tools_show_the_content_as_text(mode: str) -> None:
    def blocks(x: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Return content blocks and an artifact."""
        return [{"type": "text", "text": f"value {x}", "id": "lc_9"}], {"raw": x}

    made = StructuredTool.from_function(blocks, response_format="content_and_artifact")
    assert run_one([made], "blocks", {"x": 5}, mode=mode).observation == "value 5"


def _mcp_call_tool_result(is_error: bool) -> Any:
    from mcp.types import CallToolResult, ImageContent, TextContent

    return CallToolResult(content=[TextContent(type="text", text="division by zero"),
                                   ImageContent(type="image", data=PNG, mimeType="image/png")], isError=is_error)


ERRORS = {
    "MCP CallToolResult isError": (lambda: _mcp_call_tool_result(True), "division by zero\n[image: image/png"),
    "MCP result JSON isError": (lambda: {"content": [{"type": "text", "text": "bad input"}], "isError": True},
                                "bad input"),
    "ToolMessage status error": (lambda: ToolMessage(content="it broke", tool_call_id="1", status="error"),
                                 "it broke"),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", list(ERRORS))
def test_error_results_are_error_observations(kind: str, mode: str) -> None:
    make, expected = ERRORS[kind]

    def give(x: int) -> Any:
        """Return an error result."""
        return make()

    step = run_one([give], "give", {"x": 1}, mode=mode)
    assert step.is_error and expected in step.observation


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_successful_mcp_result_is_its_text(mode: str) -> None:
    def give(x: int) -> Any:
        """Return an MCP result."""
        return _mcp_call_tool_result(False)

    step = run_one([give], "give", {"x": 1}, mode=mode)
    assert (step.observation, step.is_error) == ("division by zero\n[image: image/png, 1234 bytes]", False)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(("handler", "expected"), [
    (True, "quota exceeded"),
    ("The service failed, try later", "The service failed, try later"),
    (lambda e: [{"type": "text", "text": f"handled: {e}", "id": "x"}], "handled: quota exceeded"),
])
def test_errors_a_tool_handles_itself_are_still_errors(handler: Any, expected: str, mode: str) -> None:
    def quota(x: int) -> str:
        """Fail with a ToolException."""
        raise ToolException("quota exceeded")

    made = StructuredTool.from_function(quota, handle_tool_error=handler)
    step = run_one([made], "quota", {"x": 1}, mode=mode)
    assert (step.observation.endswith(expected), step.is_error) == (True, True)
    assert made.handle_tool_error is handler  # the user's tool is not modified


# -- 5. names a model cannot call -----------------------------------------------------------------------

class _XArgs(BaseModel):
    x: int


REFUSED = [
    "final_answer", "Final Answer", "finalanswer", " FINISH", "FINISH", "finish", "Final-Answer", "FINAL_ANSWER",
    "my final answer", "final_answer_tool", "none", "None", "null", "NULL", "n/a", "NA", "no action", "no_tool",
    "nothing", "", "   ", "a\nb", "a\tb", "a\x00b", "a\u2028b", "a\u200bb", "x" * 129, " add", "add ", "'add'",
    "add:", "add.", "[add]", "add(x)", "`add`", "**add**", '"add"', "Action Input: x", "{x}",
]


@pytest.mark.parametrize("name", REFUSED)
def test_names_the_model_cannot_call_are_refused_at_construction(name: str) -> None:
    made = StructuredTool(name=name, description="A tool.", args_schema=_XArgs, func=lambda x: "x")
    with pytest.raises(ConfigError) as info:
        ReactAgent(ScriptedChatModel([]), [made])
    assert repr(name)[:60] in str(info.value) and "rename the tool" in str(info.value)


ACCEPTED = ["add", "get_weather", "search-web", "Search Tool", "x" * 128, "tool", "call_tool", "finish_order",
            "none_of_them", "answer", "final", "weather.get", "calc(1)x", "ask?"]


@pytest.mark.parametrize("name", ACCEPTED)
def test_ordinary_names_are_accepted_and_callable(name: str) -> None:
    def f(x: int) -> str:
        """A tool."""
        return f"ran {x}"

    made = StructuredTool.from_function(f, name=name, description="A tool.")
    step = run_one([made], name, {"x": 3})
    assert (step.action, step.observation) == (name, "ran 3")


@settings(max_examples=400, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_every_accepted_name_is_read_back_unchanged_by_the_parser(name: str) -> None:
    """The one rule: a name is accepted only if the parser reads a call to it as exactly that tool."""
    if name_problem(name) is not None:
        return
    names = [name]
    as_json = parse_response(json.dumps({"thought": "t", "action": name, "action_input": {"x": 1}}), names)
    as_text = parse_response(f"Thought: t\nAction: {name}\nAction Input: {{\"x\": 1}}", names)
    assert as_json.action == name and as_text.action == name


def _positional_only(a: int, /, b: int = 2) -> str:
    """Add two numbers."""
    return str(a + b)


def _config_named(config: str) -> str:
    """Set a configuration value."""
    return config


def _run_manager_required(x: int, run_manager: Any) -> str:
    """Use a run manager."""
    return str(x)


async def _async_positional_only(a: int, /) -> str:
    """Echo a number."""
    return str(a)


@pytest.mark.parametrize(("function", "says", "args"), [
    (_positional_only, "remove the '/'", {"a": 1, "b": 2}), (_config_named, "rename the argument", {"config": "x"}),
    (_run_manager_required, "give it a default", {"x": 1}), (_async_positional_only, "remove the '/'", None),
    (tool(_config_named), "rename the argument", None),
])
def test_a_function_langchain_could_never_call_with_the_models_arguments_is_refused(
        function: Any, says: str, args: dict[str, Any] | None) -> None:
    """Each of these fails on every call through LangChain's own ``invoke`` (checked with valid ``args``)."""
    with pytest.raises(ConfigError, match=says):
        ReactAgent(ScriptedChatModel([finish("x")]), [function])
    if args is not None:
        with pytest.raises(TypeError):
            StructuredTool.from_function(function).invoke(args)


def _config_runnable(x: int, config: RunnableConfig) -> str:
    """Read the run's configuration."""
    return str(sorted(config))


def _run_manager_default(x: int, run_manager: Any = None) -> str:
    """Take an optional run manager."""
    return str(x)


@pytest.mark.parametrize("function", [_config_runnable, _run_manager_default])
def test_functions_langchain_fills_or_defaults_are_accepted(function: Any) -> None:
    step = run_one([function], function.__name__, {"x": 4})
    assert not step.is_error


def test_a_schema_tool_over_keyword_arguments_keeps_an_argument_named_config() -> None:
    """As MCP adapters build tools: the author cannot rename the argument, so the tool is not refused."""
    def stub(**kwargs: Any) -> str:
        return "ok"

    schema = {"type": "object", "properties": {"config": {"type": "string"}}, "required": ["config"]}
    made = StructuredTool(name="update", description="Update the mapping.", args_schema=schema, func=stub)
    assert ReactAgent(ScriptedChatModel([finish("x")]), [made]).tools["update"] is made
    stub.__signature__ = inspect.signature(_config_named)  # type: ignore[attr-defined]  # describes the schema
    described = StructuredTool(name="update", description="Update the mapping.", args_schema=schema, func=stub)
    assert ReactAgent(ScriptedChatModel([finish("x")]), [described]).tools["update"] is described


def test_registry_keeps_the_users_tool_objects() -> None:
    made = StructuredTool.from_function(add_returning_coroutine)
    assert ToolRegistry([made]).tools["add_returning_coroutine"] is made


def test_an_aliased_argument_is_shown_by_its_name_and_reaches_the_tool_under_its_alias() -> None:
    """tool_call_schema names the field, invoke validates by alias: the prompt shows the name, the model may
    write either, the tool gets the value (``from`` is the usual case: a Python keyword)."""
    import json

    from langchain_core.tools import StructuredTool
    from pydantic import BaseModel, Field

    from react_agent import ReactAgent
    from react_agent.testing import ScriptedChatModel

    class Args(BaseModel):
        sender: str = Field(alias="from", description="who sends it")
        body: str

    def send(**kwargs: str) -> str:
        return f"sent {kwargs}"

    tool = StructuredTool.from_function(send, name="send", description="Send a note.", args_schema=Args)
    replies = [json.dumps({"thought": "t", "action": "send", "action_input": given})
               for given in ({"sender": "ann", "body": "hi"}, {"from": "bob", "body": "yo"}, {"body": "no sender"})]
    llm = ScriptedChatModel([*replies, json.dumps({"thought": "t", "action": "FINISH", "action_input": "ok"})])
    agent = ReactAgent(llm, [tool], prompts="en")
    assert "sender" in agent.tools_text and '"from"' not in agent.tools_text
    result = agent.run("send notes")  # the function gets model_dump()'s field names, as with invoke
    assert [s.observation for s in result.steps[:2]] == ["sent {'sender': 'ann', 'body': 'hi'}",
                                                         "sent {'sender': 'bob', 'body': 'yo'}"]
    assert result.steps[2].is_error and "sender" in result.steps[2].observation
