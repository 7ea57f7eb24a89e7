"""Durable runs: an append-only JSONL journal of every effect, replayed on resume.

The loop is a deterministic generator of effects (model call, tool call), so a run is fully described by
the answers its effects received (event sourcing). :class:`RunJournal` records each completed effect as
one JSON line, written, flushed and ``fsync``-ed before the loop goes on; ``BaseAgent.resume`` re-runs the
same loop and answers each effect from the journal while records remain, then continues live, appending
to the same file. So a completed model call is never made again and a completed tool call never runs
again; a tool call that started but did not finish (the process died inside the tool) runs again with the
*same* idempotency key, so a tool that deduplicates on the key performs its write exactly once.

Record types (every record carries ``type``, ``run`` — the run id — and ``t``, a wall-clock timestamp):

- ``run``: a new run — ``task``, ``agent``, ``tools``, format version ``v``.
- ``resume``: a later session continuing the run — ``replayable`` effects found.
- ``model``: a model reply — ``seq``, ``digest`` (sha256 of the prompt text), ``text``, ``usage``, ``seconds``.
- ``model_error``: a model call that failed beyond the retries (not replayed: a resume calls again).
- ``tool_start`` / ``approval`` / ``tool_end``: one tool call — ``seq``, ``step``, ``key`` (idempotency key),
  ``tool``, ``input``; the human decision ``approved``; the ``observation``, its ``kind`` and ``seconds``.
- ``step``: each completed step — ``task``, ``index``, ``digest``, the parsed action, observation,
  ``raw_output``, ``duration_s``, ``usage`` (for people and tools reading the journal; not replayed). An
  observation over :data:`SHARED_OBSERVATION` characters that its ``tool_end`` already holds is written
  once: the step has ``observation: null`` and ``observation_seq``, the ``seq`` of that ``tool_end``.
- ``end``: the outcome of a session — ``status``, ``output``, ``error``, ``llm_calls``, ``usage``.

Values of the model's secret settings (``credentials``, ``password``, ``access_token``, ``api_key``... and
whatever the model declares in ``lc_secrets``) are masked in error texts and in every field that is not
replayed; the replayed fields (the task, the model's reply text, the tool observations) are journaled
exactly, so a resume reproduces the run. Placeholder keys (``"none"``, ``"EMPTY"``, ``"sk-no-key-required"``,
anything under 8 characters) are not secrets. Session values are journaled as they are (the journal file is
created with mode 0600).
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import html
import re
import urllib.parse

try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock (see docs/guarantees.md)
    fcntl = None  # type: ignore[assignment]
import hashlib
import inspect
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, SecretBytes, SecretStr

from react_agent._types import AgentResult, AgentStep, Usage
from react_agent.errors import ConfigError, JournalError, JournalMismatchError
from react_agent.models import held_settings, setting, wrapped_models
from react_agent.tools import Outcome, acall_in_thread, short_repr

__all__ = [
    "IDEMPOTENCY_KEY_ARG",
    "JOURNAL_VERSION",
    "SECRET_FIELDS",
    "JournalError",
    "JournalMismatchError",
    "RunJournal",
    "ToolCallRecord",
    "accepts_idempotency_key",
    "adecide_approval",
    "approve_is_async",
    "canonical_json",
    "current_tool_call",
    "cut_torn_tail",
    "decide_approval",
    "idempotency_key",
    "journal_path_problem",
    "prompt_digest",
    "read_journal",
    "redact",
    "redact_session",
    "secret_values",
    "session_references",
    "sync_approve_problem",
]

logger = logging.getLogger("react_agent")

JOURNAL_VERSION = 1
IDEMPOTENCY_KEY_ARG = "idempotency_key"
"""The tool argument that receives the idempotency key (declare it with langchain's ``InjectedToolArg``)."""

SECRET_FIELDS = ("credentials", "password", "access_token", "api_key", "openai_api_key", "key_file_password",
                 "token", "auth_token", "bearer_token", "refresh_token", "client_secret", "secret_key", "secret")
"""Settings of a model whose values are masked (plus the model's own ``lc_secrets``)."""

SHARED_OBSERVATION = 1_000
"""Longer observations are journaled once (in ``tool_end``); the ``step`` record points to it."""
MASK = "***"
_MIN_SECRET = 4  # shortest session value given a reference
_MIN_KEY = 8  # shortest model setting treated as a secret
_PLACEHOLDER = re.compile(
    r"(?:sk-)?(?:none|null|empty|dummy|fake|test|placeholder|unused|changeme|local|x+|\*+|-+"
    r"|no[-_ ]?(?:api[-_ ]?)?key(?:[-_ ]?(?:required|needed))?|not[-_ ]?(?:needed|required|used|set)"
    r"|(?:api[-_ ]?)?key|secret|token|ollama|vllm|llama(?:[-_ ]?cpp)?|lm[-_ ]?studio)",
    re.IGNORECASE,
)
_REPLAYED = {"run": ("task",), "model": ("text",), "tool_end": ("observation",)}  # journaled exactly
_CURRENT_CALL: contextvars.ContextVar[ToolCallRecord | None] = contextvars.ContextVar(
    "react_agent_tool_call", default=None)
_MISSING = object()  # a field absent from a journal record


# ---------------------------------------------------------------------------------------------- digests
def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    """The prompt as one text: the message contents joined by blank lines."""
    return "\n\n".join(str(m.content) for m in messages)


def prompt_digest(messages: Sequence[BaseMessage]) -> str:
    """sha256 (hex) of :func:`prompt_text`."""
    return _sha256(prompt_text(messages))


def idempotency_key(run_id: str, step: int, action_input: Any) -> str:
    """``<run id>:<step>:<sha256 of the canonical JSON of the arguments>``."""
    return f"{run_id}:{step}:{_sha256(canonical_json(action_input))}"


# ---------------------------------------------------------------------------------------------- secrets
def _secret_text(value: Any) -> str | None:
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    elif isinstance(value, SecretBytes):
        value = value.get_secret_value().decode("utf-8", "replace")
    if not isinstance(value, str) or len(value.strip()) < _MIN_KEY or _PLACEHOLDER.fullmatch(value.strip()):
        return None  # a placeholder ("none", "EMPTY", "sk-no-key-required"...) protects nothing
    return value


_CLIENT_ATTRS = ("_client", "client", "async_client", "root_client", "root_async_client", "_async_client")
_TOKEN_ATTRS = ("token", "access_token", "_access_token", "api_key", "_api_key", "bearer_token", "auth_token")


def _runtime_tokens(model: Any) -> set[str]:
    """Tokens a model's client obtained at run time (GigaChat's access token, an OpenAI client's key...).
    Only clients already created are read: nothing is created or fetched here."""
    found: set[str] = set()
    attributes = {**getattr(model, "__dict__", {}), **(getattr(model, "__pydantic_private__", None) or {})}
    for name in _CLIENT_ATTRS:
        client = attributes.get(name)
        if client is None:
            continue
        for attr in _TOKEN_ATTRS:
            try:
                value = getattr(client, attr, None)
                value = getattr(value, "access_token", value)  # gigachat's AccessToken object
            except Exception:  # a property that fails: nothing to mask there
                continue
            text = _secret_text(value)
            if text:
                found.add(text)
    return found


def secret_values(llm: Any) -> tuple[str, ...]:
    """The secret strings of a model (and of the models it wraps): values of :data:`SECRET_FIELDS` and of its
    ``lc_secrets`` settings, the environment variables ``lc_secrets`` names, and tokens its client obtained
    at run time. Longest first, each also JSON-escaped."""
    found: set[str] = set()
    for model in wrapped_models(llm):
        declared: Mapping[str, str] = {}
        try:
            declared = dict(setting(model, "lc_secrets") or {})
        except Exception:  # a model with a broken property: fall back to the known names
            declared = {}
        names = (*SECRET_FIELDS, *declared) if declared else SECRET_FIELDS
        for name in held_settings(model, names):  # the others are None: no secret
            try:
                text = _secret_text(setting(model, name))
            except Exception:
                continue
            if text:
                found.add(text)
        for env in declared.values():
            text = _secret_text(os.environ.get(str(env)))
            if text:
                found.add(text)
        found |= _runtime_tokens(model)
    if not found:
        return ()
    variants = {v for s in found for v in (s, json.dumps(s)[1:-1])}
    return tuple(sorted(variants, key=len, reverse=True))


def redact(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every secret string replaced by ``***`` (strings, and inside lists and dicts)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {k: redact(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secrets) for v in value]
    return value


def _masked(record: Mapping[str, Any], secrets: Sequence[str]) -> dict[str, Any]:
    """``record`` with secrets masked in every field the resume does not replay."""
    exact = _REPLAYED.get(str(record.get("type")), ())
    return {k: v if k in exact else redact(v, secrets) for k, v in record.items()}


def session_references(session: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(text, ``$session.<key>``) pairs, longest text first: every plausible encoding of each session value
    of at least 4 characters that a tool result may carry it in (plain, JSON-escaped, repr, URL-quoted,
    HTML-escaped, base64, upper/lower case)."""
    pairs: dict[str, str] = {}
    for key, value in session.items():
        reference = f"$session.{key}"
        for variant in value_encodings(value):
            if len(variant) >= _MIN_SECRET:
                pairs.setdefault(variant, reference)
    return sorted(pairs.items(), key=lambda p: -len(p[0]))


def value_encodings(value: Any) -> set[str]:
    """The texts a value may appear as in a tool result."""
    plain = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    texts = {plain, str(value)}
    for text in list(texts):
        texts |= {json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1],
                  urllib.parse.quote(text, safe=""), urllib.parse.quote_plus(text), html.escape(text),
                  text.lower(), text.upper()}
        raw = text.encode("utf-8")
        for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
            texts |= {encoded.decode("ascii"), encoded.decode("ascii").rstrip("=")}
    return {t for t in texts if t}


def redact_session(text: str, references: Sequence[tuple[str, str]]) -> str:
    """``text`` with every encoding of a session value replaced by its reference (case-insensitive)."""
    for secret, reference in references:
        if secret in text:
            text = text.replace(secret, reference)
        elif secret.lower() in text.lower():
            text = re.sub(re.escape(secret), reference.replace("\\", "\\\\"), text, flags=re.IGNORECASE)
    return text



# ---------------------------------------------------------------------------------------------- tools
def accepts_idempotency_key(tool: BaseTool, visible: Mapping[str, Any]) -> bool:
    """Whether ``tool`` declares a hidden ``idempotency_key`` argument: in its ``args_schema`` but not in the
    schema shown to the model (``visible``), i.e. annotated with langchain's ``InjectedToolArg``."""
    if IDEMPOTENCY_KEY_ARG in visible.get("properties", {}):
        return False
    schema = tool.args_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return IDEMPOTENCY_KEY_ARG in schema.model_fields
    if isinstance(schema, Mapping):
        return IDEMPOTENCY_KEY_ARG in schema.get("properties", {})
    return False


def with_idempotency_key(tool: BaseTool, args: dict[str, Any], visible: Mapping[str, Any],
                         key: str | None) -> dict[str, Any]:
    """``args`` plus the idempotency key, when ``tool`` takes one. The key is ``key``, else the one of the
    tool call in progress, else a fresh random one (a call made outside a run)."""
    if not accepts_idempotency_key(tool, visible):
        return args
    if key is None:
        call = _CURRENT_CALL.get()
        key = call.key if call is not None else f"adhoc:{uuid.uuid4().hex}"
    return {**args, IDEMPOTENCY_KEY_ARG: key}


def current_tool_call() -> ToolCallRecord | None:
    """The tool call in progress in this context (inside ``execute`` during a run), if any."""
    return _CURRENT_CALL.get()


def journal_path_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as the path of a journal file, or ``None`` when nothing is: not a ``str`` or
    ``PathLike``, a folder, or a path in a folder that does not exist."""
    if not isinstance(value, (str, os.PathLike)):
        return f"got a {type(value).__name__}"
    path = Path(value)
    if path.is_dir():
        return "it is a directory; pass the path of a .jsonl file"
    if not path.parent.is_dir():
        return f"the folder {str(path.parent)!r} does not exist"
    return None


def approve_is_async(approve: Any) -> bool:
    """Whether ``approve`` is an ``async def`` (a coroutine function, a ``functools.partial`` of one, or an
    object whose ``__call__`` is one): awaited under ``arun``/``astream``/``ainvoke``, which a sync run cannot."""
    if inspect.iscoroutinefunction(approve):
        return True
    return callable(approve) and inspect.iscoroutinefunction(type(approve).__call__)


def sync_approve_problem(approve: Any) -> str | None:
    """Why ``approve`` cannot be asked by a sync run (``run``, ``stream``, ``invoke``, ``resume``, ``execute``),
    or ``None`` when it can."""
    if approve is None or not approve_is_async(approve):
        return None
    return ("approve is async (async def), which a sync run (run, stream, invoke, resume, execute) cannot await: "
            "use arun/astream/ainvoke (aresume, aexecute), or a plain function returning True or False")


def decide_approval(tool: str, args: Any, ask: Callable[[str, Any], Any] | None) -> bool:
    """The approval decision: inside a run, a journaled decision first (whatever ``ask`` is), else ``ask``
    (journaled); without ``ask`` the call is refused. An async ``ask`` is a :class:`ConfigError` (nothing
    can await it here; it is not called, so no coroutine is left unawaited)."""
    call = _CURRENT_CALL.get()
    if call is not None:
        return call.decide(tool, args, ask)
    if ask is None:
        return False
    _refuse_async(ask)
    return _approval_answer(tool, ask(tool, args))


async def adecide_approval(tool: str, args: Any, ask: Callable[[str, Any], Any] | None) -> bool:
    """Async :func:`decide_approval`: an ``async def`` ``ask`` is awaited, a plain one runs in a worker thread
    (an ``ask`` that waits for a person never blocks the event loop)."""
    call = _CURRENT_CALL.get()
    if call is not None:
        return await call.adecide(tool, args, ask)
    if ask is None:
        return False
    return _approval_answer(tool, await _ask_off_the_loop(tool, args, ask, None))


def _refuse_async(ask: Callable[[str, Any], Any]) -> None:
    problem = sync_approve_problem(ask)
    if problem is not None:
        raise ConfigError(f"{problem}; the call was not run")


async def _ask_off_the_loop(tool: str, args: Any, ask: Callable[[str, Any], Any],
                            held: threading.RLock | None) -> Any:
    """``ask``'s answer under the async driver: an ``async def`` awaited here, a plain function called in a
    daemon thread (holding ``held``, in a copy of this context: ``current_tool_call`` and LangGraph's
    config reach it; never the loop's default executor, which ``asyncio.run`` joins)."""
    if approve_is_async(ask):
        answer = ask(tool, args)
        return await answer if inspect.isawaitable(answer) else answer

    def asking() -> Any:
        if held is None:
            return ask(tool, args)
        with held:
            return ask(tool, args)

    return await acall_in_thread(asking, None, name="approve")


def _approval_answer(tool: str, answer: Any) -> bool:
    """What ``approve`` said about a call of ``tool``: only ``True`` approves and ``False`` refuses. Anything
    else is a developer mistake, a :class:`ConfigError` (the call does not run): an awaitable returned by a
    plain function (an async approver behind a sync wrapper; a coroutine is closed, so no "never awaited"
    warning), and any other value (``"no"``, ``None``, ``1``), which ``bool()`` would have read as a yes or
    a no."""
    if isinstance(answer, bool):
        return answer
    if inspect.isawaitable(answer):
        if inspect.iscoroutine(answer):
            answer.close()
        raise ConfigError(f"approve returned an awaitable ({type(answer).__name__}) for {tool!r}: approve must be "
                          f"a plain function returning True or False, or an async def (awaited under "
                          f"arun/astream/ainvoke); the call was not run")
    raise ConfigError(f"approve must return True or False, got a {type(answer).__name__} for {tool!r}; "
                      f"the call was not run")


@dataclass
class ToolCallRecord:
    """One tool call of a run: its idempotency key and what the journal already knows about it.

    ``outcome`` is set when the journal holds the call's result: the call must not run again.
    ``approval`` is a journaled human decision, reused instead of asking again.
    """

    journal: RunJournal
    seq: int
    step: int
    known_key: str
    tool: str
    outcome: Outcome | None = None
    approval: bool | None = None
    started: float = field(default_factory=time.monotonic)
    arguments: Any = None
    usage: Usage | None = None  # journaled usage of the agents that ran inside the tool

    @property
    def key(self) -> str:
        """The call's idempotency key (derived on first use when nothing needed it before)."""
        if not self.known_key:
            self.known_key = self.journal.new_key(self.step, self.arguments)
        return self.known_key

    def decide(self, tool: str, action_input: Any, ask: Callable[[str, Any], Any] | None) -> bool:
        """The approval decision: the journaled one (whatever ``ask`` is now), else ``ask``-ed now and
        journaled; without ``ask`` the call is refused and nothing is journaled. The run's concurrent calls
        ask one at a time (:attr:`RunJournal.asking`); other runs ask meanwhile. An async ``ask`` is a
        :class:`ConfigError` (this sync check cannot await it)."""
        if self.approval is not None:
            logger.info("approval of %s taken from the journal: %s", tool, self.approval)
            return self.approval
        if ask is None:
            return False
        _refuse_async(ask)
        with self.journal.asking:
            approved = self._decided(tool, _approval_answer(tool, ask(tool, action_input)))  # none if it raises
        self.journal.flush()  # durable before the approved tool starts
        return approved

    async def adecide(self, tool: str, action_input: Any, ask: Callable[[str, Any], Any] | None) -> bool:
        """Async :meth:`decide`, for the async driver: an ``async def`` ``ask`` is awaited, a plain one runs in a
        worker thread, so a person's answer never blocks the event loop; the run's concurrent calls ask one at
        a time (:meth:`RunJournal.asking_async`). The decision is journaled here (flushed in a worker thread)
        before the approved tool starts."""
        if self.approval is not None:
            logger.info("approval of %s taken from the journal: %s", tool, self.approval)
            return self.approval
        if ask is None:
            return False
        async with self.journal.asking_async():
            answer = await _ask_off_the_loop(tool, action_input, ask, self.journal.asking)
            approved = self._decided(tool, _approval_answer(tool, answer))  # nothing journaled if it raises
        if self.journal.outbox:  # deferred by the async driver: fsync-ed off the loop
            await acall_in_thread(self.journal.flush, None, name="journal")
        else:
            self.journal.flush()
        return approved

    def _decided(self, tool: str, approved: bool) -> bool:
        """Keep and journal a decision just made (the records stay in call order: the run's lock is held)."""
        self.approval = approved
        self.journal.append({"type": "approval", "seq": self.seq, "key": self.key, "tool": tool,
                             "approved": approved})
        return approved

    def active(self) -> _Active:
        """Make this the call in progress (its key and approval reach ``execute`` and ``approve``): a
        context manager."""
        return _Active(self)

    def finish(self, outcome: Outcome, usage: Usage | None = None) -> Outcome:
        """Journal the outcome (before the loop goes on), with the ``usage`` of agents that ran inside the
        tool, and return it."""
        if self.journal.path is None:
            return outcome
        record: dict[str, Any] = {"type": "tool_end", "seq": self.seq, "key": self.key, "tool": self.tool,
                                  "observation": outcome.observation, "kind": outcome.kind,
                                  "seconds": round(time.monotonic() - self.started, 6)}
        if usage is not None and usage.total_tokens:
            record["usage"] = usage.model_dump()
        self.journal.append(record)
        self.journal.last_observation = (self.seq, outcome.observation)
        return outcome


class _Active:
    """``with record.active():`` (a plain class: cheaper than a generator context manager, once per call)."""

    __slots__ = ("record", "token")

    def __init__(self, record: ToolCallRecord) -> None:
        self.record = record

    def __enter__(self) -> ToolCallRecord:
        self.token = _CURRENT_CALL.set(self.record)
        return self.record

    def __exit__(self, *exc: object) -> None:
        _CURRENT_CALL.reset(self.token)


# ---------------------------------------------------------------------------------------------- files
def _load_lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The records of a journal file and the byte length of its complete lines (a torn tail excluded)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise JournalError(f"cannot read journal {path}: {exc.strerror}") from exc
    complete = data.rfind(b"\n") + 1  # a last line without its newline was never acknowledged: torn
    records: list[dict[str, Any]] = []
    for number, line in enumerate(data[:complete].splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise JournalError(f"journal {path} line {number} is corrupt: {exc}") from exc
        if not isinstance(record, dict) or "type" not in record:
            raise JournalError(f"journal {path} line {number} is not a journal record")
        records.append(record)
    return records, complete


def read_journal(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete record of a journal file, in order (a torn last line, left by a crash, is ignored); a file
    that does not exist holds none (``[]``: a run that has not started yet)."""
    return _load_lines(Path(path))[0]


def _encode(record: Mapping[str, Any]) -> bytes:
    try:
        line = json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))
        return (line + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from some tool output: keep them as escapes
        return (json.dumps(record, ensure_ascii=True, default=str, separators=(",", ":")) + "\n").encode()


def cut_torn_tail(fd: int, what: str = "journal") -> None:
    """Under the caller's file lock: drop a last line without its newline (a write that a crash tore; it
    was never acknowledged), so that the next record starts on a line of its own."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = size
    while end > 0:
        start = max(0, end - 65536)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            end = start + newline + 1
            break
        end = start
    logger.warning("%s: cutting off a torn last record of %d bytes left by a crash", what, size - end)
    os.ftruncate(fd, end)


def _append_durably(path: Path, data: bytes) -> None:
    """Append ``data`` and fsync, holding an exclusive lock on the file (``flock``: threads and processes
    sharing one journal take turns), after cutting off a torn tail."""
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        cut_torn_tail(fd)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    if created:  # make the new directory entry durable too
        try:
            dir_fd = os.open(path.parent, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)


# ---------------------------------------------------------------------------------------------- one run
@dataclass(frozen=True)
class ModelRecord:
    """A journaled model reply."""

    text: str
    usage: Usage
    seconds: float


class RunJournal:
    """One session of one run: its id, the effects to replay, and the file new records go to.

    Without a file (``path=None``) it still numbers effects and derives idempotency keys, writing nothing.
    Build it with :meth:`start` (a new run) or :meth:`open` (resume a journaled run).
    """

    def __init__(self, *, run_id: str, task: str, path: Path | None = None, secrets: Sequence[str] = (),
                 references: Sequence[tuple[str, str]] = (),
                 effects: Mapping[int, dict[str, Any]] | None = None, steps_recorded: int = 0,
                 ended: bool = False) -> None:
        self.run_id = run_id
        self.task = task
        self.path = path
        self.secrets = tuple(secrets)
        self.references = tuple(references)
        self._effects = dict(effects or {})
        self._seq = 0
        self._live = not self._effects
        self._live_effects = 0
        self._steps_recorded = steps_recorded
        self._ended = ended
        self._keys: set[str] = set()
        self._digest = ""
        self.replayed = 0
        self.outbox: list[bytes] | None = None
        self._batch_live = False
        self._flushing = threading.Lock()
        self.asking = threading.RLock()
        """Held while this run's ``approve`` runs: the concurrent calls of one decision ask one at a time,
        while other runs ask meanwhile (re-entrant: an ``approve`` may run an agent of its own)."""
        self._asking_async: asyncio.Lock | None = None
        self.last_observation: tuple[int, str] | None = None  # (seq, text) of the last tool_end written

    # -- construction
    @classmethod
    def start(cls, task: str, *, path: str | os.PathLike[str] | None, run_id: str | None = None, agent: str = "",
              tools: Sequence[str] = (), secrets: Sequence[str] = (), references: Sequence[tuple[str, str]] = (),
              identity: Mapping[str, Any] | None = None, deferred: bool = False) -> RunJournal:
        """A new run; with a ``path``, its ``run`` record (with the options' ``identity``) is written first
        (collected for :meth:`flush` when ``deferred``)."""
        journal = cls(run_id=run_id or uuid.uuid4().hex, task=task, path=None if path is None else Path(path),
                      secrets=secrets, references=references)
        if deferred:
            journal.defer()
        if path is not None:
            journal.append({"type": "run", "v": JOURNAL_VERSION, "task": task, "agent": agent, "tools": list(tools),
                            "identity": canonical_identity(identity)})
        return journal

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, run_id: str | None = None,
             secrets: Sequence[str] = (), references: Sequence[tuple[str, str]] = (),
             identity: Mapping[str, Any] | None = None) -> RunJournal:
        """Load a journaled run for resuming (the last run of the file unless ``run_id`` is given).

        A torn last line (a crash in mid-write) is ignored here and cut off, under the file lock, before the
        next record is appended. Raises :class:`JournalError` when the file holds no such run or is
        inconsistent, :class:`JournalMismatchError` when ``identity`` differs from the journaled one.
        """
        file = Path(path)
        records, _ = _load_lines(file)
        headers = [r for r in records if r.get("type") == "run" and (run_id is None or r.get("run") == run_id)]
        if not headers:
            which = "no run" if run_id is None else f"no run {run_id!r}"
            raise JournalError(f"journal {file} holds {which} to resume")
        header = headers[-1]
        if header.get("v") != JOURNAL_VERSION:
            raise JournalError(f"journal {file}: unsupported format version {header.get('v')!r}")
        rid = str(header["run"])
        mine = [r for r in records if r.get("run") == rid]
        effects = _effects(mine, file)
        _check_identity(file, header, identity)
        journal = cls(run_id=rid, task=str(header["task"]), path=file, secrets=secrets, references=references,
                      effects=effects,
                      steps_recorded=sum(r.get("type") == "step" for r in mine),
                      ended=any(r.get("type") == "end" for r in mine))
        journal.append({"type": "resume", "replayable": len(effects)})
        return journal

    # -- writing
    def append(self, record: dict[str, Any]) -> None:
        """Append one record durably (written, flushed, fsync-ed); a no-op without a file."""
        if self.path is None:
            return
        full = {"type": record["type"], "run": self.run_id, "t": round(time.time(), 6),
                **{k: v for k, v in record.items() if k != "type"}}
        data = _encode(_masked(full, self.secrets))
        if self.outbox is not None:  # deferred: the async driver flushes before the run goes on
            self.outbox.append(data)
            return
        self._write(data)

    def defer(self) -> None:
        """Collect appended records in :attr:`outbox` instead of writing each one: the caller must
        :meth:`flush` before the run goes on (the async driver does so, in a worker thread, before any
        model or tool call, step or result), so the event loop never waits for an ``fsync``."""
        if self.outbox is None:
            self.outbox = []

    def flush(self) -> None:
        """Write and ``fsync`` the deferred records, all at once."""
        with self._flushing:  # concurrent tool calls flush from worker threads while others append
            if self.outbox:
                count = len(self.outbox)
                data = b"".join(self.outbox[:count])
                del self.outbox[:count]
                self._write(data)

    def _write(self, data: bytes) -> None:
        assert self.path is not None
        try:
            _append_durably(self.path, data)
        except OSError as exc:
            raise JournalError(f"cannot write journal {self.path}: {exc.strerror or exc}") from exc

    def asking_async(self) -> asyncio.Lock:
        """:attr:`asking` for the async driver's tasks (made on first use, on the run's event loop)."""
        if self._asking_async is None:
            self._asking_async = asyncio.Lock()
        return self._asking_async

    def redact(self, text: str) -> str:
        """``text`` with the model's secrets masked."""
        return str(redact(text, self.secrets))

    @property
    def replaying(self) -> bool:
        return not self._live

    # -- effects
    def _next(self, kind: str) -> dict[str, Any] | None:
        self._seq += 1
        if self._live:
            self._live_effects += 1
            return None
        entry = self._effects.get(self._seq)
        if entry is None:
            self._go_live()
            return None
        if entry["kind"] != kind:
            raise JournalMismatchError(
                f"journal of run {self.run_id}: effect {self._seq} is a {entry['kind']} call in the journal but the "
                f"resumed run asks for a {kind} call; resume with the same agent class, prompts, tools and options")
        return entry

    def _go_live(self) -> None:
        later = sorted(seq for seq in self._effects if seq > self._seq)
        if later:
            raise JournalMismatchError(
                f"journal of run {self.run_id}: the resumed run left the journal at effect {self._seq} but it holds "
                f"effects up to {later[-1]}")
        if not self._live:
            logger.info("run %s: %d journaled effects replayed, continuing live", self.run_id, self.replayed)
        self._live = True
        self._live_effects += 1

    def model_call(self, messages: Sequence[BaseMessage]) -> ModelRecord | None:
        """The journaled reply to this model call, or ``None``: make the call (then :meth:`model_done`)."""
        if self.path is None and self._live:  # nothing to replay or write: skip the digest
            self._next("model")
            return None
        digest = prompt_digest(messages)
        self._digest = digest
        entry = self._next("model")
        if entry is None:
            return None
        record = entry["model"]
        if record.get("digest") != digest:
            raise JournalMismatchError(
                f"journal of run {self.run_id}: the prompt of model call {self._seq} differs from the journaled one "
                f"(sha256 {str(record.get('digest'))[:12]}… vs {digest[:12]}…); resume with the same agent "
                f"class, prompts, tools and options")
        self.replayed += 1
        usage = Usage(**record.get("usage", {}))
        return ModelRecord(str(record.get("text", "")), usage, float(record.get("seconds", 0.0)))

    def model_done(self, text: str, usage: Usage, seconds: float) -> None:
        if self.path is None:
            return
        self.append({"type": "model", "seq": self._seq, "digest": self._digest, "text": text,
                     "usage": usage.model_dump(), "seconds": round(seconds, 6)})

    def model_failed(self, error: str) -> None:
        self.append({"type": "model_error", "seq": self._seq, "digest": self._digest, "error": error})

    def tool_batch(self, calls: Sequence[tuple[str, Any]], *, step: int) -> list[ToolCallRecord]:
        """The records of the concurrent calls of one decision (``(tool, action_input)`` in call order; the
        k-th call is step ``step + k``): each keeps its journaled outcome, and every ``tool_start`` is written
        before any call runs. A crash inside the batch leaves any of its calls without a result; a resume
        runs those again, each with its own key."""
        batch, records = self._seq + 1, []
        for k, (tool, action_input) in enumerate(calls):
            records.append(self.tool_call(tool, action_input, step=step + k, batch=batch))
        if self._batch_live:
            self._batch_live = False
            self._go_live()
        return records

    def tool_call(self, tool: str, action_input: Any, *, step: int, batch: int | None = None) -> ToolCallRecord:
        """The record of this tool call: its key, and its journaled outcome or approval if any.

        When the outcome is not journaled, a ``tool_start`` record is written before the call runs.
        ``batch``: the first effect number of the concurrent calls this one belongs to (:meth:`tool_batch`).
        """
        entry = self._next("tool")
        if self.path is None and self._live:  # nothing to replay or write: the key only when a tool asks
            return ToolCallRecord(self, self._seq, step, "", tool, arguments=action_input)
        key = self.new_key(step, action_input)
        call = ToolCallRecord(self, self._seq, step, key, tool)
        attempt = 1
        if entry is not None:
            start = entry["start"]
            if start.get("key") != key or start.get("tool") != tool:
                raise JournalMismatchError(
                    f"journal of run {self.run_id}: tool call {self._seq} is {start.get('tool')} with key "
                    f"{start.get('key')} in the journal, but the resumed run calls {tool} with key {key}")
            if "approval" in entry:
                call.approval = _check_approval(entry["approval"], self.path)
            end = entry.get("end")
            if end is not None:
                self.replayed += 1
                call.outcome = Outcome(str(end.get("observation", "")), str(end.get("kind", "ok")))
                call.usage = Usage(**end["usage"]) if isinstance(end.get("usage"), dict) else None
                return call
            attempt = int(entry.get("attempts", 1)) + 1
            logger.warning("run %s: tool call %s (key %s) started before the crash but has no result: running it "
                           "again with the same key", self.run_id, tool, key)
            if batch is None:
                self._go_live()
            else:  # the batch's later calls are in the journal too: live once they are all taken
                self._batch_live = True
        record: dict[str, Any] = {"type": "tool_start", "seq": self._seq, "step": step, "key": key, "tool": tool,
                                  "input": action_input, "attempt": attempt}
        if batch is not None:
            record["batch"] = batch
        self.append(record)
        return call

    def new_key(self, step: int, action_input: Any) -> str:
        """The idempotency key of a tool call, unique in this run (a custom loop may call twice with the
        same arguments in one step: the second key gets ``#2``)."""
        key = idempotency_key(self.run_id, step, action_input)
        if key in self._keys:
            key = f"{key}#{sum(k.startswith(key) for k in self._keys) + 1}"
        self._keys.add(key)
        return key

    def step_done(self, index: int, step: AgentStep) -> None:
        """Journal a completed step (once: steps re-derived during a replay are already there)."""
        if self.path is None:
            self._steps_recorded = max(self._steps_recorded, index)
            return
        if index <= self._steps_recorded:
            return
        self._steps_recorded = index
        record = {"type": "step", "task": self.task, "index": index, "digest": self._digest,
                  **step.model_dump(mode="json")}
        shared = self.last_observation
        if shared is not None and len(step.observation) > SHARED_OBSERVATION and shared[1] == step.observation:
            record.update(observation=None, observation_seq=shared[0])  # written once, in its tool_end
        self.append(record)

    def end(self, result: AgentResult) -> None:
        """Journal the outcome of this session (not again when a resume only replayed a finished run)."""
        if (self._ended and self._live_effects == 0) or self.path is None:
            self._ended = True
            return
        self._ended = True
        self.append({"type": "end", "status": result.status, "output": result.output, "error": result.error,
                     "llm_calls": result.llm_calls, "usage": result.usage.model_dump(), "steps": len(result.steps)})


def _effects(records: Sequence[dict[str, Any]], file: Path) -> dict[int, dict[str, Any]]:
    """Group a run's records into effects by ``seq``; check they form an unbroken prefix."""
    effects: dict[int, dict[str, Any]] = {}
    for record in records:
        kind, seq = record.get("type"), record.get("seq")
        if not isinstance(seq, int):
            continue
        if kind == "model":
            effects[seq] = {"kind": "model", "model": record}
        elif kind == "tool_start":
            entry = effects.setdefault(seq, {"kind": "tool", "start": record, "attempts": 0})
            entry["attempts"] += 1
        elif kind in ("approval", "tool_end") and seq in effects:
            if kind == "approval":
                _check_approval(record, file)
            effects[seq]["approval" if kind == "approval" else "end"] = record
    seqs = sorted(effects)
    if seqs != list(range(1, len(seqs) + 1)):
        raise JournalError(f"journal {file}: effects {seqs} do not form an unbroken sequence")
    unfinished = [s for s in seqs if effects[s]["kind"] == "tool" and "end" not in effects[s]]
    if unfinished and unfinished != [seqs[-1]] and not _in_last_batch(effects, seqs, unfinished):
        raise JournalError(f"journal {file}: tool calls {unfinished} have no result but later effects exist")
    return effects


def _check_approval(record: Mapping[str, Any], file: Path | None) -> bool:
    """The journaled human decision of an ``approval`` record: its ``approved``, exactly ``true`` or ``false``
    (as :meth:`ToolCallRecord.decide` writes it). Anything else (``"no"``, ``1``, ``null``, no field: an edited
    or damaged record) is a :class:`JournalError`, never read as a yes or a no: resume is fail-closed like
    ``approve`` itself."""
    approved = record.get("approved", _MISSING)
    if isinstance(approved, bool):
        return approved
    found = "no 'approved' field" if approved is _MISSING else f"'approved': {short_repr(approved)}"
    raise JournalError(f"journal {file}: the approval record of tool call {record.get('seq')} "
                       f"({record.get('tool')!r}) has {found}; it must be true or false, so the run is not "
                       f"resumed (fix the record, or remove it to be asked again)")


def _in_last_batch(effects: Mapping[int, dict[str, Any]], seqs: Sequence[int], unfinished: Sequence[int]) -> bool:
    """Whether the calls without a result all belong to the concurrent batch that ends the journal."""
    last = effects[seqs[-1]]
    batch = last["start"].get("batch") if last["kind"] == "tool" else None
    if not isinstance(batch, int):
        return False
    tail = [effects[s] for s in seqs if s >= batch]
    return unfinished[0] >= batch and all(e["kind"] == "tool" and e["start"].get("batch") == batch for e in tail)


def canonical_identity(identity: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The identity as it is journaled: JSON values (tuples as lists)."""
    return None if identity is None else json.loads(canonical_json(dict(identity)))


def _check_identity(file: Path, header: Mapping[str, Any], identity: Mapping[str, Any] | None) -> None:
    """:class:`JournalMismatchError` when the options that change a run's outcome differ from the journaled
    ones (journals written before identities were recorded are not checked)."""
    journaled = header.get("identity")
    current = canonical_identity(identity)
    if journaled is None or current is None or journaled == current:
        return
    changed = sorted(k for k in set(journaled) | set(current) if journaled.get(k) != current.get(k))
    details = ", ".join(f"{k}: journaled {journaled.get(k)!r}, now {current.get(k)!r}" for k in changed)
    raise JournalMismatchError(f"journal {file}: run {header.get('run')} was made with other options ({details}); "
                               f"resume it with the same agent class, tools and options")
