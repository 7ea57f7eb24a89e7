"""Run a model on the suites: ``python -m bench.suites --lang ru|en|both [--model SPEC] [--limit N] [--out FILE]``.

Each task gets a fresh store and a ``ReactAgent`` with the task's tools, built as ``react-agent run --tools``
builds it (``local`` models: the ``<lang>-compact`` prompts and the demo's worked examples that fit the
tools, else the examples the model's profile generates from the tools' schemas; other models: the ``<lang>``
prompts; ``--prompts`` overrides). The run's first step is the first decision (a call, FINISH, or an
unparseable reply), judged against the expected first call; the whole run is
judged on its outcome (the store's log of successful calls and the final answer). Per language it prints
first-call accuracy, run-outcome accuracy and the median seconds per task; ``--out`` gets one JSON record
per task (expected call, decision, verdicts, steps, the store's calls); ``--results`` writes the summary to
``bench/results/suites.json`` (what ``docs/benchmarks.md`` shows, with the misses and the machine's load).

``--model``: ``local`` (the embedded default), ``local:NAME`` or any spec of ``react_agent.models.make_model``
(``openai:NAME`` with ``--base-url``...), or ``scripted:FILE``: a JSON list of replies played in order by
one ``ScriptedChatModel`` across all tasks. ``--model-option NAME=VALUE`` passes an option to the model's
class (``n_threads=1``, ``grounding=false`` for ``LocalChatModel``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from bench.suites import LANGS, Store, Task, load_tasks, make_tools, tool_schemas
from bench.suites.judge import Verdict, judge_call, judge_outcome

AgentFactory = Callable[[Any, list[Any], str], Any]
DEFAULT_MAX_ITERATIONS = 6


def is_local(spec: str) -> bool:
    return spec.partition(":")[0].strip().lower() == "local"


def make_llm(spec: str, *, base_url: str | None = None, api_key_env: str | None = None,
             options: dict[str, Any] | None = None) -> Any:
    """The chat model of ``--model``; ``options`` go to the model's class (``n_threads=`` of a local model...)."""
    if spec.startswith("scripted:"):
        from react_agent.testing import ScriptedChatModel

        replies = json.loads(Path(spec.removeprefix("scripted:")).read_text(encoding="utf-8"))
        if not isinstance(replies, list):
            raise SystemExit(f"--model {spec}: the file must hold a JSON list of replies")
        return ScriptedChatModel([r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in replies])
    from react_agent.models import make_model

    return make_model(spec, base_url=base_url, api_key_env=api_key_env, **(options or {}))


def model_option(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` of ``--model-option``: the value read as JSON when it is JSON (``false``, ``2``), else text."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


def agent_factory(spec: str, *, prompts: str | None = None,
                  max_iterations: int = DEFAULT_MAX_ITERATIONS) -> AgentFactory:
    """Builds the agent of one task as ``react-agent run --tools`` does for the model ``spec``."""
    from react_agent import FINISH, ReactAgent
    from react_agent.demo import DEMO_EXAMPLES

    local = is_local(spec)

    def build(llm: Any, tools: list[Any], lang: str) -> Any:
        options: dict[str, Any] = {"prompts": prompts or (f"{lang}-compact" if local else lang),
                                   "max_iterations": max_iterations}
        if local:
            names = {FINISH, *(tool.name for tool in tools)}
            fitting = [e for e in DEMO_EXAMPLES[lang]
                       if {e.answer.action, *(s.action for s in e.steps if s.action)} <= names]
            if fitting:  # other tools: the model's profile generates examples from their schemas, as in the CLI
                options["examples"] = fitting
        return ReactAgent(llm, tools, **options)

    return build


def first_decision(steps: Sequence[Any]) -> tuple[str, dict[str, Any] | None]:
    """The kind of a run's first decision (``call``, ``finish``, ``unparseable`` or ``none``: no step) and,
    for a call, ``{"tool", "arguments"}`` as the model wrote them."""
    from react_agent import FINISH

    if not steps:
        return "none", None
    step = steps[0]
    if step.action is None:
        return "unparseable", None
    if step.action == FINISH:
        return "finish", None
    return "call", {"tool": step.action, "arguments": step.action_input}


def _first_verdict(kind: str, decision: dict[str, Any] | None, task: Task,
                   schemas: dict[str, dict[str, Any]]) -> Verdict:
    if kind in ("unparseable", "none"):
        return Verdict(ok=False, reason="no decision" if kind == "none" else "unparseable reply")
    expected = task.expected
    return judge_call(decision, expected, schemas.get(expected.tool) if expected else None)


def run_task(task: Task, lang: str, llm: Any, build: AgentFactory) -> dict[str, Any]:
    """Run ``task`` once on a fresh store; its record (verdicts, decision, steps, the store's calls)."""
    store = Store.fresh(lang)
    tools = make_tools(task.toolsets, store)
    schemas = tool_schemas(tools)
    agent = build(llm, tools, lang)
    started = time.perf_counter()
    try:
        result = agent.run(task.text)
        status, output, steps, error = result.status, result.output, list(result.steps), result.error
    except Exception as exc:  # a model or framework failure is a wrong run, recorded, not a crash of the suite
        status, output, steps, error = "error", "", [], f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - started
    kind, decision = first_decision(steps)
    first = _first_verdict(kind, decision, task, schemas)
    calls = [call.as_dict() for call in store.log]
    outcome = judge_outcome(status=status, calls=calls, output=output, expected=task.calls, schemas=schemas,
                            answer_contains=task.answer_contains)
    return {
        "id": task.id, "lang": lang, "text": task.text, "kind": task.kind, "tags": list(task.tags),
        "tools": [tool.name for tool in tools],
        "expected": [call.call() for call in task.calls],
        "decision_kind": kind, "decision": decision,
        "first_ok": first.ok, "first_reason": first.reason,
        "outcome_ok": outcome.ok, "outcome_reason": outcome.reason,
        "status": status, "output": output, "error": error,
        "steps": [{"action": s.action, "action_input": s.action_input, "observation": s.observation,
                   "is_error": s.is_error, "raw_output": s.raw_output, "seconds": round(s.duration_s, 3)}
                  for s in steps],
        "calls": calls, "seconds": round(seconds, 3),
    }


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts and the median time of ``records`` (one language)."""
    kinds = sorted({r["kind"] for r in records})
    return {
        "tasks": len(records),
        "first_ok": sum(r["first_ok"] for r in records),
        "outcome_ok": sum(r["outcome_ok"] for r in records),
        "median_s": statistics.median(r["seconds"] for r in records) if records else 0.0,
        "by_kind": {k: {"tasks": sum(r["kind"] == k for r in records),
                        "first_ok": sum(r["first_ok"] for r in records if r["kind"] == k),
                        "outcome_ok": sum(r["outcome_ok"] for r in records if r["kind"] == k)} for k in kinds},
    }


def summary_line(lang: str, counts: dict[str, Any]) -> str:
    total = counts["tasks"]
    kinds = ", ".join(f"{kind} {c['first_ok']}/{c['tasks']} first, {c['outcome_ok']}/{c['tasks']} run"
                      for kind, c in counts["by_kind"].items())
    return (f"{lang} | first call {counts['first_ok']}/{total} | run outcome {counts['outcome_ok']}/{total} | "
            f"median {counts['median_s']:.2f} s/task | {kinds}")


def run_suite(lang: str, llm: Any, build: AgentFactory, *, limit: int | None = None,
              out: TextIO | None = None, progress: TextIO | None = None,
              kept: list[dict[str, Any]] | None = None, kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the first ``limit`` tasks of ``lang`` (all by default; only those of ``kinds`` when given); each record
    is written to ``out`` at once and appended to ``kept``."""
    records = []
    for task in [t for t in load_tasks(lang) if kinds is None or t.kind in kinds][:limit]:
        record = run_task(task, lang, llm, build)
        records.append(record)
        if kept is not None:
            kept.append(record)
        if out is not None:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
        if progress is not None:
            mark = ("+" if record["first_ok"] else "-") + ("+" if record["outcome_ok"] else "-")
            progress.write(f"  {mark} {task.id} ({record['seconds']:.1f} s) {record['first_reason']}\n")
            progress.flush()
    return summary(records)


def compact(record: dict[str, Any]) -> dict[str, Any]:
    """What ``bench/results/suites.json`` keeps of a task's record."""
    return {key: record[key] for key in ("id", "kind", "first_ok", "first_reason", "outcome_ok", "outcome_reason",
                                         "status", "seconds")}


def _load() -> list[float] | None:
    return [round(x, 1) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def first_calls_only(config: dict[str, Any]) -> bool:
    """Whether a run of this configuration stopped every task after its first decision: its run outcomes judge
    nothing."""
    return config.get("max_iterations") == 1


def markdown(data: dict[str, Any]) -> str:
    """The benchmarks page's section: a row per language, then the misses."""
    from bench import _common

    results, config = data["results"], data.get("config", {})
    first_only = first_calls_only(config)
    rows = []
    for lang, r in results["languages"].items():
        n = r["tasks"]
        kinds = "; ".join(f"{kind} {c['first_ok']}/{c['tasks']}" for kind, c in r["by_kind"].items())
        outcome = "not run (one step)" if first_only else f"{r['outcome_ok']}/{n} ({_common.pct(r['outcome_ok'], n)})"
        rows.append([lang, str(n), f"{r['first_ok']}/{n} ({_common.pct(r['first_ok'], n)})", outcome,
                     f"{r['median_s']:.1f}", kinds])
    steps = ("one step per run (`--max-iterations 1`): first calls only, no run outcome" if first_only
             else f"at most {config.get('max_iterations', '?')} steps per run")
    lines = [f"Model `{config.get('model', '?')}`, prompts {config.get('prompts') or '<lang>-compact'}, {steps}; "
             f"load average {results.get('load_before')} before, {results.get('load_after')} after.", "",
             _common.table(["language", "tasks", "first call right", "run outcome right", "median s/task",
                            "first call by kind"], rows)]
    for lang, r in results["languages"].items():
        misses = [t for t in r["records"] if not t["first_ok"]]
        if misses:
            lines += ["", f"First-call misses ({lang}):", ""]
            lines += [f"- `{t['id']}`: {t['first_reason']}" for t in misses]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.suites",
                                description="Score a model on the Russian and English development suites.")
    p.add_argument("--lang", choices=[*LANGS, "both"], default="both")
    p.add_argument("--model", default="local",
                   help="local, local:NAME, a make_model spec (openai:NAME...) or scripted:FILE (default: local)")
    p.add_argument("--base-url", default=None, help="server URL for openai:/vllm:/llamacpp:/ollama: models")
    p.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
    p.add_argument("--limit", type=int, default=None, help="only the first N tasks of each language")
    p.add_argument("--kind", choices=("one", "none", "multi"), action="append", default=None,
                   help="only the tasks of this kind (repeatable): one call, no call, several calls")
    p.add_argument("--prompts", default=None, help="prompt set (default: <lang>-compact for local, else <lang>)")
    p.add_argument("--model-option", type=model_option, action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the model's class, e.g. n_threads=1 or grounding=false (repeatable)")
    p.add_argument("--max-iterations", type=int, default=DEFAULT_MAX_ITERATIONS)
    p.add_argument("--out", default=None, help="write one JSON record per task to this JSONL file")
    p.add_argument("--quiet", action="store_true", help="no per-task progress lines")
    p.add_argument("--results", action="store_true",
                   help="write the summary to bench/results/suites.json (shown by docs/benchmarks.md)")
    p.add_argument("--out-dir", type=Path, default=None, help="with --results: the folder of suites.json")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.limit is not None and args.limit < 1:
        raise SystemExit("--limit must be at least 1")
    llm = make_llm(args.model, base_url=args.base_url, api_key_env=args.api_key_env, options=dict(args.model_option))
    build = agent_factory(args.model, prompts=args.prompts, max_iterations=args.max_iterations)
    langs = list(LANGS) if args.lang == "both" else [args.lang]
    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    languages: dict[str, Any] = {}
    load_before = _load()
    try:
        for lang in langs:
            kept: list[dict[str, Any]] = []
            counts = run_suite(lang, llm, build, limit=args.limit, out=out,
                               progress=None if args.quiet else sys.stderr, kept=kept, kinds=args.kind)
            languages[lang] = {**counts, "records": [compact(r) for r in kept]}
            print(summary_line(lang, counts), flush=True)
    finally:
        if out is not None:
            out.close()
    if args.results:
        from bench import _common

        config = {"model": args.model, "prompts": args.prompts, "max_iterations": args.max_iterations,
                  "limit": args.limit, "kinds": args.kind, "model_options": dict(args.model_option)}
        path = _common.write_result("suites", config, {"languages": languages, "load_before": load_before,
                                                       "load_after": _load()}, out_dir=args.out_dir)
        print(f"wrote {path}")
    return 0
