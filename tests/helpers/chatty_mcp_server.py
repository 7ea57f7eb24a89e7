"""A real stdio MCP server that logs as FastMCP does by default: an INFO line on stderr for every request.

Tool ``multiply(a, b)``. ``python tests/helpers/chatty_mcp_server.py``
"""

from __future__ import annotations

import logging

from mcp.server.fastmcp import FastMCP

server = FastMCP("react-agent-chatty-test")  # log_level INFO, the default
log = logging.getLogger("chatty")


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    log.warning("multiplying %s by %s", a, b)
    return a * b


if __name__ == "__main__":
    server.run("stdio")
