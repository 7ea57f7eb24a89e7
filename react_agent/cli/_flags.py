"""The flags every command that runs agents shares, and what they build: the user's tools (``--tools``), the
model's options (``-o key=value``) and the agent's (``--prompts``, ``--constrained``, ``--examples``).

:func:`add_model_and_tool_flags` adds them to a subcommand's parser (``run``, ``chat``, ``resume``, ``batch``,
``eval``, and ``serve``); :func:`model_options` and :func:`agent_options` read them back.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.tools import BaseTool

from react_agent import ConfigError, Example
from react_agent.cli._models import EXIT_MCP, EXIT_TOOLS, EXIT_USAGE, CliError, json_list, model_options
from react_agent.errors import MissingPackageError

__all__ = ["CONSTRAINED_CHOICES", "add_model_and_tool_flags", "agent_options", "load_examples", "load_tools",
           "mcp_server", "model_options", "open_mcp_tools"]

MODEL_HELP = ("local (embedded llama.cpp model, default), gigachat, scripted:FILE (a JSON list of replies), or "
              "provider:name: openai:gpt-4.1, vllm:NAME, llamacpp:NAME, ollama:NAME, gigachat:NAME, local:FILE.gguf")
CONSTRAINED_CHOICES = ("auto", "off", "json_schema", "json_object", "grammar")


def add_model_and_tool_flags(parser: argparse.ArgumentParser, *, tools: bool = True) -> None:
    """The model flags (``--model``, ``--model-path``, ``--base-url``, ``--api-key-env``, ``-o``), the agent's
    prompt flags (``--prompts``, ``--constrained``, ``--examples``) and, with ``tools``, ``--tools``/``--mcp``."""
    parser.add_argument("--model", default="local", metavar="MODEL", help=MODEL_HELP)
    parser.add_argument("--model-path", metavar="FILE", help="GGUF file for --model local (default: the catalogue's "
                        "default model)")
    parser.add_argument("--base-url", metavar="URL", help="the server of an openai/vllm/llamacpp/ollama/gigachat "
                        "model, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key "
                        "(default: OPENAI_API_KEY for openai, GIGACHAT_CREDENTIALS for gigachat)")
    parser.add_argument("-o", "--option", action="append", dest="model_option", metavar="KEY=VALUE",
                        help="a model option, e.g. -o temperature=0 -o max_tokens=256 (VALUE is read as JSON "
                             "when it is JSON, else as text); repeatable")
    parser.add_argument("--prompts", metavar="SET|DIR", help="prompt set (ru, en, ru-compact, en-compact) or a "
                        "folder of *.jinja overrides (default: the task's language; compact for --model local)")
    parser.add_argument("--constrained", choices=CONSTRAINED_CHOICES, help="constrained decoding: auto (detect, "
                        "default), off, or a mode (json_object for llama-cpp-python's server, json_schema for "
                        "vLLM/llama-server)")
    parser.add_argument("--history-layout", choices=("prompt", "messages"), help="how the steps reach the model: "
                        "inside the step prompt (prompt) or as chat turns after it (messages: what instruct models "
                        "are tuned on; the default for --model local on a chat-template model)")
    parser.add_argument("--examples", metavar="FILE.json|demo", help="worked examples for the step prompt: a JSON "
                        "list of react_agent.Example objects, or 'demo' (the demo tools' examples)")
    if tools:
        parser.add_argument("--tools", action="append", metavar="MODULE[:NAME]", help="your tools: a list (or a "
                            "function returning one) named NAME (default: tools) in a module or .py file; repeatable")
        parser.add_argument("--mcp", action="append", metavar="'COMMAND ARGS'", help="an MCP server: a command to "
                            "start (stdio; 'python' is the interpreter running react-agent) or an http(s):// URL "
                            "(streamable HTTP); its tools are given to the agent; repeatable")


def agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The agent options of ``--prompts``, ``--constrained``, ``--history-layout`` and ``--examples`` (only those
    given)."""
    options: dict[str, Any] = {}
    prompts = getattr(args, "prompts", None)
    if prompts:
        options["prompts"] = prompts
    constrained = getattr(args, "constrained", None)
    if constrained:
        options["constrained"] = {"auto": None, "off": False}.get(constrained, constrained)
    layout = getattr(args, "history_layout", None)
    if layout:
        options["history_layout"] = layout
    examples = getattr(args, "examples", None)
    if examples and examples != "demo":
        options["examples"] = load_examples(examples)
    return options


def load_examples(path: str) -> list[Example]:
    """The worked examples of ``--examples FILE.json``: a JSON list of :class:`~react_agent.Example` objects."""
    data = json_list(path, "--examples", 'examples ({"task": ..., "steps": [...], "answer": {"action": ..., '
                                         '"action_input": ...}})')
    try:
        return [Example.model_validate(item) for item in data]
    except ValueError as exc:
        first = str(exc).splitlines()
        raise CliError(f"--examples: {path!r}: {' '.join(first[:3])}", EXIT_USAGE) from None


# ---------------------------------------------------------------------------------------------- MCP servers
def mcp_server(text: str) -> str | list[str]:
    """``--mcp "COMMAND ARGS"`` split as a shell would (no shell runs), or an ``http(s)://`` URL of a
    streamable HTTP server; :class:`CliError` if the command cannot be found."""
    if re.match(r"https?://", text.strip(), re.IGNORECASE):
        return text.strip()
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise CliError(f"--mcp {text!r}: {exc} (quote the whole command once: --mcp \"python server.py\")",
                       EXIT_USAGE) from None
    if not argv:
        raise CliError("--mcp needs a command, e.g. --mcp \"python my_server.py\"", EXIT_USAGE)
    if argv[0] in ("python", "python3") and sys.executable:  # the interpreter (and venv) running react-agent
        argv[0] = sys.executable
    if shutil.which(argv[0]) is None:
        raise CliError(f"--mcp {text!r}: command not found: {argv[0]} (install it, or give its full path)",
                       EXIT_MCP)
    return argv


def open_mcp_tools(servers: Sequence[str], stack: ExitStack) -> list[BaseTool]:
    """Start (or attach) the MCP servers of ``--mcp`` and return their tools; ``stack`` closes them."""
    specs = [mcp_server(text) for text in servers]
    if not specs:
        return []
    from react_agent.mcp import mcp_tools

    try:
        tools: list[BaseTool] = stack.enter_context(mcp_tools(*specs))
    except MissingPackageError as exc:  # the mcp extra is not installed
        raise CliError(f"--mcp: {exc}", EXIT_MCP) from None
    except ConfigError as exc:
        raise CliError(f"--mcp: {exc}", EXIT_USAGE) from None
    except Exception as exc:  # MCPError: a server did not start, did not speak MCP, or tool names clash
        urls = [spec for spec in specs if isinstance(spec, str)]
        hint = (f"is the MCP server running at {urls[0]}?" if urls and len(urls) == len(specs)
                else "run the command yourself to see its own error")
        raise CliError(f"--mcp: {exc} ({hint})", EXIT_MCP) from exc
    return tools


# ---------------------------------------------------------------------------------------------- user tools
def load_tools(spec: str) -> list[Any]:
    """The tools of ``--tools MODULE[:ATTRIBUTE]``: a dotted module or a ``.py`` file, and an attribute
    (default ``tools``) holding a list of tools (``BaseTool`` objects or typed, documented functions) or a
    zero-argument function returning one. Every mistake is a :class:`CliError` with :data:`EXIT_TOOLS`."""
    target, attribute = _split_tools_spec(spec)
    module = _import_tools_module(target, spec)
    if not hasattr(module, attribute):
        found = [name for name, value in vars(module).items()
                 if not name.startswith("_") and isinstance(value, (list, tuple)) and value
                 and all(_is_tool(v) for v in value)]
        hint = f"; lists of tools in it: {', '.join(found)} (use {target}:{found[0]})" if found else ""
        raise CliError(f"--tools {spec}: module {target!r} has no attribute {attribute!r}: define "
                       f"{attribute} = [...] in it, or name the attribute as MODULE:NAME{hint}", EXIT_TOOLS)
    value = getattr(module, attribute)
    if callable(value) and not isinstance(value, (BaseTool, list, tuple)):
        value = _call_factory(value, spec)
    if not isinstance(value, (list, tuple)):
        raise CliError(f"--tools {spec}: {attribute} is a {type(value).__name__}, not a list of tools: make it "
                       f"a list (tools = [my_tool, ...]) or a function without arguments returning one", EXIT_TOOLS)
    if not value:
        raise CliError(f"--tools {spec}: {attribute} holds no tools: put at least one tool in the list", EXIT_TOOLS)
    for number, item in enumerate(value, 1):
        if not _is_tool(item):
            raise CliError(f"--tools {spec}: item {number} of {attribute} is a {type(item).__name__}, not a tool: "
                           "use BaseTool objects (@tool) or typed functions with a docstring", EXIT_TOOLS)
    return list(value)


def _is_tool(value: Any) -> bool:
    return isinstance(value, BaseTool) or inspect.isroutine(value)


def _split_tools_spec(spec: str) -> tuple[str, str]:
    target, sep, attribute = spec.strip().rpartition(":")
    if not sep or not attribute.isidentifier() or not target:  # no attribute given (or a Windows drive)
        return spec.strip(), "tools"
    return target, attribute


def _import_tools_module(target: str, spec: str) -> ModuleType:
    if not target:
        raise CliError("--tools needs MODULE[:ATTRIBUTE], e.g. my_tools:tools or ./my_tools.py:tools", EXIT_USAGE)
    try:
        if target.endswith(".py") or os.sep in target or "/" in target:
            return _import_file(Path(target).expanduser(), spec)
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # as `python -m` does: modules of the current folder import
        return importlib.import_module(target)
    except CliError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and (target == exc.name or target.startswith(exc.name + ".")):
            raise CliError(f"--tools {spec}: no module named {target!r}: run from the folder that contains it, "
                           f"add its folder to PYTHONPATH, or give the path of the file (./{target}.py)",
                           EXIT_TOOLS) from None
        raise CliError(f"--tools {spec}: importing {target!r} failed: {exc} (install the missing package)",
                       EXIT_TOOLS) from None
    except Exception as exc:
        raise CliError(f"--tools {spec}: importing {target!r} failed: {type(exc).__name__}: {exc}",
                       EXIT_TOOLS) from exc


def _import_file(path: Path, spec: str) -> ModuleType:
    if not path.is_file():
        raise CliError(f"--tools {spec}: file not found: {path}", EXIT_TOOLS)
    resolved = path.resolve()
    name = "react_agent_user_tools_" + re.sub(r"\W", "_", str(resolved))
    if name in sys.modules:  # loaded once per process, so the tools of `chat` and tests keep their state
        return sys.modules[name]
    file_spec = importlib.util.spec_from_file_location(name, resolved)
    if file_spec is None or file_spec.loader is None:
        raise CliError(f"--tools {spec}: {path} is not a Python file", EXIT_TOOLS)
    module = importlib.util.module_from_spec(file_spec)
    if str(resolved.parent) not in sys.path:
        sys.path.insert(0, str(resolved.parent))  # so the file can import its neighbours
    sys.modules[name] = module
    try:
        file_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _call_factory(factory: Callable[..., Any], spec: str) -> Any:
    try:
        required = [p for p in inspect.signature(factory).parameters.values()
                    if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        required = []
    if required:
        raise CliError(f"--tools {spec}: the factory needs arguments ({', '.join(p.name for p in required)}); "
                       "point --tools at a list of tools or at a function without arguments returning one",
                       EXIT_TOOLS)
    try:
        return factory()
    except Exception as exc:
        raise CliError(f"--tools {spec}: the factory raised {type(exc).__name__}: {exc}", EXIT_TOOLS) from exc
