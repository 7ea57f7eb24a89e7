"""Benchmark: many concurrent runs on one agent, react_agent vs LangChain's AgentExecutor.

``asyncio.gather`` of N ``arun`` calls on one ``ReactAgent`` against ``AgentExecutor.abatch`` with the same
concurrency, both on a chat model with 50 ms latency (``asyncio.sleep``) whose reply depends only on the
prompt (so interleaved runs stay deterministic), 3 model calls per run (2 tool calls + the answer).
Reported: runs per second for both, and the ratio; and the public-call floor: the same model and tool calls
through LangChain's public ``ainvoke`` alone, no agent, so the ratio LangChain's time over the floor's is the best
any agent on the public path reaches here. Run: ``python -m bench.concurrency``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from bench import _common

NAME = "concurrency"
LATENCY = 0.05
CALLS = 3


def _reply(finish_name: str) -> Any:
    def reply(messages: list[Any]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        done = text.count("value of k")
        if done >= CALLS - 1:
            return json.dumps({"thought": "done", "action": finish_name, "action_input": "done"})
        return json.dumps({"thought": "next", "action": "lookup", "action_input": {"key": f"k{done}"}})

    return reply


def _tool() -> Any:
    from bench.overhead import make_tool

    return make_tool()


async def react_runs(n: int) -> float:
    from react_agent import ReactAgent
    from react_agent.testing import FunctionChatModel

    agent = ReactAgent(FunctionChatModel(function=_reply("FINISH"), delay=LATENCY), [_tool()], prompts="en",
                       max_iterations=CALLS + 2)
    start = time.perf_counter()
    results = await asyncio.gather(*(agent.arun(f"Look up k0 and k1 (run {i}).") for i in range(n)))
    seconds = time.perf_counter() - start
    assert all(r.status == "finished" and r.llm_calls == CALLS for r in results)
    return seconds


async def langchain_runs(n: int) -> float:
    from langchain_classic.agents import AgentExecutor, create_json_chat_agent

    from bench.overhead import json_chat_prompt
    from react_agent.testing import FunctionChatModel

    tool = _tool()
    llm = FunctionChatModel(function=_reply("Final Answer"), delay=LATENCY)
    executor = AgentExecutor(agent=create_json_chat_agent(llm, [tool], json_chat_prompt()), tools=[tool],
                             max_iterations=CALLS + 2)
    start = time.perf_counter()
    results = await executor.abatch([{"input": f"Look up k0 and k1 (run {i})."} for i in range(n)],
                                    config={"max_concurrency": n})
    seconds = time.perf_counter() - start
    assert all(r["output"] == "done" for r in results)
    return seconds


async def public_calls(n: int) -> float:
    """The floor: each run's model calls and tool calls through the public ``ainvoke`` only, no agent."""
    from langchain_core.messages import HumanMessage

    from react_agent.testing import FunctionChatModel

    llm, tool = FunctionChatModel(function=_reply("FINISH"), delay=LATENCY), _tool()

    async def one(i: int) -> None:
        messages = [HumanMessage(content=f"Look up k0 and k1 (run {i}).")]
        for k in range(CALLS - 1):
            await llm.ainvoke(messages)
            await tool.ainvoke({"key": f"k{k}"})
        await llm.ainvoke(messages)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - start


def run(*, sizes: tuple[int, ...] = (300, 500), repeats: int = 5) -> dict[str, Any]:
    _common.require("langchain_classic", "langchain-classic")
    out: dict[str, Any] = {"latency_s": LATENCY, "calls_per_run": CALLS, "sizes": {}}
    for n in sizes:
        react = [asyncio.run(react_runs(n)) for _ in range(repeats)]
        lang = [asyncio.run(langchain_runs(n)) for _ in range(repeats)]
        floor = [asyncio.run(public_calls(n)) for _ in range(repeats)]
        r_med, l_med, f_med = _common.median(react), _common.median(lang), _common.median(floor)
        out["sizes"][str(n)] = {"react_agent_runs_per_s": n / r_med, "langchain_runs_per_s": n / l_med,
                                "ratio": l_med / r_med, "ideal_runs_per_s": n / (CALLS * LATENCY),
                                "public_calls_runs_per_s": n / f_med, "floor_ratio": l_med / f_med,
                                "react_agent_s": react, "langchain_s": lang, "public_calls_s": floor}
    out["targets"] = {"ratio_min": 5.0}
    return out


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    rows = [[n, f"{v['react_agent_runs_per_s']:.0f}", f"{v['langchain_runs_per_s']:.0f}", f"{v['ratio']:.1f}x",
             _floor(v), f"{v['ideal_runs_per_s']:.0f}"] for n, v in r["sizes"].items()]
    return "\n".join([
        f"`asyncio.gather` of N `arun` calls on one `ReactAgent` against `AgentExecutor.abatch` "
        f"(max_concurrency N), a chat model with {1000 * r['latency_s']:.0f} ms latency, {r['calls_per_run']} "
        "model calls per run; median of the repeats.", "",
        _common.table(["concurrent runs", "react_agent runs/s", "LangChain runs/s", "ratio",
                       "public-call floor runs/s (its ratio)", "ideal runs/s"], rows),
        "", f"Target: react_agent >= {r['targets']['ratio_min']:.0f}x LangChain's runs per second. The floor makes the "
        "same model and tool calls through LangChain's public `ainvoke` with no agent around them: its ratio is the "
        "most any agent on the public path reaches on this host.",
    ])


def _floor(size: dict[str, Any]) -> str:
    if "public_calls_runs_per_s" not in size:  # a result recorded before the floor was measured
        return "-"
    return f"{size['public_calls_runs_per_s']:.0f} ({size['floor_ratio']:.1f}x)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.concurrency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 500])
    parser.add_argument("--repeats", type=int, default=5)
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    results = run(sizes=tuple(args.sizes), repeats=args.repeats)
    return _common.publish(NAME, {"sizes": args.sizes, "repeats": args.repeats}, results, args,
                           plot=lambda _results, _path: None, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
