"""The public seams of a custom loop: the effects a loop yields, the replies it receives, its state.

A loop (``BaseAgent.loop(state)``) is a generator that never does I/O. It yields

- :class:`ModelCall` and receives a :class:`ModelReply` (``text``, ``usage``, ``seconds``);
- :class:`ToolCall` and receives an :class:`Outcome` (``observation``, ``kind``, ``is_error``);
- :class:`ToolCalls` (several calls of one decision, run concurrently) and receives their outcomes in order
  (or, given a :class:`StepDraft` per call, the completed steps: each one published as its call completes);
- :class:`StepDone` (through ``yield from agent.record(state, step)``) to publish a step.

The agent's journal layer answers replayed effects from the run's journal, so a custom loop is resumable
and concurrency-safe as long as it keeps its per-run data in its :class:`RunState` (subclass it and set the
agent's ``State``). See docs/subclassing.md.
"""

from react_agent.runtime import (
    Effect,
    Loop,
    ModelCall,
    ModelCallError,
    ModelReply,
    RunState,
    StepDone,
    StepDraft,
    ToolCall,
    ToolCalls,
    completed_step,
    message_text,
    message_usage,
    task_of,
)
from react_agent.tools import Outcome

__all__ = [
    "Effect",
    "Loop",
    "ModelCall",
    "ModelCallError",
    "ModelReply",
    "Outcome",
    "RunState",
    "StepDone",
    "StepDraft",
    "ToolCall",
    "ToolCalls",
    "completed_step",
    "message_text",
    "message_usage",
    "task_of",
]
