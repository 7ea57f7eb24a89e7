"""The project's own development suites: realistic tool-calling tasks in Russian and English.

* Tool sets (``crm``, ``tickets``, ``calendar``, ``files``, ``messaging``, ``search``): typed tools over an
  in-memory :class:`Store` made fresh per run, described in the task's language (``strings/<lang>.json``),
  seeded from ``data/<lang>.json``; every successful call is logged, so a run's outcome can be checked.
* Tasks (``tasks_ru.jsonl``, ``tasks_en.jsonl``): the text, the tool sets offered, the expected first call
  (``null``: no tool is needed), the calls that follow for two-step tasks and what the answer must contain.
* The judge (:mod:`bench.suites.judge`) and the runner (``python -m bench.suites``, :mod:`bench.suites.runner`).

``oracle_cases(lang)`` yields each task's text, the JSON schemas of its tools and its expected first call,
for checks that feed the correct call through a pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from typing import Any, NamedTuple

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, field_validator

from bench.suites import calendar, crm, files, messaging, search, tickets
from bench.suites._base import LANGS, Call, Lang, Store, SuiteToolError, check_lang
from bench.suites.judge import ExpectedCall

__all__ = ["LANGS", "TOOLSETS", "Call", "ExpectedCall", "Lang", "OracleCase", "Store", "SuiteToolError", "Task",
           "load_tasks", "make_tools", "markdown", "oracle_cases", "tool_schemas", "tool_specs"]

TOOLSETS: dict[str, Callable[[Store], list[BaseTool]]] = {
    module.NAME: module.make_tools for module in (crm, tickets, calendar, files, messaging, search)
}
"""The tool sets by name: each makes its tools bound to a store."""


def markdown(data: dict[str, Any]) -> str:
    """The section of ``docs/benchmarks.md`` for ``bench/results/suites.json`` (:func:`.runner.markdown`)."""
    from bench.suites import runner

    return runner.markdown(data)


class Task(BaseModel):
    """One task of a suite (one line of ``tasks_<lang>.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str
    toolsets: tuple[str, ...]
    expected: ExpectedCall | None
    """The right first call; ``None`` when the task needs no tool (the right first decision is FINISH)."""
    then: tuple[ExpectedCall, ...] = ()
    """The calls that must follow the first, in order (two-step tasks)."""
    answer_contains: tuple[str, ...] = ()
    """Texts the final answer must contain."""
    tags: tuple[str, ...] = ()

    @field_validator("toolsets")
    @classmethod
    def _known_toolsets(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [name for name in value if name not in TOOLSETS]
        if unknown or not value:
            raise ValueError(f"unknown tool sets {unknown}; known: {sorted(TOOLSETS)}")
        return value

    @property
    def calls(self) -> tuple[ExpectedCall, ...]:
        """Every expected call in order (empty for a task that needs no tool)."""
        return () if self.expected is None else (self.expected, *self.then)

    @property
    def kind(self) -> str:
        """``none`` (no tool), ``one`` (one call) or ``multi`` (two calls or more)."""
        return "none" if self.expected is None else ("multi" if self.then else "one")


def load_tasks(lang: str) -> list[Task]:
    """The tasks of ``lang`` (``ru`` or ``en``), validated; a ``ValueError`` names a broken line."""
    known = check_lang(lang)
    source = resources.files("bench.suites") / f"tasks_{known}.jsonl"
    tasks: list[Task] = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.model_validate(json.loads(line)))
        except ValueError as exc:
            raise ValueError(f"tasks_{known}.jsonl line {number}: {exc}") from exc
    ids = [task.id for task in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"tasks_{known}.jsonl: duplicate ids {duplicates}")
    return tasks


def make_tools(toolsets: Sequence[str], store: Store) -> list[BaseTool]:
    """The tools of ``toolsets``, in order, bound to ``store``."""
    return [tool for name in toolsets for tool in TOOLSETS[name](store)]


def tool_specs(tools: Sequence[BaseTool]) -> list[dict[str, Any]]:
    """Each tool as a function spec: ``{"name", "description", "parameters"}`` (a JSON schema), as LangChain's
    ``convert_to_openai_tool`` renders it."""
    return [dict(convert_to_openai_tool(tool)["function"]) for tool in tools]


def tool_schemas(tools: Sequence[BaseTool]) -> dict[str, dict[str, Any]]:
    """``{tool name: JSON schema of its arguments}``: what the judge reads defaults and names from."""
    return {spec["name"]: spec["parameters"] for spec in tool_specs(tools)}


class OracleCase(NamedTuple):
    """A task's text, its tools' specs and its expected first call (``None``: no call)."""

    task_text: str
    tool_specs: list[dict[str, Any]]
    expected_call: dict[str, Any] | None
    """``{"tool", "arguments"}`` plus, where the task has them, ``accept``/``optional``/``contains``/``free``
    (:class:`~bench.suites.judge.ExpectedCall`)."""


def oracle_cases(lang: str) -> Iterator[OracleCase]:
    """Every task of ``lang`` as an :class:`OracleCase` (a ``(task_text, tool_specs, expected_call)`` tuple)."""
    for task in load_tasks(lang):
        tools = make_tools(task.toolsets, Store.fresh(lang))
        expected = None if task.expected is None else task.expected.model_dump(exclude_defaults=True)
        if expected is not None:
            expected.setdefault("arguments", {})
        yield OracleCase(task.text, tool_specs(tools), expected)
