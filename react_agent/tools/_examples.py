"""Worked examples generated from any agent's tool schemas, for small models (``examples_for_tools``).

A small model copies the worked examples of its prompt closely, and examples of *other* tools or with
placeholder values (``"example"``) do not help it (``docs/local-models.md``). This module writes one example
per tool from the tool's own argument schema: a task sentence that names the tool's purpose (its name in
words) and argument values of the right form that no user would type (invented names, places and
companies: an answer that repeats them was copied from the example, which the agent can tell), and the answer
that calls the tool with exactly those values. The values come from the schema: a ``pattern``'s sample, an
``enum``'s first value, integers inside their bounds, an e-mail for an
e-mail field, a name for a name field, a city for a location, and so on; every argument of one example gets
a different value, so the model learns which value goes where. A tool whose schema no sample satisfies gets no
example. Optionally one more example shows a task
no tool can do, answered with FINISH.

The sentences are model-facing text, so they are jinja macros in ``prompts/fewshot/<lang>.jinja``.

    agent = ReactAgent(LocalChatModel(), tools, prompts="en-compact", examples=examples_for_tools(tools))
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from react_agent._prompts import fewshot_macros
from react_agent._types import FINISH, AgentAction, Example
from react_agent.errors import ConfigError
from react_agent.tools._registry import ToolRegistry
from react_agent.tools._schema import tool_args_schema

__all__ = ["FEWSHOT_LANGUAGES", "examples_for_tools", "humanize", "pattern_sample", "sample_arguments", "sample_value"]

FEWSHOT_LANGUAGES = ("en", "ru")

logger = logging.getLogger(__name__)

# (name or description regex, kind): the first rule that matches a string argument gives its kind; the values of
# each kind are model-facing text of the examples' language (``values()`` in ``prompts/fewshot/<lang>.jinja``).
_STRING_RULES: tuple[tuple[str, str], ...] = (
    (r"e-?mail", "email"),
    (r"phone|mobile|telephone", "phone"),
    (r"url|link|uri\b", "url"),
    (r"website|\bsite\b|domain", "domain"),
    (r"user_?name|login|nick", "username"),
    (r"city|town", "city"),
    (r"country|nation", "country"),
    (r"\b(?:location|place|address|region|area|destination)|\borigins?\b|\b(?:start|end)\b(?! ?(?:date|time|day|hour))",
     "city"),
    (r"date|day", "date"),
    (r"time|hour", "time"),
    (r"lang", "language"),
    (r"currency", "currency"),
    (r"unit", "unit"),
    (r"company|organi[sz]ation|brand", "company"),
    (r"colou?r", "colour"),
    (r"expression|formula|equation|function|polynomial", "expression"),
    (r"title|book|movie|film|song|album", "title"),
    (r"name|person|author|player|artist|assignee|recipient|owner", "person"),
    (r"species|animal", "animal"),
    (r"genre|category|type|kind", "genre"),
    (r"query|search|keyword|term|topic|subject", "query"),
)
_INTEGERS = (7, 4, 9, 12, 5, 3)
_NUMBERS = (2.5, 1.5, 4.2, 6.8, 3.1)


def humanize(name: str) -> str:
    """A tool or argument name in words: ``calculate_triangleArea.get`` -> ``calculate triangle area get``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return " ".join(part for part in re.split(r"[\s._\-/:]+", spaced) if part).lower()


_MAX_DEPTH = 4
"""Nesting levels an example value has at most (a required recursive field ends there)."""


def _resolved(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``, ``#/definitions/Name``; also an ``allOf`` of one) replaced
    by its definition (the referring node's own keywords kept)."""
    ref = schema.get("$ref")
    one = schema.get("allOf")
    if ref is None and isinstance(one, list) and len(one) == 1 and isinstance(one[0], Mapping):
        ref, schema = one[0].get("$ref"), {**{k: v for k, v in schema.items() if k != "allOf"}, **one[0]}
    if not isinstance(ref, str):
        return schema
    found = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith(("#/$defs/", "#/definitions/")) else None
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return {**found, **rest} if isinstance(found, Mapping) else rest


def sample_value(name: str, schema: Mapping[str, Any], *, index: int = 0, defs: Mapping[str, Any] | None = None,
                 depth: int = 0, lang: str = "en") -> Any:
    """A realistic value for an argument called ``name`` with JSON ``schema``; ``index`` (the argument's
    position) makes sibling arguments of the same type differ; ``defs``: the ``$defs`` that ``$ref`` s point
    into (a nested model's schema)."""
    defs = defs or {}
    schema = _resolved(schema, defs)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    options = schema.get("anyOf")
    if isinstance(options, list):
        typed = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
        if depth > 0 and len(typed) < len(options):  # a nested optional (``next: Node | None``): left empty
            return None
        if typed:
            return sample_value(name, typed[0], index=index, defs=defs, depth=depth, lang=lang)
    if "default" in schema and schema["default"] is not None and not isinstance(schema["default"], (dict, list)):
        return schema["default"]
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind == "integer":
        return _integer(name, schema, index)
    if kind == "number":
        low, high = _limits(schema)
        value = _NUMBERS[index % len(_NUMBERS)]
        return min(max(value, low if low is not None else value), high if high is not None else value)
    if kind == "array":
        raw_items = schema.get("items")
        items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {"type": "string"}
        allowed = items.get("enum")
        if isinstance(allowed, list) and len(allowed) > 1:  # two different allowed values, not one twice
            return allowed[:2]
        if depth + 1 >= _MAX_DEPTH:  # its items would be cut at the limit: an empty list is still a list
            return []
        return [sample_value(name, items, index=index, defs=defs, depth=depth + 1, lang=lang),
                sample_value(name, items, index=index + 1, defs=defs, depth=depth + 1, lang=lang)]
    if kind == "object" or isinstance(schema.get("properties"), Mapping):
        return sample_arguments(schema, defs=defs, depth=depth + 1, lang=lang) if depth < _MAX_DEPTH else {}
    return _string(name, schema, index, lang)


def _limits(schema: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """The lower and upper bound of a number (``None``: none, or one that is not a finite number)."""
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    return _finite(low), _finite(high)


def _finite(bound: Any) -> float | None:
    if isinstance(bound, float) and not math.isfinite(bound):  # inf, nan: no value to sample near
        return None
    return bound if isinstance(bound, (int, float)) else None


def _integer(name: str, schema: Mapping[str, Any], index: int) -> int:
    words = humanize(name)
    if re.search(r"\byear\b", words):
        value = 2021
    elif re.search(r"\b(age)\b", words):
        value = 34
    elif re.search(r"\b(limit|count|top|max|num|number|n|results?)\b", words):
        value = 3
    else:
        value = _INTEGERS[index % len(_INTEGERS)]
    low, high = _limits(schema)
    if low is not None and value < low:
        value = int(low) + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    if high is not None and value > high:
        value = int(high) - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
    return value


_CLASS_SAMPLES = {"d": "7", "w": "a", "s": " "}
_MAX_PATTERN_SAMPLE = 64
"""Characters a :func:`pattern_sample` has at most: a pattern that needs more (``^A{10000000}$``) has none."""
_QUANTIFIER = re.compile(r"\{(\d+)(?:,(\d*))?\}|[+*?]")


def pattern_sample(pattern: str) -> str | None:
    """A short string that ``pattern`` matches, for the simple patterns ids and codes have (``^D-\\d+$``,
    ``[A-Z]{3}``, ``^\\w+@\\w+\\.org$``): literals, escapes, ``\\d \\w \\s``, ``.``, classes and quantifiers; ``None``
    for anything else (groups, alternatives, lookarounds), when the sample would not match, or when it would be
    longer than 64 characters (``_MAX_PATTERN_SAMPLE``; checked before it is built)."""
    body = pattern.removeprefix("^").removesuffix("$") if not pattern.endswith("\\$") else pattern.removeprefix("^")
    out: list[str] = []
    size = 0
    i = 0
    while i < len(body):
        char = body[i]
        if char in "()|^$":
            return None
        if char == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            piece, i = _CLASS_SAMPLES.get(nxt, nxt), i + 2
            if nxt.isalpha() and nxt not in _CLASS_SAMPLES:
                return None
        elif char == "[":
            end = body.find("]", i + 2)
            if end < 0 or body[i + 1] == "^":
                return None
            members = body[i + 1:end]
            piece, i = (_CLASS_SAMPLES.get(members[1], "") if members.startswith("\\") else members[0]), end + 1
        elif char == ".":
            piece, i = "a", i + 1
        else:
            piece, i = char, i + 1
        quantifier = _QUANTIFIER.match(body, i)
        count = 1
        if quantifier:
            i = quantifier.end()
            text = quantifier.group(0)
            digits = quantifier.group(1)
            if digits and len(digits) > 9:  # far too many (and int() refuses thousands of digits)
                return None
            count = int(digits) if digits else {"*": 0, "?": 0, "+": 3}.get(text, 1)
        size += len(piece) * count
        if size > _MAX_PATTERN_SAMPLE:  # no huge example value in a prompt (nor a huge string built first)
            return None
        out.append(piece * count)
    sample = "".join(out)
    return sample if _accepts(pattern, sample) else None


def _string(name: str, schema: Mapping[str, Any], index: int, lang: str) -> str:
    """A string for ``name``: a sample of its ``pattern`` when :func:`pattern_sample` can build one, else a value of
    the kind its format, name or description says; a value the pattern rejects gives way to the first example value
    of any kind that the pattern accepts (``10:30`` for a ``start_time`` that must read ``HH:MM``)."""
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        sample = pattern_sample(pattern)
        if sample is not None:
            return sample
    table = _values(lang)
    value = _kind_value(name, schema, index, table)
    if isinstance(pattern, str) and not _accepts(pattern, value):
        return next((v for values in table.values() for v in values if _accepts(pattern, v)), value)
    return value


def _kind_value(name: str, schema: Mapping[str, Any], index: int, table: Mapping[str, tuple[str, ...]]) -> str:
    fmt = schema.get("format")
    kinds = {"email": "email", "date": "date", "uri": "url", "url": "url"}
    if fmt in kinds:
        return table[kinds[fmt]][0]
    words = humanize(name)
    description = str(schema.get("description") or "")
    kind = next((k for rule, k in _STRING_RULES if re.search(rule, words) or re.search(rule, name, re.IGNORECASE)),
                None) or next((k for rule, k in _STRING_RULES if re.search(rule, description, re.IGNORECASE)), "other")
    values = table[kind]
    return values[index % len(values)]


def _accepts(pattern: str, value: str) -> bool:
    """Whether the JSON Schema ``pattern`` (a search, as validators apply it) matches ``value``; a pattern Python
    cannot read accepts nothing."""
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return False


def sample_arguments(schema: Mapping[str, Any], *, defs: Mapping[str, Any] | None = None,
                     depth: int = 0, lang: str = "en") -> dict[str, Any]:
    """Arguments for an ``object`` schema: its required properties (or, when none is required, its first
    property), each with :func:`sample_value`; nested models are read from the schema's ``$defs``."""
    found = schema.get("$defs", schema.get("definitions"))
    defs = {**(defs or {}), **(found if isinstance(found, Mapping) else {})}
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return {}
    required = [n for n in schema.get("required", []) if n in props] or [next(iter(props))]
    return {name: sample_value(name, props[name], index=i, defs=defs, depth=depth, lang=lang)
            for i, name in enumerate(required)}


@functools.cache
def _values(lang: str) -> dict[str, tuple[str, ...]]:
    """The example values of each kind in ``lang`` (the ``values()`` macro of its few-shot templates: JSON)."""
    table = json.loads(str(fewshot_macros(lang if lang in FEWSHOT_LANGUAGES else "en").values()))
    return {kind: tuple(str(v) for v in values) for kind, values in table.items()}


def _shown(value: Any, macros: Any) -> str:
    if isinstance(value, bool):
        return str(macros.yes() if value else macros.no())
    if isinstance(value, list):
        return ", ".join(_shown(v, macros) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{humanize(k)} {_shown(v, macros)}" for k, v in value.items())
    return str(value)


def examples_for_tools(tools: Sequence[BaseTool], *, lang: str = "en", irrelevant: bool = True) -> list[Example]:
    """One worked example per tool (a task and the call that solves it, values from the tool's schema),
    after an example of a task that needs no tool (answered by FINISH) unless ``irrelevant=False``.

    ``lang`` picks the sentences (``en`` or ``ru``; a ``ConfigError`` otherwise). Pure: the tools are only
    read, never run.
    """
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise ConfigError(f"examples_for_tools: tools must be a list of tools, got {type(tools).__name__}")
    if lang not in FEWSHOT_LANGUAGES:
        raise ConfigError(f"examples_for_tools: lang must be one of {', '.join(FEWSHOT_LANGUAGES)}, got {lang!r}")
    macros = fewshot_macros(lang)
    out: list[Example] = []
    if irrelevant:
        out.append(Example(task=str(macros.irrelevant_task()), answer=AgentAction(
            thought=str(macros.irrelevant_thought()), action=FINISH, action_input=str(macros.irrelevant_answer()))))
    registry = ToolRegistry(list(tools)) if tools else None
    for tool in tools:
        try:
            args = sample_arguments(tool_args_schema(tool), lang=lang)
            if registry is not None:
                registry.validate(tool.name, args)
            shown = [{"name": humanize(k), "value": _shown(v, macros)} for k, v in args.items()]
        except ValueError as exc:  # a constraint no sample meets: no example rather than a wrong one
            logger.debug("no worked example for %s: %s", tool.name, exc)
            continue
        except Exception as exc:  # a schema that cannot be sampled ($ref cycles, values of the wrong type)
            logger.debug("no worked example for %s: its schema cannot be sampled (%s: %s)",
                         tool.name, type(exc).__name__, exc)
            continue
        action = humanize(tool.name)
        out.append(Example(task=str(macros.task(action, shown)),
                           answer=AgentAction(thought=str(macros.thought(action, shown)), action=tool.name,
                                              action_input=args)))
    return out
