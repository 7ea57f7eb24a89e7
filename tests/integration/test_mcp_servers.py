"""MCP servers as tool sources, against a real MCP server (tests/helpers/mcp_server.py, the ``mcp`` SDK's FastMCP).

Over stdio and over streamable HTTP on 127.0.0.1, through a real ``ReactAgent`` with the scripted
model, under ``run`` and ``arun``; also tools that users load with langchain-mcp-adapters themselves.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import HELPERS, call, finish

from react_agent import ConfigError, ReactAgent
from react_agent.mcp import MCPError, MCPTools, mcp_tools
from react_agent.testing import ScriptedChatModel

pytest.importorskip("mcp")
pytest.importorskip("langchain_mcp_adapters")

SERVER = str(HELPERS / "mcp_server.py")
STDIO = [sys.executable, SERVER]

SCRIPT = [call("add", a=2, b=40), call("fail", reason="no"), call("image"), call("echo", text="привет"),
          finish("done")]
EXPECTED = [
    ("42", False),
    ("Error executing tool fail: refused: no", True),
    ("a picture\n[image: image/png, 1234 bytes]", False),
    ("привет", False),
]


def run_script(tools: list[Any], script: list[str], *, mode: str, **options: Any) -> Any:
    agent = ReactAgent(ScriptedChatModel(script), tools, max_iterations=len(script), **options)
    return agent.run("task") if mode == "sync" else asyncio.run(agent.arun("task"))


def observations(result: Any) -> list[tuple[str, bool]]:
    """(observation without the template's prefix, is_error) of each tool step."""
    return [(s.observation.split(": ", 1)[1] if s.is_error else s.observation, s.is_error)
            for s in result.steps if s.action != "FINISH"]


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def stdio_tools() -> Iterator[list[Any]]:
    with mcp_tools(STDIO) as tools:
        yield tools


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_stdio_server_tools_run_under_run_and_arun(stdio_tools: list[Any], mode: str) -> None:
    assert sorted(t.name for t in stdio_tools) == ["add", "echo", "fail", "image", "pid", "slow"]
    result = run_script(stdio_tools, SCRIPT, mode=mode)
    assert result.status == "finished"
    assert observations(result) == EXPECTED


def test_tool_descriptions_and_arguments_reach_the_prompt(stdio_tools: list[Any]) -> None:
    llm = ScriptedChatModel([finish("done")])
    ReactAgent(llm, stdio_tools, prompts="en").run("task")
    prompt = llm.calls[0].text
    assert "Add two integers." in prompt and "Sleep for the given number of seconds." in prompt
    assert "seconds" in prompt and "number" in prompt


def test_invalid_arguments_are_refused_before_the_server_is_called(stdio_tools: list[Any]) -> None:
    result = run_script(stdio_tools, [call("add", a=1), finish("done")], mode="sync")
    assert result.steps[0].is_error and "b" in result.steps[0].observation


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_slow_mcp_call_times_out_and_the_run_goes_on(stdio_tools: list[Any], mode: str) -> None:
    started = time.monotonic()
    result = run_script(stdio_tools, [call("slow", seconds=30), call("add", a=1, b=1), finish("done")],
                        mode=mode, timeout=0.5)
    assert time.monotonic() - started < 10
    assert [s.is_error for s in result.steps] == [True, False, False]
    assert result.steps[1].observation == "2"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_leaving_the_block_stops_the_server_and_the_tools_refuse_politely(mode: str) -> None:
    async def opened_async() -> tuple[Any, list[Any]]:
        async with mcp_tools(STDIO) as tools:
            result = await ReactAgent(ScriptedChatModel([call("pid"), finish("done")]), tools).arun("task")
        return result, tools

    if mode == "sync":
        with mcp_tools(STDIO) as tools:
            result = ReactAgent(ScriptedChatModel([call("pid"), finish("done")]), tools).run("task")
    else:
        result, tools = asyncio.run(opened_async())
    pid = int(result.steps[0].observation)
    assert gone(pid), "the MCP server process is still running after the block"
    after = run_script(tools, [call("add", a=1, b=2), finish("done")], mode=mode)
    assert after.steps[0].is_error and "closed" in after.steps[0].observation


def test_closing_with_a_call_still_running_is_bounded() -> None:
    started = time.monotonic()
    with mcp_tools(STDIO) as tools:
        run_script(tools, [call("slow", seconds=60), finish("done")], mode="sync", timeout=0.3)
    assert time.monotonic() - started < 15


@pytest.mark.parametrize("spec", [
    [sys.executable, str(HELPERS / "no_such_server.py")],
    ["react-agent-no-such-command-x"],
])
def test_a_server_that_cannot_start_is_a_clear_error(spec: list[str]) -> None:
    started = time.monotonic()
    with pytest.raises(MCPError) as info, mcp_tools(spec, startup_timeout=15):
        pass
    assert time.monotonic() - started < 20
    assert spec[-1] in str(info.value) and "could not be started or reached" in str(info.value)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_server_that_never_answers_is_given_up_after_startup_timeout(mode: str) -> None:
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]

    async def open_async() -> None:
        async with mcp_tools(silent, startup_timeout=1):
            pass

    started = time.monotonic()
    with pytest.raises(MCPError, match=r"did not start within 1\.0 s"):
        if mode == "sync":
            with mcp_tools(silent, startup_timeout=1):
                pass
        else:
            asyncio.run(open_async())
    assert time.monotonic() - started < 8


@pytest.mark.parametrize(("spec", "word"), [
    ("", "no command"), ([], "no command"), (42, "not a command line"), ({"command": "x"}, "transport"),
    ("python 'unclosed", "cannot be split"),
])
def test_malformed_server_specs_are_config_errors(spec: Any, word: str) -> None:
    with pytest.raises(ConfigError, match=word):
        mcp_tools(spec)


def test_no_servers_and_bad_timeouts_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="at least one server"):
        mcp_tools()
    with pytest.raises(ConfigError, match="startup_timeout"):
        mcp_tools(STDIO, startup_timeout=0)


def test_clashing_tool_names_need_a_prefix() -> None:
    with pytest.raises(MCPError, match="prefix=True"), mcp_tools(STDIO, STDIO):
        pass
    named = {"transport": "stdio", "command": sys.executable, "args": [SERVER], "name": "calc"}
    with mcp_tools(STDIO, named, prefix=True) as tools:
        names = {t.name for t in tools}
        assert {"mcp_server_add", "calc_add"} <= names
        result = run_script(tools, [call("calc_add", a=1, b=2), finish("done")], mode="sync")
    assert result.steps[0].observation == "3"


def test_one_helper_is_opened_once() -> None:
    helper = MCPTools(STDIO)
    with helper:
        pass
    with pytest.raises(MCPError, match="already opened"):
        helper.open()


# -- streamable HTTP on the loopback ------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, SERVER, "http", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the MCP HTTP test server did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_streamable_http_server_tools_run_under_run_and_arun(http_url: str, mode: str) -> None:
    async def run_async() -> Any:
        async with mcp_tools(http_url) as tools:
            return await ReactAgent(ScriptedChatModel(SCRIPT), tools, max_iterations=len(SCRIPT)).arun("task")

    if mode == "sync":
        with mcp_tools(http_url) as tools:
            result = run_script(tools, SCRIPT, mode="sync")
    else:
        result = asyncio.run(run_async())
    assert observations(result) == EXPECTED


def test_an_unreachable_url_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    with pytest.raises(MCPError, match="could not be started or reached"), mcp_tools(url, startup_timeout=10):
        pass


# -- tools loaded with langchain-mcp-adapters directly -------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_adapter_loaded_tools_give_text_and_error_observations(mode: str) -> None:
    """MultiServerMCPClient tools are async-only, return content blocks with ids and hand MCP errors back as
    content: the agent bridges them under ``run``, shows plain text and marks the error."""
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient({"test": {"transport": "stdio", "command": sys.executable, "args": [SERVER]}})
    tools = asyncio.run(client.get_tools())
    script = [call("add", a=2, b=40), call("fail", reason="no"), call("image"), finish("done")]
    result = run_script(tools, script, mode=mode, timeout=30)
    assert observations(result) == [*EXPECTED[:3]]


def test_without_the_mcp_extra_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters.sessions", None)
    with pytest.raises(ConfigError, match=r"react-agent\[mcp\]"):
        mcp_tools(STDIO)
