"""A small real MCP server for the tests, written with the ``mcp`` SDK's FastMCP.

Run it as ``python tests/helpers/mcp_server.py`` (stdio) or ``python tests/helpers/mcp_server.py http PORT`` (streamable
HTTP on 127.0.0.1:PORT, path ``/mcp``). Tools: ``add``, ``echo``, ``fail`` (an MCP error result,
``isError``), ``image`` (text and a PNG), ``slow`` (sleeps) and ``pid`` (the server's process id).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.fastmcp import FastMCP, Image

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 1226  # 1234 bytes

server = FastMCP("react-agent-test", host="127.0.0.1", port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000,
                 log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def fail(reason: str) -> str:
    """Always fail with the given reason."""
    raise ValueError(f"refused: {reason}")


@server.tool(structured_output=False)
def image() -> list[object]:
    """Return a caption and a small PNG image."""
    return ["a picture", Image(data=PNG, format="png")]


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for the given number of seconds."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


if __name__ == "__main__":
    server.run("streamable-http" if len(sys.argv) > 1 and sys.argv[1] == "http" else "stdio")
