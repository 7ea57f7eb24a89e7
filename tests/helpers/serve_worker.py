"""A real `serve` process for the API and browser tests: python tests/helpers/serve_worker.py PORT JOURNAL_DIR STATE_DIR
[--token-env VAR] [--max-concurrency N] [--approval-timeout S] [--secret-model].

The model's reply depends only on the prompt (so concurrent and resumed runs stay deterministic). Tools:
``add``; ``refund`` (needs approval); ``gate`` and ``write_note``, which record each invocation in STATE_DIR
and wait there until the test creates ``STATE_DIR/release-<name>`` (polled, so the test decides when).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from langchain_core.tools import StructuredTool, tool

from react_agent import ReactAgent
from react_agent.serve import serve
from react_agent.testing import FunctionChatModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("journal_dir")
    parser.add_argument("state_dir")
    parser.add_argument("--token-env")
    parser.add_argument("--max-concurrency", type=int, default=4)
    parser.add_argument("--max-queue", type=int, default=1000)
    parser.add_argument("--approval-timeout", type=float, default=60.0)
    parser.add_argument("--secret-model", action="store_true")
    parser.add_argument("--lang", default="en")
    args = parser.parse_args()
    state = Path(args.state_dir)

    def wait_for_release(name: str) -> None:
        deadline = time.monotonic() + 120
        while not (state / f"release-{name}").exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"release-{name} never came")
            time.sleep(0.02)

    def record(kind: str, name: str) -> None:
        with (state / f"{kind}.log").open("a", encoding="utf-8") as log:
            log.write(f"{name} {os.getpid()}\n")

    @tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        record("add", str(a))
        return f"SUM={a + b}"

    def refund(order: str) -> str:
        """Refund an order."""
        record("refund", order)
        return f"REFUNDED-{order}"

    @tool
    def fetch_page(name: str) -> str:
        """A web page whose text is hostile HTML."""
        return f'<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>PAGE-{name}'

    @tool
    def gate(name: str) -> str:
        """Wait at a gate the test opens."""
        record("gate", name)
        wait_for_release(name)
        return f"PASSED-{name}"

    @tool
    def write_note(name: str) -> str:
        """Write a note (records each invocation, then waits for the test)."""
        record("write", name)
        wait_for_release(name)
        return f"WROTE-{name}"

    refund_tool = StructuredTool.from_function(refund, metadata={"requires_approval": True})

    def reply(messages: list) -> str:
        text = "\n".join(str(m.content) for m in messages)
        tasks = re.findall(r"TASK\[(\w+) (\w+)\]", text)
        if not tasks:
            return json.dumps({"thought": "no task", "action": "FINISH", "action_input": "no task"})
        kind, value = tasks[-1]  # the current one (earlier turns of a thread come first)
        if kind == "recall":  # what the earlier turns of the thread showed
            seen = re.findall(r"ANSWER [\w=-]+", text)
            return json.dumps({"thought": "recall", "action": "FINISH", "action_input": f"RECALL {seen}"})
        if kind == "both" and "SUM=" not in text:
            return json.dumps({"thought": "first add", "action": "add", "action_input": {"a": 1, "b": 3}})
        if kind == "both":
            kind = "write"
        marks = r"(SUM=\d+)" if kind == "add" else r"(REFUNDED-\w+|PASSED-\w+|WROTE-\w+|PAGE-\w+|was not approved)"
        done = re.search(marks, text)
        if done:
            answer = "refused" if done.group(1) == "was not approved" else done.group(1)
            return json.dumps({"thought": "I have it", "action": "FINISH", "action_input": f"ANSWER {answer}"})
        calls = {"add": ("add", {"a": int(value) if value.isdigit() else 0, "b": 3}),
                 "refund": ("refund", {"order": value}), "gate": ("gate", {"name": value}),
                 "write": ("write_note", {"name": value}), "page": ("fetch_page", {"name": value})}
        action, arguments = calls[kind]
        return json.dumps({"thought": f"call {action}", "action": action, "action_input": arguments})

    if args.secret_model:  # an OpenAI model with a key, at a dead loopback port: every run fails
        from langchain_openai import ChatOpenAI

        llm = ChatOpenAI(model="x", api_key=os.environ["WORKER_MODEL_KEY"], base_url="http://127.0.0.1:9/v1",
                         max_retries=0, timeout=5)
        agent = ReactAgent(llm, [add], prompts="en", retry=None)
    else:
        tools = [add, refund_tool, gate, write_note, fetch_page]
        agent = ReactAgent(FunctionChatModel(function=reply, usage=True), tools, prompts="en", max_iterations=4)
    token = os.environ[args.token_env] if args.token_env else None
    serve(agent, host="127.0.0.1", port=args.port, journal_dir=args.journal_dir, token=token,
          max_concurrency=args.max_concurrency, max_queue=args.max_queue, approval_timeout=args.approval_timeout,
          lang=args.lang)


if __name__ == "__main__":
    sys.exit(main())
