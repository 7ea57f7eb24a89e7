"""The ``react-agent`` command: run a task, resume a journaled run, chat, or run the demo (register a user,
then find him), and watch every step live. ``batch`` and ``eval`` come from :mod:`react_agent.batch`.

The live trace (steps, spinner, status lines) goes to stderr; final answers and the demo summary go to
stdout. This is the one module of the package that writes to the terminal. docs/cli.md documents it.
"""

from __future__ import annotations

import argparse
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
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from react_agent import (
    FINISH,
    AgentResult,
    AgentStep,
    BaseAgent,
    ConfigError,
    JournalError,
    JournalMismatchError,
    ReactAgent,
    ReflectionAgent,
    Usage,
    __version__,
    read_journal,
)
from react_agent._prompts import task_language
from react_agent.cli._batch import add_batch_commands, positive_int, positive_seconds
from react_agent.cli._flags import add_model_and_tool_flags, agent_options, load_tools, mcp_server, open_mcp_tools
from react_agent.cli._models import (
    EXIT_CREDENTIALS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_FINISHED,
    EXIT_OK,
    EXIT_SETUP,
    EXIT_TOOLS,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CliError,
    build_model,
)
from react_agent.cli._serve import add_serve_parser, add_view_parser
from react_agent.cli._setup import add_setup_parser
from react_agent.decompose import split_task
from react_agent.demo import DEMO_EXAMPLES, SEED_TASKS, UserDB, make_demo_tools
from react_agent.runtime import explain_model_error

__all__ = ["CliError", "build_model", "load_tools", "main", "mcp_server", "open_mcp_tools"]

_SECRET_NAME = re.compile(r"(CREDENTIALS|TOKEN|PASSWORD|SECRET|API_KEY)$", re.IGNORECASE)
_STYLES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}
_AGENT_NAMES = {"ReactAgent": "react", "ReflectionAgent": "reflection", "PlanAndExecuteAgent": "plan"}
_CHAT_EXIT = ("/exit", "/quit")


class Console(logging.Handler):
    """Answers go to stdout, the live trace and logs to stderr; secrets from the environment are masked."""

    def __init__(self, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self.debug = level <= logging.DEBUG
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.out, self.err = sys.stdout, sys.stderr
        self.tty = self.err.isatty()
        self.color = self.tty and not os.environ.get("NO_COLOR")
        self.secrets: list[str] = []
        self.add_secrets(v for k, v in os.environ.items() if _SECRET_NAME.search(k))
        self._lock, self._spinning = threading.Lock(), False

    def add_secrets(self, values: Iterable[str]) -> None:
        """Mask these values (and their JSON-escaped forms) from now on; values under 6 characters are not."""
        found = [v for v in values if v and len(v) >= 6]
        self.secrets = sorted({*self.secrets, *found, *(json.dumps(v)[1:-1] for v in found)}, key=len, reverse=True)

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

    def prompt(self, text: str) -> None:
        """Write ``text`` on stderr without a newline (the prompt of ``chat``)."""
        with self._lock:
            self.err.write(self.redact(text))
            self.err.flush()

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


# ---------------------------------------------------------------------------------------------- the model
class _ModelErrors(BaseCallbackHandler):
    """Remembers the last exception a model call raised (the callbacks see the client's own exception)."""

    def __init__(self) -> None:
        self.error: BaseException | None = None

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> Any:
        self.error = error


def _setup_failure(result: AgentResult, errors: _ModelErrors) -> CliError | None:
    """A run that ended before any model call succeeded, because of the setup (unreachable server,
    refused key, unknown model name): the error to exit with, saying what to change."""
    exc = errors.error
    if result.status != "error" or result.llm_calls or exc is None:
        return None
    explained = explain_model_error(exc)
    if explained is None:
        return None
    if _unreachable(exc):
        return CliError(explained, EXIT_UNREACHABLE)
    return CliError(explained, EXIT_CREDENTIALS if _http_status(exc) in (401, 403) else EXIT_SETUP)


def _unreachable(exc: BaseException) -> bool:
    """The server did not answer at all (refused connection, unknown host), as opposed to a slow reply."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "APITimeoutError" in names or "ReadTimeout" in names:
        return False
    return isinstance(exc, ConnectionError) or bool(names & {"APIConnectionError", "ConnectError", "ConnectTimeout"})


def _http_status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


# ---------------------------------------------------------------------------------------------- the agent
@dataclass(frozen=True)
class Setup:
    """What every command builds before its first run: the model and the user's tools (``None``: the
    demo tools, made per language, on the database ``demo_db``)."""

    llm: BaseLanguageModel[Any]
    user_tools: list[Any] | None
    demo_db: Path | None = None


def prepare(args: argparse.Namespace, console: Console, stack: ExitStack) -> Setup:
    """Build the model, import ``--tools`` and start ``--mcp`` servers (stopped by ``stack``)."""
    llm = build_model(args)
    if not (args.tools or args.mcp):
        return Setup(llm, None, demo_db(args, stack))
    if args.db is not None or args.root is not None:
        raise CliError("--db and --root configure the demo tools, which --tools/--mcp replace; leave them out",
                       EXIT_USAGE)
    tools = [tool for spec in args.tools or [] for tool in load_tools(spec)]
    tools.extend(open_mcp_tools(args.mcp or [], stack))
    return Setup(llm, tools)


def demo_db(args: argparse.Namespace, stack: ExitStack) -> Path:
    """The database of the demo tools: ``--db``, else a fresh one in a temporary folder that ``stack``
    removes (so a run never sees the users of an earlier run)."""
    if args.db:
        return Path(args.db).expanduser()
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="react-agent-demo-", ignore_cleanup_errors=True))
    return Path(folder) / "demo.db"


def tools_for(args: argparse.Namespace, setup: Setup, lang: str) -> list[Any]:
    """The user's tools, or the demo tools in ``lang`` (on ``setup.demo_db``, ``--root``)."""
    if setup.user_tools is not None:
        return setup.user_tools
    if setup.demo_db is None:
        raise CliError("the demo tools need a database: give --db FILE", EXIT_USAGE)
    db = setup.demo_db
    if args.db is not None and not db.parent.is_dir():
        raise CliError(f"--db: the folder {str(db.parent)!r} does not exist", EXIT_USAGE)
    try:
        return make_demo_tools(db_path=db, root=args.root or ".", lang=lang)  # type: ignore[arg-type]
    except ConfigError as exc:
        raise CliError(f"--root: {exc}", EXIT_USAGE) from exc
    except (sqlite3.Error, OSError) as exc:
        raise CliError(f"--db: cannot use {str(db)!r}: {exc}", EXIT_USAGE) from exc


def build_agent(args: argparse.Namespace, llm: BaseLanguageModel[Any], tools: list[Any],
                console: Console) -> BaseAgent:
    """The agent of ``--agent`` with the options of the flags; a tool the agent refuses is a
    :class:`CliError` (:data:`EXIT_TOOLS` for the user's tools)."""
    options: dict[str, Any] = {"prompts": args.lang, "approve": _approver(args, console)}
    if _is_local(args):  # the compact prompt; the demo's examples, or examples generated from the tools' schemas
        examples = _demo_examples(args.lang, tools)
        options["prompts"] = f"{args.lang}-compact"  # what LocalChatModel's profile gives the Python API too
        if {a for e in examples for a in (e.answer.action, *(s.action for s in e.steps if s.action))} - {FINISH}:
            options["examples"] = examples  # the demo's own tools; other tools: the profile generates them
    if getattr(args, "examples", None) == "demo":
        options["examples"] = _demo_examples(args.lang, tools)
    options.update(agent_options(args))
    for flag, option in (("max_iterations", "max_iterations"), ("timeout", "max_execution_time"),
                         ("tool_timeout", "timeout")):
        if getattr(args, flag, None) is not None:
            options[option] = getattr(args, flag)
    if _is_local(args) and args.agent == "plan":
        console.line("note: --agent plan needs a model that writes a whole plan; a small local model often fails "
                     "at it. Use --agent react, or a larger --model.", "yellow")
    if args.agent == "plan":
        from react_agent.plan import PlanAndExecuteAgent

        cls: type[BaseAgent] = PlanAndExecuteAgent
    else:
        cls = ReflectionAgent if args.agent == "reflection" else ReactAgent
    try:
        return cls(llm, tools, **options)
    except ConfigError as exc:
        if getattr(args, "tools", None) or getattr(args, "mcp", None):
            raise CliError(f"the agent refuses the tools: {exc}", EXIT_TOOLS) from None
        raise CliError(f"the agent cannot be built: {exc}") from None


def _demo_examples(lang: str, tools: list[Any]) -> list[Any]:
    """The demo's worked examples in ``lang`` that use only ``tools``."""
    names = {FINISH, *(getattr(t, "name", getattr(t, "__name__", "")) for t in tools)}
    return [e for e in DEMO_EXAMPLES[lang] if {e.answer.action, *(s.action for s in e.steps if s.action)} <= names]


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


def detect_lang(args: argparse.Namespace, text: str) -> str:
    """``--lang``, else ``ru`` when ``text`` has Cyrillic letters, else ``en``."""
    return str(args.lang or task_language(text))


# ---------------------------------------------------------------------------------------------- showing runs
def show_step(console: Console, index: int, step: AgentStep, *, replayed: bool = False) -> None:
    usage = step.usage
    tokens = f", {usage.input_tokens}+{usage.output_tokens} tokens" if usage.total_tokens else ""
    tokens += f", {usage.cached_input_tokens} reused" if usage.cached_input_tokens else ""
    console.line(f"Step {index}" + (" (replayed from the journal)" if replayed else f" ({step.duration_s:.1f}s"
                                                                                       f"{tokens})"), "bold")
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


def run_task(console: Console, stream: Iterator[AgentStep | AgentResult], task: str, trace: Trace, run: int,
             *, replayed: int = 0) -> tuple[AgentResult, float]:
    """Show each step of ``stream`` live (the first ``replayed`` ones as replayed from a journal), then a
    status line; trace its steps and result. Returns the result and the seconds it took."""
    started, count, result = time.monotonic(), 0, None
    while result is None:
        with console.spinner("thinking"):
            item = next(stream)
        if isinstance(item, AgentResult):
            result = item
            break
        count += 1  # a step is streamed with its reflection (if any) already attached
        show_step(console, count, item, replayed=count <= replayed)
        record = {"type": "step", "run": run, "step": count, **item.model_dump(mode="json"),
                  "duration_s": round(item.duration_s, 3), "usage": _usage(item)}
        if replayed:
            record["replayed"] = count <= replayed
        trace.write(record)
    seconds = time.monotonic() - started
    trace.write({"type": "result", "run": run, "task": task, "status": result.status, "output": result.output,
                 "steps": len(result.steps), "llm_calls": result.llm_calls, "usage": _usage(result),
                 "error": result.error, "violations": getattr(result, "violations", []),
                 "duration_s": round(seconds, 3)})
    style = "green" if result.status == "finished" else "red"
    again = f" ({min(replayed, count)} replayed)" if replayed else ""
    console.line(f"{result.status}: {len(result.steps)} steps{again}, {result.llm_calls} model calls, "
                 f"{result.usage.total_tokens} tokens, {seconds:.1f}s", style)
    if result.error:
        console.line(f"  {result.error if console.debug else result.error.splitlines()[0]}", "red")
    return result, seconds


def _usage(item: AgentStep | AgentResult) -> dict[str, int]:
    return {**item.usage.model_dump(), "total_tokens": item.usage.total_tokens}


def _finish(console: Console, result: AgentResult) -> int:
    """Print the answer (stdout) of a finished run; the exit status of ``run`` and ``resume``."""
    if result.status == "finished":
        console.answer(result.output)
        return EXIT_OK
    if result.output:
        console.line(f"No final answer. Last output: {result.output}")
    return EXIT_NOT_FINISHED


def _explained(console: Console, result: AgentResult, errors: _ModelErrors) -> None:
    """Raise the setup failure of a run whose first model call failed; else add the explanation of a model
    error (if there is one) below the status line."""
    failure = _setup_failure(result, errors)
    if failure is not None:
        raise failure
    if result.status == "error" and errors.error is not None:
        explained = explain_model_error(errors.error)
        if explained:
            console.line(f"  {explained}", "red")


def _journal_path(text: str) -> Path:
    path = Path(text).expanduser()
    if path.is_dir():
        raise CliError(f"--journal {text}: it is a folder; give the path of a .jsonl file", EXIT_USAGE)
    if not path.parent.is_dir():
        raise CliError(f"--journal {text}: the folder {str(path.parent)!r} does not exist", EXIT_USAGE)
    try:  # appended to by the run; a file made only to check that it can be is removed again
        try:
            with open(path, "x", encoding="utf-8"):
                pass
        except FileExistsError:
            with open(path, "a", encoding="utf-8"):
                pass
        else:
            path.unlink()
    except OSError as exc:
        raise CliError(f"--journal {text}: cannot write it: {exc.strerror}", EXIT_USAGE) from None
    return path


# ---------------------------------------------------------------------------------------------- commands
def cmd_run(args: argparse.Namespace, console: Console) -> int:
    task = args.task.strip()
    if not task:
        raise CliError("the task must not be empty", EXIT_USAGE)
    args.lang = detect_lang(args, task)
    journal = _journal_path(args.journal) if args.journal else None
    with ExitStack() as stack:
        setup = prepare(args, console, stack)
        agent = build_agent(args, setup.llm, tools_for(args, setup, args.lang), console)
        trace = stack.enter_context(_closing(Trace(args.trace, console)))
        errors, run_id = _ModelErrors(), uuid.uuid4()
        config: RunnableConfig = {"callbacks": [errors], "run_id": run_id}
        if journal is not None:
            console.line(f"journal: {journal}, run {run_id} (after a crash: react-agent resume {journal} "
                         f"--run-id {run_id})", "dim")
        result, _ = run_task(console, agent.stream(task, config, journal=journal), task, trace, 1)
        _explained(console, result, errors)
        return _finish(console, result)


def cmd_resume(args: argparse.Namespace, console: Console) -> int:
    path = Path(args.journal_file).expanduser()
    if not path.is_file():
        raise CliError(f"journal file not found: {args.journal_file}", EXIT_USAGE)
    header, replayed = _journaled_run(path, args.run_id)
    identity = header.get("identity") or {}
    if args.agent is None:  # default to what the journal says the run was made with
        args.agent = _AGENT_NAMES.get(str(identity.get("agent", header.get("agent"))), "react")
    if args.max_iterations is None and isinstance(identity.get("max_iterations"), int):
        args.max_iterations = identity["max_iterations"]
    task = str(header.get("task", ""))
    args.lang = detect_lang(args, task)
    with ExitStack() as stack:
        setup = prepare(args, console, stack)
        agent = build_agent(args, setup.llm, tools_for(args, setup, args.lang), console)
        trace = stack.enter_context(_closing(Trace(args.trace, console)))
        errors = _ModelErrors()
        try:
            stream = agent.resume_stream(path, run_id=str(header["run"]), config={"callbacks": [errors]})
            console.line(f"resuming run {header['run']} of {path}: {task}", "bold")
            result, _ = run_task(console, stream, task, trace, 1, replayed=replayed)
        except JournalMismatchError as exc:
            raise CliError(f"{exc} (resume with the same --agent, --lang, --tools/--mcp, --model and "
                           "--max-iterations as the run)", EXIT_USAGE) from None
        except JournalError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        _explained(console, result, errors)
        return _finish(console, result)


def _journaled_run(path: Path, run_id: str | None) -> tuple[dict[str, Any], int]:
    """The ``run`` record of the run to resume (the last one, or ``run_id``) and how many steps it has."""
    try:
        records = read_journal(path)
    except JournalError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    runs = [r for r in records if r.get("type") == "run" and (run_id is None or r.get("run") == run_id)]
    if not runs:
        known = sorted({str(r.get("run")) for r in records if r.get("type") == "run"})
        which = "no run" if run_id is None else f"no run {run_id!r}"
        hint = f"; its runs: {', '.join(known)}" if known else ""
        raise CliError(f"journal {path} holds {which} to resume{hint}", EXIT_USAGE)
    header = runs[-1]
    steps = sum(1 for r in records if r.get("type") == "step" and r.get("run") == header.get("run"))
    return header, steps


def cmd_chat(args: argparse.Namespace, console: Console) -> int:
    journal = _journal_path(args.journal) if args.journal else None
    with ExitStack() as stack:
        setup = prepare(args, console, stack)
        trace = stack.enter_context(_closing(Trace(args.trace, console)))
        lang = args.lang or "en"  # until the first message says otherwise; built now so mistakes show at once
        agent = build_agent(_with_lang(args, lang), setup.llm, tools_for(args, setup, lang), console)
        interactive = sys.stdin.isatty()
        turns: list[tuple[str, str]] = []
        reached = False  # the model has answered once: later failures are not setup mistakes
        if interactive:
            console.line("react-agent chat: type a message; /reset forgets the conversation, /exit ends it", "dim")
        if _is_local(args):
            console.line("note: a small local model is weak at following a conversation: it may answer from an "
                         "earlier turn; /reset forgets it. A larger --model does better.", "yellow")
        asked = 0
        while True:
            try:
                text = _read_message(console, interactive)
            except KeyboardInterrupt:  # Ctrl-C at the prompt: the user ends the session
                console.line()
                break
            if text is None or text in _CHAT_EXIT:
                break
            if text == "/reset":
                turns.clear()
                console.line("(conversation forgotten)", "dim")
            if not text or text == "/reset":
                continue
            if not asked and detect_lang(args, text) != lang:  # a first message in Russian: Russian prompts
                lang = detect_lang(args, text)
                agent = build_agent(_with_lang(args, lang), setup.llm, tools_for(args, setup, lang), console)
            asked += 1
            result = _chat_turn(console, agent, text, turns, trace, asked, journal, reached=reached)
            if result is None:
                continue
            reached = reached or result.llm_calls > 0
            console.answer(result.output if result.status == "finished" else f"(no answer: {result.status})")
            if result.status == "finished":
                turns.append((text, result.output))
    return EXIT_OK


def _chat_turn(console: Console, agent: BaseAgent, text: str, turns: Sequence[tuple[str, str]], trace: Trace,
               number: int, journal: Path | None, *, reached: bool) -> AgentResult | None:
    """One message of ``chat``, with the conversation so far; ``None`` when Ctrl-C dropped it. A setup
    failure before the model has ever answered ends the session (:class:`CliError`)."""
    errors = _ModelErrors()
    try:
        stream = agent.stream(text, {"callbacks": [errors], "run_id": uuid.uuid4()}, journal=journal,
                              chat_history=history_messages(turns))
        result, _ = run_task(console, stream, text, trace, number)
    except KeyboardInterrupt:
        console.line()
        console.line("(interrupted; the message is dropped)", "red")
        return None
    failure = _setup_failure(result, errors)
    if failure is not None and not reached:
        raise failure  # the model cannot be reached or refuses the key: stop, as `run` does
    if failure is not None:
        console.line(f"  {failure}", "red")
    return result


def _with_lang(args: argparse.Namespace, lang: str) -> argparse.Namespace:
    return argparse.Namespace(**{**vars(args), "lang": lang})


def _read_message(console: Console, interactive: bool) -> str | None:
    """The next line of stdin, stripped (``None`` at the end of input); a ``> `` prompt on a terminal."""
    if interactive:
        console.prompt("> ")
    line = sys.stdin.readline()
    return None if line == "" else line.strip()


def history_messages(turns: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """The conversation so far as messages: each (user, assistant) turn as a human and an AI message."""
    return [message for user, assistant in turns for message in (HumanMessage(user), AIMessage(assistant))]


@contextmanager
def _closing(trace: Trace) -> Iterator[Trace]:
    try:
        yield trace
    finally:
        trace.close()


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    llm, tasks, rows = build_model(args), SEED_TASKS[args.lang], []
    trace = Trace(args.trace, console)
    with tempfile.TemporaryDirectory(prefix="react-agent-demo-") as tmp:
        db_path = Path(tmp) / "demo.db"
        agent = build_agent(args, llm, make_demo_tools(db_path=db_path, lang=args.lang), console)
        try:
            for run, task in enumerate(tasks, 1):
                console.line(f"Task {run}/{len(tasks)}: {task}", "bold")
                # a small local model does one tool per task: a compound task runs as its parts, in turn
                parts = split_task(task, lang=args.lang) if _is_local(args) else [task]
                done = []
                for part in parts:
                    if len(parts) > 1:
                        console.line(f"Part: {part}", "bold")
                    done.append(run_task(console, agent.stream(part), part, trace, run))
                result, seconds = _combined([r for r, _ in done]), sum(s for _, s in done)
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


def _is_local(args: argparse.Namespace) -> bool:
    return str(args.model).partition(":")[0].lower() == "local"


def _combined(results: list[AgentResult]) -> AgentResult:
    """The results of a task's parts as one: finished when every part finished, the answers joined."""
    if len(results) == 1:
        return results[0]
    usage = sum((r.usage for r in results), Usage())
    status = next((r.status for r in results if r.status != "finished"), "finished")
    return AgentResult(output=" ".join(r.output for r in results), status=status,
                       steps=[s for r in results for s in r.steps], llm_calls=sum(r.llm_calls for r in results),
                       usage=usage, error=next((r.error for r in results if r.error), None))


# ---------------------------------------------------------------------------------------------- the parser
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line instead of the usage block
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _model_flags(sub: argparse.ArgumentParser) -> None:
    add_model_and_tool_flags(sub, tools=False)


def _agent_flags(sub: argparse.ArgumentParser, *, agent_default: str | None = "react") -> None:
    sub.add_argument("--agent", choices=("react", "reflection", "plan"), default=agent_default,
                     help="default: react" if agent_default else "default: the journaled run's agent")
    sub.add_argument("--max-iterations", type=positive_int, metavar="N", help="model decisions per task (default: 5)")
    sub.add_argument("--trace", metavar="FILE.jsonl", help="write one JSON object per step and per result")
    sub.add_argument("--yes", action="store_true", help="approve every tool that asks for approval")
    sub.add_argument("--debug", action="store_true", help="show debug logs and tracebacks")


def _work_flags(sub: argparse.ArgumentParser) -> None:
    """The flags of run, resume and chat: tools, limits, language."""
    sub.add_argument("--lang", choices=("ru", "en"), help="language of prompts and demo tools (default: ru if the "
                     "task has Cyrillic letters, else en)")
    sub.add_argument("--timeout", type=positive_seconds, metavar="S", help="seconds a run may take (status timeout)")
    sub.add_argument("--tool-timeout", type=positive_seconds, metavar="S", help="seconds one tool call may take")
    sub.add_argument("--db", metavar="FILE", help="SQLite file of the demo user tools, kept between runs "
                     "(default: a fresh temporary database per command, removed at its end)")
    sub.add_argument("--root", metavar="DIR", help="the demo read_file reads only under DIR (default: .)")
    add_model_and_tool_flags(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="react-agent", description="Run text-protocol LLM agents from the terminal.")
    parser.add_argument("--version", action="version", version=f"react-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True,
                                     metavar="{run,resume,chat,demo,batch,eval,serve,view,setup-local}")
    run = commands.add_parser("run", help="solve one task", description="Solve TASK with your tools (--tools, --mcp) "
                              "or the demo tools, showing each step live on stderr; the answer goes to stdout.")
    run.add_argument("task", help="the task, in quotes")
    run.add_argument("--journal", metavar="FILE.jsonl", help="journal every effect so `react-agent resume` can "
                     "finish the run after a crash")
    _work_flags(run)
    _agent_flags(run)
    resume = commands.add_parser("resume", help="finish a journaled run after a crash", description=(
        "Continue the run journaled in FILE (its last run, or --run-id): completed model calls and tool calls are "
        "replayed from the journal, not made again; then the run goes on live. Give the same tool and model flags "
        "as the run."))
    resume.add_argument("journal_file", metavar="FILE.jsonl", help="the --journal file of the run")
    resume.add_argument("--run-id", metavar="ID", help="the run to resume (default: the last run in the file)")
    _work_flags(resume)
    _agent_flags(resume, agent_default=None)
    chat = commands.add_parser("chat", help="talk with an agent, message by message", description=(
        "An interactive session: each line of stdin is a message, answered by the agent with the live step trace "
        "on stderr and the answer on stdout. Ends at end of input, /exit or /quit; /reset forgets the conversation."))
    chat.add_argument("--journal", metavar="FILE.jsonl", help="journal every turn's run")
    _work_flags(chat)
    _agent_flags(chat)
    demo = commands.add_parser("demo", help="run the demo tasks on a fresh temporary database",
                               description="Run the demo tasks (register Ivan, then find him) on a "
                               "fresh temporary database, then print a summary.")
    demo.add_argument("--lang", choices=("ru", "en"), default="en", help="default: en")
    _model_flags(demo)
    _agent_flags(demo)
    add_batch_commands(commands)
    add_serve_parser(commands, SimpleNamespace(
        work_flags=_work_flags, agent_flags=_agent_flags, load_tools=load_tools, open_mcp_tools=open_mcp_tools,
        tools_for=tools_for, demo_db=demo_db, Setup=Setup, build_agent=build_agent))
    add_view_parser(commands)
    add_setup_parser(commands)
    run.set_defaults(func=cmd_run)
    resume.set_defaults(func=cmd_resume)
    chat.set_defaults(func=cmd_chat)
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``react-agent``; returns the exit status (docs/cli.md lists them)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse already reported
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    console = Console(logging.DEBUG if args.debug else logging.WARNING)
    if getattr(args, "api_key_env", None):
        console.add_secrets([os.environ.get(args.api_key_env, "")])
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

