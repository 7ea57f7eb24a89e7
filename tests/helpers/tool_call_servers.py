"""Loopback servers that answer with native tool calls, for the real ``ChatOpenAI`` and ``GigaChat`` clients.

``OpenAIToolServer`` speaks ``POST /v1/chat/completions`` (OpenAI's chat completions with ``tool_calls``);
``GigaChatToolServer`` speaks GigaChat's REST API (``/oauth`` hands out a token, ``/api/v1/chat/completions``
answers with one ``function_call`` per message and a ``functions_state_id``). Both answer from a script: each
item is a list of ``(tool, arguments)`` calls or a final text, or a function of the request body returning
one. Every request body is kept in ``requests``.

``NativeScriptedModel`` is the in-process stand-in: the scripted chat model with ``bind_tools``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from react_agent.testing import ScriptedChatModel

Reply = str | list[tuple[str, dict[str, Any]]]
Script = Sequence[Reply | Callable[[dict[str, Any]], Reply]]


class NativeScriptedModel(ScriptedChatModel):
    """``ScriptedChatModel`` that binds tools (its replies are ``AIMessage`` s with ``tool_calls``)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=tools, **kwargs)


class _Server:
    """A scripted JSON server on 127.0.0.1 (a thread), answering POSTs in order."""

    def __init__(self, script: Script) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, body = owner.answer(self.path, raw)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            index = len(self.requests)
            self.requests.append(body)
        if index >= len(self.script):
            return "script exhausted"
        item = self.script[index]
        return item(body) if callable(item) else item

    def answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError

    @contextmanager
    def running(self) -> Iterator[Any]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()


class OpenAIToolServer(_Server):
    """OpenAI's chat completions: a reply's calls all in one message (parallel tool calls)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        body = json.loads(raw)
        reply = self.next_reply(body)
        n = len(self.requests)
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply}
            reason = "stop"
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{n}_{k}", "type": "function",
                 "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                for k, (name, args) in enumerate(reply, 1)]}
            reason = "tool_calls"
        words = sum(len(str(m.get("content") or "").split()) for m in body.get("messages", []))
        return 200, {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                     "model": body.get("model", "m"), "choices": [{"index": 0, "message": message,
                                                                    "finish_reason": reason}],
                     "usage": {"prompt_tokens": words, "completion_tokens": 5, "total_tokens": words + 5}}


class GigaChatToolServer(_Server):
    """GigaChat's REST API: one ``function_call`` per message, each reply with a new ``functions_state_id``."""

    token = "giga-loopback-token-0123456789"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    @property
    def auth_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/oauth"

    def answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        if path.endswith("/oauth"):
            return 200, {"access_token": self.token, "expires_at": int(time.time() * 1000) + 3_600_000}
        body = json.loads(raw)
        reply = self.next_reply(body)
        n = len(self.requests)
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply}
            reason = "stop"
        else:
            (name, args), = reply  # the API makes one call per message
            message = {"role": "assistant", "content": "", "function_call": {"name": name, "arguments": args},
                       "functions_state_id": f"state-{n}"}
            reason = "function_call"
        return 200, {"choices": [{"message": message, "index": 0, "finish_reason": reason}],
                     "created": int(time.time()), "model": "GigaChat", "object": "chat.completion",
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
