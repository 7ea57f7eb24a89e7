"""The prompt tokens a model took from its cache (``input_token_details["cache_read"]``) are counted per step, summed
per run, kept by the journal across a resume and shown by the step console."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import StructuredTool
from rich.console import Console

from react_agent import ReactAgent
from react_agent.integrations._console import StepConsole
from react_agent.testing import ScriptedChatModel


def lookup(city: str) -> str:
    """Look up a city."""
    return f"{city}: 12 degrees"


def _reply(content: dict[str, Any], *, prompt: int, cached: int | None) -> AIMessage:
    usage: dict[str, Any] = {"input_tokens": prompt, "output_tokens": 10, "total_tokens": prompt + 10}
    if cached is not None:
        usage["input_token_details"] = {"cache_read": cached}
    return AIMessage(content=json.dumps(content), usage_metadata=usage)  # type: ignore[arg-type]


CALL = {"thought": "t", "action": "lookup", "action_input": {"city": "Oslo"}}
DONE = {"thought": "t", "action": "FINISH", "action_input": "12 degrees"}


def test_cached_prompt_tokens_are_counted_per_step_and_per_run() -> None:
    llm = ScriptedChatModel([_reply(CALL, prompt=900, cached=None), _reply(DONE, prompt=950, cached=880)])
    result = ReactAgent(llm, [StructuredTool.from_function(lookup)], prompts="en").run("Weather in Oslo")
    assert [s.usage.cached_input_tokens for s in result.steps] == [0, 880]
    assert result.usage.cached_input_tokens == 880 and result.usage.input_tokens == 1850


def test_a_resumed_run_keeps_the_cached_count_of_its_replayed_steps(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    tools = [StructuredTool.from_function(lookup)]
    replies = [_reply(CALL, prompt=900, cached=100), _reply(DONE, prompt=950, cached=880)]
    first = ReactAgent(ScriptedChatModel(replies), tools, prompts="en").run("Weather in Oslo", journal=journal)
    lines = journal.read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "step") + 1
    journal.write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")  # the process died after step 1
    resumed = ReactAgent(ScriptedChatModel([replies[1]]), tools, prompts="en").resume(journal)
    assert resumed.status == "finished"
    assert [s.usage for s in resumed.steps] == [s.usage for s in first.steps]
    assert [s.usage.cached_input_tokens for s in resumed.steps] == [100, 880]


def test_the_step_console_shows_the_reused_tokens() -> None:
    llm = ScriptedChatModel([_reply(CALL, prompt=900, cached=850), _reply(DONE, prompt=950, cached=None)])
    result = ReactAgent(llm, [StructuredTool.from_function(lookup)], prompts="en").run("Weather in Oslo")
    out = io.StringIO()
    console = StepConsole("agent", console=Console(file=out, width=200))
    console.step(1, result.steps[0])
    console.step(2, result.steps[1])
    assert "900+10 tokens, 850 reused" in out.getvalue()
    assert "950+10 tokens)" in out.getvalue() and out.getvalue().count("reused") == 1
