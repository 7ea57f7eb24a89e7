"""Few-shot examples (``examples=[Example(...)]``), the compact prompt sets and the demo's own examples.

All with ``ScriptedChatModel`` and the real demo tools on a temporary SQLite file: no model, no network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from langchain_core.tools import BaseTool, tool

from react_agent import FINISH, AgentAction, AgentStep, ConfigError, Example, PromptSet, ReactAgent, RunState
from react_agent._prompts import LANGUAGES, PROMPT_SETS, TEMPLATE_VARIABLES
from react_agent.cli import _main as cli
from react_agent.demo import DEMO_EXAMPLES, SEED_TASKS, make_demo_tools
from react_agent.testing import ScriptedChatModel

ANNA = {"username": "Anna", "email": "anna@mail.org"}


def reply(action: str, action_input: Any, thought: str = "") -> str:
    return json.dumps({"thought": thought, "action": action, "action_input": action_input}, ensure_ascii=False)


@pytest.fixture
def demo_tools(tmp_path: Path) -> dict[str, list[BaseTool]]:
    """The demo tools in each language, each language on its own database."""
    return {lang: make_demo_tools(db_path=tmp_path / f"{lang}.db", lang=lang) for lang in LANGUAGES}


def compact_agent(llm: ScriptedChatModel, tools: list[BaseTool], lang: str, **options: Any) -> ReactAgent:
    return ReactAgent(llm, tools, prompts=f"{lang}-compact", examples=DEMO_EXAMPLES[lang], **options)


def demo_index(lang: str, tool: str, *, done: bool) -> int:
    """The position in DEMO_EXAMPLES[lang] of the example that calls ``tool`` (``done``: that FINISHes after it)."""
    return next(i for i, e in enumerate(DEMO_EXAMPLES[lang])
                if (e.steps[0].action if done and e.steps else e.answer.action) == tool and bool(e.steps) == done)


def history_after(prompt: str, marker: str) -> list[str]:
    """Every ``<marker> ...`` line of a prompt, without the marker."""
    return [line[len(marker):] for line in prompt.splitlines() if line.startswith(marker)]


# --------------------------------------------------------------------------- rendering


@pytest.mark.parametrize("lang", LANGUAGES)
def test_example_history_is_the_real_history_of_the_same_step(
        lang: str, demo_tools: dict[str, list[BaseTool]]) -> None:
    """After really registering Anna, the prompt's history equals the rendered history of the demo's example 2."""
    llm = ScriptedChatModel(responses=[reply("register_user", ANNA), reply(FINISH, "ok")])
    agent = compact_agent(llm, demo_tools[lang], lang)
    assert agent.run("Register user Anna with email anna@mail.org").status == "finished"
    marker = {"en": "History: ", "ru": "История: "}[lang]
    histories = history_after(llm.calls[1].text, marker)
    index = demo_index(lang, "register_user", done=True)
    example_history = agent.prompt_variables(RunState("x"))["examples"][index]["history"]
    assert histories[-1] == example_history  # the real step's history, rendered by the run
    assert histories[index] == example_history  # the example, rendered at construction


def test_example_history_is_exactly_the_history_line(demo_tools: dict[str, list[BaseTool]]) -> None:
    """An example's steps render in history.jinja's format, with the observation the tool really returns."""
    agent = compact_agent(ScriptedChatModel(responses=[]), demo_tools["en"], "en")
    rendered = agent.prompt_variables(RunState("x"))["examples"]
    assert rendered[demo_index("en", "register_user", done=False)]["history"] == "No history yet"
    assert rendered[demo_index("en", "register_user", done=True)]["history"] == (
        'Iteration 1: you called register_user({"username": "Anna", "email": "anna@mail.org"}). '
        "Result: User Anna registered (email anna@mail.org)"
    )


def test_example_answer_is_json_with_thought_first_and_unescaped_text(demo_tools: dict[str, list[BaseTool]]) -> None:
    """An example's answer is rendered as its JSON object, thought first, non-ASCII text kept as is."""
    agent = compact_agent(ScriptedChatModel(responses=[]), demo_tools["ru"], "ru")
    answer = agent.prompt_variables(RunState("x"))["examples"][demo_index("ru", "register_user", done=True)]["answer"]
    assert answer == ('{"thought": "Anna зарегистрирована, задача решена.", "action": "FINISH", '
                      '"action_input": "Пользователь Anna зарегистрирован."}')


def test_compact_prompt_shows_examples_in_order_then_the_task(demo_tools: dict[str, list[BaseTool]]) -> None:
    """The en-compact step prompt: examples numbered in order, then the task, its history and "Answer:"."""
    llm = ScriptedChatModel(responses=[reply(FINISH, "ok")])
    compact_agent(llm, demo_tools["en"], "en").run("Register user Ivan with email ivan@test.com")
    prompt = llm.calls[0].text
    numbers = [str(i) for i in range(1, len(DEMO_EXAMPLES["en"]) + 1)]
    assert re.findall(r"^Example (\d+)$", prompt, re.MULTILINE) == numbers
    assert prompt.startswith("You are an assistant that solves a task with tools.")
    assert "register_user - Registers a new user in the database" in prompt  # tools from the en set
    assert prompt.endswith("Now your turn\nTask: Register user Ivan with email ivan@test.com\n"
                           "History: No history yet\nAnswer:")


def test_compact_prompt_without_examples_has_no_example_section(demo_tools: dict[str, list[BaseTool]]) -> None:
    """Without examples the compact step prompt goes straight from the tools to the task."""
    llm = ScriptedChatModel(responses=[reply(FINISH, "ok")])
    ReactAgent(llm, demo_tools["en"], prompts="en-compact").run("Find user Ivan")
    assert "Example" not in llm.calls[0].text
    assert "FINISH - choose it to end the work" in llm.calls[0].text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_full_prompt_shows_examples_only_when_given(lang: str, demo_tools: dict[str, list[BaseTool]]) -> None:
    """The full step prompt gains an examples section with examples and is unchanged without them."""
    plain, shown = (ScriptedChatModel(responses=[reply(FINISH, "ok")]) for _ in range(2))
    ReactAgent(plain, demo_tools[lang], prompts=lang).run("Find user Ivan")
    ReactAgent(shown, demo_tools[lang], prompts=lang, examples=DEMO_EXAMPLES[lang]).run("Find user Ivan")
    heading = {"en": "**Examples**:", "ru": "**Примеры**:"}[lang]
    before, after = plain.calls[0].text, shown.calls[0].text
    assert heading not in before and DEMO_EXAMPLES[lang][0].task in after
    closing = "\n\n" + before.rsplit("\n\n", 1)[1]  # the prompt's last paragraph
    start, end = after.index("\n\n" + heading), after.index(closing)
    assert after[:start] + after[end:] == before


def test_prompt_variables_carry_the_rendered_examples(demo_tools: dict[str, list[BaseTool]]) -> None:
    """prompt_variables has 'examples': one dict with task, history and answer per example."""
    agent = compact_agent(ScriptedChatModel(responses=[]), demo_tools["en"], "en")
    examples = agent.prompt_variables(RunState("x"))["examples"]
    assert [set(e) for e in examples] == [{"task", "history", "answer"}] * len(DEMO_EXAMPLES["en"])
    assert [e["task"] for e in examples] == [e.task for e in DEMO_EXAMPLES["en"]]
    assert agent.examples == tuple(DEMO_EXAMPLES["en"])


def test_examples_is_an_allowed_variable_of_step_and_corrective_only() -> None:
    """'examples' may be used by the step and corrective templates, and by no other."""
    allowing = {name for name, (_, allowed) in TEMPLATE_VARIABLES.items() if "examples" in allowed}
    assert allowing == {"step", "corrective"}
    assert all("examples" not in required for required, _ in TEMPLATE_VARIABLES.values())


# --------------------------------------------------------------------------- validation


@tool
def lookup(name: str) -> str:
    """Find a user's email by name."""
    return f"{name.lower()}@example.com"


def build(examples: Any, **options: Any) -> ReactAgent:
    return ReactAgent(ScriptedChatModel(responses=[]), [lookup], prompts="en-compact", examples=examples, **options)


@pytest.mark.parametrize(
    ("example", "message"),
    [
        (Example(task="t", answer=AgentAction(action="register_user", action_input=ANNA)),
         r"example 1 \(answer\) calls 'register_user', which is not a tool of this agent; its tools: lookup, FINISH"),
        (Example(task="t", steps=[AgentStep(action="send_mail", observation="sent")],
                 answer=AgentAction(action=FINISH, action_input="done")),
         r"example 1 \(step 1\) calls 'send_mail'"),
        (Example(task="t", answer=AgentAction(action="lookup", action_input={"nam": "Anna"})),
         r"example 1 \(answer\): invalid arguments for lookup"),
        (Example(task="t", answer=AgentAction(action=FINISH, action_input={"text": "done"})),
         r"example 1 \(answer\): FINISH needs the final answer text"),
    ],
    ids=["unknown-tool", "unknown-tool-in-step", "invalid-arguments", "finish-without-text"],
)
def test_bad_example_is_a_config_error(example: Example, message: str) -> None:
    """An example the agent could not act on is a ConfigError at construction that says what is wrong."""
    with pytest.raises(ConfigError, match=message):
        build([example])


def test_the_failing_example_is_named_by_its_number() -> None:
    """With several examples, the message names the one that is wrong."""
    good = Example(task="t", answer=AgentAction(action="lookup", action_input={"name": "Anna"}))
    bad = Example(task="t", answer=AgentAction(action="search_db", action_input={"username": "Anna"}))
    with pytest.raises(ConfigError, match=r"^example 2 \(answer\) calls 'search_db'"):
        build([good, bad])


@pytest.mark.parametrize("examples", [Example(task="t", answer=AgentAction(action=FINISH, action_input="x")),
                                      [{"task": "t", "answer": {"action": FINISH}}], "examples"],
                         ids=["one-example", "dicts", "string"])
def test_examples_must_be_a_sequence_of_example(examples: Any) -> None:
    """examples= takes a sequence of Example objects; anything else is a ConfigError."""
    with pytest.raises(ConfigError, match="Example"):
        build(examples)


def test_examples_need_a_step_prompt_that_shows_them() -> None:
    """Examples with a custom step prompt that does not use 'examples' are a ConfigError, not silently dropped."""
    example = Example(task="t", answer=AgentAction(action="lookup", action_input={"name": "Anna"}))
    step = "Task: {{ task }}\nTools: {{ tools }}\nHistory: {{ history }}"
    with pytest.raises(ConfigError, match="does not show them"):
        ReactAgent(ScriptedChatModel(responses=[]), [lookup], prompts={"step": step}, lang="en", examples=[example])


def test_example_is_frozen() -> None:
    """Example is a frozen record, like the other data types."""
    example = Example(task="t", answer=AgentAction(action=FINISH, action_input="x"))
    with pytest.raises(ValueError, match="frozen"):
        example.task = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- compact sets


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compact_set_overrides_step_and_keeps_the_base_language(lang: str) -> None:
    """'<lang>-compact' has its own step prompt; every other template renders exactly as in the base set."""
    compact, base = PromptSet.load(f"{lang}-compact"), PromptSet.load(lang)
    assert compact.lang == base.lang == lang
    variables = {"task": "T", "tools": "TOOLS", "history": "H", "examples": []}
    assert compact.render("step", **variables) != base.render("step", **variables)
    assert compact.render("history", steps=[]) == base.render("history", steps=[])
    unknown = {"action": "x", "tool_names": "y"}
    assert compact.render("unknown_tool", **unknown) == base.render("unknown_tool", **unknown)
    assert compact.render("tools", tool_specs=[]) == base.render("tools", tool_specs=[])


def test_compact_folders_hold_only_overrides() -> None:
    """Each compact folder overrides a subset of the templates and each base language has every template."""
    root = ROOT / "prompts"
    for name in PROMPT_SETS:
        files = {p.stem for p in (root / name).glob("*.jinja")}
        assert files and files <= set(TEMPLATE_VARIABLES), name
        if name in LANGUAGES:
            assert files == set(TEMPLATE_VARIABLES), name


def test_compact_set_with_another_language_is_a_config_error() -> None:
    """prompts='en-compact' with lang='ru' would mix languages: a ConfigError."""
    with pytest.raises(ConfigError, match="'en-compact' is a 'en' set; lang='ru'"):
        PromptSet.load("en-compact", lang="ru")
    assert PromptSet.load("ru-compact", lang="ru").lang == "ru"


def test_unknown_prompt_set_name_lists_the_built_in_sets() -> None:
    """An unknown set name that is not a folder is a ConfigError listing the built-in sets."""
    with pytest.raises(ConfigError, match="ru, en, ru-compact, en-compact"):
        PromptSet.load("de-compact")


# --------------------------------------------------------------------------- the demo's examples


@pytest.mark.parametrize("lang", LANGUAGES)
def test_demo_example_observations_are_what_the_tools_return(lang: str, tmp_path: Path) -> None:
    """The observations in DEMO_EXAMPLES are the demo tools' real results for the same calls (the date aside)."""
    tools = {t.name: t for t in make_demo_tools(db_path=tmp_path / "db.sqlite", lang=lang)}
    date = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    steps = [s for e in DEMO_EXAMPLES[lang] for s in e.steps]
    assert [s.action for s in steps] == ["calculator", "register_user", "search_db"]  # register before search
    for step in steps:
        real = tools[str(step.action)].invoke(step.action_input)
        assert date.sub("DATE", step.observation) == date.sub("DATE", real)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_demo_examples_fit_the_demo_tools(lang: str, demo_tools: dict[str, list[BaseTool]]) -> None:
    """DEMO_EXAMPLES are accepted by an agent with the demo tools, and use the seed tasks' tools only."""
    agent = compact_agent(ScriptedChatModel(responses=[]), demo_tools[lang], lang)
    assert {e.answer.action for e in agent.examples} == {"calculator", "register_user", "search_db", FINISH}
    assert all(e.task not in SEED_TASKS[lang] for e in agent.examples)  # examples do not give the answers away


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    llm = ScriptedChatModel(responses=[reply(FINISH, "ok")])
    monkeypatch.setattr(cli, "build_model", lambda args: llm)
    return llm


def test_cli_local_model_uses_compact_prompt_with_demo_examples(scripted_cli: ScriptedChatModel,
                                                                tmp_path: Path) -> None:
    """With --model local the CLI sends the compact prompt with the demo examples of the task's language."""
    assert cli.main(["run", "Найди пользователя Ivan", "--db", str(tmp_path / "u.db")]) == 0
    prompt = scripted_cli.calls[0].text
    assert prompt.startswith("Ты ассистент, который решает задачу с помощью инструментов.")
    numbers = [str(i) for i in range(1, len(DEMO_EXAMPLES["ru"]) + 1)]
    assert re.findall(r"^Пример (\d+)$", prompt, re.MULTILINE) == numbers


def test_cli_gigachat_keeps_the_full_prompt(scripted_cli: ScriptedChatModel, tmp_path: Path) -> None:
    """With --model gigachat the CLI keeps the full seed prompt and shows no examples."""
    assert cli.main(["run", "Find user Ivan", "--model", "gigachat", "--db", str(tmp_path / "u.db")]) == 0
    prompt = scripted_cli.calls[0].text
    assert prompt.startswith("You are a smart assistant that helps the user solve a task.")
    assert "Example" not in prompt
