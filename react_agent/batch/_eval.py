"""Evaluation: run a suite with each agent variant, score the results, print a table, draw a plot."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from react_agent.batch._checks import wilson_interval
from react_agent.batch._records import TaskResult, read_results
from react_agent.batch._run import AgentFactory, run_batch
from react_agent.core import BaseAgent
from react_agent.errors import ConfigError

__all__ = ["VariantScore", "evaluate", "format_scores", "plot_scores", "score_results"]

logger = logging.getLogger("react_agent")


class VariantScore(BaseModel):
    """How one variant did on a suite: successes (finished and every check passed) out of ``tasks``, the
    Wilson 95 % interval of the success rate, and the means per task of model calls, tokens and seconds."""

    model_config = ConfigDict(frozen=True)

    variant: str
    tasks: int
    passed: int
    rate: float
    low: float
    high: float
    llm_calls: float
    tokens: float
    seconds: float
    statuses: dict[str, int] = Field(default_factory=dict)
    failed_ids: list[str] = Field(default_factory=list)


def score_results(variant: str, results: Iterable[TaskResult]) -> VariantScore:
    """Score one variant's results (streamed: only sums and the ids of failed tasks are kept)."""
    n = passed = calls = tokens = 0
    seconds = 0.0
    statuses: dict[str, int] = {}
    failed: list[str] = []
    for result in results:
        n += 1
        passed += result.ok
        if not result.ok:
            failed.append(result.id)
        calls += result.llm_calls
        tokens += result.input_tokens + result.output_tokens
        seconds += result.seconds
        statuses[result.status] = statuses.get(result.status, 0) + 1
    low, high = wilson_interval(passed, n)

    def mean(total: float) -> float:
        return total / n if n else 0.0

    return VariantScore(variant=variant, tasks=n, passed=passed, rate=passed / n if n else 0.0, low=low, high=high,
                        llm_calls=mean(calls), tokens=mean(tokens), seconds=mean(seconds), statuses=statuses,
                        failed_ids=failed)


def evaluate(suite: Iterable[Any] | str | os.PathLike[str], variants: Mapping[str, BaseAgent | AgentFactory], *,
             out_dir: str | os.PathLike[str], concurrency: int = 8, task_timeout: float | None = None,
             backend: str = "local", **ray_options: Any) -> list[VariantScore]:
    """Run ``suite`` with each variant (name -> agent or factory) and score it.

    Each variant writes ``<out_dir>/<name>.jsonl`` (its results) and journals to ``<out_dir>/<name>.journal/``,
    so an interrupted evaluation started again finishes only what is missing. ``suite`` must be a path or a
    re-iterable collection (it is read once per variant).
    """
    if not variants:
        raise ConfigError("evaluate needs at least one variant")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    scores = []
    for name, agent in variants.items():
        if not name or "/" in name or name.startswith("."):
            raise ConfigError(f"a variant name must be a plain file name, got {name!r}")
        out = folder / f"{name}.jsonl"
        run_batch(agent, suite, concurrency=concurrency, journal_dir=folder / f"{name}.journal", out=out,
                  backend=backend, task_timeout=task_timeout, **ray_options).run()  # type: ignore[arg-type]
        scores.append(score_results(name, read_results(out)))
    return scores


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def format_scores(scores: Iterable[VariantScore]) -> str:
    """A markdown table, one row per variant: success rate with its 95 % interval, means per task."""
    header = ["variant", "tasks", "success", "95% CI", "model calls/task", "tokens/task", "seconds/task"]
    rows = [[s.variant, str(s.tasks), f"{s.passed}/{s.tasks} ({_pct(s.rate)})", f"{_pct(s.low)}–{_pct(s.high)}",
             f"{s.llm_calls:.2f}", f"{s.tokens:.0f}", f"{s.seconds:.2f}"] for s in scores]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in [header, *rows]]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def plot_scores(scores: list[VariantScore], path: str | os.PathLike[str]) -> Path | None:
    """Draw success rates (with their 95 % intervals) and model calls per task to a PNG; ``None`` (nothing
    drawn) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib is not installed: no evaluation plot")
        return None
    names = [s.variant for s in scores]
    figure, (left, right) = plt.subplots(1, 2, figsize=(max(6.0, 1.6 * len(names) + 3), 3.6))
    rates = [100 * s.rate for s in scores]
    errors = [[100 * (s.rate - s.low) for s in scores], [100 * (s.high - s.rate) for s in scores]]
    left.bar(names, rates, yerr=errors, capsize=4, color="#4c72b0")
    left.set_ylim(0, 105)
    left.set_ylabel("success rate, % (95% Wilson CI)")
    right.bar(names, [s.llm_calls for s in scores], color="#dd8452")
    right.set_ylabel("model calls per task")
    for axis in (left, right):
        axis.tick_params(axis="x", rotation=20)
    figure.tight_layout()
    target = Path(path)
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
