"""The exception tree of react_agent, in one module.

::

    ReactAgentError                   base of everything this package raises on purpose
    ├── ConfigError(ValueError)       a developer mistake or a setup problem no retry can fix (bad option,
    │   │                             template, tool, missing extra or credentials): names the fix
    │   ├── MissingPackageError       ... a package the model needs is not installed (also an ImportError)
    │   └── TaskError                 a tasks file or task list that cannot be used (batch)
    ├── OutputParseError(ValueError)  the model's mistake: no action can be safely extracted from its text;
    │                                 inside a run it becomes an observation the model reads next step
    ├── RunError                      a run that cannot go on: a bug, ours or in an overridden method;
    │                                 carries the steps made so far in ``.steps``
    ├── ModelCallError                the model failed beyond the retries: the run ends with status "error"
    ├── ToolError                     a tool call failed: the model reads it as an error observation
    ├── ToolTimeout                   a tool call ran past its timeout: an error observation too
    ├── JournalError                  a journal cannot be read, written or resumed
    │   └── JournalMismatchError      a resume asked for an effect the journal does not hold there
    └── MCPError                      an MCP server could not be started or reached

Inside a run only ``ConfigError``, ``JournalError`` and ``RunError`` escape: the model's mistakes and tool
failures are observations, the model's failure after retries is a status.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from react_agent._types import AgentStep

__all__ = [
    "ConfigError",
    "JournalError",
    "JournalMismatchError",
    "MCPError",
    "MissingPackageError",
    "ModelCallError",
    "OutputParseError",
    "ReactAgentError",
    "RunError",
    "TaskError",
    "ToolError",
    "ToolTimeout",
    "install_hint",
]


class ReactAgentError(Exception):
    """Base class of every exception react_agent raises on purpose."""


class ConfigError(ReactAgentError, ValueError):
    """A developer mistake, detected when the agent (or prompt set, or tool registry) is built."""


class MissingPackageError(ConfigError, ImportError):
    """A package the model needs is not installed: the message gives the install command."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        ConfigError.__init__(self, message)
        self.name = name


def install_hint(extra: str, packages: str) -> str:
    """How to install the extra ``extra`` of react-agent, which no public index has: from a checkout, or its
    ``packages`` by name (the one wording every error that needs an extra uses)."""
    return (f"install the extra react-agent[{extra}] (pip install '.[{extra}]' in a checkout of react-agent, "
            f"or pip install {packages})")


class OutputParseError(ReactAgentError, ValueError):
    """No action could be safely extracted from the model's text.

    ``text`` is the raw model output; ``message`` explains the problem in English; ``reason`` is a short
    code (``"empty"``, ``"no_action"``, ``"truncated"``, ``"missing_action"``, ``"invalid_action"``,
    ``"invalid_input"``, ``"prose"``, ``"too_long"``, ``"too_deep"``, ``"duplicate_key"``,
    ``"too_many_digits"``) that the ``parse_error`` template of each language turns into its own feedback
    sentence; ``key`` is the key a ``"duplicate_key"`` reply gives twice, ``limit`` the bound a
    ``"too_deep"`` (levels) or ``"too_many_digits"`` (digits) reply passes (else ``None``).
    """

    def __init__(self, message: str, text: str = "", *, reason: str = "no_action", key: str | None = None,
                 limit: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.reason = reason
        self.key = key
        self.limit = limit


class RunError(ReactAgentError):
    """A run stopped by an unexpected exception; ``steps`` holds every step completed before it."""

    def __init__(self, message: str, steps: Sequence[AgentStep] = ()) -> None:
        super().__init__(message)
        self.steps: list[AgentStep] = list(steps)


class JournalError(ReactAgentError):
    """The journal cannot be read, written or resumed (missing run, corrupt line, unwritable file)."""


class JournalMismatchError(JournalError):
    """The resumed loop asked for an effect the journal does not hold at that position (changed prompts,
    tools, agent class or options): replaying it would answer a different question."""


class ModelCallError(ReactAgentError):
    """The model failed beyond the retries. Raise it (``from`` the cause) in an overridden ``call_model``
    for failures that should end the run with status ``"error"``; any other exception is a bug
    (:class:`RunError`)."""


class ToolTimeout(ReactAgentError):
    """A tool call ran past its timeout and was abandoned (not a ``TimeoutError`` the tool raised itself)."""


class ToolError(ReactAgentError):
    """A tool call failed: the tool raised, or its result reports an error (MCP ``isError``, a
    ``ToolMessage`` with ``status="error"``, an error its ``handle_tool_error`` turned into content).

    ``str()`` is the text for the model and never fails; the tool's own exception is ``__cause__``.
    """


class MCPError(ReactAgentError):
    """An MCP server could not be started or reached, or its tools cannot be given to an agent."""


class TaskError(ConfigError):
    """A tasks file or task list that cannot be used (unreadable file, bad line, duplicate id)."""
