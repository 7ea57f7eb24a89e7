"""Per-task results, the batch summary, and the results file (append-only JSONL, safe against a kill)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no lock against a second batch writing the same file
    fcntl = None  # type: ignore[assignment]

from pydantic import BaseModel, ConfigDict, Field

from react_agent.errors import ConfigError
from react_agent.runtime import cut_torn_tail

__all__ = ["BatchSummary", "CheckResult", "ResultsFile", "TaskResult", "read_results"]

logger = logging.getLogger("react_agent")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class CheckResult(_Frozen):
    """One check of a task: its ``name`` (``status``, ``answer``, ``tool_calls``...), whether it ``passed``,
    and a ``detail`` saying why not."""

    name: str
    passed: bool
    detail: str = ""


class TaskResult(_Frozen):
    """The outcome of one task of a batch (one line of the results file).

    ``status`` is the run's status (``"finished"``, ``"repeated"``, ``"max_iterations"``, ``"timeout"``,
    ``"budget"``, ``"error"``); an exception in the run, a journal problem or a dead worker is ``"error"`` with the
    message in ``error``. ``seconds`` is the wall time of this session (a replayed run takes almost none);
    ``resumed`` tells that the run was continued from its journal. ``passed`` is ``None`` without checks.
    """

    id: str
    task: str
    status: str
    output: str = ""
    error: str | None = None
    steps: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    seconds: float = 0.0
    resumed: bool = False
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    passed: bool | None = None

    @property
    def ok(self) -> bool:
        """Finished, and every check passed (a task without checks: finished)."""
        return self.status == "finished" and self.passed is not False


class BatchSummary(BaseModel):
    """Counts and totals of a batch so far (live while it runs; ``previous`` counts tasks found done in the
    results file and not run again)."""

    model_config = ConfigDict(extra="forbid")

    total: int | None = None
    done: int = 0
    failed: int = 0
    running: int = 0
    previous: int = 0
    passed: int = 0
    checked: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    elapsed: float = 0.0
    statuses: dict[str, int] = Field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, result: TaskResult, *, previous: bool = False) -> None:
        """Count one result (``previous``: found in the results file)."""
        self.done += 1
        self.previous += previous
        self.failed += not result.ok
        self.statuses[result.status] = self.statuses.get(result.status, 0) + 1
        if result.passed is not None:
            self.checked += 1
            self.passed += result.passed
        self.llm_calls += result.llm_calls
        self.input_tokens += result.input_tokens
        self.output_tokens += result.output_tokens
        self.seconds += result.seconds

    def as_dict(self) -> dict[str, Any]:
        return {**self.model_dump(), "total_tokens": self.total_tokens}


def _line(record: Any) -> bytes:
    """One JSONL line, always valid UTF-8 (a lone surrogate from some tool output is kept as a ``\\u`` escape)."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The complete, valid JSON objects of a results file (a torn last line and corrupt lines are skipped,
    with a warning for a corrupt line that is not the last)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        number = 0
        for raw in handle:
            number += 1
            if not raw.endswith(b"\n"):
                logger.warning("results file %s: ignoring a torn last line (a killed batch)", path)
                return
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                logger.warning("results file %s line %d is corrupt: skipped", path, number)
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                yield number, record


def read_results(path: str | os.PathLike[str]) -> Iterator[TaskResult]:
    """The results of a results file, one per task id (the first line of an id wins), streamed."""
    seen: set[str] = set()
    for _, record in _lines(Path(path)):
        if record["id"] in seen:
            continue
        seen.add(record["id"])
        yield TaskResult.model_validate(record)


class ResultsFile:
    """The batch's output: one JSON line per finished task, appended and flushed as each task ends.

    Opening it takes an exclusive lock (a second batch on the same file is refused), reads which task ids
    are already in it (those are not run again) and cuts off a torn last line left by a kill, so every
    line is one whole result and every id appears once.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"the results file {os.fspath(path)!r} is a directory")
        if not self.path.parent.is_dir():
            raise ConfigError(f"the folder of the results file {os.fspath(path)!r} does not exist")
        self._handle = self.path.open("ab+")
        if fcntl is not None:
            try:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._handle.close()
                raise ConfigError(f"another batch is writing {os.fspath(path)!r}; wait for it or use another "
                                  f"--out file") from None
        cut_torn_tail(self._handle.fileno(), f"results file {self.path}")
        self.done: set[str] = set()

    def drop(self, statuses: Collection[str]) -> int:
        """Remove the results whose status is one of ``statuses`` (so those tasks run again); returns how many.

        The file is rewritten in place under the lock. A kill during the rewrite can lose result lines; with
        journals, the tasks of lost lines are replayed from them without a call."""
        if not statuses:
            return 0
        keep: list[bytes] = []
        dropped = 0
        for _, record in _lines(self.path):
            if record.get("status") in statuses:
                dropped += 1
            else:
                keep.append(_line(record))
        if dropped:
            fd = self._handle.fileno()
            os.ftruncate(fd, 0)
            self._handle.write(b"".join(keep))
            self._handle.flush()
            os.fsync(fd)
            logger.info("results file %s: %d results with status %s removed, to run again", self.path, dropped,
                        "/".join(sorted(statuses)))
        return dropped

    def previous(self) -> Iterator[TaskResult]:
        """The results already in the file (one per id), remembering their ids in :attr:`done`."""
        for _, record in _lines(self.path):
            if record["id"] in self.done:
                continue
            self.done.add(record["id"])
            try:
                yield TaskResult.model_validate(record)
            except ValueError:
                logger.warning("results file %s: a line for task %r is not a result: ignored", self.path, record["id"])

    def write(self, result: TaskResult) -> None:
        """Append one result (a whole line, flushed: a kill loses at most the line being written)."""
        if result.id in self.done:
            return
        try:
            data = _line(result.model_dump(mode="json"))
        except (ValueError, RecursionError) as exc:  # a value too deep to serialise: the error is the result
            logger.warning("results file %s: the result of task %r cannot be written: %s", self.path, result.id, exc)
            data = _line(TaskResult(id=result.id, task=result.task, status="error", seconds=result.seconds,
                                    error=f"the result could not be written: {exc}",
                                    passed=False if result.passed is not None else None).model_dump(mode="json"))
        self._handle.write(data)
        self._handle.flush()
        self.done.add(result.id)

    def close(self) -> None:
        if self._handle.closed:
            return
        try:
            self._handle.flush()
            os.fsync(self._handle.fileno())
        finally:
            self._handle.close()  # releases the lock

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
