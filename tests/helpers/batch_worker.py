"""Helpers of the batch tests, and a batch process the crash tests kill.

The model is a pure function of its prompt (so a resumed run gets the very replies an uninterrupted one
would): the task names items; the model calls ``record`` for the first item whose ``ok:<item>`` observation
is not in the prompt yet, then FINISHes. ``record`` writes each item to a ledger file once per idempotency
key (under a file lock, so threads, processes and Ray workers may share it), so every side effect can be
counted. Every model call that returns is logged to ``calls.log``.

    python tests/helpers/batch_worker.py run <folder> <tasks> <items> <concurrency> <delay> [local|ray]

runs the batch of ``<folder>`` (``tasks.jsonl``, ``results.jsonl``, ``journals/``), prints ``ready`` once
imported and ``done`` at the end.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, InjectedToolArg, tool

from react_agent import ReactAgent

_TASK = re.compile(r"Record items: ([\w, -]+)\.")
_LOCK = threading.Lock()


def task_text(number: int, items: int) -> str:
    return "Record items: " + ", ".join(f"t{number}-i{j}" for j in range(1, items + 1)) + "."


def answer(number: int, items: int) -> str:
    return "recorded " + ", ".join(f"t{number}-i{j}" for j in range(1, items + 1))


def write_tasks(path: Path, count: int, items: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for number in range(1, count + 1):
            handle.write(json.dumps({"id": f"task-{number}", "task": task_text(number, items),
                                     "checks": {"answer": answer(number, items)}}) + "\n")


def reply_for(prompt: str) -> str:
    match = _TASK.search(prompt)
    if match is None:
        return json.dumps({"thought": "no task", "action": "FINISH", "action_input": "no task"})
    items = [i.strip() for i in match.group(1).split(",")]
    for item in items:
        if f"ok:{item}" not in prompt:
            return json.dumps({"thought": "next", "action": "record", "action_input": {"item": item}})
    return json.dumps({"thought": "done", "action": "FINISH", "action_input": "recorded " + ", ".join(items)})


def _log(folder: Path | None, line: str) -> None:
    if folder is None:
        return
    with _LOCK, open(folder / "calls.log", "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line + "\n")


class RuleChatModel(BaseChatModel):
    """Replies by :func:`reply_for`, after ``delay`` seconds (asyncio.sleep in async runs)."""

    delay: float = 0.0
    log_dir: str | None = None

    @property
    def _llm_type(self) -> str:
        return "batch-rule"

    def _result(self, messages: list[BaseMessage]) -> ChatResult:
        prompt = "\n\n".join(str(m.content) for m in messages)
        text = reply_for(prompt)
        _log(Path(self.log_dir) if self.log_dir else None, text)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(
            content=text, usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}))])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        time.sleep(self.delay)
        return self._result(messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        await asyncio.sleep(self.delay)
        return self._result(messages)


def make_record_tool(ledger: Path, delay: float = 0.0) -> BaseTool:
    @tool
    def record(item: str, idempotency_key: Annotated[str, InjectedToolArg]) -> str:
        """Record an item in the ledger."""
        with _LOCK, open(ledger, "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            if any(line.split(" ", 1)[0] == idempotency_key for line in handle):
                return f"ok:{item}"
            time.sleep(delay)
            handle.write(f"{idempotency_key} {item} {os.getpid()}\n")
            handle.flush()
        time.sleep(delay)
        return f"ok:{item}"

    return record


def ledger_items(ledger: Path) -> list[str]:
    if not ledger.exists():
        return []
    return [line.split()[1] for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()]


def ledger_pids(ledger: Path) -> set[int]:
    if not ledger.exists():
        return set()
    return {int(line.split()[2]) for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()}


class AgentFactory:
    """A picklable factory (for Ray workers too): a ReactAgent with the rule model and the ledger tool."""

    def __init__(self, folder: str, delay: float = 0.0) -> None:
        self.folder, self.delay = folder, delay

    def __call__(self) -> ReactAgent:
        llm = RuleChatModel(delay=self.delay, log_dir=self.folder)
        return ReactAgent(llm, [make_record_tool(Path(self.folder) / "ledger.txt", self.delay)], prompts="en",
                          history_window=None, max_iterations=10)


def run(folder: Path, tasks: int, items: int, concurrency: int, delay: float, backend: str) -> None:
    from batch_worker import AgentFactory as Factory  # by module name: Ray workers import it, not __main__

    from react_agent.batch import run_batch

    if not (folder / "tasks.jsonl").exists():
        write_tasks(folder / "tasks.jsonl", tasks, items)
    options: dict[str, Any] = {}
    if backend == "ray":
        import ray

        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {
            "PYTHONPATH": str(Path(__file__).resolve().parent)}})
        options = {"workers": 2}
    print("ready", flush=True)
    batch = run_batch(Factory(str(folder), delay), folder / "tasks.jsonl", concurrency=concurrency,
                      journal_dir=folder / "journals", out=folder / "results.jsonl", backend=backend,  # type: ignore[arg-type]
                      **options)
    batch.run()
    print("done", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] != ["run"]:
        sys.exit("usage: batch_worker.py run <folder> <tasks> <items> <concurrency> <delay> [local|ray]")
    run(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]),
        sys.argv[7] if len(sys.argv) > 7 else "local")
