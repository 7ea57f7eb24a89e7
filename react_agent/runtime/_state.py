"""What one run knows, and the effects its loop yields (re-exported publicly by :mod:`react_agent.loop`)."""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage

from react_agent._types import AgentAction, AgentResult, AgentStep, CallContext, RunStatus, Usage
from react_agent.errors import ModelCallError
from react_agent.runtime._journal import RunJournal
from react_agent.tools import Outcome

__all__ = ["Effect", "Loop", "ModelCall", "ModelCallError", "ModelReply", "Outcome", "RunState", "StepDone",
           "StepDraft", "ToolCall", "ToolCalls", "completed_step"]

T = TypeVar("T")


@dataclass(frozen=True)
class ModelCall:
    """Ask the model. The loop receives a :class:`ModelReply`.

    ``purpose`` names the call in traces and journals (``decision``, ``reflection``, ``final_answer``,
    ``plan``, ``fill``); ``schema`` is the JSON schema the reply must follow under constrained decoding
    (``None``: free text); ``context`` is what the call is about (the task, observations and tools), handed to
    a model that declares ``accepts_call_context`` (``None``: nothing to hand).
    """

    messages: list[BaseMessage]
    purpose: str = "decision"
    schema: Mapping[str, Any] | None = None
    tool_calls: bool = False
    """The native protocol's decision: the model's tools are bound, and the reply's tool calls come back in
    its text (the JSON of :func:`react_agent.runtime.native_reply_text`), journaled and replayed with it."""
    context: CallContext | None = None
    tools: tuple[Mapping[str, Any], ...] | None = None
    """With ``tool_calls``: the tools to bind for this call alone (OpenAI-format function schemas; ``None``: the
    agent's own tools)."""


@dataclass(frozen=True)
class ToolCall:
    """Run a tool. The loop receives an :class:`Outcome` (an observation; a failure is never raised)."""

    action: AgentAction


@dataclass(frozen=True)
class ToolCalls:
    """Run several tool calls of one decision concurrently. The loop receives their :class:`Outcome` s in
    call order; each call is validated, approved, journaled and replayed on its own, with its own key."""

    actions: tuple[AgentAction, ...]
    drafts: tuple[StepDraft, ...] | None = None
    """The step each call becomes (one per action). Given, each call's step is completed (:func:`completed_step`)
    and published as soon as that call has its outcome, while the others still run, and the loop receives the
    completed steps in call order instead of the outcomes; recording them (``yield from agent.record(...)``)
    journals them and does not publish them again."""


@dataclass(frozen=True)
class StepDraft:
    """The step a call of :class:`ToolCalls` becomes, before its outcome is known: ``step`` without its
    observation, at ``index`` (1-based) among the run's steps; ``publish=False`` keeps it back until the loop
    records it (a step the loop still changes, such as the last one of a decision it reviews)."""

    step: AgentStep
    index: int
    publish: bool = True


def completed_step(draft: StepDraft, outcome: Outcome, seconds: float) -> AgentStep:
    """The draft's step with the call's outcome, and the call's ``seconds`` added to its duration."""
    return draft.step.model_copy(update={"observation": outcome.observation, "is_error": outcome.is_error,
                                         "duration_s": draft.step.duration_s + seconds})


@dataclass(frozen=True)
class StepDone:
    """Publish a completed step to ``stream``/``astream`` (and the journal). The loop receives ``None``."""

    step: AgentStep


@dataclass(frozen=True)
class ModelReply:
    """A model's answer reduced to text, with the tokens it reports and the seconds it took."""

    text: str
    usage: Usage
    seconds: float


Effect = ModelCall | ToolCall | ToolCalls | StepDone
"""What a loop yields: a model call, a tool call, concurrent tool calls, or a completed step to publish."""
Loop = Generator[Effect, Any, T]
"""A loop generator: yields effects, receives their replies, returns ``T`` (``None`` for a whole run)."""


@dataclass(eq=False)
class RunState:
    """Everything one run knows. Created per run by the agent, so runs never share history.

    Subclass it for a custom agent's own per-run data and point the agent's ``State`` at the subclass
    (``ReflectionAgent`` and ``PlanAndExecuteAgent`` do).
    """

    task: str
    steps: list[AgentStep] = field(default_factory=list)
    session: Mapping[str, Any] = field(default_factory=dict)
    references: list[tuple[str, str]] = field(default_factory=list, repr=False)
    """Every encoding of each session value, with the ``$session.<key>`` reference that stands in for it in
    text shown to the model and in the journal."""
    journal: RunJournal | None = None
    started: float = field(default_factory=time.monotonic)
    deadline: float | None = None
    iterations: int = 0
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    parse_failures: int = 0
    status: RunStatus | None = None
    output: str = ""
    output_object: Any = None
    error: str | None = None
    entries: dict[int, tuple[AgentStep, dict[str, Any], str | None]] = field(default_factory=dict, repr=False)
    """History entries by step index, with the text the ``history`` template writes for each when it renders
    item by item (a step replaced by a reflection is rendered again)."""
    step_prompt: tuple[Any, ...] | None = field(default=None, repr=False)
    """The step prompt rendered around its history, with the values it was rendered for (reused while they
    stay the same: the task and the tools do not change during a run)."""

    @property
    def done(self) -> bool:
        return self.status is not None

    @property
    def last_observation(self) -> str:
        return self.steps[-1].observation if self.steps else ""

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def end(self, status: RunStatus, output: str, error: str | None = None) -> None:
        self.status, self.output, self.error = status, output, error

    def result(self) -> AgentResult:
        return AgentResult(output=self.output, status=self.status or "error", steps=list(self.steps),
                           llm_calls=self.llm_calls, usage=self.usage, error=self.error,
                           output_object=self.output_object)
