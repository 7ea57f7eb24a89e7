"""The history a prompt shows bounds the model's own ``action_input`` like the observation: its text is cut to
``max_observation_chars`` behind the ``truncated`` marker, so one huge argument (a hostile or looping model)
does not fill every later prompt. Only the prompt's text is cut: the tool, the result's steps, the step
callbacks and the journal keep the whole input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import StructuredTool

from react_agent import ReactAgent, ReflectionAgent, read_journal
from react_agent.testing import ScriptedChatModel

LIMIT = 100
BIG = "x" * 50_000


def _reply(action: str, action_input: Any) -> str:
    return json.dumps({"thought": "t", "action": action, "action_input": action_input}, ensure_ascii=False)


DONE = _reply("FINISH", "done")


class Echo:
    """A tool that keeps every input it received."""

    def __init__(self, fail: bool = False) -> None:
        self.inputs: list[str] = []
        self.fail = fail

    def tool(self) -> StructuredTool:
        def echo(text: str) -> str:
            """Echo the text's length."""
            self.inputs.append(text)
            if self.fail:
                raise ValueError("error: the text is too long")
            return f"{len(text)} characters"

        return StructuredTool.from_function(echo)


class StepEvents(BaseCallbackHandler):
    def __init__(self) -> None:
        self.steps: list[Any] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == "react_agent.step":
            self.steps.append(data["step"])


def _marker(omitted: int) -> str:
    return f"…[{omitted} characters truncated]"


def test_a_huge_argument_is_cut_in_the_history_but_reaches_the_tool_whole(tmp_path: Path) -> None:
    echo, events, journal = Echo(), StepEvents(), tmp_path / "run.jsonl"
    llm = ScriptedChatModel([_reply("echo", {"text": BIG}), _reply("echo", {"text": "hi"}), DONE])
    result = ReactAgent(llm, [echo.tool()], prompts="en", max_observation_chars=LIMIT,
                        journal=journal).run("task", config={"callbacks": [events]})
    assert result.status == "finished"

    encoded = json.dumps({"text": BIG}, ensure_ascii=False)
    shown = f"you called echo({encoded[:LIMIT]}{_marker(len(encoded) - LIMIT)}). Result: 50000 characters"
    for later in llm.calls[1:]:  # every later prompt shows the cut argument, never the whole one
        assert shown in later.text
        assert BIG not in later.text and len(later.text) < 5_000
    assert 'you called echo({"text": "hi"}). Result: 2 characters' in llm.calls[2].text  # short: unchanged

    # the tool, the result, the step callbacks and the journal keep the whole input
    assert echo.inputs == [BIG, "hi"]
    assert result.steps[0].action_input == {"text": BIG}
    assert [s.action_input for s in events.steps[:2]] == [{"text": BIG}, {"text": "hi"}]
    records = read_journal(journal)
    assert [r["input"] for r in records if r["type"] == "tool_start"] == [{"text": BIG}, {"text": "hi"}]
    assert [r["action_input"] for r in records if r["type"] == "step"][:2] == [{"text": BIG}, {"text": "hi"}]


def test_a_huge_text_argument_is_cut_too() -> None:
    """An ``action_input`` the model wrote as a plain string (the one argument of the tool) is cut the same way."""
    echo, text = Echo(), "y" * 5_000
    llm = ScriptedChatModel([_reply("echo", text), DONE])
    result = ReactAgent(llm, [echo.tool()], prompts="en", max_observation_chars=LIMIT).run("task")
    assert result.status == "finished" and echo.inputs == [text] and result.steps[0].action_input == text
    assert f"you called echo({text[:LIMIT]}{_marker(len(text) - LIMIT)}). Result:" in llm.calls[1].text
    assert text not in llm.calls[1].text


def test_an_argument_at_the_limit_is_shown_whole_and_one_over_it_is_cut() -> None:
    at = {"text": "a" * (LIMIT - len('{"text": ""}'))}  # its JSON is exactly LIMIT characters
    over = {"text": at["text"] + "b"}
    llm = ScriptedChatModel([_reply("echo", at), _reply("echo", over), DONE])
    ReactAgent(llm, [Echo().tool()], prompts="en", max_observation_chars=LIMIT).run("task")
    prompt = llm.calls[2].text
    assert f"you called echo({json.dumps(at)}). Result:" in prompt
    assert f"you called echo({json.dumps(over)[:LIMIT]}{_marker(1)}). Result:" in prompt


def test_the_default_limit_bounds_the_argument_too() -> None:
    """Without the option, the default ``max_observation_chars`` (2000) applies."""
    llm = ScriptedChatModel([_reply("echo", {"text": BIG}), DONE])
    ReactAgent(llm, [Echo().tool()], prompts="en").run("task")
    encoded = json.dumps({"text": BIG})
    assert f"echo({encoded[:2000]}{_marker(len(encoded) - 2000)})" in llm.calls[1].text
    assert BIG not in llm.calls[1].text


def test_the_reflection_and_corrective_prompts_show_the_cut_argument() -> None:
    echo = Echo(fail=True)
    llm = ScriptedChatModel([_reply("echo", {"text": BIG}), "Send a shorter text.", DONE])
    result = ReflectionAgent(llm, [echo.tool()], prompts="en", max_observation_chars=LIMIT).run("task")
    assert result.status == "finished" and echo.inputs == [BIG]
    assert len(llm.calls) == 3  # decision, reflection, corrective decision
    encoded = json.dumps({"text": BIG})
    for later in llm.calls[1:]:
        assert f"echo({encoded[:LIMIT]}{_marker(len(encoded) - LIMIT)})" in later.text
        assert BIG not in later.text


def test_a_plan_step_with_a_huge_argument_is_cut_in_later_prompts() -> None:
    """PlanAndExecuteAgent's history (seen by the open-field prompt of a later step) cuts the step's arguments the
    same way, while the tool gets them whole."""
    from react_agent.plan import PlanAndExecuteAgent

    echo = Echo()
    plan = json.dumps([{"tool": "echo", "args": {"text": BIG}, "open": []},
                       {"tool": "echo", "args": {}, "open": ["text"]}])
    llm = ScriptedChatModel([plan, '{"text": "hi"}'])
    result = PlanAndExecuteAgent(llm, [echo.tool()], prompts="en", max_observation_chars=LIMIT).run("task")
    assert result.status == "finished" and echo.inputs == [BIG, "hi"]
    encoded = json.dumps({"text": BIG})
    fill_prompt = llm.calls[1].text
    assert f"{encoded[:LIMIT]}{_marker(len(encoded) - LIMIT)}" in fill_prompt
    assert BIG not in fill_prompt
