"""Batch tasks: what one line of a tasks file holds, and how tasks are read (streamed, never all at once)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from react_agent.errors import TaskError

__all__ = ["SUITES", "Checks", "ExpectedCall", "Task", "TaskError", "iter_tasks", "journal_name", "load_tasks",
           "suite_path"]

SUITES = ("seed_en", "seed_ru")
"""The suites shipped with the package: the demo tasks and more on the demo tools, with checks."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExpectedCall(_Frozen):
    """A tool call the run must make: ``tool`` with at least these ``args`` (other arguments may differ)."""

    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class Checks(_Frozen):
    """What a task's result must satisfy to count as a success (every given check must pass).

    - ``status``: the run's status (default ``"finished"``; ``None`` accepts any status).
    - ``answer``: text the final answer must contain (case-insensitive), or a list of such texts.
    - ``answer_regex``: a regular expression the final answer must match (``re.search``).
    - ``tool_calls``: tool calls the run must make, in this order (other calls may come in between).
    - ``predicate``: ``"module:function"``, called as ``function(result, task)`` where ``result`` is the
      :class:`~react_agent.AgentResult`; it returns a bool, or ``(bool, detail text)``.
    """

    status: str | None = "finished"
    answer: str | list[str] | None = None
    answer_regex: str | None = None
    tool_calls: list[ExpectedCall] = Field(default_factory=list)
    predicate: str | None = None

    @field_validator("answer_regex")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from exc
        return value

    @field_validator("predicate")
    @classmethod
    def _predicate(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", value):
            raise ValueError(f"expected 'module:function', got {value!r}")
        return value


class Task(_Frozen):
    """One task of a batch: its ``id`` (unique in the batch), the ``task`` text, optional ``session`` values
    (``$session.<key>`` of :class:`~react_agent.PlanAndExecuteAgent`) and optional ``checks``."""

    id: str = Field(min_length=1)
    task: str = Field(min_length=1)
    session: dict[str, Any] = Field(default_factory=dict)
    checks: Checks | None = None

    @field_validator("task")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the task text is blank")
        return value


def default_id(text: str, session: Mapping[str, Any]) -> str:
    """A stable id from the task text and session values: ``t-`` and 12 hex digits of their sha256."""
    payload = json.dumps([text, dict(session)], sort_keys=True, ensure_ascii=False, default=str)
    return "t-" + hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def journal_name(task_id: str) -> str:
    """The journal file name of a task: ``<id>.jsonl`` when the id is a safe file name, else a cleaned id
    plus a hash of the id (different ids never share a file)."""
    if _SAFE_NAME.fullmatch(task_id):
        return f"{task_id}.jsonl"
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id)[:60].lstrip(".")
    return f"{cleaned}-{hashlib.sha256(task_id.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}.jsonl"


def _to_task(item: Any, where: str) -> Task:
    if isinstance(item, Task):
        return item
    if isinstance(item, str):
        item = {"task": item}
    if not isinstance(item, Mapping):
        raise TaskError(f"{where}: a task must be a string or an object with 'task', got {type(item).__name__}")
    data = dict(item)
    if "task" not in data:
        raise TaskError(f"{where}: the task object has no 'task' field (keys: {', '.join(sorted(map(str, data)))})")
    if data.get("id") is None:
        session = data.get("session") or {}
        data["id"] = default_id(str(data["task"]), session if isinstance(session, Mapping) else {})
    elif isinstance(data["id"], int) and not isinstance(data["id"], bool):
        data["id"] = str(data["id"])
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in exc.errors())
        raise TaskError(f"{where}: invalid task: {problems}") from None


def iter_tasks(tasks: Iterable[Any] | str | os.PathLike[str]) -> Iterator[Task]:
    """The tasks, one at a time, with unique ids.

    ``tasks`` is a path of a JSONL file (one string or object per line; blank lines and lines starting with
    ``#`` are skipped) or an iterable of strings, mappings and :class:`Task` s. A task without an ``id``
    gets :func:`default_id`; a repeated default id gets ``-2``, ``-3``... in order of appearance; a repeated
    explicit id is a :class:`TaskError`.
    """
    seen: set[str] = set()
    for where, item in _items(tasks):
        task = _to_task(item, where)
        explicit = not (isinstance(item, Mapping) and item.get("id") is None) and not isinstance(item, str)
        if task.id in seen:
            if explicit:
                raise TaskError(f"{where}: the task id {task.id!r} is used twice; ids must be unique")
            number = 2
            while f"{task.id}-{number}" in seen:
                number += 1
            task = task.model_copy(update={"id": f"{task.id}-{number}"})
        seen.add(task.id)
        yield task


def load_tasks(tasks: Iterable[Any] | str | os.PathLike[str]) -> list[Task]:
    """:func:`iter_tasks` as a list (for small task sets; a batch streams them)."""
    return list(iter_tasks(tasks))


def _task_text(raw: bytes, number: int) -> str | None:
    """The text of line ``number`` of a tasks file, or None for a blank or ``#`` comment line.

    A byte-order mark (as Windows editors write) is no part of the first task. Raises ``UnicodeDecodeError``.
    """
    text = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
    return text if text and not text.startswith("#") else None


def count_tasks(path: str | os.PathLike[str]) -> int | None:
    """How many lines of a tasks file hold a task (None if it cannot be read); the reader checks each one."""
    count = 0
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    count += _task_text(raw, number) is not None
                except UnicodeDecodeError:
                    count += 1  # the reader refuses it, naming the line
    except OSError:
        return None
    return count


def _items(tasks: Iterable[Any] | str | os.PathLike[str]) -> Iterator[tuple[str, Any]]:
    if isinstance(tasks, (str, os.PathLike)):
        path = Path(tasks)
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise TaskError(f"cannot read the tasks file {os.fspath(tasks)!r}: {exc.strerror}") from exc
        with handle:
            for number, raw in enumerate(handle, 1):
                try:
                    text = _task_text(raw, number)
                except UnicodeDecodeError as exc:
                    raise TaskError(f"{path.name} line {number}: not UTF-8 text ({exc.reason} at byte {exc.start}): "
                                    "save the file as UTF-8") from None
                if text is None:
                    continue
                try:
                    value = json.loads(text)
                except ValueError as exc:
                    raise TaskError(f"{path.name} line {number}: not JSON ({exc})") from None
                yield f"{path.name} line {number}", value
        return
    for number, item in enumerate(tasks, 1):
        yield f"task {number}", item


def suite_path(name: str) -> Path:
    """The JSONL file of a shipped suite (:data:`SUITES`), e.g. ``suite_path("seed_en")``."""
    if name not in SUITES:
        raise TaskError(f"unknown suite {name!r}: shipped suites are {', '.join(SUITES)}")
    return Path(__file__).resolve().parent / "suites" / f"{name}.jsonl"
