"""A real stdio MCP server for the CLI tests (the ``mcp`` SDK's FastMCP): ``python tests/helpers/cli_mcp_server.py``.

Tool ``multiply(a, b)``.
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

server = FastMCP("react-agent-cli-test", log_level="WARNING")


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


if __name__ == "__main__":
    server.run("stdio")
