"""Frozen data records: what the parser returns and what a run produces."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FINISH", "AgentAction", "AgentResult", "AgentStep", "CallContext", "Example", "RunStatus", "ToolInfo",
           "Usage"]

FINISH = "FINISH"
"""The pseudo-tool that ends a run; its ``action_input`` is the final answer text."""

RunStatus = Literal["finished", "repeated", "max_iterations", "timeout", "budget", "error"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Frozen):
    """Token counts, summed over model calls that report them (0 where a model reports nothing).
    ``cached_input_tokens``: the part of ``input_tokens`` the model took from its cache instead of evaluating
    (LangChain's ``input_token_details["cache_read"]``; the embedded model's reused prompt prefix)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
        )


class AgentAction(_Frozen):
    """One decision of the model: call ``action`` with ``action_input``, or FINISH with the answer.

    For FINISH, ``action_input`` is the final answer text (a ``str``); for a tool it is a ``dict``
    of arguments.
    """

    thought: str = ""
    action: str
    action_input: dict[str, Any] | str = Field(default_factory=dict)

    @property
    def is_finish(self) -> bool:
        return self.action == FINISH


class AgentStep(_Frozen):
    """One completed step of a run: the decision, what came of it, and what it cost.

    ``action`` is ``None`` when the model's text could not be parsed; then ``observation`` holds the
    feedback the model was shown and ``is_error`` is true. ``reflection`` holds the reflection text
    made after this step (ReflectionAgent), if any. ``call_id`` is the id of the tool call under the native
    protocol; ``decision`` numbers the decision a step came from when a decision made several steps (parallel
    calls) or under the native protocol (``None`` otherwise).
    """

    thought: str = ""
    action: str | None = None
    action_input: dict[str, Any] | str = Field(default_factory=dict)
    observation: str = ""
    is_error: bool = False
    reflection: str | None = None
    raw_output: str = ""
    duration_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    call_id: str | None = None
    decision: int | None = None


class Example(_Frozen):
    """A worked example for the prompt: a task, the steps taken so far, and the right next answer.

    Pass examples to an agent (``examples=[...]``): it renders each one once, the history with the
    agent's own ``history`` template (so it looks exactly like a real history) and the answer as the
    JSON object the model should write. Small models copy examples closely, so use the agent's own
    tools, realistic values and, in ``steps``, the observations the tools really return.
    """

    task: str
    steps: list[AgentStep] = Field(default_factory=list)
    answer: AgentAction


class AgentResult(_Frozen):
    """The outcome of a run: final answer, why the run ended, every step and the cost."""

    output: str
    status: RunStatus
    steps: list[AgentStep] = Field(default_factory=list)
    llm_calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    output_object: Any = None
    """The validated object of a structured final answer (``output_schema``), else ``None``."""
    messages: list[Any] = Field(default_factory=list, exclude=True, repr=False)
    """The answer as LangChain messages: one ``AIMessage`` named after the agent (set by the run, not
    serialised). A LangGraph node that is the agent itself appends it to a state's ``messages``."""


class ToolInfo(_Frozen):
    """One tool as a model call sees it: its name, description and the JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)


class CallContext(_Frozen):
    """What a decision is about, handed to a model that declares ``accepts_call_context = True`` as the
    ``react_agent_call`` keyword of ``invoke``: the task, the observations so far and the tools, so the model
    never has to find them in the rendered prompt."""

    task: str = ""
    observations: tuple[str, ...] = ()
    tools: tuple[ToolInfo, ...] = ()

    @property
    def text(self) -> str:
        """The task and the observations, one per paragraph: the text a call's values come from."""
        return "\n\n".join([self.task, *self.observations])
