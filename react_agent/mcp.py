"""MCP servers as tool sources (``mcp_tools``); the implementation is in :mod:`react_agent.tools`."""

from react_agent.tools import MCPError, MCPTools, mcp_tools

__all__ = ["MCPError", "MCPTools", "mcp_tools"]
