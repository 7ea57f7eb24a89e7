"""Numbers the text writes with a scale word: «150 тысяч», «2,5 млн», "3 million" (not "40k" or "5m": a
kilometre or a metre as often as a thousand or a million).

A small model copies the digits and drops the word after them: ``amount=150`` for «на 150 тысяч рублей».
:func:`scaled_amounts` reads every such phrase of a text as ``(digits, value)`` (``(150, 150000)``);
:func:`scaled` gives a number its phrase's value when the text writes that number only as the digits of such a
phrase, never on its own, so a number the task also writes plainly is never changed.

:func:`spelled_numbers` reads the whole numbers below a thousand a text spells in words, English or Russian,
cardinal or ordinal («тридцать первый», "twenty-seven"), for the techniques that ask whether a text writes a
number (:mod:`._invented`).
"""

from __future__ import annotations

import functools
import math
import re

__all__ = ["scaled", "scaled_amounts", "spelled_numbers"]

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


def _table(words: str, start: int = 0, factor: int = 1) -> dict[str, int]:
    """``{word: its number}`` for space-separated number words counted from ``start`` in steps of ``factor``."""
    return {word: factor * i for i, word in enumerate(words.split(), start)}


_EN_WORDS: dict[str, int] = {
    **_table("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
             "seventeen eighteen nineteen"),
    **_table("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"),
    **_table("twenty thirty forty fifty sixty seventy eighty ninety", 2, 10),
    **_table("twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth", 2, 10),
}
_RU_WORDS: dict[str, int] = {
    **_table("ноль один два три четыре пять шесть семь восемь девять десять одиннадцать двенадцать тринадцать "
             "четырнадцать пятнадцать шестнадцать семнадцать восемнадцать девятнадцать"),
    **_table("нулевой первый второй третий четвёртый пятый шестой седьмой восьмой девятый десятый одиннадцатый "
             "двенадцатый тринадцатый четырнадцатый пятнадцатый шестнадцатый семнадцатый восемнадцатый "
             "девятнадцатый"),
    **_table("двадцать тридцать сорок пятьдесят шестьдесят семьдесят восемьдесят девяносто", 2, 10),
    **_table("двадцатый тридцатый сороковой пятидесятый шестидесятый семидесятый восьмидесятый девяностый", 2, 10),
    **_table("сто двести триста четыреста пятьсот шестьсот семьсот восемьсот девятьсот", 1, 100),
    **_table("сотый двухсотый трёхсотый четырёхсотый пятисотый шестисотый семисотый восьмисотый девятисотый", 1, 100),
    "одна": 1, "одно": 1, "две": 2,
}
_RU_TABLE = {word.replace("ё", "е"): value for word, value in _RU_WORDS.items()}
_CYRILLIC = re.compile(r"[а-яё]+")
_HUNDRED = frozenset({"hundred", "hundredth"})
_WORD_TOKEN = re.compile(r"[A-Za-zА-Яа-яЁё]+")
_JOIN = re.compile(r"[\s-]*(?:and\s+)?")


def _word_value(word: str) -> int | None:
    """The number a number word stands for (any case of a Russian one, with the dictionary installed)."""
    low = word.lower()
    if low in _EN_WORDS:
        return _EN_WORDS[low]
    low = low.replace("ё", "е")
    if low in _RU_TABLE:
        return _RU_TABLE[low]
    if not _CYRILLIC.fullmatch(low):
        return None
    from react_agent.models.local._morphology import normal_forms

    return next((_RU_TABLE[form] for form in map(_plain_e, normal_forms(low)) if form in _RU_TABLE), None)


def _plain_e(word: str) -> str:
    return word.replace("ё", "е")


@functools.lru_cache(maxsize=16)
def spelled_numbers(text: str) -> frozenset[int]:
    """The whole numbers below a thousand that ``text`` spells in words, in English or Russian, cardinal or
    ordinal: "twenty-seven", "two hundred and five", «тридцать первый», «ста двадцати» (27, 205, 31, 120).
    Cached: one decision asks it of the same text for every value it checks."""
    found: set[int] = set()
    total: int | None = None
    end = 0
    for match in _WORD_TOKEN.finditer(text):
        word = match.group(0)
        joined = total is not None and _JOIN.fullmatch(text[end:match.start()]) is not None
        value = None if word.lower() in _HUNDRED else _word_value(word)
        if total is not None and joined and word.lower() in _HUNDRED and total < 10:
            total *= 100
        elif total is not None and joined and value is not None and _adds(total, value):
            total += value
        elif word.lower() == "and" and total is not None:
            continue  # "two hundred and five": the gap check of the next word decides
        else:
            if total is not None:
                found.add(total)
            total = value
        end = match.end()
    if total is not None:
        found.add(total)
    return frozenset(found)


def _adds(total: int, value: int) -> bool:
    """Whether ``value`` continues a number spelled as ``total`` so far («сто» + «двадцать», "thirty" + "one")."""
    if total % 100 == 0 and value < 100:
        return True
    return total % 10 == 0 and total % 100 >= 20 and value < 10
