"""The embedded models side by side: demo, seconds per step, RAM, download size, BFCL first decisions.

For each catalogue model (``react_agent.models.local._catalog.CATALOG``), each measurement runs in a fresh child
process (so its peak RSS is its own):

* ``demo``: ``react-agent demo --lang en|ru --model local:NAME`` with a trace; whole-run success (both seed
  tasks finished, Ivan and Viacheslav in the database), wall time of the process (run twice on one empty
  ``prompt_cache_dir``: the second process loads the prompt the first evaluated), the model's seconds per
  step (the first step of the process is ``cold``: nothing cached; the later ones ``warm``), prompt tokens
  evaluated and reused per step, and the time decoding as many tokens as a warm step's answer has takes (a fully
  cached prompt decoded again, no grammar: the issue's speed target compares a warm step with it; the answer's
  tokens count whether the step decoded them or wrote them as text every answer shares);
* ``bfcl``: BFCL first decisions on the DEVELOPMENT categories simple_python and irrelevance (``--limit``
  cases each, evenly spread; never the reserved ``live_*`` ones) with the product's set-up for small models
  (``en-compact``, examples generated from the tools' schemas, the default techniques).

    python -m bench.local_models [--models NAME ...] [--limit 20] [--skip-bfcl] [--skip-demo]

Writes bench/results/local_models.json (one entry per model, merged with earlier runs of other models; a skipped
measurement keeps the model's earlier one).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import _common

NAME = "local_models"
BFCL_CATEGORIES = ("simple_python", "irrelevance")
DEFAULT_LIMIT = 20


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: KiB


def child_demo(name: str, lang: str, states: str) -> dict[str, Any]:
    """One ``react-agent demo`` in this process, measured, keeping evaluated prompts in the folder ``states``."""
    from react_agent import cli

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.jsonl"
        out = io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stdout(out), _common.quiet_stderr():
            code = cli.main(["demo", "--lang", lang, "--model", f"local:{name}", "--trace", str(trace),
                             "-o", f"prompt_cache_dir={states}"])
        wall = time.monotonic() - started
        records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    text = out.getvalue()
    steps = [r for r in records if r.get("type") == "step"]
    results = [r for r in records if r.get("type") == "result"]
    seconds = [float(s["duration_s"]) for s in steps]
    outputs = [int((s.get("usage") or {}).get("output_tokens", 0)) for s in steps]
    return {
        "lang": lang, "exit_code": code, "wall_s": round(wall, 1),
        "ivan_registered": "Ivan registered: yes" in text,
        "viacheslav_registered": "Viacheslav registered: yes" in text,
        "statuses": [r.get("status") for r in results],
        "success": code == 0 and "Viacheslav registered: yes" in text and "Ivan registered: yes" in text
        and all(r.get("status") == "finished" for r in results),
        "steps": len(steps), "step_s": seconds, "output_tokens": outputs,
        "calls": [(s.get("action"), s.get("action_input")) for s in steps],
        "peak_rss_mb": _rss_mb(),
    }


def child_speed(name: str) -> dict[str, Any]:
    """Seconds per step cold and warm on the demo's first decision, the prefix reused, and the pure decoding
    time of the step's output (the same prompt and answer again: everything cached but the sampling)."""
    from react_agent import ReactAgent, RunState
    from react_agent.demo import DEMO_EXAMPLES, make_demo_tools
    from react_agent.models import LocalChatModel

    llm = LocalChatModel(model=name)
    with tempfile.TemporaryDirectory() as tmp:
        agent = ReactAgent(llm, make_demo_tools(db_path=Path(tmp) / "u.db", lang="en"), prompts="en-compact",
                           examples=DEMO_EXAMPLES["en"])
        started = time.monotonic()
        llm.invoke("a", max_tokens=1)
        load = time.monotonic() - started
        rows = []
        for task in ("Register user Ivan with email ivan@test.com", "Find user Maria",
                     "Register user Oleg with email oleg@test.com"):
            messages = agent.build_messages(RunState(task))
            started = time.monotonic()
            reply = llm.invoke(messages, response_format=agent.response_format)
            step = time.monotonic() - started
            meta = reply.response_metadata
            # the answer's text appended to its prompt: one grammar-free pass that only samples its tokens
            rows.append({"task": task, "step_s": round(step, 2),
                         "output_tokens": (reply.usage_metadata or {}).get("output_tokens", 0),
                         "answer_tokens": llm.get_num_tokens(str(reply.content)),
                         "evaluated": meta.get("prompt_tokens_evaluated"), "reused": meta.get("prompt_tokens_reused"),
                         "answer": str(reply.content)})
        # decoding speed with the prompt cached: the last prompt, its answer's length, no grammar
        n = max(int(rows[-1]["answer_tokens"]), 1)
        llm.invoke(messages, max_tokens=1)
        started = time.monotonic()
        reply = llm.invoke(messages, max_tokens=n)
        decode = (time.monotonic() - started) / max((reply.usage_metadata or {}).get("output_tokens", 1), 1)
    return {"load_s": round(load, 2), "cold_step_s": rows[0]["step_s"],
            "warm_step_s": round(statistics.median(r["step_s"] for r in rows[1:]), 2),
            "decode_s_per_token": round(decode, 4),
            "warm_step_over_output_generation": round(
                statistics.median(r["step_s"] / (decode * max(int(r["answer_tokens"]), 1)) for r in rows[1:]), 2),
            "rows": rows, "peak_rss_mb": _rss_mb()}


def child_bfcl(name: str, limit: int) -> dict[str, Any]:
    from bench import bfcl
    from react_agent.models.local._model import model_file

    files = bfcl.category_files(list(BFCL_CATEGORIES))
    with _common.quiet_stderr():
        result = bfcl.run(files=files, limit=limit, protocols=["react_agent"], model_path=model_file(name),
                          lang="en-compact", examples="generated", progress=False)
    categories = {c: {k: block["react_agent"][k] for k in ("n", "correct", "accuracy", "mean_seconds")}
                  for c, block in result["categories"].items()}
    return {"limit": limit, "categories": categories, "seconds": result["seconds"], "peak_rss_mb": _rss_mb()}


def _in_child(*args: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, "-m", "bench.local_models", "--child", *args, "--out", out.name],
                       check=True, cwd=_common.ROOT)
        return dict(json.loads(Path(out.name).read_text(encoding="utf-8")))


def measure(name: str, *, limit: int, demo: bool, bfcl: bool) -> dict[str, Any]:
    from react_agent.models.local._catalog import CATALOG

    entry = CATALOG[name]
    row: dict[str, Any] = {"model": name, "title": entry.title, "download_mb": round(entry.size / 2**20),
                           "licence": entry.licence, "prompt_format": entry.prompt_format}
    row["speed"] = _in_child("speed", name)
    if demo:
        row["demo"] = {}
        for lang in ("en", "ru"):
            with tempfile.TemporaryDirectory() as states:  # empty: the first run evaluates its whole prompt
                first = _in_child("demo", name, lang, states)
                again = _in_child("demo", name, lang, states)  # a second process loads it
            row["demo"][lang] = {**first, "again_wall_s": again["wall_s"], "again_success": again["success"]}
    if bfcl:
        row["bfcl"] = _in_child("bfcl", name, str(limit))
    return row


def markdown(data: dict[str, Any]) -> str:
    rows = []
    for row in data["results"]["models"]:
        speed, demo, bfcl = row.get("speed", {}), row.get("demo", {}), row.get("bfcl", {})
        cats = bfcl.get("categories", {})
        rss = max([speed.get("peak_rss_mb", 0), *(d.get("peak_rss_mb", 0) for d in demo.values())])

        def show(lang: str, demo: dict[str, Any] = demo) -> str:
            d = demo.get(lang)
            if not d:
                return "-"
            shown = ("✓" if d["success"] else "✗") + (f" {d['wall_s']:.0f} s" if "wall_s" in d else "")
            if "again_wall_s" in d:
                shown += f" (again: {'✓' if d['again_success'] else '✗'} {d['again_wall_s']:.0f} s)"
            return shown

        def acc(category: str, cats: dict[str, Any] = cats) -> str:
            c = cats.get(category)
            return f"{c['correct']}/{c['n']}" if c else "-"

        rows.append([row["model"], f"{row['download_mb']} MB", f"{rss:.0f} MB", show("en"), show("ru"),
                     f"{speed.get('cold_step_s', 0):.1f}", f"{speed.get('warm_step_s', 0):.1f}",
                     f"{speed.get('warm_step_over_output_generation', 0):.2f}", acc("simple_python"),
                     acc("irrelevance"), row["licence"]])
    return _common.table(["model", "download", "peak RSS", "demo en", "demo ru", "cold step s", "warm step s",
                          "warm step / its output's decoding", "BFCL simple_python", "BFCL irrelevance",
                          "licence"], rows)


def main(argv: list[str] | None = None) -> int:
    from react_agent.models.local._catalog import CATALOG

    parser = argparse.ArgumentParser(prog="python -m bench.local_models", description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(CATALOG), default=list(CATALOG))
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="BFCL cases per category")
    parser.add_argument("--skip-bfcl", action="store_true")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, name, *rest = args.child
        if kind == "demo":
            out = child_demo(name, rest[0], rest[1])
        elif kind == "speed":
            out = child_speed(name)
        else:
            out = child_bfcl(name, int(rest[0]))
        args.out.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
        summary = {k: v for k, v in out.items() if not isinstance(v, (list, dict)) or k == "categories"}
        print(f"{kind} {name} {' '.join(rest)}: {json.dumps(summary, ensure_ascii=False)}", file=sys.stderr)
        return 0
    earlier = _common.read_result(NAME) or {}
    rows = {r["model"]: r for r in (earlier.get("results") or {}).get("models", [])}
    for name in args.models:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        # what this run skips (--skip-demo, --skip-bfcl) keeps the model's earlier measurement
        rows[name] = {**rows.get(name, {}),
                      **measure(name, limit=args.limit, demo=not args.skip_demo, bfcl=not args.skip_bfcl)}
        rows[name]["load_average_after"] = [round(x, 1) for x in os.getloadavg()]  # the times depend on it
        results = {"models": [rows[n] for n in CATALOG if n in rows]}
        path = _common.write_result(NAME, {"limit": args.limit, "bfcl_categories": list(BFCL_CATEGORIES)}, results)
    print(markdown(json.loads(path.read_text(encoding="utf-8"))))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
