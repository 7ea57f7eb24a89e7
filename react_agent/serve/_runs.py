"""The server's runs: each one journaled in the journal folder, run by a fixed pool of worker threads fed
from a queue, its events kept for every listener, and the approvals it waits for answered by a person.

A run executes the agent's sync ``stream`` in a worker thread, so an approval can block its own thread
until someone answers (or the approval timeout passes) without blocking the server or the other runs
(each run's concurrent calls ask one at a time). An agent whose own ``approve`` is an ``async def``
(``approval="agent"``) runs its ``astream`` on an event loop of the worker thread instead. At startup the
folder is read back: finished runs are listed again, unfinished ones are resumed from their journal,
each once. An exclusive lock on the folder keeps a second server from resuming the same runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from react_agent import AgentResult, AgentStep, BaseAgent, ConfigError, JournalError, read_journal
from react_agent.runtime import approve_is_async

try:
    import fcntl
except ImportError:  # not POSIX: no lock against a second server on the same folder
    fcntl = None  # type: ignore[assignment]

__all__ = ["Approval", "Masker", "RunRecord", "RunRegistry", "step_event"]

logger = logging.getLogger("react_agent")

ACTIVE = ("queued", "running", "waiting_approval")
LOCK_NAME = ".serve.lock"
T = TypeVar("T")

_SERVED: contextvars.ContextVar[RunRecord | None] = contextvars.ContextVar("react_agent_served_run", default=None)
"""The server run in progress in this context: set by its worker thread, and seen by the threads its
concurrent tool calls run in (they run in a copy of the worker's context)."""


class Masker:
    """Replaces every secret (the server's token, the model's credentials) by ``***`` in outgoing text."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, "***")
        return value

    def json(self, data: Any) -> str:
        return self.text(json.dumps(data, ensure_ascii=False, default=str))


def step_event(index: int, step: AgentStep, *, replayed: bool = False) -> dict[str, Any]:
    """The public data of one step (what the page and the SSE stream show)."""
    usage = step.usage
    return {"index": index, "thought": step.thought, "action": step.action, "action_input": step.action_input,
            "observation": step.observation, "is_error": step.is_error, "reflection": step.reflection,
            "duration_s": round(step.duration_s, 3), "replayed": replayed,
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                      "total_tokens": usage.total_tokens}}


def result_event(result: AgentResult, seconds: float) -> dict[str, Any]:
    usage = result.usage
    return {"status": result.status, "output": result.output, "error": result.error, "steps": len(result.steps),
            "llm_calls": result.llm_calls, "seconds": round(seconds, 3),
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                      "total_tokens": usage.total_tokens}}


@dataclass
class Approval:
    """A tool call waiting for a person: answered through :meth:`RunRegistry.answer` or timed out."""

    id: str
    tool: str
    input: Any
    asked_at: float
    timeout: float
    decided: threading.Event = field(default_factory=threading.Event)
    approved: bool = False

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "tool": self.tool, "input": self.input, "asked_at": self.asked_at,
                "timeout_s": self.timeout}


@dataclass
class RunRecord:
    """One run of the server: what was asked, its state, and every event so far (in order)."""

    id: str
    task: str
    thread_id: str | None
    created_at: float
    session: dict[str, Any] | None = None
    history: list[tuple[str, str]] | None = None
    status: str = "queued"
    resume: bool = False
    replayed: int = 0
    started_at: float | None = None
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    pending: Approval | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiters: set[asyncio.Event] = field(default_factory=set)

    @property
    def done(self) -> bool:
        return self.status not in ACTIVE

    def summary(self) -> dict[str, Any]:
        result = self.result or {}
        return {"id": self.id, "task": self.task, "thread_id": self.thread_id, "status": self.status,
                "created_at": self.created_at, "started_at": self.started_at, "finished_at": self.finished_at,
                "resumed": self.resume, "step_count": len(self.steps),
                "total_tokens": (result.get("usage") or {}).get("total_tokens", 0), "output": result.get("output")}

    def detail(self) -> dict[str, Any]:
        pending = self.pending
        return {**self.summary(), "steps": list(self.steps), "result": self.result,
                "pending_approval": pending.public() if pending is not None else None}

    def events_from(self, index: int) -> list[dict[str, Any]]:
        with self.lock:
            return self.events[index:]


class RunRegistry:
    """Every run of one server, the queue in front of its ``max_concurrency`` workers, and the journal folder.

    ``agent`` is the agent every run uses (already given the person-asking ``approve`` when approvals go
    through the page); ``approval_timeout``: seconds a pending approval waits before it counts as refused.
    """

    def __init__(self, agent: BaseAgent, journal_dir: Path, *, max_concurrency: int, max_queue: int,
                 approval_timeout: float, masker: Masker) -> None:
        self.agent = agent
        self.journal_dir = journal_dir
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self.approval_timeout = approval_timeout
        self.masker = masker
        self.runs: dict[str, RunRecord] = {}
        self._queue: queue.Queue[RunRecord | None] = queue.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock_fd: int | None = None
        self._workers: list[threading.Thread] = []
        self._guard = threading.Lock()

    # ---------------------------------------------------------------- lifecycle
    def start(self, loop: asyncio.AbstractEventLoop) -> list[str]:
        """Lock the folder, read its runs back, start the workers; returns the ids of the runs resumed."""
        self._loop = loop
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        resumed = []
        for record in _stored_runs(self.journal_dir):
            self.runs[record.id] = record
            if record.status == "queued":  # unfinished (resumed) or never started
                resumed.append(record.id)
                self._queue.put(record)
        for number in range(self.max_concurrency):
            worker = threading.Thread(target=self._work, name=f"react-agent-serve-{number}", daemon=True)
            worker.start()
            self._workers.append(worker)
        if resumed:
            logger.info("serve: resuming %d unfinished runs from %s", len(resumed), self.journal_dir)
        return resumed

    def stop(self) -> None:
        """Stop taking runs (workers in a run finish it or are abandoned with the process: their journal
        lets the next start resume them) and release the folder."""
        for _ in self._workers:
            self._queue.put(None)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _take_lock(self) -> None:
        fd = os.open(self.journal_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ConfigError(f"another server uses the journal folder {str(self.journal_dir)!r}; stop it or "
                                  f"give this one another journal_dir (--journal-dir)") from None
        self._lock_fd = fd

    # ---------------------------------------------------------------- runs
    def submit(self, task: str, *, thread_id: str | None, session: dict[str, Any] | None,
               history: list[tuple[str, str]] | None = None) -> RunRecord:
        """Record a new run on disk (fsync-ed: a run the client was told about survives a crash) and queue
        it; :class:`OverflowError` when ``max_queue`` runs already wait."""
        with self._guard:
            waiting = sum(1 for r in self.runs.values() if r.status == "queued")
            if waiting >= self.max_queue:
                raise OverflowError(f"{waiting} runs are waiting already")
            record = RunRecord(id=str(uuid.uuid4()), task=task, thread_id=thread_id, created_at=time.time(),
                               session=session, history=history)
            self.runs[record.id] = record
        _write_meta(self.journal_dir, record)
        self._emit(record, "queued", {"id": record.id, "task": task, "thread_id": thread_id})
        self._queue.put(record)
        return record

    def all(self) -> list[RunRecord]:
        """Every run, oldest first (a copy: runs are added from other threads)."""
        with self._guard:
            runs = list(self.runs.values())
        return sorted(runs, key=lambda r: r.created_at)

    def recent(self, limit: int | None) -> list[RunRecord]:
        """The most recent runs first (``limit`` of them, or all)."""
        return self.all()[::-1][:limit]

    def history(self, thread_id: str | None, before: RunRecord) -> list[tuple[str, str]]:
        """The finished turns of a thread before ``before``: (role, text) pairs for ``chat_history``."""
        if thread_id is None:
            return []
        turns: list[tuple[str, str]] = []
        for record in self.all():
            if record is before or record.created_at > before.created_at:
                continue
            if record.thread_id == thread_id and record.status == "finished" and record.result:
                turns += [("user", record.task), ("assistant", str(record.result.get("output", "")))]
        return turns

    def answer(self, record: RunRecord, approved: bool, approval_id: str | None) -> Approval:
        """Decide the run's pending approval; :class:`LookupError` when nothing (or not that one) waits."""
        with record.lock:
            pending = record.pending
            if pending is None or (approval_id is not None and approval_id != pending.id):
                raise LookupError("no approval of that id is waiting" if pending else "no approval is waiting")
            if pending.decided.is_set():
                raise LookupError("this approval was decided already")
            pending.approved = approved
            pending.decided.set()
        return pending

    def approve(self, tool: str, action_input: Any) -> bool:
        """The agent's ``approve``: wait in the run's worker thread until a person answers or time runs out."""
        record = _SERVED.get()
        if record is None or self.runs.get(record.id) is not record:  # outside this server's runs: refuse
            return False
        pending = Approval(id=str(uuid.uuid4()), tool=tool, input=action_input, asked_at=time.time(),
                           timeout=self.approval_timeout)
        with record.lock:
            record.pending = pending
        self._set_status(record, "waiting_approval")
        self._emit(record, "approval", pending.public())
        answered = pending.decided.wait(self.approval_timeout)
        with record.lock:
            approved = pending.approved if answered else False
            record.pending = None
        self._set_status(record, "running")
        self._emit(record, "approval_decided", {"id": pending.id, "tool": tool, "approved": approved,
                                                "by": "person" if answered else "timeout"})
        return approved

    # ---------------------------------------------------------------- the workers
    def _work(self) -> None:
        while (record := self._queue.get()) is not None:
            token = _SERVED.set(record)
            try:
                self._execute(record)
            finally:
                _SERVED.reset(token)

    def _execute(self, record: RunRecord) -> None:
        started = time.monotonic()
        record.started_at = time.time()
        self._set_status(record, "running")
        self._emit(record, "started", {"id": record.id, "resumed": record.resume})
        replayed = record.replayed
        path = self.journal_dir / f"{record.id}.jsonl"
        try:
            result = None
            for item in self._stream(record, path):
                if isinstance(item, AgentResult):
                    result = item
                    break
                number = len(record.steps) + 1
                data = step_event(number, item, replayed=number <= replayed)
                with record.lock:
                    record.steps.append(data)
                self._emit(record, "step", data)
            if result is None:
                raise RuntimeError("the run's stream ended without a result")
            outcome = result_event(result, time.monotonic() - started)
        except Exception as exc:  # a journal problem, a developer mistake in a tool factory...
            logger.warning("serve: run %s failed: %s: %s", record.id, type(exc).__name__, exc)
            outcome = _failed(f"{type(exc).__name__}: {exc}", steps=len(record.steps),
                              seconds=round(time.monotonic() - started, 3))
        record.result = outcome
        record.session = None  # per-run values are not kept once the run is over
        record.finished_at = time.time()
        self._set_status(record, str(outcome["status"]))
        self._emit(record, "result", outcome)

    def _stream(self, record: RunRecord, path: Path) -> Iterator[AgentStep | AgentResult]:
        if approve_is_async(self.agent.config.approve):  # only the async driver awaits it
            return _on_own_loop(self._astream(record, path))
        if record.resume:
            return self.agent.resume_stream(path, run_id=record.id, session=record.session)
        history = record.history if record.history is not None else self.history(record.thread_id, record)
        return self.agent.stream(record.task, {"run_id": uuid.UUID(record.id)}, journal=path,
                                 session=record.session, chat_history=history or None)

    def _astream(self, record: RunRecord, path: Path) -> AsyncIterator[AgentStep | AgentResult]:
        if record.resume:
            return self.agent.aresume_stream(path, run_id=record.id, session=record.session)
        history = record.history if record.history is not None else self.history(record.thread_id, record)
        return self.agent.astream(record.task, {"run_id": uuid.UUID(record.id)}, journal=path,
                                  session=record.session, chat_history=history or None)

    # ---------------------------------------------------------------- events
    def _set_status(self, record: RunRecord, status: str) -> None:
        with record.lock:
            record.status = status

    def _emit(self, record: RunRecord, kind: str, data: dict[str, Any]) -> None:
        with record.lock:
            record.events.append({"event": kind, "id": len(record.events), "data": data})
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed (a shutdown): nobody listens
                loop.call_soon_threadsafe(_wake, record)


def _on_own_loop(items: AsyncIterator[T]) -> Iterator[T]:
    """The items of ``items``, each awaited on an event loop of the calling worker thread (closed at the end,
    or when the caller stops early)."""
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(_next(items))
            except StopAsyncIteration:
                return
    finally:
        try:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                loop.run_until_complete(aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


async def _next(items: AsyncIterator[T]) -> T:
    return await items.__anext__()


def _wake(record: RunRecord) -> None:
    for waiter in list(record.waiters):
        waiter.set()


# -------------------------------------------------------------------------------------------- the folder
def _write_meta(folder: Path, record: RunRecord) -> None:
    """``<id>.run.json``: what the journal does not keep as given (the task before the conversation was
    composed into it, the thread, when it was asked). Session values are never written."""
    meta = {"id": record.id, "task": record.task, "thread_id": record.thread_id, "created_at": record.created_at}
    path = folder / f"{record.id}.run.json"
    partial = path.with_suffix(".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, json.dumps(meta, ensure_ascii=False).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)


def _stored_runs(folder: Path) -> list[RunRecord]:
    """The runs of a journal folder, oldest first: finished ones with their steps and result, unfinished
    ones marked to be resumed (a run asked for but never started has no journal: it starts afresh)."""
    records = []
    for meta_path in sorted(folder.glob("*.run.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            record = RunRecord(id=str(meta["id"]), task=str(meta["task"]), thread_id=meta.get("thread_id"),
                               created_at=float(meta["created_at"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("serve: ignoring the unreadable run file %s: %s", meta_path, exc)
            continue
        _load_journal(folder / f"{record.id}.jsonl", record)
        records.append(record)
    return sorted(records, key=lambda r: r.created_at)


def _load_journal(path: Path, record: RunRecord) -> None:
    if not path.is_file():
        record.events.append({"event": "queued", "id": 0, "data": {"id": record.id, "task": record.task}})
        return  # queued but never started: it runs now
    try:
        entries = [e for e in read_journal(path) if e.get("run") == record.id]
    except JournalError as exc:
        record.status, record.result = "error", _failed(f"the journal cannot be read: {exc}")
        record.events.append({"event": "result", "id": len(record.events), "data": record.result})
        return
    if not any(e.get("type") == "run" for e in entries):
        return  # killed before its first record: it starts afresh
    steps = [e for e in entries if e.get("type") == "step"]
    ends = [e for e in entries if e.get("type") == "end"]
    if not ends:  # died mid-run: resumed, its journaled steps streamed again as replayed
        record.resume, record.replayed = True, len(steps)
        return
    for entry in steps:
        record.steps.append(step_event(int(entry.get("index", len(record.steps) + 1)), AgentStep.model_validate(
            {k: entry[k] for k in AgentStep.model_fields if k in entry})))
    for number, data in enumerate(record.steps):
        record.events.append({"event": "step", "id": number, "data": data})
    end = ends[-1]
    usage = end.get("usage") or {}
    total = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    record.result = {"status": end.get("status"), "output": end.get("output", ""), "error": end.get("error"),
                     "steps": end.get("steps", len(steps)), "llm_calls": end.get("llm_calls", 0), "seconds": None,
                     "usage": {**usage, "total_tokens": total}}
    record.status = str(end.get("status", "error"))
    record.finished_at = float(end.get("t", 0) or 0) or None
    record.events.append({"event": "result", "id": len(record.events), "data": record.result})


def _failed(message: str, *, steps: int = 0, seconds: float | None = None) -> dict[str, Any]:
    """The result of a run that failed outside the agent (its journal, the server), with the reason."""
    return {"status": "error", "output": "", "error": message, "steps": steps, "llm_calls": 0, "seconds": seconds,
            "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}}

