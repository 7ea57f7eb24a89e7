"""Tools: the registry, argument validation, running tools with timeouts, results as text, the JSON schemas
of a decision, worked examples generated from tool schemas, and MCP servers as tools."""

from react_agent.tools._examples import examples_for_tools
from react_agent.tools._mcp import MCPError, MCPTools, mcp_tools
from react_agent.tools._registry import (
    Outcome,
    Rejection,
    ToolLike,
    ToolRegistry,
    ToolTimeout,
    name_problem,
    run_async,
    run_sync,
    stringify,
)
from react_agent.tools._results import error_text, short_repr
from react_agent.tools._schema import answer_schema
from react_agent.tools._timeouts import DeadlineExceeded, acall_in_thread, acall_within, call_within, native_async

__all__ = [
    "DeadlineExceeded",
    "MCPError",
    "MCPTools",
    "Outcome",
    "Rejection",
    "ToolLike",
    "ToolRegistry",
    "ToolTimeout",
    "acall_in_thread",
    "acall_within",
    "answer_schema",
    "call_within",
    "error_text",
    "examples_for_tools",
    "mcp_tools",
    "name_problem",
    "native_async",
    "run_async",
    "run_sync",
    "short_repr",
    "stringify",
]
