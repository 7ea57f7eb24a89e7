"""PlanAndExecuteAgent: plan extraction and validation, execution, open fields, session, replan."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.tools import tool
from pydantic import ValidationError

from react_agent import AgentResult, AgentStep
from react_agent.errors import ConfigError
from react_agent.plan import Plan, PlanAndExecuteAgent, PlanResult, PlanStep, extract_json
from react_agent.testing import ScriptedChatModel

LOG: list[tuple[str, dict[str, Any]]] = []


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    LOG.clear()


@tool
def fetch(key: str) -> str:
    """Fetch a record by key."""
    LOG.append(("fetch", {"key": key}))
    if key == "missing":
        raise KeyError("no such record")
    return f"record {key}: status shipped"


@tool
def count(n: int) -> str:
    """Count to n."""
    LOG.append(("count", {"n": n}))
    return f"counted to {n}"


@tool
def notify(to: str, text: str) -> str:
    """Send a notification."""
    LOG.append(("notify", {"to": to, "text": text}))
    return f"sent to {to}"


TOOLS = [fetch, count, notify]


def plan(*steps: dict[str, Any]) -> str:
    return json.dumps(list(steps), ensure_ascii=False)


def step(tool_name: str, open_fields: tuple[str, ...] = (), **args: Any) -> dict[str, Any]:
    return {"tool": tool_name, "args": args, "open": list(open_fields)}


def agent(llm: ScriptedChatModel, **options: Any) -> PlanAndExecuteAgent:
    return PlanAndExecuteAgent(llm, TOOLS, prompts="en", **options)


def calls(name: str) -> list[dict[str, Any]]:
    return [args for tool_name, args in LOG if tool_name == name]


# ---------------------------------------------------------------- extracting JSON
def test_extract_json_reads_a_fenced_block_inside_prose():
    """A plan in a ```json fence with prose around it is found; prose brackets outside the fence are ignored."""
    text = 'Here is [my] plan:\n```json\n[{"tool": "fetch", "args": {"key": "a"}}]\n```\nDone {ok}.'
    assert extract_json(text) == [[{"tool": "fetch", "args": {"key": "a"}}]]


def test_extract_json_respects_brackets_inside_strings():
    """Brackets inside JSON strings do not end the candidate (string-aware balanced scan)."""
    text = 'Plan: [{"tool": "fetch", "args": {"key": "a]}["}}] and then nothing.'
    assert extract_json(text) == [[{"tool": "fetch", "args": {"key": "a]}["}}]]


def test_extract_json_repairs_single_quotes_and_trailing_commas():
    """A candidate that json.loads refuses is repaired with json_repair."""
    assert extract_json("[{'tool': 'fetch', 'args': {'key': 'a',},},]") == [[{"tool": "fetch", "args": {"key": "a"}}]]


def test_extract_json_refuses_cut_off_output():
    """A bracket that never closes (and nothing complete) is reported as cut off, not repaired."""
    with pytest.raises(ValueError, match="cut off"):
        extract_json('[{"tool": "fetch", "args": {"key": "a"}}, {"tool": "notify", "args": {"to": "b')


# ---------------------------------------------------------------- the plan
def test_plan_runs_every_step_in_order():
    """A plan without open fields costs one model call, runs each step, and ends with the last result."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"), step("count", n=3))])
    result = agent(llm).run("fetch a, then count to 3")
    assert result.status == "finished"
    assert LOG == [("fetch", {"key": "a"}), ("count", {"n": 3})]
    assert result.output == "counted to 3"
    assert result.llm_calls == 1


def test_plan_is_exposed_as_frozen_records():
    """The stored plan is on PlanResult.plan as frozen PlanStep records."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"), step("notify", ("text",), to="x@y.z")), '{"text": "hi"}'])
    result = agent(llm).run("task")
    assert isinstance(result, PlanResult) and isinstance(result, AgentResult)
    assert result.plan == Plan(steps=(PlanStep(tool="fetch", args={"key": "a"}),
                                      PlanStep(tool="notify", args={"to": "x@y.z"}, open=("text",))))
    with pytest.raises(ValidationError):
        result.plan.steps[0].tool = "count"  # type: ignore[misc]


def test_plan_wrapped_in_an_object_with_prose_is_accepted():
    """{"plan": [...]} inside prose and a fence is accepted."""
    reply = 'Sure!\n```json\n{"plan": [{"tool": "fetch", "args": {"key": "b"}}]}\n```'
    result = agent(ScriptedChatModel([reply])).run("task")
    assert result.status == "finished" and calls("fetch") == [{"key": "b"}]


def test_trailing_finish_step_is_dropped():
    """A FINISH written as the last plan step is not an error: the answer is the last result anyway."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"), {"tool": "FINISH", "args": {}})])
    result = agent(llm).run("task")
    assert result.status == "finished" and result.plan is not None and len(result.plan.steps) == 1


def test_unknown_tool_is_rejected_and_asked_again_with_the_error():
    """A plan naming an unknown tool is rejected; the next plan prompt carries the reason."""
    llm = ScriptedChatModel([plan(step("delete_everything")), plan(step("fetch", key="a"))])
    result = agent(llm).run("task")
    assert result.status == "finished"
    assert "unknown tool 'delete_everything'" in llm.calls[1].text
    assert calls("fetch") == [{"key": "a"}]
    assert result.steps[0].action is None and result.steps[0].is_error


def test_invalid_plans_end_the_run_after_max_plan_attempts():
    """After max_plan_attempts rejected plans the run ends with status error and no tool ran."""
    llm = ScriptedChatModel([plan(step("nope")), "I would fetch a.", plan(step("fetch", key="a"))])
    result = agent(llm, max_plan_attempts=2).run("task")
    assert result.status == "error" and "no valid plan after 2 attempts" in (result.error or "")
    assert LOG == [] and llm.remaining == 1


def test_open_field_that_is_not_an_argument_is_rejected():
    """An open field the tool does not have rejects the plan."""
    llm = ScriptedChatModel([plan(step("notify", ("subject",), to="a")), plan(step("fetch", key="a"))])
    agent(llm).run("task")
    assert "open field 'subject' is not an argument of notify" in llm.calls[1].text


def test_fixed_argument_of_the_wrong_type_is_rejected():
    """Fixed arguments are validated against the tool's schema (open fields stood in by placeholders)."""
    llm = ScriptedChatModel([plan(step("count", n="many")), plan(step("count", n=2))])
    result = agent(llm).run("task")
    assert "step 1 (count): n:" in llm.calls[1].text
    assert calls("count") == [{"n": 2}] and result.status == "finished"


def test_required_argument_neither_fixed_nor_open_is_rejected():
    """A required argument missing from both args and open rejects the plan before any tool runs."""
    llm = ScriptedChatModel([plan(step("notify", to="a")), plan(step("fetch", key="a"))])
    agent(llm).run("task")
    assert "step 1 (notify): text: Field required" in llm.calls[1].text


def test_plan_longer_than_max_plan_steps_is_rejected():
    """A plan with more than max_plan_steps steps is rejected."""
    llm = ScriptedChatModel([plan(*[step("fetch", key="a")] * 3)])
    result = agent(llm, max_plan_steps=2, max_plan_attempts=1).run("task")
    assert result.status == "error" and "at most 2" in (result.error or "") and LOG == []


# ---------------------------------------------------------------- open fields
def test_open_field_is_filled_from_the_results():
    """The fill prompt shows the results so far; only the open field is taken from the reply."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"), step("notify", ("text",), to="boss")),
                             '{"text": "a is shipped"}'])
    result = agent(llm).run("task")
    assert "record a: status shipped" in llm.calls[1].text
    assert calls("notify") == [{"to": "boss", "text": "a is shipped"}]
    assert result.violations == [] and result.llm_calls == 2


def test_missing_open_field_is_asked_again():
    """A reply without the open field is refused and the model asked again with the reason."""
    llm = ScriptedChatModel([plan(step("notify", ("text",), to="boss")), "I don't know", '{"text": "hello"}'])
    result = agent(llm).run("task")
    assert "lacks the open field" in llm.calls[2].text or "no JSON object" in llm.calls[2].text
    assert calls("notify") == [{"to": "boss", "text": "hello"}] and result.status == "finished"


def test_open_field_never_filled_ends_the_run():
    """After max_fill_attempts replies without the open field the run ends with status error; the step never runs."""
    llm = ScriptedChatModel([plan(step("notify", ("text",), to="boss")), '{"other": 1}', "{}"])
    result = agent(llm, max_fill_attempts=2).run("task")
    assert result.status == "error" and "open fields not filled" in (result.error or "")
    assert calls("notify") == []


def test_fill_in_the_agent_envelope_for_the_same_tool_is_unwrapped():
    """{"tool": <this step's tool>, "args": {...}} is the same call: its open field is used, no violation."""
    llm = ScriptedChatModel([plan(step("notify", ("text",), to="boss")),
                             '{"thought": "t", "tool": "notify", "args": {"text": "hi"}}'])
    result = agent(llm).run("task")
    assert calls("notify") == [{"to": "boss", "text": "hi"}] and result.violations == []


def test_filled_value_of_the_wrong_type_is_asked_again():
    """Filled values are validated against the tool's schema before the step runs."""
    llm = ScriptedChatModel([plan(step("count", ("n",))), '{"n": "lots"}', '{"n": 4}'])
    result = agent(llm).run("task")
    assert calls("count") == [{"n": 4}] and result.status == "finished"


# ---------------------------------------------------------------- session
def test_session_reference_is_replaced_by_code():
    """$session.<key> in a fixed argument is replaced with the session's value when the step runs."""
    llm = ScriptedChatModel([plan(step("notify", to="$session.email", text="Hi $session.name"))])
    agent(llm, session={"email": "ann@example.com", "name": "Ann"}).run("task")
    assert calls("notify") == [{"to": "ann@example.com", "text": "Hi Ann"}]


def test_missing_session_key_ends_the_run_before_any_tool():
    """A plan using a key the session lacks ends the run with status error, naming the key; no tool runs."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"), step("notify", to="$session.phone", text="x"))])
    result = agent(llm, session={"email": "ann@example.com"}).run("task")
    assert result.status == "error" and "'phone'" in (result.error or "")
    assert LOG == []


def test_session_value_is_redacted_from_results_shown_to_the_model():
    """A tool result echoing a session value is shown to the model with the reference instead."""
    llm = ScriptedChatModel([plan(step("notify", to="$session.email", text="x"), step("notify", ("text",), to="b")),
                             '{"text": "ok"}'])
    agent(llm, session={"email": "ann@example.com"}).run("task")
    assert "sent to $session.email" in llm.calls[1].text
    assert all("ann@example.com" not in c.text for c in llm.calls)


def test_filled_value_is_never_substituted():
    """A $session reference written into an open field is sent literally (no exfiltration of session values)."""
    llm = ScriptedChatModel([plan(step("notify", ("text",), to="b")), '{"text": "$session.token"}'])
    agent(llm, session={"token": "s3cr3t-token"}).run("task")
    assert calls("notify") == [{"to": "b", "text": "$session.token"}]


# ---------------------------------------------------------------- errors, answer, replan
def test_tool_error_becomes_an_observation_and_the_plan_continues():
    """A failing step is recorded as an error observation; the next steps still run."""
    llm = ScriptedChatModel([plan(step("fetch", key="missing"), step("count", n=1))])
    result = agent(llm).run("task")
    assert result.steps[0].is_error and "no such record" in result.steps[0].observation
    assert calls("count") == [{"n": 1}] and result.status == "finished"


def test_final_answer_always_makes_one_composing_call():
    """final_answer="always" composes the answer from the results with one extra call."""
    llm = ScriptedChatModel([plan(step("fetch", key="a")), "Record a has shipped."])
    result = agent(llm, final_answer="always").run("task")
    assert result.output == "Record a has shipped." and result.llm_calls == 2
    assert "record a: status shipped" in llm.calls[1].text


def test_replan_writes_a_new_plan_after_a_failed_step():
    """With replan=True a failed step triggers a new plan (seeing the results) that replaces the rest."""
    llm = ScriptedChatModel([plan(step("fetch", key="missing"), step("count", n=1)),
                             plan(step("fetch", key="b"))])
    result = agent(llm, replan=True).run("task")
    assert "no such record" in llm.calls[1].text
    assert [name for name, _ in LOG] == ["fetch", "fetch"] and calls("count") == []
    assert len(result.plans) == 2 and result.plan == result.plans[0] and result.output == "record b: status shipped"


def test_replan_is_bounded_by_max_replans():
    """After max_replans new plans, a failed step no longer triggers planning: the plan just continues."""
    llm = ScriptedChatModel([plan(step("fetch", key="missing")), plan(step("fetch", key="missing"))])
    result = agent(llm, replan=True, max_replans=1).run("task")
    assert result.llm_calls == 2 and len(result.plans) == 2 and result.status == "finished"


def test_replan_off_by_default():
    """Without replan a failed step costs no model call."""
    llm = ScriptedChatModel([plan(step("fetch", key="missing"))])
    assert agent(llm).run("task").llm_calls == 1


# ---------------------------------------------------------------- drivers, options
async def test_arun_returns_a_plan_result():
    """arun drives the same loop asynchronously."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"))])
    result = await agent(llm).arun("task")
    assert isinstance(result, PlanResult) and result.output == "record a: status shipped"


def test_stream_yields_steps_then_the_plan_result():
    """stream yields each executed step, then the PlanResult."""
    llm = ScriptedChatModel([plan(step("fetch", key="a"), step("count", n=1))])
    items = list(agent(llm).stream("task"))
    assert [type(i) for i in items] == [AgentStep, AgentStep, PlanResult]


def test_constrained_model_gets_the_plan_and_fill_schemas():
    """A model supporting JSON schema receives the plan schema, then the schema of the open fields only."""
    llm = ScriptedChatModel([json.dumps({"plan": [step("notify", ("text",), to="b")]}), '{"text": "x"}'],
                            supports_json_schema=True)
    agent(llm).run("task")
    plan_schema = llm.calls[0].kwargs["response_format"]["json_schema"]["schema"]
    branches = plan_schema["properties"]["plan"]["items"]["anyOf"]
    assert [b["properties"]["tool"]["const"] for b in branches] == ["fetch", "count", "notify"]
    fill_schema = llm.calls[1].kwargs["response_format"]["json_schema"]["schema"]
    assert fill_schema["required"] == ["text"] and list(fill_schema["properties"]) == ["text"]


@pytest.mark.parametrize("options", [{"max_plan_attempts": 0}, {"max_fill_attempts": 0}, {"max_replans": -1},
                                     {"session": ["email"]}])
def test_bad_options_are_config_errors(options):
    """Bad options raise ConfigError when the agent is built."""
    with pytest.raises(ConfigError):
        agent(ScriptedChatModel([]), **options)
