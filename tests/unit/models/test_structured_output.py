"""Structured output per server family, request rejections, ``make_model``: the pure parts, no server.

The clients are the real ones (``ChatOpenAI``, ``ChatOllama``, ``LocalChatModel``, GigaChat's and
OpenAI's exception classes); nothing here talks to a server except one connection to a closed
loopback port.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import socket
import sys
from typing import Any

import httpx
import openai
import pytest
from conftest import ROOT
from gigachat.exceptions import BadRequestError, ServerError
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from react_agent import ConfigError, RetryPolicy, answer_schema, is_transient
from react_agent.models import LocalChatModel, make_model
from react_agent.models._providers import DEFAULT_SERVER_MAX_TOKENS, PROVIDERS
from react_agent.models._structured import (
    METADATA_KEY,
    adapt_schema,
    compat_kwargs,
    detect_mode,
    gbnf_safe_pattern,
    merge_kwargs,
    model_call_kwargs,
    resolve_mode,
    schema_to_gbnf,
    structured_kwargs,
    unwrap_model,
)
from react_agent.models.local._weights import weights_installed
from react_agent.runtime._retry import explain_model_error, is_request_rejection
from react_agent.testing import ScriptedChatModel

langchain_openai = pytest.importorskip("langchain_openai")
ChatOpenAI = langchain_openai.ChatOpenAI

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python not installed (extra 'local')")
LOCAL_URL = "http://127.0.0.1:8080/v1"
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}


def local_server(**kwargs: Any) -> Any:
    return ChatOpenAI(base_url=LOCAL_URL, api_key="x", model="m", **kwargs)


def openai_model(**kwargs: Any) -> Any:
    return ChatOpenAI(api_key="sk-test", model="gpt-4.1", **kwargs)


class Lookup(BaseModel):
    name: str = Field(description="who to look up")
    limit: int = Field(3, ge=1, le=5, description="how many")
    note: Any = Field(None, description="free form")
    code: str = Field("A1", pattern="[A-Z][0-9]")


@tool(args_schema=Lookup)
def lookup(name: str, limit: int = 3, note: Any = None, code: str = "A1") -> str:
    """Look someone up."""
    return name


# ------------------------------------------------------------------------------------------ modes
@pytest.mark.parametrize(("constrained", "expected"), [
    (False, False), ("json_object", "json_object"), ("grammar", "grammar"), ("json_schema", "json_schema"),
    (None, False), (True, "json_schema"),
])
def test_resolve_mode_for_an_unknown_server(constrained: Any, expected: Any) -> None:
    """A ChatOpenAI at an unknown server: detection says off, True falls back to json_schema, names win."""
    assert resolve_mode(local_server(), constrained) == expected


@pytest.mark.parametrize("bad", ["json", "JSON_SCHEMA", 1, "grammar "])
def test_resolve_mode_rejects_unknown_values_naming_the_valid_ones(bad: Any) -> None:
    with pytest.raises(ConfigError, match="'json_schema', 'json_object', 'grammar'"):
        resolve_mode(local_server(), bad)


def test_detect_mode_per_client_family() -> None:
    from langchain_gigachat import GigaChat

    assert detect_mode(LocalChatModel()) == "json_schema"  # supports_json_schema
    assert detect_mode(openai_model()) == "json_schema"  # api.openai.com
    assert detect_mode(local_server()) is False  # an unknown OpenAI-compatible server
    assert detect_mode(ChatOpenAI(base_url="http://127.0.0.1:11434/v1", api_key="x", model="q")) == "json_schema"
    assert detect_mode(GigaChat(credentials="x")) is False
    assert detect_mode(ScriptedChatModel([])) is False


def test_detect_mode_reads_the_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", LOCAL_URL)
    assert detect_mode(ChatOpenAI(api_key="x", model="m")) is False


def test_detect_mode_reads_the_metadata_declaration() -> None:
    assert detect_mode(local_server(metadata={METADATA_KEY: "json_object"})) == "json_object"
    assert detect_mode(LocalChatModel(metadata={METADATA_KEY: False})) is False
    with pytest.raises(ConfigError, match=METADATA_KEY):
        detect_mode(local_server(metadata={METADATA_KEY: "xml"}))


def test_detection_looks_through_wrappers() -> None:
    local = LocalChatModel()
    for wrapped in (local.bind(stop=["\n"]), local.with_retry(), local.with_config(tags=["t"]),
                    local.with_fallbacks([local_server()]),
                    local.bind(stop=["x"]).with_retry().with_config(tags=["t"])):
        assert unwrap_model(wrapped) is local
        assert detect_mode(wrapped) == "json_schema"
    assert detect_mode(local_server().with_fallbacks([local])) is False  # the first runnable decides


# ------------------------------------------------------------------------------------------ kwargs
def test_kwargs_per_mode_for_chat_openai() -> None:
    """ChatOpenAI gets the field in extra_body: same JSON body, but past the SDK's parse() path."""
    llm = local_server()
    assert structured_kwargs(llm, SCHEMA, "json_schema") == {"extra_body": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "agent_action", "schema": SCHEMA}}}}
    assert structured_kwargs(llm, SCHEMA, "json_object") == {"extra_body": {
        "response_format": {"type": "json_object", "schema": SCHEMA}}}
    assert structured_kwargs(llm, SCHEMA, False) == {}
    named = structured_kwargs(llm, SCHEMA, "json_schema", name="agent_plan")
    assert named["extra_body"]["response_format"]["json_schema"]["name"] == "agent_plan"


def test_kwargs_per_mode_for_other_models() -> None:
    local = LocalChatModel()
    assert structured_kwargs(local, SCHEMA, "json_object") == {
        "response_format": {"type": "json_object", "schema": SCHEMA}}
    scripted = ScriptedChatModel([])
    assert structured_kwargs(scripted, SCHEMA, "json_schema") == {
        "response_format": {"type": "json_schema", "json_schema": {"name": "agent_action", "schema": SCHEMA}}}
    with pytest.raises(ConfigError, match="unknown constrained mode"):
        structured_kwargs(scripted, SCHEMA, "xml")  # type: ignore[arg-type]


def test_ollama_native_gets_the_schema_as_format_and_no_grammar() -> None:
    ChatOllama = pytest.importorskip("langchain_ollama").ChatOllama
    ollama = ChatOllama(model="qwen3")
    assert detect_mode(ollama) == "json_schema"
    assert structured_kwargs(ollama, SCHEMA, "json_schema") == {"format": SCHEMA}
    with pytest.raises(ConfigError, match="Ollama takes no grammar"):
        structured_kwargs(ollama, SCHEMA, "grammar")


@needs_llama
def test_grammar_mode_compiles_gbnf_for_local_model_and_extra_body_for_a_server() -> None:
    local = structured_kwargs(LocalChatModel(), SCHEMA, "grammar")
    assert set(local) == {"grammar"} and "root ::=" in local["grammar"]
    llm = local_server(extra_body={"cache_prompt": True}, max_tokens=32)
    sent = model_call_kwargs(llm, SCHEMA, "grammar")
    assert sent["extra_body"] == {"cache_prompt": True, "max_tokens": 32, "grammar": local["grammar"]}
    assert schema_to_gbnf(SCHEMA) is schema_to_gbnf(dict(SCHEMA))  # compiled once per schema


def test_max_tokens_reaches_non_openai_servers_as_extra_body() -> None:
    """ChatOpenAI renames max_tokens to max_completion_tokens, which llama.cpp ignores: extra_body fixes it."""
    assert compat_kwargs(local_server(max_tokens=64)) == {"extra_body": {"max_tokens": 64}}
    assert compat_kwargs(local_server(max_tokens=64).bind(max_tokens=16)) == {"extra_body": {"max_tokens": 16}}
    assert compat_kwargs(local_server(max_tokens=64, extra_body={"top_k": 5})) == {
        "extra_body": {"top_k": 5, "max_tokens": 64}}
    assert compat_kwargs(local_server()) == {}  # no limit configured
    assert compat_kwargs(openai_model(max_tokens=64)) == {}  # OpenAI takes max_completion_tokens
    assert compat_kwargs(LocalChatModel(max_tokens=64)) == {}


def test_model_call_kwargs_merges_and_returns_fresh_dicts() -> None:
    llm = local_server(max_tokens=64)
    first = model_call_kwargs(llm, SCHEMA, "json_object")
    assert first == {"extra_body": {"max_tokens": 64, "response_format": {"type": "json_object", "schema": SCHEMA}}}
    first["extra_body"]["grammar"] = "changed"
    assert "grammar" not in model_call_kwargs(llm, SCHEMA, "json_object")["extra_body"]
    assert model_call_kwargs(llm, None, "json_object") == {"extra_body": {"max_tokens": 64}}
    assert model_call_kwargs(llm, SCHEMA, False) == {"extra_body": {"max_tokens": 64}}
    assert merge_kwargs({"extra_body": {"a": 1}, "x": 1}, {"extra_body": {"b": 2}, "x": 2}) == {
        "extra_body": {"a": 1, "b": 2}, "x": 2}


def test_kwargs_reach_the_request_payload_chat_openai_builds() -> None:
    """What ChatOpenAI would send (its own payload builder, no request): max_tokens survives in extra_body."""
    llm = local_server(max_tokens=64)
    payload = llm._get_request_payload("hi", **model_call_kwargs(llm, SCHEMA, "json_object"))
    assert payload["max_completion_tokens"] == 64 and "max_tokens" not in payload
    assert "response_format" not in payload  # else ChatOpenAI takes the SDK's parse() path
    assert payload["extra_body"] == {"max_tokens": 64, "response_format": {"type": "json_object", "schema": SCHEMA}}


# ------------------------------------------------------------------------------------------ schemas
def test_llama_cpp_family_drops_what_its_converter_rejects(caplog: pytest.LogCaptureFixture) -> None:
    schema = answer_schema([lookup])
    adapted = adapt_schema(schema, "llama.cpp")
    args = adapted["anyOf"][0]["properties"]["action_input"]["properties"]
    assert args["note"] == {"type": ["string", "number", "boolean", "object", "array", "null"]}
    assert args["code"] == {"type": "string"}  # unanchored pattern dropped
    assert args["limit"]["enum"] == [1, 2, 3, 4, 5]  # bounded integers enforced as an enum
    assert "description" not in json.dumps(adapted) and "default" not in json.dumps(adapted)  # annotations
    assert adapted["anyOf"][0]["properties"]["action"] == {"const": "lookup"}
    assert adapt_schema(schema, "openai") == schema  # other families: a copy as it is
    with caplog.at_level(logging.DEBUG, logger="react_agent"):
        adapt_schema(schema, "llama.cpp")
    assert "/anyOf/0/properties/action_input/properties/code/pattern" in caplog.text


def test_adaptation_keeps_data_that_looks_like_keywords() -> None:
    schema = {"type": "object", "properties": {"description": {"type": "string"}, "title": {"const": {"title": "x"}},
                                               "p": {"type": "string", "pattern": "^[a-z]+$"}},
              "required": ["description", "title"]}
    adapted = adapt_schema(schema, "llama.cpp")
    assert adapted["properties"]["description"] == {"type": "string"}
    assert adapted["properties"]["title"] == {"const": {"title": "x"}}
    assert adapted["properties"]["p"]["pattern"] == "^[a-z]+$"  # anchored: the converter takes it
    assert adapted["required"] == ["description", "title"]


@pytest.mark.parametrize(("pattern", "safe"), [
    (r"^\d{3}-\d{2}$", "^[0-9]{3}-[0-9]{2}$"),
    (r"^[\w.]+@[\w.]+\.[a-z]+$", "^[0-9A-Za-z_.]+@[0-9A-Za-z_.]+[.][a-z]+$"),
    (r"^\+?[0-9]{6,15}$", "^[+]?[0-9]{6,15}$"),
    (r"^\s*x$", "^[ \\t\\n\\r]*x$"),
    (r"^[A-Z][0-9]$", "^[A-Z][0-9]$"),
    (r"^a\\b$", r"^a\\b$"),
    ("[A-Z][0-9]", None),  # not anchored: the converter asserts
    (r"^\bword$", None),  # no grammar equivalent
    (r"^[a-z\-]+$", None),
    (r"^[]a]+$", None),
])
def test_patterns_are_rewritten_into_what_llama_cpp_grammars_parse(pattern: str, safe: str | None) -> None:
    """llama.cpp's grammar parser knows few escapes; the converter copies \\d or \\. verbatim, which crashes
    llama.cpp while sampling. Escapes become classes; what cannot be expressed is dropped."""
    assert gbnf_safe_pattern(pattern) == safe
    if safe is not None:
        for sample in ("123-45", "a.b@c.d.com", "+79991234567", "  x", "B7", "a\\b"):
            assert bool(re.fullmatch(pattern[1:-1], sample)) == bool(re.fullmatch(safe[1:-1], sample))


@pytest.mark.local_model
@needs_llama
@pytest.mark.skipif(not weights_installed(), reason="default weights missing")
def test_an_escaped_pattern_decodes_without_crashing_llama_cpp() -> None:
    """Before the rewrite this grammar made llama.cpp segfault; run in a child process so a crash is a failure."""
    import subprocess

    script = (
        "import json, re\n"
        "from react_agent.models._structured import structured_kwargs\n"
        "from react_agent.models import LocalChatModel\n"
        "schema = {'type': 'object', 'properties': {'code': {'type': 'string', 'pattern': r'^\\d{3}\\.\\d{2}$'}},"
        " 'required': ['code'], 'additionalProperties': False}\n"
        "llm = LocalChatModel(max_tokens=24)\n"
        "reply = llm.invoke('Code: ', **structured_kwargs(llm, schema, 'grammar'))\n"
        "print(json.loads(reply.content)['code'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.fullmatch(r"\d{3}\.\d{2}", done.stdout.strip().splitlines()[-1])


@needs_llama
def test_the_real_converter_rejects_the_raw_schema_and_accepts_the_adapted_one() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = answer_schema([lookup])
    with pytest.raises((AssertionError, ValueError)):
        json_schema_to_gbnf(json.dumps(schema))
    assert "root ::=" in json_schema_to_gbnf(json.dumps(adapt_schema(schema, "llama.cpp")))


def test_the_adapted_schema_is_computed_once_per_schema_object(caplog: pytest.LogCaptureFixture) -> None:
    schema = answer_schema([lookup])
    with caplog.at_level(logging.DEBUG, logger="react_agent"):
        first = structured_kwargs(LocalChatModel(), schema, "json_schema")["response_format"]
        again = structured_kwargs(LocalChatModel(), schema, "json_schema")["response_format"]
        assert caplog.text.count("dropped") == 1
        other = structured_kwargs(LocalChatModel(), answer_schema([lookup]), "json_schema")["response_format"]
        assert caplog.text.count("dropped") == 2  # an equal but new schema object is adapted again
    assert first["json_schema"]["schema"] is again["json_schema"]["schema"]
    assert other == first


def test_json_object_and_local_model_get_the_adapted_schema() -> None:
    schema = answer_schema([lookup])
    sent = structured_kwargs(local_server(), schema, "json_object")["extra_body"]["response_format"]["schema"]
    assert sent == adapt_schema(schema, "llama.cpp")
    local = structured_kwargs(LocalChatModel(), schema, "json_schema")["response_format"]["json_schema"]["schema"]
    assert local == adapt_schema(schema, "llama.cpp")
    remote = structured_kwargs(openai_model(), schema, "json_schema")["extra_body"]["response_format"]
    remote = remote["json_schema"]["schema"]
    assert remote == schema


# ------------------------------------------------------------------------------------------ rejections
def openai_error(cls: type[openai.APIStatusError], status: int, body: dict[str, Any]) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:8000/v1/chat/completions")
    response = httpx.Response(status, json={"error": body}, request=request)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


LLAMA_CPP_500 = {"message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
                            "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
                 "type": "internal_server_error", "param": None, "code": None}


def test_a_500_that_is_a_validation_error_is_a_rejection_not_transient() -> None:
    exc = openai_error(openai.InternalServerError, 500, LLAMA_CPP_500)
    assert is_request_rejection(exc) and not is_transient(exc)
    message = explain_model_error(exc)
    assert message is not None
    assert "json_schema" in message and "constrained='json_object'" in message and "HTTP 500" in message


def test_real_transient_errors_stay_transient() -> None:
    busy = openai_error(openai.InternalServerError, 500, {"message": "CUDA out of memory", "type": "server_error"})
    assert is_transient(busy) and not is_request_rejection(busy) and explain_model_error(busy) is None
    assert is_transient(ServerError("https://x", 503, b"busy", None))
    assert is_transient(openai_error(openai.RateLimitError, 429, {"message": "slow down"}))
    assert is_transient(httpx.ConnectError("refused"))


@pytest.mark.parametrize(("exc", "expected"), [
    (openai_error(openai.BadRequestError, 400, {"message": "'response_format' of type 'json_object' is not supported"}),
     "constrained='json_schema'"),
    (openai_error(openai.BadRequestError, 400, {"message": "Invalid schema for response_format 'agent_action'"}),
     "answer schema"),
    (openai_error(openai.UnprocessableEntityError, 422, {"message": "grammar: parse error at 3"}), "grammar"),
    (openai_error(openai.BadRequestError, 400, {"message": "The provided JSON schema contains features not "
                                                           "supported by xgrammar."}), "answer schema"),
    (openai_error(openai.BadRequestError, 400, {"message": "'response_format' of type 'json_schema' is not "
                                                           "supported with this model"}), "constrained='json_object'"),
    (openai_error(openai.BadRequestError, 400, {"message": "This model's maximum context length is 2048 tokens",
                                                "code": "context_length_exceeded"}), "history_window"),
    (BadRequestError("https://gigachat", 400, b"bad payload", None), "HTTP 400: bad payload"),
    (openai_error(openai.AuthenticationError, 401, {"message": "bad key"}), "API key"),
    (openai_error(openai.NotFoundError, 404, {"message": "no such model"}), "model name and base_url"),
])
def test_explanations_say_what_to_change(exc: BaseException, expected: str) -> None:
    message = explain_model_error(exc)
    assert message is not None and expected in message
    assert not is_transient(exc)


def test_a_reply_cut_by_the_sdk_parse_path_is_explained() -> None:
    from openai.types.chat import ChatCompletion

    exc = openai.LengthFinishReasonError(completion=ChatCompletion.model_construct(usage=None))
    message = explain_model_error(exc)
    assert message is not None and "max_tokens" in message


def test_other_failures_have_no_explanation() -> None:
    assert explain_model_error(ValueError("boom")) is None
    assert explain_model_error(ServerError("https://x", 503, b"busy", None)) is None


def test_a_rejection_is_attempted_once() -> None:
    calls = []

    def invoke() -> None:
        calls.append(1)
        raise openai_error(openai.InternalServerError, 500, LLAMA_CPP_500)

    with pytest.raises(openai.InternalServerError):
        RetryPolicy(max_attempts=3, initial_wait=0, jitter=0).call(invoke)
    assert len(calls) == 1


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_named_at_the_first_call() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    llm = make_model("llamacpp:any", base_url=url)  # nothing is contacted here
    with pytest.raises(openai.APIConnectionError) as caught:
        llm.invoke("hi")
    message = explain_model_error(caught.value)
    assert message is not None and f"{url}/chat/completions" in message and "base_url" in message


# ------------------------------------------------------------------------------------------ make_model
def test_make_model_builds_each_server_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llama = make_model("llamacpp:gemma", base_url="http://127.0.0.1:9/v1")
    assert isinstance(llama, ChatOpenAI) and llama.model_name == "gemma" and llama.max_retries == 0
    assert detect_mode(llama) == "json_object"
    assert compat_kwargs(llama) == {"extra_body": {"max_tokens": DEFAULT_SERVER_MAX_TOKENS}}
    vllm = make_model("vllm:Qwen/Qwen2.5-7B-Instruct", max_tokens=50)
    assert detect_mode(vllm) == "json_schema" and vllm.openai_api_base == "http://127.0.0.1:8000/v1"
    assert vllm.max_tokens == 50
    assert detect_mode(make_model("openai:my-model", base_url="http://127.0.0.1:9/v1")) is False
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert make_model("openai:gpt-4.1", api_key_env="MY_KEY").openai_api_key.get_secret_value() == "sk-mine"
    if HAVE_LLAMA:
        assert isinstance(make_model("local"), LocalChatModel)
    if importlib.util.find_spec("langchain_ollama") is not None:
        ollama = make_model("ollama:qwen3:8b", base_url="http://127.0.0.1:11434")
        assert type(ollama).__name__ == "ChatOllama" and ollama.model == "qwen3:8b"


@pytest.mark.parametrize(("spec", "expected"), [
    ("claude:opus", "use one of gigachat, llamacpp, local, ollama, openai, vllm"),
    ("", "provider:name"),
    ("openai:", "needs a model name"),
    pytest.param("local:/no/such/model.gguf", "GGUF file not found: /no/such/model.gguf",
                 marks=pytest.mark.skipif(not HAVE_LLAMA, reason="needs the 'local' extra (llama-cpp-python)")),
])
def test_make_model_errors_say_what_to_do(spec: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected.replace(".", r"\.")):
        make_model(spec)


def test_make_model_names_the_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set the environment variable OPENAI_API_KEY"):
        make_model("openai:gpt-4.1")
    with pytest.raises(ConfigError, match="set the environment variable NOT_SET_ANYWHERE"):
        make_model("vllm:q", api_key_env="NOT_SET_ANYWHERE")
    for name in ("CREDENTIALS", "ACCESS_TOKEN", "USER"):
        monkeypatch.delenv(f"GIGACHAT_{name}", raising=False)
    with pytest.raises(ConfigError, match="GIGACHAT_CREDENTIALS"):
        make_model("gigachat:GigaChat-2-Max")
    monkeypatch.setenv("MY_GIGA", "key")
    assert make_model("gigachat:GigaChat-2-Max", api_key_env="MY_GIGA").credentials == "key"


def test_make_model_names_the_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_ollama", None)  # as if it were not installed
    with pytest.raises(ConfigError, match="pip install langchain-ollama"):
        make_model("ollama:qwen3")


def test_every_provider_is_documented() -> None:

    page = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    for provider in PROVIDERS:
        assert f'"{provider}' in page, f"docs/models.md has no make_model example for {provider}"
