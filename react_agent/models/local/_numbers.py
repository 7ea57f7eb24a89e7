"""Numbers the text writes with a scale word: «150 тысяч», «2,5 млн», "3 million" (not "40k" or "5m": a
kilometre or a metre as often as a thousand or a million).

A small model copies the digits and drops the word after them: ``amount=150`` for «на 150 тысяч рублей».
:func:`scaled_amounts` reads every such phrase of a text as ``(digits, value)`` (``(150, 150000)``);
:func:`scaled` gives a number its phrase's value when the text writes that number only as the digits of such a
phrase, never on its own, so a number the task also writes plainly is never changed.
"""

from __future__ import annotations

import math
import re

__all__ = ["scaled", "scaled_amounts"]

_SCALES: tuple[tuple[str, int], ...] = (
    (r"тыс(?:яч[аеиу]?|ячей|ячами|ячам|ячах|\.)?", 10**3),
    (r"млн\.?|миллион(?:а|ов|ам|ами|ах|е|у|ом)?", 10**6),
    (r"млрд\.?|миллиард(?:а|ов|ам|ами|ах|е|у|ом)?", 10**9),
    (r"thousands?", 10**3),
    (r"millions?|mln", 10**6),
    (r"billions?|bn", 10**9),
)
_NUMBER = r"(?<![\w.,])(\d+(?:[.,]\d+)?)"
_PHRASES = [(re.compile(_NUMBER + r"\s?(?:" + word + r")(?![\w])", re.IGNORECASE), factor)
            for word, factor in _SCALES]
_PLAIN = re.compile(_NUMBER + r"(?![\w]|[.,]\d)")


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def scaled_amounts(text: str) -> list[tuple[float, float]]:
    """``(digits, value)`` of every number ``text`` writes with a scale word, in the order written."""
    found: list[tuple[int, float, float]] = []
    for pattern, factor in _PHRASES:
        for match in pattern.finditer(text):
            digits = _number(match.group(1))
            found.append((match.start(), digits, digits * factor))
    return [(digits, value) for _, digits, value in sorted(found)]


def _plain_numbers(text: str) -> set[float]:
    """The numbers ``text`` writes with no scale word after them."""
    scaled_spans = {m.start(1) for pattern, _ in _PHRASES for m in pattern.finditer(text)}
    return {_number(m.group(1)) for m in _PLAIN.finditer(text) if m.start(1) not in scaled_spans}


def scaled(value: float, text: str, *, integer: bool) -> float | None:
    """The value of the phrase whose digits ``value`` copies («150 тысяч» for 150), or ``None`` when there is no
    such phrase, when ``text`` also writes ``value`` on its own, when the phrases disagree, or when ``integer``
    and the value is not whole."""
    values = {full for digits, full in scaled_amounts(text) if math.isclose(digits, value) and full != value}
    if len(values) != 1 or any(math.isclose(value, plain) for plain in _plain_numbers(text)):
        return None
    (full,) = values
    if integer and not float(full).is_integer():
        return None
    return full
