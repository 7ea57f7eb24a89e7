"""Decomposition of a compound task for small models: split it into single-action parts and run them in turn.

A small local model completes a task that needs one tool call far more often than
one that needs two. With a compound task ("Register user Viacheslav with email Viacheslav@test.com and find user
Ivan") split at its conjunctions, each part is a one-tool task::

    from react_agent import ReactAgent
    from react_agent.decompose import run_decomposed
    from react_agent.models import LocalChatModel

    agent = ReactAgent(LocalChatModel(), tools, prompts="en-compact", examples=examples)
    result = run_decomposed(agent, "Register user Viacheslav with email Viacheslav@test.com and find user Ivan")
    result.status, result.output   # one AgentResult for both parts

The split is rule-based (no model call; ``split_task``): a cut at ``and``/``then`` (``и``/``затем``/``потом``)
followed by an imperative verb, so "a base of 10 and height of 5" stays whole. Parts run in order; the first
part that does not finish ends the run. ``react-agent demo`` does the same for the local model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from react_agent._types import AgentResult, Usage

__all__ = ["VERBS", "arun_decomposed", "combine_results", "run_decomposed", "run_subtasks", "split_task"]

VERBS: dict[str, frozenset[str]] = {
    "en": frozenset(
        [
            "add",
            "book",
            "buy",
            "calculate",
            "cancel",
            "check",
            "compute",
            "convert",
            "count",
            "create",
            "delete",
            "find",
            "fetch",
            "get",
            "list",
            "look",
            "make",
            "open",
            "read",
            "register",
            "remove",
            "save",
            "search",
            "send",
            "show",
            "sort",
            "tell",
            "translate",
            "update",
            "write",
        ]
    ),
    "ru": frozenset(
        [
            "добавь",
            "забронируй",
            "купи",
            "вычисли",
            "посчитай",
            "отмени",
            "проверь",
            "преобразуй",
            "создай",
            "удали",
            "найди",
            "получи",
            "покажи",
            "открой",
            "прочитай",
            "прочти",
            "зарегистрируй",
            "сохрани",
            "отправь",
            "отсортируй",
            "скажи",
            "переведи",
            "обнови",
            "запиши",
            "выведи",
            "ищи",
            "поищи",
        ]
    ),
}
"""Imperative verbs that may start a subtask, per language."""

_CONJUNCTIONS = {
    "en": r",?\s+(?:and\s+then|and|then)\s+|;\s*|,\s+then\s+",
    "ru": r",?\s+(?:и\s+затем|и\s+потом|а\s+затем|а\s+потом|затем|потом|и)\s+|;\s*",
}


def split_task(task: str, *, lang: str = "en") -> list[str]:
    """The subtasks of ``task``: cut at each conjunction followed by an imperative verb of :data:`VERBS`
    (``lang``: ``en`` or ``ru``); a task with no such cut is returned whole, as a one-item list. Each part
    keeps its words; its first letter is capitalised."""
    verbs = VERBS.get(lang)
    if verbs is None:
        raise ValueError(f"split_task: lang must be one of {', '.join(VERBS)}, got {lang!r}")
    parts: list[str] = []
    start = 0
    for match in re.finditer(_CONJUNCTIONS[lang], task, re.IGNORECASE):
        rest = task[match.end() :].split(maxsplit=1)
        left = task[start : match.start()].strip()
        if rest and rest[0].casefold().strip(",.;:!?") in verbs and len(left.split()) >= 2:
            parts.append(left)
            start = match.end()
    parts.append(task[start:].strip())
    return [p[:1].upper() + p[1:] for p in parts if p]


def run_subtasks(agent: Any, task: str, *, lang: str = "en", **run_options: Any) -> list[Any]:
    """Run ``agent`` on each subtask of ``task`` (:func:`split_task`) in turn; the results, in order.
    ``run_options`` go to each ``agent.run`` call."""
    subtasks: Sequence[str] = split_task(task, lang=lang)
    return [agent.run(sub, **run_options) for sub in subtasks]


def combine_results(results: Sequence[AgentResult]) -> AgentResult:
    """The results of a task's parts as one result: the status of the first part that did not finish (else
    ``finished``), the answers joined by a space, every step, the model calls and token usage summed, the
    first error. One result is returned as it is; an empty sequence is a ``ValueError``."""
    if not results:
        raise ValueError("combine_results needs at least one result")
    if len(results) == 1:
        return results[0]
    status = next((r.status for r in results if r.status != "finished"), "finished")
    return AgentResult(
        output=" ".join(r.output for r in results if r.output),
        status=status,
        steps=[step for r in results for step in r.steps],
        llm_calls=sum(r.llm_calls for r in results),
        usage=sum((r.usage for r in results), Usage()),
        error=next((r.error for r in results if r.error), None),
        output_object=results[-1].output_object,
    )


def run_decomposed(agent: Any, task: str, *, lang: str = "en", **run_options: Any) -> AgentResult:
    """Run ``agent`` on the parts of ``task`` (:func:`split_task`) in turn and return one result
    (:func:`combine_results`). A part that does not finish ends the run: the parts after it are not started
    (their actions may depend on it). ``run_options`` go to each ``agent.run`` call; a task with one part is
    one ordinary run."""
    results: list[AgentResult] = []
    for part in split_task(task, lang=lang):
        results.append(agent.run(part, **run_options))
        if results[-1].status != "finished":
            break
    return combine_results(results)


async def arun_decomposed(agent: Any, task: str, *, lang: str = "en", **run_options: Any) -> AgentResult:
    """:func:`run_decomposed` with ``agent.arun``."""
    results: list[AgentResult] = []
    for part in split_task(task, lang=lang):
        results.append(await agent.arun(part, **run_options))
        if results[-1].status != "finished":
            break
    return combine_results(results)
