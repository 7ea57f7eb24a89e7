"""Times of day a task writes: "14:30", "at 3:30 pm", "9 am", «в 9 утра», «в восемь вечера», «в 15 часов», noon.

A small model leaves an optional time argument out even when the task gives the time (a reminder "on March 20 at 9
am" is created with no time). :func:`clock_times` reads the times of day a text writes, as ``HH:MM``, only where
their form says they are times: digits with a colon, an hour with am/pm or with a part of the day («утра», «дня»,
«вечера», «ночи»), «в N часов» for an hour after noon, noon and midnight; a range ("9-11 am", «с 9 до 11 утра») is
two times. Hours may be spelled ("nine am", «в девять утра»). A bare number ("at 9", «в 9») is no time: it may be a
room, a floor or a count; "5 o'clock" and «в 9 часов» are left out too, as they can be morning or evening.
"""

from __future__ import annotations

import re

from react_agent.models.local._numbers import spelled_spans

__all__ = ["clock_times", "is_clock_schema", "time_value"]

_COLON = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?![\d:])(?:\s*([ap])\.?\s?m\b\.?)?",
                    re.IGNORECASE)
_MERIDIEM = re.compile(r"(?<![\d:.,])(1[0-2]|0?[1-9])\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_DAY_PART = re.compile(r"(?<![\d:.,])(1[0-2]|0?[1-9])(?:\s+час(?:а|ов)?)?\s+(утра|вечера)\b"
                       r"|\b(?:в|к|до|около|после)\s+(1[0-2]|0?[1-9])(?:\s+час(?:а|ов)?)?\s+(дня|ночи)\b",
                       re.IGNORECASE)
"""An hour with a part of the day; «дня» and «ночи» only after a preposition («3 дня» alone is three days)."""
_AFTERNOON_HOURS = re.compile(r"\b[вВ]\s+(1[3-9]|2[0-3])\s+час(?:а|ов)?\b")
_NOON = re.compile(r"\b(?:noon|midday|полдень)\b", re.IGNORECASE)
_MIDNIGHT = re.compile(r"\b(?:midnight|полночь)\b", re.IGNORECASE)
_RANGE_START = re.compile(r"(?<![\d:.,])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(?:-|–|—|to|until|till|до|по)\s*$",
                          re.IGNORECASE)
"""The start of a range whose end carries the half of the day: "9-11 am", "from 9 to 11 pm", «с 9 до 11 утра»."""
_SCHEMA_PROBES = ("09:00", "21:30")
_NOT_TIMES = ("9", "", "2026-03-20", "2026-03-20T09:00")


def _with_digits(text: str) -> str:
    """``text`` with each number it spells below 24 written in digits ("nine am" → "9 am")."""
    out, last = [], 0
    for start, end, value in spelled_spans(text):
        if value < 24:
            out.append(text[last:start] + str(value))
            last = end
    return "".join(out) + text[last:]


def _meridiem(hour: int, half: str) -> int:
    """The 24-hour hour of ``hour`` am (``half`` "a") or pm ("p")."""
    return hour % 12 + (12 if half.lower() == "p" else 0)


def _day_part(hour: int, part: str) -> int | None:
    """The 24-hour hour of «``hour`` утра/дня/вечера/ночи», or ``None`` when the two disagree («11 вечера» is 23,
    «3 утра» 3, «2 дня» 14, «12 ночи» 0, «9 дня» nothing)."""
    part = part.lower()
    if part == "утра":
        return hour % 12 if hour <= 11 or hour == 12 else None
    if part == "дня":
        return hour if hour == 12 else hour + 12 if hour <= 5 else None
    if part == "вечера":
        return hour + 12 if 4 <= hour <= 11 else None
    return 0 if hour == 12 else hour if hour <= 5 else None  # ночи


def _range_start(text: str, end: int) -> tuple[int, int] | None:
    """The hour and minute of a range's start written just before ``end`` ("9-" of "9-11 am"), if any."""
    found = _RANGE_START.search(text[max(0, end - 16):end])
    return None if found is None else (int(found.group(1)), int(found.group(2) or 0))


def clock_times(text: str) -> frozenset[str]:
    """The times of day ``text`` writes, as ``HH:MM`` (module docstring)."""
    text = _with_digits(text)
    found: set[tuple[int, int]] = set()
    for match in _COLON.finditer(text):
        hour, minute, half = int(match.group(1)), int(match.group(2)), match.group(3)
        if half and not 1 <= hour <= 12:
            continue  # "14:00 pm"
        found.add((_meridiem(hour, half) if half else hour, minute))
    for match in _MERIDIEM.finditer(text):
        half = match.group(2)
        found.add((_meridiem(int(match.group(1)), half), 0))
        start = _range_start(text, match.start())
        if start is not None:  # the start of "9-11 am" is in the half of the day of its end
            found.add((_meridiem(start[0], half), start[1]))
    for match in _DAY_PART.finditer(text):
        part = match.group(2) or match.group(4)
        day_hour = _day_part(int(match.group(1) or match.group(3)), part)
        if day_hour is not None:
            found.add((day_hour, 0))
        start = _range_start(text, match.start(1) if match.group(1) else match.start(3))
        if start is not None:  # «с 9 до 11 утра»; «с 11 до 2 дня» starts before noon: taken as written
            start_hour = _day_part(start[0], part)
            found.add((start[0] if start_hour is None else start_hour, start[1]))
    found.update((int(match.group(1)), 0) for match in _AFTERNOON_HOURS.finditer(text))
    if _NOON.search(text):
        found.add((12, 0))
    if _MIDNIGHT.search(text):
        found.add((0, 0))
    return frozenset(f"{hour:02d}:{minute:02d}" for hour, minute in found)


def _string_node(node: object) -> dict[str, object] | None:
    """The string schema of ``node``, also of an optional one (``anyOf``/``oneOf`` of it and ``null``, or a
    ``type`` list of ``"string"`` and ``"null"``); ``None`` for anything else."""
    if not isinstance(node, dict):
        return None
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list):
            kept = [option for option in options if not (isinstance(option, dict) and option.get("type") == "null")]
            if len(kept) != 1 or len(options) > 2:
                return None
            inner = _string_node(kept[0])
            if inner is None:
                return None
            description = node.get("description", inner.get("description"))
            return {**inner, "description": description} if description is not None else inner
    kind = node.get("type")
    if kind == "string" or (isinstance(kind, list) and sorted(map(str, kind)) == ["null", "string"]):
        return node
    return None


def is_clock_schema(node: object) -> bool:
    """Whether the schema ``node`` (optional or not) is a string that holds a time of day as ``HH:MM``: its
    ``pattern`` takes "09:00" and "21:30" and refuses what is no such time ("9", "2026-03-20", a date and time), or,
    with no pattern, its ``format`` is ``time`` or its description asks for ``HH:MM``. Not with ``enum``/``const``."""
    string = _string_node(node)
    if string is None or "enum" in string or "const" in string:
        return False
    pattern = string.get("pattern")
    if isinstance(pattern, str):
        try:
            compiled = re.compile(pattern)
        except (re.error, RecursionError):
            return False
        return all(compiled.search(probe) for probe in _SCHEMA_PROBES) \
            and not any(compiled.search(other) for other in _NOT_TIMES)
    if "pattern" in string:
        return False
    if "format" in string:
        return string.get("format") == "time"
    description = string.get("description")
    return isinstance(description, str) and re.search(r"\bHH:MM\b", description) is not None


def time_value(node: object, time: str) -> str | None:
    """``time`` (``HH:MM``) in the form the clock schema ``node`` takes: as it is, or with ``:00`` seconds when only
    that matches its pattern; ``None`` when neither does."""
    string = _string_node(node)
    pattern = string.get("pattern") if string is not None else None
    if not isinstance(pattern, str):
        return time
    compiled = re.compile(pattern)
    return next((form for form in (time, time + ":00") if compiled.search(form)), None)
