"""The ``react-agent`` command line (docs/cli.md)."""

from react_agent.cli._main import main
from react_agent.cli._models import CliError, build_model

__all__ = ["CliError", "build_model", "main"]
