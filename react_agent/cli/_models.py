"""The command line's model flags and its one error type: :func:`build_model`, :class:`CliError`, exit codes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseLanguageModel

from react_agent.errors import ConfigError

__all__ = ["EXIT_CREDENTIALS", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_MCP", "EXIT_NOT_FINISHED", "EXIT_OK",
           "EXIT_SETUP", "EXIT_TOOLS", "EXIT_UNREACHABLE", "EXIT_USAGE", "CliError", "build_model", "model_options",
           "scripted_replies"]

EXIT_OK, EXIT_NOT_FINISHED, EXIT_USAGE, EXIT_SETUP, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_CREDENTIALS, EXIT_UNREACHABLE, EXIT_TOOLS, EXIT_MCP, EXIT_INTERRUPTED = 5, 6, 7, 8, 130


class CliError(Exception):
    """A problem the user can fix: reported as one line on stderr, exit status ``code``."""

    def __init__(self, message: str, code: int = EXIT_SETUP) -> None:
        super().__init__(message)
        self.code = code


def build_model(args: argparse.Namespace) -> BaseLanguageModel[Any]:
    """The chat model of ``--model`` (``local``, ``gigachat`` or ``provider:name``), ``--model-path``,
    ``--base-url`` and ``--api-key-env`` (the seam tests replace). Mistakes are :class:`CliError` s: a
    missing key exits with :data:`EXIT_CREDENTIALS`, anything else with :data:`EXIT_SETUP`."""
    from react_agent.models import make_model

    spec = str(args.model).strip()
    provider = spec.partition(":")[0].lower()
    model_path = getattr(args, "model_path", None)
    if model_path:
        if spec != "local":
            raise CliError(f"--model-path is for --model local; for {spec!r} leave it out", EXIT_USAGE)
        if not Path(model_path).expanduser().is_file():
            raise CliError(f"model file not found: {model_path} (check --model-path)")
        spec = f"local:{Path(model_path).expanduser()}"
    if provider == "scripted":
        from react_agent.testing import ScriptedChatModel

        if model_options(args):
            raise CliError("-o: --model scripted takes no model options (its replies come from the file)", EXIT_USAGE)

        return ScriptedChatModel(scripted_replies(spec.removeprefix("scripted:")))
    if provider == "gigachat":
        _check_gigachat_settings()
    options = model_options(args)
    if provider == "local":  # a command's process is short: its first step loads what an earlier one evaluated
        from react_agent.models import default_prompt_cache_dir

        options.setdefault("prompt_cache_dir", str(default_prompt_cache_dir()))
    try:
        model: BaseLanguageModel[Any] = make_model(spec, base_url=getattr(args, "base_url", None),
                                                   api_key_env=getattr(args, "api_key_env", None), **options)
    except ConfigError as exc:
        message = str(exc)
        missing_key = "needs an API key" in message or "needs credentials" in message
        raise CliError(message, EXIT_CREDENTIALS if missing_key else EXIT_SETUP) from None
    return model


def _check_gigachat_settings() -> None:
    """Invalid ``GIGACHAT_*`` values (a non-numeric timeout...) named before anything runs (the check the
    agents make when they are built)."""
    from react_agent.models import check_gigachat_settings

    try:
        check_gigachat_settings()
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``-o key=value`` options, for the model's constructor; a value is JSON when it parses as JSON."""
    options: dict[str, Any] = {}
    for item in getattr(args, "model_option", None) or []:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise CliError(f"-o {item!r}: write KEY=VALUE, e.g. -o temperature=0", EXIT_USAGE)
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def json_list(path: str, flag: str, what: str) -> list[Any]:
    """The JSON list in the file of ``flag`` (``--examples``, ``--model scripted:``); a :class:`CliError` naming
    the flag when the file cannot be read, is not JSON or holds no list (``what``: what the list should hold)."""
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise CliError(f"{flag}: cannot read {path!r}: {exc.strerror}", EXIT_USAGE) from None
    except ValueError as exc:
        raise CliError(f"{flag}: {path!r} is not JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(data, list):
        raise CliError(f"{flag}: {path!r} must hold a JSON list of {what}", EXIT_USAGE)
    return data


def scripted_replies(path: str) -> list[str]:
    """The replies of ``--model scripted:FILE``: a JSON list (texts, or objects written as JSON)."""
    data = json_list(path, "--model scripted", "replies")
    return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in data]
