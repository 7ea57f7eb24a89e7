"""Immutable agents serving concurrent runs, one error policy, public seams, validated options."""

from __future__ import annotations

import ast
import asyncio
import json
import math
import re
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, call, finish
from langchain_core.messages import BaseMessage
from langchain_core.tools import StructuredTool

from react_agent import (
    AgentResult,
    AgentStep,
    BaseAgent,
    ConfigError,
    PlanAndExecuteAgent,
    ReactAgent,
    ReflectionAgent,
    RetryPolicy,
    RunError,
    read_journal,
)
from react_agent.loop import ModelCall, ModelCallError, RunState, ToolCall
from react_agent.testing import FunctionChatModel, ScriptedChatModel

TASK = re.compile(r"TASK-(\d+)")


# ------------------------------------------------------------------------------------ a prompt-driven model
def answer(messages: list[BaseMessage]) -> str:
    """Reply from the prompt alone: plan prompts get a one-step plan, decisions call `record` once for
    the task's number and then finish with it; reflections say something."""
    text = "\n".join(str(m.content) for m in messages)
    number = TASK.findall(text)[0]
    if '"plan"' in text or ("plan" in text.lower() and '"open"' in text):
        return json.dumps({"plan": [{"tool": "record", "args": {"value": number}, "open": []}]})
    if f"recorded {number}" in text:
        return json.dumps({"thought": "done", "action": "FINISH", "action_input": f"done {number}"})
    return json.dumps({"thought": "record it", "action": "record", "action_input": {"value": number}})


class Ledger:
    """A tool that needs approval and records every value it is called with, thread-safely."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.approved: list[str] = []
        self.lock = threading.Lock()

    def tool(self) -> StructuredTool:
        def record(value: str) -> str:
            """Record a value."""
            with self.lock:
                self.values.append(value)
            return f"recorded {value}"

        return StructuredTool.from_function(record, metadata={"requires_approval": True})

    def approve(self, tool: str, args: Any) -> bool:
        with self.lock:
            self.approved.append(args["value"])
        return True


AGENT_CLASSES = [ReactAgent, ReflectionAgent, PlanAndExecuteAgent]


@pytest.mark.parametrize("agent_class", AGENT_CLASSES)
def test_one_agent_serves_concurrent_runs_in_threads_and_tasks(agent_class: type[BaseAgent], tmp_path: Path) -> None:
    """16 threads and 16 asyncio tasks share one agent (approvals and journals, some sharing a file): every
    run sees only its own task, its tool call runs once and is approved once, its journal holds its run."""
    ledger = Ledger()
    agent = agent_class(FunctionChatModel(function=answer, delay=0.01), [ledger.tool()], prompts="en",
                        approve=ledger.approve)
    shared = tmp_path / "shared.jsonl"

    def journal_for(n: int) -> Path:
        return shared if n % 4 == 0 else tmp_path / f"run-{n}.jsonl"

    def run_sync(n: int) -> AgentResult:
        return agent.run(f"Please handle TASK-{n}", journal=journal_for(n))

    async def run_async() -> list[AgentResult]:
        return await asyncio.gather(*(agent.arun(f"Please handle TASK-{n}", journal=journal_for(n))
                                      for n in range(16, 32)))

    with ThreadPoolExecutor(16) as pool:
        threaded = pool.map(run_sync, range(16))
        awaited = asyncio.run(run_async())  # while the threads run
        results = [*threaded, *awaited]
    for n, result in enumerate(results):
        assert result.status == "finished", result
        assert str(n) in result.output
        assert [s.action_input for s in result.steps if s.action == "record"] == [{"value": str(n)}]
    assert Counter(ledger.values) == Counter(str(n) for n in range(32))
    assert Counter(ledger.approved) == Counter(str(n) for n in range(32))
    assert agent.config.approve == ledger.approve  # the user's callback is never replaced
    for n in range(32):
        runs = {r["run"]: r for r in read_journal(journal_for(n)) if r["type"] == "run"}
        tasks = [r["task"] for r in runs.values()]
        assert f"Please handle TASK-{n}" in tasks
    assert len([r for r in read_journal(shared) if r["type"] == "run"]) == 8


def test_concurrent_resumes_of_one_shared_journal(tmp_path: Path) -> None:
    """Runs journaled in one file can each be resumed (replayed) concurrently, with no records lost."""
    ledger = Ledger()
    agent = ReactAgent(FunctionChatModel(function=answer), [ledger.tool()], prompts="en", approve=ledger.approve)
    shared = tmp_path / "shared.jsonl"
    run_ids = []
    for n in range(6):
        agent.run(f"TASK-{n}", journal=shared, config={"run_id": f"00000000-0000-0000-0000-00000000000{n}"})
        run_ids.append(f"00000000-0000-0000-0000-00000000000{n}")
    before = len(read_journal(shared))
    with ThreadPoolExecutor(6) as pool:
        again = list(pool.map(lambda rid: agent.resume(shared, run_id=rid), run_ids))
    assert [r.output for r in again] == [f"done {n}" for n in range(6)]
    assert len(ledger.values) == 6  # nothing ran again
    assert len(read_journal(shared)) == before + 6  # one resume record each, none lost


def test_agent_is_immutable() -> None:
    """After __init__ nothing on the agent changes: writes raise and say where per-run data belongs."""
    agent = ReactAgent(ScriptedChatModel([]), [])
    with pytest.raises(AttributeError, match="immutable"):
        agent.llm = ScriptedChatModel([])  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        agent.max_iterations = 3
    with pytest.raises(Exception, match="frozen"):
        agent.config.max_iterations = 3  # type: ignore[misc]
    assert agent.max_iterations == 5  # wave-1 option attributes still read


# ------------------------------------------------------------------------------------ the error policy
def echo_tool() -> StructuredTool:
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return StructuredTool.from_function(echo)


class BuggyModelCall(ReactAgent):
    def call_model(self, messages: Any, config: Any, call: Any = None) -> Any:
        if len(messages) > 0 and "echo" in str(messages[-1].content) and "a" in str(messages[-1].content):
            return undefined_name  # type: ignore[name-defined]  # noqa: F821 - the bug under test
        return super().call_model(messages, config, call)

    async def acall_model(self, messages: Any, config: Any, call: Any = None) -> Any:
        return undefined_name  # type: ignore[name-defined]  # noqa: F821


def test_bug_in_overridden_call_model_raises_run_error() -> None:
    """A NameError in an overridden call_model is a bug: RunError (with the cause), not status "error"."""
    agent = BuggyModelCall(ScriptedChatModel([call("echo", text="a")]), [echo_tool()], prompts="en")
    with pytest.raises(RunError) as info:
        agent.run("task")
    assert isinstance(info.value.__cause__, NameError)


async def test_bug_in_overridden_acall_model_raises_run_error() -> None:
    agent = BuggyModelCall(ScriptedChatModel([]), [echo_tool()], prompts="en")
    with pytest.raises(RunError) as info:
        await agent.arun("task")
    assert isinstance(info.value.__cause__, NameError)


class BuggyExecute(ReactAgent):
    def execute(self, action: Any, **kwargs: Any) -> Any:
        raise NameError("execute_helper")


def test_bug_in_overridden_execute_raises_run_error_with_steps() -> None:
    agent = BuggyExecute(ScriptedChatModel([call("echo", text="a")]), [echo_tool()], prompts="en")
    with pytest.raises(RunError) as info:
        agent.run("task")
    assert "execute_helper" in str(info.value) and isinstance(info.value.__cause__, NameError)


def test_model_failure_is_a_status_and_model_call_error_from_an_override_too() -> None:
    """The model's own failure (beyond retries) ends the run with status "error"; so does ModelCallError
    raised by an override."""
    failing = ScriptedChatModel([ConnectionError("down")])
    result = ReactAgent(failing, [], retry=None).run("task")
    assert result.status == "error" and "ConnectionError: down" in (result.error or "")

    class Gateway(ReactAgent):
        def call_model(self, messages: Any, config: Any, call: Any = None) -> Any:
            raise ModelCallError("gateway refused")

    result = Gateway(ScriptedChatModel([]), []).run("task")
    assert result.status == "error" and "gateway refused" in (result.error or "")


# ------------------------------------------------------------------------------------ public seams
def test_custom_loop_uses_only_public_names(tmp_path: Path) -> None:
    """A custom loop written with react_agent.loop resumes from the journal like the built-in ones."""

    class TwoCalls(ReactAgent):
        def loop(self, state: RunState) -> Any:
            reply = yield ModelCall(self.build_messages(state))
            action = self.parse(reply.text)
            outcome = yield ToolCall(action)
            yield from self.record(state, AgentStep(action=action.action, action_input=action.action_input,
                                                    observation=outcome.observation))
            state.end("finished", outcome.observation)

    llm = ScriptedChatModel([call("echo", text="hi")])
    journal = tmp_path / "j.jsonl"
    result = TwoCalls(llm, [echo_tool()]).run("task", journal=journal)
    assert result.output == "hi"
    again = TwoCalls(ScriptedChatModel([]), [echo_tool()]).resume(journal)
    assert again.output == "hi"


def _private_imports(source: str) -> list[str]:
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("react_agent"):
            bad += [f"{node.module}.{a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.endswith("__")]
    return bad


def test_docs_examples_import_no_private_name() -> None:
    """The docs teach only public names."""
    bad = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL):
            try:
                bad += [f"{page.name}: {name}" for name in _private_imports(block)]
            except SyntaxError:
                continue
    assert bad == []


# ------------------------------------------------------------------------------------ options
BAD_OPTIONS: list[tuple[type[BaseAgent], str, Any]] = [
    (ReactAgent, "prompts", None), (ReactAgent, "prompts", {"step": 5}), (ReactAgent, "prompts", 42),
    (ReactAgent, "timeout", "5"), (ReactAgent, "timeout", 0), (ReactAgent, "timeout", float("inf")),
    (ReactAgent, "journal", 123), (ReactAgent, "approve", "yes"), (ReactAgent, "retry", "x"),
    (ReactAgent, "max_execution_time", float("nan")), (ReactAgent, "max_execution_time", -1),
    (ReactAgent, "max_iterations", True), (ReactAgent, "max_iterations", 2.5), (ReactAgent, "max_iterations", "3"),
    (ReactAgent, "history_window", -1), (ReactAgent, "max_observation_chars", 0), (ReactAgent, "name", ""),
    (ReactAgent, "final_answer", "sometimes"), (ReactAgent, "allow_plain_answer", "yes"),
    (ReactAgent, "constrained", "yes"), (ReactAgent, "examples", "x"), (ReactAgent, "examples", [1]),
    (ReactAgent, "max_parse_errors", None), (ReactAgent, "max_tokens_budget", 0), (ReactAgent, "lang", "de"),
    (ReflectionAgent, "error_keywords", [1]), (ReflectionAgent, "error_keywords", "error"),
    (ReflectionAgent, "repeat_action_limit", 1), (ReflectionAgent, "max_reflections", -1),
    (PlanAndExecuteAgent, "session", ["a"]), (PlanAndExecuteAgent, "max_plan_steps", 0),
    (PlanAndExecuteAgent, "replan", 1),
]


@pytest.mark.parametrize(("agent_class", "option", "value"), BAD_OPTIONS,
                         ids=[f"{c.__name__}-{o}-{v!r}" for c, o, v in BAD_OPTIONS])
def test_wrong_option_is_a_config_error_naming_it(agent_class: type[BaseAgent], option: str, value: Any) -> None:
    """Every wrong option type or value is a ConfigError at construction naming the option and the fix."""
    with pytest.raises(ConfigError) as info:
        agent_class(ScriptedChatModel([]), [], **{option: value})
    assert option in str(info.value)
    assert "must be" in str(info.value) or "template" in str(info.value)


def test_unknown_option_suggests_the_right_name() -> None:
    with pytest.raises(ConfigError, match=r"unknown option 'max_iteration'.*did you mean 'max_iterations'"):
        ReactAgent(ScriptedChatModel([]), [], max_iteration=3)


def test_run_level_mistakes_are_config_errors(tmp_path: Path) -> None:
    agent = ReactAgent(ScriptedChatModel([]), [])
    with pytest.raises(ConfigError, match="journal must be"):
        agent.run("task", journal=123)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="session must be"):
        agent.run("task", session=["x"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="got int"):
        agent.run(5)


def test_good_options_still_work() -> None:
    agent = ReflectionAgent(ScriptedChatModel([finish("ok")]), [], timeout=2, max_execution_time=5.5,
                            error_keywords=["bad"], retry=RetryPolicy(max_attempts=1), approve=lambda t, a: True,
                            examples=[], history_window=None)
    assert agent.config.error_keywords == ("bad",) and math.isclose(agent.config.max_execution_time or 0, 5.5)
    assert agent.run("task").output == "ok"


def test_prompt_sets_are_cached_per_source(tmp_path: Path) -> None:
    """A prompt set is compiled once per source; a folder is compiled again when a file changes."""
    first = ReactAgent(ScriptedChatModel([]), [], prompts="en")
    assert ReactAgent(ScriptedChatModel([]), [], prompts="en").prompts is first.prompts
    folder = tmp_path / "p"
    folder.mkdir()
    step = folder / "step.jinja"
    step.write_text("{{ task }} {{ tools }} {{ history }} v1", encoding="utf-8")
    one = ReactAgent(ScriptedChatModel([]), [], prompts=folder, lang="en").prompts
    assert ReactAgent(ScriptedChatModel([]), [], prompts=folder, lang="en").prompts is one
    step.write_text("{{ task }} {{ tools }} {{ history }} version two", encoding="utf-8")
    two = ReactAgent(ScriptedChatModel([]), [], prompts=folder, lang="en").prompts
    assert two is not one and "version two" in two.render("step", task="t", tools="", history="")


def test_reflection_state_lives_in_the_run() -> None:
    """Reflection counts are per run: a second run of the same agent reflects again."""
    def broken(text: str) -> str:
        """Always fails."""
        raise ValueError("error: broken")

    tool = StructuredTool.from_function(broken)
    agent = ReflectionAgent(ScriptedChatModel([call("broken", text="a"), "reflect", finish("x")] * 2), [tool],
                            max_reflections=1)
    first, second = agent.run("task"), agent.run("task")
    assert first.steps[0].reflection == "reflect" and second.steps[0].reflection == "reflect"


def test_stream_items_arrive_in_order_with_a_callable_callback() -> None:
    results: list[Any] = []
    agent = ReactAgent(ScriptedChatModel([call("echo", text="a"), finish("ok")]), [echo_tool()])
    for item in agent.stream("task"):
        results.append(type(item).__name__)
    assert results == ["AgentStep", "AgentStep", "AgentResult"]


def test_a_reply_cut_after_a_complete_call_is_completed_only_when_it_validates() -> None:
    """The agent lets the parser complete a reply cut after a complete value when the call validates for
    its tool; a call missing a required argument stays refused (a parse error for the model)."""

    def register(name: str, email: str) -> str:
        """Register a user."""
        return f"registered {name} <{email}>"

    tool = StructuredTool.from_function(register)
    cut = '{"thought": "t", "action": "register", "action_input": {"name": "Ivan", "email": "i@x.com"'
    short = '{"thought": "t", "action": "register", "action_input": {"name": "Ivan"'
    result = ReactAgent(ScriptedChatModel([cut, short, finish("ok")]), [tool], prompts="en").run("task")
    assert result.steps[0].observation == "registered Ivan <i@x.com>"
    assert result.steps[1].action is None and result.steps[1].is_error


def test_plan_agent_refuses_output_schema() -> None:
    """PlanAndExecuteAgent never reaches FINISH, so a structured answer schema is a developer mistake."""
    from pydantic import BaseModel

    class Answer(BaseModel):
        text: str

    with pytest.raises(ConfigError, match="output_schema is not supported by PlanAndExecuteAgent"):
        PlanAndExecuteAgent(ScriptedChatModel([]), [echo_tool()], output_schema=Answer)
