"""The two decision sources on one loop: protocol='native' and parallel calls, with every shared feature."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from pydantic import BaseModel
from tool_call_servers import NativeScriptedModel

from react_agent import ConfigError, JournalMismatchError, PlanAndExecuteAgent, ReactAgent, ReflectionAgent
from react_agent.batch import run_batch
from react_agent.parsing import parse_actions, parse_response
from react_agent.testing import ScriptedChatModel

LATENCY = 0.3


def calls(*pairs: tuple[str, dict[str, Any]], content: str = "") -> AIMessage:
    return AIMessage(content=content, tool_calls=[{"name": name, "args": args, "id": f"id{n}"}
                                                  for n, (name, args) in enumerate(pairs, 1)])


def text_calls(*pairs: tuple[str, dict[str, Any]]) -> str:
    return json.dumps([{"thought": "", "action": name, "action_input": args} for name, args in pairs])


def finish(answer: str) -> str:
    return json.dumps({"thought": "", "action": "FINISH", "action_input": answer})


class Tools:
    """Slow, failing and hanging tools that log what ran (thread-safe)."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        owner = self

        @tool
        def slow(x: int) -> str:
            """Wait, then echo x."""
            time.sleep(LATENCY)
            with owner.lock:
                owner.ran.append(f"slow {x}")
            return f"slow {x}"

        @tool
        def broken(x: int) -> str:
            """Always fails."""
            raise RuntimeError(f"broken {x}")

        @tool
        def hang(x: int) -> str:
            """Hangs until released."""
            owner.release.wait(10)
            return "late"

        @tool(extras={"requires_approval": True})
        def pay(amount: int) -> str:
            """Pay an amount (asks for approval)."""
            with owner.lock:
                owner.ran.append(f"pay {amount}")
            return f"paid {amount}"

        pay.metadata = {"requires_approval": True}
        self.tools = [slow, broken, hang, pay]


@pytest.fixture
def kit() -> Any:
    kit = Tools()
    yield kit
    kit.release.set()


THREE = calls(("slow", {"x": 1}), ("slow", {"x": 2}), ("slow", {"x": 3}))


# ------------------------------------------------------------------------------------------------ configuration
def test_native_is_refused_for_a_model_without_bind_tools() -> None:
    with pytest.raises(ConfigError, match="bind_tools"):
        ReactAgent(ScriptedChatModel([]), [], protocol="native")
    with pytest.raises(ConfigError, match="bind_tools"):
        ReactAgent(RunnableLambda(lambda x: x), [], protocol="native")


@pytest.mark.parametrize(("option", "value"), [("protocol", "json"), ("protocol", 1), ("max_parallel_calls", 0),
                                               ("max_parallel_calls", "2"), ("max_parallel_calls", True)])
def test_wrong_protocol_options_are_config_errors_naming_the_option(option: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=option):
        ReactAgent(ScriptedChatModel([]), [], **{option: value})


def test_plan_and_execute_under_the_native_protocol_needs_a_model_with_bind_tools() -> None:
    with pytest.raises(ConfigError, match="bind_tools"):
        PlanAndExecuteAgent(ScriptedChatModel([]), [], protocol="native")


def test_a_tool_named_final_answer_clashes_with_the_native_answer_tool() -> None:
    class Answer(BaseModel):
        text: str

    @tool
    def final_answer(text: str) -> str:
        """Clash."""
        return text

    with pytest.raises(ConfigError, match="final_answer"):
        ReactAgent(NativeScriptedModel([]), [final_answer], protocol="native", output_schema=Answer)


# ------------------------------------------------------------------------------------------------ native decisions
def test_native_calls_of_one_reply_run_at_once_and_come_back_in_order(kit: Tools) -> None:
    model = NativeScriptedModel([THREE, AIMessage(content="1, 2, 3")])
    agent = ReactAgent(model, kit.tools, protocol="native", prompts="en")
    started = time.monotonic()
    result = agent.run("go")
    assert time.monotonic() - started < 2.5 * LATENCY
    assert result.output == "1, 2, 3" and [s.observation for s in result.steps[:3]] == ["slow 1", "slow 2", "slow 3"]
    assert [s.call_id for s in result.steps[:3]] == ["id1", "id2", "id3"]
    assert {s.decision for s in result.steps[:3]} == {1}
    prompt = model.calls[1].messages
    assert [type(m) for m in prompt] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, ToolMessage, ToolMessage]
    assert [c["id"] for c in prompt[2].tool_calls] == ["id1", "id2", "id3"]
    assert [m.tool_call_id for m in prompt[3:]] == ["id1", "id2", "id3"]
    assert "tools" in model.calls[0].kwargs


def test_native_arun_runs_the_calls_as_tasks(kit: Tools) -> None:
    agent = ReactAgent(NativeScriptedModel([THREE, AIMessage(content="ok")]), kit.tools, protocol="native")
    started = time.monotonic()
    result = asyncio.run(agent.arun("go"))
    assert time.monotonic() - started < 2.5 * LATENCY
    assert [s.observation for s in result.steps[:3]] == ["slow 1", "slow 2", "slow 3"]


def test_a_failing_call_is_an_error_observation_for_that_call_only(kit: Tools) -> None:
    reply = calls(("slow", {"x": 1}), ("broken", {"x": 2}), ("nope", {}), ("slow", {"x": "NaN"}))
    agent = ReactAgent(NativeScriptedModel([reply, AIMessage(content="ok")]), kit.tools, protocol="native",
                       prompts="en")
    steps = agent.run("go").steps
    assert [s.is_error for s in steps[:4]] == [False, True, True, True]
    assert "broken 2" in steps[1].observation and "nope" in steps[2].observation
    assert kit.ran == ["slow 1"]


def test_a_hung_call_times_out_alone(kit: Tools) -> None:
    reply = calls(("hang", {"x": 1}), ("slow", {"x": 2}))
    agent = ReactAgent(NativeScriptedModel([reply, AIMessage(content="ok")]), kit.tools, protocol="native",
                       timeout=LATENCY * 3, prompts="en")
    steps = agent.run("go").steps
    assert steps[0].is_error and steps[1].observation == "slow 2"


def test_calls_beyond_max_parallel_calls_are_not_run(kit: Tools) -> None:
    agent = ReactAgent(NativeScriptedModel([THREE, AIMessage(content="ok")]), kit.tools, protocol="native",
                       max_parallel_calls=2, prompts="en")
    steps = agent.run("go").steps
    assert sorted(kit.ran) == ["slow 1", "slow 2"]
    assert steps[2].is_error and "at most 2" in steps[2].observation


def test_approval_is_asked_per_call_and_a_refusal_refuses_that_call_only(kit: Tools) -> None:
    asked: list[Any] = []

    def approve(name: str, args: Any) -> bool:
        asked.append(args["amount"])
        return bool(args["amount"] < 100)

    reply = calls(("pay", {"amount": 5}), ("pay", {"amount": 500}), ("slow", {"x": 1}))
    agent = ReactAgent(NativeScriptedModel([reply, AIMessage(content="ok")]), kit.tools, protocol="native",
                       approve=approve, prompts="en")
    steps = agent.run("go").steps
    assert sorted(asked) == [5, 500] and sorted(kit.ran) == ["pay 5", "slow 1"]
    assert not steps[0].is_error and steps[1].is_error


def test_output_schema_answer_that_does_not_validate_goes_back_as_a_tool_message() -> None:
    class Answer(BaseModel):
        count: int

    model = NativeScriptedModel([calls(("final_answer", {"count": "many"})), calls(("final_answer", {"count": 3}))])
    result = ReactAgent(model, [], protocol="native", output_schema=Answer, prompts="en").run("count")
    assert result.status == "finished" and result.output_object == Answer(count=3)
    assert model.calls[0].messages[1].content == "count"  # the schema is the tool's, not in the task
    second = model.calls[1].messages
    assert isinstance(second[-1], ToolMessage) and second[-1].tool_call_id == "id1"
    assert [c["name"] for c in second[-2].tool_calls] == ["final_answer"]


def test_reflection_goes_to_the_native_history_after_the_tool_messages(kit: Tools) -> None:
    model = NativeScriptedModel([calls(("broken", {"x": 1})), "Use slow instead.", AIMessage(content="ok")])
    result = ReflectionAgent(model, kit.tools, protocol="native", prompts="en").run("go")
    assert result.steps[0].reflection == "Use slow instead."
    last = model.calls[2].messages
    assert isinstance(last[-2], ToolMessage) and last[-1] == HumanMessage(content="Use slow instead.")
    assert "tools" not in model.calls[1].kwargs  # the reflection is a plain text call


def test_token_budget_ends_a_native_run(kit: Tools) -> None:
    model = NativeScriptedModel([THREE, THREE, AIMessage(content="ok")], usage=True)
    result = ReactAgent(model, kit.tools, protocol="native", max_tokens_budget=1).run("go")
    assert result.status == "budget" and len(result.steps) == 3


def test_stream_publishes_each_call_as_its_own_step_once_and_the_result_keeps_call_order(kit: Tools) -> None:
    agent = ReactAgent(NativeScriptedModel([THREE, AIMessage(content="ok")]), kit.tools, protocol="native")
    items = list(agent.stream("go"))
    assert len(items) == 5  # three calls (published as each completes), the answer, the result
    assert sorted(getattr(i, "observation", "") for i in items[:3]) == ["slow 1", "slow 2", "slow 3"]
    assert [s.observation for s in items[-1].steps[:3]] == ["slow 1", "slow 2", "slow 3"]


def test_astream_events_reports_the_native_model_call_with_its_tools(kit: Tools) -> None:
    agent = ReactAgent(NativeScriptedModel([THREE, AIMessage(content="ok")]), kit.tools, protocol="native")

    async def events() -> list[dict[str, Any]]:
        return [e async for e in agent.astream_events("go", version="v2")]

    seen = asyncio.run(events())
    ends = [e for e in seen if e["event"] == "on_chat_model_end"]
    assert len(ends) == 2 and ends[0]["data"]["output"].tool_calls


def test_a_native_agent_as_a_tool_and_as_a_langgraph_node(kit: Tools) -> None:
    from langgraph.graph import END, START, StateGraph

    inner = ReactAgent(NativeScriptedModel([THREE, AIMessage(content="inner done")] * 2), kit.tools,
                       protocol="native")
    helper = inner.as_tool(name="helper", description="Runs the slow tools.")
    outer = ReactAgent(ScriptedChatModel([json.dumps({"thought": "", "action": "helper",
                                                      "action_input": {"task": "t"}}), finish("outer done")]),
                       [helper])
    assert outer.run("go").steps[0].observation == "inner done"

    class State(TypedDict):
        input: str
        output: str

    graph = StateGraph(State)
    graph.add_node("agent", inner.as_node())
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    assert graph.compile().invoke({"input": "go"})["output"] == "inner done"


def test_a_batch_of_native_runs(kit: Tools, tmp_path: Path) -> None:
    agent = ReactAgent(NativeScriptedModel([THREE, AIMessage(content="a"), THREE, AIMessage(content="b")]),
                       kit.tools, protocol="native")
    results = list(run_batch(agent, ["one", "two"], concurrency=1, journal_dir=tmp_path))
    assert sorted(r.output for r in results) == ["a", "b"] and all(r.steps == 4 for r in results)


def test_resume_with_another_protocol_is_refused(kit: Tools, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    ReactAgent(NativeScriptedModel([THREE, AIMessage(content="ok")]), kit.tools, protocol="native").run(
        "go", journal=journal)
    with pytest.raises(JournalMismatchError, match="protocol"):
        ReactAgent(ScriptedChatModel([]), kit.tools).resume(journal)


def test_the_default_identity_is_unchanged_by_the_new_options() -> None:
    identity = ReactAgent(ScriptedChatModel([]), []).identity()
    assert "protocol" not in identity and "max_parallel_calls" not in identity


# ------------------------------------------------------------------------------------------------ text protocol
def test_text_protocol_runs_a_list_of_actions_concurrently(kit: Tools) -> None:
    reply = text_calls(("slow", {"x": 1}), ("slow", {"x": 2}), ("slow", {"x": 3}))
    for run in ("run", "arun"):
        model = ScriptedChatModel([reply, finish("done")])
        agent = ReactAgent(model, kit.tools, max_parallel_calls=3, prompts="en")
        started = time.monotonic()
        result = agent.run("go") if run == "run" else asyncio.run(agent.arun("go"))
        assert time.monotonic() - started < 2.5 * LATENCY, run
        assert [s.observation for s in result.steps[:3]] == ["slow 1", "slow 2", "slow 3"]
        assert result.output == "done" and "slow 3" in model.calls[1].text


def test_text_protocol_with_one_call_keeps_reading_one_action(kit: Tools) -> None:
    reply = text_calls(("slow", {"x": 1}), ("slow", {"x": 2}))
    model = ScriptedChatModel([reply, finish("done")])
    result = ReactAgent(model, kit.tools, prompts="en").run("go")
    assert kit.ran == ["slow 1"] and result.steps[0].decision is None


def test_a_finish_in_a_list_is_not_run_and_the_calls_are(kit: Tools) -> None:
    model = ScriptedChatModel([json.dumps([{"thought": "", "action": "slow", "action_input": {"x": 1}},
                                           {"thought": "", "action": "FINISH", "action_input": "early"}]),
                               finish("done")])
    result = ReactAgent(model, kit.tools, max_parallel_calls=2, prompts="en").run("go")
    assert result.output == "done" and kit.ran == ["slow 1"] and result.steps[1].is_error


@pytest.mark.parametrize("lang", ["en", "ru", "en-compact", "ru-compact"])
def test_the_step_prompt_offers_a_list_only_when_several_calls_are_allowed(kit: Tools, lang: str) -> None:
    one = ScriptedChatModel([finish("x")])
    many = ScriptedChatModel([finish("x")])
    ReactAgent(one, kit.tools, prompts=lang).run("go")
    ReactAgent(many, kit.tools, prompts=lang, max_parallel_calls=4).run("go")
    assert "4" not in one.calls[0].text and "[{" not in one.calls[0].text
    assert "4" in many.calls[0].text and "[{" in many.calls[0].text


def test_the_native_system_prompt_says_how_many_calls_one_answer_may_hold(kit: Tools) -> None:
    for lang, limit, word in [("en", 1, "one tool call"), ("en", 3, "at most 3"), ("ru", 1, "один вызов")]:
        model = NativeScriptedModel([AIMessage(content="ok")])
        ReactAgent(model, kit.tools, protocol="native", prompts=lang, max_parallel_calls=limit).run("go")
        assert word in str(model.calls[0].messages[0].content)


# ------------------------------------------------------------------------------------------------ parse_actions
def test_parse_actions_reads_lists_envelopes_and_objects_in_a_row() -> None:
    names = ["a", "b"]
    one = {"thought": "", "action": "a", "action_input": {"x": 1}}
    two = {"thought": "", "action": "b", "action_input": {}}
    for text in (json.dumps([one, two]), json.dumps({"actions": [one, two]}),
                 json.dumps(one) + "\n" + json.dumps(two), "```json\n" + json.dumps([one, two]) + "\n```"):
        assert [a.action for a in parse_actions(text, names)] == ["a", "b"], text
    assert [a.action for a in parse_actions("Thought: x\nAction: a\nAction Input: {}", names)] == ["a"]
    assert parse_response(json.dumps(one), names).action == "a"


def test_parse_actions_refuses_an_item_that_holds_no_action() -> None:
    from react_agent import OutputParseError

    with pytest.raises(OutputParseError):
        parse_actions(json.dumps([{"thought": "", "action": "a", "action_input": {}}, {"nothing": 1}]), ["a"])


def test_parse_actions_survives_hostile_replies() -> None:
    from react_agent import OutputParseError

    for text in ("[" * 100_000, "[]", " " * 100_000, json.dumps([{"thought": "", "action": "a",
                                                                 "action_input": {}}] * 1000)):
        try:
            actions = parse_actions(text, ["a"])
        except OutputParseError:
            continue
        assert len(actions) <= 64


def test_approvals_of_concurrent_calls_are_asked_one_at_a_time(kit: Tools) -> None:
    """A human answering ``approve`` sees one question at a time, even when the calls run in threads."""
    inside, overlaps = [0], []

    def approve(name: str, args: Any) -> bool:
        inside[0] += 1
        overlaps.append(inside[0])
        time.sleep(0.05)
        inside[0] -= 1
        return True

    reply = calls(*[("pay", {"amount": n}) for n in range(4)])
    agent = ReactAgent(NativeScriptedModel([reply, AIMessage(content="ok")]), kit.tools, protocol="native",
                       approve=approve)
    agent.run("go")
    assert overlaps == [1, 1, 1, 1] and len(kit.ran) == 4


def test_constrained_decoding_asks_for_a_list_of_actions_when_several_are_allowed(kit: Tools) -> None:
    """Under constrained decoding the schema of a decision becomes {"actions": [1..N answers]}, which the
    parser reads like a list; with one call allowed it stays the single answer."""
    reply = json.dumps({"actions": [{"thought": "", "action": "slow", "action_input": {"x": n}} for n in (1, 2)]})
    model = ScriptedChatModel([reply, json.dumps({"actions": [json.loads(finish("done"))]})],
                              supports_json_schema=True)
    agent = ReactAgent(model, kit.tools, max_parallel_calls=2, constrained=True)
    result = agent.run("go")
    assert result.output == "done" and sorted(kit.ran) == ["slow 1", "slow 2"]
    schema = json.dumps(model.calls[0].kwargs)
    assert '"actions"' in schema and '"maxItems": 2' in schema
    single = ScriptedChatModel([finish("x")], supports_json_schema=True)
    ReactAgent(single, kit.tools, constrained=True).run("go")
    assert '"actions"' not in json.dumps(single.calls[0].kwargs)


def test_a_reply_of_many_calls_runs_at_most_16_at_once() -> None:
    """A hostile reply of 40 calls: every call runs and is answered in order, never more than 16 at a time."""
    lock, now, peak = threading.Lock(), [0], [0]

    @tool
    def busy(n: int) -> str:
        """Counts how many run at once."""
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return str(n)

    reply = calls(*[("busy", {"n": n}) for n in range(40)])
    for run in ("run", "arun"):
        peak[0] = 0
        agent = ReactAgent(NativeScriptedModel([reply, AIMessage(content="ok")]), [busy], protocol="native")
        result = agent.run("go") if run == "run" else asyncio.run(agent.arun("go"))
        assert [s.observation for s in result.steps[:40]] == [str(n) for n in range(40)]
        assert 1 < peak[0] <= 16, (run, peak[0])


@pytest.mark.parametrize("reply", [5, b"{}", {"action": "FINISH"}])
def test_parsing_something_other_than_the_reply_text_is_a_config_error(reply: Any) -> None:
    with pytest.raises(ConfigError, match="parse_response reads the text of a reply"):
        parse_response(reply)
    with pytest.raises(ConfigError, match="parse_actions reads the text of a reply"):
        parse_actions(reply)
