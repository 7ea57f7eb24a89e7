"""The prompt templates: golden renderings, validation at construction, the three ways to override them.

Golden files: ``tests/golden/<lang>/<template>.txt`` is each template rendered with the fixed inputs
below (the seed article's tools, a fixed three-step history). A changed prompt fails here with a diff.
After an intended change regenerate them with ``UPDATE_GOLDEN=1 pytest tests/golden/test_prompts.py -k golden``
and commit the files with the template.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import BaseTool, tool

from react_agent import AgentStep, ConfigError, PromptSet, ReactAgent, RunState
from react_agent._prompts import LANGUAGES, TEMPLATE_VARIABLES
from react_agent.testing import ScriptedChatModel

GOLDEN = Path(__file__).parent
UPDATE = os.environ.get("UPDATE_GOLDEN", "") not in ("", "0")

INJECTION = "{{ 7 * 7 }} {% for x in range(3) %}loop{% endfor %} {# comment #} {{ task }}"

FIXED: dict[str, dict[str, Any]] = {
    "ru": {
        "task": "Зарегистрируй пользователя Ivan с email ivan@test.com и найди пользователя Viacheslav",
        "thought_1": "Пользователь хочет зарегистрироваться. Используем инструмент регистрации.",
        "observation_1": "User Ivan успешно зарегистрирован",
        "prose": "Теперь нужно найти пользователя Viacheslav через search_db",
        "thought_3": "Ищу пользователя Viacheslav.",
        "tool_failure": "пользователь Viacheslav не найден",
        "reflection": "Пользователя Viacheslav нет в базе: сначала зарегистрируй его или сообщи об этом в FINISH.",
    },
    "en": {
        "task": "Register user Ivan with email ivan@test.com and find user Viacheslav",
        "thought_1": "The user wants to register. Use the registration tool.",
        "observation_1": "User Ivan registered",
        "prose": "Now I need to find user Viacheslav with search_db",
        "thought_3": "Looking for user Viacheslav.",
        "tool_failure": "user Viacheslav not found",
        "reflection": "Viacheslav is not in the database: register him first, or say so with FINISH.",
    },
}


def golden_agent(lang: str, seed_tools: list[BaseTool]) -> ReactAgent:
    return ReactAgent(ScriptedChatModel([]), seed_tools, prompts=lang)


def golden_state(agent: ReactAgent, lang: str) -> RunState:
    """A fixed run: a successful call, an unparseable reply, a failing call."""
    fixed, prompts = FIXED[lang], agent.prompts
    names = ", ".join([*agent.registry.names, "FINISH"])
    parse_feedback = prompts.render("parse_error", error="No action was found in your reply", reason="no_action",
                                    text=fixed["prose"], tool_names=names)
    search = {"username": "Viacheslav"}
    tool_failure = prompts.render("tool_error", action="search_db", action_input=search, error=fixed["tool_failure"])
    return RunState(task=fixed["task"], steps=[
        AgentStep(thought=fixed["thought_1"], action="register_user",
                  action_input={"username": "Ivan", "email": "ivan@test.com"}, observation=fixed["observation_1"]),
        AgentStep(observation=parse_feedback, is_error=True, raw_output=fixed["prose"]),
        AgentStep(thought=fixed["thought_3"], action="search_db", action_input=search, observation=tool_failure,
                  is_error=True),
    ])


def golden_variables(name: str, lang: str, seed_tools: list[BaseTool]) -> dict[str, Any]:
    """The variables the agents pass to template ``name``, with fixed values."""
    agent = golden_agent(lang, seed_tools)
    state = golden_state(agent, lang)
    fixed = FIXED[lang]
    common = agent.prompt_variables(state)
    whole = agent.prompt_variables(state, window=None)
    call = {"action": "search_db", "action_input": {"username": "Viacheslav"}}
    return {
        "step": common,
        "corrective": {**common, "reflection": fixed["reflection"]},
        "reflection": whole,
        "final_answer": whole,
        "plan": {**whole, "history": "", "steps": [], "error": ""},
        "fill_open": {**whole, "tool": "search_db", "args": json.dumps({"username": "Viacheslav"}),
                      "open_fields": ["limit"], "results": whole["history"], "error": ""},
        "tools": {"tool_specs": agent.registry.specs},
        "history": {"steps": whole["steps"]},
        "parse_error": {"error": "No action was found in your reply", "reason": "no_action", "text": fixed["prose"],
                        "tool_names": common["tool_names"]},
        "unknown_tool": {"action": "delete_user", "action_input": {"username": "Ivan"},
                         "tool_names": common["tool_names"]},
        "invalid_arguments": {"action": "register_user", "action_input": {"username": "Ivan"},
                              "error": "email: Field required", "arguments": agent.registry.arguments_text(
                                  "register_user")},
        "tool_error": {**call, "error": fixed["tool_failure"]},
        "tool_timeout": {**call, "timeout": 10},
        "approval_denied": call,
        "max_iterations": {"last_observation": state.last_observation, "steps": state.steps},
        "example_facts": {"values": ["anna@mail.org", "Anna"]},
        "repeated_call": {**call, "observation": fixed["observation_1"]},
        "repeated_error": {**call, "observation": "user not found", "failures": 2},
        "timeout": {"last_observation": state.last_observation, "seconds": 30},
        "truncated": {"omitted": 1234},
        "conversation": {"turns": [{"role": "user", "text": fixed["task"]},
                                   {"role": "assistant", "text": fixed["observation_1"]}],
                         "task": fixed["prose"]},
        "answer_format": {"task": fixed["task"], "schema": ANSWER_SCHEMA},
        "invalid_answer": {"error": "email: Field required", "schema": ANSWER_SCHEMA},
        "native": {"task": fixed["task"], "max_parallel_calls": None, "final_tool": None},
        "not_run": {**call, "reason": "limit", "limit": 2},
        "observation": {"action": "register_user", "action_input": '{"username": "Ivan"}',
                        "observation": fixed["observation_1"], "is_error": False},
    }[name]


ANSWER_SCHEMA = json.dumps({"type": "object", "properties": {"username": {"type": "string"}, "email": {
    "type": "string"}}, "required": ["username", "email"]})


CASES = [(lang, name) for lang in LANGUAGES for name in sorted(TEMPLATE_VARIABLES)]


@pytest.mark.parametrize(("lang", "name"), CASES, ids=[f"{lang}/{name}" for lang, name in CASES])
def test_golden_prompt(lang: str, name: str, seed_tools: list[BaseTool]) -> None:
    """Each template renders exactly as its golden file (UPDATE_GOLDEN=1 rewrites the files)."""
    rendered = PromptSet.load(lang).render(name, **golden_variables(name, lang, seed_tools)) + "\n"
    path = GOLDEN / lang / f"{name}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run UPDATE_GOLDEN=1 pytest tests/golden/test_prompts.py -k golden"
    expected = path.read_text(encoding="utf-8")
    if rendered != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), rendered.splitlines(True),
                                            f"golden/{lang}/{name}.txt", "rendered now"))
        pytest.fail(f"prompt {lang}/{name} changed (UPDATE_GOLDEN=1 to accept):\n{diff}")


def test_golden_files_have_no_strays() -> None:
    """Every golden file belongs to an existing template and language (stale ones are removed on update)."""
    expected = {f"{lang}/{name}.txt" for lang, name in CASES}
    found = {str(p.relative_to(GOLDEN)) for p in GOLDEN.glob("*/*.txt")}
    if UPDATE:
        for stray in found - expected:
            (GOLDEN / stray).unlink()
        return
    assert found == expected


def test_golden_rendering_is_what_the_model_receives(seed_tools: list[BaseTool]) -> None:
    """Rendering `step` with prompt_variables (as the golden test does) gives the agent's real first prompt."""
    llm = ScriptedChatModel(['{"action": "FINISH", "action_input": "ok"}'])
    agent = ReactAgent(llm, seed_tools, prompts="en")
    agent.run(FIXED["en"]["task"])
    expected = agent.prompts.render("step", **agent.prompt_variables(RunState(task=FIXED["en"]["task"])))
    assert llm.calls[0].text == expected
    assert len(llm.calls[0].messages) == 1


# --------------------------------------------------------------------------- validation at construction
def test_missing_required_variable_names_template_and_variable(seed_tools: list[BaseTool]) -> None:
    """A template without a required variable fails at construction, naming the template and the variable."""
    with pytest.raises(ConfigError) as info:
        ReactAgent(ScriptedChatModel([]), seed_tools, prompts={"step": "{{ task }} {{ tools }}"})
    assert "'step'" in str(info.value) and "'history'" in str(info.value)


def test_unknown_variable_names_template_and_variable(seed_tools: list[BaseTool]) -> None:
    """A template using a variable it may not use fails at construction, naming both."""
    with pytest.raises(ConfigError) as info:
        ReactAgent(ScriptedChatModel([]), seed_tools,
                   prompts={"tool_error": "{{ action }} {{ error }} {{ observation }}"})
    assert "'tool_error'" in str(info.value) and "'observation'" in str(info.value)


def test_folder_template_errors_name_the_file_origin(tmp_path: Path, seed_tools: list[BaseTool]) -> None:
    """A bad template in a folder fails at construction and the message names the template."""
    (tmp_path / "reflection.jinja").write_text("{{ task }}", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        ReactAgent(ScriptedChatModel([]), seed_tools, prompts=tmp_path)
    assert "'reflection'" in str(info.value) and "'history'" in str(info.value)


def test_langchain_template_lacking_variable_fails(seed_tools: list[BaseTool]) -> None:
    """A LangChain step template without `history` fails at construction, naming the variable."""
    template = ChatPromptTemplate.from_messages([("human", "{task}\n{tools}")])
    with pytest.raises(ConfigError) as info:
        ReactAgent(ScriptedChatModel([]), seed_tools, prompts=template)
    assert "'step'" in str(info.value) and "'history'" in str(info.value)


def test_unknown_template_file_is_rejected(tmp_path: Path, seed_tools: list[BaseTool]) -> None:
    """A misspelt template file name is a ConfigError naming it, not a silently ignored file."""
    (tmp_path / "setp.jinja").write_text("{{ task }} {{ tools }} {{ history }}", encoding="utf-8")
    with pytest.raises(ConfigError, match="'setp'"):
        ReactAgent(ScriptedChatModel([]), seed_tools, prompts=tmp_path)


def test_template_syntax_error_names_template(seed_tools: list[BaseTool]) -> None:
    """A Jinja syntax error fails at construction and names the template."""
    with pytest.raises(ConfigError, match="'final_answer'"):
        ReactAgent(ScriptedChatModel([]), seed_tools, prompts={"final_answer": "{{ task }} {{ history }"})


# --------------------------------------------------------------------------- overriding
def test_folder_overrides_only_its_files(tmp_path: Path, seed_tools: list[BaseTool]) -> None:
    """A folder with one template replaces that one; the others stay the built-in language's."""
    (tmp_path / "step.jinja").write_text("CUSTOM STEP\n{{ task }}\n{{ tools }}\n{{ history }}", encoding="utf-8")
    custom = PromptSet.load(tmp_path, lang="en")
    builtin = PromptSet.load("en")
    variables = golden_variables("step", "en", seed_tools)
    assert custom.render("step", **variables).startswith("CUSTOM STEP\n" + variables["task"])
    for name in sorted(set(TEMPLATE_VARIABLES) - {"step"}):
        assert custom.render(name, **golden_variables(name, "en", seed_tools)) == builtin.render(
            name, **golden_variables(name, "en", seed_tools)), name


def test_folder_override_reaches_the_model(tmp_path: Path, seed_tools: list[BaseTool]) -> None:
    """An agent built with a folder sends the folder's step prompt, with built-in tools text inside."""
    (tmp_path / "step.jinja").write_text("CUSTOM STEP {{ task }}\n{{ tools }}\n{{ history }}", encoding="utf-8")
    llm = ScriptedChatModel(['{"action": "FINISH", "action_input": "ok"}'])
    ReactAgent(llm, seed_tools, prompts=tmp_path).run("задача")
    assert llm.calls[0].text.startswith("CUSTOM STEP задача")
    assert "обязательный" in llm.calls[0].text


def test_langchain_chat_template_runs_end_to_end(seed_tools: list[BaseTool], users: dict[str, str]) -> None:
    """A ChatPromptTemplate as the step prompt drives a whole run with system + human messages."""
    template = ChatPromptTemplate.from_messages([
        ("system", "Tools:\n{tools}\nActions: {tool_names}"),
        ("human", "Task: {task}\nHistory:\n{history}"),
    ])
    llm = ScriptedChatModel([
        '{"thought": "t", "action": "register_user", "action_input": {"username": "Ivan", "email": "ivan@test.com"}}',
        '{"thought": "t", "action": "FINISH", "action_input": "Ivan registered"}',
    ])
    result = ReactAgent(llm, seed_tools, prompts=template, lang="en").run("Register Ivan")
    assert result.status == "finished" and result.output == "Ivan registered"
    assert users == {"Ivan": "ivan@test.com"}
    system, human = llm.calls[1].messages
    assert isinstance(system, SystemMessage) and "register_user, search_db, FINISH" in system.content
    assert isinstance(human, HumanMessage) and human.content.startswith("Task: Register Ivan")
    assert "register_user" in human.content and "успешно зарегистрирован" in human.content


# --------------------------------------------------------------------------- no template injection
@tool
def echo_evil(text: str) -> str:
    """Returns text that looks like template code."""
    return INJECTION


@pytest.mark.parametrize("lang", LANGUAGES)
def test_observation_template_syntax_reaches_model_verbatim(lang: str) -> None:
    """Observation text with {{ }} / {% %} is shown to the model as is, never evaluated."""
    llm = ScriptedChatModel(['{"action": "echo_evil", "action_input": {"text": "x"}}',
                             '{"action": "FINISH", "action_input": "ok"}'])
    ReactAgent(llm, [echo_evil], prompts=lang).run("task")
    prompt = llm.calls[1].text
    assert INJECTION in prompt
    assert "49" not in prompt and "looploop" not in prompt


def test_task_template_syntax_reaches_model_verbatim() -> None:
    """A task containing template syntax is not evaluated (jinja and LangChain step prompts alike)."""
    template = ChatPromptTemplate.from_messages([("human", "{task}\n{tools}\n{history}")])
    for prompts in ("ru", "en", template):
        llm = ScriptedChatModel(['{"action": "FINISH", "action_input": "ok"}'])
        ReactAgent(llm, [echo_evil], prompts=prompts).run(INJECTION)
        assert INJECTION in llm.calls[0].text
        assert "49" not in llm.calls[0].text


def test_tool_error_with_template_syntax_is_verbatim() -> None:
    """An exception message with template syntax appears verbatim in the error observation."""

    @tool
    def fails(text: str) -> str:
        """Always fails."""
        raise ValueError(INJECTION)

    llm = ScriptedChatModel(['{"action": "fails", "action_input": {"text": "x"}}',
                             '{"action": "FINISH", "action_input": "ok"}'])
    result = ReactAgent(llm, [fails], prompts="en").run("task")
    assert INJECTION in result.steps[0].observation
    assert INJECTION in llm.calls[1].text


# --------------------------------------------------------------------------- tool descriptions
def test_russian_tool_description_says_required_and_optional(seed_tools: list[BaseTool]) -> None:
    """The Russian tools text marks arguments обязательный / опциональный, with examples."""
    text = PromptSet.load("ru").render("tools", tool_specs=golden_agent("ru", seed_tools).registry.specs)
    assert "username: Логин (string, обязательный; пример: ViacheslavVoo)" in text
    assert "phone: Номер телефона в формате +7XXX... (string, опциональный; пример: +7999999999)" in text
    assert "required" not in text and "optional" not in text


def test_english_tool_description_says_required_and_optional(seed_tools: list[BaseTool]) -> None:
    """The English tools text marks arguments required / optional, with the default."""
    text = PromptSet.load("en").render("tools", tool_specs=golden_agent("en", seed_tools).registry.specs)
    assert "email: Email (string, required; example: Viacheslav@test.com)" in text
    assert "limit: Лимит результатов (integer, optional; default: 5)" in text
    assert "обязательный" not in text
