"""The ``react-agent batch`` and ``react-agent eval`` commands (wired into react_agent.cli's parser).

Progress goes to stderr (a live bar on a terminal, one plain line per task otherwise); the summary table
and the evaluation table go to stdout. docs/batch.md documents both commands.
"""

from __future__ import annotations

import argparse
import json
import re
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
from react_agent.cli._models import EXIT_NOT_FINISHED, EXIT_OK, EXIT_SETUP, EXIT_USAGE, CliError, build_model
from react_agent.core import BaseAgent
from react_agent.errors import ConfigError

__all__ = ["AgentSpec", "add_batch_commands", "cmd_batch", "cmd_eval", "make_model"]

AGENTS = ("react", "reflection", "plan")


def _cli_error(message: str, code: int = EXIT_SETUP) -> Exception:
    return CliError(message, code)


# ---------------------------------------------------------------------------------------------- the agent
def _scripted_replies(path: str) -> list[str]:
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise _cli_error(f"--model scripted: cannot read {path!r}: {exc.strerror}", EXIT_USAGE) from None
    except ValueError as exc:
        raise _cli_error(f"--model scripted: {path!r} is not JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(data, list):
        raise _cli_error(f"--model scripted: {path!r} must hold a JSON list of replies", EXIT_USAGE)
    return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in data]


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
        _scripted_replies(spec.removeprefix("scripted:"))
        return
    if ":" in spec and _provider_models() is not None:
        return
    raise _cli_error(f"--model must be local, gigachat, scripted:FILE or provider:name, got {spec!r}", EXIT_USAGE)


def make_model(spec: str, model_path: str | None = None) -> Any:
    """The chat model of ``--model``: ``local``, ``gigachat``, ``scripted:FILE`` (a JSON list of replies,
    played in order by one :class:`~react_agent.testing.ScriptedChatModel` per worker) or ``provider:name``
    (``react_agent.models.make_model``)."""
    if spec.startswith("scripted:"):
        from react_agent.testing import ScriptedChatModel

        return ScriptedChatModel(_scripted_replies(spec.removeprefix("scripted:")))
    check_model(spec)
    if spec not in ("local", "gigachat"):
        from react_agent.errors import ConfigError

        try:
            return _provider_models()(spec)
        except ConfigError as exc:
            raise _cli_error(f"--model: {exc}") from None
    return build_model(SimpleNamespace(model=spec, model_path=model_path))  # type: ignore[arg-type]


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

    def __call__(self) -> BaseAgent:
        from react_agent import FINISH, PlanAndExecuteAgent, ReactAgent, ReflectionAgent
        from react_agent.demo import DEMO_EXAMPLES, make_demo_tools

        tools = make_demo_tools(db_path=self.db, root=self.root, lang=self.lang)  # type: ignore[arg-type]
        options: dict[str, Any] = {"prompts": self.lang}
        if self.model == "local":  # a small model needs the compact prompts and worked examples (as `run`)
            names = {FINISH, *(t.name for t in tools)}
            options.update(prompts=f"{self.lang}-compact", examples=[
                e for e in DEMO_EXAMPLES[self.lang] if {e.answer.action, *(s.action for s in e.steps if s.action)}
                <= names])
        if self.max_iterations is not None:
            options["max_iterations"] = self.max_iterations
        cls = {"react": ReactAgent, "reflection": ReflectionAgent, "plan": PlanAndExecuteAgent}[self.agent]
        agent: BaseAgent = cls(make_model(self.model, self.model_path), tools, **options)
        return agent


# ---------------------------------------------------------------------------------------------- progress
def _count_tasks(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return sum(1 for line in handle if line.strip() and not line.lstrip().startswith("#"))
    except OSError:
        return None


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
    spec = AgentSpec(agent=args.agent, model=args.model, lang=_lang_of(args.tasks, args.lang),
                     db=_db(args, Path(f"{out}.db")), root=args.root, model_path=args.model_path,
                     max_iterations=args.max_iterations)
    batch = run_batch(spec, args.tasks, concurrency=args.concurrency, journal_dir=journal_dir, out=out,
                      backend=args.backend, task_timeout=args.task_timeout,
                      retry=("error", "timeout") if args.retry_failed else (), **_backend_options(args))
    batch.summary.total = _count_tasks(args.tasks)
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
    scores = []
    total = _count_tasks(args.suite)
    for name, agent, lang in variants:
        spec = AgentSpec(agent=agent, model=args.model, lang=lang, db=str(folder / f"{name}.db"), root=args.root,
                         model_path=args.model_path, max_iterations=args.max_iterations)
        out = folder / f"{name}.jsonl"
        batch = run_batch(spec, args.suite, concurrency=args.concurrency, journal_dir=folder / f"{name}.journal",
                          out=out, backend=args.backend, task_timeout=args.task_timeout, **_backend_options(args))
        batch.summary.total = total
        try:
            _run_with_progress(batch, console, name)
        except TaskError as exc:
            raise _cli_error(str(exc), EXIT_USAGE) from None
        scores.append(score_results(name, read_results(out)))
    console.answer(format_scores(scores))
    if not args.no_plot:
        plot = plot_scores(scores, args.plot or folder / "eval.png")
        console.line(f"plot: {plot}" if plot else "no plot: matplotlib is not installed (pip install matplotlib)")
    (folder / "scores.json").write_text(json.dumps([s.model_dump() for s in scores], indent=2, ensure_ascii=False)
                                        + "\n", encoding="utf-8")
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
    sub.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="tasks in flight (default: 8)")
    sub.add_argument("--model", default="local", metavar="MODEL",
                     help="local (embedded llama.cpp model, default), gigachat (GIGACHAT_* environment), "
                          "scripted:FILE (a JSON list of replies, played in order) or provider:name")
    sub.add_argument("--model-path", metavar="FILE", help="GGUF file for --model local (default: Gemma 3 270M)")
    sub.add_argument("--lang", choices=("ru", "en"),
                     help="language of prompts and tools (default: ru if the first task has Cyrillic letters)")
    sub.add_argument("--max-iterations", type=positive_int, metavar="N", help="model decisions per task (default: 5)")
    sub.add_argument("--task-timeout", type=positive_seconds, metavar="S",
                     help="seconds a task may take (default: no limit)")
    sub.add_argument("--db", metavar="FILE", help="SQLite file of the user tools")
    sub.add_argument("--root", metavar="DIR", help="adds read_file, reading only under DIR")
    sub.add_argument("--backend", choices=("local", "ray"), default="local",
                     help="local: asyncio in this process (default); ray: Ray workers (pip install 'react-agent[ray]')")
    sub.add_argument("--ray-address", metavar="ADDR", help="Ray cluster to join (default: start a local one)")
    sub.add_argument("--workers", type=positive_int, metavar="N", help="Ray workers (default: one per CPU)")
    sub.add_argument("--debug", action="store_true", help="show debug logs and tracebacks")


def add_batch_commands(subparsers: Any) -> None:
    """Add ``batch`` and ``eval`` to the ``react-agent`` subcommands (``subparsers`` of argparse)."""
    batch = subparsers.add_parser(
        "batch", help="run many tasks from a JSONL file, resumable", description=(
            "Run every task of TASKS.jsonl (one string or {id, task, session, checks} object per line) with the demo "
            "tools, N at a time, appending one result per line to RESULTS.jsonl. Every task is journaled: run the "
            "same command again after a crash or Ctrl-C and only the unfinished work is done."))
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
            "check passed) with its 95%% Wilson interval, model calls, tokens and seconds per task."))
    evaluate.add_argument("suite", metavar="SUITE.jsonl", help=f"a suite file, or a shipped suite: {', '.join(SUITES)}")
    evaluate.add_argument("--variant", action="append", metavar="AGENT[:LANG]",
                          help="react, reflection or plan, optionally :ru or :en; repeat to compare (default: react)")
    evaluate.add_argument("--out-dir", default="eval-results", metavar="DIR",
                          help="results, journals and plot per variant (default: eval-results)")
    evaluate.add_argument("--plot", metavar="FILE.png", help="where to draw the plot (default: DIR/eval.png)")
    evaluate.add_argument("--no-plot", action="store_true", help="do not draw the plot")
    _common(evaluate)
    evaluate.set_defaults(func=cmd_eval)
