"""String-value techniques for small local models: which span of the task a free-text argument takes.

The value techniques of :mod:`_values` fix numbers, enums and lists; what a 270M model gets
wrong most often after them is the span of the task it copies into a string argument: a name cut at its
front ("Carlsen" for "Magnus Carlsen"), a title cut short, an article the tool does not want, or a word of
the task instead of the value the tool's description lists ("detail" for a ``detail_level`` that "can be
'summary' or 'detailed'"). Each function below is pure (the call, the tool's JSON schema, the task text)
and never reads tool names:

* :func:`whole_spans`: a value grows to the capitalised name it ends ("Carlsen" -> "Magnus Carlsen") and to
  the quoted title it starts, and loses a lower-case article ("the theory of evolution");
* :func:`listed_values`: a string argument whose description lists its values ("Can be 'summary' or
  'detailed'", "i.e., victim, accused") takes the one listed value the task names;
* :func:`nested_spans`: a short value that holds another argument's value and more words is cut to those
  words ("David by Michelangelo" beside ``title`` "David" -> "Michelangelo").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from react_agent.models.local._decoding import (
    _FRAGMENT_WORDS,
    _QUOTED,
    _STRIP,
    MIN_OVERLAP,
    _key,
    _named_at,
    _scalar_kind,
    _stems_match,
    changed_arguments,
    is_fragment,
    is_grounded,
    stem,
)

__all__ = ["described_values", "listed_values", "nested_spans", "whole_spans"]

_QUOTE = re.compile(r"(?<!\w)['‘\"“]([^'’\"”\n]{1,80})['’\"”](?!\w)")
_ARTICLE = re.compile(r"(?:the|a|an) (?=\S)")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n)\s*$")


def _free_text(schema: Any) -> bool:
    return (isinstance(schema, Mapping) and _scalar_kind(schema) == "string" and "pattern" not in schema
            and "format" not in schema)


def whole_spans(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each free-text value made the whole span the task writes, or ``None`` when nothing
    changes: a capitalised value that the task writes once after further capitalised words (not the first
    word of a sentence) grows over them ("Carlsen" -> "Magnus Carlsen", "Weeknd" -> "The Weeknd"); a value
    that starts a quoted title of the task and occurs nowhere else grows to the whole title ("The Legend of
    Zelda" -> "The Legend of Zelda: Breath of the Wild"); a value that starts with a lower-case article the
    task writes so loses it ("the theory of evolution" -> "theory of evolution"). A lower-case value that the
    task writes once, capitalised, is taken as the task writes it first ("green" -> "Sea Green"); a value that
    runs past the closing quote of a quoted title is cut to the title ("Roe v Wade'.Include dissent" -> "Roe v.
    Wade"); a place whose description asks for "city and state" ("City, State", "e.g. Denver, CO") grows to
    the region the task writes right after it ("Denver" -> "Denver, Colorado"). A grown value that holds
    another argument's value is not taken (``first_name`` "John" beside ``last_name`` "Smith")."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        if not (isinstance(value, str) and value and value.strip() == value and _free_text(sub)):
            return None
        value = _as_written(value, source)
        grown = _grown_back(value, source) or _grown_quote(value, source) or _past_quote(value, source) \
            or _with_region(value, sub, source)
        if grown is None and value != args[name]:
            grown = value
        article = _ARTICLE.match(value)
        if grown is None and article and value in source:
            grown = value[article.end():]
        if grown and not any(isinstance(v, str) and v and o != name and _key(v) in _key(grown)
                             for o, v in args.items()):
            return grown
        return None

    return changed_arguments(args, args_schema, fix)


def _as_written(value: str, source: str) -> str:
    """A lower-case value as the task writes it when the task writes it once, and capitalised ("green" in "Sea
    Green" -> "Green"); the value itself otherwise."""
    if not value.islower():
        return value
    found = [m.group() for m in re.finditer(r"(?<!\w)" + re.escape(value) + r"(?!\w)", source, re.IGNORECASE)]
    return found[0] if len(found) == 1 and found[0][:1].isupper() else value


def _past_quote(value: str, source: str) -> str | None:
    """The quoted title of the task that ``value`` starts with and runs past (its closing quote is in the
    value: "Roe v Wade'.Include dissent information" for 'Roe v. Wade'), or ``None``."""
    if not any(mark in value for mark in "'’\"”"):
        return None
    key = _key(value)
    titles = [str(q).strip() for q in _QUOTE.findall(source)]
    starts = [t for t in titles if _key(t) and key.startswith(_key(t)) and len(_key(t)) < len(key)]
    return max(starts, key=len) if starts else None


_REGION_ASKED = re.compile(r"\bcity(?:,| and) state\b|\be\.g\.,?\s+[A-Z][\w .'-]*,\s*[A-Z]{2}\b", re.IGNORECASE)


def _with_region(value: str, schema: Mapping[str, Any], source: str) -> str | None:
    """``value`` with the region the task writes right after it (", Colorado", ", USA"), when the argument's
    description asks for a city and its state ("The city and state, e.g. Denver, CO", "in the format City,
    State") and the value has none; ``None`` otherwise."""
    if "," in value or not _REGION_ASKED.search(str(schema.get("description") or "")):
        return None
    found = re.search(r"(?<!\w)" + re.escape(value) + r",\s*([A-Z][\w.]*(?:[ \t][A-Z][\w.]*)?)(?![\w'])", source)
    return f"{value}, {found.group(1).rstrip('.')}" if found else None


NAME_WORDS_BACK = 6
"""Capitalised words (and joiners) a value grows back over at most: a name, not a run of a long title-case text."""


def _grown_back(value: str, source: str) -> str | None:
    found = [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(value) + r"(?!\w)", source)]
    if len(found) != 1 or not value[:1].isupper() or any(ch.isdigit() for ch in value):  # "B1004" is an id
        return None
    start = found[0]
    for _ in range(NAME_WORDS_BACK):  # over capitalised words; not over "of" ("King of France" is no name)
        window = max(0, start - 120)
        m = re.search(r"([A-Z][\w'’&.-]*)[ \t]+$", source[window:start])
        if m is None:
            break
        begin = window + m.start(1)
        if m.group(1).endswith(("'s", "’s")) or _SENTENCE_START.search(source[max(0, begin - 4):begin]) \
                or (begin == window and window > 0):
            break
        start = begin
    return source[start:found[0]] + value if start < found[0] else None


def _grown_quote(value: str, source: str) -> str | None:
    quotes = [str(q).strip() for q in _QUOTE.findall(source)]
    longer = [q for q in quotes if q.startswith(value) and q != value]
    return longer[0] if len(longer) == 1 and source.count(value) == 1 else None


_LIST_AFTER = re.compile(r"(?:\bi\.e\.|\be\.g\.|\bsuch as\b|\boptions?(?: are| include)?:|\bone of\b|\beither\b)"
                         r"[,:]?\s*([^.;:()\n]+)", re.IGNORECASE)
_LIST_SPLIT = re.compile(r",|\bor\b|\band\b|/", re.IGNORECASE)


LISTED_VALUES = 32
"""Values :func:`described_values` reads from one description at most (a longer list is no list of options)."""


def described_values(description: Any) -> list[str]:
    """The values an argument's description lists: every quoted value ("Can be 'summary' or 'detailed'") and
    the items after *i.e.*, *e.g.*, *such as*, *Options:*, *one of*, *either* (up to three words each, *etc*
    left out), each once, in order, at most :data:`LISTED_VALUES`."""
    if not isinstance(description, str):
        return []
    out: dict[str, str] = {}
    for value in _QUOTED.findall(description):
        out.setdefault(_key(value), value.strip())
    for listed in _LIST_AFTER.findall(description):
        for item in _LIST_SPLIT.split(listed):
            item = re.sub(r"\betc\b.*", "", item, flags=re.IGNORECASE).strip(" '\"‘’“”")
            if 3 <= len(item) <= 30 and len(item.split()) <= 3 and _key(item):
                out.setdefault(_key(item), item)
    return list(out.values())[:LISTED_VALUES]


def _names(value: str, source: str) -> bool:
    """Whether the task names a listed value: the whole phrase (:func:`_values._named_at`), or for
    a one-word value a word of the same stem ("detail" names "detailed")."""
    if _named_at(value, source) >= 0:
        return True
    if " " in value.strip() or len(value) < 4:
        return False
    return any(len(w) >= 4 and _stems_match(stem(value), stem(w)) for w in re.findall(r"[^\W\d_]+", source))


def listed_values(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each free-text argument whose description lists its values (:func:`described_values`) set
    to the one listed value the task names, when the model's value is not that one; ``None`` when nothing
    changes. "Give me detail information" with "Can be 'summary' or 'detailed'" -> ``"detailed"``; "Who
    was the victim …" with "i.e., victim, accused, verdict" -> ``"victim"``."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        if not isinstance(value, str) or not _free_text(sub):
            return None
        named = [v for v in described_values(sub.get("description")) if _names(v, source)]
        return named[0] if len(named) == 1 and _key(named[0]) != _key(value) else None

    return changed_arguments(args, args_schema, fix)


NESTED_WORDS = 6
"""Words a value has at most for :func:`nested_spans` to cut it: a span glued to its neighbour, not a text."""


def nested_spans(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each short free-text value (at most :data:`NESTED_WORDS` words) that holds another
    argument's string value at its start or end, plus words that are not one capitalised name, cut to those
    words; ``None`` when nothing changes. The model copied a span that runs over its neighbour's value:
    ``artist`` "David by Michelangelo" beside ``title`` "David" -> "Michelangelo", ``season`` "2021 La Liga"
    beside ``league`` "La Liga" -> "2021", ``key`` "C major" beside ``type`` "major" -> "C". The rest is taken
    only when the task writes it and it is no piece of the question's syntax
    (:func:`_decoding.is_fragment`); a name ("New York City" beside "New York"), a value joined
    by a comma ("5th Avenue, New York" beside ``city`` "New York") and one that leads to the other's value with
    a function word ("weather in Paris" beside ``city`` "Paris") stay."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        if not (isinstance(value, str) and _free_text(sub)) or not 1 < len(value.split()) <= NESTED_WORDS:
            return None
        if all(word[:1].isupper() for word in value.split()):  # one name: "New York City", "Premier League"
            return None
        for other, held in args.items():
            if other == name or not isinstance(held, str) or len(held.strip()) < MIN_OVERLAP \
                    or len(held) >= len(value):
                continue
            rest = _rest(value, held.strip())
            if rest and is_grounded(rest, source) and not is_fragment(rest, source) \
                    and all(_key(rest) != _key(v) for v in args.values() if isinstance(v, str)):
                return rest
        return None

    return changed_arguments(args, args_schema, fix)


def _rest(value: str, held: str) -> str | None:
    """What ``value`` has besides ``held`` at its start or end, without the function words and punctuation that
    joined them ("David by Michelangelo" less "David" -> "Michelangelo"); ``None`` when ``held`` is not a whole
    word sequence at either end, a comma joins them, a function word leads to ``held`` at the end ("Send
    hello to Bob", "weather in Paris": the value is about its sibling's value, not glued to it), or the rest
    has a function word of its own (it is a text, not a value)."""
    folded, inner = value.casefold(), held.casefold()
    if re.match(re.escape(inner) + r"(?!\w)", folded):
        joint, held_at_end = value[len(held):], False
    elif re.search(r"(?<!\w)" + re.escape(inner) + r"$", folded):
        joint, held_at_end = value[:len(value) - len(held)], True
    else:
        return None
    words = joint.split()
    if "," in joint.strip()[:1] + joint.strip()[-1:]:
        return None
    if held_at_end and words and words[-1].strip(_STRIP).casefold() in _FRAGMENT_WORDS:
        return None  # "Send hello to Bob", "weather in Paris": the value says something about its sibling's
    while words and words[0].strip(_STRIP).casefold() in _FRAGMENT_WORDS | {""}:
        words.pop(0)  # "David by Michelangelo": the joiner goes with the sibling's value
    if any(word.strip(_STRIP).casefold() in _FRAGMENT_WORDS for word in words):
        return None  # "weather in the lovely old" is a text about Paris, not a value glued to it
    out = " ".join(words).strip(_STRIP + " ")
    return out if any(ch.isalnum() for ch in out) else None
