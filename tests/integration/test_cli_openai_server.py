"""react-agent --model openai:NAME --base-url ... against a tiny OpenAI-compatible server on 127.0.0.1, through
the real langchain-openai client (no mocks of the client library); unreachable servers, refused and missing
keys, unknown providers: one clear line each, with its own exit code."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import HELPERS

from react_agent.cli import _main as cli

pytest.importorskip("langchain_openai")

KEY_VAR, KEY = "CLI_TEST_SERVER_KEY", "sk-test-0123456789abcdef"


def reply(action: str, action_input: Any, thought: str = "") -> str:
    return json.dumps({"thought": thought, "action": action, "action_input": action_input})


class ChatServer(ThreadingHTTPServer):
    """``POST /v1/chat/completions``: the next scripted reply as a chat.completion; every request is kept.
    ``status`` other than 200 answers every request with that status and an OpenAI-style error body."""

    daemon_threads = True

    def __init__(self, replies: list[str], status: int = 200) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies, self.status = list(replies), status
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with self.server.lock:
            self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
            status = self.server.status
            text = self.server.replies.pop(0) if status == 200 and self.server.replies else None
        if status != 200:
            self._send(status, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                          "code": "invalid_api_key"}})
        elif not self.path.endswith("/chat/completions") or text is None:
            self._send(500, {"error": {"message": f"no scripted reply for {self.path}", "type": "server_error"}})
        else:
            self._send(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start a ChatServer on 127.0.0.1 with the given replies; stopped after the test."""
    servers: list[ChatServer] = []

    def start(*replies: str, status: int = 200) -> ChatServer:
        server = ChatServer(list(replies), status)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_VAR, KEY)
    return KEY


def closed_port_url() -> str:
    """The URL of a port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def model_args(url: str, name: str = "test-model") -> list[str]:
    return ["--model", f"openai:{name}", "--base-url", url, "--api-key-env", KEY_VAR]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# ------------------------------------------------------------------------------ a real client, a real server


def test_run_through_an_openai_compatible_server(serve: Any, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    """run --model openai:NAME --base-url URL --api-key-env VAR: the real ChatOpenAI client talks to the server
    with that model name and key; the user's tool runs; the key is never printed, even with --debug."""
    server = serve(reply("add", {"a": 2, "b": 3}, "add"), reply("FINISH", "The sum is 5"))
    assert cli.main(["run", "What is 2+3?", "--tools", "cli_tools", "--debug", *model_args(server.url)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "The sum is 5\n"
    assert "Observation: 5" in captured.err and "11+7 tokens" in captured.err
    assert [(r["path"], r["model"], r["auth"]) for r in server.requests] == [
        ("/v1/chat/completions", "test-model", f"Bearer {key}")] * 2
    assert "What is 2+3?" in json.dumps(server.requests[0]["messages"])
    assert key not in captured.err + captured.out


def test_chat_subprocess_through_the_server(serve: Any, key: str) -> None:
    """`react-agent chat` in a real process, stdin piped (not a terminal): one answer per line on stdout, the
    trace on stderr; the second message carries the first turn."""
    server = serve(reply("add", {"a": 2, "b": 3}), reply("FINISH", "5"), reply("FINISH", "50"))
    argv = [sys.executable, "-m", "react_agent.cli", "chat", "--tools", str(HELPERS / "cli_tools.py"),
            *model_args(server.url)]
    proc = subprocess.run(argv, input="What is 2+3?\nAnd times 10?\n/exit\n", capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "5\n50\n"
    assert "Action: add" in proc.stderr and "Observation: 5" in proc.stderr
    assert len(server.requests) == 3
    assert "What is 2+3?" in json.dumps(server.requests[2]["messages"], ensure_ascii=False)


# ------------------------------------------------------------------------------ misconfigurations


@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_unreachable_server_exits_6_naming_the_url(provider: str, key: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens at --base-url: the first call fails; one line names the URL and says what to check
    (ChatOpenAI through the OpenAI SDK, ChatOllama through httpx)."""
    if provider == "ollama":
        pytest.importorskip("langchain_ollama")
    url = closed_port_url()
    if provider == "ollama":
        url = url.removesuffix("/v1")
    argv = ["run", "hi", "--tools", "cli_tools", "--model", f"{provider}:m", "--base-url", url,
            "--api-key-env", KEY_VAR]
    assert cli.main(argv) == 6
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("react-agent: error: cannot reach the model server at " + url)
    assert "base_url" in last
    assert "Traceback" not in err


def test_chat_with_unreachable_server_exits_6(key: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    url = closed_port_url()
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\nnever asked\n"))
    assert cli.main(["chat", "--tools", "cli_tools", *model_args(url)]) == 6
    assert url in capsys.readouterr().err.strip().splitlines()[-1]


def test_refused_key_exits_5(serve: Any, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The server answers 401: one line saying to check the API key, exit 5."""
    server = serve(status=401)
    assert cli.main(["run", "hi", "--tools", "cli_tools", *model_args(server.url)]) == 5
    err = capsys.readouterr().err
    assert "check the API key" in err.strip().splitlines()[-1]
    assert key not in err


@pytest.mark.parametrize(("extra", "variable"), [([], "OPENAI_API_KEY"),
                                                 (["--api-key-env", "CLI_TEST_MISSING_KEY"], "CLI_TEST_MISSING_KEY")])
def test_missing_key_exits_5_naming_the_variable(extra: list[str], variable: str, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """openai:NAME without the key in the environment: the variable to set is named, nothing is contacted."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CLI_TEST_MISSING_KEY", raising=False)
    assert cli.main(["run", "hi", "--tools", "cli_tools", "--model", "openai:gpt-4.1", *extra]) == 5
    line = one_line(capsys.readouterr().err)
    assert f"set the environment variable {variable}" in line


def test_unknown_provider_exits_3_listing_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "hi", "--tools", "cli_tools", "--model", "acme:big"]) == 3
    line = one_line(capsys.readouterr().err)
    assert "unknown model provider 'acme'" in line
    for provider in ("openai", "vllm", "llamacpp", "ollama", "gigachat", "local"):
        assert provider in line


def test_model_path_with_a_server_model_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "hi", "--model", "openai:x", "--model-path", "m.gguf"]) == 2
    assert "--model-path is for --model local" in one_line(capsys.readouterr().err)


def test_local_model_takes_no_base_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "hi", "--model", "local", "--base-url", "http://127.0.0.1:1/v1"]) == 3
    assert "takes no base URL" in one_line(capsys.readouterr().err)
