"""Decomposition of a compound task into single-action subtasks, for small models (rule-based, no model call).

A 270M model copies the nearest worked example, and every example does one thing; a task that asks for two
("Register user Viacheslav with email Viacheslav@test.com and find user Ivan") gets one of them done, or a
mix of both. :func:`split_task` cuts such a task at a coordinating conjunction (``and``, ``then``; ``и``,
``затем``, ``потом``) when the part after it starts with an imperative verb, so "… with a base of 10 and
height of 5" stays whole. :func:`run_subtasks` runs an agent on each part in turn (each part sees the same
tools; side effects of earlier parts are in place) and joins the answers.

The verbs are a lexicon of common imperatives, not tool names, so the rule is the same for any tool set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["VERBS", "run_subtasks", "split_task"]

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
