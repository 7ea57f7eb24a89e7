"""Helper process of test_parallel_crash.py: one decision of three tool calls, killed in the middle.

``python tests/parallel_crash_worker.py run <folder> <protocol> <item>`` runs the agent (``<protocol>`` ``plan``:
a ``PlanAndExecuteAgent`` whose plan holds the three calls as independent steps) with the journal
``<folder>/run.jsonl``; its decision calls ``record`` three times at once, and the call for ``<item>``
hangs before it writes, so the test can SIGKILL the process once the other two calls are journaled.
``resume <folder> <protocol>`` resumes the run (nothing hangs then). ``record`` appends ``<item> <key>``
to ``<folder>/ledger.txt`` unless that key is already there, so a call that ran counts once per key.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated

from langchain_core.messages import AIMessage
from langchain_core.tools import InjectedToolArg, tool
from tool_call_servers import NativeScriptedModel

from react_agent import PlanAndExecuteAgent, ReactAgent
from react_agent.testing import ScriptedChatModel

ITEMS = ["item-1", "item-2", "item-3"]
ANSWER = "All three items are recorded."


def answer(protocol: str) -> str:
    """The run's answer (a plan answers with its last step's result)."""
    return f"recorded {ITEMS[-1]}" if protocol == "plan" else ANSWER


def first_reply(protocol: str) -> AIMessage | str:
    if protocol == "plan":
        return json.dumps([{"tool": "record", "args": {"item": item}, "open": [], "depends_on": []} for item in ITEMS])
    if protocol == "native":
        return AIMessage(content="", tool_calls=[{"name": "record", "args": {"item": item}, "id": f"c{n}"}
                                                 for n, item in enumerate(ITEMS, 1)])
    return json.dumps([{"thought": "", "action": "record", "action_input": {"item": item}} for item in ITEMS])


def final_reply(protocol: str) -> str:
    return ANSWER if protocol == "native" else json.dumps({"thought": "", "action": "FINISH", "action_input": ANSWER})


def agent(folder: Path, protocol: str, hang: str | None) -> ReactAgent | PlanAndExecuteAgent:
    ledger = folder / "ledger.txt"

    @tool
    def record(item: str, idempotency_key: Annotated[str, InjectedToolArg]) -> str:
        """Record an item in the ledger."""
        if item == hang:
            time.sleep(120)
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        if not any(line.endswith(f" {idempotency_key}") for line in lines):
            with ledger.open("a") as file:
                file.write(f"{item} {idempotency_key}\n")
                file.flush()
                os.fsync(file.fileno())
        return f"recorded {item}"

    if protocol == "plan":  # the plan is the only model call (replayed on resume)
        return PlanAndExecuteAgent(ScriptedChatModel([first_reply(protocol)] if hang else []), [record], prompts="en",
                                   max_parallel_calls=3)
    script = [final_reply(protocol)] if not hang else [first_reply(protocol), final_reply(protocol)]
    model = NativeScriptedModel(script) if protocol == "native" else ScriptedChatModel(script)
    options = {"protocol": "native"} if protocol == "native" else {"max_parallel_calls": 3}
    return ReactAgent(model, [record], prompts="en", **options)


def main() -> None:
    mode, folder, protocol, hang = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    journal = folder / "run.jsonl"
    if mode == "run":
        result = agent(folder, protocol, hang=hang).run("Record the three items", journal=journal)
    else:
        result = agent(folder, protocol, hang=None).resume(journal)
    print(json.dumps({"status": result.status, "output": result.output,
                      "observations": [s.observation for s in result.steps]}), flush=True)


if __name__ == "__main__":
    main()
