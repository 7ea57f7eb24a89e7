"""The ``react-agent batch`` and ``react-agent eval`` commands (wired into react_agent.cli's parser).

Progress goes to stderr (a live bar on a terminal, one plain line per task otherwise); the summary table
and the evaluation table go to stdout. docs/batch.md documents both commands.
"""

from __future__ import annotations

import argparse
import json
import re
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from react_agent.batch import (
    SUITES,
    BatchSummary,
    TaskError,
    TaskResult,
    format_scores,
    iter_tasks,
    plot_scores,
    read_results,
    run_batch,
    score_results,
    suite_path,
)
from react_agent.cli._models import (
    EXIT_NOT_FINISHED,
    EXIT_OK,
    EXIT_SETUP,
    EXIT_USAGE,
    CliError,
    build_model,
    scripted_replies,
)
from react_agent.core import BaseAgent
from react_agent.errors import ConfigError

__all__ = ["AgentSpec", "add_batch_commands", "cmd_batch", "cmd_eval", "make_model"]

AGENTS = ("react", "reflection", "plan")


def _cli_error(message: str, code: int = EXIT_SETUP) -> Exception:
    return CliError(message, code)


# ---------------------------------------------------------------------------------------------- the agent
def _provider_models() -> Any:
    """``react_agent.models.make_model`` (``provider:name`` specs), or ``None`` in a version without it."""
    try:
        from react_agent import models
    except ImportError:
        return None
    return getattr(models, "make_model", None)


def check_model(spec: str) -> None:
    """Refuse an unknown ``--model`` before anything runs."""
    if spec in ("local", "gigachat"):
        return
    if spec.startswith("scripted:"):
        scripted_replies(spec.removeprefix("scripted:"))
        return
    if ":" in spec and _provider_models() is not None:
        return
    raise _cli_error(f"--model must be local, gigachat, scripted:FILE or provider:name, got {spec!r}", EXIT_USAGE)


def make_model(spec: str, model_path: str | None = None, *, base_url: str | None = None,
               api_key_env: str | None = None, options: tuple[str, ...] = ()) -> Any:
    """The chat model of ``--model``: ``local``, ``gigachat``, ``scripted:FILE`` (a JSON list of replies,
    played in order by one :class:`~react_agent.testing.ScriptedChatModel` per worker) or ``provider:name``
    (``react_agent.models.make_model``), with ``--base-url``, ``--api-key-env`` and ``-o`` (``options``)."""
    check_model(spec)
    return build_model(SimpleNamespace(model=spec, model_path=model_path, base_url=base_url,  # type: ignore[arg-type]
                                       api_key_env=api_key_env, model_option=list(options)))


@dataclass(frozen=True)
class AgentSpec:
    """A picklable agent factory (sent to Ray workers): the agent class, model, language and demo tools."""

    agent: str = "react"
    model: str = "local"
    lang: str = "en"
    db: str = "demo.db"
    root: str | None = None
    model_path: str | None = None
    max_iterations: int | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    model_options: tuple[str, ...] = ()
    """The ``-o KEY=VALUE`` texts."""
    tools: tuple[str, ...] = ()
    """The ``--tools MODULE[:NAME]`` specs (none, and no ``mcp``: the demo tools)."""
    mcp: tuple[Any, ...] = ()
    """The tools of the ``--mcp`` servers, opened by the command for the whole batch (local backend only)."""
    prompts: str | None = None
    constrained: str | None = None
    examples: str | None = None

    def __call__(self) -> BaseAgent:
        from react_agent import FINISH, PlanAndExecuteAgent, ReactAgent, ReflectionAgent
        from react_agent.cli._flags import agent_options, load_tools
        from react_agent.demo import DEMO_EXAMPLES, make_demo_tools

        tools: list[Any] = [*(t for spec in self.tools for t in load_tools(spec)), *self.mcp]
        if not tools:
            tools = make_demo_tools(db_path=self.db, root=self.root, lang=self.lang)  # type: ignore[arg-type]
        names = {FINISH, *(getattr(t, "name", getattr(t, "__name__", "")) for t in tools)}
        demo = [e for e in DEMO_EXAMPLES[self.lang]
                if {e.answer.action, *(s.action for s in e.steps if s.action)} <= names]
        options: dict[str, Any] = {"prompts": self.lang}
        if self.model == "local":  # a small model needs the compact prompts and worked examples (as `run`)
            options.update(prompts=f"{self.lang}-compact", examples=demo)
        if self.examples == "demo":
            options["examples"] = demo
        options.update(agent_options(SimpleNamespace(prompts=self.prompts, constrained=self.constrained,
                                                     examples=self.examples)))  # type: ignore[arg-type]
        if self.max_iterations is not None:
            options["max_iterations"] = self.max_iterations
        cls = {"react": ReactAgent, "reflection": ReflectionAgent, "plan": PlanAndExecuteAgent}[self.agent]
        llm = make_model(self.model, self.model_path, base_url=self.base_url, api_key_env=self.api_key_env,
                         options=self.model_options)
        agent: BaseAgent = cls(llm, tools, **options)
        return agent


def _spec_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The AgentSpec fields of the shared model and tool flags."""
    from react_agent.cli._flags import agent_options, load_tools
    from react_agent.cli._models import model_options

    model_options(args)  # a malformed -o is refused before any task runs
    agent_options(args)  # so is an unreadable --examples file
    for spec in args.tools or []:
        load_tools(spec)  # and a --tools spec that does not import
    return {"base_url": args.base_url, "api_key_env": args.api_key_env,
            "model_options": tuple(args.model_option or ()), "tools": tuple(args.tools or ()),
            "prompts": args.prompts, "constrained": args.constrained, "examples": args.examples}


# ---------------------------------------------------------------------------------------------- progress
def _mcp_tools(args: argparse.Namespace, stack: ExitStack) -> tuple[Any, ...]:
    """The tools of ``--mcp``, its servers started for the batch (``stack`` stops them)."""
    from react_agent.cli._flags import open_mcp_tools

    if not args.mcp:
        return ()
    if args.backend == "ray":
        raise _cli_error("--mcp needs --backend local: the MCP sessions live in this process and cannot be sent to "
                         "Ray workers. Run with --backend local, or give the workers your tools with --tools "
                         "MODULE[:NAME] (imported in each worker)", EXIT_USAGE)
    return tuple(open_mcp_tools(args.mcp, stack))


def _result_line(summary: BatchSummary, result: TaskResult) -> str:
    total = f"/{summary.total}" if summary.total is not None else ""
    status = result.status if result.passed is not False or result.status != "finished" else "check failed"
    text = (f"[{summary.done}{total}] {result.id}: {status}, {result.llm_calls} model calls, "
            f"{result.total_tokens} tokens, {result.seconds:.1f}s")
    if result.error:
        text += f" - {result.error.splitlines()[0][:200]}"
    return text


def _run_with_progress(batch: Any, console: Any, label: str) -> BatchSummary:
    """Iterate the batch, showing progress: a rich live bar on a terminal, else one line per task."""
    summary: BatchSummary = batch.summary
    if not console.tty:
        for result in batch:
            console.line(_result_line(summary, result))
        return summary
    from rich.console import Console as RichConsole
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("[red]failed {task.fields[failed]}"), TextColumn("running {task.fields[running]}"),
                        TextColumn("{task.fields[tokens]} tokens"), TimeElapsedColumn(), TextColumn("ETA"),
                        TimeRemainingColumn(), console=RichConsole(file=console.err), refresh_per_second=4)
    with progress:
        bar = progress.add_task(label, total=summary.total, failed=0, running=0, tokens=0)
        for result in batch:
            progress.update(bar, completed=summary.done, failed=summary.failed, running=summary.running,
                            tokens=summary.total_tokens)
            if not result.ok:
                progress.console.print(_result_line(summary, result), style="red", markup=False, highlight=False)
        progress.update(bar, completed=summary.done, running=0, tokens=summary.total_tokens)
    return summary


def format_summary(summary: BatchSummary, out: str) -> str:
    """The end-of-batch table."""
    per_task = summary.done or 1
    failed = ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items()) if k != "finished")
    rows = [("results", out),
            ("tasks", f"{summary.done}" + (f" ({summary.previous} from an earlier run)" if summary.previous else "")),
            ("finished", str(summary.statuses.get("finished", 0))),
            ("failed", f"{summary.failed}" + (f" ({failed})" if failed else "")),
            ("model calls", f"{summary.llm_calls} ({summary.llm_calls / per_task:.2f} per task)"),
            ("tokens", f"{summary.total_tokens} (in {summary.input_tokens}, out {summary.output_tokens})"),
            ("time", f"{summary.elapsed:.1f} s wall, {summary.seconds / per_task:.2f} s per task")]
    if summary.checked:
        rows.insert(4, ("checks passed", f"{summary.passed}/{summary.checked}"))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


# ---------------------------------------------------------------------------------------------- commands
def _backend_options(args: argparse.Namespace) -> dict[str, Any]:
    if args.backend == "local":
        if args.ray_address or args.workers:
            raise _cli_error("--ray-address and --workers need --backend ray", EXIT_USAGE)
        return {}
    options: dict[str, Any] = {"ray_address": args.ray_address}
    if args.workers:
        options["workers"] = args.workers
    return options


def _lang_of(path: str, given: str | None) -> str:
    if given:
        return given
    try:
        first = next(iter_tasks(path), None)
    except TaskError:
        return "en"
    return "ru" if first is not None and re.search("[а-яё]", first.task, re.IGNORECASE) else "en"


def _db(args: argparse.Namespace, default: Path) -> str:
    db = Path(args.db).expanduser() if args.db else default
    if not db.parent.is_dir():
        raise _cli_error(f"--db: the folder {str(db.parent)!r} does not exist", EXIT_USAGE)
    return str(db)


def cmd_batch(args: argparse.Namespace, console: Any) -> int:
    """``react-agent batch TASKS.jsonl --out RESULTS.jsonl ...``"""
    if not Path(args.tasks).is_file():
        raise _cli_error(f"tasks file not found: {args.tasks}", EXIT_USAGE)
    check_model(args.model)
    out = Path(args.out)
    journal_dir = args.journal_dir or f"{out}.journal"
    flags, backend = _spec_flags(args), _backend_options(args)
    with ExitStack() as stack:
        spec = AgentSpec(agent=args.agent, model=args.model, lang=_lang_of(args.tasks, args.lang),
                         db=_db(args, Path(f"{out}.db")), root=args.root, model_path=args.model_path,
                         max_iterations=args.max_iterations, mcp=_mcp_tools(args, stack), **flags)
        batch = run_batch(spec, args.tasks, concurrency=args.concurrency, journal_dir=journal_dir, out=out,
                          backend=args.backend, task_timeout=args.task_timeout,
                          retry=("error", "timeout") if args.retry_failed else (), **backend)
        try:
            summary = _run_with_progress(batch, console, "batch")
        except ConfigError as exc:  # a bad task, or a results file another batch is writing
            raise _cli_error(str(exc), EXIT_USAGE) from None
    console.answer(format_summary(summary, str(out)))
    return EXIT_OK if summary.failed == 0 else EXIT_NOT_FINISHED


def parse_variant(text: str, default_lang: str) -> tuple[str, str, str]:
    """``AGENT[:LANG]`` -> (name, agent, lang)."""
    agent, _, lang = text.partition(":")
    lang = lang or default_lang
    if agent not in AGENTS or lang not in ("ru", "en"):
        raise _cli_error(f"--variant must be AGENT[:LANG] with AGENT one of {', '.join(AGENTS)} and LANG ru or en, "
                         f"got {text!r}", EXIT_USAGE)
    return f"{agent}-{lang}", agent, lang


def cmd_eval(args: argparse.Namespace, console: Any) -> int:
    """``react-agent eval SUITE.jsonl --variant react --variant reflection ...``"""
    if not Path(args.suite).is_file():
        if args.suite not in SUITES:
            raise _cli_error(f"suite file not found: {args.suite} (shipped suites: {', '.join(SUITES)})", EXIT_USAGE)
        args.suite = str(suite_path(args.suite))
    check_model(args.model)
    default_lang = _lang_of(args.suite, args.lang)
    variants = [parse_variant(v, default_lang) for v in (args.variant or ["react"])]
    if len({name for name, _, _ in variants}) != len(variants):
        raise _cli_error("--variant: the same variant is given twice", EXIT_USAGE)
    folder = Path(args.out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    scores, failed = [], 0
    flags, backend = _spec_flags(args), _backend_options(args)
    for name, agent, lang in variants:
        out = folder / f"{name}.jsonl"
        with ExitStack() as stack:  # each variant gets its own MCP servers, as its own database
            spec = AgentSpec(agent=agent, model=args.model, lang=lang, db=str(folder / f"{name}.db"), root=args.root,
                             model_path=args.model_path, max_iterations=args.max_iterations,
                             mcp=_mcp_tools(args, stack), **flags)
            batch = run_batch(spec, args.suite, concurrency=args.concurrency,
                              journal_dir=folder / f"{name}.journal", out=out, backend=args.backend,
                              task_timeout=args.task_timeout, **backend)
            try:
                _run_with_progress(batch, console, name)
            except TaskError as exc:
                raise _cli_error(str(exc), EXIT_USAGE) from None
        results = list(read_results(out))
        failed += sum(1 for r in results if r.status != "finished" or r.passed is False)
        scores.append(score_results(name, results))
    console.answer(format_scores(scores))
    if not args.no_plot:
        plot = plot_scores(scores, args.plot or folder / "eval.png")
        console.line(f"plot: {plot}" if plot else "no plot: matplotlib is not installed (pip install matplotlib)")
    (folder / "scores.json").write_text(json.dumps([s.model_dump() for s in scores], indent=2, ensure_ascii=False)
                                        + "\n", encoding="utf-8")
    if failed and not args.allow_failures:
        console.line(f"{failed} task run(s) did not finish or failed a check (exit status 1; --allow-failures: 0)")
        return EXIT_NOT_FINISHED
    return EXIT_OK


# ---------------------------------------------------------------------------------------------- the parser
def positive_int(text: str) -> int:
    """argparse type: a positive integer."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def positive_seconds(text: str) -> float:
    """argparse type: positive, finite seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be positive seconds, got {text!r}")
    return value


def _common(sub: argparse.ArgumentParser) -> None:
    from react_agent.cli._flags import add_model_and_tool_flags

    sub.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="tasks in flight (default: 8)")
    add_model_and_tool_flags(sub, tools=False)
    sub.add_argument("--tools", action="append", metavar="MODULE[:NAME]", help="your tools instead of the demo "
                     "tools: a list (or a function returning one) named NAME (default: tools) in a module or .py "
                     "file, imported in each worker; repeatable")
    sub.add_argument("--mcp", action="append", metavar="'COMMAND ARGS'", help="an MCP server instead of the demo "
                     "tools: a command to start (stdio; 'python' is the interpreter running react-agent) or an "
                     "http(s):// URL, started once for the batch and shared by its tasks (--backend local only); "
                     "repeatable")
    sub.add_argument("--lang", choices=("ru", "en"),
                     help="language of prompts and tools (default: ru if the first task has Cyrillic letters)")
    sub.add_argument("--max-iterations", type=positive_int, metavar="N", help="model decisions per task (default: 5)")
    sub.add_argument("--task-timeout", type=positive_seconds, metavar="S",
                     help="seconds a task may take (default: no limit)")
    sub.add_argument("--db", metavar="FILE", help="SQLite file of the user tools")
    sub.add_argument("--root", metavar="DIR", help="adds read_file, reading only under DIR")
    sub.add_argument("--backend", choices=("local", "ray"), default="local",
                     help="local: asyncio in this process (default); ray: Ray workers "
                          "(the extra react-agent[ray]: pip install '.[ray]' in a checkout)")
    sub.add_argument("--ray-address", metavar="ADDR", help="Ray cluster to join (default: start a local one)")
    sub.add_argument("--workers", type=positive_int, metavar="N", help="Ray workers (default: one per CPU)")
    sub.add_argument("--debug", action="store_true", help="show debug logs and tracebacks")


def add_batch_commands(subparsers: Any) -> None:
    """Add ``batch`` and ``eval`` to the ``react-agent`` subcommands (``subparsers`` of argparse)."""
    batch = subparsers.add_parser(
        "batch", help="run many tasks from a JSONL file, resumable", description=(
            "Run every task of TASKS.jsonl (one string or {id, task, session, checks} object per line) with the demo "
            "tools (or your --tools and --mcp servers), N at a time, appending one result per line to RESULTS.jsonl. "
            "Every task is journaled: run the same command again after a crash or Ctrl-C and only the unfinished "
            "work is done."))
    batch.add_argument("tasks", metavar="TASKS.jsonl")
    batch.add_argument("--out", required=True, metavar="RESULTS.jsonl", help="results file (appended)")
    batch.add_argument("--agent", choices=AGENTS, default="react", help="default: react")
    batch.add_argument("--journal-dir", metavar="DIR", help="one journal per task (default: RESULTS.jsonl.journal)")
    batch.add_argument("--retry-failed", action="store_true",
                       help="run again the tasks whose results have status error or timeout")
    _common(batch)
    batch.set_defaults(func=cmd_batch)
    evaluate = subparsers.add_parser(
        "eval", help="score agent variants on a suite of tasks with checks", description=(
            "Run SUITE.jsonl with each --variant and print a side-by-side table: success rate (finished and every "
            "check passed) with its 95% Wilson interval, model calls, tokens and seconds per task."))
    evaluate.add_argument("suite", metavar="SUITE.jsonl", help=f"a suite file, or a shipped suite: {', '.join(SUITES)}")
    evaluate.add_argument("--variant", action="append", metavar="AGENT[:LANG]",
                          help="react, reflection or plan, optionally :ru or :en; repeat to compare (default: react)")
    evaluate.add_argument("--out-dir", default="eval-results", metavar="DIR",
                          help="results, journals and plot per variant (default: eval-results)")
    evaluate.add_argument("--plot", metavar="FILE.png", help="where to draw the plot (default: DIR/eval.png)")
    evaluate.add_argument("--no-plot", action="store_true", help="do not draw the plot")
    evaluate.add_argument("--allow-failures", action="store_true", help="exit 0 even when a task does not finish "
                          "or fails a check (default: exit 1 then)")
    _common(evaluate)
    evaluate.set_defaults(func=cmd_eval)
