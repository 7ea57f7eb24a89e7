"""Durations a text writes («полтора часа», «полчаса», "an hour and a half", "2 hours 15 minutes") and the
argument that holds one in a unit its name or description states (``duration_minutes``, "Length in minutes").

A small model copies the number of a duration and keeps the text's unit (``duration_minutes=1.5`` for «полтора
часа»), or misreads a duration spelled in words. :func:`duration_phrases` reads every duration of a text in
seconds; :func:`in_unit` gives an argument the one duration the text writes, in the argument's unit, when the
argument is the only one of its object that holds a duration and the text writes exactly one. A clock time
(«в 9 часов», "at 5 hours") is no duration.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

from react_agent.models.local._numbers import spelled_spans

__all__ = ["argument_unit", "duration_phrases", "in_unit"]

_UNITS: tuple[tuple[str, int], ...] = (
    (r"seconds?|secs?|секунд[аыу]?|сек\.?", 1),
    (r"minutes?|mins?|минут[аыу]?|мин\.?", 60),
    (r"hours?|hrs?|час(?:а|ов|у)?", 3600),
    (r"days?|день|дня|дней|сутки|суток", 86400),
    (r"weeks?|недел[яиюь]|недель", 604800),
)
_UNIT = "|".join(f"(?P<u{i}>{pattern})" for i, (pattern, _) in enumerate(_UNITS))
_AFTER = re.compile(r"(?:[ \t]*|-)(?:" + _UNIT + r")(?!\w)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\w.,:])(\d+(?:[.,]\d+)?)(?![\w:]|[.,]\d)")
_WORD_BEFORE = re.compile(r"(?<!\w)(an?|полтора|полторы|одну|одни)(?!\w)", re.IGNORECASE)
_HALF_OF = re.compile(r"(?<!\w)(?:half\s+an?[ \t]+|пол-?)(?:" + _UNIT + r")(?!\w)", re.IGNORECASE)
_AND_A_HALF = re.compile(r"[ \t]+and\s+a\s+half(?!\w)", re.IGNORECASE)
_BARE = re.compile(r"(?<!\w)на[ \t]+(?:" + _UNIT + r")(?!\w)", re.IGNORECASE)  # «на час», «на неделю»
_CLOCK_BEFORE = re.compile(r"(?:(?<!\w)(?:в|к|с|до|после|около|at|by|until|till)[ \t]+)$", re.IGNORECASE)
_PER_BEFORE = re.compile(r"(?<!\w)(?:twice|once|times|per)[ \t]+$", re.IGNORECASE)
_BEFORE_WINDOW = 16
"""How far before a quantity the words that make it a clock time or a frequency are looked for (a bounded window:
a long tool result full of numbers is read in linear time)."""
_JOIN = re.compile(r"[ \t]*(?:,|and|и)?[ \t]*$", re.IGNORECASE)
_WORD_VALUES = {"a": 1, "an": 1, "полтора": 1.5, "полторы": 1.5, "одну": 1, "одни": 1}
"""Quantity words no number reader gives: articles, «полтора», and the forms of «один» that only the optional
dictionary would put back to it («одну минуту», «одни сутки»); "one", «один», «одна» are number words."""
_UNIT_NAMES: tuple[tuple[frozenset[str], int], ...] = (
    (frozenset({"second", "seconds", "sec", "secs", "секунд", "секундах", "секунды"}), 1),
    (frozenset({"minute", "minutes", "min", "mins", "минут", "минутах", "минуты"}), 60),
    (frozenset({"hour", "hours", "hr", "hrs", "часов", "часах", "часы"}), 3600),
    (frozenset({"day", "days", "дней", "днях", "дни", "сутках"}), 86400),
    (frozenset({"week", "weeks", "недель", "неделях", "недели"}), 604800),
)
_NAME_TOKEN = re.compile(r"[a-zа-яё]+|[A-ZА-ЯЁ][a-zа-яё]*")
_DESCRIPTION_UNIT = re.compile(r"(?<!\w)(?:in|в)[ \t]+(\w+)", re.IGNORECASE)


def _unit_seconds(match: re.Match[str]) -> int:
    return next(seconds for i, (_, seconds) in enumerate(_UNITS) if match.group(f"u{i}") is not None)


@functools.lru_cache(maxsize=16)
def _written_numbers(text: str) -> tuple[tuple[int, int, float], ...]:
    """``(start, end, value)`` of every number ``text`` writes in digits or in words. Cached: a decision asks it of
    the same text for the durations and for the numbers outside them."""
    return (*((m.start(), m.end(), float(m.group(1).replace(",", "."))) for m in _DIGITS.finditer(text)),
            *((start, end, float(value)) for start, end, value in spelled_spans(text)))


def _single(text: str) -> list[tuple[int, int, float]]:
    """``(start, end, seconds)`` of every quantity-and-unit phrase of ``text`` that is not a clock time."""
    quantities: list[tuple[int, int, float]] = [
        *_written_numbers(text),
        *((m.start(), m.end(), float(_WORD_VALUES[m.group(1).lower()])) for m in _WORD_BEFORE.finditer(text)),
    ]
    found: list[tuple[int, int, float]] = []
    for start, end, value in quantities:
        before = text[max(0, start - _BEFORE_WINDOW):start]
        if _PER_BEFORE.search(before) and value == 1:
            continue  # "twice a day", "once a week": a frequency, not a duration
        half = _AND_A_HALF.match(text, end)  # "one and a half hours"
        unit = _AFTER.match(text, half.end() if half else end)
        if unit is None:
            continue
        stop = unit.end()
        if half is None and (after := _AND_A_HALF.match(text, stop)) is not None:  # "an hour and a half"
            half, stop = after, after.end()
        per = _unit_seconds(unit)
        if per == 3600 and _CLOCK_BEFORE.search(before):
            continue  # «в 9 часов», "at 5 hours": a clock time
        found.append((start, stop, (value + (0.5 if half else 0)) * per))
    for m in _HALF_OF.finditer(text):
        found.append((m.start(), m.end(), 0.5 * _unit_seconds(m)))
    for m in _BARE.finditer(text):
        found.append((m.start(), m.end(), float(_unit_seconds(m))))
    return _outermost(found)


def _outermost(found: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """``found`` without the phrases inside a longer one, in text order."""
    found.sort(key=lambda f: (f[0], -f[1]))
    kept: list[tuple[int, int, float]] = []
    for phrase in found:
        if kept and phrase[0] < kept[-1][1]:
            continue
        kept.append(phrase)
    return kept


def duration_phrases(text: str) -> list[tuple[int, int, float]]:
    """``(start, end, seconds)`` of every duration ``text`` writes, in the order written; the parts of one duration
    ("2 hours 15 minutes", «1 час 30 минут») count as one."""
    merged: list[tuple[int, int, float]] = []
    for start, end, seconds in _single(text):
        if merged and _JOIN.match(text[merged[-1][1]:start]) and seconds < _smallest_unit(merged[-1]):
            merged[-1] = (merged[-1][0], end, merged[-1][2] + seconds)
        else:
            merged.append((start, end, seconds))
    return merged


def _numbers_outside(text: str, start: int, end: int) -> list[float]:
    """The numbers ``text`` writes in digits or words outside ``text[start:end]``."""
    return [value for position, _, value in _written_numbers(text) if not start <= position < end]


def _smallest_unit(phrase: tuple[int, int, float]) -> float:
    """The unit a phrase ends in, as the largest unit that divides its seconds (3600 for "2 hours", 60 for "2 hours
    15 minutes"): the next part of the same duration is smaller than it."""
    seconds = phrase[2]
    return next((unit for _, unit in reversed(_UNITS) if seconds % unit == 0), 1)


def argument_unit(name: str, node: Mapping[str, Any]) -> int | None:
    """The unit in seconds that an argument's name (``duration_minutes``, ``timeoutSeconds``) or else its
    description ("Length in minutes", «Длительность в минутах») states, or ``None`` when neither states exactly
    one."""
    tokens = {token.lower() for token in _NAME_TOKEN.findall(name)}
    units = {seconds for words, seconds in _UNIT_NAMES if tokens & words}
    if not units:
        description = node.get("description")
        if isinstance(description, str):
            said = {m.group(1).lower() for m in _DESCRIPTION_UNIT.finditer(description)}
            units = {seconds for words, seconds in _UNIT_NAMES if said & words}
    return units.pop() if len(units) == 1 else None


def in_unit(value: float, unit: int, text: str, node: Mapping[str, Any], *, integer: bool) -> float | None:
    """The one duration ``text`` writes, in ``unit`` seconds, when it differs from ``value`` and fits ``node``
    (a whole number for ``integer``, within ``minimum``/``maximum``); ``None`` when the text writes no duration
    or several, when ``value`` already is that duration, or when the text writes ``value`` outside the duration
    (``10`` in "the past 10 and 15 days": the value of another call)."""
    phrases = duration_phrases(text)
    if len(phrases) != 1:
        return None
    start, end, seconds = phrases[0]
    wanted = seconds / unit
    if math.isclose(wanted, value) or (integer and not float(wanted).is_integer()):
        return None
    if any(math.isclose(value, number) for number in _numbers_outside(text, start, end)):
        return None  # the text writes the value elsewhere: another quantity, or one of several calls
    low, high = node.get("minimum"), node.get("maximum")
    if (isinstance(low, (int, float)) and wanted < low) or (isinstance(high, (int, float)) and wanted > high):
        return None
    return wanted
