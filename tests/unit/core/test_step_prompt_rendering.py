"""The per-step fast paths give what the general paths give: the step prompt rendered once per run around
its history, the parser's shortcut for a reply with exactly the protocol's keys, the cached tool facts."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from conftest import call, finish
from langchain_core.tools import InjectedToolArg, tool

from react_agent import AgentStep, Example, OutputParseError, PromptSet, ReactAgent, ReflectionAgent, parse_response
from react_agent.testing import ScriptedChatModel


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@tool
def keyed(text: str, idempotency_key: Annotated[str, InjectedToolArg] = "") -> str:
    """Echo the text with the call's idempotency key."""
    return f"{text} key={idempotency_key}"


def _script(steps: int) -> list[str]:
    return [call("echo", text=f"t{i} " + "x" * (i * 300)) for i in range(steps)] + [finish("done")]


def _general_prompts(agent: ReactAgent, result_steps: list[AgentStep], task: str) -> list[str]:
    """The step prompts the general path renders for the states a run went through."""
    state = agent.new_state(task, {})
    texts = []
    for step in [*result_steps, None]:
        texts.append("\n\n".join(str(m.content) for m in agent.prompts.messages("step",
                                                                                 **agent.prompt_variables(state))))
        if step is not None:
            state.steps.append(step)
    return texts


@pytest.mark.parametrize("prompts", ["en", "ru", "en-compact", "ru-compact"])
@pytest.mark.parametrize("window", [3, None, 0])
def test_step_prompts_are_the_general_rendering_byte_for_byte(prompts: str, window: int | None) -> None:
    examples = [Example(task="say hi", answer={"thought": "t", "action": "echo", "action_input": {"text": "hi"}})]
    llm = ScriptedChatModel(_script(5))
    agent = ReactAgent(llm, [echo], prompts=prompts, history_window=window, max_observation_chars=500, max_iterations=8,
                       examples=examples if "compact" in prompts else [])
    result = agent.run("repeat things  ")
    assert result.status == "finished"
    sent = [c.text for c in llm.calls]
    assert sent == _general_prompts(agent, result.steps[:-1], "repeat things  ")[:len(sent)]


def test_a_step_template_that_filters_its_history_renders_each_time() -> None:
    source = "{{ task }} {{ tools }} [{{ history | upper }}]"
    prompts = PromptSet.load({"step": source}, lang="en")
    assert prompts.split("step", "history", {"task": "a", "tools": "b", "history": "h"}) is None
    llm = ScriptedChatModel([call("echo", text="one"), finish("ok")])
    ReactAgent(llm, [echo], prompts={"step": source}, lang="en").run("task")
    assert "[NO HISTORY YET]" in llm.calls[0].text
    assert "ECHO: ONE" in llm.calls[1].text


@pytest.mark.parametrize("source", [
    "{{ task }}{{ tools }}{% if history %}{{ history }}{% endif %}",
    "{{ task }}{{ tools }}{{ history ~ '!' }}",
    "{{ task }}{{ tools }}{{ history }}{% set history = 'x' %}{{ history }}",
    "{{ task }}{{ tools }}{% filter upper %}{{ history }}{% endfilter %}",
    "{{ task }}{{ tools }}{% for history in [history] %}{{ history }}{% endfor %}",
    "{{ task }}{{ tools }}{% macro m(history) %}{{ history }}{% endmacro %}{{ m(history) }}",
])
def test_only_a_history_written_as_it_is_is_split(source: str) -> None:
    prompts = PromptSet.load({"step": source}, lang="en")
    assert prompts.split("step", "history", {"task": "a", "tools": "b", "history": "h"}) is None


def test_split_parts_join_to_the_rendering() -> None:
    prompts = PromptSet.load("en")
    variables = {"task": "T", "tools": "TOOLS", "tool_names": "echo, FINISH", "tool_specs": [], "examples": [],
                 "history": "", "steps": []}
    parts = prompts.split("step", "history", variables)
    assert parts is not None and len(parts) == 2
    for history in ["", "  padded  \n", "Iteration 1: {{ braces }}"]:
        assert history.join(parts).strip() == prompts.render("step", **{**variables, "history": history})


# ---------------------------------------------------------------------------------------------- history
_ENTRIES = [
    {"index": 1, "thought": "t", "action": "echo", "action_input": '{"text": "a"}', "observation": "echo: a",
     "is_error": False, "reflection": None},
    {"index": 2, "thought": "", "action": None, "action_input": "", "observation": "could not parse {{ x }}",
     "is_error": True, "reflection": "try again"},
    {"index": 3, "thought": "t", "action": "echo", "action_input": "plain", "observation": "  padded \n",
     "is_error": True, "reflection": None},
]


@pytest.mark.parametrize("prompts", ["en", "ru", "en-compact", "ru-compact"])
def test_history_items_join_to_the_rendering(prompts: str) -> None:
    prompt_set = PromptSet.load(prompts)
    for count in range(1, len(_ENTRIES) + 1):
        entries = _ENTRIES[:count]
        texts = [prompt_set.render_item("history", e) for e in entries]
        assert None not in texts
        assert prompt_set.join_items("history", texts) == prompt_set.render("history", steps=entries)  # type: ignore[arg-type]


@pytest.mark.parametrize("source", [
    "{% for s in steps %}{{ loop.index }}. {{ s.action }}\n{% endfor %}",
    "{% for s in steps %}{% set a = s.action %}{{ a }}\n{% endfor %}",
    "{{ steps | length }} steps:\n{% for s in steps %}{{ s.action }}\n{% endfor %}",
    "{% for s in steps if s.action %}{{ s.action }}\n{% endfor %}",
    "{% for s in steps %}{{ s.action }} of {{ steps | length }}\n{% endfor %}",
    "{% for s in steps %}{{ s.action }}{% endfor %}{% for s in steps %}{{ s.index }}{% endfor %}",
    "{% for s in steps | reverse %}{{ s.action }}\n{% endfor %}",
])
def test_a_history_that_is_more_than_one_plain_loop_renders_whole(source: str) -> None:
    prompts = PromptSet.load({"history": source}, lang="en")
    assert prompts.render_item("history", _ENTRIES[0]) is None
    llm = ScriptedChatModel([call("echo", text="one"), call("echo", text="two"), finish("ok")])
    agent = ReactAgent(llm, [echo], prompts={"history": source}, lang="en")
    agent.run("task")
    expected = prompts.render("history", steps=[
        {"index": i, "action": "echo", "thought": "", "action_input": json.dumps({"text": t}),
         "observation": f"echo: {t}", "is_error": False, "reflection": None} for i, t in enumerate(["one", "two"], 1)])
    assert expected and expected in llm.calls[2].text


def test_a_history_of_one_plain_loop_renders_item_by_item_as_a_whole() -> None:
    source = ("History:\n{% for s in steps %}- {{ s.action }}: {{ s.observation | upper }}\n"
              "{% else %}none{% endfor %}\nEnd")
    prompts = PromptSet.load({"history": source}, lang="en")
    assert prompts.render_item("history", _ENTRIES[0]) == "- echo: ECHO: A\n"
    llm = ScriptedChatModel([call("echo", text="one"), call("echo", text="two"), finish("ok")])
    ReactAgent(llm, [echo], prompts={"history": source}, lang="en").run("task")
    assert "History:\nnoneEnd" in llm.calls[0].text  # trim_blocks eats the newline after endfor
    assert "History:\n- echo: ECHO: ONE\n- echo: ECHO: TWO\nEnd" in llm.calls[2].text


def test_a_langchain_history_template_renders_whole() -> None:
    from langchain_core.prompts import PromptTemplate

    history = PromptTemplate.from_template("H: {steps}")
    assert PromptSet.load({"history": history}, lang="en").render_item("history", _ENTRIES[0]) is None
    llm = ScriptedChatModel([call("echo", text="one"), finish("ok")])
    result = ReactAgent(llm, [echo], prompts={"history": history}, lang="en").run("task")
    assert result.status == "finished" and "H: [{'index': 1" in llm.calls[1].text


def test_a_step_replaced_by_a_reflection_is_rendered_again() -> None:
    source = "{% for s in steps %}{{ s.index }} {{ s.observation }} [{{ s.reflection }}]\n{% endfor %}"
    llm = ScriptedChatModel([call("echo", text="error here"), "the echo said error", finish("ok")])
    ReflectionAgent(llm, [echo], prompts={"history": source}, lang="en").run("task")
    assert "1 echo: error here [the echo said error]" in llm.calls[-1].text


def test_a_task_changed_by_an_override_is_rendered_again() -> None:
    class Counting(ReactAgent):
        def prompt_variables(self, state, *, window="default"):  # type: ignore[no-untyped-def]
            return {**super().prompt_variables(state, window=window), "task": f"{state.task} #{len(state.steps)}"}

    llm = ScriptedChatModel([call("echo", text="one"), call("echo", text="two"), finish("ok")])
    Counting(llm, [echo], prompts="en").run("task")
    assert ["task #0" in llm.calls[0].text, "task #1" in llm.calls[1].text, "task #2" in llm.calls[2].text] == [
        True, True, True]


def test_reflection_prompts_still_follow_the_step_prompt() -> None:
    llm = ScriptedChatModel([call("echo", text="error here"), "the echo said error", finish("ok")])
    result = ReflectionAgent(llm, [echo], prompts="en").run("task")
    assert result.status == "finished" and result.steps[0].reflection == "the echo said error"


# ---------------------------------------------------------------------------------------------- parser
_REPLIES = [
    {"thought": "t", "action": "echo", "action_input": {"text": "hi"}},
    {"thought": "t", "action": "FINISH", "action_input": "the answer"},
    {"thought": "t", "action": "finish", "action_input": {"answer": "42"}},
    {"thought": "t", "action": "Final Answer", "action_input": {"x": 1}},
    {"thought": "t", "action": " echo ", "action_input": "{\"text\": \"hi\"}"},
    {"thought": "t", "action": "echo", "action_input": None},
    {"thought": "t", "action": "echo", "action_input": 3},
    {"thought": "t", "action": "none", "action_input": {}},
    {"thought": "t", "action": "", "action_input": {}},
    {"thought": "t", "action": "search final answer", "action_input": {}},
    {"thought": "t", "action": "unknown_tool", "action_input": {"a": [1, 2]}},
    {"thought": "", "action": "echo", "action_input": ""},
]


def _outcome(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except OutputParseError as exc:
        return ("refused", exc.reason, exc.message)


@pytest.mark.parametrize("reply", _REPLIES, ids=lambda r: repr(r["action"]))
def test_the_parser_shortcut_agrees_with_the_full_pipeline(reply: dict[str, object]) -> None:
    """A reply with exactly the protocol's keys parses as it does with an extra key the pipeline ignores."""
    text = json.dumps(reply)
    padded = json.dumps({**reply, "observation": None})  # a fourth (reserved) key: the general path
    shortcut = _outcome(lambda: parse_response(text, ["echo"]))
    general = _outcome(lambda: parse_response(padded, ["echo"]))
    assert shortcut == general


# ---------------------------------------------------------------------------------------------- tools
def test_idempotency_keys_reach_only_the_tools_that_take_them() -> None:
    llm = ScriptedChatModel([call("keyed", text="a"), call("echo", text="b"), finish("ok")])
    result = ReactAgent(llm, [keyed, echo], prompts="en").run("task")
    assert result.steps[0].observation.startswith("a key=") and len(result.steps[0].observation) > len("a key=")
    assert result.steps[1].observation == "echo: b"
