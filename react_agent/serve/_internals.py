"""The one place the server reaches inside react_agent (modules that are not public API); the lead keeps
these imports working when modules move."""

from react_agent._journal import secret_values

__all__ = ["secret_values"]


def cli_parts() -> dict[str, object]:
    """The pieces of ``react-agent run`` that ``serve`` shares (flags, model, tools, agent), imported when the
    command runs."""
    from react_agent import cli

    names = ("CliError", "EXIT_USAGE", "EXIT_SETUP", "Setup", "build_agent", "build_model", "load_tools",
             "open_mcp_tools", "tools_for", "_work_flags", "_agent_flags")
    return {name: getattr(cli, name) for name in names}
