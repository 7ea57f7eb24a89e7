"""The tool registry: normalise tools, describe them for the prompt, validate and run calls.

Tools are langchain-core ``BaseTool`` objects (``@tool`` functions and ``StructuredTool`` included);
plain typed Python functions are wrapped with ``StructuredTool.from_function``. What a call produces is
always an :class:`Outcome` (an observation), never an exception: invalid arguments, tool exceptions and
timeouts are the model's to read and fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ValidationError

from react_agent._errors import ConfigError
from react_agent._timeouts import DeadlineExceeded, acall_within, call_within
from react_agent._types import FINISH

__all__ = ["Outcome", "ToolLike", "ToolRegistry", "ToolTimeout"]

ToolLike = BaseTool | Callable[..., Any]

_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
               "array": "array", "object": "object", "null": "null"}


class ToolTimeout(Exception):
    """A tool call ran past its timeout and was abandoned (not a ``TimeoutError`` the tool raised itself)."""


@dataclass(frozen=True)
class Outcome:
    """What came of one tool call. ``kind`` names the template that rendered ``observation``."""

    observation: str
    kind: str = "ok"  # ok | unknown_tool | invalid_arguments | tool_error | tool_timeout | approval_denied

    @property
    def is_error(self) -> bool:
        return self.kind != "ok"


def _to_tool(obj: ToolLike) -> BaseTool:
    if isinstance(obj, BaseTool):
        return obj
    if callable(obj):
        if not (getattr(obj, "__doc__", None) or "").strip():
            raise ConfigError(
                f"function {getattr(obj, '__name__', obj)!r} has no docstring: the model needs a description"
            )
        return StructuredTool.from_function(obj)
    raise ConfigError(f"{obj!r} is not a tool: pass a langchain BaseTool, an @tool function or a typed function")


def _model_schema(model: Any) -> dict[str, Any]:
    schema = model.model_json_schema() if hasattr(model, "model_json_schema") else model.schema()
    return dict(schema)


def _json_schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON schema of the arguments the model may pass (injected arguments left out).

    Taken from ``args_schema`` where it is a pydantic model (``tool_call_schema`` drops ``examples``),
    restricted to the properties of ``tool_call_schema``.
    """
    call = tool.tool_call_schema
    call_schema: dict[str, Any] = call if isinstance(call, dict) else _model_schema(call)
    full = tool.args_schema
    if not (isinstance(full, type) and issubclass(full, BaseModel)):
        return call_schema
    schema = full.model_json_schema()
    visible = set(call_schema.get("properties", {}))
    schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k in visible}
    schema["required"] = [k for k in schema.get("required", []) if k in visible]
    return schema


def _resolve(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str):
        return {**defs.get(ref.rsplit("/", 1)[-1], {}), **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


def _type_name(prop: dict[str, Any], defs: Mapping[str, Any]) -> str:
    prop = _resolve(prop, defs)
    if "anyOf" in prop:
        names = [_type_name(p, defs) for p in prop["anyOf"]]
        return " | ".join(n for n in names if n != "null") or "null"
    if "enum" in prop and "type" not in prop:
        return "string"
    kind = prop.get("type", "any")
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array of {_type_name(prop['items'], defs)}"
    return _JSON_TYPES.get(str(kind), str(kind))


def _enum(prop: dict[str, Any], defs: Mapping[str, Any]) -> list[Any]:
    prop = _resolve(prop, defs)
    if "enum" in prop:
        return list(prop["enum"])
    if "const" in prop:
        return [prop["const"]]
    return [v for p in prop.get("anyOf", []) for v in _enum(p, defs)]


def tool_spec(tool: BaseTool, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """Describe one tool for the ``tools`` template: name, description and each argument."""
    schema = schema if schema is not None else _json_schema(tool)
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    args = []
    for name, prop in schema.get("properties", {}).items():
        resolved = _resolve(prop, defs)
        args.append({
            "name": name,
            "description": resolved.get("description", ""),
            "type": _type_name(prop, defs),
            "required": name in required,
            "default": resolved.get("default"),
            "examples": list(resolved.get("examples") or []),
            "enum": _enum(prop, defs),
        })
    return {"name": tool.name, "description": tool.description, "args": args}


class ToolRegistry:
    """The tools of one agent, by name. Duplicate or reserved names are a :class:`ConfigError`."""

    def __init__(self, tools: Sequence[ToolLike]) -> None:
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
            raise ConfigError("tools must be a list of tools")
        self.tools: dict[str, BaseTool] = {}
        for obj in tools:
            tool = _to_tool(obj)
            if tool.name.upper() == FINISH:
                raise ConfigError(f"tool name {tool.name!r} is reserved for the final answer: rename the tool")
            if tool.name in self.tools:
                raise ConfigError(f"two tools are named {tool.name!r}: tool names must be unique")
            self.tools[tool.name] = tool
        self.schemas = {name: _json_schema(t) for name, t in self.tools.items()}
        self.models = {name: t.tool_call_schema for name, t in self.tools.items()}
        self.specs = [tool_spec(t, self.schemas[name]) for name, t in self.tools.items()]

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def arguments_text(self, name: str) -> str:
        """The argument names of a tool, required first, for error feedback."""
        spec = next(s for s in self.specs if s["name"] == name)
        return ", ".join(a["name"] for a in sorted(spec["args"], key=lambda a: not a["required"]))

    def validate(self, name: str, action_input: dict[str, Any] | str) -> dict[str, Any]:
        """Check ``action_input`` against the tool's schema; raise ``ValueError`` with a readable reason."""
        schema = self.schemas[name]
        props = schema.get("properties", {})
        if isinstance(action_input, str):
            if not action_input.strip() and not schema.get("required"):
                action_input = {}
            elif len(props) == 1:
                action_input = {next(iter(props)): action_input}
            else:
                raise ValueError(f"expected a JSON object of arguments, got the string {action_input!r}")
        problems = []
        extra = sorted(set(action_input) - set(props))
        if extra:
            problems.append(f"unexpected argument(s): {', '.join(extra)}")
        known = {k: v for k, v in action_input.items() if k in props}
        model = self.models[name]
        if isinstance(model, type) and issubclass(model, BaseModel):
            try:
                model.model_validate(known)
            except ValidationError as exc:
                problems.append(_validation_text(exc))
        else:
            missing = [k for k in schema.get("required", []) if k not in known]
            if missing:
                problems.append(f"missing required argument(s): {', '.join(missing)}")
        if problems:
            raise ValueError("; ".join(problems))
        return action_input


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def stringify(result: Any) -> str:
    """A tool result as observation text (messages and artifacts reduced to their content)."""
    content = getattr(result, "content", result)
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)


def run_sync(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None, timeout: float | None) -> Any:
    """Invoke ``tool``; with a timeout, in a worker thread that is abandoned when time runs out.

    Raises :class:`ToolTimeout` on timeout; the tool's own exceptions propagate to the caller.
    """
    try:
        return call_within(lambda: tool.invoke(args, config), timeout, name=f"tool-{tool.name}")
    except DeadlineExceeded:
        raise ToolTimeout(f"{tool.name} timed out after {timeout} s") from None


async def run_async(
    tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None, timeout: float | None
) -> Any:
    """Await ``tool.ainvoke``, cancelled after ``timeout`` seconds (sync tools run in a thread)."""
    try:
        return await acall_within(lambda: tool.ainvoke(args, config), timeout)
    except DeadlineExceeded:
        raise ToolTimeout(f"{tool.name} timed out after {timeout} s") from None
