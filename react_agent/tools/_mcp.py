"""MCP servers as tool sources: start or attach MCP servers and give their tools to an agent.

Needs the ``mcp`` extra (``pip install '.[mcp]'`` in a checkout of react-agent: the ``mcp`` SDK and
``langchain-mcp-adapters``). One helper serves sync and async code::

    from react_agent import ReactAgent
    from react_agent.mcp import mcp_tools

    with mcp_tools("python server.py", "http://127.0.0.1:8000/mcp") as tools:
        result = ReactAgent(llm, tools, timeout=30).run("What is 2 + 40?")

    async with mcp_tools(["python", "server.py"]) as tools:
        result = await ReactAgent(llm, tools, timeout=30).arun("What is 2 + 40?")

A server is a command line (``"python server.py"``, split like a shell would), an argv list
(``["python", "server.py"]``), an ``http(s)://`` URL of a streamable HTTP endpoint, or a
langchain-mcp-adapters connection dict (``{"transport": "stdio", "command": ..., "args": [...],
"env": {...}}``, ``{"transport": "streamable_http", "url": ..., "headers": {...}}``), optionally with
a ``"name"`` used by ``prefix=True``.

The sessions live on a background event loop in a daemon thread owned by the helper: the tools work
under ``run`` and ``arun`` (any event loop, any thread), and leaving the ``with`` block closes the
sessions and stops the servers it started. A server started from a command line or argv list has its
stderr read line by line into :mod:`logging` (logger ``react_agent.tools``): the lines it logs at INFO
or DEBUG (FastMCP logs every request at INFO) at DEBUG, every other line (warnings, errors, tracebacks)
at WARNING. The ``mcp`` library's own logger is raised to WARNING unless the application set its level.
Each call returns the server's content as text for the
model (text parts joined, images and files summarised); an MCP error result (``isError``) raises
``ToolException``, which the agent shows the model as an error observation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re
import shlex
import threading
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from react_agent.errors import ConfigError, MCPError, MissingPackageError, install_hint
from react_agent.tools._results import error_text, tool_outcome
from react_agent.tools._timeouts import acall_in_thread

__all__ = ["MCPError", "MCPTools", "mcp_tools"]

logger = logging.getLogger(__name__)

INSTALL_HINT = install_hint("mcp", "mcp langchain-mcp-adapters")
_LEVEL = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:\d{4}-\d\d-\d\d[ T][\d:,.]+\s*)?"
                    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b")

ServerSpec = str | Sequence[str] | Mapping[str, Any]


@dataclass(frozen=True)
class _Server:
    label: str  # for messages: the command line or the URL
    name: str  # for prefix=True
    connection: dict[str, Any]
    relay_stderr: bool = False  # started from a command line or argv: its stderr goes to logging


def mcp_tools(*servers: ServerSpec, prefix: bool = False, startup_timeout: float = 30.0,
              close_timeout: float = 10.0) -> MCPTools:
    """The tools of MCP ``servers``, to use as ``with mcp_tools(...) as tools`` or ``async with``.

    - ``prefix``: name each tool ``<server>_<tool>`` (the server's ``"name"``, else the script's or
      host's name), for servers whose tool names clash.
    - ``startup_timeout``: seconds to start every server and list its tools, else :class:`MCPError`.
    - ``close_timeout``: seconds to close the sessions at the end before giving up on them.
    """
    return MCPTools(*servers, prefix=prefix, startup_timeout=startup_timeout, close_timeout=close_timeout)


class MCPTools:
    """Open MCP sessions and their tools (see :func:`mcp_tools`). Opened once, closed once."""

    def __init__(self, *servers: ServerSpec, prefix: bool = False, startup_timeout: float = 30.0,
                 close_timeout: float = 10.0) -> None:
        try:
            import langchain_mcp_adapters.sessions  # noqa: F401
            import mcp  # noqa: F401
        except ImportError as exc:
            raise MissingPackageError(f"MCP tools need the mcp extra ({exc}): {INSTALL_HINT}",
                                      name=exc.name) from None
        if not servers:
            raise ConfigError("mcp_tools needs at least one server: a command line, an argv list or a URL")
        for option, value in (("startup_timeout", startup_timeout), ("close_timeout", close_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigError(f"{option} must be positive seconds, got {value!r}")
        self._servers = [_server(spec) for spec in servers]
        self._prefix = prefix
        self._startup_timeout = float(startup_timeout)
        self._close_timeout = float(close_timeout)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[Any] | None = None
        self._serving = False
        self._tools: list[BaseTool] = []
        self._opened = False
        self._closed = False

    @property
    def tools(self) -> list[BaseTool]:
        """The servers' tools (empty before :meth:`open`)."""
        return list(self._tools)

    # -- sync --------------------------------------------------------------------------------------

    def open(self) -> list[BaseTool]:
        """Start or attach every server and list its tools; :class:`MCPError` when one fails."""
        ready = self._start()
        try:
            self._tools = ready.result(timeout=self._startup_timeout)
        except concurrent.futures.TimeoutError:
            self.close()
            raise MCPError(self._timeout_message()) from None
        except BaseException:
            self.close()
            raise
        return self.tools

    def close(self) -> None:
        """Close the sessions (stopping the servers this helper started) and the background loop."""
        if self._closed or self._loop is None:
            self._closed = True
            return
        self._closed = True
        loop = self._loop
        try:
            asyncio.run_coroutine_threadsafe(self._finish(), loop).result(timeout=self._close_timeout + 5)
        except (RuntimeError, concurrent.futures.TimeoutError) as exc:
            logger.warning("MCP sessions did not close cleanly: %s", type(exc).__name__)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=self._close_timeout)
            if not self._thread.is_alive():
                loop.close()

    def __enter__(self) -> list[BaseTool]:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- async -------------------------------------------------------------------------------------

    async def aopen(self) -> list[BaseTool]:
        """Async :meth:`open`: the caller's event loop is not blocked while the servers start."""
        ready = asyncio.wrap_future(self._start())
        try:
            self._tools = await asyncio.wait_for(ready, self._startup_timeout)
        except asyncio.TimeoutError:
            await self.aclose()
            raise MCPError(self._timeout_message()) from None
        except BaseException:
            await self.aclose()
            raise
        return self.tools

    async def aclose(self) -> None:
        """Async :meth:`close` (run in a daemon thread, so the caller's loop is not blocked)."""
        await acall_in_thread(self.close, None, name="mcp-close")

    async def __aenter__(self) -> list[BaseTool]:
        return await self.aopen()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # -- the background loop -------------------------------------------------------------------------

    def _start(self) -> concurrent.futures.Future[list[BaseTool]]:
        if self._opened:
            raise MCPError("these MCP tools were already opened: call mcp_tools(...) again for a new connection")
        self._opened = True
        mcp_logger = logging.getLogger("mcp")
        if mcp_logger.level == logging.NOTSET:  # its clients log every session at INFO
            mcp_logger.setLevel(logging.WARNING)
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="react-agent-mcp", daemon=True)
        self._thread.start()
        ready: concurrent.futures.Future[list[BaseTool]] = concurrent.futures.Future()
        asyncio.run_coroutine_threadsafe(self._serve(ready), loop)
        return ready

    async def _serve(self, ready: concurrent.futures.Future[list[BaseTool]]) -> None:
        """Open every session, hand out the tools, keep the sessions until :meth:`close`."""
        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        current: _Server | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                opened = []
                for current in self._servers:
                    session = await stack.enter_async_context(_session(current))
                    await session.initialize()
                    listed = await _list_tools(session)
                    logger.debug("MCP server %s: %d tools", current.label, len(listed))
                    opened.append((current, session, listed))
                current = None
                ready.set_result(self._make_tools(opened))
                self._serving = True
                await self._stop.wait()
        except BaseException as exc:
            if ready.done():
                raise
            ready.set_exception(exc if isinstance(exc, MCPError) else _start_error(current, exc))

    async def _finish(self) -> None:
        """On the background loop: end :meth:`_serve` (closing every session), then any call still pending."""
        task = self._task
        if task is not None and not task.done():
            if self._stop is not None and self._serving:
                self._stop.set()
            else:  # still starting: stop waiting for the servers
                task.cancel()
            done, _ = await asyncio.wait({task}, timeout=self._close_timeout)
            if not done:
                logger.warning("MCP sessions did not close within %s s; cancelling them", self._close_timeout)
                task.cancel()
                await asyncio.wait({task}, timeout=2.0)
        await _cancel_all()

    def _make_tools(self, opened: list[tuple[_Server, Any, list[Any]]]) -> list[BaseTool]:
        tools: list[BaseTool] = []
        owners: dict[str, str] = {}
        for server, session, listed in opened:
            for spec in listed:
                name = f"{server.name}_{spec.name}" if self._prefix else str(spec.name)
                if name in owners:
                    raise MCPError(f"MCP tool {name!r} is offered by both {owners[name]} and {server.label}: pass "
                                   "prefix=True to name tools <server>_<tool>")
                owners[name] = server.label
                tools.append(self._make_tool(server, session, spec, name))
        return tools

    def _make_tool(self, server: _Server, session: Any, spec: Any, name: str) -> BaseTool:
        remote = str(spec.name)

        def call(**arguments: Any) -> str:
            if threading.current_thread() is self._thread:
                raise ToolException("an MCP tool cannot be called synchronously from its own event loop")
            return _text_or_raise(self._submit(session, remote, arguments, server).result())

        async def acall(**arguments: Any) -> str:
            return _text_or_raise(await asyncio.wrap_future(self._submit(session, remote, arguments, server)))

        annotations = spec.annotations.model_dump(exclude_none=True) if spec.annotations is not None else {}
        schema = dict(spec.inputSchema or {"type": "object", "properties": {}})
        return StructuredTool(name=name, description=spec.description or "", args_schema=schema, func=call,
                              coroutine=acall, handle_tool_error=True,
                              metadata={"mcp_server": server.label, "mcp_tool": remote, **annotations})

    def _submit(self, session: Any, name: str, arguments: dict[str, Any],
                server: _Server) -> concurrent.futures.Future[Any]:
        if self._closed or self._loop is None:
            raise ToolException(f"the MCP connection to {server.label} is closed: call the tools inside "
                                "`with mcp_tools(...)`")
        return asyncio.run_coroutine_threadsafe(session.call_tool(name, arguments), self._loop)

    def _timeout_message(self) -> str:
        labels = ", ".join(s.label for s in self._servers)
        return (f"MCP servers {labels} did not start within {self._startup_timeout} s: check the commands and URLs, "
                "or raise startup_timeout")


def _session(server: _Server) -> contextlib.AbstractAsyncContextManager[Any]:
    """The client session of ``server`` (not yet initialized)."""
    if server.relay_stderr:
        return _relayed_stdio_session(server)
    from langchain_mcp_adapters.sessions import create_session

    return create_session(server.connection)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def _relayed_stdio_session(server: _Server) -> AsyncIterator[Any]:
    """A stdio session whose server's stderr is read into :mod:`logging` (see :func:`relay_lines`)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=server.connection["command"], args=server.connection["args"])
    read_fd, write_fd = os.pipe()
    reader = threading.Thread(target=_relay_pipe, args=(read_fd, server.name), name="react-agent-mcp-stderr",
                              daemon=True)
    reader.start()
    with open(write_fd, "w", encoding="utf-8") as errlog:  # the server's copy stays open until it exits
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            yield session


def _relay_pipe(fd: int, label: str) -> None:
    """Relay the pipe until the server closes it; a line longer than 8 KB comes in pieces. Whatever happens,
    the pipe is drained to its end, so the server never blocks on a full stderr."""
    with open(fd, "rb") as pipe:
        pieces = iter(lambda: pipe.readline(8192), b"")
        try:
            relay_lines((raw.decode("utf-8", "replace") for raw in pieces), label)
        except Exception:
            for _ in pieces:
                pass


def relay_lines(lines: Iterable[str], label: str) -> None:
    """Log the stderr ``lines`` of the MCP server ``label``: a record the server logs at DEBUG or INFO (its
    level word at the start, after an optional ``[time]`` or date; indented lines continue it) at DEBUG,
    every other line at WARNING."""
    quiet = False
    for line in lines:
        text = line.rstrip()
        if not text.strip():
            continue
        tagged = _LEVEL.match(text)
        if tagged:
            quiet = tagged["level"] in ("DEBUG", "INFO")
        elif not text[:1].isspace():
            quiet = False
        logger.log(logging.DEBUG if quiet else logging.WARNING, "MCP server %s: %s", label, text.strip())


async def _list_tools(session: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(1000):
        page = await session.list_tools(cursor=cursor)
        tools.extend(page.tools or [])
        cursor = page.nextCursor
        if not cursor:
            return tools
    raise MCPError("the MCP server kept paging its tool list (1000 pages)")


async def _cancel_all() -> None:
    """Cancel the calls still pending on the background loop (their sessions are gone)."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=1.0)


def _start_error(server: _Server | None, exc: BaseException) -> MCPError:
    where = f"MCP server {server.label}" if server is not None else "An MCP server"
    error = MCPError(f"{where} could not be started or reached: {error_text(_root(exc))}. Check the command or "
                     "URL, and that the server speaks MCP")
    error.__cause__ = exc
    return error


def _text_or_raise(result: Any) -> str:
    text, is_error = tool_outcome(result)
    if is_error:
        raise ToolException(text)
    return text


def _root(exc: BaseException) -> BaseException:
    """The single cause inside (nested) exception groups, as anyio task groups wrap errors."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if not isinstance(inner, (list, tuple)) or len(inner) != 1:
            return exc
        exc = inner[0]


def _server(spec: ServerSpec) -> _Server:
    """A server spec as a langchain-mcp-adapters connection; :class:`ConfigError` when malformed."""
    if isinstance(spec, Mapping):
        connection = dict(spec)
        name = connection.pop("name", None)
        if "transport" not in connection:
            raise ConfigError(f"MCP server {spec!r} has no 'transport': use 'stdio' or 'streamable_http'")
        label = str(connection.get("url") or shlex.join([str(connection.get("command", "")),
                                                         *map(str, connection.get("args", []))]))
        return _Server(label, _safe_name(name) if name else _short_name(connection), connection)
    if isinstance(spec, str):
        text = spec.strip()
        if re.match(r"https?://", text, re.I):
            connection = {"transport": "streamable_http", "url": text}
            return _Server(text, _short_name(connection), connection)
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise ConfigError(f"MCP server command {spec!r} cannot be split into arguments: {exc}") from None
    elif isinstance(spec, Sequence) and all(isinstance(a, str) for a in spec):
        argv = list(spec)
    else:
        raise ConfigError(f"MCP server {spec!r} is not a command line, an argv list of strings, a URL or a "
                          "connection dict")
    if not argv or not argv[0].strip():
        raise ConfigError(f"MCP server {spec!r} has no command: give e.g. 'python server.py'")
    connection = {"transport": "stdio", "command": argv[0], "args": argv[1:]}
    return _Server(shlex.join(argv), _short_name(connection), connection, relay_stderr=True)


def _short_name(connection: Mapping[str, Any]) -> str:
    """``server`` for ``python server.py``, ``127_0_0_1_8000`` for ``http://127.0.0.1:8000/mcp``."""
    if connection.get("url"):
        parts = urlsplit(str(connection["url"]))
        return _safe_name(f"{parts.hostname or 'mcp'}_{parts.port}" if parts.port else parts.hostname or "mcp")
    args = [str(a) for a in connection.get("args", [])]
    scripts = [a for a in args if not a.startswith("-") and PurePath(a).suffix]
    return _safe_name(PurePath(scripts[-1] if scripts else str(connection.get("command", "mcp"))).stem)


def _safe_name(name: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(name)).strip("_") or "mcp"
