"""Credentials never leak: not into the result, its error text, the journal, nor log records.

A recognisable fake credential goes through the real GigaChat settings; the calls fail fast on loopback
(a closed port, or a local server that answers 401 and echoes the Authorization header back, as some
proxies do)."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatResult
from langchain_core.runnables import ConfigurableField
from langchain_core.tools import tool
from langchain_gigachat import GigaChat
from pydantic import ConfigDict, PrivateAttr, SecretStr

from react_agent import ReactAgent, ReflectionAgent, RetryPolicy, RunError
from react_agent.testing import ScriptedChatModel

SECRET = "FAKE-SECRET-CREDENTIAL-12345"
FAST = RetryPolicy(max_attempts=2, initial_wait=0.001, max_wait=0.01, jitter=0)


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EchoAuthHandler(BaseHTTPRequestHandler):
    """Answers every request 401 with the request's Authorization header in the body."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = json.dumps({"message": f"invalid credentials: {self.headers.get('Authorization')}"}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoAuthHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def gigachat(url: str, **settings: Any) -> GigaChat:
    return GigaChat(verify_ssl_certs=False, base_url=url, auth_url=f"{url}/api/v2/oauth", timeout=5, **settings)


def leaks(secret: str, *texts: str) -> list[str]:
    return [text[max(0, text.find(secret) - 60):text.find(secret) + 60] for text in texts if secret in text]


def run_and_collect(agent: ReactAgent, journal: Path, caplog: pytest.LogCaptureFixture) -> tuple[Any, list[str]]:
    caplog.set_level(logging.DEBUG)
    result = agent.run("say hi")
    logs = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    return result, [result.model_dump_json(), result.error or "", journal.read_text(encoding="utf-8"), logs,
                    caplog.text]


def test_connection_failure_leaks_no_credential(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """GigaChat failing to connect (closed loopback port): the credential is in no result, journal or log."""
    journal = tmp_path / "run.jsonl"
    llm = gigachat(f"http://127.0.0.1:{closed_port()}", credentials=SECRET)
    result, texts = run_and_collect(ReactAgent(llm, [echo], retry=FAST, journal=journal), journal, caplog)
    assert result.status == "error" and "ConnectError" in (result.error or "")
    assert leaks(SECRET, *texts) == []


def test_credential_echoed_in_an_error_is_masked(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                 echo_server: str) -> None:
    """A 401 whose body echoes the credential: the error text shows *** instead, the journal and logs too."""
    journal = tmp_path / "run.jsonl"
    llm = gigachat(echo_server, credentials=SECRET)
    result, texts = run_and_collect(ReactAgent(llm, [echo], retry=FAST, journal=journal), journal, caplog)
    assert result.status == "error" and "AuthenticationError" in (result.error or "")
    assert "invalid credentials: Basic ***" in (result.error or "")
    assert leaks(SECRET, *texts) == []


def test_credential_from_the_environment_is_masked(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                   echo_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A credential given as GIGACHAT_CREDENTIALS (the model's lc_secrets) is masked as well."""
    monkeypatch.setenv("GIGACHAT_CREDENTIALS", SECRET)
    journal = tmp_path / "run.jsonl"
    result, texts = run_and_collect(ReactAgent(gigachat(echo_server), [echo], retry=None, journal=journal),
                                    journal, caplog)
    assert result.status == "error" and "***" in (result.error or "")
    assert leaks(SECRET, *texts) == []


class KeyedModel(ScriptedChatModel):
    """A scripted model with an API key, whose backend puts the key into its error message."""

    api_key: SecretStr = SecretStr("sk-FAKE-API-KEY-67890")

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if not self.responses:
            raise PermissionError(f"key {self.api_key.get_secret_value()} revoked")
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_secret_settings_of_any_model_are_masked(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Any model's secret fields (api_key as SecretStr here) are masked in error text and journal."""
    journal = tmp_path / "run.jsonl"
    result, texts = run_and_collect(ReactAgent(KeyedModel([]), [echo], retry=None, journal=journal),
                                    journal, caplog)
    assert result.error == "model call failed: PermissionError: key *** revoked"
    assert leaks("sk-FAKE-API-KEY-67890", *texts) == []


def test_run_error_message_is_masked() -> None:
    """A bug whose exception text carries the model's secret raises a RunError with the secret masked."""

    class Buggy(ReflectionAgent):
        def needs_reflection(self, state: Any) -> bool:
            raise RuntimeError(f"debug dump: {self.llm.api_key.get_secret_value()}")  # type: ignore[attr-defined]

    llm = KeyedModel([json.dumps({"action": "echo", "action_input": {"text": "a"}})])
    with pytest.raises(RunError) as info:
        Buggy(llm, [echo]).run("task")
    assert "sk-FAKE-API-KEY-67890" not in str(info.value) and "***" in str(info.value)


class PropertyKeyModel(ScriptedChatModel):
    """The key behind a property."""

    @property
    def api_key(self) -> str:
        return "sk-PROPERTY-KEY-24680"


class PrivateKeyModel(ScriptedChatModel):
    """The key in a private attribute that a property named ``token`` reads."""

    _token: str = PrivateAttr(default="sk-PRIVATE-KEY-13579")

    @property
    def token(self) -> str:
        return self._token


class ExtraKeyModel(ScriptedChatModel):
    """The key as an extra field the class does not declare."""

    model_config = ConfigDict(extra="allow")


class LookupKeyModel(ScriptedChatModel):
    """The key answered by the class's own ``__getattr__``."""

    def __getattr__(self, name: str) -> Any:
        if name == "secret_key":
            return "sk-GETATTR-KEY-11223"
        return super().__getattr__(name)


def leaking_tool(key: str) -> Any:
    @tool
    def show_settings() -> str:
        """Show the settings."""
        return f"settings: key={key}"

    return show_settings


@pytest.mark.parametrize(("make", "key"), [
    (lambda replies: PropertyKeyModel(replies), "sk-PROPERTY-KEY-24680"),
    (lambda replies: PrivateKeyModel(replies), "sk-PRIVATE-KEY-13579"),
    (lambda replies: ExtraKeyModel(replies, api_key="sk-EXTRA-KEY-97531"), "sk-EXTRA-KEY-97531"),
    (lambda replies: LookupKeyModel(replies), "sk-GETATTR-KEY-11223"),
], ids=["property", "private", "extra", "getattr"])
def test_a_key_however_the_model_holds_it_is_masked_in_tool_output(tmp_path: Path, make: Any, key: str) -> None:
    """A tool that prints the model's key shows the model ``***``, and the journal keeps no key, whether the
    key is a property, a private attribute, an extra field or answered by the class's ``__getattr__``."""
    replies = [json.dumps({"action": "show_settings", "action_input": {}}),
               json.dumps({"action": "FINISH", "action_input": "done"})]
    llm = make(replies)
    journal = tmp_path / "run.jsonl"
    result = ReactAgent(llm, [leaking_tool(key)], journal=journal).run("show the settings")
    assert result.status == "finished"
    assert result.steps[0].observation == "settings: key=***"
    assert key not in journal.read_text(encoding="utf-8")


@pytest.mark.parametrize("wrap", [
    lambda llm: llm.bind(stop=["\n\n\n"]),
    lambda llm: llm.with_retry(stop_after_attempt=1),
    lambda llm: ScriptedChatModel([]).with_fallbacks([llm]),
    lambda llm: llm.bind(stop=["\n\n\n"]).with_config(run_name="wrapped"),
    lambda llm: llm | StrOutputParser(),
    lambda llm: ScriptedChatModel([]).configurable_alternatives(ConfigurableField(id="model"), default_key="plain",
                                                                keyed=llm),
    lambda llm: llm.configurable_fields(usage=ConfigurableField(id="usage")),
], ids=["bind", "with_retry", "fallback", "bind-with_config", "sequence", "alternatives", "configurable_fields"])
def test_the_key_of_a_wrapped_model_is_masked_in_tool_output(tmp_path: Path, wrap: Any) -> None:
    """The key of a model under ``bind``, ``with_retry``, ``with_config``, ``with_fallbacks``, in a sequence
    (``model | parser``) or among configurable alternatives or fields is masked in what a tool shows the model and
    in the journal, as the key of the model itself is."""
    key = "sk-WRAPPED-KEY-86420"
    replies = [json.dumps({"action": "show_settings", "action_input": {}}),
               json.dumps({"action": "FINISH", "action_input": "done"})]
    journal = tmp_path / "run.jsonl"
    llm = wrap(ExtraKeyModel(replies, api_key=key))
    config = {"configurable": {"model": "keyed"}}
    result = ReactAgent(llm, [leaking_tool(key)], journal=journal).run("show the settings", config=config)
    assert result.status == "finished"
    assert result.steps[0].observation == "settings: key=***"
    assert key not in journal.read_text(encoding="utf-8")


@pytest.mark.parametrize("model", [
    ScriptedChatModel([]), PropertyKeyModel([]), PrivateKeyModel([]), ExtraKeyModel([], api_key="sk-EXTRA-KEY-97531"),
    LookupKeyModel([]), ScriptedChatModel([]).bind(stop=["x"]),
], ids=["plain", "property", "private", "extra", "getattr", "bound"])
def test_held_settings_leaves_out_only_settings_that_are_none(model: Any) -> None:
    """``held_settings`` keeps, in order, every name whose ``setting`` is not ``None``."""
    from react_agent.models._setup import held_settings, setting

    names = ("api_key", "token", "secret_key", "bound", "runnable", "fallbacks", "lc_secrets", "responses", "nothing")
    held = held_settings(model, names)
    assert list(held) == [n for n in names if n in held]
    assert [n for n in names if setting(model, n) is not None and n not in held] == []


def test_a_failed_model_call_is_logged_by_its_type_not_its_text(caplog: pytest.LogCaptureFixture) -> None:
    """What a server echoes in an error (a session token nobody declared a secret) stays out of the logs; the
    log names the exception's type, and the run's error keeps the text for the caller."""
    caplog.set_level(logging.DEBUG)
    text = "403 for token eyJhbGciOiJIUzI1NiJ9.session-token-value"
    result = ReactAgent(ScriptedChatModel([ValueError(text)]), [], retry=None).run("t")
    assert result.status == "error" and "session-token-value" in (result.error or "")
    assert "session-token-value" not in caplog.text
    assert "model call failed: ValueError" in caplog.text
