"""The JSON schema of one agent answer, derived from the tools (for constrained decoding).

``answer_schema(tools)`` returns a schema whose ``anyOf`` has one branch per tool plus a FINISH
branch::

    {"type": "object",
     "properties": {"thought": {"type": "string", "maxLength": 160},
                    "action": {"const": "<tool name>"},
                    "action_input": <the tool's argument schema>},
     "required": ["thought", "action", "action_input"],
     "additionalProperties": false}

The FINISH branch has ``"action": {"const": "FINISH"}`` and ``"action_input": {"type": "string"}``
(the final answer text). A backend that constrains decoding with it (llama.cpp grammars, OpenAI-style
``response_format={"type": "json_schema", ...}``) can only emit an answer that names a real tool with
well-typed arguments, or FINISH.

Each tool's argument schema comes from ``tool.tool_call_schema`` (which, unlike ``args_schema``,
leaves out injected arguments), as a pydantic v2 model (``model_json_schema()``), a pydantic v1
model (``schema()``) or a plain JSON-schema ``dict``; a tool without one falls back to ``tool.args``
(properties only, all taken as required). The schema is then normalised so that every JSON-schema
converter we target handles it:

* ``title`` keywords are removed (noise for a grammar and for the model); a *property* called
  ``title`` is of course kept;
* local ``$ref`` s (``#/$defs/...``, ``#/definitions/...``) are inlined, with the referring node's
  sibling keywords (``default``, ``description``) kept. A ``$ref`` that recurses is not inlined: its
  definition is hoisted to the answer's top-level ``$defs`` under ``<tool>__<Name>`` and the
  ``$ref`` rewritten, which llama.cpp's converter and ``jsonschema`` both resolve;
* every object with ``properties`` gets ``"additionalProperties": false`` unless it says
  otherwise, so the grammar cannot invent argument names;
* ``required``, types, ``enum``, ``const``, ``anyOf`` (e.g. ``str | None``), ``default`` and
  ``description`` are kept as they are.

Choices, measured with gemma-3-270m (base, Q4_K_M) through llama.cpp grammars (see
``docs/local-models.md``, "Prompts for small models"):

* ``thought`` comes **first**. That is the protocol's natural order (the few-shot examples in the
  prompt write it first, so the model copies a familiar shape) and it gives the model a few tokens
  of "reasoning" about the task before the grammar makes it commit to a tool name.
* ``thought`` is **length-limited** (``maxLength``, 160 characters by default). Unbounded, the small
  model sometimes rambles or repeats itself until ``max_tokens`` runs out, which truncates the JSON
  and wastes seconds; with the limit the grammar closes the string and moves on. Pass
  ``thought_max_length=None`` to drop the limit (for a large model or a server that rejects
  ``maxLength``).

Pure function: no I/O, the tools are only read.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from react_agent._types import FINISH

__all__ = ["DEFAULT_THOUGHT_MAX_LENGTH", "answer_schema", "tool_args_schema"]

DEFAULT_THOUGHT_MAX_LENGTH = 160
"""Default ``maxLength`` of the ``thought`` string in :func:`answer_schema`."""

# Keywords whose value is a mapping of *names* to schemas: the names are data, not keywords.
_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def answer_schema(
    tools: Sequence[BaseTool],
    *,
    thought_max_length: int | None = DEFAULT_THOUGHT_MAX_LENGTH,
    finish_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the JSON schema of one answer ``{"thought", "action", "action_input"}`` for ``tools``.

    One ``anyOf`` branch per tool (in the given order) and a last branch for FINISH, whose
    ``action_input`` is the answer text. ``thought_max_length`` bounds the ``thought`` string
    (``None``: unbounded). ``finish_schema`` (the JSON schema of a structured final answer,
    ``output_schema``) replaces the FINISH branch's string ``action_input``. A tool named FINISH is
    rejected with ``ValueError``, as are duplicates.
    """
    thought: dict[str, Any] = {"type": "string"}
    if thought_max_length is not None:
        if thought_max_length < 1:
            raise ValueError(f"thought_max_length must be positive or None, got {thought_max_length}")
        thought["maxLength"] = thought_max_length

    branches: list[dict[str, Any]] = []
    hoisted: dict[str, Any] = {}
    seen: set[str] = set()
    for tool in tools:
        if tool.name == FINISH:
            raise ValueError(f"a tool may not be called {FINISH!r}: that name ends the run")
        if tool.name in seen:
            raise ValueError(f"duplicate tool name {tool.name!r}")
        seen.add(tool.name)
        args = _normalise(tool_args_schema(tool), prefix=tool.name, hoisted=hoisted)
        branches.append(_branch(thought, {"const": tool.name}, args))
    finish_input = ({"type": "string"} if finish_schema is None
                    else _normalise(copy.deepcopy(dict(finish_schema)), prefix=FINISH, hoisted=hoisted))
    branches.append(_branch(thought, {"const": FINISH}, finish_input))

    schema: dict[str, Any] = {"anyOf": branches}
    if hoisted:
        schema["$defs"] = hoisted
    return schema


def tool_args_schema(tool: BaseTool) -> dict[str, Any]:
    """The raw JSON schema of ``tool``'s arguments (an ``object`` schema), not yet normalised."""
    raw: Any
    try:
        raw = tool.tool_call_schema
    except Exception:  # a broken or exotic args_schema: fall back to tool.args below
        raw = None
    schema: Any = None
    if isinstance(raw, Mapping):
        schema = copy.deepcopy(dict(raw))
    elif raw is not None and hasattr(raw, "model_json_schema"):
        schema = raw.model_json_schema()
    elif raw is not None and hasattr(raw, "schema"):  # pydantic v1 model
        schema = raw.schema()
    result: dict[str, Any]
    if isinstance(schema, dict):
        result = schema
    else:
        props = copy.deepcopy(dict(tool.args))
        result = {"type": "object", "properties": props, "required": list(props)}
    if "type" not in result and "properties" in result:
        result["type"] = "object"
    if result.get("type") == "object" and "properties" not in result:
        result["properties"] = {}
    return result


def _branch(thought: dict[str, Any], action: dict[str, Any], action_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "thought": dict(thought),
            "action": action,
            "action_input": action_input,
        },
        "required": ["thought", "action", "action_input"],
        "additionalProperties": False,
    }


def _normalise(schema: dict[str, Any], *, prefix: str, hoisted: dict[str, Any]) -> dict[str, Any]:
    """Strip titles, inline local $refs (hoisting recursive ones), close objects."""
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        block = schema.get(key)
        if isinstance(block, Mapping):
            for name, sub in block.items():
                defs[f"#/{key}/{name}"] = sub
    body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
    body.pop("description", None)  # the tool's own description; the prompt already carries it

    hoisted_names: dict[str, str] = {}

    def hoist(ref: str) -> str:
        if ref not in hoisted_names:
            name = f"{prefix}__{ref.rsplit('/', 1)[-1]}"
            hoisted_names[ref] = name
            hoisted[name] = {}  # placeholder: breaks the cycle while the body is walked
            hoisted[name] = walk(defs[ref], (ref,))
        return f"#/$defs/{hoisted_names[ref]}"

    def walk(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, stack) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in defs:
            siblings = {k: v for k, v in node.items() if k not in ("$ref", "title")}
            if ref in stack:  # recursive: keep a reference to a hoisted definition
                out: dict[str, Any] = {"$ref": hoist(ref)}
                out.update(walk(siblings, stack))
                return out
            resolved = walk(defs[ref], (*stack, ref))
            if isinstance(resolved, dict):
                merged = dict(resolved)
                merged.update(walk(siblings, stack))
                return merged
            return resolved
        out = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in _NAME_MAPS and isinstance(value, Mapping):
                out[key] = {name: walk(sub, stack) for name, sub in value.items()}
            else:
                out[key] = walk(value, stack)
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out

    result = walk(body, ())
    assert isinstance(result, dict)
    return result
