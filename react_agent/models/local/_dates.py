"""Days a task names relative to today: «завтра», "tomorrow", «в пятницу», "on Friday".

A small model that has looked today's date up (``get_current_date`` → ``2026-03-04``) and is asked for "tomorrow" or
"Friday" copies today's date into its call: it cannot count days. :func:`relative_offset` tells how many days after
a given date the task's one relative day falls, or nothing when the task is not that plain: two relative days (also
«сегодняшнюю встречу на завтра»: today's meeting, moved to tomorrow), a modifier that makes the weekday ambiguous
("next Friday", «в прошлую пятницу»), a date of its own (a month name, digits with a dot or a dash), or the weekday
of the given date itself ("on Wednesday", asked on a Wednesday).
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["ISO_DATE", "relative_offset"]

ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
"""A calendar date written as ``YYYY-MM-DD``."""

_DAYS = {
    "today": 0, "tomorrow": 1, "yesterday": -1, "day after tomorrow": 2, "day before yesterday": -2,
    "сегодня": 0, "завтра": 1, "вчера": -1, "послезавтра": 2, "позавчера": -2,
}
_DAY_ADJECTIVES = (
    (re.compile(r"\bпослезавтрашн\w*", re.IGNORECASE), 2), (re.compile(r"\bзавтрашн\w*", re.IGNORECASE), 1),
    (re.compile(r"\bсегодняшн\w*|\btonight\b", re.IGNORECASE), 0), (re.compile(r"\bвчерашн\w*", re.IGNORECASE), -1),
)
"""Words that name a day as well: «сегодняшнюю встречу» (today's), "tonight"."""
_WEEKDAYS = (
    (r"monday|понедельник\w*", 0), (r"tuesday|вторник\w*", 1), (r"wednesday|сред[ауы]", 2),
    (r"thursday|четверг\w*", 3), (r"friday|пятниц[аеуы]", 4), (r"saturday|суббот[аеуы]", 5),
    (r"sunday|воскресень[еяю]", 6),
)
_AMBIGUOUS = re.compile(
    r"\b(?:next|last|previous|this|coming|past|every|each|следующ\w*|прошл\w*|эт[оуиа]\w*|ближайш\w*|кажд\w*)\b"
    r"|\b(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|январ\w*|феврал\w*|март\w*|апрел\w*|ма[йяе]|июн\w*|июл\w*|август\w*|сентябр\w*|октябр\w*|ноябр\w*"
    r"|декабр\w*)\b"
    r"|\d+[./-]\d+",
    re.IGNORECASE)
_DAY_WORDS = re.compile(r"\b(?:" + "|".join(sorted((re.escape(k) for k in _DAYS), key=len, reverse=True)) + r")\b",
                        re.IGNORECASE)
_WEEKDAY_WORDS = re.compile(r"\b(?:" + "|".join(f"(?P<d{n}>{pattern})" for pattern, n in _WEEKDAYS) + r")\b",
                            re.IGNORECASE)


def relative_offset(task: str, today: dt.date) -> int | None:
    """How many days after ``today`` the one relative day ``task`` names falls (``1`` for "tomorrow", ``2`` for
    «в пятницу» on a Wednesday), or ``None`` when the task names none, more than one, or one that is ambiguous
    (module docstring)."""
    if _AMBIGUOUS.search(task):
        return None
    found: set[int] = set()
    for match in _DAY_WORDS.finditer(task):
        found.add(_DAYS[match.group(0).lower()])
    found.update(offset for pattern, offset in _DAY_ADJECTIVES if pattern.search(task))
    for match in _WEEKDAY_WORDS.finditer(task):
        weekday = next(int(name[1:]) for name, value in match.groupdict().items() if value)
        ahead = (weekday - today.weekday()) % 7
        if ahead == 0:
            return None  # "on Wednesday" asked on a Wednesday: today or a week ahead
        found.add(ahead)
    return found.pop() if len(found) == 1 else None
