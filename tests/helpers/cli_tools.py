"""A user's tool module for the CLI tests and docs/cli.md: ``react-agent run "..." --tools cli_tools:tools``.

``tools`` is a list of two tools (a typed, documented function and a ``@tool``); ``make_tools`` is a
factory returning it. ``note`` appends each call to the file named by ``$CLI_TOOLS_LOG`` (if set), so a
test can count how many times a side effect really happened. The other attributes are mistakes the CLI
must explain.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.tools import tool


def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@tool
def note(text: str) -> str:
    """Write a note and return a confirmation."""
    log = os.environ.get("CLI_TOOLS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return f"noted: {text}"


tools = [add, note]


def make_tools() -> list[Any]:
    """A factory: ``--tools cli_tools:make_tools``."""
    return [add, note]


def needs_arguments(prefix: str) -> list[Any]:
    """A factory that cannot be called without arguments."""
    return [add]


def _undocumented(x: int) -> int:
    return x


not_a_list = 42
empty: list[Any] = []
not_tools = ["add", "note"]
undocumented = [_undocumented]
