"""The decoding techniques of the embedded model: one ordered pipeline of general techniques.

Each technique is one :class:`Technique` object: a name, a declared stage and ``apply(step, context) -> step``.
``context`` (:class:`~react_agent._types.CallContext`) holds the task, the observations and the tool specs the
agent passes with the call; no technique reads the rendered prompt. The stages, in the order they run:

* ``before_decoding``: how the answer is decoded (``two_stage``: the tool first, then its arguments under that
  tool's schema; ``retry_cut``: arguments cut by the token budget are decoded once more with bounded values;
  ``finish_vote``: before each decision, the model is asked for the action alone, with no thought to talk itself
  into a tool; when FINISH gets most of the probability among the actions' first tokens (before the first call)
  or 0.7 of it (once a result is there), the answer is decoded with FINISH only; ``bare_arguments``: with
  ``two_stage``, a tool's arguments are decoded after the action alone, not after the thought, whose summary of
  the task tends to leave values out; ``fit_check``, off unless named: a run's first call is decided again
  without its tool when the model, asked whether that tool does what the task asks, leans to "no";
  ``fit_check_unwritten``: the same question, asked only of a first call with a required value the task writes in
  no form, :mod:`._unwritten`);
* ``grammar``: the answer schema the grammar is built from (``email_arguments``: ``format: email`` for a string
  argument whose name or description says it holds one e-mail address; ``format_patterns``: a ``pattern`` for each
  ``format`` the schema declares; ``bounded_integers``: a small integer range also as an ``enum``, which
  llama.cpp enforces while it ignores ``minimum``/``maximum``; ``context_addresses`` and
  ``context_identifiers``: an address or an identifier only as the text writes one);
* ``after_decoding``: the decoded call (``unique_items``: a list argument loses the items it repeats;
  ``nominative_values``: a Russian name or place copied inflected from the task is put in the nominative,
  :mod:`._morphology`; ``scaled_numbers``: a number that reads only part of a phrase with a scale word gets the
  phrase's value, :mod:`._numbers`; ``duration_values``: the one argument of an object that holds a duration in a unit
  its name or description states gets the one duration the task writes, in that unit, :mod:`._durations`;
  ``written_times``: the one optional time-of-day argument the call left out gets the one time the task writes,
  :mod:`._times`; ``relative_dates``: today's date, copied from a result where the task names a relative day, is
  counted on to that day, :mod:`._dates`; ``invented_values``: a call with an identifier, address or date nothing
  gives is decided again without that tool, :mod:`._invented`; ``unwritten_optionals``: an optional free-text argument
  the model made up in the task's own words, or a null it wrote as a word (``"null"``), is left out, :mod:`._guessed`).

Every technique that acts on the schema or the call keeps a correct call as it is: a grammar technique only states what
the schema already requires or what the text writes (``email_arguments`` what the argument's own name or description
requires, and nothing when the text writes an ``@`` word the e-mail pattern would not admit), ``retry_cut`` acts only on
a reply cut by the token budget, ``finish_vote`` takes the tools away only when the model itself, asked for the action
directly, prefers to answer (a correct call it would have made is kept unless the model gives it less probability than
FINISH: ``bench.suites`` and ``bench.bfcl`` measure that on tasks that need a tool), ``fit_check`` and
``fit_check_unwritten`` likewise only when the model itself, asked, says the tool does not fit, ``unique_items`` drops
only items the task does not repeat, ``nominative_values`` changes only a value the text proves inflected,
``scaled_numbers`` only a number the text writes with a scale word and never alone, ``duration_values`` only the one
duration argument when the text writes one duration, ``written_times`` only adds the one time the task writes when no
value of the call writes a time, ``relative_dates`` only a date equal to the one date the results write when the task
names one plain relative day and no date of its own, ``invented_values`` rejects only a value the text cannot have
supplied, and ``unwritten_optionals`` leaves out only an optional value none of whose words the text or the argument's
description writes in any form, or a null written as a word the text does not write. ``python -m bench.bfcl --oracle``
checks the grammar and after-decoding stages on correct calls.
``two_stage`` and ``bare_arguments`` choose what the model reads before it writes the arguments, so they change
which calls it makes, for better or worse: ``bench.suites`` and ``bench.bfcl`` measure them with and without.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from react_agent._types import FINISH, CallContext, ToolInfo
from react_agent.errors import ConfigError
from react_agent.models.local._addresses import email_addresses, email_words, is_email_word, uris
from react_agent.models.local._dates import ISO_DATE, relative_offset
from react_agent.models.local._durations import argument_unit, in_unit
from react_agent.models.local._guessed import WordIndex, guessed_text, index_words, writes_a_word
from react_agent.models.local._invented import identifier_key, invented, written_integers
from react_agent.models.local._morphology import nominative
from react_agent.models.local._numbers import scaled
from react_agent.models.local._times import clock_times, is_clock_schema, time_value
from react_agent.parsing import strings_in

__all__ = [
    "DEFAULT_TECHNIQUES",
    "FORMAT_PATTERNS",
    "MAX_ENUM_RANGE",
    "NULL_WORDS",
    "OPT_IN_TECHNIQUES",
    "PIPELINE",
    "REMOVED_TECHNIQUES",
    "TECHNIQUES",
    "Stage",
    "Step",
    "Technique",
    "after_decoding",
    "bounded_integers",
    "branches",
    "context_identifiers",
    "duration_values",
    "email_arguments",
    "email_described",
    "invented_values",
    "nominative_values",
    "relative_dates",
    "scaled_numbers",
    "select",
    "unwritten_optionals",
    "with_format_patterns",
    "written_times",
]

Stage = Literal["before_decoding", "grammar", "after_decoding"]


@dataclass(frozen=True)
class Step:
    """What the techniques change: the answer schema, how it is decoded, and the decoded call.

    ``call`` is ``None`` before decoding; after it, the decoded answer ``{"thought", "action", "action_input"}``.
    """

    schema: Mapping[str, Any] | None
    call: Mapping[str, Any] | None = None
    two_stage: bool = False
    retry_cut: bool = False
    finish_vote: bool = False
    bare_arguments: bool = False
    fit_check: bool = False
    fit_check_unwritten: bool = False
    invented: tuple[str, ...] = ()
    """The arguments of ``call`` that nothing the model was given can have supplied (``invented_values``): the
    decoder decides again without that tool."""


@dataclass(frozen=True)
class Technique:
    """One technique: ``apply(step, context)`` returns the step it leaves (the same one when it does nothing)."""

    name: str
    stage: Stage
    transform: Callable[[Step, CallContext], Step]

    def apply(self, step: Step, context: CallContext) -> Step:
        return self.transform(step, context)


# ------------------------------------------------------------------------------------------ answer schema
def branches(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """``{action name: action_input schema}`` of an answer schema, or ``None`` when ``schema`` is not one.

    An answer schema is an ``anyOf`` whose every branch is an object with ``action`` given as a ``const``
    and an ``action_input`` schema (what ``react_agent.tools.answer_schema`` builds).
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


# ------------------------------------------------------------------------------------------ grammar
FORMAT_PATTERNS: dict[str, str] = {
    "email": r'^[^@ "\\]+@[^@ "\\.]+([.][^@ "\\.]+)+$',
    "idn-email": r'^[^@ "\\]+@[^@ "\\.]+([.][^@ "\\.]+)+$',
    "uri": r'^[a-zA-Z][a-zA-Z0-9+.-]*:[^ "\\]+$',
    "url": r'^[a-zA-Z][a-zA-Z0-9+.-]*:[^ "\\]+$',
    "date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "date-time": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?"
                 r"([Zz]|[+-][0-9]{2}:[0-9]{2})?$",
    "time": r"^[0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?([Zz]|[+-][0-9]{2}:[0-9]{2})?$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "ipv4": r"^[0-9]{1,3}[.][0-9]{1,3}[.][0-9]{1,3}[.][0-9]{1,3}$",
}
"""The regular expression of each JSON-schema ``format`` that llama.cpp's grammar can enforce as a ``pattern``
(the converter ignores ``format`` itself). The character classes leave out ``"``, ``\\`` and spaces."""


_FIXED_VALUE = ("enum", "const")
"""Schema keywords that list the values a node may take."""
_FIXED_FORM = (*_FIXED_VALUE, "format", "pattern")
"""Schema keywords that fix the form of a node's value (its values, or their spelling)."""


def _fixes_form(node: Mapping[str, Any], keywords: tuple[str, ...] = _FIXED_FORM) -> bool:
    """Whether the schema ``node`` has one of ``keywords`` (by default, any that fixes its value's form)."""
    return any(key in node for key in keywords)


def with_format_patterns(schema: Any) -> Any:
    """A copy of ``schema`` in which every plain string node with a ``format`` of :data:`FORMAT_PATTERNS` has
    that ``pattern`` too (a node that already has ``pattern``, ``enum`` or ``const`` is left as it is)."""
    if isinstance(schema, list):
        return [with_format_patterns(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: with_format_patterns(value) for key, value in schema.items()}
    fmt = out.get("format")
    if out.get("type") == "string" and isinstance(fmt, str) and fmt in FORMAT_PATTERNS \
            and "pattern" not in out and not _fixes_form(out, _FIXED_VALUE):
        out["pattern"] = FORMAT_PATTERNS[fmt]
    return out


_CLOCK_DIGITS = re.compile(r"(?<!\d)\d{1,2}:\d{2}(?!\d)")
"""Digits written as a clock time, in any value ("9:00", "2026-03-20T09:00")."""
_EMAIL_NAME = re.compile(r"(?:^|_)e_?mail(?:_?address)?$")
_EMAIL_DESCRIPTION = (
    re.compile(r"(?:(?:the|an?) )?(?:(?!(?:of|in|for|to|from|with|by|the|an?|and|or)\b)[a-z-]+(?:'s)? ){0,2}"
               r"e-?mail(?: address)?(?: (?:of|for) .*)?"),
    re.compile(r"(?:адрес )?(?:электронн(?:ая|ой) почт[аы]|e-?mail|почта)(?: (?!(?:или|либо|и)\b)[а-яё-]+){0,4}"),
)


def email_described(name: str, node: Mapping[str, Any]) -> bool:
    """Whether an argument called ``name`` with the schema ``node`` holds one e-mail address by its name
    (``email``, ``to_email``, ``userEmail``, ``email_address``; not ``email_subject`` or ``emails``) or by its
    description, read up to its first comma, colon or bracket ("Recipient's email address", "Email of the person
    to share with", «Email получателя», «Адрес электронной почты»; not "Subject of the email", "Email subject",
    "Unread emails only")."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    if _EMAIL_NAME.search(snake):
        return True
    description = node.get("description")
    if not isinstance(description, str):
        return False
    head = re.split(r"[,:;(\[.!?]", description.strip().lower(), maxsplit=1)[0].strip()
    head = " ".join(head.replace("\u2019", "'").split())
    return any(pattern.fullmatch(head) for pattern in _EMAIL_DESCRIPTION)


def _plain_string(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "string" and not _fixes_form(node)


def email_arguments(schema: Any, text: str, tools: Sequence[ToolInfo] = ()) -> Any:
    """A copy of ``schema`` in which every plain string property that :func:`email_described` finds has
    ``format: email`` (in the string branch of a nullable ``anyOf`` too), so that ``format_patterns`` and
    ``context_addresses`` treat it as they treat a declared one. In an answer schema, a tool's arguments are read
    with the descriptions of that tool's spec in ``tools`` (the schema a grammar is built from may carry none). A
    property with a ``format``, ``pattern``, ``enum`` or ``const`` of its own is left as it is, and so is the whole
    schema when ``text`` (the task and the observations) writes an ``@`` word that is no address the pattern admits
    (``example@.com``): what the user wrote is copied as written."""
    if not all(is_email_word(word) for word in email_words(text)):
        return schema
    if not isinstance(schema, Mapping) or branches(schema) is None:
        return _emails(schema, None)
    specs = {tool.name: tool.parameters for tool in tools}
    out = dict(schema)
    out["anyOf"] = [_email_branch(branch, specs) for branch in schema["anyOf"]]
    return out


def _email_branch(branch: Mapping[str, Any], specs: Mapping[str, Any]) -> dict[str, Any]:
    props = branch["properties"]
    spec = specs.get(props["action"]["const"])
    return {**branch, "properties": {**props, "action_input": _emails(props["action_input"], spec)}}


def _emails(node: Any, spec: Any) -> Any:
    """``node`` with ``format: email`` on each property :func:`email_described` finds by its name or by the
    description that ``node`` or the parallel node of ``spec`` (the tool's own schema) gives it."""
    if isinstance(node, list):
        return [_emails(item, spec[i] if isinstance(spec, list) and i < len(spec) else None)
                for i, item in enumerate(node)]
    if not isinstance(node, Mapping):
        return node
    spec = spec if isinstance(spec, Mapping) else {}
    out = {key: _emails(value, spec.get(key)) for key, value in node.items()}
    props = out.get("properties")
    if isinstance(props, Mapping):
        given = spec.get("properties") if isinstance(spec.get("properties"), Mapping) else {}
        out["properties"] = {name: _as_email(name, sub, given.get(name)) for name, sub in props.items()}
    return out


def _as_email(name: Any, node: Any, spec: Any) -> Any:
    if not isinstance(node, Mapping):
        return node
    described = node if "description" in node or not isinstance(spec, Mapping) \
        else {**node, "description": spec.get("description")}
    if not email_described(str(name), described):
        return node
    if _plain_string(node):
        return {**node, "format": "email"}
    options = node.get("anyOf")
    if isinstance(options, list) and any(_plain_string(option) for option in options) \
            and all(_plain_string(option) or (isinstance(option, Mapping) and option.get("type") == "null")
                    for option in options):
        return {**node, "anyOf": [{**option, "format": "email"} if _plain_string(option) else option
                                  for option in options]}
    return node


MAX_ENUM_RANGE = 256
"""Integer ranges with at most this many values are enumerated for the grammar (see :func:`bounded_integers`)."""


def bounded_integers(schema: Any) -> Any:
    """A copy of ``schema`` in which every bounded integer range also lists its values as an ``enum``.

    llama-cpp-python's JSON-schema converter ignores ``minimum``/``maximum`` (and the exclusive forms): an
    integer may get any of up to 16 digits, and a small model keeps adding digits. An ``enum`` *is* enforced,
    so ``{"type": "integer", "minimum": 1, "maximum": 100}`` gains ``"enum": [1, ..., 100]``. Ranges of more
    than :data:`MAX_ENUM_RANGE` values, and nodes that already have ``enum`` or ``const``, are left as they are.
    """
    if isinstance(schema, list):
        return [bounded_integers(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: bounded_integers(value) for key, value in schema.items()}
    if out.get("type") != "integer" or _fixes_form(out, _FIXED_VALUE):
        return out
    low, high = _bound(out, "minimum", "exclusiveMinimum", 1), _bound(out, "maximum", "exclusiveMaximum", -1)
    if low is not None and high is not None and 0 <= high - low < MAX_ENUM_RANGE:
        out["enum"] = list(range(low, high + 1))
    return out


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, step: int) -> int | None:
    """The tightest integer bound of one side of a range (``step`` +1 for a minimum, -1 for a maximum)."""
    candidates: list[int] = []
    value, flag = schema.get(inclusive), schema.get(exclusive)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if flag is True:  # draft 4: a boolean exclusiveMinimum/exclusiveMaximum makes the bound exclusive
            candidates.append(math.floor(value) + 1 if step > 0 else math.ceil(value) - 1)
        else:
            candidates.append(math.ceil(value) if step > 0 else math.floor(value))
    if isinstance(flag, (int, float)) and not isinstance(flag, bool):
        candidates.append(math.floor(flag) + 1 if step > 0 else math.ceil(flag) - 1)
    if not candidates:
        return None
    return max(candidates) if step > 0 else min(candidates)


_ADDRESSES: dict[str, Callable[[str], list[str]]] = {"email": email_addresses, "uri": uris}


def context_addresses(schema: Any, text: str) -> Any:
    """A copy of ``schema`` in which every plain string node with ``format`` ``email`` (or ``uri``) may only take
    the e-mail addresses (URIs) ``text`` writes, spelled as written, when it writes any: an address is copied from
    the task or a result, never made up or re-cased. Nodes with ``enum``/``const`` are left as they are."""
    if isinstance(schema, list):
        return [context_addresses(item, text) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: context_addresses(value, text) for key, value in schema.items()}
    fmt = {"idn-email": "email", "url": "uri"}.get(str(out.get("format")), str(out.get("format")))
    if out.get("type") == "string" and fmt in _ADDRESSES and not _fixes_form(out, _FIXED_VALUE):
        found = list(dict.fromkeys(address.strip("'`") for address in _ADDRESSES[fmt](text)))
        if found:
            out["enum"] = found
            out.pop("pattern", None)
    return out


def context_identifiers(schema: Any, text: str) -> Any:
    """A copy of ``schema`` in which every integer property named as an identifier (``id``, ``ticket_id``,
    ``orderId``: :func:`._invented.identifier_key`) may only take the whole numbers ``text`` writes, in digits or
    words, within the node's ``minimum``/``maximum``, when it writes any: an identifier is copied from the task
    or a result, never counted or made up. Nodes with ``enum``/``const`` are left as they are."""
    numbers = written_integers(text)
    if not numbers:
        return schema

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, Mapping):
            return node
        out = {key: visit(value) for key, value in node.items()}
        props = out.get("properties")
        if isinstance(props, Mapping):
            out["properties"] = {name: _written_identifier(name, sub, numbers) for name, sub in props.items()}
        return out

    return visit(schema)


def _written_identifier(name: str, node: Any, numbers: Sequence[int]) -> Any:
    if not identifier_key(str(name)) or not isinstance(node, Mapping) or node.get("type") != "integer" \
            or _fixes_form(node, _FIXED_VALUE):
        return node
    low, high = node.get("minimum", -math.inf), node.get("maximum", math.inf)
    allowed = [n for n in numbers if isinstance(low, (int, float)) and isinstance(high, (int, float))
               and low <= n <= high]
    return {**node, "enum": allowed} if allowed else node


def _schema(step: Step, change: Callable[[Any], Any]) -> Step:
    return step if step.schema is None else replace(step, schema=change(step.schema))


# ------------------------------------------------------------------------------------------ after decoding
def unique_items(args: Any, text: str) -> Any:
    """``args`` with each top-level list of strings losing its repeated items (the first kept), unless ``text``
    (the task and observations) writes the repeated string as often as the list holds it: a small model that
    cannot stop a list repeats its last item, while a task that asks for the same value twice writes it twice.
    Lists of numbers, booleans or objects are left as they are (``[16, 16]``, ``[1, 1, 12]`` are right)."""
    if not isinstance(args, Mapping):
        return args
    out = dict(args)
    for name, value in args.items():
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
            continue
        kept: list[str] = []
        for item in value:
            if item in kept and kept.count(item) >= _mentions(item, text):
                continue
            kept.append(item)
        if len(kept) != len(value):
            out[name] = kept
    return out


def _whole_word(item: str) -> re.Pattern[str]:
    """``item`` as a whole word of a text, case ignored."""
    return re.compile(r"(?<!\w)" + re.escape(item) + r"(?!\w)", re.IGNORECASE)


def _mentions(item: str, text: str) -> int:
    """How often ``text`` writes ``item`` as a whole word, case ignored (at least 1)."""
    if not item.strip():
        return 1
    return max(1, len(_whole_word(item).findall(text)))


MAX_WALK_DEPTH = 32
"""Objects and lists nested deeper than this in a call are left as they are by the value techniques (a degenerate
reply may nest them as deep as its token budget allows)."""


def _walk(args: Any, schema: Any, leaf: Callable[[Any, Mapping[str, Any]], Any], depth: int = 0) -> Any:
    """``args`` with ``leaf(value, its schema node)`` applied to every value that is no object or list, down to
    :data:`MAX_WALK_DEPTH` (a schema node is ``{}`` where the schema does not say)."""
    node = schema if isinstance(schema, Mapping) else {}
    if isinstance(args, (list, Mapping)) and depth >= MAX_WALK_DEPTH:
        return args
    if isinstance(args, list):
        return [_walk(item, node.get("items"), leaf, depth + 1) for item in args]
    if isinstance(args, Mapping):
        props = node.get("properties")
        props = props if isinstance(props, Mapping) else {}
        return {key: _walk(value, props.get(key), leaf, depth + 1) for key, value in args.items()}
    return leaf(args, node)


def nominative_values(args: Any, schema: Any, text: str) -> Any:
    """``args`` with every string (in objects and lists, at any depth) that is a Russian phrase ``text`` writes
    inflected put in the nominative (:func:`._morphology.nominative`). Strings whose ``schema`` node fixes their
    form (``enum``, ``const``, ``format``, ``pattern``) are left as they are."""
    def leaf(value: Any, node: Mapping[str, Any]) -> Any:
        if not isinstance(value, str) or _fixes_form(node):
            return value
        return nominative(value, text)
    return _walk(args, schema, leaf)


def scaled_numbers(args: Any, schema: Any, text: str) -> Any:
    """``args`` with every number that a ``schema`` node types ``integer`` or ``number`` (in objects and lists,
    at any depth) given the value of the phrase ``text`` writes it in with a scale word («150 тысяч» for 150,
    :func:`._numbers.scaled`). Nodes with ``enum``/``const`` and numbers the schema does not type are left."""
    def leaf(value: Any, node: Mapping[str, Any]) -> Any:
        kind = node.get("type")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or kind not in ("integer", "number") \
                or _fixes_form(node, _FIXED_VALUE):
            return value
        full = scaled(value, text, integer=kind == "integer")
        if full is None:
            return value
        return int(full) if kind == "integer" or (isinstance(value, int) and float(full).is_integer()) else float(full)
    return _walk(args, schema, leaf)


def duration_values(args: Any, schema: Any, text: str, depth: int = 0) -> Any:
    """``args`` with the one argument of an object that holds a duration in a stated unit (its name or description
    says minutes, hours, seconds, days or weeks; typed ``integer``/``number``) given the one duration ``text``
    writes, in that unit (:func:`._durations.in_unit`: 90 for ``duration_minutes`` and «полтора часа»). An object
    with several such arguments (``hours`` and ``minutes``) is left as it is; nested objects are looked at too, down
    to :data:`MAX_WALK_DEPTH`."""
    if not isinstance(args, Mapping) or depth >= MAX_WALK_DEPTH:
        return args
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    props = props if isinstance(props, Mapping) else {}
    out = {key: duration_values(value, props.get(key), text, depth + 1) for key, value in args.items()}
    units = {name: unit for name, node in props.items()
             if isinstance(node, Mapping) and node.get("type") in ("integer", "number")
             and "enum" not in node and "const" not in node
             and (unit := argument_unit(str(name), node)) is not None}
    if len(units) != 1:
        return out
    ((name, unit),) = units.items()
    value, node = out.get(name), props[name]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return out
    wanted = in_unit(value, unit, text, node, integer=node.get("type") == "integer")
    if wanted is not None:
        out[name] = int(wanted) if float(wanted).is_integer() else wanted
    return out


NULL_WORDS = frozenset({"null", "none", "nil", "undefined"})
"""Words a model writes as a string where it means "no value" (``"assignee": "null"``), compared lower-cased."""


def _null_word(value: str, text: str) -> bool:
    """Whether ``value`` is one of :data:`NULL_WORDS` that ``text`` does not write as a word of its own (a task
    that passes the error ``'null'`` to a callback writes it)."""
    word = value.strip().lower()
    return word in NULL_WORDS and _whole_word(word).search(text) is None


def unwritten_optionals(args: Any, schema: Any, text: str) -> Any:
    """``args`` without the optional top-level string arguments that :func:`._guessed.guessed_text` names, unless the
    argument's description writes a word of the value ("E.g. beginner, intermediate, advanced"): a value the model
    made up in the task's own words (a meeting room the task never mentions); nor those that hold a null written as
    a word (:data:`NULL_WORDS`: ``"null"``, ``"None"``) which the text does not write. The tool's default stands in
    for it. Arguments the schema requires, values of other types and strings whose form the schema fixes (``enum``,
    ``const``, ``format``, ``pattern``) are kept."""
    if not isinstance(args, Mapping) or not isinstance(schema, Mapping) or not text.strip():
        return args
    props = schema.get("properties")
    required = schema.get("required", [])  # a schema of optional arguments only may leave "required" out
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return args
    index: WordIndex | None = None

    def guessed(key: str, value: Any) -> bool:
        nonlocal index
        node = props.get(key)
        if key in required or not isinstance(node, Mapping) or _fixes_form(node) or not isinstance(value, str):
            return False
        if _null_word(value, text):
            return True
        index = index_words(text) if index is None else index
        offered = node.get("description")
        return guessed_text(value, index) and not (isinstance(offered, str) and writes_a_word(value, offered))

    kept = {key: value for key, value in args.items() if not guessed(str(key), value)}
    return args if len(kept) == len(args) else kept


def written_times(step: Step, context: CallContext) -> Step:
    """``step`` with the time of day the task writes given to the tool's one optional time argument that the call
    left out (:func:`._times.clock_times`: «в 9 утра» → ``"09:00"``; :func:`._times.is_clock_schema`: a string whose
    pattern, ``format`` or description asks for ``HH:MM``). A small model leaves such an argument out though the task
    gives the time. Nothing changes when the task writes no time or several, when the tool has no such argument or
    several (a start and an end), or when a value of the call already writes a time of day (a reminder's text "call
    at 9 am", a start time)."""
    call = step.call
    if call is None or call.get("action") == FINISH or not context.task.strip():
        return step
    args = call.get("action_input")
    schema = next((tool.parameters for tool in context.tools if tool.name == call.get("action")), None)
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(args, Mapping) or not isinstance(props, Mapping):
        return step
    clocks = [name for name, node in props.items() if is_clock_schema(node)]
    if len(clocks) != 1 or clocks[0] in args:
        return step
    times = clock_times(context.task)
    if len(times) != 1 or any(clock_times(text) or _CLOCK_DIGITS.search(text) for text in strings_in(args)):
        return step
    value = time_value(props[clocks[0]], next(iter(times)))
    return step if value is None else replace(step, call={**call, "action_input": {**args, clocks[0]: value}})


def relative_dates(step: Step, context: CallContext) -> Step:
    """``step`` with today's date counted on to the day the task names relatively (:func:`._dates.relative_offset`:
    "tomorrow", «в пятницу»): a string argument (at any depth) that holds the one ISO date the results write
    (``get_current_date`` gave ``2026-03-04``), and that the task itself does not write, becomes that date plus the
    task's offset. A small model copies today's date where the task asks for tomorrow. Nothing changes without
    results, with results that write several dates, or when the task's relative day is not plain."""
    call = step.call
    if call is None or call.get("action") == FINISH or not context.observations:
        return step
    seen = {m.group(0) for observation in context.observations for m in ISO_DATE.finditer(observation)}
    if len(seen) != 1:
        return step
    (today_text,) = seen
    if today_text in context.task:
        return step
    try:
        today = dt.date.fromisoformat(today_text)
    except ValueError:
        return step
    offset = relative_offset(context.task, today)
    if not offset:
        return step
    wanted = (today + dt.timedelta(days=offset)).isoformat()
    args = call.get("action_input")
    changed = _walk(args, None, lambda value, _: wanted if value == today_text else value)
    return step if changed == args else replace(step, call={**call, "action_input": changed})


def _arguments(change: Callable[[Any, Any, str], Any]) -> Callable[[Step, CallContext], Step]:
    """A technique that changes a decoded call's arguments by ``change(args, tool schema, text)``."""
    def apply(step: Step, context: CallContext) -> Step:
        call = step.call
        if call is None or call.get("action") == FINISH:
            return step
        args = call.get("action_input")
        schema = next((tool.parameters for tool in context.tools if tool.name == call.get("action")), None)
        changed = change(args, schema, context.text)
        return step if changed == args else replace(step, call={**call, "action_input": changed})
    return apply


def invented_values(step: Step, context: CallContext) -> Step:
    """``step`` without the invented values of its call (:func:`._invented.invented`: an identifier, e-mail
    address, date or example value the task and the observations never write): an optional top-level argument
    holding one is left out of the call; any other goes to :attr:`Step.invented`, and the call is decided again
    without that tool. Without a task or an observation (a direct ``invoke`` with no call context) it does
    nothing."""
    call = step.call
    if call is None or call.get("action") == FINISH or not (context.task.strip() or context.observations):
        return step  # no call context (a direct invoke): nothing to tell an invented value by
    args = call.get("action_input")
    found = invented(args, context.text)
    if not found or not isinstance(args, Mapping):
        return replace(step, invented=tuple(found)) if found else step
    schema = next((tool.parameters for tool in context.tools if tool.name == call.get("action")), None)
    required = schema.get("required") if isinstance(schema, Mapping) else None
    optional = [path for path in found if isinstance(required, list) and path in args and path not in required]
    if optional:
        step = replace(step, call={**call, "action_input": {k: v for k, v in args.items() if k not in optional}})
    rest = tuple(path for path in found if path not in optional)
    return replace(step, invented=rest) if rest else step


# ------------------------------------------------------------------------------------------ the pipeline
PIPELINE: tuple[Technique, ...] = (
    Technique("two_stage", "before_decoding", lambda step, _: replace(step, two_stage=True)),
    Technique("retry_cut", "before_decoding", lambda step, _: replace(step, retry_cut=True)),
    Technique("finish_vote", "before_decoding", lambda step, _: replace(step, finish_vote=True)),
    Technique("bare_arguments", "before_decoding", lambda step, _: replace(step, bare_arguments=True)),
    Technique("fit_check", "before_decoding", lambda step, _: replace(step, fit_check=True)),
    Technique("fit_check_unwritten", "before_decoding", lambda step, _: replace(step, fit_check_unwritten=True)),
    Technique("email_arguments", "grammar",
              lambda step, context: _schema(step, lambda s: email_arguments(s, context.text, context.tools))),
    Technique("format_patterns", "grammar", lambda step, _: _schema(step, with_format_patterns)),
    Technique("bounded_integers", "grammar", lambda step, _: _schema(step, bounded_integers)),
    Technique("context_addresses", "grammar",
              lambda step, context: _schema(step, lambda s: context_addresses(s, context.text))),
    Technique("context_identifiers", "grammar",
              lambda step, context: _schema(step, lambda s: context_identifiers(s, context.text))),
    Technique("unique_items", "after_decoding", _arguments(lambda args, _, text: unique_items(args, text))),
    Technique("nominative_values", "after_decoding", _arguments(nominative_values)),
    Technique("scaled_numbers", "after_decoding", _arguments(scaled_numbers)),
    Technique("duration_values", "after_decoding", _arguments(duration_values)),
    Technique("written_times", "after_decoding", written_times),
    Technique("relative_dates", "after_decoding", relative_dates),
    Technique("invented_values", "after_decoding", invented_values),
    Technique("unwritten_optionals", "after_decoding", _arguments(unwritten_optionals)),
)
"""Every technique, in the order they run (stage by stage)."""

OPT_IN_TECHNIQUES = frozenset({"fit_check"})
"""Techniques that are off unless named: ``fit_check`` avoided six wrong calls for four right ones lost on a BFCL
development sample, but on the English development suite it turned five right calls of clearly fitting tools (a file
read, a contact search) into FINISH for two questions that need no tool (docs/local-models.md)."""

TECHNIQUES: tuple[str, ...] = tuple(t.name for t in PIPELINE)
"""Every technique, in pipeline order."""

DEFAULT_TECHNIQUES: tuple[str, ...] = tuple(name for name in TECHNIQUES if name not in OPT_IN_TECHNIQUES)
"""The techniques ``LocalChatModel`` uses unless told otherwise: all but :data:`OPT_IN_TECHNIQUES`."""

REMOVED_TECHNIQUES = frozenset({
    "abstain", "abstain_unrelated", "anchor_numbers", "ask_optionals", "bounded_lists", "clean_spans",
    "commit_named", "date_formats", "distinct_values", "fill_enums", "ground_numbers", "grounding",
    "implied_options", "listed_values", "named_enums", "nested_spans", "omit_unmentioned", "percent_rates",
    "preselect", "reconsider_finish", "sibling_order", "unit_numbers", "whole_names", "whole_spans",
})
"""Options of earlier versions, removed because they changed correct calls (docs/changelog.md)."""

_STAGES: tuple[Stage, ...] = ("before_decoding", "grammar", "after_decoding")


def select(names: Any) -> tuple[Technique, ...]:
    """The techniques named by ``names`` (a list or tuple of names), in pipeline order.

    Raises ConfigError for anything else: a string instead of a list, a name that is no technique (a removed
    one says so), a repeated name."""
    valid = ", ".join(TECHNIQUES)
    if isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple, frozenset, set)):
        raise ConfigError(f"techniques must be a list of technique names (any of: {valid}), "
                          f"got {type(names).__name__} {names!r}")
    chosen: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise ConfigError(f"techniques holds {type(name).__name__} {name!r}; give names: {valid}")
        if name in REMOVED_TECHNIQUES:
            raise ConfigError(f"the technique {name!r} was removed (it changed correct calls; see the changelog); "
                              f"the techniques are: {valid}")
        if name not in TECHNIQUES:
            raise ConfigError(f"unknown technique {name!r}; the techniques are: {valid}")
        if name in chosen:
            raise ConfigError(f"the technique {name!r} is named twice in techniques")
        chosen.append(name)
    return tuple(t for t in PIPELINE if t.name in chosen)


def run_stage(techniques: Iterable[Technique], stage: Stage, step: Step, context: CallContext) -> Step:
    """``step`` after every technique of ``techniques`` declared for ``stage``, in order."""
    if stage not in _STAGES:
        raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(_STAGES)}")
    for technique in techniques:
        if technique.stage == stage:
            step = technique.apply(step, context)
    return step


def after_decoding(techniques: Sequence[Technique], call: Mapping[str, Any],
                   context: CallContext) -> Mapping[str, Any] | None:
    """The decoded answer ``call`` after the after-decoding techniques (what ``bench.bfcl --oracle`` runs), or
    ``None`` when they reject it (:attr:`Step.invented`: the decoder would decide again without that tool)."""
    done = run_stage(techniques, "after_decoding", Step(schema=None, call=call), context)
    if done.invented:
        return None
    return call if done.call is None else done.call
