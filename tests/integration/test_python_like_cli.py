"""The Python API behaves like the CLI: the prompt language follows the task unless prompts= or lang= is
given, and verbose=True prints each step live on stderr."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from conftest import call, finish
from langchain_core.tools import tool

from react_agent import ReactAgent, ReflectionAgent
from react_agent.testing import ScriptedChatModel

ENGLISH = "You are a smart assistant"
RUSSIAN = "Ты — умный ассистент"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize(("task", "shown", "hidden"), [("What is 2 + 3?", ENGLISH, RUSSIAN),
                                                       ("Сколько будет 2 + 3?", RUSSIAN, ENGLISH)])
def test_without_prompts_the_language_follows_the_task(task: str, shown: str, hidden: str) -> None:
    llm = ScriptedChatModel([finish("5")])
    assert ReactAgent(llm, [add]).run(task).output == "5"
    assert shown in llm.calls[0].text and hidden not in llm.calls[0].text


def test_one_agent_answers_tasks_in_both_languages_in_turn() -> None:
    """The same agent object switches per run, and the runs keep their own results."""
    llm = ScriptedChatModel([finish("a"), finish("б"), finish("c")])
    agent = ReactAgent(llm, [add], name="both")
    outputs = [agent.run("first").output, agent.run("второй").output,
               asyncio.run(agent.arun("third")).output]
    assert outputs == ["a", "б", "c"]
    assert [ENGLISH in c.text for c in llm.calls] == [True, False, True]
    assert RUSSIAN in llm.calls[1].text


@pytest.mark.parametrize("options", [{"prompts": "ru"}, {"lang": "ru"}])
def test_given_prompts_or_lang_are_kept_whatever_the_task(options: dict[str, str]) -> None:
    llm = ScriptedChatModel([finish("5")])
    ReactAgent(llm, [add], **options).run("What is 2 + 3?")
    assert RUSSIAN in llm.calls[0].text


def test_a_subclass_follows_the_task_language_too() -> None:
    llm = ScriptedChatModel([finish("5")])
    ReflectionAgent(llm, [add]).run("What is 2 + 3?")
    assert ENGLISH in llm.calls[0].text


def test_verbose_prints_each_step_live_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """verbose=True: the task, each step's thought, action, input and observation, then the status - on stderr,
    printed as the steps complete (before the run returns), nothing on stdout."""
    seen_during_run: list[str] = []

    @tool
    def peek(a: int) -> int:
        """Return a and look at what was printed so far."""
        seen_during_run.append(capsys.readouterr().err)
        return a

    llm = ScriptedChatModel([call("add", a=2, b=3), call("peek", a=5), finish("five")])
    ReactAgent(llm, [add, peek], prompts="en", verbose=True, name="calc").run("What is 2 + 3?")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "calc" in seen_during_run[0] and "Step 1" in seen_during_run[0]
    assert "Action: add" in seen_during_run[0] and "Observation: 5" in seen_during_run[0]
    assert '"a": 2' in seen_during_run[0]
    assert "Step 3" in captured.err and "Answer: five" in captured.err and "finished" in captured.err


def test_quiet_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    ReactAgent(ScriptedChatModel([call("add", a=1, b=1), finish("2")]), [add], prompts="en").run("1 + 1?")
    assert capsys.readouterr() == ("", "")


def test_verbose_rejects_a_non_bool() -> None:
    from react_agent import ConfigError

    with pytest.raises(ConfigError, match="verbose"):
        ReactAgent(ScriptedChatModel([]), [add], verbose="yes")


def test_library_code_has_no_print_call() -> None:
    """Only the CLI prints; the library logs (its one console is verbose=True's rich console)."""
    package = Path(__file__).resolve().parents[2] / "react_agent"
    found = []
    for path in package.rglob("*.py"):
        if "cli" in path.relative_to(package).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found == []


def test_a_subclass_with_its_own_init_keeps_its_prompts_and_its_data() -> None:
    """An agent whose class defines __init__ (per-instance data) is never rebuilt for another language: the
    data it keeps stays the agent's own."""

    class Logging(ReactAgent):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            self.sent: list[object] = []

        def call_model(self, messages, config, call=None):  # type: ignore[no-untyped-def]
            self.sent.append(messages)
            return super().call_model(messages, config, call)

    llm = ScriptedChatModel([finish("ok")])
    agent = Logging(llm, [add])
    agent.run("find user Ivan")
    assert len(agent.sent) == 1 and RUSSIAN in llm.calls[0].text
