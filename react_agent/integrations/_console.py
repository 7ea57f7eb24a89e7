"""``verbose=True``: each step of a run printed live on stderr with rich, as ``react-agent run`` shows it.

This console is the one deliberate output of the library; everything else logs through ``logging``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from react_agent._types import FINISH, AgentResult, AgentStep

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["StepConsole"]


class StepConsole:
    """Prints a run's task, each step as it completes and the result's status on stderr."""

    def __init__(self, agent: str, console: Console | None = None) -> None:
        from rich.console import Console  # imported by verbose runs only: rich takes a while to import

        self.agent = agent
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)

    def task(self, text: str) -> None:
        self.console.print(f"[bold]{escape(self.agent)}[/bold]: {escape(_short(text))}")

    def step(self, index: int, step: AgentStep) -> None:
        usage = step.usage
        tokens = f", {usage.input_tokens}+{usage.output_tokens} tokens" if usage.total_tokens else ""
        tokens += f", {usage.cached_input_tokens} reused" if usage.cached_input_tokens else ""
        lines = [f"[bold]Step {index}[/bold] ({step.duration_s:.1f}s{tokens})"]
        if step.thought:
            lines.append(f"  [cyan]Thought: {escape(step.thought)}[/cyan]")
        action = step.action or "(unparseable reply)"
        lines.append(f"  [{'yellow' if step.action else 'red'}]Action: {escape(action)}[/]")
        if step.action == FINISH:
            lines.append(f"  Answer: {escape(_indent(step.action_input))}")
        else:
            if step.action is not None:
                lines.append(f"  Input: {escape(json.dumps(step.action_input, ensure_ascii=False, default=str))}")
            colour = "red" if step.is_error else "green"
            lines.append(f"  [{colour}]Observation: {escape(_indent(step.observation))}[/]")
            if step.reflection:
                lines.append(f"  [magenta]Reflection: {escape(_indent(step.reflection))}[/magenta]")
        self.console.print("\n".join(lines))

    def result(self, result: AgentResult) -> None:
        colour = "green" if result.status == "finished" else "red"
        self.console.print(f"[{colour}]{escape(self.agent)} {result.status}[/] after {len(result.steps)} step(s), "
                           f"{result.llm_calls} model call(s), {result.usage.total_tokens} tokens")


def escape(text: str) -> str:
    """``text`` with rich's markup escaped."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _indent(text: Any) -> str:
    return str(text).replace("\n", "\n    ")


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
