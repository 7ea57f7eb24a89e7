"""Numbers the text writes with a scale word: «150 тысяч», «2,5 млн», "3 million", «ста тысячах», "two hundred
thousand", «полтора миллиона» (not "40k" or "5m": a kilometre or a metre as often as a thousand or a million).

A small model reads only part of such a phrase: it copies the digits and drops the word after them
(``amount=150`` for «на 150 тысяч рублей»), keeps the scale word and drops the number spelled before it
(``amount=1000`` for «в ста тысячах рублей»), or loses zeros (``amount=10000``). :func:`scaled_amounts` reads
every such phrase of a text as ``(multiplier, value)`` (``(150, 150000)``, ``(100, 100000)``); :func:`scaled`
gives a number its phrase's value when the number is such a part of the phrase and the text never writes that
number on its own, so a number the task also writes plainly is never changed.

:func:`spelled_numbers` reads the whole numbers below a thousand a text spells in words, English or Russian,
cardinal or ordinal («тридцать первый», "twenty-seven"), for the techniques that ask whether a text writes a
number (:mod:`._invented`).
"""

from __future__ import annotations

import functools
import math
import re

__all__ = ["scaled", "scaled_amounts", "spelled_numbers", "spelled_spans"]

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
_SCALE_AFTER = [(re.compile(r"[ \t]+(?:" + word + r")(?![\w])", re.IGNORECASE), factor) for word, factor in _SCALES]
_BARE_SCALE = [(re.compile(r"(?<![\w.])(?:" + word + r")(?![\w])", re.IGNORECASE), factor)
               for word, factor in _SCALES]
_HALF = re.compile(r"(?<!\w)полтор[аы](?!\w)", re.IGNORECASE)  # one and a half, before a scale word


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def _phrases(text: str) -> list[tuple[int, int, float, int]]:
    """``(start, end, multiplier, scale)`` of every number ``text`` writes with a scale word after it, in digits
    («150 тысяч»), in words («ста тысячах», "two hundred thousand") or as «полтора»/«полторы», in the order
    written."""
    found: list[tuple[int, int, float, int]] = []
    for pattern, factor in _PHRASES:
        found.extend((m.start(), m.end(), _number(m.group(1)), factor) for m in pattern.finditer(text))
    spans = [*spelled_spans(text), *((m.start(), m.end(), 1.5) for m in _HALF.finditer(text))]
    for start, end, multiplier in spans:
        for pattern, factor in _SCALE_AFTER:
            after = pattern.match(text, end)
            if after is not None:
                found.append((start, after.end(), multiplier, factor))
    return sorted(found)


def scaled_amounts(text: str) -> list[tuple[float, float]]:
    """``(multiplier, value)`` of every number ``text`` writes with a scale word, in the order written."""
    return [(multiplier, multiplier * factor) for _, _, multiplier, factor in _phrases(text)]


def _plain_numbers(text: str, phrases: list[tuple[int, int, float, int]]) -> set[float]:
    """The numbers ``text`` writes on their own: digits or words with no scale word after them, and a scale word
    with no number before it («тысяча рублей», "a million")."""
    covered = bytearray(len(text))  # one flag a character: linear in a long tool result full of numbers
    for start, end, _, _ in phrases:
        covered[start:end] = b"\x01" * (end - start)

    def inside(position: int) -> bool:
        return bool(covered[position])

    plain: set[float] = {_number(m.group(1)) for m in _PLAIN.finditer(text) if not inside(m.start(1))}
    plain.update(value for start, _, value in spelled_spans(text) if not inside(start))
    plain.update(factor for pattern, factor in _BARE_SCALE for m in pattern.finditer(text) if not inside(m.start()))
    return plain


def _half_read(value: float, multiplier: float, factor: int) -> bool:
    """Whether ``value`` reads only part of the phrase ``multiplier`` x ``factor``: the multiplier, the bare scale
    (when the multiplier is not one) or the whole value with zeros lost (10000 for 100000)."""
    if value <= 0:
        return False
    if math.isclose(multiplier, value) or (multiplier != 1 and math.isclose(factor, value)):
        return True
    ratio = multiplier * factor / value
    return ratio > 1 and math.isclose(10 ** round(math.log10(ratio)), ratio)


def scaled(value: float, text: str, *, integer: bool) -> float | None:
    """The value of the phrase that ``value`` reads only part of: its multiplier (150 for «150 тысяч»), its bare
    scale when the multiplier is not one (1000 for «ста тысячах»), or its value with zeros lost (10000 for «ста
    тысячах»). ``None`` when there is no such phrase,
    when ``text`` also writes ``value`` on its own, when the phrases disagree, or when ``integer`` and the value
    is not whole."""
    phrases = _phrases(text)
    values = {multiplier * factor for _, _, multiplier, factor in phrases
              if _half_read(value, multiplier, factor) and not math.isclose(multiplier * factor, value)}
    if len(values) != 1 or any(math.isclose(value, plain) for plain in _plain_numbers(text, phrases)):
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


@functools.lru_cache(maxsize=4096)
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
def spelled_spans(text: str) -> tuple[tuple[int, int, int], ...]:
    """``(start, end, value)`` of every whole number below a thousand that ``text`` spells in words, in the order
    written. Cached: one decision asks it of the same text for every value it checks."""
    found: list[tuple[int, int, int]] = []
    total: int | None = None
    start = end = 0
    previous = ""
    for match in _WORD_TOKEN.finditer(text):
        word = match.group(0)
        low = word.lower()
        gap = _JOIN.fullmatch(text[end:match.start()]) is not None
        joined = total is not None and gap
        value = None if low in _HUNDRED else _word_value(word)
        if total is not None and joined and low in _HUNDRED and total < 10:
            total *= 100
        elif total is not None and joined and value is not None and _adds(total, value):
            total += value
        elif low == "and" and total is not None:
            continue  # "two hundred and five": the gap check of the next word decides
        else:
            if total is not None:
                found.append((start, end, total))
            total, start = value, match.start()
            if low in _HUNDRED and previous == "a" and gap:  # "a hundred"
                total = 100
        end = match.end()
        previous = low
    if total is not None:
        found.append((start, end, total))
    return tuple(found)


def spelled_numbers(text: str) -> frozenset[int]:
    """The whole numbers below a thousand that ``text`` spells in words, in English or Russian, cardinal or
    ordinal: "twenty-seven", "two hundred and five", «тридцать первый», «ста двадцати» (27, 205, 31, 120)."""
    return frozenset(value for _, _, value in spelled_spans(text))


def _adds(total: int, value: int) -> bool:
    """Whether ``value`` continues a number spelled as ``total`` so far («сто» + «двадцать», "thirty" + "one")."""
    if total % 100 == 0 and value < 100:
        return True
    return total % 10 == 0 and total % 100 >= 20 and value < 10
