"""The ``react-agent serve`` and ``react-agent view`` commands (registered by react_agent.cli's parser with
:func:`add_serve_parser` and :func:`add_view_parser`). docs/serving.md documents them."""

from __future__ import annotations

import argparse
import json
import os
import webbrowser
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from react_agent.cli._models import EXIT_USAGE, CliError, build_model
from react_agent.errors import ConfigError
from react_agent.serve import write_view

__all__ = ["add_serve_parser", "add_view_parser", "cmd_serve", "cmd_view"]


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, got {text!r}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be positive seconds, got {text!r}")
    return value


def add_serve_parser(subparsers: Any, parts: Any) -> argparse.ArgumentParser:
    """Add ``serve`` to the ``react-agent`` subcommands: the flags of ``run`` (model, tools, agent) plus the
    server's. ``parts``: the pieces of ``run`` it shares (``work_flags``, ``agent_flags``, ``load_tools``,
    ``open_mcp_tools``, ``tools_for``, ``demo_db``, ``Setup``, ``build_agent``), handed over by the command's parser."""
    serve = subparsers.add_parser("serve", help="serve an agent over HTTP with a live web page", description=(
        "Serve the agent of the model and tool flags (as `run`) over HTTP: the run API, the page at / and an "
        "OpenAI-compatible /v1/chat/completions. Every run is journaled in --journal-dir; a server started again "
        "after a crash resumes the unfinished runs."))
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1; any other "
                       "needs --token-env)")
    serve.add_argument("--port", type=_port, default=8000, help="default: 8000")
    serve.add_argument("--journal-dir", default="react-agent-runs", metavar="DIR",
                       help="one journal per run (default: ./react-agent-runs)")
    serve.add_argument("--max-concurrency", type=_positive, default=4, metavar="N", help="runs at a time (default: 4)")
    serve.add_argument("--max-queue", type=_positive, default=1000, metavar="N",
                       help="runs that may wait for a free slot before requests get 503 (default: 1000)")
    serve.add_argument("--token-env", metavar="VAR", help="environment variable holding the bearer token every "
                       "request must carry")
    serve.add_argument("--approval-timeout", type=_seconds, default=300.0, metavar="S",
                       help="seconds a tool waits for a person's approval before it is refused (default: 300)")
    serve.add_argument("--no-chat-api", action="store_true", help="leave out /v1/chat/completions")
    parts.work_flags(serve)
    parts.agent_flags(serve)
    serve.set_defaults(func=cmd_serve, parts=parts)
    return serve  # type: ignore[no-any-return]


def add_view_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``view`` to the ``react-agent`` subcommands."""
    view = subparsers.add_parser("view", help="draw a journal, trace, batch results file or eval folder as HTML",
                                 description="Write one self-contained HTML file (no network; open it from disk) "
                                 "with the steps, per-task status, durations, tokens, failed checks and the "
                                 "evaluation chart of FILE: a run journal, a --trace file, a batch results file, "
                                 "the --out-dir folder of `react-agent eval`, or a folder of journals (the "
                                 "--journal-dir of `react-agent serve` or of a batch).")
    view.add_argument("source", metavar="FILE",
                      help="journal, trace or results .jsonl, an eval folder or a folder of journals")
    view.add_argument("-o", "--out", metavar="OUT.html", help="default: FILE.html (a folder: FOLDER/index.html)")
    view.add_argument("--open", action="store_true", help="open the page in the web browser")
    view.add_argument("--lang", choices=("en", "ru"), default="en", help="labels of the page (default: en)")
    view.add_argument("--debug", action="store_true", help="show debug logs and tracebacks")
    view.set_defaults(func=cmd_view)
    return view  # type: ignore[no-any-return]


def _error(message: str) -> Exception:
    """A usage error of the command, reported by ``react-agent`` as one line (exit status 2)."""
    return CliError(message, EXIT_USAGE)


def _model(args: argparse.Namespace) -> Any:
    """The chat model of ``--model``: ``scripted:FILE`` (a JSON list of replies, played in order across all
    runs) or whatever ``run`` accepts."""
    spec = str(args.model)
    if not spec.startswith("scripted:"):
        return build_model(args)
    from react_agent.testing import ScriptedChatModel

    path = spec.removeprefix("scripted:")
    try:
        replies = json.loads(Path(path).expanduser().read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise _error(f"--model scripted: cannot read {path!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise _error(f"--model scripted: {path!r} is not JSON: {exc}") from None
    if not isinstance(replies, list):
        raise _error(f"--model scripted: {path!r} must hold a JSON list of replies")
    return ScriptedChatModel([r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in replies])


def _token(args: argparse.Namespace, console: Any) -> str | None:
    if not args.token_env:
        return None
    value = os.environ.get(args.token_env, "").strip()
    if not value:
        raise _error(f"--token-env {args.token_env}: the environment variable is not set or empty")
    console.add_secrets([value])
    return value


def cmd_serve(args: argparse.Namespace, console: Any) -> int:
    """``react-agent serve [--host H --port P] [model and tool flags]``"""
    from react_agent.serve import check_binding, serve  # needs the serve extra (FastAPI, uvicorn)

    parts = args.parts
    if args.trace:
        raise _error("--trace is for run and chat; serve journals every run in --journal-dir "
                     "(draw one with `react-agent view`)")
    token = _token(args, console)
    try:
        check_binding(args.host, token)
    except ConfigError as exc:
        raise _error(str(exc)) from None
    args.lang = args.lang or "en"
    with ExitStack() as stack:
        llm = _model(args)
        if args.tools or args.mcp:
            if args.db is not None or args.root is not None:
                raise _error("--db and --root configure the demo tools, which --tools/--mcp replace; leave them out")
            tools = [tool for spec in args.tools or [] for tool in parts.load_tools(spec)]
            tools.extend(parts.open_mcp_tools(args.mcp or [], stack))
        else:
            tools = parts.tools_for(args, parts.Setup(llm, None, parts.demo_db(args, stack)), args.lang)
        agent = parts.build_agent(args, llm, tools, console)
        console.line(f"serving {agent.name} on http://{args.host}:{args.port}/ (journals: {args.journal_dir})",
                     "bold")
        try:
            serve(agent, host=args.host, port=args.port, journal_dir=args.journal_dir,
                  max_concurrency=args.max_concurrency, max_queue=args.max_queue, token=token,
                  approval="agent" if args.yes else "page", approval_timeout=args.approval_timeout,
                  lang=args.lang, chat_api=not args.no_chat_api)
        except ConfigError as exc:
            raise _error(str(exc)) from None
    return 0


def cmd_view(args: argparse.Namespace, console: Any) -> int:
    """``react-agent view FILE [-o OUT.html] [--open]``"""
    try:
        target = write_view(args.source, args.out, lang=args.lang)
    except ConfigError as exc:
        raise _error(str(exc)) from None
    except OSError as exc:
        raise _error(f"cannot write the page: {exc}") from None
    console.answer(str(target))
    if args.open:
        webbrowser.open(target.resolve().as_uri())
    return 0
