"""A ChatOpenAI pointed at an OpenAI-compatible server finds out, once, which structured output the server
accepts: real loopback HTTP servers that answer like each family, through the real langchain-openai client."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from react_agent import ReactAgent
from react_agent.models import _probe
from react_agent.models._structured import detect_mode

pytest.importorskip("langchain_openai")


class Family(ThreadingHTTPServer):
    """Answers GET requests from ``routes`` (path -> JSON); 404 for anything else; keeps every path asked."""

    daemon_threads = True

    def __init__(self, routes: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes, self.asked, self.auth = routes, [], []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: Family

    def do_GET(self) -> None:
        self.server.asked.append(self.path)
        self.server.auth.append(self.headers.get("Authorization"))
        body = self.server.routes.get(self.path)
        data = json.dumps(body if body is not None else {"detail": "Not Found"}).encode()
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def models(owner: str) -> dict[str, Any]:
    return {"/v1/models": {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner}]}}


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Family] = []

    def start(routes: dict[str, Any]) -> Family:
        server = Family(routes)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def chat(url: str) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=url, api_key="sk-probe-0123456789", model="m", max_retries=0)


@pytest.mark.parametrize(("routes", "mode"), [
    (models("me"), "json_object"),  # llama-cpp-python's server
    (models("llamacpp"), "json_schema"),  # llama.cpp's llama-server
    (models("vllm"), "json_schema"),
    (models("library"), "json_schema"),  # Ollama's /v1
    ({**models("someone"), "/props": {"default_generation_settings": {}}}, "json_schema"),  # llama-server, older
    ({**models("someone"), "/openapi.json": {"info": {"title": "🦙 llama.cpp Python API"}}}, "json_object"),
])
def test_the_server_family_picks_the_mode(serve: Any, routes: dict[str, Any], mode: str) -> None:
    server = serve(routes)
    agent = ReactAgent(chat(server.url), [], prompts="en")
    assert agent.mode == mode
    assert server.asked[0] == "/v1/models" and server.auth[0] == "Bearer sk-probe-0123456789"


def test_the_server_is_asked_once_per_process(serve: Any) -> None:
    server = serve(models("me"))
    for _ in range(3):
        assert ReactAgent(chat(server.url), [], prompts="en").mode == "json_object"
    assert server.asked == ["/v1/models"]


def test_an_unknown_family_logs_one_warning_naming_the_fix(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    server = serve(models("someone"))
    caplog.set_level(logging.WARNING, logger="react_agent")
    modes = [ReactAgent(chat(server.url), [], prompts="en").mode for _ in range(2)]
    assert modes == [False, False]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and server.url in warnings[0]
    assert "constrained='json_object'" in warnings[0] and "constrained='json_schema'" in warnings[0]
    assert "sk-probe" not in warnings[0]


def test_an_unreachable_server_is_quiet_and_unconstrained(caplog: pytest.LogCaptureFixture) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nobody listens there
    caplog.set_level(logging.WARNING, logger="react_agent")
    assert detect_mode(chat(f"http://127.0.0.1:{port}/v1")) is False
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_an_explicit_constrained_choice_asks_nothing(serve: Any) -> None:
    server = serve(models("me"))
    assert ReactAgent(chat(server.url), [], prompts="en", constrained=False).mode is False
    assert ReactAgent(chat(server.url), [], prompts="en", constrained="json_schema").mode == "json_schema"
    assert server.asked == []


def test_a_huge_or_hostile_models_answer_is_unknown_not_a_crash(serve: Any) -> None:
    server = serve({"/v1/models": {"data": ["not a dict", {"owned_by": ["me"]}, None] * 1000}})
    assert ReactAgent(chat(server.url), [], prompts="en").mode is False


@pytest.fixture(autouse=True)
def fresh_probe_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_probe, "_KNOWN", {})
