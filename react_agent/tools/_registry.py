"""The tool registry: normalise tools, describe them for the prompt, validate and run calls.

Tools are langchain-core ``BaseTool`` objects (``@tool`` functions and ``StructuredTool`` included,
sync or async); plain typed Python functions, ``async def`` ones included, are wrapped with
``StructuredTool.from_function``. Running a call (:func:`run_sync`, :func:`run_async`) either returns
the tool's result, or raises :class:`ToolTimeout` or :class:`ToolError`, whose text is safe to show
the model: invalid arguments, tool exceptions, error results and timeouts are the model's to read
and fix. :func:`stringify` turns a result into observation text (see ``_results``).

Sync and async tools run under both ``run`` and ``arun``:

- ``run``: a sync tool is called (in a daemon thread when it has a timeout); an async-only tool, or
  an awaitable a sync tool returns, runs to completion on a private event loop in a daemon thread.
- ``arun``: an async tool is awaited (cancelled at its timeout); a sync-only tool runs in a daemon
  thread of its own, never in the event loop's default executor; an awaitable it returns is awaited.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import threading
import time
import unicodedata
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, Tool, ToolException
from pydantic import BaseModel, ValidationError

from react_agent._types import FINISH
from react_agent.errors import ConfigError, OutputParseError, ToolError, ToolTimeout
from react_agent.parsing import FINISH_NAMES, MAX_NAME, NONE_NAMES, canonical_name, parse_response
from react_agent.tools._results import error_text, result_error, safe_str, stringify, tool_outcome
from react_agent.tools._timeouts import (
    DeadlineExceeded,
    acall_in_thread,
    acall_within,
    call_within,
    implements,
    run_awaitable_within,
)

__all__ = [
    "Outcome",
    "ToolError",
    "ToolLike",
    "ToolRegistry",
    "ToolTimeout",
    "error_text",
    "name_problem",
    "run_async",
    "run_sync",
    "signature_problem",
    "stringify",
    "tool_outcome",
]

ToolLike = BaseTool | Callable[..., Any]

_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
               "array": "array", "object": "object", "null": "null"}


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
        if inspect.iscoroutinefunction(obj):
            return StructuredTool.from_function(coroutine=obj)
        return StructuredTool.from_function(obj)
    raise ConfigError(f"{obj!r} is not a tool: pass a langchain BaseTool, an @tool function or a typed function")


def signature_problem(tool: BaseTool) -> str | None:
    """Why LangChain could never call the function of ``tool`` (a ``StructuredTool``) with the model's arguments,
    and how to fix it; ``None`` when it can. LangChain passes every argument by name, takes an argument named
    ``config`` for its own ``RunnableConfig`` and never passes one named ``run_manager``. (A tool built from a
    JSON schema over ``**kwargs``, as MCP adapters build them, is not refused, even with a ``__signature__`` that
    describes the schema: its author cannot rename the argument.)"""
    functions = [f for f in (getattr(tool, "func", None), getattr(tool, "coroutine", None)) if callable(f)]
    for func in functions:
        try:
            parameters = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            continue
        positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_ONLY]
        if positional:
            return (f"its function takes {', '.join(positional)} positional-only (before '/'), but LangChain passes "
                    "every argument by name: remove the '/'")
        own = _own_parameters(func, parameters)
        if any(p.name == "run_manager" and p.name in own and p.default is inspect.Parameter.empty
               for p in parameters):
            return ("its function requires an argument named 'run_manager', which LangChain never passes to a "
                    "function tool: give it a default (None) or rename it")
        if "config" in own and "config" in (tool.args or {}):
            return ("its function's argument 'config' is LangChain's name for the run's RunnableConfig, so the "
                    "model's value never reaches it: rename the argument (or annotate it RunnableConfig to receive "
                    "the config)")
    return None


def _own_parameters(func: Callable[..., Any], parameters: Any) -> set[str]:
    """The names of the parameters ``func``'s own code declares (not a ``__signature__`` set on a ``**kwargs``
    function to describe a schema); for a callable without code, those of its signature."""
    code = getattr(func, "__code__", None)
    if code is None:
        return {p.name for p in parameters}
    return set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def name_problem(name: object) -> str | None:
    if isinstance(name, str):
        return _name_problem_of(name)
    return _name_problem(name)


@functools.lru_cache(maxsize=4096)
def _name_problem_of(name: str) -> str | None:
    return _name_problem(name)


def _name_problem(name: object) -> str | None:
    """Why a model could not call a tool by this name, or ``None`` when the name is fine.

    The rule: a tool name is 1 to 128 printable characters without leading or trailing whitespace,
    that the parser does not give another meaning to (not FINISH or a FINISH synonym such as
    ``final_answer`` or ``Final Answer``, no "final answer" inside, not a "no action" word such as
    ``none``, ``null``, ``n/a``), and that the parser reads back as exactly that name from a JSON reply
    and from the classic text format.
    """
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a string"
    if not name.strip():
        return "is empty"
    if name != name.strip():
        return "has leading or trailing whitespace, which the parser strips"
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; the parser refuses names over {MAX_NAME}"
    if any(unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") for c in name):
        return "contains a control, line-break or invisible character that a model cannot write in an action"
    canon = canonical_name(name)
    if name.upper() == FINISH or canon in FINISH_NAMES:
        return "is FINISH or a synonym of it: the parser takes a call to it as the final answer"
    if "final answer" in canon:
        return "contains 'final answer': the parser refuses such an action as ambiguous"
    if canon in NONE_NAMES:
        return "means 'no action' to the parser"
    if not _read_back(name):
        return ("would be read as another name by the parser (for example with surrounding quotes, backticks, "
                "asterisks or brackets, a trailing '.' or ':', a '(...)' suffix, a leading '{', or a format "
                "label such as 'Action Input:')")
    return None


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
    names = {alias: name for name, alias in aliases(tool).items()}  # the full schema's keys are the aliases
    visible = set(call_schema.get("properties", {}))
    schema["properties"] = {names.get(k, k): v for k, v in schema.get("properties", {}).items()
                            if names.get(k, k) in visible}
    schema["required"] = [names.get(k, k) for k in schema.get("required", []) if names.get(k, k) in visible]
    return schema


def aliases(tool: BaseTool) -> dict[str, str]:
    """``{field name: alias}`` of the aliased fields of a tool's pydantic (v2) args schema: the model writes
    the field names (``tool_call_schema``'s), ``invoke`` validates by alias, so the registry's
    :meth:`ToolRegistry.check` hands the tool its arguments under the aliases."""
    full = tool.args_schema
    if not (isinstance(full, type) and issubclass(full, BaseModel)):
        return {}
    found = {}
    for name, info in full.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        if alias and alias != name:
            found[name] = alias
    return found


_SCHEMAS: dict[int, tuple[weakref.ref[BaseTool], tuple[Any, ...], dict[str, Any]]] = {}
_SCHEMAS_LOCK = threading.Lock()


def _cached_schema(tool: BaseTool) -> dict[str, Any]:
    """:func:`_json_schema`, computed once per tool object (while its name, description and argument
    schema stay the same), so that building an agent per request with the same tools costs no schema
    generation. A copy is returned: callers may not change the cached one."""
    key = (tool.name, tool.description, id(tool.args_schema))
    with _SCHEMAS_LOCK:
        hit = _SCHEMAS.get(id(tool))
    if hit is not None and hit[0]() is tool and hit[1] == key:
        return copy.deepcopy(hit[2])
    schema = _json_schema(tool)
    with _SCHEMAS_LOCK:
        if len(_SCHEMAS) > 4096:
            _SCHEMAS.clear()
        _SCHEMAS[id(tool)] = (weakref.ref(tool), key, copy.deepcopy(schema))
    return schema


def _resolve(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str):
        return {**defs.get(ref.rsplit("/", 1)[-1], {}), **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


def _entered(prop: Any, seen: frozenset[int]) -> frozenset[int]:
    """``seen`` with ``prop`` added: the schema nodes :func:`_type_name` and :func:`_enum` are inside of. Meeting
    one of them again (a ``$ref`` whose ``anyOf`` or ``items`` leads back to it) would never end: ``ValueError``."""
    if id(prop) in seen:
        raise ValueError("a schema refers back to itself through 'anyOf' or 'items' (a '$ref' cycle)")
    return seen | {id(prop)}


def _type_name(prop: dict[str, Any], defs: Mapping[str, Any], seen: frozenset[int] = frozenset()) -> str:
    seen = _entered(prop, seen)
    prop = _resolve(prop, defs)
    if "anyOf" in prop:
        names = [_type_name(p, defs, seen) for p in prop["anyOf"]]
        return " | ".join(n for n in names if n != "null") or "null"
    if "enum" in prop and "type" not in prop:
        return "string"
    kind = prop.get("type", "any")
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array of {_type_name(prop['items'], defs, seen)}"
    return _JSON_TYPES.get(str(kind), str(kind))


def _enum(prop: dict[str, Any], defs: Mapping[str, Any], seen: frozenset[int] = frozenset()) -> list[Any]:
    """The values an argument may take (a list's items': an array of an enum lists the enum's values)."""
    seen = _entered(prop, seen)
    prop = _resolve(prop, defs)
    if "enum" in prop:
        return list(prop["enum"])
    if "const" in prop:
        return [prop["const"]]
    if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
        return _enum(prop["items"], defs, seen)
    return [v for p in prop.get("anyOf", []) if isinstance(p, dict) for v in _enum(p, defs, seen)]


def _schema_problem(schema: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a tool's argument ``schema`` (its ``properties`` must be an object of
    argument schemas, its ``required`` a list of argument names), or ``None`` when nothing obvious is."""
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        return f"'properties' must be an object of argument schemas, not a {type(props).__name__}"
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            return f"argument {safe_str(name)!r} has a schema that is a {type(prop).__name__}, not an object"
    required = schema.get("required", [])
    if not isinstance(required, (list, tuple)):
        return f"'required' must be a list of argument names, not a {type(required).__name__}"
    for name in required:
        if not isinstance(name, str):
            return f"'required' must be a list of argument names (strings), but holds a {type(name).__name__}"
    return None


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


def _read_back(name: str) -> bool:
    """Whether the parser reads a call to ``name`` as exactly ``name``, in JSON and in the classic text format."""
    replies = (
        json.dumps({"thought": "t", "action": name, "action_input": {"x": 1}}, ensure_ascii=False),
        f'Thought: t\nAction: {name}\nAction Input: {{"x": 1}}',
    )
    for reply in replies:
        try:
            if parse_response(reply, [name]).action != name:
                return False
        except OutputParseError:
            return False
    return True


@dataclass(frozen=True)
class Rejection:
    """Why a call is refused before it runs: the template ``kind`` and its variables."""

    kind: str
    variables: dict[str, Any] = field(default_factory=dict)


class ToolRegistry:
    """The tools of one agent, by name.

    Duplicate names, and names that a model cannot call (see :func:`name_problem`), are a
    :class:`ConfigError`.
    """

    def __init__(self, tools: Sequence[ToolLike]) -> None:
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
            raise ConfigError("tools must be a list of tools")
        self.tools: dict[str, BaseTool] = {}
        for obj in tools:
            tool = _to_tool(obj)
            problem = name_problem(tool.name)
            if problem is not None:
                raise ConfigError(
                    f"tool name {safe_str(tool.name)!r} {problem}: rename the tool (for example with "
                    "@tool('a_name') or StructuredTool.from_function(..., name='a_name'))"
                )
            problem = signature_problem(tool)
            if problem is not None:
                raise ConfigError(f"tool {tool.name!r}: {problem}")
            if tool.name in self.tools:
                raise ConfigError(f"two tools are named {tool.name!r}: tool names must be unique")
            self.tools[tool.name] = tool
        self.schemas: dict[str, dict[str, Any]] = {}
        self.models: dict[str, Any] = {}
        self.aliases: dict[str, dict[str, str]] = {}
        self.specs: list[dict[str, Any]] = []
        for name, tool in self.tools.items():
            try:
                self._add_schema(name, tool)
            except ConfigError:
                raise
            except Exception as exc:  # a schema of an unexpected shape (a dict args_schema, an MCP server's)
                raise ConfigError(f"tool {name!r}: its argument schema cannot be read "
                                  f"({type(exc).__name__}: {safe_str(exc)[:200]}): fix the tool's args_schema") from exc

    def _add_schema(self, name: str, tool: BaseTool) -> None:
        """Read ``tool``'s argument schema: its JSON schema, its validation model, its aliases and its spec."""
        schema = _cached_schema(tool)
        problem = _schema_problem(schema)
        if problem is not None:
            raise ConfigError(f"tool {name!r}: its argument schema is malformed: {problem}: fix the tool's "
                              "args_schema")
        self.schemas[name] = schema
        self.models[name] = tool.tool_call_schema
        found = aliases(tool)
        if found:
            self.aliases[name] = found
        self.specs.append(tool_spec(tool, schema))

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def arguments_text(self, name: str) -> str:
        """The argument names of a tool, required first, for error feedback."""
        spec = next(s for s in self.specs if s["name"] == name)
        return ", ".join(a["name"] for a in sorted(spec["args"], key=lambda a: not a["required"]))

    def check(self, name: str, action_input: Any) -> Rejection | tuple[BaseTool, dict[str, Any]]:
        """The tool and its validated arguments, or the :class:`Rejection` of an unknown tool or of
        invalid arguments (rendered for the model by the agent's templates)."""
        tool = self.tools.get(name)
        if tool is None:
            return Rejection("unknown_tool")
        try:
            args = self.validate(name, action_input)
        except ValueError as exc:
            return Rejection("invalid_arguments", {"error": str(exc), "arguments": self.arguments_text(name)})
        renamed = self.aliases.get(name)
        return tool, args if renamed is None else {renamed.get(k, k): v for k, v in args.items()}

    def requires_approval(self, name: str) -> bool:
        """Whether the tool is marked ``metadata={"requires_approval": True}``."""
        tool = self.tools.get(name)
        return tool is not None and bool((tool.metadata or {}).get("requires_approval"))

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
        renamed = self.aliases.get(name)
        if renamed is not None:  # an alias written for its field's name counts as that name
            by_alias = {alias: field for field, alias in renamed.items() if field not in action_input}
            action_input = {by_alias.get(k, k): v for k, v in action_input.items()}
        problems = []
        extra = action_input.keys() - props.keys()
        if extra:
            problems.append(f"unexpected argument(s): {', '.join(sorted(extra))}")
        known = {k: v for k, v in action_input.items() if k in props} if extra else action_input
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


# -- running a call ----------------------------------------------------------------------------------


def run_sync(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None, timeout: float | None) -> Any:
    """Run ``tool`` from sync code and return its result, within ``timeout`` seconds (``None``: no limit).

    - A sync tool is called in this thread, or with a timeout in a daemon thread that is abandoned when
      time runs out (it keeps running until the tool returns; its result is dropped; it cannot delay
      interpreter exit).
    - An async-only tool (``@tool async def``, a ``StructuredTool`` with only ``coroutine=`` such as MCP
      tools), and any awaitable a sync tool returns, run to completion on a private event loop in a
      daemon thread; at the timeout the task is cancelled there.

    Raises :class:`ToolTimeout` when time runs out, :class:`ToolError` when the tool raises or its
    result reports an error; never the tool's own exception.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    name = f"tool-{tool.name}"
    try:
        if _async_only(tool):
            result = run_awaitable_within(lambda: _invoke_async(tool, args, config), timeout, name=name)
        elif timeout is None:
            result = _invoke(tool, args, config)
        else:
            result = call_within(lambda: _invoke(tool, args, config), timeout, name=name)
        if type(result) is not str and inspect.isawaitable(result):
            result = _finish_sync(result, _left(deadline), name)
    except DeadlineExceeded:
        raise ToolTimeout(f"{tool.name} timed out after {timeout} s") from None
    except Exception as exc:
        raise ToolError(error_text(exc)) from exc
    return _checked(result)


async def run_async(
    tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None, timeout: float | None
) -> Any:
    """Run ``tool`` from async code and return its result, within ``timeout`` seconds (``None``: no limit).

    An async tool is awaited and cancelled at the timeout (it receives ``CancelledError``). A sync-only
    tool runs in a daemon thread of its own (never the event loop's default executor, which
    ``asyncio.run`` joins at the end), abandoned at the timeout as in :func:`run_sync`. An awaitable
    a sync tool returns is awaited within the time left. Raises like :func:`run_sync`.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        if _native_async(tool):
            result = await acall_within(lambda: _invoke_async(tool, args, config), timeout)
        else:
            result = await acall_in_thread(lambda: _invoke(tool, args, config), timeout, name=f"tool-{tool.name}")
        if inspect.isawaitable(result):
            result = await _finish_async(result, _left(deadline))
    except DeadlineExceeded:
        raise ToolTimeout(f"{tool.name} timed out after {timeout} s") from None
    except Exception as exc:
        raise ToolError(error_text(exc)) from exc
    return _checked(result)


def _invoke(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None) -> Any:
    """``tool.invoke(args, config)`` with the errors the tool handles itself marked as errors."""
    return _marking_handled_errors(tool).invoke(args, config)


async def _invoke_async(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None) -> Any:
    """``tool.ainvoke(args, config)`` with the errors the tool handles itself marked as errors."""
    return await _marking_handled_errors(tool).ainvoke(args, config)


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def _finish_sync(awaitable: Awaitable[Any], seconds: float | None, name: str) -> Any:
    if seconds is not None and seconds <= 0:
        _discard(awaitable)
        raise DeadlineExceeded
    return run_awaitable_within(lambda: awaitable, seconds, name=name)


async def _finish_async(awaitable: Awaitable[Any], seconds: float | None) -> Any:
    if seconds is not None and seconds <= 0:
        _discard(awaitable)
        raise DeadlineExceeded
    return await acall_within(lambda: awaitable, seconds)


def _discard(awaitable: Awaitable[Any]) -> None:
    """Close a coroutine that will never run (no 'never awaited' warning)."""
    close = getattr(awaitable, "close", None)
    if inspect.iscoroutine(awaitable) and callable(close):
        close()


def _checked(result: Any) -> Any:
    """``result``, or :class:`ToolError` when it reports an error."""
    if type(result) is str:  # the common case: text reports no error
        return result
    if isinstance(result, _HandledError):
        raise ToolError(result.text)
    error = result_error(result)
    if error is not None:
        raise ToolError(error)
    return result


def _async_only(tool: BaseTool) -> bool:
    """A tool with an async function and no sync one (sync ``invoke`` would raise NotImplementedError)."""
    if isinstance(tool, (StructuredTool, Tool)):
        return tool.func is None and tool.coroutine is not None
    return implements(type(tool), "_arun", BaseTool) and not implements(type(tool), "_run", BaseTool)


def _native_async(tool: BaseTool) -> bool:
    """Whether ``ainvoke`` really awaits the tool rather than running its sync path in an executor."""
    if isinstance(tool, (StructuredTool, Tool)):
        return tool.coroutine is not None
    return implements(type(tool), "_arun", BaseTool) or implements(type(tool), "ainvoke", BaseTool)


# -- errors a tool hands back as content --------------------------------------------------------------


@dataclass(frozen=True)
class _HandledError:
    """What a tool's ``handle_tool_error``/``handle_validation_error`` made of an error, marked as one."""

    text: str

    def __str__(self) -> str:
        return self.text


def _marking_handled_errors(tool: BaseTool) -> BaseTool:
    """``tool``, or a shallow copy whose error handlers mark their content as an error.

    LangChain returns handled errors as ordinary content when a tool is invoked with plain arguments,
    so without the mark an MCP ``isError`` result (langchain-mcp-adapters' ``handle_tool_errors=True``)
    would reach the model as a success. The copy is made once per tool object and made again when any of
    the tool's fields is replaced.
    """
    if not (tool.handle_tool_error or tool.handle_validation_error):
        return tool
    fields = tuple(vars(tool).values())
    with _MARKED_LOCK:
        hit = _MARKED.get(id(tool))
    if hit is not None and hit[0]() is tool and len(hit[1]) == len(fields) and all(
            a is b for a, b in zip(hit[1], fields, strict=True)):
        cached: BaseTool = hit[2]
        return cached
    updates: dict[str, Any] = {}
    if tool.handle_tool_error:
        updates["handle_tool_error"] = _tool_error_marker(tool.handle_tool_error)
    if tool.handle_validation_error:
        updates["handle_validation_error"] = _validation_error_marker(tool.handle_validation_error)
    marked: BaseTool = tool.model_copy(update=updates)
    with _MARKED_LOCK:
        if len(_MARKED) > 4096:
            _MARKED.clear()
        _MARKED[id(tool)] = (weakref.ref(tool), fields, marked)
    return marked


_MARKED: dict[int, tuple[weakref.ref[BaseTool], tuple[Any, ...], BaseTool]] = {}
_MARKED_LOCK = threading.Lock()


def _tool_error_marker(flag: Any) -> Callable[[ToolException], Any]:
    def handle(exc: ToolException) -> _HandledError:
        if isinstance(flag, str):
            return _HandledError(flag)
        if callable(flag):
            return _HandledError(stringify(flag(exc)))
        return _HandledError(stringify(exc.args[0]) if exc.args else "Tool execution error")

    return handle


def _validation_error_marker(flag: Any) -> Callable[[Any], Any]:
    def handle(exc: Any) -> _HandledError:
        if isinstance(flag, str):
            return _HandledError(flag)
        if callable(flag):
            return _HandledError(stringify(flag(exc)))
        return _HandledError("Tool input validation error")

    return handle
