"""Values of a call that nothing the model was given can have supplied: an identifier, an e-mail address, a date
or a clock time that neither the task nor any observation writes.

A small model asked to "apply a discount to the Maple deal" calls ``apply_discount(deal_id=1, ...)`` instead of
looking the deal up first; asked to "email Tom" it writes ``tom@example.com``; asked about "tomorrow" it guesses a
date. Such a value is invented, whatever the model's confidence: an identifier, an address or a calendar date
cannot be known from general knowledge. :func:`invented` names them:

* an integer, or a string with a digit, under a key that names an identifier (``id``, ``deal_id``, ``orderId``)
  that the text writes neither in digits nor in words («тридцать первый», "twenty-seven");
* an e-mail address the text does not write;
* a made-up value of the generated worked examples ("Orlena", "Velmora") the text does not write;
* an ISO date (``2026-03-13``) whose year the text does not write, in digits or words, nor its day as a day of a
  month: "on March 12", «двадцать первого марта», ``12.03`` and "the 12th" write the day (a 12 alone, an id or a
  phone number, does not), "today is 2026-03-10" the year a later date is counted from;
* a clock time (``14:00``) whose hour the text writes nowhere, in digits or words, on a 24- or a 12-hour clock
  ("at 3 pm" writes 15:00, «в девять» 09:00 and 21:00), nor the hour after it («в половине девятого» is 08:30,
  "a quarter to three" 02:45), unless it says noon or midnight.

A value the text writes is never named, so a call whose values come from the task or the observations passes.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from react_agent._prompts import fewshot_macros
from react_agent.models.local._numbers import spelled_numbers, spelled_spans

__all__ = ["MAX_WRITTEN_INTEGERS", "example_values", "identifier_key", "invented", "written_integers"]

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_ISO_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?")
_CLOCK = re.compile(r"([01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?")
_NOON_OR_MIDNIGHT = re.compile(r"\b(?:noon|midday|midnight|полд\w*|полноч\w*)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<!\d)\d{1,18}(?!\d)")
_MAX_DEPTH = 32
MAX_WRITTEN_INTEGERS = 100
"""More distinct whole numbers than this in a text and :func:`written_integers` gives none (no list to choose
from is shorter than the text)."""


def identifier_key(key: str) -> bool:
    """Whether an argument named ``key`` holds an identifier: ``id``, ``deal_id``, ``orderId``, ``userID``."""
    return key.lower() == "id" or key.lower().endswith("_id") or bool(re.search(r"[a-z0-9](?:Id|ID)$", key))


def written_integers(text: str) -> list[int]:
    """The whole numbers ``text`` writes in digits or spells in words, in order of first appearance (digits
    first); none when it writes more than :data:`MAX_WRITTEN_INTEGERS` of them."""
    found = list(dict.fromkeys([int(m.group(0)) for m in _DIGITS.finditer(text)] + sorted(spelled_numbers(text))))
    return found if len(found) <= MAX_WRITTEN_INTEGERS else []


def _writes_number(number: int, text: str) -> bool:
    """Whether ``text`` writes ``number`` in digits or in words."""
    if re.search(r"(?<!\d)0*" + str(abs(number)) + r"(?!\d)", text) is not None:
        return True
    return number in spelled_numbers(text)


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_RU_MONTHS = ("январ", "феврал", "март", "апрел", "ма[йяе]", "июн", "июл", "август", "сентябр", "октябр", "ноябр",
              "декабр")


def _writes_day(day: int, month: int, text: str) -> bool:
    """Whether ``text`` writes ``day`` as a day of a month: beside the month's name ("March 12", «12 марта»,
    «двенадцатого марта»), with the month in digits (``12.03``, ``03/12``), or as an ordinal ("the 12th", «12-го»);
    a 12 written alone is no day."""
    if not 1 <= month <= 12:
        return False
    name = rf"(?:{_MONTHS[month - 1]}\w*|{_RU_MONTHS[month - 1]}\w*)"
    number = rf"(?<!\d)0*{day}"
    pattern = (rf"{number}(?:st|nd|rd|th|-?го|-?е)?\s+(?:of\s+)?{name}|\b{name}\.?\s+(?:the\s+)?{number}(?!\d)"
               rf"|{number}[./]0*{month}(?!\d)|(?<!\d)0*{month}[./]0*{day}(?!\d)|{number}(?:st|nd|rd|th)\b"
               rf"|{number}-?го\b")
    if re.search(pattern, text, re.IGNORECASE):
        return True
    return any(value == day and re.match(rf"\s+{name}", text[end:], re.IGNORECASE)
               for _, end, value in spelled_spans(text))


def _invented_value(key: str, value: Any, text: str) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return identifier_key(key) and not _writes_number(value, text)
    if not isinstance(value, str):
        return False
    written = value.strip()
    if not written:
        return False
    if _EMAIL.fullmatch(written):
        return written.lower() not in text.lower()
    clock = _CLOCK.fullmatch(written)
    if clock:
        hour = int(clock.group(1))
        named = {hour, hour % 12 or 12, hour + 1, (hour + 1) % 12 or 12}  # «половина девятого» is 08:30
        return not _NOON_OR_MIDNIGHT.search(text) and not any(_writes_number(h, text) for h in named)
    date = _ISO_DATE.fullmatch(written)
    if date:
        year, month, day = (int(part) for part in date.groups())
        return not _writes_number(year, text) and not _writes_day(day, month, text)
    if identifier_key(key) and any(c.isdigit() for c in written):
        return written.lower() not in text.lower()
    return written.lower() in example_values() and written.lower() not in text.lower()


_EXAMPLE_KINDS = frozenset({"email", "phone", "url", "domain", "username", "city", "country", "company", "title",
                            "person", "query", "other"})
"""The kinds of worked-example values that are made-up names (the others are real words: a currency, a unit)."""


@functools.cache
def example_values() -> frozenset[str]:
    """The made-up values of the generated worked examples, in every language, lower-cased: a call that holds one
    the text does not write copied it from an example (``values()`` in ``prompts/fewshot/<lang>.jinja``)."""
    found: set[str] = set()
    for lang in ("en", "ru"):
        table = json.loads(str(fewshot_macros(lang).values()))
        found.update(str(v).lower() for kind, values in table.items() if kind in _EXAMPLE_KINDS for v in values)
    return frozenset(found)


def invented(args: Any, text: str) -> list[str]:
    """The paths (``deal_id``, ``to``, ``attendees[1]``) of the values in ``args`` (a call's arguments, at any
    depth) that ``text`` (the task and the observations) cannot have supplied, in the order they appear."""
    found: list[str] = []

    def visit(value: Any, key: str, path: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        if isinstance(value, Mapping):
            for name, item in value.items():
                visit(item, str(name), f"{path}.{name}" if path else str(name), depth + 1)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                visit(item, key, f"{path}[{i}]", depth + 1)
        elif _invented_value(key, value, text):
            found.append(path)

    visit(args, "", "", 0)
    return found
