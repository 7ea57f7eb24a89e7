"""Decoding techniques for small local models that live outside the model weights (pure functions).

Three of them, all generic (derived from the tools' JSON schemas and the prompt text, never from tool names):

* **Format patterns** (:func:`with_format_patterns`): a string argument whose schema says
  ``"format": "email"`` or whose name says it is an e-mail, a user name / login, a phone number or a URL
  gets a regular-expression ``pattern`` that llama.cpp's grammar converter enforces, so an e-mail field
  cannot hold a name and a user-name field cannot hold an address.
* **The answer's two stages** (:func:`action_schema`, :func:`branches`): the answer schema of an agent
  (``react_agent.tools._schema.answer_schema``: an ``anyOf`` with one branch per tool and FINISH) split into the
  schema of ``{"thought", "action"}`` (the action an ``enum`` of the names) and, per action, the schema of
  its ``action_input``.
* **Grounding** (:func:`grounding_source`, :func:`ungrounded`, :func:`grounded_schema`): a string argument
  whose value appears nowhere in the task (or in the observations of the history) is suspect; the
  arguments are then decoded again with each suspect field restricted to the spans of the task text (an
  ``enum`` of its word sequences), filtered by the field's pattern. Lists are checked item by item; with
  ``numbers`` a number argument the task does not write is suspect too (decoded again among the task's
  numbers). The other value corrections are in :mod:`_values`.
* **Optional enums** (:func:`filled_enums`): an optional argument left out whose allowed values the task
  names word for word is set to them.
* **Tool relevance** (:func:`content_stems`, :func:`tool_descriptions`, :func:`relevant_tools`): the tools
  whose name and description share the most content words with the task and history; a tool that shares
  none is not what the task asks for.

The value helpers that :mod:`_values`, :mod:`_spans` and :mod:`_forms` share
(``_key``, ``_named_at``, ``_scalar_kind``, ``_stems_match``, ``_QUOTED``, ``MIN_OVERLAP``) live here too, so
those modules import from this one and never from each other in a cycle.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

__all__ = [
    "EMAIL_PATTERN",
    "LOGIN_PATTERN",
    "PHONE_PATTERN",
    "SITE_PATTERN",
    "URL_PATTERN",
    "action_schema",
    "branches",
    "call_properties",
    "changed_arguments",
    "content_stems",
    "copied_fields",
    "filled_enums",
    "format_pattern",
    "grounded_schema",
    "grounding_source",
    "is_clause",
    "is_fragment",
    "is_grounded",
    "name_words",
    "named_tools",
    "opening_turn",
    "relevant_tools",
    "required_fields",
    "schema_types",
    "should_abstain",
    "spans",
    "spelled_numbers",
    "stem",
    "task_text",
    "tool_descriptions",
    "ungrounded",
    "unsupported",
    "with_argument_descriptions",
    "with_format_patterns",
]

# The character classes leave out '"' and '\\' (they would need JSON escapes) and white space.
EMAIL_PATTERN = r'^[^@ "\\]+@[^@ "\\.]+([.][^@ "\\.]+)+$'
"""An e-mail address: ``local@domain.tld``."""
LOGIN_PATTERN = r'^[^@ "\\]+$'
"""A user name or login: no ``@`` and no spaces."""
PHONE_PATTERN = r"^\+?[0-9]{6,15}$"
"""A phone number: an optional ``+`` and 6-15 digits."""
URL_PATTERN = r'^https?://[^ "\\]+$'
"""An http(s) URL."""
SITE_PATTERN = r'^(https?://)?[^ "\\./]+([.][^ "\\./]+)+(/[^ "\\]*)?$'
"""A web site: a host name with a dot ("Foodnetwork.com", "www.example.org"), optionally with a scheme and path."""

_NAME_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(^|_)e_?mail(_?address)?$", re.IGNORECASE), EMAIL_PATTERN),
    (re.compile(r"^(user_?name|login|user_?id|nick(name)?|handle)$", re.IGNORECASE), LOGIN_PATTERN),
    (re.compile(r"(^|_)(phone|mobile|tel|telephone)(_?number)?$", re.IGNORECASE), PHONE_PATTERN),
    (re.compile(r"(^|_)(url|uri|link)$", re.IGNORECASE), URL_PATTERN),
    (re.compile(r"(^|_)(website|site|domain)$", re.IGNORECASE), SITE_PATTERN),
)
_FORMATS = {"email": EMAIL_PATTERN, "idn-email": EMAIL_PATTERN, "uri": URL_PATTERN, "url": URL_PATTERN}


def format_pattern(name: str, schema: Mapping[str, Any]) -> str | None:
    """The pattern for a string argument called ``name`` with ``schema``, or ``None``.

    A schema that already constrains the value (``enum``, ``const``, ``pattern``) or is not a plain string
    gets none. ``format`` wins over the name (``email``, ``uri``); the name rules: ``email``/``e_mail``/
    ``*_email`` -> e-mail, ``username``/``login``/``user_id``/``nickname`` -> no ``@`` and no spaces,
    ``phone``/``*_phone_number`` -> digits, ``url``/``link`` -> http(s) URL, ``website``/``site``/``domain`` -> a
    host name with a dot, the scheme optional ("Foodnetwork.com").
    """
    if schema.get("type") != "string" or any(k in schema for k in ("enum", "const", "pattern")):
        return None
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    for rule, pattern in _NAME_RULES:
        if rule.search(name):
            return pattern
    return None


def with_format_patterns(schema: Any) -> Any:
    """A copy of ``schema`` in which every string property that :func:`format_pattern` recognises has a
    ``pattern`` (inside ``anyOf`` branches too, so ``str | None`` fields are covered)."""
    if isinstance(schema, list):
        return [with_format_patterns(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: _patterned(name, with_format_patterns(sub)) for name, sub in value.items()}
        else:
            out[key] = with_format_patterns(value)
    return out


def _patterned(name: str, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("anyOf"), list):
        return {**schema, "anyOf": [_patterned(name, s) for s in schema["anyOf"]]}
    pattern = format_pattern(name, schema)
    return {**schema, "pattern": pattern} if pattern else schema


# ------------------------------------------------------------------------------------------ two stages
def branches(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """``{action name: action_input schema}`` of an answer schema, or ``None`` when ``schema`` is not one.

    An answer schema is an ``anyOf`` whose every branch is an object with ``action`` given as a ``const``
    and an ``action_input`` schema (what ``react_agent.tools._schema.answer_schema`` builds).
    """
    options = schema.get("anyOf")
    if not isinstance(options, list) or not options:
        return None
    out: dict[str, dict[str, Any]] = {}
    for branch in options:
        props = branch.get("properties") if isinstance(branch, Mapping) else None
        if not isinstance(props, Mapping):
            return None
        action, args = props.get("action"), props.get("action_input")
        if not isinstance(action, Mapping) or not isinstance(action.get("const"), str) or not isinstance(args, dict):
            return None
        out[action["const"]] = args
    return out


def action_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first stage of an answer schema: ``{"thought": ..., "action": <enum of the names>}``, or ``None``.

    ``thought`` keeps the first branch's schema (its ``maxLength``); the names keep the branches' order.
    """
    names = branches(schema)
    if names is None:
        return None
    first = schema["anyOf"][0]["properties"]
    props: dict[str, Any] = {}
    if "thought" in first:
        props["thought"] = copy.deepcopy(first["thought"])
    props["action"] = {"enum": list(names)}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


# ------------------------------------------------------------------------------------------ grounding
_TURN_MARKERS = ("Now your turn", "Теперь твой ход", "**Task**:", "**Задача**:")
_STRIP = "\"'`«»“”„()[]{}<>.,;:!?"


def grounding_source(prompt: str, markers: Sequence[str] = _TURN_MARKERS) -> str:
    """The part of ``prompt`` that states the current task and its history: from the last turn marker of
    the compact prompts (``Now your turn`` / ``Теперь твой ход``), else from the full prompts' ``**Task**:``
    label; the whole prompt when there is none. Worked examples before the marker are left out, so a value
    copied from an example is not "grounded", and so are the labels that start lines (``Answer:``)."""
    best, length = _turn_start(prompt, markers)
    text = prompt[best + length:] if best >= 0 else prompt
    return _LABEL.sub("", text)


def _turn_start(prompt: str, markers: Sequence[str]) -> tuple[int, int]:
    """Where the current turn starts in ``prompt`` (the marker's index, -1 for none) and the marker's length."""
    best, length = -1, 0
    for marker in markers[:2]:
        found = prompt.rfind(marker)
        if found > best:
            best, length = found, len(marker)
    if best < 0:
        for marker in markers[2:]:
            found = prompt.find(marker)
            if found >= 0 and (best < 0 or found < best):
                best, length = found, len(marker)
    return best, length


def task_text(prompt: str, markers: Sequence[str] = _TURN_MARKERS) -> str:
    """:func:`grounding_source` without the template's own lines: a line of the current turn that a worked
    example before it also has (``No history yet``) is the prompt's text, not the task's."""
    best, _ = _turn_start(prompt, markers)
    shared = {line.strip() for line in _LABEL.sub("", prompt[:max(best, 0)]).splitlines()}
    return "\n".join(line for line in grounding_source(prompt, markers).splitlines() if line.strip() not in shared)


_LABEL = re.compile(r"(?m)^[ \t]*\w[\w ]{0,30}:(?=\s|$)")
"""A template's line label (``Task:``, ``History:``, ``Answer:``, ``Observation:``): not task text."""


def _norm(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def is_grounded(value: str, source: str, *, exact: bool = False) -> bool:
    """Whether ``value`` occurs in ``source``, ignoring case, spaces and punctuation, or with ``exact`` as it
    is (an e-mail or login written in another case is another value); ``""`` counts as grounded: it claims
    nothing."""
    if exact:
        return not value or value in source
    key = _norm(value)
    return not key or key in _norm(source)


def ungrounded(args: Any, args_schema: Mapping[str, Any], source: str, *, numbers: bool = False,
               fragments: bool = False) -> list[str]:
    """The top-level free-text string arguments of ``args`` whose values do not occur in ``source``, and the
    list arguments with an item that does not (strings as above, numbers as a number written in ``source``);
    with ``numbers`` also the number arguments whose value ``source`` does not write (a percentage counts as
    its fraction too: "3%" grounds 3 and 0.03); with ``fragments`` also the free-text arguments whose value is
    a piece of the question's syntax (:func:`is_fragment`).

    Values of fields with a ``pattern`` (e-mails, logins, phones, URLs) must occur exactly. Only
    properties whose schema is a plain string (no ``enum``/``const``) or an array of such strings or of
    numbers are checked, and only non-empty values; numbers, booleans and objects are left alone.
    """
    props = call_properties(args, args_schema)
    if props is None:
        return []
    bad = []
    written = _numbers(source)
    for name, value in args.items():
        sub = props.get(name)
        if not isinstance(sub, Mapping):
            continue
        if numbers and isinstance(value, (int, float)) and not isinstance(value, bool) and _plain_number(sub):
            if float(value) not in written and float(value) not in _fractions(source):
                bad.append(name)
            continue
        invented_text = isinstance(value, str) and _free_string(sub) and (not is_grounded(
            value, source, exact="pattern" in _string_branch(sub)) or (fragments and is_fragment(value, source)))
        if invented_text or (isinstance(value, list) and _invented_items(value, sub, source, written)):
            bad.append(name)
    return bad


def _plain_number(schema: Mapping[str, Any]) -> bool:
    """An integer or number argument without ``enum``/``const`` (and not also a string)."""
    kinds = schema_types(schema)
    return bool(kinds & {"integer", "number"}) and "string" not in kinds and "enum" not in schema \
        and "const" not in schema


def _fractions(text: str) -> set[float]:
    """The percentages written in ``text`` as fractions ("3%", "3 percent" -> 0.03)."""
    out: set[float] = set()
    for found in re.finditer(r"(?<![\w.])([-+]?\d[\d,]*(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)", text,
                             re.IGNORECASE):
        try:
            out.add(round(float(found.group(1).replace(",", "")) / 100, 10))
        except ValueError:
            continue
    return out


def _items_schema(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``items`` schema of an array schema (or of its array ``anyOf`` branch), or ``None``."""
    if isinstance(schema.get("anyOf"), list):
        for sub in schema["anyOf"]:
            if isinstance(sub, Mapping) and sub.get("type") == "array":
                return _items_schema(sub)
        return None
    items = schema.get("items")
    return items if schema.get("type") == "array" and isinstance(items, Mapping) else None


def _invented_items(value: list[Any], schema: Mapping[str, Any], source: str, numbers: set[float]) -> bool | None:
    """Whether a list argument has an item ``source`` never gives (free-text strings and numbers are checked);
    ``None`` when the list is not checked (empty, other item types, an ``enum``)."""
    items = _items_schema(schema)
    if not value or items is None or "enum" in items or "const" in items:
        return None
    if all(isinstance(v, str) for v in value) and _free_string(items):
        return not all(is_grounded(v, source, exact="pattern" in _string_branch(items)) for v in value)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) \
            and schema_types(items) & {"integer", "number"}:
        return not all(float(v) in numbers for v in value)
    return None


_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")

_UNITS_TEXT = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen " \
    "sixteen seventeen eighteen nineteen"
_UNITS_EN = _UNITS_TEXT.split()
_TENS_EN = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
            "ninety": 90}
_RU = {1: "один одна одно одну одного одной", 2: "два две двух двум двумя", 3: "три трех трёх трем трём тремя",
       4: "четыре четырех четырёх четырем четырём", 5: "пять пяти", 6: "шесть шести", 7: "семь семи",
       8: "восемь восьми", 9: "девять девяти", 10: "десять десяти", 12: "двенадцать двенадцати",
       20: "двадцать двадцати", 30: "тридцать тридцати", 100: "сто ста", 1000: "тысяча тысячу тысячи"}
NUMBER_WORDS: dict[str, int] = {
    **{word: value for value, word in enumerate(_UNITS_EN)}, **_TENS_EN,
    "hundred": 100, "thousand": 1000, "twice": 2, "thrice": 3, "dozen": 12, "single": 1, "double": 2,
    "triple": 3, "дважды": 2, "трижды": 3, "дюжина": 12, "дюжину": 12,
    "annually": 1, "yearly": 1, "semiannually": 2, "biannually": 2, "quarterly": 4, "monthly": 12, "weekly": 52,
    "daily": 365, "ежегодно": 1, "ежеквартально": 4, "ежемесячно": 12, "еженедельно": 52, "ежедневно": 365,
    **{word: value for value, words in _RU.items() for word in words.split()},
}
"""Numbers a task spells out (English and Russian, lower case): units, tens, "hundred", "twice", "dozen",
"double" ..., and how often a year ("quarterly" 4, "monthly" 12: compounding periods); a hyphenated
``twenty-five`` is 25 (:func:`spelled_numbers`)."""
_SPELLED = re.compile(r"(?<![\w-])(" + "|".join(sorted(_TENS_EN, key=len, reverse=True)) + r")-("
                      + "|".join(_UNITS_EN[1:10]) + r")(?![\w-])|(?<![\w-])([^\W\d_]+)(?![\w-])",
                      re.IGNORECASE)


def spelled_numbers(text: str) -> list[tuple[int, int, int]]:
    """The numbers ``text`` spells out as words (:data:`NUMBER_WORDS`): ``(value, start, end)`` in order. A
    word glued to another by a hyphen (``six-sided``) is part of a name, not a number, unless the two make
    one number (``twenty-five``)."""
    out = []
    for found in _SPELLED.finditer(text):
        if found.group(1):
            out.append((_TENS_EN[found.group(1).casefold()] + NUMBER_WORDS[found.group(2).casefold()],
                        found.start(), found.end()))
        elif (value := NUMBER_WORDS.get(found.group(3).casefold())) is not None:
            out.append((value, found.start(), found.end()))
    return out


def _numbers(text: str) -> set[float]:
    """The numbers written in ``text``: in digits ("1,000", "-2.5") or spelled out (:func:`spelled_numbers`)."""
    out: set[float] = {float(value) for value, _, _ in spelled_numbers(text)}
    for token in _NUMBER.findall(text):
        try:
            out.add(float(token.replace(",", "")))
        except ValueError:
            continue
    return out


def call_properties(args: Any, args_schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``properties`` of a tool's argument schema, when ``args`` is a call's mapping of arguments and the
    schema has properties; ``None`` when there is nothing to check or fix."""
    props = args_schema.get("properties")
    return props if isinstance(args, Mapping) and isinstance(props, Mapping) else None


def changed_arguments(args: Any, args_schema: Mapping[str, Any],
                      fix: Callable[[Any, Any, Mapping[str, Any]], Any]) -> dict[str, Any] | None:
    """``args`` with each argument that has a schema among the properties of ``args_schema`` set to
    ``fix(name, value, schema)`` where that gives a value (not ``None``) other than the argument's own;
    ``None`` when nothing changes or there is nothing to fix (:func:`call_properties`). The loop every
    per-argument value correction shares."""
    props = call_properties(args, args_schema)
    if props is None:
        return None
    changed: dict[Any, Any] = {}
    for name, value in args.items():
        sub = props.get(name)
        if isinstance(sub, Mapping) and (new := fix(name, value, sub)) is not None and new != value:
            changed[name] = new
    return {**args, **changed} if changed else None


def required_fields(args_schema: Mapping[str, Any]) -> set[Any]:
    """The names a schema's ``required`` lists (none when it is not a list)."""
    required = args_schema.get("required")
    return set(required) if isinstance(required, list) else set()


def schema_types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema allows (through ``anyOf`` too); empty when it names none."""
    if isinstance(schema.get("anyOf"), list):
        return {t for s in schema["anyOf"] if isinstance(s, Mapping) for t in schema_types(s)}
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else set()


def unsupported(args: Any, args_schema: Mapping[str, Any], source: str, *,
                percent: bool = False, fragments: bool = False) -> tuple[int, int]:
    """``(invented, checked)``: how many of the required free-text, number and list arguments of ``args``
    have a value that does not occur in ``source`` (numbers: as a number written in it; lists: any item), of
    how many checked. Arguments with an ``enum``/``const``, booleans, objects and lists of other items are
    not checked. With ``percent`` a number the task writes as a percentage also counts as its fraction."""
    if not isinstance(args, Mapping):
        return 0, 0
    props = args_schema.get("properties")
    required = args_schema.get("required")
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return 0, 0
    numbers = _numbers(source) | (_fractions(source) if percent else set())
    invented = checked = 0
    for name in required:
        sub, value = props.get(name), args.get(name)
        if not isinstance(sub, Mapping) or "enum" in sub or "const" in sub or isinstance(value, bool):
            continue
        if isinstance(value, str) and _free_string(sub):
            checked += 1
            invented += not is_grounded(value, source) or (is_fragment if fragments else is_clause)(value, source)
        elif isinstance(value, (int, float)) and schema_types(sub) & {"integer", "number"}:
            checked += 1
            invented += float(value) not in numbers
        elif isinstance(value, list):
            verdict = _invented_items(value, sub, source, numbers)
            if verdict is not None:
                checked += 1
                invented += verdict
    return invented, checked


_CLAUSE = re.compile(r"(?:who|what|when|where|why|how|which|whose|whom|i|you|we|me|my|кто|что|где|когда|как|я)"
                     r"(?!\w)", re.IGNORECASE)


def is_clause(value: str, source: str) -> bool:
    """Whether a string value is a piece of the question rather than a value: it begins with a question word
    or a first- or second-person pronoun ("Who", "What's the penalty for", "I can buy in-store"), and the task
    does not quote it (a quoted title such as 'How I Met Your Mother' is a value)."""
    text = value.strip()
    if not _CLAUSE.match(text):
        return False
    return not any(f"{q}{text}" in source for q in ("'", '"', "‘", "“", "«"))


_FRAGMENT_TEXT = ("a an the of in on at to for from by with and or into about than as near via "
                  "в на с по для из к о от и или")
_FRAGMENT_WORDS = frozenset(_FRAGMENT_TEXT.split())


def is_fragment(value: str, source: str) -> bool:
    """Whether a string value is a piece of the question's syntax rather than a value: a clause
    (:func:`is_clause`), a lower-case function word alone ("in", "the"), or a span cut next to one: it ends
    with a function word ("size of the sculpture with", "University in") or, lower case, begins with one ("in
    London"). Capitalised words are names ("The Alchemist", product "A")."""
    words = value.split()
    if not words:
        return False
    return is_clause(value, source) or words[-1] in _FRAGMENT_WORDS or (len(words) > 1 and words[0] in _FRAGMENT_WORDS)


def should_abstain(args: Any, args_schema: Mapping[str, Any], source: str, *, percent: bool = False,
                   fragments: bool = False) -> bool:
    """Whether a call is better not made: one of its checked required arguments (:func:`unsupported`) has a
    value the task and history never give, i.e. the task does not ask for this call (or the model could not
    read the value from it, and the call would be wrong anyway)."""
    invented, _ = unsupported(args, args_schema, source, percent=percent, fragments=fragments)
    return invented > 0


def _free_string(schema: Mapping[str, Any]) -> bool:
    if isinstance(schema.get("anyOf"), list):
        return any(isinstance(s, Mapping) and _free_string(s) for s in schema["anyOf"])
    return schema.get("type") == "string" and "enum" not in schema and "const" not in schema


def _string_branch(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(schema.get("anyOf"), list):
        for sub in schema["anyOf"]:
            if isinstance(sub, Mapping) and sub.get("type") == "string":
                return sub
    return schema


def spans(text: str, *, max_words: int = 6, limit: int = 400) -> list[str]:
    """The word sequences of ``text`` (1 to ``max_words`` words, quotes and punctuation trimmed at both
    ends), each once, in order of appearance, at most ``limit``."""
    words = [w.strip(_STRIP) for w in text.split()]
    out: dict[str, None] = {}
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + max_words) + 1):
            piece = " ".join(words[i:j]).strip(_STRIP)
            if piece and len(piece) <= 120:
                out.setdefault(piece, None)
                if len(out) >= limit:
                    return list(out)
    return list(out)


def grounded_schema(args_schema: Mapping[str, Any], fields: Sequence[str], text: str, *,
                    clean: bool = False, taken: Collection[str] = ()) -> dict[str, Any]:
    """A copy of ``args_schema`` where each of ``fields`` may only take a span of ``text`` (:func:`spans`)
    that matches the field's ``pattern`` (if any); a list field's items likewise, or, for a list of numbers,
    only the numbers written in ``text``. A field with no fitting value keeps its schema. With ``clean`` the
    spans that are pieces of the question's syntax (:func:`is_fragment`) and the values in ``taken`` (other
    arguments' values) are not offered."""
    out = copy.deepcopy(dict(args_schema))
    props = out.get("properties")
    if not isinstance(props, dict):
        return out
    candidates = spans(text)
    if clean:
        avoid = {_norm(t) for t in taken}
        candidates = [c for c in candidates if not is_fragment(c, text) and _norm(c) not in avoid]
    for name in fields:
        sub = props.get(name)
        if not isinstance(sub, Mapping):
            continue
        items = _items_schema(sub)
        if items is not None:
            fitting_items = _fitting(items, candidates, text)
            if fitting_items:
                array = {k: v for k, v in sub.items() if k != "anyOf"} if "anyOf" in sub else dict(sub)
                array.update(type="array", items={"enum": fitting_items})
                props[name] = array
            continue
        fitting = _fitting(sub, candidates, text)
        if fitting and _plain_number(sub):
            props[name] = {"enum": fitting}  # the numbers written in the task (whole ones for an integer)
        elif fitting:
            props[name] = {"type": "string", "enum": fitting}
    return out


def copied_fields(args_schema: Mapping[str, Any]) -> list[str]:
    """The arguments of ``args_schema`` that :func:`grounded_schema` can restrict to values of a text: free-text
    strings, plain numbers and lists of either (not enums, constants, booleans or objects)."""
    props = args_schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    out = []
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        items = _items_schema(sub)
        kept = items if items is not None else sub
        if isinstance(kept, Mapping) and (_free_string(kept) or _plain_number(kept)):
            out.append(str(name))
    return out


def _fitting(schema: Mapping[str, Any], candidates: list[str], text: str) -> list[Any]:
    """The values of ``text`` a field with ``schema`` may take: spans for a string (its pattern and
    ``maxLength`` obeyed), the numbers written in ``text`` for a number (whole ones for an integer)."""
    kinds = schema_types(schema)
    if "string" not in kinds and kinds & {"integer", "number"}:
        found = sorted(_numbers(text))
        if "number" not in kinds:
            return [int(n) for n in found if n.is_integer()]
        return [int(n) if n.is_integer() else n for n in found]
    base = _string_branch(schema)
    pattern = base.get("pattern")
    regex = re.compile(str(pattern)) if isinstance(pattern, str) else None
    max_length = base.get("maxLength")
    return [s for s in candidates if (regex is None or regex.search(s))
            and (not isinstance(max_length, int) or len(s) <= max_length)]


# ------------------------------------------------------------------------------------------ shared value helpers
def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stems_match(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def _key(value: Any) -> Any:
    if isinstance(value, str):
        return "".join(ch for ch in value.casefold() if ch.isalnum())
    if _is_number(value):
        return float(value)
    return None


def _scalar_kind(schema: Mapping[str, Any]) -> str | None:
    if "enum" in schema or "const" in schema:
        return None
    kinds = schema_types(schema)
    if "string" in kinds:
        return "string"
    if kinds & {"integer", "number"}:
        return "number"
    return None


def _enum_words(value: str) -> str:
    return re.sub(r"[_\-]+", " ", value).strip().casefold()


def _named_at(value: Any, source: str) -> int:
    """Where ``source`` names the enum value (``average_review_rating`` as "average review rating", a
    plural *s* allowed), -1 when it does not; values shorter than three characters are never named."""
    if not isinstance(value, str) or len(value) < 3:
        return -1
    words = _enum_words(value)
    found = re.search(r"(?<!\w)" + re.escape(words).replace(r"\ ", r"[\s_\-]+") + r"s?(?!\w)", source,
                      re.IGNORECASE)
    return found.start() if found else -1


MIN_OVERLAP = 3
"""Characters a value needs before :func:`overlapping_optionals` compares it (short ones overlap by chance)."""


_QUOTED = re.compile(r"(?<!\w)['‘\"“«]([^'’\"”»\n]{3,40})['’\"”»](?!\w)")


# ------------------------------------------------------------------------------------------ tool relevance
_STOP_TEXT = """
a an the of in on at to for from by with and or not no is are be been was were am it its this that these those
there here what which who whom whose how when where why do does did can could would should will shall may might
must i me my you your we our us he she they them their his her if as into about than then also please some any
all each per very much many more most just only own same so too out up down over under again via using use used
given give get gets got find finds found calculate calculates calculated calculation compute computes computed
determine determines retrieve retrieves fetch fetches return returns provide provides provided specific
specified certain based tell show let want need like know help one two three value values data info
information details detail type name number
в во на с со по для из к ко о об от у не что как это этот эта эти и или а но же ли бы то так
я ты он она оно мы вы они его её ее их мой моя моё мои твой наш ваш свой все всё мне меня нам
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that tell nothing about what a tool does: function words and the verbs every tool description
uses (English, Russian). A lexicon, the same for any tool set."""

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
STEM_LENGTH = 5
"""Content words are compared by their first letters (a crude stemmer: ``triangle``/``triangular``)."""


def content_stems(text: str) -> set[str]:
    """The content words of ``text`` (camelCase and snake_case split, lower case, no numbers, no stop words),
    each cut to :data:`STEM_LENGTH` letters after a plural ``s``."""
    return {stem(word) for word in name_words(text)
            if word not in _STOP_WORDS and len(word) >= 2 and not any(ch.isdigit() for ch in word)}


def name_words(text: str) -> list[str]:
    """The words of ``text`` with camelCase and snake_case split, lower case (``includeOwner_info`` -> include,
    owner, info)."""
    return _WORD.findall(_CAMEL.sub(" ", text).casefold())


def stem(word: str) -> str:
    """``word`` in lower case, without a plural ``s`` (not ``ss``; words of four letters or more), cut to
    :data:`STEM_LENGTH` letters."""
    word = word.casefold()
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:STEM_LENGTH]


def tool_descriptions(prompt: str, names: Sequence[str], *, arguments: bool = False) -> dict[str, str]:
    """``{name: "name - description"}`` for each tool of ``names`` that the prompt lists on a line of its own
    as ``name - description`` (how the built-in ``tools`` templates render a tool); tools not found are left
    out. With ``arguments`` the descriptions of the tool's arguments that the prompt lists under it
    (indented ``arg: description (type, required)`` lines, without the argument names and types, with the
    values an enum allows) are added: "title: The official title. Default is 'King'." tells what the tool is
    about as much as its own line."""
    out: dict[str, str] = {}
    for name in names:
        found = _tool_line(name).search(prompt)
        if found:
            out[name] = f"{name} {found.group(1)}"
            if arguments:
                described = _argument_lines(prompt, found.end()).values()
                out[name] = " ".join([out[name], *(_without_type(text) for text in described)])
    return out


_ARG_TYPE = re.compile(r"\((?:string|integer|number|boolean|array|object|null|any)\b[^)]*\)\s*$")
_ALLOWED = re.compile(r"\bone of: ([^;)]*)")


def _without_type(text: str) -> str:
    """An argument line's description without its ``(type, required; ...)`` suffix, but with the values the
    suffix allows ("one of: Protein, Calories"): they tell what the tool is about too."""
    found = _ARG_TYPE.search(text)
    if found is None:
        return text
    allowed = _ALLOWED.search(found.group())
    return " ".join(part for part in (text[:found.start()].strip(), allowed.group(1) if allowed else "") if part)


def _argument_lines(prompt: str, end: int) -> dict[str, str]:
    """``{argument: description}`` of the indented ``arg: description`` lines right after ``end`` (the end
    of a tool's ``name - description`` line)."""
    block = re.match(r"(?:\n[ \t]+\S.*)*", prompt[end:])
    return dict(re.findall(r"(?m)^[ \t]+([^\s:]+):[ \t]*(.+)$", block.group() if block else ""))


def _tool_line(name: str) -> re.Pattern[str]:
    """The line ``name - description`` of a tool list (group 1: the description)."""
    return re.compile(rf"(?m)^[ \t]*{re.escape(name)}[ \t]+-[ \t]+(.*)$")


def with_argument_descriptions(args_schema: Mapping[str, Any], prompt: str, name: str) -> Mapping[str, Any]:
    """``args_schema`` with the descriptions of its properties that the prompt lists under the tool
    ``name`` (the built-in ``tools`` templates render each argument as an indented ``arg: description (...)``
    line under ``name - description``) where the schema has none: a schema adapted for llama.cpp's grammar
    converter has lost its annotations. The same object when nothing is added."""
    props = args_schema.get("properties")
    found = _tool_line(name).search(prompt)
    if not isinstance(props, Mapping) or found is None:
        return args_schema
    listed = _argument_lines(prompt, found.end())
    added = {arg: {**sub, "description": listed[arg]} for arg, sub in props.items()
             if arg in listed and isinstance(sub, Mapping) and not sub.get("description")}
    return {**args_schema, "properties": {**props, **added}} if added else args_schema


def _script(word: str) -> str:
    return "cyrillic" if any("\u0400" <= ch <= "\u04ff" for ch in word) else "latin"


def relevant_tools(descriptions: Mapping[str, str], source: str) -> list[str] | None:
    """The tools of ``descriptions`` (``{name: text}``) that share the most content words
    (:func:`content_stems`) with ``source`` (the task and history), in the given order; ``[]`` when none
    shares any. ``None`` when the comparison says nothing: no descriptions, or the task and the tools are
    written in different alphabets (a Russian task for English tool descriptions)."""
    if not descriptions:
        return None
    task = content_stems(source)
    tools = {name: content_stems(text) for name, text in descriptions.items()}
    scripts = {_script(w) for stems in tools.values() for w in stems}
    if not task or not {_script(w) for w in task} & scripts:
        return None
    scores = {name: len(stems & task) for name, stems in tools.items()}
    best = max(scores.values())
    return [name for name, score in scores.items() if score == best] if best > 0 else []


def opening_turn(prompt: str, markers: Sequence[str] = _TURN_MARKERS) -> bool:
    """Whether ``prompt`` asks for the first answer of a task: its current turn repeats a line of the worked
    examples before it (the empty history, "No history yet", that an example shows too), which a turn with
    history entries does not. ``False`` without worked examples or a turn marker: nothing tells."""
    best, _ = _turn_start(prompt, markers)
    if best < 0:
        return False
    shared = {line.strip() for line in _LABEL.sub("", prompt[:best]).splitlines()} - {""}
    return any(line.strip() in shared for line in grounding_source(prompt, markers).splitlines() if line.strip())


COMMIT_WORDS = 2
"""Content words of a tool's name (:func:`content_stems`) a task must write for :func:`named_tools` to count
the tool as asked for."""


def named_tools(names: Sequence[str], source: str, *, words: int = COMMIT_WORDS) -> list[str]:
    """The tools of ``names`` that ``source`` (the task and history) asks for by name: at least ``words``
    content words of the tool's name occur in it ("book a single room" names ``book_room``; "roll a die"
    does not name ``probability.dice_roll``). ``[]`` once any of ``names`` occurs in ``source`` as it is
    written: a history that shows a call (``you called book_room(...)``) is past the opening turn."""
    if any(re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", source) for name in names):
        return []
    task = content_stems(source)
    return [name for name in names if len(content_stems(name) & task) >= words]


# ------------------------------------------------------------------------------------------ optional enums
MIN_ENUM_WORD = 3
"""Enum values shorter than this are not looked for in the task (``"a"``, ``"no"`` occur by accident)."""


def _named(value: Any, text: str) -> bool:
    """Whether ``text`` names the allowed ``value`` word for word, or its singular ("strength and weakness"
    names "strengths" and "weaknesses")."""
    if not isinstance(value, str) or len(value) < MIN_ENUM_WORD:
        return False
    forms = [value] + [value[:-len(end)] for end in ("es", "s") if value.endswith(end)
                       and len(value) - len(end) >= MIN_ENUM_WORD]
    return any(re.search(r"(?<!\w)" + re.escape(form) + r"(?!\w)", text, re.IGNORECASE) for form in forms)


def filled_enums(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each *optional* argument the call left out, and whose schema is an ``enum`` of strings (or
    an array of such), set to the allowed value(s) that ``source`` names word for word (whole words, any case,
    values of at least :data:`MIN_ENUM_WORD` characters; the first named value for a single one). ``None``
    when nothing is added. A small model leaves optional arguments out (it copies worked examples that show
    only the required ones) even when the task says which value it wants ("a vegan menu")."""
    props = call_properties(args, args_schema)
    if props is None:
        return None
    required_names = required_fields(args_schema)
    added: dict[str, Any] = {}
    for name, sub in props.items():
        if name in args or name in required_names or not isinstance(sub, Mapping):
            continue
        items = _items_schema(sub)
        enum = (items if items is not None else sub).get("enum")
        if not isinstance(enum, list):
            continue
        named = [value for value in enum if _named(value, source)]
        if named:
            added[name] = named if items is not None else named[0]
    return {**args, **added} if added else None
