"""The exception tree of react_agent.

Three families that never blur::

    ReactAgentError                 base of everything this package raises on purpose
    ├── ConfigError(ValueError)     a developer mistake: bad template, duplicate tool name, bad option.
    │                               Raised when the agent is built, with a message that says what to fix.
    ├── OutputParseError(ValueError) the model's mistake: no action can be safely extracted from its text.
    │                               Inside a run it never escapes: it becomes an observation the model
    │                               reads on its next step (``.message`` is written for the model).
    └── RunError                    a run that cannot go on because of a bug (ours or in an overridden
                                    method). Carries the steps made so far in ``.steps``.

Tool errors (exceptions raised by a tool, invalid arguments, timeouts) are not exceptions of this tree:
they are observations. Model failures that survive the retries end the run with
``AgentResult.status == "error"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from react_agent._types import AgentStep

__all__ = ["ConfigError", "OutputParseError", "ReactAgentError", "RunError"]


class ReactAgentError(Exception):
    """Base class of every exception react_agent raises on purpose."""


class ConfigError(ReactAgentError, ValueError):
    """A developer mistake, detected when the agent (or prompt set, or tool registry) is built."""


class OutputParseError(ReactAgentError, ValueError):
    """No action could be safely extracted from the model's text.

    ``text`` is the raw model output; ``message`` explains the problem in words meant for the model;
    ``reason`` is a short code (``"empty"``, ``"no_action"``, ``"truncated"``, ``"missing_action"``,
    ``"invalid_action"``, ``"invalid_input"``, ``"prose"``) that the ``parse_error`` template of each
    language turns into its own feedback sentence.
    """

    def __init__(self, message: str, text: str = "", *, reason: str = "no_action") -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.reason = reason


class RunError(ReactAgentError):
    """A run stopped by an unexpected exception; ``steps`` holds every step completed before it."""

    def __init__(self, message: str, steps: Sequence[AgentStep] = ()) -> None:
        super().__init__(message)
        self.steps: list[AgentStep] = list(steps)
