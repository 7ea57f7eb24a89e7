"""Names a model made up rather than took from the text it was given.

Asked to "set up a call with Anna and Oleg on March 12", a small model fills the optional ``location`` with
«Конференцзал» or "Conference room B": a name in the task's own alphabet that shares no word with the task. Such a
value is a guess. A value the text writes in some form is not: the same word, another form of it («Москва» for
«в Москве»), a letter changed ("women" for "woman"), an abbreviation ("mi" for "miles"). Only names and titles (a
capital letter first) are looked at: a unit, a code or a level ("celsius", "USD", "intermediate") may be inferred
from what the text means rather than from its words. A value in an alphabet the text does not write in
(``"Europe/Moscow"`` for a Russian task) may be a translation, and is never named; neither is a long text (more
than :data:`MAX_GUESSED_WORDS` words).

Words are compared by their letters only, without a dictionary, so the check works the same in any language.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["MAX_GUESSED_WORDS", "WordIndex", "guessed_text", "in_another_alphabet", "index_words", "same_word",
           "writes_a_word"]

WordIndex = Mapping[str, frozenset[str]]
"""The distinct words of a text, folded, by their first letter (:func:`index_words`)."""

MAX_GUESSED_WORDS = 8
"""A value of more words than this is a text, not a name the model may have made up: never named."""

_WORD = re.compile(r"[^\W\d_]+")


def _fold(word: str) -> str:
    return word.lower().replace("ё", "е")


def _common_prefix(a: str, b: str) -> int:
    """How many first letters ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter replaced, added or dropped."""
    if abs(len(a) - len(b)) > 1:
        return False
    i = _common_prefix(a, b)
    return a[i + (len(a) >= len(b)):] == b[i + (len(b) >= len(a)):]


def same_word(value_word: str, text_word: str) -> bool:
    """Whether a word of a value (folded) may stand for a word of the text (folded): the same word, another form of
    it (all but the last three letters, at least four, shared), a letter changed after the first (both at least
    four letters long), or an abbreviation of it (its first letters)."""
    a, b = value_word, text_word
    if a == b or b.startswith(a) or (len(b) >= 4 and a.startswith(b)):
        return True
    shortest = min(len(a), len(b))
    return shortest >= 4 and (_common_prefix(a, b) >= max(4, shortest - 3) or _one_edit(a, b))


def _script(letter: str) -> str:
    """``"cyrillic"``, ``"latin"`` or ``"other"``: the alphabet of ``letter``."""
    if "\u0400" <= letter <= "\u04ff":
        return "cyrillic"
    return "latin" if letter.isascii() or "\u00c0" <= letter <= "\u024f" else "other"


def index_words(text: str) -> WordIndex:
    """The distinct words of ``text``, folded (lower case, «ё» as «е»), by their first letter; built in time linear
    in the text, and looked up by each word's first letter, so a huge result does not slow the check down much."""
    index: dict[str, set[str]] = {}
    for word in {_fold(w) for w in _WORD.findall(text)}:
        index.setdefault(word[0], set()).add(word)
    return {letter: frozenset(words) for letter, words in index.items()}


def writes_a_word(value: str, text: str | WordIndex) -> bool:
    """Whether ``text`` (or its :func:`index_words`) writes a word of ``value`` in some form (:func:`same_word`;
    the two words share their first letter)."""
    index = index_words(text) if isinstance(text, str) else text
    return any(same_word(word, seen) for word in {_fold(w) for w in _WORD.findall(value)}
               for seen in index.get(word[0], ()))


def guessed_text(value: str, text: str | WordIndex) -> bool:
    """Whether ``value`` is a phrase the model made up rather than took from ``text`` (or its
    :func:`index_words`): it reads as a name or a title (a capital letter first), has one to
    :data:`MAX_GUESSED_WORDS` words, all in an alphabet ``text`` writes in, and none of them stands for a word of
    ``text``."""
    words = _WORD.findall(value)
    if not _named(value, words) or len(words) > MAX_GUESSED_WORDS:
        return False
    index = index_words(text) if isinstance(text, str) else text
    if in_another_alphabet(value, index):
        return False
    return not writes_a_word(value, index)


def in_another_alphabet(value: str, text: str | WordIndex) -> bool:
    """Whether a word of ``value`` begins in an alphabet that ``text`` (or its :func:`index_words`) writes no word
    in: ``"Moscow"`` for a Russian text, which may be a translation."""
    index = index_words(text) if isinstance(text, str) else text
    scripts = {_script(letter) for letter in index}
    return any(_script(w[0].lower()) not in scripts for w in _WORD.findall(value))


def _named(value: str, words: list[str]) -> bool:
    """Whether ``value`` reads as a name or a title: it begins with a capital letter and has a word that is not
    all capitals (``"Конференцзал"``, ``"Conference room B"``; not ``"celsius"``, ``"USD"``, ``"intermediate"``:
    a unit, a code or a level may be inferred from what the text means)."""
    first = value.lstrip()[:1]
    return first.isalpha() and first.isupper() and any(not w.isupper() for w in words)
