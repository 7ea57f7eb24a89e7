"""The HTTP API and the page: a FastAPI app over a :class:`RunRegistry` (``create_app``), and ``serve``,
which runs it with uvicorn after checking that a reachable address has a token."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from react_agent.errors import install_hint

try:
    import fastapi
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import Response, StreamingResponse
except ImportError as exc:  # the optional extra
    raise ImportError(f"serving needs FastAPI and uvicorn: {install_hint('serve', 'fastapi uvicorn')}") from exc

from react_agent import BaseAgent, ConfigError
from react_agent.runtime import secret_values
from react_agent.serve._runs import Masker, RunRecord, RunRegistry

__all__ = ["ApprovalMode", "check_binding", "create_app", "serve"]

logger = logging.getLogger("react_agent")

ApprovalMode = Literal["page", "agent"]
STATIC = ("app.js", "app.css", "labels.json")
_MEDIA = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
          ".json": "application/json; charset=utf-8", ".html": "text/html; charset=utf-8"}
KEEPALIVE_S = 15.0


# -------------------------------------------------------------------------------------------- request bodies
class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


MAX_TASK_CHARS = 100_000
"""The longest task a request may give (``POST /runs``, the last user message of a chat completion)."""


class RunRequest(_Body):
    """``POST /runs``: the task, the conversation thread it continues, and per-run session values."""

    task: str = Field(min_length=1, max_length=MAX_TASK_CHARS)
    thread_id: str | None = Field(None, min_length=1, max_length=200)
    session: dict[str, str | int | float | bool] | None = None


class ApprovalAnswer(_Body):
    """``POST /runs/{id}/approval``: the person's decision (``approval_id``: the pending one, if given)."""

    approved: bool
    approval_id: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    role: str
    content: str | list[dict[str, Any]] | None = None

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(str(part.get("text", "")) for part in self.content if part.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


# -------------------------------------------------------------------------------------------- the app
def _agent_of(agent_or_factory: BaseAgent | Callable[[], BaseAgent]) -> BaseAgent:
    agent = agent_or_factory if isinstance(agent_or_factory, BaseAgent) else None
    if agent is None and callable(agent_or_factory):
        agent = agent_or_factory()
    if not isinstance(agent, BaseAgent):
        raise ConfigError(f"serve needs an agent (ReactAgent, ...) or a function returning one, got "
                          f"{type(agent if agent is not None else agent_or_factory).__name__}")
    return agent


def _positive(name: str, value: Any, kind: type = int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int) or not value > 0:
        raise ConfigError(f"{name} must be a positive {'number' if kind is float else 'integer'}, got {value!r}")


def create_app(agent_or_factory: BaseAgent | Callable[[], BaseAgent], *,
               journal_dir: str | os.PathLike[str] = "react-agent-runs", max_concurrency: int = 4,
               max_queue: int = 1000, token: str | None = None, approval: ApprovalMode = "page",
               approval_timeout: float = 300.0, lang: Literal["en", "ru"] = "en", chat_api: bool = True) -> Any:
    """A FastAPI app serving the agent: the run API, the page at ``/`` and (``chat_api``) an OpenAI-compatible
    ``POST /v1/chat/completions``.

    ``agent_or_factory``: an agent, or a function returning one (called once, here). Every run is journaled
    in ``journal_dir`` (created), so the app started again after a crash resumes the runs left unfinished,
    once each. ``max_concurrency`` runs execute at a time; up to ``max_queue`` more wait (then ``503``).
    ``token``: the bearer token every API request must carry (``None``: no auth; the page asks for it).
    ``approval``: ``"page"`` — tools marked ``requires_approval`` wait for a person's answer
    (``POST /runs/{id}/approval``, buttons on the page) for up to ``approval_timeout`` seconds, then count as
    refused; ``"agent"`` — the agent's own ``approve`` decides. ``lang``: the page's default language.
    """
    agent = _agent_of(agent_or_factory)
    _positive("max_concurrency", max_concurrency)
    _positive("max_queue", max_queue)
    _positive("approval_timeout", approval_timeout, float)
    if approval not in ("page", "agent"):
        raise ConfigError(f"approval must be 'page' or 'agent', got {approval!r}")
    if lang not in ("en", "ru"):
        raise ConfigError(f"lang must be 'en' or 'ru', got {lang!r}")
    if token is not None and (not isinstance(token, str) or len(token) < 8):
        raise ConfigError("token must be a string of at least 8 characters (or None for no auth)")
    if not isinstance(journal_dir, (str, os.PathLike)) or not os.fspath(journal_dir):
        raise ConfigError(f"journal_dir must be the path of a folder, got {journal_dir!r}")
    folder = Path(journal_dir).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"journal_dir {str(folder)!r} is a file; give a folder")
    masker = Masker([*(t for t in [token] if t), *secret_values(agent.llm)])
    registry = RunRegistry(agent, folder, max_concurrency=max_concurrency, max_queue=max_queue,
                           approval_timeout=float(approval_timeout), masker=masker)
    if approval == "page":  # the same agent, asking a person (with_options builds a sibling of its class)
        asking: Any = agent.with_options(approve=registry.approve)
        registry.agent = asking

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        registry.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            registry.stop()

    app = fastapi.FastAPI(title="react-agent", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.registry = registry

    def reply(data: Any, status: int = 200) -> Any:
        return Response(masker.json(data), status_code=status, media_type="application/json")

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> Any:
        """A 422 that names what is wrong without echoing the request back (it may carry a secret)."""
        return reply({"detail": [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
                                 for e in exc.errors()]}, 422)

    def authorize(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise fastapi.HTTPException(401, "a bearer token is required (Authorization: Bearer ...)",
                                        headers={"WWW-Authenticate": "Bearer"})

    auth = [fastapi.Depends(authorize)]

    def find(run_id: str) -> RunRecord:
        record = registry.runs.get(run_id)
        if record is None:
            raise fastapi.HTTPException(404, "no run with this id")
        return record

    # ------------------------------------------------------------ the page
    @app.get("/", include_in_schema=False)
    def page() -> Any:
        html = _static("index.html").replace("__LANG__", lang).replace("__AUTH__", "true" if token else "false")
        return Response(html, media_type=_MEDIA[".html"], headers={"Cache-Control": "no-store"})

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Any:
        if name not in STATIC:
            raise fastapi.HTTPException(404, "not found")
        return Response(_static(name), media_type=_MEDIA[Path(name).suffix])

    @app.get("/healthz")
    def health() -> Any:
        return reply({"ok": True})

    # ------------------------------------------------------------ the run API
    @app.get("/info", dependencies=auth)
    def info() -> Any:
        return reply({"agent": str(agent.name), "tools": sorted(agent.tools), "approval": approval,
                      "approval_timeout_s": approval_timeout, "max_concurrency": max_concurrency})

    @app.post("/runs", status_code=202, dependencies=auth)
    async def create_run(body: RunRequest, wait: bool = False) -> Any:
        try:
            record = await asyncio.to_thread(registry.submit, body.task, thread_id=body.thread_id,
                                             session=body.session)
        except OverflowError as exc:
            raise fastapi.HTTPException(503, f"the queue is full ({exc}); try again later") from None
        if wait:
            await _until_done(record)
            return reply(record.detail(), 200)
        return reply(record.summary(), 202)

    @app.get("/runs", dependencies=auth)
    def list_runs(limit: int = fastapi.Query(50, ge=1, le=1000), thread_id: str | None = None) -> Any:
        runs = [r for r in registry.recent(None) if thread_id is None or r.thread_id == thread_id]
        return reply({"runs": [r.summary() for r in runs[:limit]]})

    @app.get("/runs/{run_id}", dependencies=auth)
    def get_run(run_id: str) -> Any:
        return reply(find(run_id).detail())

    @app.get("/runs/{run_id}/events", dependencies=auth)
    async def events(request: Request, run_id: str) -> Any:
        record = find(run_id)
        start = _after(request.headers.get("last-event-id"))
        return StreamingResponse(_sse(record, start, masker), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @app.post("/runs/{run_id}/approval", dependencies=auth)
    def answer(run_id: str, body: ApprovalAnswer) -> Any:
        record = find(run_id)
        try:
            decided = registry.answer(record, body.approved, body.approval_id)
        except LookupError as exc:
            raise fastapi.HTTPException(409, str(exc)) from None
        return reply({"id": decided.id, "tool": decided.tool, "approved": decided.approved})

    # ------------------------------------------------------------ the OpenAI-compatible facade
    if chat_api:
        @app.get("/v1/models", dependencies=auth)
        def models() -> Any:
            return reply({"object": "list", "data": [{"id": str(agent.name), "object": "model", "created": 0,
                                                      "owned_by": "react-agent"}]})

        @app.post("/v1/chat/completions", dependencies=auth)
        async def chat(body: ChatRequest) -> Any:
            turns = _chat_turns(body.messages)
            if turns is None:
                raise fastapi.HTTPException(400, "the messages hold no user message: the run's task is the last one")
            task, history = turns
            if not task.strip():
                raise fastapi.HTTPException(400, "the last user message is empty")
            if len(task) > MAX_TASK_CHARS:
                raise fastapi.HTTPException(400, f"the last user message is longer than {MAX_TASK_CHARS:,} characters")
            try:
                record = await asyncio.to_thread(registry.submit, task, thread_id=None, session=None,
                                                 history=history)
            except OverflowError as exc:
                raise fastapi.HTTPException(503, f"the queue is full ({exc}); try again later") from None
            model = body.model or str(agent.name)
            if body.stream:
                return StreamingResponse(_chat_chunks(record, model, masker), media_type="text/event-stream")
            await _until_done(record)
            return reply(_completion(record, model))

    return app


def _static(name: str) -> str:
    return (resources.files("react_agent.serve") / "static" / name).read_text(encoding="utf-8")


def _after(header: str | None) -> int:
    """The first event index to send: after ``Last-Event-ID`` (a reconnecting client), else 0 (also for an id that
    is no event's: not a number, or negative)."""
    try:
        return max(int(header) + 1, 0) if header is not None else 0
    except ValueError:
        return 0


async def _wait_change(record: RunRecord, seen: int, timeout: float) -> None:
    """Until the run has more than ``seen`` events (or ``timeout`` passes)."""
    waiter = asyncio.Event()
    record.waiters.add(waiter)
    try:
        if len(record.events_from(seen)) == 0:
            await asyncio.wait_for(waiter.wait(), timeout)
    except asyncio.TimeoutError:
        pass
    finally:
        record.waiters.discard(waiter)


async def _until_done(record: RunRecord) -> None:
    seen = 0
    while True:
        seen = len(record.events)
        if record.done and record.result is not None:
            return
        await _wait_change(record, seen, KEEPALIVE_S)


async def _sse(record: RunRecord, start: int, masker: Masker) -> AsyncIterator[bytes]:
    """Server-Sent Events: every event of the run from ``start``, live, until its result."""
    index = start
    while True:
        for event in record.events_from(index):
            index = event["id"] + 1
            yield f"id: {event['id']}\nevent: {event['event']}\ndata: {masker.json(event['data'])}\n\n".encode()
            if event["event"] == "result":
                return
        if record.done and record.result is not None and not record.events_from(index):
            return
        before = index
        await _wait_change(record, index, KEEPALIVE_S)
        if not record.events_from(before):
            yield b": keep-alive\n\n"


# -------------------------------------------------------------------------------------------- chat facade
def _chat_turns(messages: list[ChatMessage]) -> tuple[str, list[tuple[str, str]]] | None:
    """The task (the last user message) and the turns before it; ``None`` without a user message."""
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        return None
    roles = {"user": "user", "assistant": "assistant"}
    history = [(roles[m.role], m.text) for m in messages[:last] if m.role in roles and m.text.strip()]
    return messages[last].text, history


def _finish_reason(status: str) -> str:
    return "stop" if status == "finished" else "length"


def _completion(record: RunRecord, model: str) -> dict[str, Any]:
    result = record.result or {}
    usage = result.get("usage") or {}
    content = result.get("output") or result.get("error") or ""
    return {"id": f"chatcmpl-{record.id}", "object": "chat.completion", "created": int(record.created_at),
            "model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                         "finish_reason": _finish_reason(str(result.get("status")))}],
            "usage": {"prompt_tokens": usage.get("input_tokens", 0), "completion_tokens": usage.get("output_tokens", 0),
                      "total_tokens": usage.get("total_tokens", 0)}}


async def _chat_chunks(record: RunRecord, model: str, masker: Masker) -> AsyncIterator[bytes]:
    base = {"id": f"chatcmpl-{record.id}", "object": "chat.completion.chunk", "created": int(record.created_at),
            "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {masker.json(data)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    await _until_done(record)
    completion = _completion(record, model)
    yield chunk({"content": completion["choices"][0]["message"]["content"]})
    yield chunk({}, completion["choices"][0]["finish_reason"])
    yield b"data: [DONE]\n\n"


# -------------------------------------------------------------------------------------------- serve
def check_binding(host: str, token: str | None) -> None:
    """Refuse to listen on an address other machines can reach without a token."""
    if token:
        return
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(f"refusing to serve on {host!r} without a token: anyone who reaches it could run the "
                          f"agent's tools. Set a token (serve(token=...), or --token-env VAR naming an environment "
                          f"variable that holds it) or bind 127.0.0.1")


def serve(agent_or_factory: BaseAgent | Callable[[], BaseAgent], *, host: str = "127.0.0.1", port: int = 8000,
          journal_dir: str | os.PathLike[str] = "react-agent-runs", max_concurrency: int = 4, max_queue: int = 1000,
          token: str | None = None, approval: ApprovalMode = "page", approval_timeout: float = 300.0,
          lang: Literal["en", "ru"] = "en", chat_api: bool = True, log_level: str = "warning") -> None:
    """Serve the agent over HTTP with uvicorn until interrupted (see :func:`create_app` for the options).

    A ``host`` other than loopback needs a ``token``: :class:`ConfigError` otherwise.
    """
    check_binding(host, token)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"port must be an integer from 0 to 65535, got {port!r}")
    app = create_app(agent_or_factory, journal_dir=journal_dir, max_concurrency=max_concurrency,
                     max_queue=max_queue, token=token, approval=approval, approval_timeout=approval_timeout,
                     lang=lang, chat_api=chat_api)
    try:
        import uvicorn
    except ImportError:
        raise ImportError(f"serving needs FastAPI and uvicorn: {install_hint('serve', 'fastapi uvicorn')}") from None
    started = time.monotonic()
    logger.info("serving %s on http://%s:%d", app.state.registry.agent.name, host, port)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    logger.info("server stopped after %.0f s", time.monotonic() - started)

