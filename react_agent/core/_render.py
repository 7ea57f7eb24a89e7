"""Prompt view-models: plain functions that turn steps, examples and tools into template variables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from react_agent._prompts import PromptSet
from react_agent._types import FINISH, AgentAction, AgentStep, Example
from react_agent.errors import ConfigError
from react_agent.runtime import RunState
from react_agent.tools import ToolRegistry

__all__ = ["check_examples", "decision_fields", "example_variables", "history_entry", "step_messages", "truncate"]

_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps(..., ensure_ascii=False) without a new encoder per call


def truncate(text: str, limit: int, prompts: PromptSet) -> str:
    """``text`` cut to ``limit`` characters behind the ``truncated`` marker."""
    if len(text) <= limit:
        return text
    return text[:limit] + prompts.render("truncated", omitted=len(text) - limit)


def decision_fields(decision: AgentAction | AgentStep) -> dict[str, Any]:
    """A decision as the model writes it: ``thought``, ``action``, ``action_input`` (in that order)."""
    return {"thought": decision.thought, "action": decision.action, "action_input": decision.action_input}


def history_entry(index: int, step: AgentStep, limit: int, prompts: PromptSet) -> dict[str, Any]:
    """One step as the ``history`` template shows it: the text of its ``action_input`` (the JSON of the
    arguments) and its observation are each cut to ``limit`` characters behind the ``truncated`` marker, so a
    huge argument the model wrote once does not fill every later prompt (the step itself keeps it whole)."""
    text = step.action_input if isinstance(step.action_input, str) else _JSON.encode(step.action_input)
    return {"index": index, "thought": step.thought, "action": step.action,
            "action_input": truncate(text, limit, prompts),
            "observation": truncate(step.observation, limit, prompts), "is_error": step.is_error,
            "reflection": step.reflection}


def example_variables(example: Example, limit: int, prompts: PromptSet) -> dict[str, str]:
    """One example as the ``examples`` template variable holds it: task, rendered history, answer JSON."""
    steps = [history_entry(i, s, limit, prompts) for i, s in enumerate(example.steps, 1) if s.action != FINISH]
    text = json.dumps(decision_fields(example.answer), ensure_ascii=False)
    return {"task": example.task, "history": prompts.render("history", steps=steps), "answer": text}


def check_examples(examples: Sequence[Example], registry: ToolRegistry, prompts: PromptSet) -> None:
    """:class:`ConfigError` for an example the agent could not act on, or one its step prompt never shows."""
    names = [*registry.names, FINISH]
    for number, example in enumerate(examples, 1):
        calls = [(f"step {i}", s.action) for i, s in enumerate(example.steps, 1) if s.action is not None]
        for where, action in [*calls, ("answer", example.answer.action)]:
            if action not in names:
                raise ConfigError(f"example {number} ({where}) calls {action!r}, which is not a tool of this "
                                  f"agent; its tools: {', '.join(names)}")
        answer = example.answer
        if answer.is_finish and not isinstance(answer.action_input, str):
            raise ConfigError(f"example {number} (answer): FINISH needs the final answer text as action_input")
        if not answer.is_finish:
            try:
                registry.validate(answer.action, answer.action_input)
            except ValueError as exc:
                raise ConfigError(f"example {number} (answer): invalid arguments for {answer.action}: {exc}") from None
    if examples and not prompts.uses("step", "examples"):
        raise ConfigError("examples were given but the step prompt does not show them (it does not use the "
                          "variable 'examples'); use a prompt set that does, such as 'en-compact'")


def step_messages(prompts: PromptSet, state: RunState, variables: Mapping[str, Any],
                  own: tuple[Any, ...]) -> list[BaseMessage]:
    """``prompts.messages("step", **variables)``, rendered once per run around its history: while the task,
    the tools text and the tool names are the same strings and the tool specs and examples are the agent's
    own (``own``: never changed objects), only the history differs from one step to the next."""
    history = variables.get("history")
    fixed = (variables.get("task"), variables.get("tools"), variables.get("tool_names"))
    if (type(history) is not str or not all(type(v) is str for v in fixed)
            or variables.get("tool_specs") is not own[0] or variables.get("examples") is not own[1]
            or prompts.uses("step", "steps")):
        return prompts.messages("step", **variables)
    cached = state.step_prompt
    if cached is None or cached[0] != fixed or cached[1] is not prompts:
        cached = state.step_prompt = (fixed, prompts, prompts.split("step", "history", variables))
    parts = cached[2]
    if parts is None:
        return prompts.messages("step", **variables)
    return [HumanMessage(content=history.join(parts).strip())]
