"""Benchmark 6: batch throughput and memory, react_agent's run_batch vs LangChain's AgentExecutor.abatch.

Workload: N tasks (default 1,000), each solved in 3 model calls (two tool calls, then the final answer) by a
chat model that answers after a fixed latency (default 50 ms, ``asyncio.sleep``: a remote model that costs
time, not CPU) and an async tool. Both frameworks get the same model class and tool; the replies differ
only in the name of the finishing action (``FINISH`` vs ``"Final Answer"``). The model reads the prompt to
decide (it calls the tool for the first item whose observation is not in the prompt yet), so a prompt that
lost an observation would show up as extra calls.

Measured (wall time of the whole batch, one run each):

- ideal: calls x latency / concurrency (what an infinitely fast framework would need);
- the public-call floor: the same model and tool calls made by LangChain's public ``ainvoke`` alone, with the
  same concurrency and no agent around them (what any framework calling the model and the tools through
  LangChain's public API needs here: on 2 cores the batch is CPU-bound, and these calls take most of it);
- react_agent ``run_batch`` on the local backend, without journals and with one journal per task (fsync-ed
  records, what makes a batch resumable), and LangChain's ``AgentExecutor.abatch`` with the same
  ``max_concurrency``;
- the Ray backend with 1 and 2 workers, without journals (a local Ray instance started before the clock
  starts; the workers' start-up is timed; ``--skip-ray`` leaves it out);
- peak Python memory (tracemalloc) of ``run_batch`` writing a results file, for N and 2N tasks;
- the CPU time of this process per task (for Ray: the driver only): on a 2-core machine the batch is
  CPU-bound long before the model's latency is.

    python -m bench.batch [--tasks 1000] [--concurrency 200] [--latency 0.05] [--skip-ray] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import re
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench import _common

NAME = "batch"
ITEMS = 2  # tool calls per task; +1 final answer = 3 model calls
_TASK = re.compile(r"Look up the values of ([\w, -]+)\.")


def task_text(number: int) -> str:
    return "Look up the values of " + ", ".join(f"k{number}x{j}" for j in range(ITEMS)) + "."


def reply_for(prompt: str, finish_name: str) -> str:
    match = _TASK.search(prompt)
    keys = [k.strip() for k in match.group(1).split(",")] if match else []
    for key in keys:
        if f"value of {key}" not in prompt:
            return json.dumps({"thought": f"I need {key}", "action": "lookup", "action_input": {"key": key}})
    return json.dumps({"thought": "I have everything", "action": finish_name, "action_input": "done"})


def latency_model(latency: float, finish_name: str) -> Any:
    """A chat model answering by :func:`reply_for` after ``latency`` seconds (async: sleeps; sync: sleeps)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class LatencyChatModel(BaseChatModel):
        delay: float
        finish: str

        @property
        def _llm_type(self) -> str:
            return "bench-latency"

        def _reply(self, messages: Any) -> ChatResult:
            prompt = "\n\n".join(str(m.content) for m in messages)
            text = reply_for(prompt, self.finish)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            time.sleep(self.delay)
            return self._reply(messages)

        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:
            await asyncio.sleep(self.delay)
            return self._reply(messages)

    return LatencyChatModel(delay=latency, finish=finish_name)


def make_tool() -> Any:
    from langchain_core.tools import StructuredTool

    def lookup(key: str) -> str:
        """Look up the value stored under a key."""
        return f"value of {key}"

    async def alookup(key: str) -> str:
        """Look up the value stored under a key."""
        return f"value of {key}"

    lookup.__annotations__ = {"key": str, "return": str}
    alookup.__annotations__ = {"key": str, "return": str}
    return StructuredTool.from_function(func=lookup, coroutine=alookup, name="lookup")


class Factory:
    """A picklable agent factory (Ray workers build their agent with it)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def __call__(self) -> Any:
        from react_agent import ReactAgent

        return ReactAgent(latency_model(self.latency, "FINISH"), [make_tool()], prompts="en", max_iterations=6)


# ------------------------------------------------------------------------------------------ runs
def run_react(tasks: int, concurrency: int, latency: float, *, journal: bool, backend: str = "local",
              workers: int | None = None) -> dict[str, Any]:
    from react_agent.batch import run_batch

    with tempfile.TemporaryDirectory(prefix="bench-batch-") as folder:
        options: dict[str, Any] = {"workers": workers} if backend == "ray" else {}
        batch = run_batch(Factory(latency), (task_text(n) for n in range(tasks)), concurrency=concurrency,
                          journal_dir=Path(folder) / "j" if journal else None, out=Path(folder) / "out.jsonl",
                          backend=backend, **options)  # type: ignore[arg-type]
        started, cpu = time.perf_counter(), time.process_time()
        summary = batch.run()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert summary.done == tasks and summary.failed == 0, summary
    return {"seconds": seconds, "cpu_s": cpu, "llm_calls": summary.llm_calls, "tasks": summary.done}


def run_langchain(tasks: int, concurrency: int, latency: float) -> dict[str, Any]:
    agents = _common.require("langchain_classic.agents", "langchain-classic")
    from bench._peers import langchain_json_chat_prompt

    tool = make_tool()
    llm = latency_model(latency, "Final Answer")
    agent = agents.create_json_chat_agent(llm, [tool], langchain_json_chat_prompt())
    executor = agents.AgentExecutor(agent=agent, tools=[tool], max_iterations=6)
    inputs = [{"input": task_text(n)} for n in range(tasks)]

    async def go() -> list[Any]:
        return list(await executor.abatch(inputs, config={"max_concurrency": concurrency}))

    started, cpu = time.perf_counter(), time.process_time()
    outputs = asyncio.run(go())
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert all(o["output"] == "done" for o in outputs), outputs[:2]
    return {"seconds": seconds, "cpu_s": cpu, "tasks": len(outputs)}


def run_public_calls(tasks: int, concurrency: int, latency: float) -> dict[str, Any]:
    """The floor: each task's 3 model and 2 tool calls through the public ``ainvoke`` only, no agent."""
    from langchain_core.messages import HumanMessage

    llm, tool = latency_model(latency, "FINISH"), make_tool()

    async def one(number: int, gate: asyncio.Semaphore) -> None:
        async with gate:
            messages = [HumanMessage(content=task_text(number))]
            for item in range(ITEMS):
                await llm.ainvoke(messages)
                await tool.ainvoke({"key": f"k{number}x{item}"})
            await llm.ainvoke(messages)

    async def go() -> None:
        gate = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(n, gate) for n in range(tasks)))

    started, cpu = time.perf_counter(), time.process_time()
    asyncio.run(go())
    return {"seconds": time.perf_counter() - started, "cpu_s": time.process_time() - cpu, "tasks": tasks}


def peak_memory(tasks: int, concurrency: int, latency: float) -> float:
    """Peak traced Python memory (MiB) of a local run_batch writing its results file."""
    gc.collect()
    tracemalloc.start()
    try:
        run_react(tasks, concurrency, latency, journal=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def run(tasks: int, concurrency: int, latency: float, *, ray: bool) -> dict[str, Any]:
    ideal = tasks * (ITEMS + 1) * latency / concurrency
    out: dict[str, Any] = {"ideal_s": ideal}
    floor = run_public_calls(tasks, concurrency, latency)
    out["public_calls"] = {**floor, "x_ideal": floor["seconds"] / ideal}
    local = run_react(tasks, concurrency, latency, journal=False)
    out["react_agent"] = {**local, "x_ideal": local["seconds"] / ideal}
    journaled = run_react(tasks, concurrency, latency, journal=True)
    out["react_agent_journaled"] = {**journaled, "x_ideal": journaled["seconds"] / ideal}
    if _common.available("langchain_classic"):
        peer = run_langchain(tasks, concurrency, latency)
        out["langchain"] = {**peer, "x_ideal": peer["seconds"] / ideal,
                            "react_agent_speedup": peer["seconds"] / local["seconds"]}
    if ray and _common.available("ray"):
        import ray as ray_module

        ray_module.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            for workers in (1, 2):
                result = run_react(tasks, concurrency, latency, journal=False, backend="ray", workers=workers)
                out[f"ray_{workers}"] = {**result, "x_ideal": result["seconds"] / ideal,
                                         "overhead_ms_per_task": 1000 * (result["seconds"] - local["seconds"])
                                         / tasks}
        finally:
            ray_module.shutdown()
    small, large = peak_memory(tasks, concurrency, latency), peak_memory(2 * tasks, concurrency, latency)
    out["memory"] = {"tasks": tasks, "peak_mib": small, "tasks_2x": 2 * tasks, "peak_mib_2x": large,
                     "ratio": large / small if small else float("nan")}
    return out


# ------------------------------------------------------------------------------------------ output
_ROWS = [("public_calls", "floor: the same calls through LangChain's public ainvoke, no agent"),
         ("react_agent", "react_agent run_batch (local)"),
         ("react_agent_journaled", "react_agent run_batch (local, journal per task)"),
         ("langchain", "LangChain AgentExecutor.abatch"),
         ("ray_1", "react_agent run_batch (Ray, 1 worker)"),
         ("ray_2", "react_agent run_batch (Ray, 2 workers)")]


def _short(label: str) -> str:
    return label.split(":")[0].replace(" run_batch", "").replace("AgentExecutor.", "")


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    rows = [("ideal", results["ideal_s"])] + [(_short(label), results[key]["seconds"])
                                              for key, label in _ROWS if key in results]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.2))
    ax.barh([r[0] for r in rows][::-1], [r[1] for r in rows][::-1], color="#4c72b0")
    ax.set_xlabel("seconds for the whole batch (lower is better)")
    ax.set_title("A batch of tasks, 3 model calls each")
    return _common.save_figure(fig, path)


def markdown(data: dict[str, Any]) -> str:
    results, config = data["results"], data["config"]
    rows = [["ideal (calls x latency / concurrency)", f"{results['ideal_s']:.2f}", "1.00x", "", ""]]
    for key, label in _ROWS:
        if key in results:
            r = results[key]
            extra = ""
            if key == "langchain":
                extra = f"react_agent is {r['react_agent_speedup']:.1f}x faster"
            elif key.startswith("ray"):
                extra = f"{r['overhead_ms_per_task']:+.2f} ms per task vs local (Ray start-up included)"
            cpu = f"{1000 * r['cpu_s'] / r['tasks']:.2f}" if "cpu_s" in r else ""
            rows.append([label, f"{r['seconds']:.2f}", f"{r['x_ideal']:.2f}x", cpu, extra])
    memory = results["memory"]
    header = ["run", "seconds", "x ideal", "CPU ms per task (this process)", "note"]
    text = (f"{config['tasks']} tasks x 3 model calls, {1000 * config['latency']:.0f} ms latency, concurrency "
            f"{config['concurrency']}\n\n" + _common.table(header, rows))
    text += (f"\n\nPeak Python memory (tracemalloc) of run_batch: {memory['peak_mib']:.1f} MiB for {memory['tasks']} "
             f"tasks, {memory['peak_mib_2x']:.1f} MiB for {memory['tasks_2x']} tasks (x{memory['ratio']:.2f}).")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1000, help="tasks per batch (default 1000)")
    parser.add_argument("--concurrency", type=int, default=200, help="tasks in flight (default 200)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call (default 0.05)")
    parser.add_argument("--skip-ray", action="store_true", help="leave out the Ray backend")
    parser.add_argument("--quick", action="store_true",
                        help="plumbing check: 20 tasks, concurrency 10, 10 ms latency, no Ray")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.tasks, args.concurrency, args.latency, args.skip_ray = 20, 10, 0.01, True
    results = run(args.tasks, args.concurrency, args.latency, ray=not args.skip_ray)
    config = {"tasks": args.tasks, "concurrency": args.concurrency, "latency": args.latency,
              "model_calls_per_task": ITEMS + 1, "ray": not args.skip_ray}
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
