"""The one place the server reaches inside react_agent (modules that are not public API); the lead keeps
these imports working when modules move."""

from types import SimpleNamespace
from typing import Any

from react_agent._journal import secret_values

__all__ = ["CLI_NAMES", "cli_parts", "secret_values"]


CLI_NAMES = ("CliError", "EXIT_USAGE", "Setup", "build_agent", "build_model", "load_tools", "open_mcp_tools",
             "tools_for", "_work_flags", "_agent_flags")


def cli_parts() -> Any:
    """The pieces of ``react-agent run`` that ``serve`` shares (its flags, model, tools and agent), as
    attributes, imported when the command is built (``react_agent.cli`` imports this package)."""
    from react_agent import cli

    return SimpleNamespace(**{name.lstrip("_"): getattr(cli, name) for name in CLI_NAMES})
