"""Russian values in the form a tool expects: a name or place the model copied inflected from the task, in the
nominative.

A Russian task inflects what it names («Напиши Ивану», «погода в Казани», «назначь на Соколову»); a small model
copies the form it sees, while a tool wants ``recipient="Иван"``, ``city="Казань"``, ``assignee="Соколова"``.
:func:`nominative` puts such a value in the nominative with the morphological dictionary of pymorphy3, and changes
nothing it cannot prove inflected:

* the value is one to four Cyrillic words (and numbers: «переговорной 2»), or ``/``-separated folder names made
  of them, that the text (the task and the observations) writes, so the form was copied, not made up;
* every word is a noun or an adjective with a grammatical case, and the words agree in case and number;
* no reading of the value is nominative, unless the text writes it right after a preposition (where Russian
  never puts a nominative): «на Петрова» is the accusative of Петров, while «Петрова» alone may be a woman's
  surname and stays as it is; a name the text writes beside another name agrees with it («Дмитрия Орлова»:
  ``last_name="Орлова"`` is Орлов, «Ольга Белова»: it stays Белова). Readings the dictionary marks as rare
  (a name in the plural, a score under 5 %) do not count.

Capital letters follow the value, and ``ё`` is written only where the value writes it. Without pymorphy3
installed (the ``local`` extra brings it) values are left as they are.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["available", "nominative"]

logger = logging.getLogger(__name__)

_WORD = re.compile(r"^[А-Яа-яЁё]+(?:-[А-Яа-яЁё]+)*$")
_NUMBER = re.compile(r"^(?:№?\d+[а-я]?|№)$")  # a number in a name («переговорная 2», «корпус 3б») stays as it is
_TOKEN = re.compile(r"[А-Яа-яЁёA-Za-z0-9]+(?:-[А-Яа-яЁёA-Za-z0-9]+)*")
_MAX_WORDS = 4
_RARE = 0.05
_PROPER = frozenset({"Name", "Surn", "Patr"})
_INFLECTED = frozenset({"NOUN", "ADJF", "PRTF"})
_CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")

# The cases each preposition governs (a word right after one is never in the nominative).
_PREPOSITIONS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("в", "во", "на"), frozenset({"accs", "loct"})),
    **dict.fromkeys(("у", "для", "от", "до", "из", "без", "около", "возле", "после", "кроме", "среди"),
                    frozenset({"gent"})),
    **dict.fromkeys(("к", "ко"), frozenset({"datv"})),
    **dict.fromkeys(("о", "об", "обо", "при"), frozenset({"loct"})),
    **dict.fromkeys(("про", "через", "сквозь"), frozenset({"accs"})),
    **dict.fromkeys(("с", "со"), frozenset({"ablt", "gent", "accs"})),
    **dict.fromkeys(("за", "под", "подо", "над", "надо", "перед", "передо", "между"), frozenset({"ablt", "accs"})),
    "по": frozenset({"datv", "loct", "accs"}),
}


@functools.lru_cache(maxsize=1)
def _analyzer() -> Any:
    try:
        import pymorphy3
    except ImportError:
        logger.info("pymorphy3 is not installed: Russian values are not put in the nominative "
                    "(pip install 'react-agent[local]')")
        return None
    return pymorphy3.MorphAnalyzer()


def available() -> bool:
    """Whether the morphological dictionary is installed."""
    return _analyzer() is not None


def _fold(text: str) -> str:
    return text.casefold().replace("ё", "е")


def _occurrence(value: str, text: str) -> tuple[frozenset[str], str, str] | None:
    """Where ``text`` first writes ``value``: the cases of the preposition right before it (an empty set when
    there is none) and the words right before and after it (``""`` at an end); ``None`` when it is not there."""
    tokens = _TOKEN.findall(text)
    words = [_fold(t) for t in tokens]
    target = [_fold(w) for w in _TOKEN.findall(value)]
    for i in range(len(words) - len(target) + 1):
        if words[i:i + len(target)] == target:
            before = tokens[i - 1] if i else ""
            after = tokens[i + len(target)] if i + len(target) < len(tokens) else ""
            return _PREPOSITIONS.get(_fold(before), frozenset()), before, after
    return None


def _is_name(word: str) -> bool:
    """A capitalised word the dictionary knows as a first name, surname or patronymic."""
    return bool(word[:1].isupper() and _WORD.match(word)
                and any(_PROPER & set(p.tag.grammemes) for p in _analyzer().parse(word)))


def _case(parse: Any) -> str | None:
    case = parse.tag.case
    if not isinstance(case, str):
        return None
    return {"gen1": "gent", "gen2": "gent", "acc2": "accs", "loc1": "loct", "loc2": "loct"}.get(case, case)


def _readings(word: str) -> list[Any]:
    return [p for p in _analyzer().parse(word) if p.tag.POS in _INFLECTED and _case(p) in _CASES]


def _counts(parse: Any) -> bool:
    """Whether a nominative reading is a real possibility (not a rare dictionary entry)."""
    rare = parse.score < _RARE or (parse.tag.number == "plur" and bool(_PROPER & set(parse.tag.grammemes)))
    return not rare


def _agree(a: Any, b: Any) -> bool:
    if _case(a) != _case(b) or a.tag.number != b.tag.number:
        return False
    return a.tag.gender is None or b.tag.gender is None or a.tag.gender == b.tag.gender


def _spell(word: str, like: str) -> str:
    if "ё" not in like.casefold():
        word = word.replace("ё", "е")
    if like.isupper() and len(like) > 1:
        return word.upper()
    parts, models = word.split("-"), like.split("-")
    if len(parts) == len(models):
        return "-".join(p[:1].upper() + p[1:] if m[:1].isupper() else p for p, m in zip(parts, models, strict=True))
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _phrase(value: str, text: str) -> str:
    tokens = value.split()
    words = [t for t in tokens if not _NUMBER.match(t)]
    if not 1 <= len(words) <= _MAX_WORDS or not all(_WORD.match(w) for w in words):
        return value
    found = _occurrence(value, text)
    if found is None:
        return value
    governed, before, after = found
    readings = [_readings(w) for w in words]
    if not all(readings):
        return value
    if not governed and len(words) == 1:
        neighbour = _name_neighbour(words[0], before, after, text)
        if neighbour is not None:
            return neighbour
    if not governed and _nominative_reading(readings):
        return value
    choice = _oblique_agreement(readings, governed)
    if choice is None:
        return value
    nominatives = {}
    for word, parse in zip(words, choice, strict=True):
        inflected = parse.inflect({"nomn"})
        if inflected is None:
            return value
        nominatives[word] = _spell(inflected.word, word)
    return " ".join(nominatives.get(t, t) for t in tokens)


def _name_neighbour(word: str, before: str, after: str, text: str) -> str | None:
    """A surname or first name that the text writes beside another name («Дмитрия Орлова») agrees with it: the
    pair decides the case. The word in the nominative when the pair is proved inflected, the word itself when
    the pair reads as a nominative, ``None`` when there is no such neighbour or the pair decides nothing."""
    if not _is_name(word):
        return None
    for pair, index in (((before, word), 1), ((word, after), 0)):
        if not pair[1 - index] or not _is_name(pair[1 - index]):
            continue
        found = _occurrence(" ".join(pair), text)
        readings = [_readings(w) for w in pair]
        if found is None or not all(readings):
            continue
        governed = found[0]
        if not governed and _nominative_reading(readings):
            return word
        choice = _oblique_agreement(readings, governed)
        if choice is not None:
            inflected = choice[index].inflect({"nomn"})
            return word if inflected is None else _spell(inflected.word, word)
    return None


def _nominative_reading(readings: Sequence[list[Any]]) -> bool:
    """Whether the words can all be read as one nominative phrase."""
    firsts = [p for p in readings[0] if _case(p) == "nomn" and _counts(p)]
    return any(all(any(_case(q) == "nomn" and _counts(q) and _agree(p, q) for q in rest) for rest in readings[1:])
               for p in firsts)


def _oblique_agreement(readings: Sequence[list[Any]], governed: frozenset[str]) -> list[Any] | None:
    """One reading per word, all in one oblique case (one of ``governed`` when it is not empty), the likeliest
    reading of the first word that the others agree with."""
    for first in readings[0]:
        case = _case(first)
        if case == "nomn" or (governed and case not in governed):
            continue
        chosen = [first]
        for rest in readings[1:]:
            match = next((q for q in rest if _agree(first, q)), None)
            if match is None:
                break
            chosen.append(match)
        else:
            return chosen
    return None


def nominative(value: str, text: str) -> str:
    """``value`` in the nominative when it is a Russian phrase ``text`` writes inflected (module docstring), else
    ``value`` itself. Folder paths (``/Входящих``) are put in the nominative segment by segment."""
    if not isinstance(value, str) or not re.search("[А-Яа-яЁё]", value) or _analyzer() is None:
        return value
    if "/" in value:
        return "/".join(_phrase(segment, text) if segment else segment for segment in value.split("/"))
    return _phrase(value, text)


def normal_forms(word: str) -> list[str]:
    """The dictionary forms of ``word``'s readings, most likely first (none without the dictionary)."""
    analyzer = _analyzer()
    return [] if analyzer is None else list(dict.fromkeys(p.normal_form for p in analyzer.parse(word)))
