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
  ``raw_output``, ``duration_s``, ``usage`` (for people and tools reading the journal; not replayed).
- ``end``: the outcome of a session — ``status``, ``output``, ``error``, ``llm_calls``, ``usage``.

Values of the model's secret settings (``credentials``, ``password``, ``access_token``, ``api_key``... and
whatever the model declares in ``lc_secrets``) are masked in every record and in error texts.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, SecretBytes, SecretStr

from react_agent._errors import ReactAgentError
from react_agent._tools import Outcome
from react_agent._types import AgentResult, AgentStep, Usage

__all__ = [
    "IDEMPOTENCY_KEY_ARG",
    "JOURNAL_VERSION",
    "SECRET_FIELDS",
    "JournalError",
    "JournalMismatchError",
    "RecordedApproval",
    "RunJournal",
    "ToolCallRecord",
    "accepts_idempotency_key",
    "canonical_json",
    "idempotency_key",
    "prompt_digest",
    "read_journal",
    "redact",
    "secret_values",
]

logger = logging.getLogger("react_agent")

JOURNAL_VERSION = 1
IDEMPOTENCY_KEY_ARG = "idempotency_key"
"""The tool argument that receives the idempotency key (declare it with langchain's ``InjectedToolArg``)."""

SECRET_FIELDS = ("credentials", "password", "access_token", "api_key", "openai_api_key", "key_file_password",
                 "token", "auth_token", "bearer_token", "refresh_token", "client_secret", "secret_key", "secret")
"""Settings of a model whose values are masked (plus the model's own ``lc_secrets``)."""

MASK = "***"
_MIN_SECRET = 4
_RUN_ATTR = "_react_agent_journal"
_CURRENT_CALL: contextvars.ContextVar[ToolCallRecord | None] = contextvars.ContextVar(
    "react_agent_tool_call", default=None)
_WRITE_LOCK = threading.Lock()


class JournalError(ReactAgentError):
    """The journal cannot be read, written or resumed (missing run, corrupt line, unwritable file)."""


class JournalMismatchError(JournalError):
    """The resumed loop asked for an effect the journal does not hold at that position (changed prompts,
    tools, agent class or options): replaying it would answer a different question."""


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
    return value if isinstance(value, str) and len(value) >= _MIN_SECRET else None


def secret_values(llm: Any) -> tuple[str, ...]:
    """The secret strings of a model: values of :data:`SECRET_FIELDS` and of its ``lc_secrets`` settings,
    and of the environment variables ``lc_secrets`` names. Longest first."""
    found: set[str] = set()
    declared: Mapping[str, str] = {}
    try:
        declared = dict(getattr(llm, "lc_secrets", {}) or {})
    except Exception:  # a model with a broken property: fall back to the known names
        declared = {}
    for name in (*SECRET_FIELDS, *declared):
        text = _secret_text(getattr(llm, name, None))
        if text:
            found.add(text)
    for env in declared.values():
        text = _secret_text(os.environ.get(str(env)))
        if text:
            found.add(text)
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


@dataclass
class ToolCallRecord:
    """One tool call of a run: its idempotency key and what the journal already knows about it.

    ``outcome`` is set when the journal holds the call's result: the call must not run again.
    ``approval`` is a journaled human decision, reused instead of asking again.
    """

    journal: RunJournal
    seq: int
    step: int
    key: str
    tool: str
    outcome: Outcome | None = None
    approval: bool | None = None
    started: float = field(default_factory=time.monotonic)

    def decide(self, tool: str, action_input: Any, ask: Callable[[str, Any], bool]) -> bool:
        """The approval decision: the journaled one, else ``ask``-ed now and journaled."""
        if self.approval is not None:
            logger.info("approval of %s taken from the journal: %s", tool, self.approval)
            return self.approval
        self.approval = bool(ask(tool, action_input))
        self.journal.append({"type": "approval", "seq": self.seq, "key": self.key, "tool": tool,
                             "approved": self.approval})
        return self.approval

    @contextmanager
    def active(self) -> Iterator[ToolCallRecord]:
        """Make this the call in progress (its key and approval reach ``execute`` and ``approve``)."""
        token = _CURRENT_CALL.set(self)
        try:
            yield self
        finally:
            _CURRENT_CALL.reset(token)

    def finish(self, outcome: Outcome) -> Outcome:
        """Journal the outcome (before the loop goes on) and return it."""
        if self.journal.path is None:
            return outcome
        self.journal.append({"type": "tool_end", "seq": self.seq, "key": self.key, "tool": self.tool,
                             "observation": outcome.observation, "kind": outcome.kind,
                             "seconds": round(time.monotonic() - self.started, 6)})
        return outcome


class RecordedApproval:
    """Wraps an ``approve`` callback so that, inside a run, each decision is journaled and a resumed run
    reuses it instead of asking again. Outside a run it just asks."""

    def __init__(self, ask: Callable[[str, Any], bool]) -> None:
        self.ask = ask
        self.__wrapped__ = ask

    def __call__(self, tool: str, action_input: dict[str, Any] | str) -> bool:
        call = _CURRENT_CALL.get()
        if call is None:
            return bool(self.ask(tool, action_input))
        return call.decide(tool, action_input, self.ask)


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
    """Every complete record of a journal file, in order (a torn last line, left by a crash, is ignored)."""
    return _load_lines(Path(path))[0]


def _encode(record: Mapping[str, Any]) -> bytes:
    try:
        line = json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))
        return (line + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from some tool output: keep them as escapes
        return (json.dumps(record, ensure_ascii=True, default=str, separators=(",", ":")) + "\n").encode()


def _append_durably(path: Path, data: bytes) -> None:
    created = not path.exists()
    with _WRITE_LOCK:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
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


def check_journal_path(path: str | os.PathLike[str]) -> Path:
    """The journal path as a :class:`Path`; ``ValueError`` if it cannot be a journal file."""
    journal = Path(path)
    if journal.is_dir():
        raise ValueError(f"journal={str(path)!r} is a directory; pass the path of a .jsonl file")
    if not journal.parent.is_dir():
        raise ValueError(f"journal={str(path)!r}: the folder {str(journal.parent)!r} does not exist")
    return journal


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
                 effects: Mapping[int, dict[str, Any]] | None = None, steps_recorded: int = 0,
                 ended: bool = False) -> None:
        self.run_id = run_id
        self.task = task
        self.path = path
        self.secrets = tuple(secrets)
        self._effects = dict(effects or {})
        self._seq = 0
        self._live = not self._effects
        self._live_effects = 0
        self._steps_recorded = steps_recorded
        self._ended = ended
        self._keys: set[str] = set()
        self._digest = ""
        self.replayed = 0

    # -- construction
    @classmethod
    def start(cls, task: str, *, path: Path | None, run_id: str | None = None, agent: str = "",
              tools: Sequence[str] = (), secrets: Sequence[str] = ()) -> RunJournal:
        """A new run; with a ``path``, its ``run`` record is written first."""
        journal = cls(run_id=run_id or uuid.uuid4().hex, task=task, path=path, secrets=secrets)
        journal.append({"type": "run", "v": JOURNAL_VERSION, "task": task, "agent": agent, "tools": list(tools)})
        return journal

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, run_id: str | None = None,
             secrets: Sequence[str] = ()) -> RunJournal:
        """Load a journaled run for resuming (the last run of the file unless ``run_id`` is given).

        A torn last line (a crash in mid-write) is cut off so new records start on a line of their own.
        Raises :class:`JournalError` when the file holds no such run or is inconsistent.
        """
        file = Path(path)
        records, complete = _load_lines(file)
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
        if file.exists() and file.stat().st_size > complete:
            logger.warning("journal %s: cutting off a torn last line left by a crash", file)
            with open(file, "r+b") as handle:
                handle.truncate(complete)
                handle.flush()
                os.fsync(handle.fileno())
        journal = cls(run_id=rid, task=str(header["task"]), path=file, secrets=secrets, effects=effects,
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
        try:
            _append_durably(self.path, _encode(redact(full, self.secrets)))
        except OSError as exc:
            raise JournalError(f"cannot write journal {self.path}: {exc.strerror or exc}") from exc

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

    def tool_call(self, tool: str, action_input: Any, *, step: int) -> ToolCallRecord:
        """The record of this tool call: its key, and its journaled outcome or approval if any.

        When the outcome is not journaled, a ``tool_start`` record is written before the call runs.
        """
        entry = self._next("tool")
        key = idempotency_key(self.run_id, step, action_input)
        if key in self._keys:  # a custom loop calling twice with the same arguments in one step
            key = f"{key}#{sum(k.startswith(key) for k in self._keys) + 1}"
        self._keys.add(key)
        call = ToolCallRecord(self, self._seq, step, key, tool)
        attempt = 1
        if entry is not None:
            start = entry["start"]
            if start.get("key") != key or start.get("tool") != tool:
                raise JournalMismatchError(
                    f"journal of run {self.run_id}: tool call {self._seq} is {start.get('tool')} with key "
                    f"{start.get('key')} in the journal, but the resumed run calls {tool} with key {key}")
            if "approval" in entry:
                call.approval = bool(entry["approval"].get("approved"))
            end = entry.get("end")
            if end is not None:
                self.replayed += 1
                call.outcome = Outcome(str(end.get("observation", "")), str(end.get("kind", "ok")))
                return call
            attempt = int(entry.get("attempts", 1)) + 1
            logger.warning("run %s: tool call %s (key %s) started before the crash but has no result: running it "
                           "again with the same key", self.run_id, tool, key)
            self._go_live()
        self.append({"type": "tool_start", "seq": self._seq, "step": step, "key": key, "tool": tool,
                     "input": action_input, "attempt": attempt})
        return call

    def step_done(self, index: int, step: AgentStep) -> None:
        """Journal a completed step (once: steps re-derived during a replay are already there)."""
        if self.path is None:
            return
        if index <= self._steps_recorded:
            return
        self._steps_recorded = index
        self.append({"type": "step", "task": self.task, "index": index, "digest": self._digest,
                     **step.model_dump(mode="json")})

    def end(self, result: AgentResult) -> None:
        """Journal the outcome of this session (not again when a resume only replayed a finished run)."""
        if self._ended and self._live_effects == 0:
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
            effects[seq]["approval" if kind == "approval" else "end"] = record
    seqs = sorted(effects)
    if seqs != list(range(1, len(seqs) + 1)):
        raise JournalError(f"journal {file}: effects {seqs} do not form an unbroken sequence")
    unfinished = [s for s in seqs if effects[s]["kind"] == "tool" and "end" not in effects[s]]
    if unfinished and unfinished != [seqs[-1]]:
        raise JournalError(f"journal {file}: tool calls {unfinished} have no result but later effects exist")
    return effects


def attach(state: Any, journal: RunJournal) -> None:
    """Bind ``journal`` to a run's state."""
    setattr(state, _RUN_ATTR, journal)


def journal_of(state: Any) -> RunJournal:
    """The journal bound to a run's state (a file-less one is bound on first use)."""
    journal = getattr(state, _RUN_ATTR, None)
    if not isinstance(journal, RunJournal):
        journal = RunJournal(run_id=uuid.uuid4().hex, task=str(getattr(state, "task", "")))
        attach(state, journal)
    return journal
