"""PlanAndExecuteAgent under protocol='native' and with independent steps run in parallel."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from tool_call_servers import NativeScriptedModel

from react_agent import AgentStep
from react_agent.plan import PlanAndExecuteAgent, PlanStep, plan_batch_end
from react_agent.runtime._journal import read_journal
from react_agent.testing import ScriptedChatModel

PATIENCE = 20.0


class Kit:
    """``lookup`` steps meet at a barrier of ``meet`` parties (a lone call would wait PATIENCE and fail);
    ``send`` records what it was given; ``active``/``peak`` count the calls running at once."""

    def __init__(self, meet: int = 2) -> None:
        self.barrier = threading.Barrier(meet, timeout=PATIENCE)
        self.lock = threading.Lock()
        self.log: list[tuple[str, Any]] = []
        self.active = self.peak = 0
        kit = self

        @tool
        def lookup(name: str) -> str:
            """Look a name up."""
            kit.enter()
            try:
                kit.barrier.wait()
                return f"{name} lives in Oslo"
            finally:
                kit.leave(("lookup", name))

        @tool
        def plain(name: str) -> str:
            """Look a name up without waiting for others."""
            kit.enter()
            kit.leave(("plain", name))
            return f"{name} lives in Rome"

        @tool
        def send(to: str, text: str) -> str:
            """Send a message."""
            kit.enter()
            kit.leave(("send", {"to": to, "text": text}))
            return f"sent to {to}"

        self.tools = [lookup, plain, send]

    def enter(self) -> None:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)

    def leave(self, entry: tuple[str, Any]) -> None:
        with self.lock:
            self.active -= 1
            self.log.append(entry)


def plan(*steps: dict[str, Any]) -> str:
    return json.dumps(steps)


def fill_call(tool_name: str, args: dict[str, Any], *more: tuple[str, dict[str, Any]]) -> AIMessage:
    calls = [(tool_name, args), *more]
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"f{k}"} for k, (n, a) in enumerate(calls)])


SEND_AFTER_LOOKUP = plan({"tool": "plain", "args": {"name": "Ann"}, "open": []},
                         {"tool": "send", "args": {"to": "$session.email"}, "open": ["text"]})


# ------------------------------------------------------------------------------------------------ native protocol
def test_a_native_plan_fills_open_fields_with_a_call_of_the_step_tool_bound_alone() -> None:
    kit = Kit()
    model = NativeScriptedModel([SEND_AFTER_LOOKUP, fill_call("send", {"text": "Ann is in Rome"})])
    agent = PlanAndExecuteAgent(model, kit.tools, protocol="native", session={"email": "boss@corp.example"},
                                prompts="en")
    result = agent.run("Tell the boss where Ann lives")
    assert result.status == "finished" and result.violations == [] and result.output == "sent to boss@corp.example"
    assert kit.log == [("plain", "Ann"), ("send", {"to": "boss@corp.example", "text": "Ann is in Rome"})]
    assert "tools" not in model.calls[0].kwargs  # the plan is written as text
    (bound,) = model.calls[1].kwargs["tools"]
    assert bound["function"]["name"] == "send" and list(bound["function"]["parameters"]["properties"]) == ["text"]
    assert "Call the tool send" in str(model.calls[1].messages[-1].content)
    assert "boss@corp.example" not in json.dumps([str(m.content) for c in model.calls for m in c.messages])


def test_a_native_fill_that_leaves_the_plan_is_a_violation_and_asked_again() -> None:
    kit = Kit()
    model = NativeScriptedModel([SEND_AFTER_LOOKUP,
                                 fill_call("plain", {"name": "Eve"}),  # another tool: never run
                                 fill_call("send", {"text": "hi", "to": "evil@x.example"}, ("plain", {"name": "Z"}))])
    agent = PlanAndExecuteAgent(model, kit.tools, protocol="native", session={"email": "boss@corp.example"})
    result = agent.run("Tell the boss where Ann lives")
    assert result.status == "finished"
    assert kit.log == [("plain", "Ann"), ("send", {"to": "boss@corp.example", "text": "hi"})]
    assert len(result.violations) == 3
    assert any("another tool 'plain'" in v for v in result.violations)
    assert any("changes the fixed argument 'to'" in v for v in result.violations)
    assert any("adds a step" in v for v in result.violations)


def test_a_native_fill_written_as_text_is_read_as_a_text_fill() -> None:
    kit = Kit()
    model = NativeScriptedModel([SEND_AFTER_LOOKUP, AIMessage(content='{"text": "Ann is in Rome"}')])
    result = PlanAndExecuteAgent(model, kit.tools, protocol="native", session={"email": "b@corp.example"}).run("go")
    assert result.status == "finished" and kit.log[-1] == ("send", {"to": "b@corp.example", "text": "Ann is in Rome"})


def test_a_native_plan_run_resumes_from_its_journal_without_calling_anything(tmp_path: Path) -> None:
    kit, journal = Kit(), tmp_path / "run.jsonl"
    model = NativeScriptedModel([SEND_AFTER_LOOKUP, fill_call("send", {"text": "x"})])
    options: dict[str, Any] = {"protocol": "native", "session": {"email": "b@corp.example"}}
    first = PlanAndExecuteAgent(model, kit.tools, **options).run("go", journal=journal)
    again = Kit()
    replayed = PlanAndExecuteAgent(NativeScriptedModel([]), again.tools, **options).resume(journal)
    assert replayed.output == first.output and again.log == [] and replayed.plan == first.plan


# ------------------------------------------------------------------------------------------------ depends_on
def test_depends_on_is_read_and_checked() -> None:
    agent = PlanAndExecuteAgent(ScriptedChatModel([]), Kit().tools, max_parallel_calls=2)
    parsed = agent.parse_plan(plan({"tool": "plain", "args": {"name": "a"}, "depends_on": []},
                                   {"tool": "plain", "args": {"name": "b"}, "depends_on": [1, 1]},
                                   {"tool": "plain", "args": {"name": "c"}}))
    assert [s.depends_on for s in parsed.steps] == [(), (1,), None]
    for bad in ([2], [0], [True], "1", [1.5]):
        with pytest.raises(ValueError, match="depends_on"):
            agent.parse_plan(plan({"tool": "plain", "args": {"name": "a"}},
                                  {"tool": "plain", "args": {"name": "b"}, "depends_on": bad}))


def step(depends_on: tuple[int, ...] | None) -> PlanStep:
    return PlanStep(tool="plain", args={"name": "x"}, depends_on=depends_on)


def test_batches_group_the_steps_that_need_none_of_each_other_up_to_the_limit() -> None:
    def batches(steps: list[PlanStep], limit: int | None) -> list[int]:
        sizes, at = [], 0
        while at < len(steps):
            end = plan_batch_end(steps, at, limit)
            sizes.append(end - at)
            at = end
        return sizes

    old = [step(None)] * 4
    assert batches(old, None) == [1, 1, 1, 1]  # a plan without depends_on runs in order
    free = [step(()), step(()), step(()), step((1, 2, 3)), step((1,))]
    assert batches(free, None) == [3, 2] and batches(free, 2) == [2, 1, 2] and batches(free, 1) == [1] * 5
    assert batches([step(()), step((1,)), step(())], None) == [1, 2]


def test_the_plan_prompt_asks_for_depends_on_only_when_steps_may_run_together() -> None:
    for lang in ("en", "ru"):
        for options, asked in (({}, False), ({"max_parallel_calls": 3}, True)):
            model = ScriptedChatModel([plan({"tool": "plain", "args": {"name": "a"}})], supports_json_schema=True)
            PlanAndExecuteAgent(model, Kit().tools, prompts=lang, constrained=True, **options).run("go")
            assert ('"depends_on"' in str(model.calls[0].messages[-1].content)) is asked, (lang, options)
            assert ("depends_on" in json.dumps(model.calls[0].kwargs)) is asked  # the plan's schema


# ------------------------------------------------------------------------------------------------ parallel steps
TWO_LOOKUPS_THEN_SEND = plan({"tool": "lookup", "args": {"name": "Ann"}, "open": [], "depends_on": []},
                             {"tool": "lookup", "args": {"name": "Bob"}, "open": [], "depends_on": []},
                             {"tool": "send", "args": {"to": "boss"}, "open": ["text"], "depends_on": [1, 2]})


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_independent_steps_run_together_and_their_results_stay_in_plan_order(driver: str) -> None:
    """The two lookups meet at a barrier (run one after the other, the first would wait in vain); the send
    needs both, so its fill sees both results."""
    kit = Kit(meet=2)
    model = ScriptedChatModel([TWO_LOOKUPS_THEN_SEND, '{"text": "both in Oslo"}'])
    agent = PlanAndExecuteAgent(model, kit.tools, max_parallel_calls=3, prompts="en")
    result = agent.run("go") if driver == "run" else asyncio.run(agent.arun("go"))
    assert result.status == "finished", result.error
    assert [s.observation for s in result.steps] == ["Ann lives in Oslo", "Bob lives in Oslo", "sent to boss"]
    assert kit.peak == 2 and kit.log[-1] == ("send", {"to": "boss", "text": "both in Oslo"})
    fill_prompt = str(model.calls[1].messages[-1].content)
    assert "Ann lives in Oslo" in fill_prompt and "Bob lives in Oslo" in fill_prompt


def test_the_native_protocol_runs_independent_steps_together_by_default() -> None:
    kit = Kit(meet=2)
    model = NativeScriptedModel([TWO_LOOKUPS_THEN_SEND, fill_call("send", {"text": "ok"})])
    result = PlanAndExecuteAgent(model, kit.tools, protocol="native").run("go")
    assert result.status == "finished" and kit.peak == 2


def test_the_text_protocol_default_keeps_the_steps_in_order_even_when_marked_independent() -> None:
    kit = Kit(meet=1)
    steps = plan(*[{"tool": "plain", "args": {"name": n}, "open": [], "depends_on": []} for n in "abc"])
    result = PlanAndExecuteAgent(ScriptedChatModel([steps]), kit.tools).run("go")
    assert result.status == "finished" and kit.peak == 1 and [e[1] for e in kit.log] == ["a", "b", "c"]


def test_parallel_steps_are_journaled_once_each_and_a_resume_reruns_only_the_unfinished(tmp_path: Path) -> None:
    """A journal cut after the first result of the batch (a crash in the middle): the resume replays that
    result and runs the other lookup again with its journaled key; the send runs once."""
    journal = tmp_path / "run.jsonl"
    kit = Kit(meet=2)
    model = ScriptedChatModel([TWO_LOOKUPS_THEN_SEND, '{"text": "t"}'])
    first = PlanAndExecuteAgent(model, kit.tools, max_parallel_calls=3).run("go", journal=journal)
    records = read_journal(journal)
    starts = [r for r in records if r["type"] == "tool_start"]
    assert [r["input"]["name"] for r in starts[:2]] == ["Ann", "Bob"] and starts[0]["batch"] == starts[1]["batch"]
    first_end = next(i for i, r in enumerate(records) if r["type"] == "tool_end")
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:first_end + 1]))
    finished = records[first_end]["key"]
    again = Kit(meet=1)
    resumed = PlanAndExecuteAgent(ScriptedChatModel(['{"text": "t"}']), again.tools,
                                  max_parallel_calls=3).resume(journal)
    assert resumed.status == "finished" and [s.observation for s in resumed.steps] == [
        s.observation for s in first.steps]
    rerun = next(r for r in starts[:2] if r["key"] != finished)
    assert again.log[0] == ("lookup", rerun["input"]["name"]) and [e[0] for e in again.log] == ["lookup", "send"]
    later = [r for r in read_journal(journal) if r["type"] == "tool_start"][2:]  # after the two the cut kept
    assert [r["key"] for r in later[:1]] == [rerun["key"]] and later[0]["attempt"] == 2


def test_parallel_steps_are_published_as_each_completes() -> None:
    kit = Kit(meet=1)
    release, seen = threading.Event(), []

    @tool
    def wait(name: str) -> str:
        """Waits until released."""
        release.wait(PATIENCE)
        return f"waited {name}"

    steps = plan({"tool": "wait", "args": {"name": "a"}, "open": [], "depends_on": []},
                 {"tool": "plain", "args": {"name": "b"}, "open": [], "depends_on": []})
    agent = PlanAndExecuteAgent(ScriptedChatModel([steps]), [*kit.tools, wait], max_parallel_calls=2)
    for item in agent.stream("go"):
        if isinstance(item, AgentStep):
            seen.append(item.observation)
            release.set()
    release.set()
    assert seen == ["b lives in Rome", "waited a"]
