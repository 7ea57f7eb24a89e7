"""Argument-value techniques for small local models (pure functions over a call, its schema and the task).

A 270M model picks the right tool far more often than it writes the right values: it copies a number
from a worked example, writes "3" for "3%" where the tool wants a rate, gives two sibling arguments the
same value, repeats a list item until the token budget runs out, or fills an optional argument with a
value the task never mentions. Each function below corrects one of these from the task text and the
tool's JSON schema alone (never from tool names), so it works for any tool set:

* :func:`anchored_numbers`: a number argument whose name the task writes next to a number takes it
  ("decay rate of 0.1" -> ``decay_rate=0.1``, "for 1 year" -> ``years=1``);
* :func:`percent_rates`: a rate/ratio/fraction argument whose value the task writes as a percentage
  ("3%") becomes the fraction (``0.03``);
* :func:`shared_values` / :func:`distinct_schema` / :func:`task_ordered`: two arguments with the same value
  that the task writes once (an optional one is dropped; a required one is decoded again without it, and
  the pair is put in the order the task names the values);
* :func:`named_enums`: an ``enum`` argument (or list of one) takes the allowed values the task names;
* :func:`bounded_lists` / :func:`deduped_lists`: lists get a ``maxItems`` in the grammar and lose the items
  they repeat when the task does not;
* :func:`omitted_unmentioned`: an optional argument whose value the task never mentions is left out;
* :func:`implied_options`: an optional argument the call left out but the task asks for in words is added
  (a flag whose name the task writes, a value its description quotes and the task names).

Numbers are read in digits and spelled out ("six", "twice", "две"): :func:`_decoding.spelled_numbers`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from react_agent.models.local._decoding import (
    _QUOTED,
    MIN_OVERLAP,
    _is_number,
    _key,
    _named_at,
    _scalar_kind,
    _stems_match,
    call_properties,
    changed_arguments,
    content_stems,
    copied_fields,
    is_fragment,
    is_grounded,
    name_words,
    required_fields,
    schema_types,
    spans,
    spelled_numbers,
    stem,
)
from react_agent.models.local._forms import date_formats, unit_numbers
from react_agent.models.local._spans import listed_values, nested_spans, whole_spans

__all__ = [
    "FORM_TECHNIQUES",
    "VALUE_TECHNIQUES",
    "anchored_numbers",
    "asked_optionals",
    "bounded_lists",
    "corrected",
    "deduped_lists",
    "distinct_schema",
    "implied_options",
    "in_forms",
    "kept_optionals",
    "named_enums",
    "number_mentions",
    "omitted_unmentioned",
    "overlapping_optionals",
    "percent_rates",
    "shared_values",
    "sibling_order",
    "task_numbers",
    "task_ordered",
    "whole_names",
]

VALUE_TECHNIQUES = ("ground_numbers", "anchor_numbers", "percent_rates", "distinct_values", "named_enums",
                    "bounded_lists", "omit_unmentioned", "implied_options", "sibling_order", "whole_names",
                    "whole_spans", "listed_values", "unit_numbers", "date_formats", "clean_spans", "nested_spans")
"""The argument-value techniques (``LocalChatModel`` options of the same names); ``ground_numbers`` and
``clean_spans`` are part of grounding's second decoding (``_decoding.ungrounded``; ``clean_spans``
also of abstaining), :data:`FORM_TECHNIQUES` are applied by
:func:`in_forms` (after abstaining), the others by :func:`corrected`."""

FORM_TECHNIQUES = ("listed_values", "unit_numbers", "date_formats")
"""The value techniques that write a value in the form the tool's description asks for, which the task itself
may not write ("100µF" -> 0.0001, "March 11, 2022" -> "2022-03-11", "detail" -> "detailed"): applied by
:func:`in_forms` after abstaining, which checks that the values come from the task."""

_TOKEN = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?|[^\W\d_]+")
_PERCENT_AFTER = re.compile(r"\s*(%|percent\b|per cent\b|процент)", re.IGNORECASE)
_RATE_NAME = re.compile(r"rate|ratio|fraction|proportion|probability|share|decimal", re.IGNORECASE)
_PERCENT_NAME = re.compile(r"percent|pct|процент", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)")
ANCHOR_WINDOW = 5
"""Words before a number (up to the previous number) in which an argument's name is looked for."""


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _tokens(source: str) -> list[tuple[str, int, float | None]]:
    """The words and numbers of ``source`` in order: ``(text, end, value)``, ``value`` ``None`` for a word; a
    spelled-out number (:func:`_decoding.spelled_numbers`) is one number token."""
    spelled = {start: (value, end) for value, start, end in spelled_numbers(source)}
    out: list[tuple[str, int, float | None]] = []
    skip_to = -1
    for m in _TOKEN.finditer(source):
        if m.start() < skip_to:
            continue
        if m.start() in spelled:
            value, skip_to = spelled[m.start()]
            out.append((source[m.start():skip_to], skip_to, float(value)))
        elif m.group()[0].isdigit() or m.group()[0] in "+-":
            if (number := _number(m.group())) is not None:
                out.append((m.group(), m.end(), number))
        else:
            out.append((m.group(), m.end(), None))
    return out


def number_mentions(source: str) -> list[tuple[float, bool, list[str], list[str]]]:
    """Each number written in ``source`` (in digits or spelled out: "six", "twice"): ``(value, written as a
    percentage, the words before it, the words after it)``; the words before go back at most
    :data:`ANCHOR_WINDOW` words and never past the previous number or the end of a sentence, the words after
    are the next two words before the next number and the end of the sentence (all lower case)."""
    tokens = _tokens(source)
    # a sentence ends between token j-1 and token j: "600 at-bats. Round to 3 decimals": "bats" is not next to 3
    ends = {j for j in range(1, len(tokens))
            if _SENTENCE_END.search(source, tokens[j - 1][1], tokens[j][1] - len(tokens[j][0]))}
    out = []
    for i, (_, end, value) in enumerate(tokens):
        if value is None:
            continue
        before: list[str] = []
        for j in range(i - 1, max(-1, i - ANCHOR_WINDOW - 1), -1):
            if tokens[j][2] is not None or j + 1 in ends:
                break
            before.insert(0, tokens[j][0].casefold())
        after: list[str] = []
        for j in range(i + 1, min(len(tokens), i + 3)):
            if tokens[j][2] is not None or j in ends:
                break
            after.append(tokens[j][0].casefold())
        out.append((value, bool(_PERCENT_AFTER.match(source, end)), before, after))
    return out


def task_numbers(source: str, *, percent: bool = False) -> set[float]:
    """The numbers written in ``source``; with ``percent`` a percentage also as its fraction (3% -> 0.03)."""
    out: set[float] = set()
    for value, is_percent, _, _ in number_mentions(source):
        out.add(value)
        if percent and is_percent:
            out.add(round(value / 100, 10))
    return out


def _numeric(schema: Mapping[str, Any]) -> bool:
    kinds = schema_types(schema)
    return bool(kinds & {"integer", "number"}) and "string" not in kinds and "enum" not in schema \
        and "const" not in schema


def _covers(name_stems: set[str], words: Sequence[str]) -> bool:
    stems = content_stems(" ".join(words))
    return bool(name_stems) and all(any(_stems_match(s, w) for w in stems) for s in name_stems)


def _fits(value: float, schema: Mapping[str, Any]) -> bool:
    return "number" in schema_types(schema) or float(value).is_integer()


def _as_json_number(value: float, schema: Mapping[str, Any]) -> int | float:
    return int(value) if float(value).is_integer() else value


def anchored_numbers(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each number argument set to the number the task writes next to the argument's name,
    or ``None`` when nothing changes.

    An argument's name (split at ``_`` and camelCase, without function words: ``decay_rate`` -> decay,
    rate) is next to a number when all its words are among the words just before the number (back to the
    previous number: "decay rate of 0.1") or among the two words after it ("for 1 year"). Only a name that
    is next to exactly one value is used, only when the value fits the type (a whole number for an
    integer), and the argument must be in the call or required; a number next to the names of two
    arguments ("base and height as 6 and 10") is next to neither. An argument whose name is next to no
    number is looked for by the first words of its description instead ("mu": "Mean of ..." -> "mean 0"),
    and failing that by the number whose nearest content word is a word of its description ("n": "The number
    of times that interest is compounded ..." -> "compounded quarterly", 4); neither takes a value another
    argument keeps.
    """
    props = call_properties(args, args_schema)
    if props is None:
        return None
    required = required_fields(args_schema)
    names = [n for n, sub in props.items() if isinstance(sub, Mapping) and _numeric(sub)
             and (n in required or (n in args and _is_number(args[n])))]
    mentions = number_mentions(source)
    stems = {n: content_stems(n) for n in names}
    near = _near(names, stems, mentions, stems)
    changed = _anchored(names, props, args, near)
    heads = {n: head for n in names if not near[n] and (head := _description_head(props[n]))}
    if heads:  # "mu": "Mean of the normal distribution." is next to "mean 0"
        by_head = _anchored(list(heads), props, args, _near(list(heads), heads, mentions, stems))
        changed.update(_unkept(by_head, args, changed))
    rest = [n for n in names if not near[n] and n not in changed]
    if rest:  # "n": "The number of times that interest is compounded" is next to "compounded quarterly"
        changed.update(_unkept(_anchored(rest, props, args, _adjacent(rest, props, mentions)), args, changed))
    return {**args, **changed} if changed else None


def _unkept(found: dict[str, Any], args: Mapping[str, Any], changed: Mapping[str, Any]) -> dict[str, Any]:
    """``found`` without the values another argument keeps (one that moves too, as in a swap, is free)."""
    while True:
        after = {**args, **changed, **found}
        kept = {n: v for n, v in found.items()
                if not any(o != n and _is_number(w) and float(w) == float(v) for o, w in after.items())}
        if kept == found:
            return found
        found = kept


def _adjacent(names: list[str], props: Mapping[str, Any], mentions: list[tuple[float, bool, list[str], list[str]]],
              *, most: bool = False) -> dict[str, set[float]]:
    """The numbers whose nearest content word (just before or just after, function words skipped) is a content
    word of the argument's description. With ``most``, only the number whose two nearest words are such words
    most often, if one is: "12" in "3 years with 12 compounding" for "compounded per year" (both sides)
    rather than "3" (one side)."""
    out: dict[str, set[float]] = {n: set() for n in names}
    for name in names:
        words = content_stems(str(props[name].get("description") or ""))
        scores: dict[float, int] = {}
        for value, _, before, after in mentions:
            nearest = [next((w for w in reversed(before) if content_stems(w)), None),
                       next((w for w in after if content_stems(w)), None)]
            hits = sum(w is not None and any(_stems_match(s, t) for s in words for t in content_stems(w))
                       for w in nearest)
            if hits:
                scores[value] = max(hits, scores.get(value, 0))
        top = max(scores.values(), default=0)
        best = {v for v, score in scores.items() if score == top}
        out[name] = (best if len(best) == 1 else set()) if most else set(scores)
    return out


def _anchored(names: list[str], props: Mapping[str, Any], args: Mapping[str, Any],
              near: Mapping[str, set[float]]) -> dict[str, Any]:
    """The new values of the ``names`` next to exactly one number that fits their type and differs from the
    call's value."""
    changed: dict[str, Any] = {}
    for name in names:
        sub, found = props[name], near[name]
        if len(found) != 1:
            continue
        value = next(iter(found))
        if not _fits(value, sub) or (name in args and float(args[name]) == value):
            continue
        changed[name] = _as_json_number(value, sub)
    return changed


def _near(names: list[str], stems: Mapping[str, set[str]], mentions: list[tuple[float, bool, list[str], list[str]]],
          every: Mapping[str, set[str]]) -> dict[str, set[float]]:
    """The numbers each of ``names`` is next to (all its ``stems`` among the words around the number); a number
    next to two of them, or next to another argument's name (``every``: name stems of all arguments), counts
    for none."""
    near: dict[str, set[float]] = {n: set() for n in names}
    for value, _, before, after in mentions:
        named = [n for n in names if _covers(stems[n], before) or _covers(stems[n], after)]
        if len(named) != 1:  # "base and height as 6cm and 10cm" names two: no anchor
            continue
        others = [o for o, st in every.items() if o != named[0] and (_covers(st, before) or _covers(st, after))]
        if not others:
            near[named[0]].add(value)
    return near


def _description_head(schema: Mapping[str, Any]) -> set[str]:
    """The first content words of an argument's description, up to the first function word ("Mean of the
    normal distribution." -> mean; "Standard deviation of ..." -> standard, deviation); empty without one."""
    description = schema.get("description")
    if not isinstance(description, str):
        return set()
    head: list[str] = []
    for word in re.findall(r"[^\W\d_]+", description.casefold()):
        stems = content_stems(word)
        if not stems:
            if head:
                break
            continue
        head.append(word)
        if len(head) == 2:
            break
    return content_stems(" ".join(head))


def percent_rates(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each non-integer number argument named as a rate, ratio, fraction, proportion,
    probability or share (its name or ``description``; not one that says percent) whose value the task writes
    as a percentage ("3%", "3 percent") set to the fraction (0.03); ``None`` when nothing changes."""
    props = call_properties(args, args_schema)
    if props is None:
        return None
    percents = {value for value, is_percent, _, _ in number_mentions(source) if is_percent}
    changed: dict[str, Any] = {}
    for name, value in args.items():
        sub = props.get(name)
        if (not isinstance(sub, Mapping) or not _numeric(sub) or "number" not in schema_types(sub)
                or not _is_number(value)):
            continue
        words = f"{name} {sub.get('description', '')}"
        if not _RATE_NAME.search(words) or _PERCENT_NAME.search(words) or float(value) not in percents:
            continue
        changed[name] = round(float(value) / 100, 10)
    return {**args, **changed} if changed else None


# ------------------------------------------------------------------------------------------ sibling values
def _occurrences(value: Any, source: str) -> int:
    if _is_number(value):
        return sum(v == float(value) for v, _, _, _ in number_mentions(source))
    key = _key(value)
    return "".join(ch for ch in source.casefold() if ch.isalnum()).count(key) if key else 0


def shared_values(args: Any, args_schema: Mapping[str, Any], source: str) -> list[tuple[str, str]]:
    """Pairs ``(first, second)`` of free-text or number arguments (in the schema's order) that have the same
    value although the task writes that value only once: one of the two is wrong, and ``second`` is decoded
    again. A number and its fraction count as the same value when the task writes the number once as a
    percentage ("5%": a rate 0.05 and an amount 5); the pair is then ``(the rate, the other)``."""
    props = call_properties(args, args_schema)
    if props is None:
        return []
    names = [n for n in props if n in args and isinstance(props[n], Mapping) and _scalar_kind(props[n])
             and ((isinstance(args[n], str) and args[n].strip()) or _is_number(args[n]))]
    pairs = []
    percents = {value for value, is_percent, _, _ in number_mentions(source) if is_percent}
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            if _scalar_kind(props[first]) != _scalar_kind(props[second]):
                continue
            if _key(args[first]) == _key(args[second]):
                if _occurrences(args[first], source) < 2:
                    pairs.append((first, second))
                continue
            twin = _percent_twin(args[first], args[second], percents)
            if twin == "second" and _occurrences(args[first], source) < 2:
                pairs.append((second, first))  # "5%": the rate keeps 0.05, the other argument is decoded again
            elif twin == "first" and _occurrences(args[second], source) < 2:
                pairs.append((first, second))
    return pairs


def _percent_twin(a: Any, b: Any, percents: set[float]) -> str | None:
    """Which of two numbers is the fraction of the other when the task writes the other as a percentage
    ("5%": 5 and 0.05): ``"first"`` or ``"second"``, else ``None``."""
    if not (_is_number(a) and _is_number(b)):
        return None
    if float(a) in percents and round(float(a) / 100, 10) == float(b):
        return "second"
    if float(b) in percents and round(float(b) / 100, 10) == float(a):
        return "first"
    return None


def overlapping_optionals(args: Any, args_schema: Mapping[str, Any], source: str) -> list[str]:
    """The optional free-text arguments whose value holds another argument's value or is held in it (``county``
    "Santa Clara" and ``state`` "Santa Clara County") although the task writes the longer value once: the
    model copied a sibling's span into an option it has no value for."""
    props = call_properties(args, args_schema)
    if props is None:
        return []
    required = required_fields(args_schema)
    texts = {n: v for n, v in args.items() if isinstance(v, str) and len(v.strip()) >= MIN_OVERLAP
             and isinstance(props.get(n), Mapping) and _scalar_kind(props[n]) == "string"}
    out = []
    for name, value in texts.items():
        if name in required:
            continue
        for other, theirs in texts.items():
            if other == name or _key(value) == _key(theirs):
                continue
            a, b = value.casefold(), theirs.casefold()
            longer = value if len(a) > len(b) else theirs
            if (a in b or b in a) and _occurrences(longer, source) < 2:
                out.append(name)
                break
    return out


def distinct_schema(args: Mapping[str, Any], args_schema: Mapping[str, Any], name: str,
                    source: str) -> dict[str, Any] | None:
    """The schema to decode the arguments again with: every argument of ``args`` but ``name`` fixed to its
    value (``const``), ``name`` restricted to the values of the task other than its current one (spans of
    words that neither contain it nor are part of it; numbers other than it), or ``None`` when the task has
    no other value for it."""
    props = args_schema.get("properties")
    if not isinstance(props, Mapping) or not isinstance(props.get(name), Mapping):
        return None
    sub, value = props[name], args[name]
    key = _key(value)
    if _scalar_kind(sub) == "number":
        options: list[Any] = [_as_json_number(v, sub) for v in sorted(task_numbers(source))
                              if v != key and _fits(v, sub)]
    else:
        pattern = sub.get("pattern")
        regex = re.compile(str(pattern)) if isinstance(pattern, str) else None
        options = [s for s in spans(source) if (k := _key(s)) and k not in key and key not in k
                   and (regex is None or regex.search(s))]
    if not options:
        return None
    fixed = {k: {"const": v} for k, v in args.items() if k != name and k in props}
    fixed[name] = {"enum": options}
    ordered = {k: fixed[k] for k in args if k in fixed}
    return {"type": "object", "properties": ordered, "required": list(ordered), "additionalProperties": False}


def task_ordered(args: Mapping[str, Any], first: str, second: str, source: str) -> dict[str, Any]:
    """``args`` with the values of ``first`` and ``second`` swapped when the task names the second's value
    before the first's (sibling arguments listed in a schema follow the order the task names their values:
    from/to, first/second)."""
    folded = source.casefold()
    a, b = str(args[first]).casefold(), str(args[second]).casefold()
    if _is_number(args[first]):
        return dict(args)
    pa, pb = folded.find(a), folded.find(b)
    if pa < 0 or pb < 0 or pa <= pb:
        return dict(args)
    return {**args, first: args[second], second: args[first]}


_INDEXED = re.compile(r"^(.*?[a-z_])_?(\d+|[A-Z])$")


def _index_of(name: str) -> tuple[str, int] | None:
    """``("place", 1)`` for ``place1``, ``place_1`` or ``placeA``; ``None`` for a name without an index."""
    found = _INDEXED.match(name)
    if found is None:
        return None
    index = found.group(2)
    return found.group(1).rstrip("_").casefold(), int(index) if index.isdigit() else ord(index) - ord("A") + 1


def sibling_order(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with the string values of numbered siblings (``place1``/``place2``, ``pointA``/``pointB``) put in
    the order the task names them ("between San Francisco and Sydney" -> ``place1="San Francisco"``), or
    ``None`` when nothing changes. Only when every sibling's value is a string the task names, each at its
    own place. The items of a list (all strings or all numbers) that the task writes each exactly once are
    put in the order it writes them ("2nd, 3rd and 4th floors": ``[2, 4, 3]`` -> ``[2, 3, 4]``)."""
    props = call_properties(args, args_schema)
    if props is None:
        return None
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in args:
        indexed = _index_of(name) if isinstance(name, str) and name in props else None
        if indexed is not None:
            groups.setdefault(indexed[0], []).append((indexed[1], name))
    folded = source.casefold()
    changed: dict[str, Any] = {}
    numbers = [value for value, _, _, _ in number_mentions(source)]
    for name, value in args.items():  # a list whose items the task writes, each once: in the task's order
        if isinstance(value, list) and len(value) > 1 and name in props and all(
                (isinstance(v, str) and v.strip()) or _is_number(v) for v in value):
            places = [numbers.index(float(v)) if _is_number(v) and numbers.count(float(v)) == 1
                      else folded.find(v.casefold()) if isinstance(v, str) and folded.count(v.casefold()) == 1
                      else -1 for v in value]
            kinds = {isinstance(v, str) for v in value}
            if min(places) >= 0 and len(kinds) == 1 and len(set(places)) == len(places) and places != sorted(places):
                changed[name] = [v for _, v in sorted(zip(places, value, strict=True))]
    for members in groups.values():
        if len(members) < 2 or len({i for i, _ in members}) != len(members):
            continue
        names = [name for _, name in sorted(members)]
        values = [args[name] for name in names]
        if not all(isinstance(v, str) and v.strip() for v in values):
            continue
        places = [folded.find(v.casefold()) for v in values]
        if min(places) < 0 or len(set(places)) != len(places) or places == sorted(places):
            continue
        ordered = [v for _, v in sorted(zip(places, values, strict=True))]
        changed.update(zip(names, ordered, strict=True))
    return {**args, **changed} if changed else None


_CAPITALISED = re.compile(r"[A-Z][\w'&.-]*")
_NAME_JOINERS = frozenset({"of", "de", "la", "le", "van", "von", "der", "du", "da", "del", "&"})


def _name_run(source: str, start: int, end: int) -> tuple[int, int]:
    """The span ``[start, end)`` of ``source`` grown over the capitalised words right after it (and the joiners
    inside a name: "Bank of America"); the first word of a sentence does not start a run."""
    while True:
        found = re.match(r"[ \t]+(\S+)", source[end:])
        if found is None:
            return start, end
        word = found.group(1).rstrip(",;:!?.)\"'")
        stop = end + found.start(1) + len(word)
        if _CAPITALISED.fullmatch(word) and not word.endswith("'s"):
            end = stop
            continue
        after = re.match(r"[ \t]+([A-Z][\w'&.-]*)", source[stop:])
        if word in _NAME_JOINERS and after is not None:
            end = stop
            continue
        return start, end


def whole_names(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each free-text string that the task writes as the start of a longer capitalised name grown
    to the whole name ("Gibson" -> "Gibson Les Paul", "Louvre" -> "Louvre Museum"), or ``None`` when nothing
    changes. Only a value that starts with a capital letter, occurs once in the task, and is followed there
    by further capitalised words; the name stops at a possessive ("The Weeknd's") and at punctuation. A value
    the task writes only cut inside a word, once, grows to the end of that word ("land dispute" -> "land
    disputes")."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        if not (isinstance(value, str) and _scalar_kind(sub) == "string" and "pattern" not in sub
                and "format" not in sub and value.strip() == value and value):
            return None
        found = [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(value) + r"(?!\w)", source)]
        if not found and value[-1:].isalpha():  # cut inside a word: "land dispute" for "land disputes"
            cut = list(re.finditer(r"(?<!\w)" + re.escape(value) + r"\w+", source, re.IGNORECASE))
            if len(cut) == 1 and not any(isinstance(v, str) and v and v in cut[0].group() and v != value
                                         for v in args.values()):
                return cut[0].group()
            return None
        if len(found) != 1 or not value[:1].isupper():
            return None
        start, end = _name_run(source, found[0], found[0] + len(value))
        grown = source[start:end]
        if not any(isinstance(v, str) and grown.endswith(v) and v != value for v in args.values()):
            return grown
        return None

    return changed_arguments(args, args_schema, fix)


# ------------------------------------------------------------------------------------------ enums and lists
def _enum_of(schema: Mapping[str, Any]) -> tuple[list[Any] | None, bool]:
    """The allowed values of an enum argument or of the items of an enum list, and whether it is a list."""
    if isinstance(schema.get("enum"), list):
        return schema["enum"], False
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping) and isinstance(items.get("enum"), list):
        return items["enum"], True
    return None, False


def named_enums(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each ``enum`` argument of the call set from the values the task names: a list of an
    ``enum`` becomes the named values, in the order the task names them; a single value the task does not
    name becomes the one value it names (when it names exactly one). ``None`` when nothing changes."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        allowed, is_list = _enum_of(sub)
        if not allowed:
            return None
        named = sorted((at, v) for v in allowed if (at := _named_at(v, source)) >= 0 and isinstance(v, str))
        values = [v for _, v in named]
        if is_list and isinstance(value, list) and values:
            return values
        if not is_list and len(values) == 1 and _named_at(value, source) < 0:
            return values[0]
        return None

    return changed_arguments(args, args_schema, fix)


def bounded_lists(schema: Any, source: str) -> Any:
    """A copy of ``schema`` in which every array gets a ``maxItems`` (unless it has one): the number of
    allowed values for a list of an ``enum``, the count of numbers the task writes for a list of numbers, and
    for other lists the items the task could list (its commas, "and"/"or" and semicolons, plus one). A small
    model that repeats an item until the token budget ends the list in time, and the answer stays
    readable."""
    numbers = len(number_mentions(source))
    separators = len(re.findall(r",|;|\band\b|\bor\b|\bи\b|\bили\b", source, re.IGNORECASE)) + 1

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, Mapping):
            return node
        out = {k: walk(v) for k, v in node.items()}
        if out.get("type") == "array" and "maxItems" not in out and isinstance(out.get("items"), Mapping):
            items = out["items"]
            if isinstance(items.get("enum"), list):
                out["maxItems"] = len(items["enum"])
            elif schema_types(items) & {"integer", "number"} and "string" not in schema_types(items):
                out["maxItems"] = max(numbers, 1)
            elif schema_types(items) == {"string"}:
                out["maxItems"] = separators
            if isinstance(out.get("minItems"), int) and out.get("maxItems", out["minItems"]) < out["minItems"]:
                out["maxItems"] = out["minItems"]
        return out

    return walk(copy.deepcopy(schema))


def deduped_lists(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with the repeated items of each list removed (the first kept) when the task does not write
    the item more than once; ``None`` when nothing changes."""
    if not isinstance(args, Mapping):
        return None
    changed: dict[str, Any] = {}
    for name, value in args.items():
        if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) for v in value):
            continue
        kept: list[Any] = []
        for item in value:
            if _key(item) in [_key(k) for k in kept] and _occurrences(item, source) < 2:
                continue
            kept.append(item)
        if len(kept) != len(value):
            changed[name] = kept
    return {**args, **changed} if changed else None


def omitted_unmentioned(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` without the optional arguments whose value the task never mentions: free text that does not
    occur in it (or has no letter or digit), a number it does not write, an ``enum`` value it does not name,
    a list with such an item. Booleans and objects stay (a task rarely writes them). ``None`` when nothing
    changes. An optional argument left out takes the tool's default; one filled with an invented value is
    wrong."""
    props = call_properties(args, args_schema)
    if props is None:
        return None
    required = required_fields(args_schema)
    numbers = task_numbers(source, percent=True)

    def mentioned(value: Any, schema: Mapping[str, Any]) -> bool:
        allowed, _ = _enum_of(schema)
        if isinstance(value, str):
            if allowed is not None:
                return _named_at(value, source) >= 0
            return bool(_key(value)) and is_grounded(value, source)
        if _is_number(value):
            return float(value) in numbers or round(float(value) * 100, 10) in numbers
        if isinstance(value, list):
            found = schema.get("items")
            items: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            return all(mentioned(v, items) if not isinstance(v, (dict, list, bool)) else True for v in value)
        return True

    dropped = [name for name, value in args.items()
               if name not in required and isinstance(props.get(name), Mapping) and value is not None
               and not mentioned(value, props[name])]
    return {k: v for k, v in args.items() if k not in dropped} if dropped else None


def asked_optionals(args: Mapping[str, Any], args_schema: Mapping[str, Any]) -> list[str]:
    """The optional arguments a call left out that the task may give: free text, numbers and lists of either
    (:func:`_decoding.copied_fields`; booleans and enums have their own techniques)."""
    required = required_fields(args_schema)
    return [name for name in copied_fields(args_schema) if name not in args and name not in required]


def kept_optionals(args: Mapping[str, Any], filled: Any, args_schema: Mapping[str, Any],
                   source: str) -> dict[str, Any]:
    """``args`` with the optional arguments of ``filled`` (the same call decoded again with every
    :func:`asked_optionals` argument required) that the task gives: a value it mentions
    (:func:`omitted_unmentioned`), not a piece of the question's syntax
    (:func:`_decoding.is_fragment`), and not another argument's value or a part of one
    (:func:`overlapping_optionals`, :func:`shared_values`), nor the value of another added one (``cc`` and
    ``bcc`` both "John Doe": the model filled both with one span). The rest is left out (the tool's default)."""
    if not isinstance(filled, Mapping):
        return dict(args)
    asked = set(asked_optionals(args, args_schema))
    added = {k: v for k, v in filled.items() if k in asked and v is not None
             and not (isinstance(v, str) and (not v.strip() or is_fragment(v, source)))}
    out = {**args, **added}
    out = omitted_unmentioned(out, args_schema, source) or out
    copies = set(overlapping_optionals(out, args_schema, source))
    copies |= {n for pair in shared_values(out, args_schema, source) for n in pair if n in added}
    taken = {_key(str(v)) for v in args.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    copies |= {n for n, v in added.items() if isinstance(v, str) and _key(v) in taken}  # "10" beside height 10
    seen = [_key(v) for v in added.values() if isinstance(v, (str, int, float))]
    copies |= {n for n, v in added.items() if isinstance(v, (str, int, float)) and seen.count(_key(v)) > 1}
    return {**args, **{k: v for k, v in out.items() if k in added and k not in args and k not in copies}}


_NEGATION_TEXT = "no not without exclude excluding except never нет не без кроме"
_NEGATIONS = frozenset(_NEGATION_TEXT.split())
NEGATION_WINDOW = 3
"""Words before a flag's name in which a negation ("without details") keeps :func:`implied_options` off it."""


_FLAG_VERB_TEXT = ("is has have with include includes show return get use enable enabled should do want need flag only "
                   "allow allows consider account")
_FLAG_VERBS = frozenset(_FLAG_VERB_TEXT.split())


def _flag_named(name: str, source: str) -> bool:
    """Whether ``source`` writes every word of the argument name ``name`` (snake_case or camelCase split;
    stems; without the verbs of a flag such as ``include`` or ``is``), none of them within
    :data:`NEGATION_WINDOW` words after a negation."""
    wanted = {stem(w) for w in name_words(name) if w not in _FLAG_VERBS and len(w) > 2 and not w.isdigit()}
    if not wanted:
        return False
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+(?:'t)?", source)]
    found: set[str] = set()
    for i, word in enumerate(words):
        hits = {s for s in wanted if _stems_match(s, stem(word))}
        if not hits:
            continue
        if any(w in _NEGATIONS or w.endswith("n't") for w in words[max(0, i - NEGATION_WINDOW):i]):
            return False
        found |= hits
    return found == wanted


def implied_options(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with the optional arguments the task asks for in words, or ``None`` when nothing changes:

    * a boolean whose name's content words all occur in the task, not after a negation, is ``true`` (left
      out or ``false`` in the call): "with detailed description" -> ``detail``, "include owners information"
      -> ``include_owner``;
    * a free string the call left out, whose description quotes its values ("Can be 'list' or
      'dictionary'"), takes the one quoted value the task names as a whole word;
    * a number the call left out takes the one number the task writes next to its name or next to a word of
      its description, when no argument of the call holds that number ("with monthly compounding" ->
      ``compounding_periods_per_year=12``).

    A small model copies worked examples that show only the required arguments, so it leaves out the option
    the task spells out."""
    props = call_properties(args, args_schema)
    if props is None:
        return None
    required = required_fields(args_schema)
    added: dict[str, Any] = {}
    for name, sub in props.items():
        if name in required or not isinstance(sub, Mapping) or not isinstance(name, str):
            continue
        kinds = schema_types(sub)
        if kinds == {"boolean"} and args.get(name) is not True and _flag_named(name, source):
            added[name] = True
        elif name not in args and kinds == {"string"} and "enum" not in sub and "const" not in sub:
            quoted = dict.fromkeys(_QUOTED.findall(str(sub.get("description") or "")))
            named = [v for v in quoted if _named_at(v, source) >= 0]
            if len(named) == 1:
                added[name] = named[0]
    numbers = [n for n, sub in props.items() if n not in required and n not in args and isinstance(n, str)
               and isinstance(sub, Mapping) and _numeric(sub)]
    if numbers:  # "with monthly compounding": compounding_periods_per_year=12
        added.update(_implied_numbers(numbers, props, args, source))
    return {**args, **added} if added else None


def _implied_numbers(names: list[str], props: Mapping[str, Any], args: Mapping[str, Any],
                     source: str) -> dict[str, Any]:
    """The optional number arguments of ``names`` (left out of the call) that the task gives a number for: the
    number their name is next to, else the one whose nearest content word is a word of their description, when
    that is one number, it fits the type, and no argument of the call holds it."""
    mentions = number_mentions(source)
    stems = {n: content_stems(n) for n in names}
    near = _near(names, stems, mentions, {**stems, **{o: content_stems(o) for o in args if isinstance(o, str)}})
    adjacent = _adjacent([n for n in names if not near[n]], props, mentions, most=True)
    held = {float(v) for v in args.values() if _is_number(v)}
    out: dict[str, Any] = {}
    for name in names:
        found = near[name] or adjacent.get(name, set())
        if len(found) == 1 and (value := next(iter(found))) not in held and _fits(value, props[name]):
            out[name] = _as_json_number(value, props[name])
    return out


_PURE_BEFORE = (("anchor_numbers", anchored_numbers), ("percent_rates", percent_rates),
                ("sibling_order", sibling_order))
_PURE_AFTER = (("whole_names", whole_names), ("named_enums", named_enums), ("bounded_lists", deduped_lists),
               ("omit_unmentioned", omitted_unmentioned), ("implied_options", implied_options))


def corrected(args: Mapping[str, Any], args_schema: Mapping[str, Any], source: str, values: Collection[str], *,
              redecode: Callable[[Mapping[str, Any]], Any] | None = None) -> dict[str, Any]:
    """``args`` corrected by the techniques named in ``values``, in this order: numbers next to their names
    (``anchor_numbers``), percentages as rates (``percent_rates``), numbered siblings in the task's order
    (``sibling_order``), distinct sibling values (``distinct_values``: of two arguments that share a value the
    task writes once, an optional one is dropped; for two required ones ``redecode(schema)`` decodes the
    arguments again under :func:`distinct_schema` and the pair is put in the task's order; without
    ``redecode`` they stay), a value cut off its sibling's (``nested_spans``), whole spans (``whole_spans``),
    whole names (``whole_names``), enum values the task names (``named_enums``), lists without repeats
    (``bounded_lists``), optional arguments the task never mentions left out (``omit_unmentioned``),
    optional arguments the task asks for in words added (``implied_options``)."""
    out = dict(args)
    for name, fix in _PURE_BEFORE:
        if name in values:
            out = fix(out, args_schema, source) or out
    if "distinct_values" in values:
        overlapping = overlapping_optionals(out, args_schema, source)
        out = {k: v for k, v in out.items() if k not in overlapping}
        required = required_fields(args_schema)
        for first, second in shared_values(out, args_schema, source):
            if first not in out or second not in out:
                continue
            twin = _key(out[first]) != _key(out[second])  # a rate and the percentage it was read from
            optional = [n for n in ((second,) if twin else (second, first)) if n not in required]
            if optional:  # an optional argument that copies another one: its default is the better guess
                out.pop(optional[0])
                continue
            retry = distinct_schema(out, args_schema, second, source) if redecode is not None else None
            if redecode is None or retry is None:
                continue
            new = redecode(retry)
            if isinstance(new, Mapping) and second in new:
                out = task_ordered({**out, second: new[second]}, first, second, source)
    for name, fix in (("nested_spans", nested_spans), ("whole_spans", whole_spans), *_PURE_AFTER):
        if name in values:
            out = fix(out, args_schema, source) or out
    return out


def in_forms(args: Mapping[str, Any], args_schema: Mapping[str, Any], source: str,
             values: Collection[str]) -> dict[str, Any]:
    """``args`` with the :data:`FORM_TECHNIQUES` named in ``values`` applied, in this order: a listed value the
    task names (``listed_values``, :func:`_spans.listed_values`), numbers in the described unit
    (``unit_numbers``), dates in the described format (``date_formats``, both :mod:`_forms`)."""
    out = dict(args)
    for name, fix in (("listed_values", listed_values), ("unit_numbers", unit_numbers),
                      ("date_formats", date_formats)):
        if name in values:
            out = fix(out, args_schema, source) or out
    return out
