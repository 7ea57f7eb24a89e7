"""Batch runs and evaluation: many tasks, resumable after a kill, on this machine or on a Ray cluster.

``run_batch(agent_or_factory, tasks, concurrency=..., journal_dir=..., out=...)`` yields a
:class:`TaskResult` per task as it completes; ``evaluate(suite, variants, ...)`` scores agent variants on
a suite of tasks with checks. docs/batch.md documents both and the ``react-agent batch`` / ``eval`` commands.
"""

from react_agent.batch._checks import run_checks, tool_calls_of, wilson_interval
from react_agent.batch._eval import VariantScore, evaluate, format_scores, plot_scores, score_results
from react_agent.batch._records import BatchSummary, CheckResult, ResultsFile, TaskResult, read_results
from react_agent.batch._run import AgentFactory, BatchRun, arun_batch, run_batch, run_task
from react_agent.batch._tasks import (
    SUITES,
    Checks,
    ExpectedCall,
    Task,
    TaskError,
    iter_tasks,
    journal_name,
    load_tasks,
    suite_path,
)

__all__ = [
    "SUITES",
    "AgentFactory",
    "BatchRun",
    "BatchSummary",
    "CheckResult",
    "Checks",
    "ExpectedCall",
    "ResultsFile",
    "Task",
    "TaskError",
    "TaskResult",
    "VariantScore",
    "arun_batch",
    "evaluate",
    "format_scores",
    "iter_tasks",
    "journal_name",
    "load_tasks",
    "plot_scores",
    "read_results",
    "run_batch",
    "run_checks",
    "run_task",
    "score_results",
    "suite_path",
    "tool_calls_of",
    "wilson_interval",
]
