"""Required values of a call that the text writes in no form: the sign of a tool that may not fit the task.

Asked "What is the weight of an elephant?" with only a body-mass-index tool at hand, a small model calls it and
fills ``height`` with a number nobody gave. A tool that fits a task usually finds its required values in the task:
:func:`unwritten_required` names the ones that are not there, so that the model can be asked whether the tool does
what the task asks (``fit_check_unwritten``) only when there is a reason to doubt it. A value can also be missing
because it is common knowledge (52 cards in a deck, 0 for "from rest"): the model's own answer to the question
decides, not this check.

A value counts as written when the text writes it in some form:

* a number: the text writes it, or it times a percent's, a unit prefix's or a scale's power of ten (:data:`SCALES`:
  "5 %" for 0.05, "$1M" for 1000000, "100 µF" for 0.0001), in digits or words («150 тысяч» for 150000);
* a string with letters: a word of it in some form (:func:`._guessed.writes_a_word`: «Москва» for «в Москве»), or
  in an alphabet the text does not write in (a translation: ``"Moscow"`` for «в Москве»);
* a string without letters (``"2^5"``): each of its numbers is written.

Never named: the optional arguments, booleans, ``null``, a string whose form the schema fixes (``enum``, ``const``,
``format``, ``pattern``), a code in capitals (``"USD"``, ``"AAPL"``: a code may be meant rather than written), and a
clock time or a date (left to ``invented_values``, which knows their written forms).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from react_agent.models.local._guessed import WordIndex, in_another_alphabet, index_words, writes_a_word
from react_agent.models.local._numbers import scaled_amounts, spelled_numbers

__all__ = ["SCALES", "unwritten_required", "written_numbers"]

SCALES = (-12, -9, -6, -3, -2, 0, 2, 3, 6, 9, 12)
"""The powers of ten a number the text writes may be scaled by and still count as written: a percent (2), a unit's
prefix (µF: -6, mH: -3, k: 3) or a scale ("M": 6). Not 10 or 100 for a 1 the text writes: that is another number."""

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?")
_LETTER = re.compile(r"[^\W\d_]")
_TIME_OR_DATE = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp][Mm])?|\d{4}-\d{1,2}-\d{1,2}(?:[T ].*)?"
                           r"|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")
_CODE = re.compile(r"[A-Z]{1,5}")
_FIXED_FORM = ("enum", "const", "format", "pattern")
_MAX_DEPTH = 32


def _numbers_of(token: str) -> set[float]:
    """The values a number written as ``token`` may mean: ``1,200`` is 1200, 1.2, or 1 and 200 (a list written
    without spaces: ``[22,33]``, ``A(3,4)``)."""
    found = set()
    for text in {token.replace(",", ""), token.replace(",", "."), *token.split(",")}:
        try:
            found.add(float(text))
        except ValueError:  # "1.2.3": a version or a date, no number
            continue
    return found


def written_numbers(text: str) -> frozenset[float]:
    """Every number ``text`` writes, its sign aside and rounded to 12 significant digits: in digits (decimals,
    thousands separators, ``1e-9``), in words, and the value of each number with a scale word («150 тысяч», "two
    million")."""
    found: set[float] = set()
    for match in _NUMBER.finditer(text):
        found.update(_numbers_of(match.group(0)))
    found.update(float(n) for n in spelled_numbers(text))
    for multiplier, value in scaled_amounts(text):
        found.update((multiplier, value))
    return frozenset(_key(n) for n in found if math.isfinite(n))


def _key(number: float) -> float:
    """``number`` rounded to 12 significant digits: equal keys for 0.05 and 5 / 100."""
    return float(f"{abs(number):.12g}")


def _scaled_from(value: float, written: frozenset[float]) -> bool:
    """Whether ``value`` is a number of ``written`` (keys of :func:`_key`) times a power of ten of :data:`SCALES`
    (the sign aside); a few lookups, however many numbers the text writes."""
    if not math.isfinite(value):
        return False
    return any(_key(value / 10.0**power) in written for power in SCALES)


def _string_written(value: str, numbers: frozenset[float], index: WordIndex) -> bool:
    text = value.strip()
    if not text or _TIME_OR_DATE.fullmatch(text):
        return True
    if _CODE.fullmatch(text):
        return True  # a code ("USD", "AAPL", "C"): meant rather than written, like an enum's value
    if _LETTER.search(text):
        return in_another_alphabet(text, index) or writes_a_word(text, index)
    return all(any(_scaled_from(n, numbers) for n in _numbers_of(m.group(0))) for m in _NUMBER.finditer(text))


def unwritten_required(args: Any, schema: Any, text: str) -> list[str]:
    """The paths (``height``, ``points[1]``, ``filter.city``) of the values under the required arguments of ``args``
    (a call's arguments; ``schema`` its tool's JSON schema) that ``text`` (the task and the observations) writes in
    no form, in the order they appear. Empty when there is no text to compare with."""
    if not isinstance(args, Mapping) or not isinstance(schema, Mapping) or not text.strip():
        return []
    required = schema.get("required")
    props = schema.get("properties")
    if not isinstance(required, list) or not isinstance(props, Mapping):
        return []
    numbers = written_numbers(text)
    index = index_words(text)
    found: list[str] = []

    def visit(value: Any, node: Any, path: str, depth: int) -> None:
        node = node if isinstance(node, Mapping) else {}
        if depth > _MAX_DEPTH or value is None or isinstance(value, bool) or any(k in node for k in _FIXED_FORM):
            return
        if isinstance(value, (int, float)):
            if not _scaled_from(float(value), numbers):
                found.append(path)
        elif isinstance(value, str):
            if not _string_written(value, numbers, index):
                found.append(path)
        elif isinstance(value, Mapping):
            inner = node.get("properties")
            for key, item in value.items():
                visit(item, inner.get(key) if isinstance(inner, Mapping) else None, f"{path}.{key}", depth + 1)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                visit(item, node.get("items"), f"{path}[{i}]", depth + 1)

    for key, value in args.items():
        if key in required:
            visit(value, props.get(key), str(key), 0)
    return found
