"""Benchmark: the agent behind ``react-agent serve`` against the same agent behind a minimal FastAPI app.

Both servers run in their own process under uvicorn on loopback; the client sends N concurrent requests
(``POST /runs?wait=true`` to the serve app, which journals every run to disk and runs it in its worker
pool with ``max_concurrency`` N; ``POST /run`` to a hand-written app whose handler is ``await agent.arun``)
and times each one. The model replies after 50 ms (``FunctionChatModel(delay=0.05)``), 2 model calls per
run (a tool call, then the answer), so a run takes at least 100 ms. Reported: requests per second over the
whole batch and p50/p95 latency per request, median over the repeats; the serve app is measured twice,
with its journals in the temporary folder (on disk) and in ``/dev/shm`` (memory, where it exists), to show
what the durable writes cost. Run: ``python -m bench.serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench import _common

NAME = "serve"
LATENCY = 0.05
CALLS = 2
MEMORY_DIR = "/dev/shm"


class Body(BaseModel):
    """The request of the hand-written app."""

    task: str


def make_agent() -> Any:
    from langchain_core.tools import tool

    from react_agent import ReactAgent
    from react_agent.testing import FunctionChatModel

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    def reply(messages: list[Any]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        if "value of k" in text:
            return json.dumps({"thought": "done", "action": "FINISH", "action_input": "done"})
        return json.dumps({"thought": "look", "action": "lookup", "action_input": {"key": "k"}})

    return ReactAgent(FunctionChatModel(function=reply, delay=LATENCY), [lookup], prompts="en",
                      max_iterations=CALLS + 2)


def plain_app() -> Any:
    """The hand-written baseline: one endpoint awaiting the agent's ``arun``."""
    from fastapi import FastAPI

    agent = make_agent()
    app = FastAPI()

    @app.post("/run")
    async def run(body: Body) -> dict[str, Any]:
        result = await agent.arun(body.task)
        return {"status": result.status, "output": result.output}

    @app.get("/healthz")
    async def health() -> dict[str, bool]:
        return {"ok": True}

    return app


def _serve(kind: str, port: int, concurrency: int, journal_dir: str) -> None:
    import uvicorn

    if kind == "plain":
        app = plain_app()
    else:
        from react_agent.serve import create_app

        app = create_app(make_agent(), journal_dir=journal_dir, max_concurrency=concurrency, chat_api=False)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _measure(url: str, path: str, n: int) -> dict[str, Any]:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=n + 10)) as client:
        async def one(i: int) -> float:
            start = time.perf_counter()
            response = await client.post(path, json={"task": f"Look up k (request {i})."})
            response.raise_for_status()
            body = response.json()
            status = body["result"]["status"] if "result" in body else body["status"]
            assert status == "finished", body
            return time.perf_counter() - start

        await asyncio.gather(*(one(-i - 1) for i in range(5)))  # warm-up
        start = time.perf_counter()
        latencies = await asyncio.gather(*(one(i) for i in range(n)))
        seconds = time.perf_counter() - start
    ordered = sorted(latencies)
    return {"requests_per_s": n / seconds, "p50_s": statistics.median(ordered),
            "p95_s": ordered[max(0, round(0.95 * len(ordered)) - 1)], "wall_s": seconds}


def _with_server(kind: str, n: int, repeats: int, where: str | None = None) -> list[dict[str, Any]]:
    import httpx

    port = _free_port()
    with tempfile.TemporaryDirectory(dir=where) as journals:
        env = {**os.environ, "PYTHONPATH": str(_common.ROOT)}
        process = subprocess.Popen([sys.executable, "-m", "bench.serve", "--server", kind, "--port", str(port),
                                    "--concurrency", str(n), "--journal-dir", journals], env=env, cwd=_common.ROOT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise SystemExit(f"the {kind} server did not start") from None
                time.sleep(0.1)
            path = "/runs?wait=true" if kind == "serve" else "/run"
            return [asyncio.run(_measure(url, path, n)) for _ in range(repeats)]
        finally:
            process.terminate()
            process.wait(timeout=30)


def run(*, n: int = 100, repeats: int = 3) -> dict[str, Any]:
    _common.require("fastapi")
    _common.require("uvicorn")
    out: dict[str, Any] = {"load_average_1m_before": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
                           "latency_s": LATENCY, "calls_per_run": CALLS, "concurrent_requests": n,
                           "ideal_run_s": CALLS * LATENCY}
    sides = [("serve", "serve", None), ("plain", "plain", None)]
    if Path(MEMORY_DIR).is_dir():  # the journals in memory: what the fsync-ed writes cost on this disk
        sides.insert(1, ("serve_memory_journals", "serve", MEMORY_DIR))
    for name, kind, where in sides:
        rounds = _with_server(kind, n, repeats, where)
        out[name] = {key: _common.median([r[key] for r in rounds]) for key in ("requests_per_s", "p50_s", "p95_s")}
        out[name]["rounds"] = rounds
    out["journal_dir"] = tempfile.gettempdir()
    out["load_average_1m_after"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    out["ratio_requests_per_s"] = out["serve"]["requests_per_s"] / out["plain"]["requests_per_s"]
    return out


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    sides = (("react-agent serve (journals fsync-ed to disk, worker pool)", "serve"),
             (f"react-agent serve, journals in memory ({MEMORY_DIR})", "serve_memory_journals"),
             ("hand-written FastAPI app (`await agent.arun`, no journal)", "plain"))
    rows = [[name, f"{r[key]['requests_per_s']:.0f}", f"{1000 * r[key]['p50_s']:.0f}", f"{1000 * r[key]['p95_s']:.0f}"]
            for name, key in sides if key in r]
    return "\n".join([
        f"{r['concurrent_requests']} concurrent requests, each one run of a `ReactAgent` on a chat model with "
        f"{1000 * r['latency_s']:.0f} ms latency and {r['calls_per_run']} model calls per run (at least "
        f"{1000 * r['ideal_run_s']:.0f} ms per run); median of the repeats.", "",
        _common.table(["server", "requests/s", "p50 latency, ms", "p95 latency, ms"], rows), "",
        f"serve handles {r['ratio_requests_per_s']:.2f}x the requests per second of the hand-written app.",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100, help="concurrent requests (default: 100)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--server", choices=("serve", "plain"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--journal-dir", default=str(Path(tempfile.gettempdir()) / "bench-serve"),
                        help=argparse.SUPPRESS)
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    if args.server:  # the server process of one side
        _serve(args.server, args.port, args.concurrency, args.journal_dir)
        return 0
    results = run(n=args.requests, repeats=args.repeats)
    return _common.publish(NAME, {"requests": args.requests, "repeats": args.repeats}, results, args,
                           plot=lambda _results, _path: None, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
