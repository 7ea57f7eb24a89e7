"""Benchmark 3: per-step framework overhead, react_agent vs LangChain's AgentExecutor and LangGraph.

The same scripted run (10 tool calls, then the final answer) goes through ``ReactAgent``, through
LangChain's ``AgentExecutor`` with ``create_json_chat_agent``, both driven by langchain-core's
``FakeMessagesListChatModel`` (same class, same reply texts; only the name of the finishing action
differs: ``FINISH`` vs ``"Final Answer"``), and through LangGraph's prebuilt ``create_react_agent``, driven
by a fake chat model that answers with native tool calls (LangGraph's protocol); all with the same
``StructuredTool``. Each agent is measured pre-built and built inside each run (the web-handler pattern).

Measured per repeat: wall time of the whole run divided by the model steps (11). Reported: the
median over repeats and the ratio react_agent / LangChain. A second, instrumented pass times the
model's ``invoke`` and the tool's ``invoke``/``run`` separately, so each framework's *own* overhead
per step (everything but the model and the tool: the plain run's CPU time less the metered model and tool
time) is reported too.

``--profile`` adds a cProfile of the react_agent runs: the hotspots by self time, and react_agent's own
functions by cumulative time.

    python -m bench.overhead [--repeats 30] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import json
import pstats
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench import _common

NAME = "overhead"
TOOL_CALLS = 10
STEPS = TOOL_CALLS + 1


# ------------------------------------------------------------------------------------------ fixtures
def make_tool() -> Any:
    from langchain_core.tools import StructuredTool

    def lookup(key: str) -> str:
        """Look up the value stored under a key."""
        return lookup_value(key)

    # real types, not the strings ``from __future__ import annotations`` leaves, which langchain-core
    # would re-evaluate on every call (an artefact of this file, not of either framework)
    lookup.__annotations__ = {"key": str, "return": str}

    return StructuredTool.from_function(lookup)


def lookup_value(key: str) -> str:
    """The tool's work (a module attribute, so that :class:`Meter` can time it however the tool is called)."""
    return f"value of {key}"


def replies(finish_name: str) -> list[str]:
    out = [json.dumps({"thought": f"I need the value of k{i}", "action": "lookup", "action_input": {"key": f"k{i}"}})
           for i in range(TOOL_CALLS)]
    out.append(json.dumps({"thought": "I have everything", "action": finish_name, "action_input": "done"}))
    return out


def fake_model(texts: list[str]) -> Any:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    # the fake model cycles through its responses, so one instance serves every repeat
    return FakeMessagesListChatModel(responses=[AIMessage(content=t) for t in texts])


def json_chat_prompt() -> Any:
    """The hub-free default prompt of ``create_json_chat_agent`` (the one its docstring gives)."""
    from bench._peers import langchain_json_chat_prompt

    return langchain_json_chat_prompt()


class ToolCallingFakeModel:
    """Built lazily (langchain-core is imported on use): see :func:`tool_calling_model`."""


def tool_calling_model() -> Any:
    """A chat model that calls ``lookup`` with native tool calls until it has TOOL_CALLS results, then answers.

    Its reply depends only on how many tool results the conversation holds, so one instance serves every
    repeat; ``bind_tools`` returns the model itself (the tools are fixed)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Model(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "tool-calling-fake"

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            done = sum(isinstance(m, ToolMessage) for m in messages)
            if done < TOOL_CALLS:
                message = AIMessage(content="", tool_calls=[
                    {"name": "lookup", "args": {"key": f"k{done}"}, "id": f"call-{done}", "type": "tool_call"}])
            else:
                message = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=message)])

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    global ToolCallingFakeModel
    ToolCallingFakeModel = Model  # type: ignore[misc]
    return Model()


def make_langgraph_agent() -> Callable[[], Any]:
    from langgraph.prebuilt import create_react_agent

    graph = create_react_agent(tool_calling_model(), [make_tool()])

    def run() -> Any:
        result = graph.invoke({"messages": [("user", "Look up the values of k0 to k9.")]},
                              {"recursion_limit": 2 * STEPS + 5})
        assert result["messages"][-1].content == "done" and len(result["messages"]) == 2 * STEPS, result
        return result

    return run


def make_langgraph_agent_per_run() -> Callable[[], Any]:
    """LangGraph's prebuilt agent built (and compiled) inside each run (same tool and model objects)."""
    from langgraph.prebuilt import create_react_agent

    tool, llm = make_tool(), tool_calling_model()

    def run() -> Any:
        graph = create_react_agent(llm, [tool])
        result = graph.invoke({"messages": [("user", "Look up the values of k0 to k9.")]},
                              {"recursion_limit": 2 * STEPS + 5})
        assert result["messages"][-1].content == "done", result
        return result

    return run


def make_react_agent(**options: Any) -> Callable[[], Any]:
    from react_agent import ReactAgent

    agent = ReactAgent(fake_model(replies("FINISH")), [make_tool()], prompts="en",
                       max_iterations=STEPS + 4, **options)

    def run() -> Any:
        result = agent.run("Look up the values of k0 to k9.")
        assert result.status == "finished" and len(result.steps) == STEPS, result
        return result

    return run


def make_react_agent_per_run() -> Callable[[], Any]:
    """The web-handler pattern: the agent is built inside each run (same tool and model objects)."""
    from react_agent import ReactAgent

    tool, llm = make_tool(), fake_model(replies("FINISH"))

    def run() -> Any:
        agent = ReactAgent(llm, [tool], prompts="en", max_iterations=STEPS + 4)
        result = agent.run("Look up the values of k0 to k9.")
        assert result.status == "finished" and len(result.steps) == STEPS, result
        return result

    return run


def make_langchain_agent_per_run() -> Callable[[], Any]:
    """LangChain's agent and executor built inside each run (same tool and model objects)."""
    from langchain_classic.agents import AgentExecutor, create_json_chat_agent

    tool, llm, prompt = make_tool(), fake_model(replies("Final Answer")), json_chat_prompt()

    def run() -> Any:
        agent = create_json_chat_agent(llm, [tool], prompt)
        executor = AgentExecutor(agent=agent, tools=[tool], max_iterations=STEPS + 4, return_intermediate_steps=True)
        result = executor.invoke({"input": "Look up the values of k0 to k9."})
        assert result["output"] == "done" and len(result["intermediate_steps"]) == TOOL_CALLS, result
        return result

    return run


def construction_time(repeats: int = 200) -> dict[str, float]:
    """Median seconds to build a ReactAgent (cached prompt set) and LangChain's agent + executor."""
    from langchain_classic.agents import AgentExecutor, create_json_chat_agent

    from react_agent import ReactAgent

    tool, prompt = make_tool(), json_chat_prompt()
    llm = fake_model(replies("FINISH"))
    times: dict[str, list[float]] = {"react_agent": [], "langchain_agent_executor": []}
    ReactAgent(llm, [tool], prompts="en")  # the prompt set is compiled once per process
    for _ in range(repeats):
        start = time.perf_counter()
        ReactAgent(llm, [tool], prompts="en")
        times["react_agent"].append(time.perf_counter() - start)
        start = time.perf_counter()
        AgentExecutor(agent=create_json_chat_agent(llm, [tool], prompt), tools=[tool])
        times["langchain_agent_executor"].append(time.perf_counter() - start)
    return {k: _common.median(v) for k, v in times.items()}


def make_langchain_agent() -> Callable[[], Any]:
    from langchain_classic.agents import AgentExecutor, create_json_chat_agent

    tool = make_tool()
    llm = fake_model(replies("Final Answer"))
    agent = create_json_chat_agent(llm, [tool], json_chat_prompt())
    executor = AgentExecutor(agent=agent, tools=[tool], max_iterations=STEPS + 4, return_intermediate_steps=True)

    def run() -> Any:
        result = executor.invoke({"input": "Look up the values of k0 to k9."})
        assert result["output"] == "done" and len(result["intermediate_steps"]) == TOOL_CALLS, result
        return result

    return run


# ------------------------------------------------------------------------------------------ timing
class Meter:
    """Time spent inside the model (``invoke``/``_generate``) and the tool (``invoke``/``run``, or its argument
    parsing and function), outermost calls only."""

    def __init__(self) -> None:
        self.model = 0.0
        self.tool = 0.0
        self.calls = {"model": 0, "tool": 0}
        self._depth = 0

    def wrap(self, func: Callable[..., Any], bucket: str) -> Callable[..., Any]:
        meter = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if meter._depth:
                return func(*args, **kwargs)
            meter._depth += 1
            meter.calls[bucket] += 1
            start = CLOCK()
            try:
                return func(*args, **kwargs)
            finally:
                setattr(meter, bucket, getattr(meter, bucket) + CLOCK() - start)
                meter._depth -= 1

        return timed

    @contextlib.contextmanager
    def installed(self) -> Iterator[Meter]:
        from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
        from langchain_core.tools import StructuredTool

        import bench.overhead as this

        # the tool's time: its invoke/run and its function
        originals: list[tuple[Any, str, str]] = [
            (FakeMessagesListChatModel, "invoke", "model"), (FakeMessagesListChatModel, "_generate", "model"),
            (ToolCallingFakeModel, "invoke", "model"), (ToolCallingFakeModel, "_generate", "model"),
            (StructuredTool, "invoke", "tool"), (StructuredTool, "run", "tool"),
            (this, "lookup_value", "tool")]
        saved = [(cls, attr, cls.__dict__.get(attr)) for cls, attr, _ in originals]
        try:
            for cls, attr, bucket in originals:
                setattr(cls, attr, self.wrap(getattr(cls, attr), bucket))
            yield self
        finally:
            for cls, attr, value in saved:
                if value is None:
                    delattr(cls, attr)
                else:
                    setattr(cls, attr, value)


CLOCK = time.process_time
"""CPU time of this process, all threads (LangChain's RunnableParallel formats the scratchpad in a worker
thread): the machine is shared, so wall time would also count other processes' load."""


@contextlib.contextmanager
def _quiet_gc() -> Iterator[None]:
    """Collect, then keep the collector off while timing (as ``timeit`` does)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def per_step_times(runs: dict[str, Callable[[], Any]], repeats: int,
                   warmup: int = 3) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Seconds per model step, one value per repeat, for each run (CPU time, wall time); the runs are
    interleaved per repeat."""
    for run in runs.values():
        for _ in range(warmup):
            run()
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    wall: dict[str, list[float]] = {name: [] for name in runs}
    with _quiet_gc():
        for _ in range(repeats):
            for name, run in runs.items():
                start, start_wall = CLOCK(), time.perf_counter()
                run()
                cpu[name].append((CLOCK() - start) / STEPS)
                wall[name].append((time.perf_counter() - start_wall) / STEPS)
    return cpu, wall


def meter_bias(calls: int = 20_000) -> float:
    """Seconds a :class:`Meter` bucket gains per wrapped call of a function that does nothing: the part of
    its clock readings that falls inside the timed interval (subtracted from the model and tool times)."""
    meter = Meter()
    nothing = meter.wrap(lambda: None, "model")
    with _quiet_gc():
        for _ in range(calls):
            nothing()
    return meter.model / calls


def overhead_times(run: Callable[[], Any], repeats: int, warmup: int = 2) -> dict[str, float]:
    """Median seconds per step: total, model, tool, and the rest (the framework's own overhead).

    Each repeat runs twice: plain, for the total, and with the :class:`Meter` installed, for the time inside
    the model and the tool (less the meter's calibrated bias per call). The own overhead is the plain total
    less those: the meter's wrappers cost CPU time too (about 1 µs per wrapped call, and they defeat
    per-function caches keyed by the wrapped method), which is neither framework's."""
    totals, metered, models, tools = [], [], [], []
    bias = meter_bias()
    for _ in range(warmup):
        run()
    with _quiet_gc():
        for _ in range(repeats):
            start = CLOCK()
            run()
            totals.append((CLOCK() - start) / STEPS)
            meter = Meter()
            with meter.installed():
                start = CLOCK()
                run()
                metered.append((CLOCK() - start) / STEPS)
            models.append(max(0.0, meter.model - bias * meter.calls["model"]) / STEPS)
            tools.append(max(0.0, meter.tool - bias * meter.calls["tool"]) / STEPS)
    med = _common.median
    total, model, tool = med(totals), med(models), med(tools)
    return {"total_s": total, "model_s": model, "tool_s": tool, "own_s": total - model - tool,
            "metered_total_s": med(metered), "meter_bias_s_per_call": bias}


# ------------------------------------------------------------------------------------------ profile
def profile_react(repeats: int, top: int = 25) -> dict[str, Any]:
    run = make_react_agent()
    run()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeats):
        run()
    prof.disable()
    stats = pstats.Stats(prof)
    rows = []
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"function": f"{_short(filename)}:{line}({func})", "calls_per_run": ncalls / repeats,
                     "self_us_per_step": 1e6 * tottime / repeats / STEPS,
                     "cum_us_per_step": 1e6 * cumtime / repeats / STEPS})
    by_self = sorted(rows, key=lambda r: r["self_us_per_step"], reverse=True)[:top]
    own = [r for r in rows if r["function"].startswith("react_agent/")]
    by_cum_own = sorted(own, key=lambda r: r["cum_us_per_step"], reverse=True)[:top]
    groups: dict[str, float] = {}
    for r in rows:
        groups[_group(r["function"])] = groups.get(_group(r["function"]), 0.0) + r["self_us_per_step"]
    return {"repeats": repeats, "top_self": by_self, "top_cumulative_react_agent": by_cum_own,
            "self_time_by_package_us_per_step": dict(sorted(groups.items(), key=lambda kv: -kv[1]))}


def _short(filename: str) -> str:
    for marker in ("site-packages/", f"{_common.ROOT}/", "lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _group(function: str) -> str:
    head = function.split(":", 1)[0]
    if head.startswith("~") or head.startswith("<"):
        return "builtins"
    return head.split("/", 1)[0] if "/" in head else head


def run(*, repeats: int = 30, profile: bool = False) -> dict[str, Any]:
    _common.require("langchain_classic", "langchain-classic")
    _common.require("langgraph", "langgraph")
    react = make_react_agent()
    react_all = make_react_agent(history_window=None)
    lang = make_langchain_agent()
    graph = make_langgraph_agent()
    times, walls = per_step_times({"react_agent": react, "react_agent_full_history": react_all,
                                   "langchain_agent_executor": lang, "langgraph_create_react_agent": graph,
                                   "react_agent_built_per_run": make_react_agent_per_run(),
                                   "langchain_built_per_run": make_langchain_agent_per_run(),
                                   "langgraph_built_per_run": make_langgraph_agent_per_run()}, repeats)
    med = {k: _common.median(v) for k, v in times.items()}
    med_wall = {k: _common.median(v) for k, v in walls.items()}
    breakdown = {
        "react_agent": overhead_times(react, repeats),
        "react_agent_full_history": overhead_times(react_all, repeats),
        "langchain_agent_executor": overhead_times(lang, repeats),
        "langgraph_create_react_agent": overhead_times(graph, repeats),
    }
    results: dict[str, Any] = {
        "steps_per_run": STEPS,
        "median_s_per_step": med,
        "median_wall_s_per_step": med_wall,
        "ratio_wall_react_to_langchain": med_wall["react_agent"] / med_wall["langchain_agent_executor"],
        "ratio_react_to_langchain": med["react_agent"] / med["langchain_agent_executor"],
        "ratio_react_full_history_to_langchain": med["react_agent_full_history"] / med["langchain_agent_executor"],
        "ratio_built_per_run": med["react_agent_built_per_run"] / med["langchain_built_per_run"],
        "ratio_react_to_langgraph": med["react_agent"] / med["langgraph_create_react_agent"],
        "ratio_built_per_run_to_langgraph": med["react_agent_built_per_run"] / med["langgraph_built_per_run"],
        "construction_median_s": construction_time(),
        "breakdown_median_s_per_step": breakdown,
        "targets": {"ratio_max": 0.25, "own_overhead_max_s": 0.0001, "construction_max_s": 0.001},
        "samples_s_per_step": times,
    }
    if profile:
        results["profile"] = profile_react(max(10, repeats // 2))
    return results


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    breakdown = results["breakdown_median_s_per_step"]
    labels = {"react_agent": "react_agent\n(history_window=3)", "react_agent_full_history":
              "react_agent\n(history_window=None)", "langchain_agent_executor": "LangChain\nAgentExecutor+json_chat",
              "langgraph_create_react_agent": "LangGraph\ncreate_react_agent"}
    names = list(labels)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    bottoms = [0.0] * len(names)
    for part, color, title in (("own_s", "#d95f02", "framework overhead"), ("model_s", "#7570b3", "fake model invoke"),
                               ("tool_s", "#1b9e77", "tool invoke")):
        values = [1e3 * breakdown[n][part] for n in names]
        ax.bar([labels[n] for n in names], values, bottom=bottoms, color=color, label=title)
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    ax.set_ylabel("ms per model step (median)")
    ax.set_title("Per-step time with a fake model (10 tool calls + finish)")
    ax.legend(fontsize=8)
    return _common.save_figure(fig, path)


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    med, br = r["median_s_per_step"], r["breakdown_median_s_per_step"]

    def us(seconds: float) -> str:
        return f"{1e6 * seconds:.0f} µs"

    rows = []
    for key, label in (("react_agent", "react_agent `ReactAgent` (history_window=3, default)"),
                       ("react_agent_full_history", "react_agent `ReactAgent` (history_window=None)"),
                       ("langchain_agent_executor", "LangChain `AgentExecutor` + `create_json_chat_agent`"),
                       ("langgraph_create_react_agent", "LangGraph `create_react_agent` (native tool calls)")):
        if key not in br:
            continue
        b = br[key]
        wall = r.get("median_wall_s_per_step", {}).get(key)
        rows.append([label, us(med[key]), us(b["own_s"]), us(b["model_s"]), us(b["tool_s"]),
                     us(wall) if wall is not None else "n/a"])
    parts = [
        f"Same scripted run ({r['steps_per_run'] - 1} tool calls + finish) with langchain-core's "
        "`FakeMessagesListChatModel` and the same `StructuredTool`; "
        f"median over {len(r['samples_s_per_step']['react_agent'])} repeats.",
        "",
        _common.table(["agent", "CPU time per step", "own overhead per step", "model invoke", "tool invoke",
                       "wall time per step"], rows),
        "",
        f"**Per step, pre-built: {r['ratio_react_to_langchain']:.2f}x LangChain's `AgentExecutor`**"
        + (f" and **{r['ratio_react_to_langgraph']:.2f}x LangGraph's `create_react_agent`**"
           if "ratio_react_to_langgraph" in r else "")
        + f" (full history: {r['ratio_react_full_history_to_langchain']:.2f}x AgentExecutor; target <= "
        f"{r['targets']['ratio_max']}x). react_agent's own overhead: **{us(br['react_agent']['own_s'])} per step** "
        f"(target < {1e6 * r['targets']['own_overhead_max_s']:.0f} µs).",
        "",
        f"**Agent built inside each run** (the web-handler pattern, every framework): "
        f"{us(med['react_agent_built_per_run'])} against {us(med['langchain_built_per_run'])} per step "
        f"(AgentExecutor), **{r['ratio_built_per_run']:.2f}x**"
        + (f"; against {us(med['langgraph_built_per_run'])} (create_react_agent, compiled in each run), "
           f"**{r['ratio_built_per_run_to_langgraph']:.2f}x**" if "ratio_built_per_run_to_langgraph" in r else "")
        + f" (target <= {r['targets']['ratio_max']}x). Building a `ReactAgent` with "
        f"a cached prompt set takes {us(r['construction_median_s']['react_agent'])} (target < "
        f"{1e6 * r['targets']['construction_max_s']:.0f} µs); LangChain's agent and executor "
        f"{us(r['construction_median_s']['langchain_agent_executor'])}.",
        "",
        f"Wall-clock ratio to AgentExecutor: {r['ratio_wall_react_to_langchain']:.2f}x (noisier on a shared machine). "
        "CPU time is the process's, all threads: LangChain's `RunnablePassthrough.assign` formats the scratchpad "
        "in a thread pool it creates on every step, work that a per-thread clock would miss.",
        "",
        "All three frameworks use only public calls: react_agent calls the model's `invoke` and the tool's "
        "`invoke`, as AgentExecutor and LangGraph do. "
        "The CPU and wall times per step come from one pass in which the configurations run in turn, "
        "each right after the others; the own overhead and the model and tool times from a separate pass of "
        "each agent alone, which is why the first column is more than their sum. "
        "*Own overhead* is the run's CPU time minus the time inside the model and the tool, divided by the "
        "model steps. Each repeat runs twice: plain, for the CPU time, and metered, for the model's and the "
        "tool's time (less the meter's clock bias per call, calibrated on a function that does nothing), so the "
        "meter's wrappers are not counted as any framework's overhead. The model's time is measured by "
        "wrapping its `invoke`, the tool's by wrapping its `invoke`/`run` and its function; only the outermost "
        "of nested wrapped calls counts, so langchain-core's `invoke` machinery (callbacks, run trees) is model "
        "or tool time for every framework alike.",
    ]
    prof = r.get("profile")
    if prof:
        parts += ["", "Hotspots of a react_agent run (cProfile, self time per step, top 12):", "",
                  _common.table(["function", "calls/run", "self µs/step", "cumulative µs/step"],
                                [[f"`{p['function']}`", f"{p['calls_per_run']:.0f}", f"{p['self_us_per_step']:.1f}",
                                  f"{p['cum_us_per_step']:.1f}"] for p in prof["top_self"][:12]]),
                  "", "react_agent's own functions by cumulative time per step (top 12):", "",
                  _common.table(["function", "calls/run", "self µs/step", "cumulative µs/step"],
                                [[f"`{p['function']}`", f"{p['calls_per_run']:.0f}", f"{p['self_us_per_step']:.1f}",
                                  f"{p['cum_us_per_step']:.1f}"]
                                 for p in prof["top_cumulative_react_agent"][:12]])]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per agent (default 30)")
    parser.add_argument("--profile", action="store_true", help="cProfile the react_agent runs (hotspots)")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    results = run(repeats=args.repeats, profile=args.profile)
    config = {"repeats": args.repeats, "tool_calls": TOOL_CALLS, "profile": args.profile}
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
