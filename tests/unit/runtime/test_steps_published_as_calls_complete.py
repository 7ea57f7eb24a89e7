"""The steps of a parallel decision are published as each call completes, not when the whole decision ends.

A slow call waits (on an event, up to a generous timeout) until the fast call's step has been published: a
driver that publishes only at the end of the decision lets the slow call time out first, and the test fails
on the order it observed. No timing bound is asserted.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import threading
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from tool_call_servers import NativeScriptedModel

from react_agent import AgentStep, ReactAgent, ReflectionAgent
from react_agent.runtime._journal import read_journal
from react_agent.testing import ScriptedChatModel

PATIENCE = 20.0  # how long the slow call waits for the fast step to be published


class Race:
    """A slow tool that waits for ``release`` and a fast one; ``seen`` is what a publication channel saw."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.slow_done = threading.Event()
        self.seen: list[tuple[str, bool]] = []  # (observation, whether the slow call had finished)
        race = self

        @tool
        def slow(x: int) -> str:
            """Waits for the fast call to be published."""
            race.release.wait(PATIENCE)
            race.slow_done.set()
            return f"slow {x}"

        @tool
        def fast(x: int) -> str:
            """Returns at once."""
            return f"fast {x}"

        self.tools = [slow, fast]

    def saw(self, step: AgentStep) -> None:
        self.seen.append((step.observation, self.slow_done.is_set()))
        if step.observation.startswith("fast"):
            self.release.set()

    def check(self) -> None:
        assert self.seen[:2] == [("fast 2", False), ("slow 1", True)], self.seen


SLOW_THEN_FAST = AIMessage(content="", tool_calls=[{"name": "slow", "args": {"x": 1}, "id": "a"},
                                                   {"name": "fast", "args": {"x": 2}, "id": "b"}])


def native_agent(race: Race, **options: Any) -> ReactAgent:
    return ReactAgent(NativeScriptedModel([SLOW_THEN_FAST, AIMessage(content="done")]), race.tools,
                      protocol="native", **options)


class StepEvents(BaseCallbackHandler):
    def __init__(self, race: Race) -> None:
        self.race = race
        self.indices: list[int] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == "react_agent.step":
            self.indices.append(data["index"])
            self.race.saw(data["step"])


@pytest.fixture
def race() -> Any:
    race = Race()
    yield race
    race.release.set()


def test_stream_yields_the_fast_call_before_the_slow_one_finishes(race: Race) -> None:
    steps = []
    for item in native_agent(race).stream("go"):
        if isinstance(item, AgentStep):
            steps.append(item)
            race.saw(item)
    race.check()
    assert len(steps) == 3  # each step once: the loop's record of an early step is not published again


def test_astream_yields_the_fast_call_before_the_slow_one_finishes(race: Race) -> None:
    async def consume() -> None:
        async for item in native_agent(race).astream("go"):
            if isinstance(item, AgentStep):
                race.saw(item)

    asyncio.run(consume())
    race.check()


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_step_callbacks_arrive_as_each_call_completes_with_the_step_index(race: Race, driver: str) -> None:
    handler = StepEvents(race)
    agent = native_agent(race)
    config: Any = {"callbacks": [handler]}
    result = agent.run("go", config=config) if driver == "run" else asyncio.run(agent.arun("go", config=config))
    race.check()
    assert handler.indices == [2, 1, 3]  # the fast call is step 2 of the run, published first
    assert [s.observation for s in result.steps[:2]] == ["slow 1", "fast 2"]  # the result keeps call order


def test_text_protocol_lists_are_published_as_each_call_completes(race: Race) -> None:
    reply = json.dumps([{"thought": "", "action": "slow", "action_input": {"x": 1}},
                        {"thought": "", "action": "fast", "action_input": {"x": 2}}])
    done = json.dumps({"thought": "", "action": "FINISH", "action_input": "ok"})
    agent = ReactAgent(ScriptedChatModel([reply, done]), race.tools, max_parallel_calls=2)
    result = agent.run("go", config={"callbacks": [StepEvents(race)]})
    race.check()
    assert [s.observation for s in result.steps[:2]] == ["slow 1", "fast 2"]  # the result keeps call order


def test_the_langgraph_stream_writer_gets_the_fast_step_first(race: Race) -> None:
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        input: str
        output: str

    graph = StateGraph(State)
    graph.add_node("agent", native_agent(race).as_node())
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    indices = []
    for chunk in graph.compile().stream({"input": "go"}, stream_mode="custom"):  # chunks arrive as written
        indices.append(chunk["index"])
        race.saw(AgentStep.model_validate(chunk["step"]))
    race.check()
    assert indices == [2, 1, 3]


def test_the_verbose_console_prints_the_fast_step_first(race: Race, monkeypatch: pytest.MonkeyPatch) -> None:
    class Tap(io.StringIO):
        def write(self, text: str) -> int:
            if "fast 2" in text or "slow 1" in text:
                race.saw(AgentStep(observation="fast 2" if "fast 2" in text else "slow 1"))
            return super().write(text)

    monkeypatch.setattr(sys, "stderr", Tap())
    native_agent(race, verbose=True).run("go")
    race.check()


def test_a_reviewing_agent_publishes_the_decisions_last_step_with_its_reflection() -> None:
    """ReflectionAgent reflects after the decision: its last step is published once, after the reflection."""
    @tool
    def broken(x: int) -> str:
        """Always fails."""
        raise RuntimeError(f"broken {x}")

    @tool
    def ok(x: int) -> str:
        """Works."""
        return f"ok {x}"

    reply = AIMessage(content="", tool_calls=[{"name": "ok", "args": {"x": 1}, "id": "a"},
                                              {"name": "broken", "args": {"x": 2}, "id": "b"}])
    model = NativeScriptedModel([reply, "Use ok.", AIMessage(content="done")])
    agent = ReflectionAgent(model, [ok, broken], protocol="native")
    streamed = [i for i in agent.stream("go") if isinstance(i, AgentStep)]
    assert len(streamed) == 3 and streamed[1].reflection == "Use ok." and streamed[1].is_error


def test_journal_records_the_steps_once_in_call_order_and_a_resume_publishes_each_once(race: Race,
                                                                                        tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    race.release.set()
    native_agent(race).run("go", journal=journal)
    steps = [r for r in read_journal(journal) if r["type"] == "step"]
    assert [(r["index"], r["observation"]) for r in steps] == [(1, "slow 1"), (2, "fast 2"), (3, "")]
    replayed = [i for i in native_agent(race).resume_stream(journal) if isinstance(i, AgentStep)]
    assert [s.observation for s in replayed] == ["slow 1", "fast 2", ""]
