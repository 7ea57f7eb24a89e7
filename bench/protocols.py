"""Benchmark 8: the text protocol against native tool calls, and parallel against sequential calls.

Both parts drive the real ``langchain_openai.ChatOpenAI`` client against an OpenAI-compatible server on
loopback (a stdlib ``http.server`` in this module), so each protocol's requests go over the wire as a
real deployment sends them: the text protocol's step prompt, or the native protocol's messages with the
``tools`` schemas.

1. **Calls and prompt size per task.** A scripted *oracle* server answers each request with the next
   decision of the ideal solution, in the format the protocol expects (a JSON action or a JSON list of
   actions for the text protocol, ``tool_calls`` for the native one). The oracle never decides how many
   calls are made; the protocol and ``max_parallel_calls`` do. Reported per configuration and task: model
   calls, the characters of every request's prompt (messages, plus the ``tools`` schemas a native request
   carries) with a rough token figure (characters / 4), and seconds.
2. **Parallel against sequential.** Three independent tools that each sleep ``--latency`` seconds, one
   task that needs all three: wall time per configuration, under ``run`` (a thread pool) and ``arun``
   (tasks).

The decisions are scripted, so these two parts measure the protocols' cost and the concurrency, not a
model's accuracy with each protocol.

3. **First decisions of a served model** (``--server-model``): the embedded model served by llama-cpp-python's
   OpenAI-compatible server with the ``chatml-function-calling`` chat format, on the first ``--cases`` cases of
   BFCL ``simple_python`` (development data): one decision per case and protocol (``max_iterations=1``),
   scored by BFCL's rules as in ``bench.bfcl``; the text protocol with the decision's JSON schema in a
   ``json_object`` ``response_format`` (constrained; the server's form), the native one with the tools bound
   (``tool_choice`` left to the model).

    python -m bench.protocols [--latency 0.5] [--repeats 3] [--server-model [--cases 8]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench import _common

NAME = "protocols"

Calls = list[tuple[str, dict[str, Any]]]

TASKS: list[dict[str, Any]] = [
    {"id": "one", "task": "What is the weather in Oslo?", "plan": [[("weather", {"city": "Oslo"})]],
     "answer": "Oslo: sunny, 18 C."},
    {"id": "three", "task": "Compare the weather in Oslo, Rome and Lima.",
     "plan": [[("weather", {"city": "Oslo"}), ("weather", {"city": "Rome"}), ("weather", {"city": "Lima"})]],
     "answer": "All three are sunny; Rome is the warmest."},
    {"id": "chain", "task": "Convert 100 EUR to NOK, then tell me what that buys in Oslo.",
     "plan": [[("convert", {"amount": 100, "source": "EUR", "target": "NOK"})], [("prices", {"city": "Oslo"})]],
     "answer": "About 1150 NOK: a dinner for two."},
]

CONFIGS = {"text": {"protocol": "text"}, "text_parallel": {"protocol": "text", "max_parallel_calls": 3},
           "native": {"protocol": "native"}, "native_sequential": {"protocol": "native", "max_parallel_calls": 1}}
LABELS = {"text": "text, one call per decision", "text_parallel": "text, max_parallel_calls=3",
          "native": "native (every call of a reply)", "native_sequential": "native, max_parallel_calls=1"}


def decisions(plan: Sequence[Calls], parallel: bool) -> list[Calls]:
    """The oracle's decisions for a plan: each step's calls together, or one call per decision."""
    return [list(step) for step in plan] if parallel else [[call] for step in plan for call in step]


def text_reply(calls: Calls | None, answer: str) -> str:
    if calls is None:
        return json.dumps({"thought": "The results answer the task.", "action": "FINISH", "action_input": answer})
    items = [{"thought": "I need this result.", "action": name, "action_input": args} for name, args in calls]
    return json.dumps(items[0] if len(items) == 1 else items)


class Oracle:
    """The scripted server: OpenAI chat completions answering with the script's next decision."""

    def __init__(self) -> None:
        self.script: list[tuple[str, Calls | None, str]] = []
        self.prompt_chars: list[int] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                data = json.dumps(owner.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def load(self, protocol: str, plan: Sequence[Calls], answer: str, parallel: bool) -> None:
        steps: list[Calls | None] = [*decisions(plan, parallel), None]
        with self.lock:
            self.script = [(protocol, calls, answer) for calls in steps]
            self.prompt_chars = []

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        size = sum(len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or []))
                   for m in body.get("messages", []))
        size += len(json.dumps(body["tools"])) if body.get("tools") else 0
        with self.lock:
            self.prompt_chars.append(size)
            protocol, calls, answer = self.script.pop(0) if self.script else ("text", None, "script exhausted")
        if protocol == "native" and calls is not None:
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{len(self.prompt_chars)}_{k}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}} for k, (name, args) in enumerate(calls)]}
        elif protocol == "native":
            message = {"role": "assistant", "content": answer}
        else:
            message = {"role": "assistant", "content": text_reply(calls, answer)}
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "oracle",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": size // 4, "completion_tokens": 10, "total_tokens": size // 4 + 10}}

    @contextmanager
    def running(self) -> Iterator[Oracle]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()


def make_tools(latency: float) -> list[Any]:
    from langchain_core.tools import tool

    @tool
    def weather(city: str) -> str:
        """The current weather in a city."""
        time.sleep(latency)
        return f"{city}: sunny, 18 C"

    @tool
    def convert(amount: float, source: str, target: str) -> str:
        """Convert an amount of money from one currency to another."""
        time.sleep(latency)
        return f"{amount} {source} = {amount * 11.5:.0f} {target}"

    @tool
    def prices(city: str) -> str:
        """Typical prices in a city."""
        time.sleep(latency)
        return f"{city}: dinner for two 1100 NOK"

    return [weather, convert, prices]


def build_agent(oracle: Oracle, config: dict[str, Any], latency: float) -> Any:
    from langchain_openai import ChatOpenAI

    from react_agent import ReactAgent

    llm = ChatOpenAI(model="oracle", base_url=oracle.base_url, api_key="sk-loopback", max_retries=0, timeout=30)
    return ReactAgent(llm, make_tools(latency), prompts="en", max_iterations=8, **config)


def calls_and_tokens(oracle: Oracle) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, config in CONFIGS.items():
        rows = []
        agent = build_agent(oracle, config, 0.0)
        parallel = config.get("max_parallel_calls", 3 if config["protocol"] == "native" else 1) > 1
        for task in TASKS:
            oracle.load(config["protocol"], task["plan"], task["answer"], parallel)
            started = time.monotonic()
            result = agent.run(task["task"])
            rows.append({"task": task["id"], "status": result.status, "correct": result.output == task["answer"],
                         "llm_calls": result.llm_calls, "prompt_chars": sum(oracle.prompt_chars),
                         "approx_tokens": sum(oracle.prompt_chars) // 4,
                         "seconds": round(time.monotonic() - started, 4)})
        out[key] = rows
    return out


def wall_times(oracle: Oracle, latency: float, repeats: int) -> dict[str, Any]:
    task = TASKS[1]
    out: dict[str, Any] = {}
    for key, config in CONFIGS.items():
        agent = build_agent(oracle, config, latency)
        parallel = config.get("max_parallel_calls", 3 if config["protocol"] == "native" else 1) > 1
        for mode in ("run", "arun"):
            times = []
            for _ in range(repeats):
                oracle.load(config["protocol"], task["plan"], task["answer"], parallel)
                started = time.monotonic()
                result = agent.run(task["task"]) if mode == "run" else asyncio.run(agent.arun(task["task"]))
                times.append(time.monotonic() - started)
                assert result.status == "finished", result
            median = statistics.median(times)
            out[f"{key}/{mode}"] = {"median_s": round(median, 3), "runs": [round(t, 3) for t in times],
                                    "latencies": round(median / latency, 2)}
    return out


@contextmanager
def llama_server(model_path: str | None) -> Iterator[str]:
    """llama-cpp-python's server with a function-calling chat format on a free loopback port: its base URL."""
    import socket
    import subprocess
    import sys

    from react_agent.models import default_model_path

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", model_path or str(default_model_path()),
               "--chat_format", "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "4096"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("llama_cpp.server did not start: pip install 'llama-cpp-python[server]'") from None
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=30)


def first_decisions(base_url: str, cases: int) -> dict[str, Any]:
    """One decision per case and protocol from the served model, scored by BFCL's rules."""
    from langchain_openai import ChatOpenAI

    from bench import bfcl
    from bench._bfcl_data import load_category, score, to_tool
    from react_agent import FINISH, ReactAgent

    llm = ChatOpenAI(model="local", base_url=base_url, api_key="sk-loopback", max_retries=0, timeout=300,
                     temperature=0.0, max_tokens=256)
    options = {"text": {"constrained": "json_object"}, "native": {"protocol": "native"}}
    records: list[dict[str, Any]] = []
    (path, answers), = bfcl.category_files(["simple_python"])
    for case in load_category(path, answers, limit=cases):
        tools = [to_tool(doc) for doc in case.functions]
        for key, extra in options.items():
            agent = ReactAgent(llm, tools, prompts="en", max_iterations=1, final_answer="never", retry=None,
                               **extra)
            started = time.monotonic()
            result = agent.run(case.question)
            step = result.steps[0] if result.steps else None
            if step is None or step.action is None:
                decision: dict[str, Any] = {"kind": "unparseable" if step else "error"}
            elif step.action == FINISH:
                decision = {"kind": "finish"}
            else:
                decision = {"kind": "call", "name": step.action, "args": step.action_input}
            correct, _ = score(case, decision)
            records.append({"id": case.id, "protocol": key, "kind": decision["kind"], "correct": correct,
                            "llm_calls": result.llm_calls, "tokens": result.usage.total_tokens,
                            "seconds": round(time.monotonic() - started, 2), "status": result.status})
    summary = {}
    for key in options:
        mine = [r for r in records if r["protocol"] == key]
        summary[key] = {"cases": len(mine), "correct": sum(r["correct"] for r in mine),
                        "calls": sum(r["kind"] == "call" for r in mine),
                        "finish": sum(r["kind"] == "finish" for r in mine),
                        "unparseable": sum(r["kind"] in ("unparseable", "error") for r in mine),
                        "tokens_per_case": round(statistics.mean(r["tokens"] for r in mine), 1) if mine else 0,
                        "seconds_per_case": round(statistics.mean(r["seconds"] for r in mine), 2) if mine else 0}
    return {"summary": summary, "records": records}


def run(latency: float, repeats: int, *, server_model: bool = False, cases: int = 8,
        model_path: str | None = None) -> dict[str, Any]:
    _common.require("langchain_openai", "langchain-openai")
    oracle = Oracle()
    with oracle.running():
        results = {"tasks": [{"id": t["id"], "task": t["task"]} for t in TASKS], "latency": latency,
                   "calls": calls_and_tokens(oracle), "wall": wall_times(oracle, latency, repeats)}
    if server_model:
        with llama_server(model_path) as base_url:
            results["served"] = first_decisions(base_url, cases)
    return results


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    ids = [t["id"] for t in r["tasks"]]
    lines = ["Tasks: " + "; ".join(f"`{t['id']}`: {t['task']}" for t in r["tasks"]) + ".", "",
             "Model calls, prompt characters (≈ tokens at 4 characters each) and seconds per task; every run ends "
             "with the right answer:", "",
             "| configuration | " + " | ".join(f"`{i}` calls | `{i}` prompt chars (≈ tokens)" for i in ids) + " |",
             "|---|" + "---|---|" * len(ids)]
    for key, rows in r["calls"].items():
        cells = [f"{row['llm_calls']} | {row['prompt_chars']} (≈ {row['approx_tokens']})" for row in rows]
        lines.append(f"| {LABELS[key]} | " + " | ".join(cells) + " |")
    wrong = [f"{key}/{row['task']}" for key, rows in r["calls"].items() for row in rows if not row["correct"]]
    if wrong:
        lines += ["", "Not the right answer: " + ", ".join(wrong)]
    lines += ["", f"Three independent tools of {r['latency']} s each in one task (`three`): wall time, median "
              "(in tool latencies):", "", "| configuration | `run` | `arun` |", "|---|---|---|"]
    for key in CONFIGS:
        sync, asy = r["wall"][f"{key}/run"], r["wall"][f"{key}/arun"]
        lines.append(f"| {LABELS[key]} | {sync['median_s']} s ({sync['latencies']}x) | "
                     f"{asy['median_s']} s ({asy['latencies']}x) |")
    served = r.get("served")
    if served:
        lines += ["", "First decisions of the embedded model served by llama-cpp-python (`chatml-function-calling`) "
                  "on BFCL `simple_python`:", "",
                  "| protocol | correct | tool calls | FINISH | unparseable | tokens / case | s / case |",
                  "|---|---|---|---|---|---|---|"]
        for key, s in served["summary"].items():
            lines.append(f"| {key} | {s['correct']}/{s['cases']} | {s['calls']} | {s['finish']} | "
                         f"{s['unparseable']} | {s['tokens_per_case']} | {s['seconds_per_case']} |")
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    keys = list(CONFIGS)
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.barh([LABELS[k] for k in keys], [results["wall"][f"{k}/run"]["median_s"] for k in keys])
    ax.set_xlabel(f"seconds (three tools of {results['latency']:.2f} s each, run)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.protocols", description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each tool sleeps (default 0.5)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per configuration for the wall time")
    parser.add_argument("--server-model", action="store_true",
                        help="also score first decisions of the embedded model behind llama-cpp-python's server")
    parser.add_argument("--cases", type=int, default=8, help="BFCL simple_python cases for --server-model")
    parser.add_argument("--model-path", default=None, help="a GGUF file for --server-model (default: embedded)")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    results = run(args.latency, args.repeats, server_model=args.server_model, cases=args.cases,
                  model_path=args.model_path)
    config = {"latency": args.latency, "repeats": args.repeats, "server_model": args.server_model,
              "cases": args.cases}
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
