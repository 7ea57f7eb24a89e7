"""Every agent is a LangChain Runnable: invoke/batch/stream, LCEL composition, events, callbacks, wrapped models.

All offline with ScriptedChatModel and real langchain-core runnables (no mocks of LangChain itself).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import UUID

import pytest
from conftest import call, finish
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import ConfigurableField, RunnableLambda, RunnableParallel
from langchain_core.tools import tool

from react_agent import AgentResult, AgentStep, ConfigError, ReactAgent, ReflectionAgent, RunError
from react_agent.plan import PlanAndExecuteAgent
from react_agent.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def broken(text: str) -> str:
    """Always fails."""
    raise ValueError("the service is down: error")


def adder(*replies: Any, **options: Any) -> ReactAgent:
    return ReactAgent(ScriptedChatModel(list(replies)), [add], prompts="en", **options)


def two_steps(**options: Any) -> ReactAgent:
    return adder(call("add", a=2, b=40), finish("42"), **options)


class Recorder(BaseCallbackHandler):
    """Records the runs LangChain reports: (kind, name, run_id, parent_run_id, tags, payload)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def _add(self, kind: str, run_id: UUID, parent_run_id: UUID | None, **data: Any) -> None:
        self.events.append({"kind": kind, "run_id": run_id, "parent": parent_run_id, **data})

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                       tags: list[str] | None = None, name: str | None = None, **kwargs: Any) -> None:
        self._add("chain_start", run_id, parent_run_id, name=name, tags=tags, inputs=inputs)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._add("chain_end", run_id, parent_run_id, outputs=outputs)

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                            tags: list[str] | None = None, metadata: dict[str, Any] | None = None,
                            name: str | None = None, **kwargs: Any) -> None:
        self._add("model", run_id, parent_run_id, name=name, tags=tags, metadata=metadata)

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, parent_run_id: UUID | None = None,
                      name: str | None = None, **kwargs: Any) -> None:
        self._add("tool", run_id, parent_run_id, name=(serialized or {}).get("name"))

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._add("custom", run_id, None, name=name, data=data)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]


# --------------------------------------------------------------------------- the Runnable methods
def test_invoke_and_ainvoke_return_the_result() -> None:
    """invoke/ainvoke return the AgentResult of a whole run."""
    assert two_steps().invoke("What is 2 + 40?").output == "42"
    result = asyncio.run(two_steps().ainvoke({"input": "What is 2 + 40?"}))
    assert isinstance(result, AgentResult) and result.status == "finished" and len(result.steps) == 2


def test_batch_and_abatch_run_one_agent_on_many_inputs() -> None:
    """One immutable agent serves a batch: each input gets its own run and history."""
    llm = ScriptedChatModel([finish("one"), finish("two"), finish("three")])
    agent = ReactAgent(llm, [add], prompts="en")
    results = agent.batch(["a", "b", "c"], config={"max_concurrency": 1})
    assert [r.output for r in results] == ["one", "two", "three"]
    llm2 = ScriptedChatModel([finish("x"), finish("x")])
    results = asyncio.run(ReactAgent(llm2, [add], prompts="en").abatch(["a", "b"]))
    assert [r.status for r in results] == ["finished", "finished"]
    assert sorted(c.text.split("**Task**: ")[1].split("\n")[0] for c in llm2.calls) == ["a", "b"]


def test_stream_and_astream_yield_steps_then_the_result() -> None:
    """stream/astream yield each AgentStep as it completes, then the AgentResult."""
    items = list(two_steps().stream("What is 2 + 40?"))
    assert [type(i) for i in items] == [AgentStep, AgentStep, AgentResult]
    assert items[0].observation == "42" and items[-1].output == "42"

    async def collect() -> list[Any]:
        return [item async for item in two_steps().astream("What is 2 + 40?")]

    items = asyncio.run(collect())
    assert [type(i) for i in items] == [AgentStep, AgentStep, AgentResult]


def test_a_chat_prompt_template_pipes_into_the_agent() -> None:
    """`prompt | agent`: the last human message is the task, the system message reaches the model too."""
    prompt = ChatPromptTemplate.from_messages([("system", "Answer tersely."), ("human", "Add {x} and {y}")])
    llm = ScriptedChatModel([call("add", a=2, b=40), finish("42")])
    chain = prompt | ReactAgent(llm, [add], prompts="en") | RunnableLambda(lambda r: r.output)
    assert chain.invoke({"x": 2, "y": 40}) == "42"
    first = llm.calls[0].text
    assert "The user's new request (read it in the light of the conversation above): Add 2 and 40" in first
    assert "Instructions: Answer tersely." in first


def test_with_config_names_the_run_and_passes_tags() -> None:
    """with_config(run_name, tags) reaches the agent's chain run; its model calls inherit the tags."""
    recorder = Recorder()
    two_steps().with_config(run_name="adder", tags=["team-a"]).invoke("2+40?", {"callbacks": [recorder]})
    start = recorder.of("chain_start")[0]
    assert start["name"] == "adder" and "team-a" in start["tags"]
    assert all("team-a" in m["tags"] for m in recorder.of("model"))


class _FlakyOnce(ReactAgent):
    """Raises a bug (RunError) in its first run only: what with_retry / with_fallbacks are for."""

    def build_messages(self, state: Any) -> Any:
        if not FLAKY:
            FLAKY.append(1)
            raise RuntimeError("a bug in an override")
        return super().build_messages(state)


FLAKY: list[int] = []


def test_with_retry_retries_a_run_that_raised() -> None:
    """with_retry re-runs the agent after an exception (a RunError from a bug), not after a finished run."""
    FLAKY.clear()
    agent = _FlakyOnce(ScriptedChatModel([finish("ok")]), [add], prompts="en")
    result = agent.with_retry(retry_if_exception_type=(RunError,), stop_after_attempt=2,
                              wait_exponential_jitter=False).invoke("task")
    assert result.output == "ok" and FLAKY == [1]


def test_with_fallbacks_uses_the_next_agent_when_one_raises() -> None:
    """with_fallbacks falls back to another agent when the first raises."""
    FLAKY.clear()
    primary = _FlakyOnce(ScriptedChatModel([]), [add], prompts="en")
    chain = primary.with_fallbacks([adder(finish("from the fallback"))])
    assert chain.invoke("task").output == "from the fallback"


def test_runnable_parallel_runs_two_agents_on_one_input() -> None:
    """RunnableParallel fans one input out to two agents."""
    both = RunnableParallel(first=adder(finish("A")), second=adder(finish("B")))
    out = both.invoke("task")
    assert (out["first"].output, out["second"].output) == ("A", "B")


def test_configurable_fields_choose_agent_options_per_call() -> None:
    """configurable_fields: an option is chosen per call from config["configurable"]; the agent itself never
    changes, and each distinct choice is one validated agent."""
    llm = ScriptedChatModel([call("add", a=1, b=1), call("add", a=1, b=1), finish("done")])
    base = ReactAgent(llm, [add], prompts="en", max_iterations=1)
    agent = base.configurable_fields(max_iterations=ConfigurableField(id="steps", name="Max steps"))
    assert agent.invoke("x").status == "max_iterations"
    result = agent.invoke("x", {"configurable": {"steps": 5}})
    assert result.status == "finished" and len(result.steps) == 2
    assert base.config.max_iterations == 1
    assert agent.variant({"configurable": {"steps": 5}}) is agent.variant({"configurable": {"steps": 5}})
    spec = next(s for s in agent.config_specs if s.id == "steps")
    assert spec.default == 1 and spec.name == "Max steps"
    with pytest.raises(ConfigError, match="max_iterations must be a positive integer"):
        agent.invoke("x", {"configurable": {"steps": 0}})
    with pytest.raises(ConfigError, match="'max_steps' is not an option"):
        base.configurable_fields(max_steps=ConfigurableField(id="s"))


def test_with_options_derives_an_agent() -> None:
    """with_options: a new agent with the same model and tools and some options changed."""
    base = adder(finish("x"), max_iterations=2)
    derived = base.with_options(max_iterations=7)
    assert (derived.config.max_iterations, derived.config.prompts, derived.llm) == (7, "en", base.llm)
    assert base.config.max_iterations == 2 and type(derived) is ReactAgent


def test_a_configurable_model_is_configured_through_the_agent() -> None:
    """A configurable model (llm.configurable_fields) is configured per call through the agent's config."""
    agent = ReactAgent(ScriptedChatModel([finish("default")]).configurable_fields(
        responses=ConfigurableField(id="script")), [add], prompts="en")
    assert agent.invoke("task").output == "default"
    assert agent.invoke("task", {"configurable": {"script": [finish("configured")]}}).output == "configured"


# --------------------------------------------------------------------------- input coercion
@pytest.mark.parametrize("value", [
    "What is 2 + 40?",
    HumanMessage("What is 2 + 40?"),
    [HumanMessage("What is 2 + 40?")],
    {"input": "What is 2 + 40?"},
    {"task": "What is 2 + 40?"},
    {"messages": [HumanMessage("What is 2 + 40?")]},
    ChatPromptTemplate.from_messages([("human", "What is 2 + 40?")]).invoke({}),
], ids=["str", "message", "messages", "input", "task", "dict-messages", "prompt-value"])
def test_accepted_inputs(value: Any) -> None:
    """Strings, messages, PromptValues and dicts all carry the task."""
    llm = ScriptedChatModel([finish("42")])
    ReactAgent(llm, [add], prompts="en").invoke(value)
    assert "**Task**: What is 2 + 40?" in llm.calls[0].text


@pytest.mark.parametrize(("value", "named"), [
    (42, "got int"),
    ({"input": 3.5}, "got float (in the dict)"),
    ([1, 2], "got list"),
    (None, "got NoneType"),
])
def test_wrong_input_type_names_what_arrived_and_what_is_accepted(value: Any, named: str) -> None:
    """A wrong input is a ConfigError naming the type that arrived and the accepted ones."""
    with pytest.raises(ConfigError) as info:
        adder().invoke(value)
    text = str(info.value)
    assert named in text
    assert "a string, a PromptValue, a list of messages or a dict with 'input'" in text


def test_dict_without_a_task_key_names_the_keys() -> None:
    """A dict without input/task/question/messages is refused, naming the keys it had."""
    with pytest.raises(ConfigError, match=r"needs the key 'input'.*\['query'\]"):
        adder().invoke({"query": "x"})


@pytest.mark.parametrize(("config", "named"), [
    (5, "config must be a dict"),
    ("callbacks", "config must be a dict"),
    ({"callbacks": 5}, r"config\['callbacks'\] must be a list of callback handlers"),
    ({"callbacks": BaseCallbackHandler()}, r"config\['callbacks'\]"),  # a handler, not a list of them
    ({"configurable": 5}, r"config\['configurable'\] must be a dict"),
    ({"metadata": ["a"]}, r"config\['metadata'\] must be a dict"),
    ({"tags": "urgent"}, r"config\['tags'\] must be a list of strings"),
    ({"tags": [1]}, r"config\['tags'\] must be a list of strings"),
    ({"run_name": 7}, r"config\['run_name'\] must be a string"),
])
async def test_a_config_of_the_wrong_shape_is_a_config_error_naming_the_key(config: Any, named: str) -> None:
    """A RunnableConfig that is not a dict, or whose keys a run reads have the wrong type, is refused before the
    model is called (langchain-core would fail inside with an AttributeError)."""
    llm = ScriptedChatModel([finish("done")] * 8)
    agent = ReactAgent(llm, [add], prompts="en")
    with pytest.raises(ConfigError, match=named):
        agent.invoke("x", config)
    with pytest.raises(ConfigError, match=named):
        await agent.ainvoke("x", config)
    with pytest.raises(ConfigError, match=named):
        agent.run("x", config=config)
    configurable = agent.configurable_fields(max_iterations=ConfigurableField(id="steps"))
    with pytest.raises(ConfigError, match=named):
        configurable.invoke("x", config)
    assert llm.calls == []
    assert agent.invoke("x", {"callbacks": [], "tags": ["a"], "metadata": {}, "configurable": {}}).output == "done"


# --------------------------------------------------------------------------- events and callbacks
def test_astream_events_v2_carries_steps_and_step_events() -> None:
    """astream_events(version="v2"): on_chain_stream chunks are the AgentSteps (then the result); each step
    is also a `react_agent.step` custom event with its index; model and tool runs are nested."""

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in two_steps(name="adder").astream_events("2+40?", version="v2")]

    events = asyncio.run(collect())
    root = next(e for e in events if e["event"] == "on_chain_start")
    chunks = [e["data"]["chunk"] for e in events if e["event"] == "on_chain_stream" and e["name"] == "adder"]
    assert [type(c) for c in chunks] == [AgentStep, AgentStep, AgentResult]
    custom = [e for e in events if e["event"] == "on_custom_event"]
    assert [e["name"] for e in custom] == ["react_agent.step", "react_agent.step"]
    assert [e["data"]["index"] for e in custom] == [1, 2]
    assert custom[0]["data"]["step"].action == "add" and custom[1]["data"]["step"].action == "FINISH"
    nested = [e for e in events if e["event"] in ("on_chat_model_start", "on_tool_start")]
    assert len(nested) == 3
    assert all(e["parent_ids"] == [root["run_id"]] for e in nested)
    end = next(e for e in events if e["event"] == "on_chain_end" and e["name"] == "adder")
    assert end["data"]["output"]["status"] == "finished"


def test_model_and_tool_runs_are_children_of_the_agent_run() -> None:
    """Callback nesting: the agent's chain run is the parent of every model and tool run."""
    recorder = Recorder()
    two_steps().invoke("2+40?", {"callbacks": [recorder]})
    root = recorder.of("chain_start")[0]
    assert root["parent"] is None
    children = recorder.of("model") + recorder.of("tool")
    assert len(children) == 3 and all(c["parent"] == root["run_id"] for c in children)
    assert [e["data"]["index"] for e in recorder.of("custom")] == [1, 2]


def test_chain_end_carries_status_steps_calls_and_usage() -> None:
    """The agent run's end event carries the result's status, steps count, model calls and usage."""
    recorder = Recorder()
    llm = ScriptedChatModel([call("add", a=1, b=2), finish("3")], usage=True)
    result = ReactAgent(llm, [add], prompts="en").invoke("1+2?", {"callbacks": [recorder]})
    outputs = recorder.of("chain_end")[-1]["outputs"]
    assert outputs["status"] == "finished" and outputs["steps"] == 2 and outputs["llm_calls"] == 2
    assert outputs["usage"] == result.usage.model_dump() and result.usage.total_tokens > 0


# --------------------------------------------------------------------------- trace names
def purposes(recorder: Recorder) -> list[tuple[str | None, list[str]]]:
    return [(m["name"], [t for t in m["tags"] if t.startswith("react_agent:")]) for m in recorder.of("model")]


def test_model_calls_are_named_and_tagged_by_purpose() -> None:
    """decision and final_answer calls are told apart by run name, tag and metadata."""
    recorder = Recorder()
    adder(call("add", a=1, b=2), finish(""), "It is 3.", final_answer="auto").invoke("1+2?", {"callbacks": [recorder]})
    assert purposes(recorder) == [("decision", ["react_agent:decision"]), ("decision", ["react_agent:decision"]),
                                  ("final_answer", ["react_agent:final_answer"])]
    assert recorder.of("model")[2]["metadata"]["react_agent_purpose"] == "final_answer"


def test_reflection_call_is_named_reflection() -> None:
    """A ReflectionAgent's reflection call is named `reflection`."""
    recorder = Recorder()
    llm = ScriptedChatModel([call("broken", text="x"), "Stop calling broken.", finish("gave up")])
    ReflectionAgent(llm, [broken], prompts="en").invoke("task", {"callbacks": [recorder]})
    assert [name for name, _ in purposes(recorder)] == ["decision", "reflection", "decision"]


def test_plan_and_fill_calls_are_named() -> None:
    """A PlanAndExecuteAgent's calls are named `plan` and `fill`."""

    @tool
    def notify(to: str, text: str) -> str:
        """Send a notification."""
        return f"sent to {to}"

    plan = json.dumps([{"tool": "add", "args": {"a": 1, "b": 2}, "open": []},
                       {"tool": "notify", "args": {"to": "boss"}, "open": ["text"]}])
    recorder = Recorder()
    llm = ScriptedChatModel([plan, '{"text": "the sum is 3"}'])
    result = PlanAndExecuteAgent(llm, [add, notify], prompts="en").invoke("task", {"callbacks": [recorder]})
    assert result.status == "finished"
    assert purposes(recorder) == [("plan", ["react_agent:plan"]), ("fill", ["react_agent:fill"])]


# --------------------------------------------------------------------------- token budget
def test_token_budget_ends_the_run_with_status_budget() -> None:
    """max_tokens_budget: once the reported usage reaches it, no further model call is made."""
    llm = ScriptedChatModel([call("add", a=1, b=2), call("add", a=3, b=4), finish("done")], usage=True)
    result = ReactAgent(llm, [add], prompts="en", max_tokens_budget=50).invoke("add things")
    assert result.status == "budget"
    assert result.llm_calls == len(llm.calls) == 1
    assert result.usage.total_tokens >= 50
    assert "token budget of 50" in (result.error or "")
    assert result.output == result.steps[-1].observation == "3"


def test_token_budget_not_reached_changes_nothing() -> None:
    """A budget the run stays under lets it finish normally."""
    llm = ScriptedChatModel([finish("done")], usage=True)
    assert ReactAgent(llm, [add], prompts="en", max_tokens_budget=100_000).invoke("x").status == "finished"


# --------------------------------------------------------------------------- wrapped models
@pytest.mark.parametrize("wrap", [
    lambda m: m.bind(stop=["\nObservation:"]),
    lambda m: m.with_retry(stop_after_attempt=2),
    lambda m: m.with_fallbacks([ScriptedChatModel([finish("fallback")])]),
    lambda m: m.with_config(tags=["wrapped"]),
    lambda m: m.bind(temperature=0).with_retry(),
], ids=["bind", "with_retry", "with_fallbacks", "with_config", "bind+with_retry"])
def test_wrapped_models_drive_the_loop(wrap: Any) -> None:
    """Bound and wrapped chat models are accepted and drive a whole run."""
    llm = ScriptedChatModel([call("add", a=2, b=40), finish("42")])
    result = ReactAgent(wrap(llm), [add], prompts="en").invoke("2+40?")
    assert result.output == "42" and len(llm.calls) == 2


@pytest.mark.parametrize("wrap", [
    lambda m: m.bind(temperature=0),
    lambda m: m.with_retry(),
    lambda m: m.with_fallbacks([ScriptedChatModel([])]),
    lambda m: m.with_config(tags=["wrapped"]),
    lambda m: m.bind(temperature=0).with_retry(),
], ids=["bind", "with_retry", "with_fallbacks", "with_config", "bind+with_retry"])
def test_constrained_decoding_is_detected_through_wrappers(wrap: Any) -> None:
    """A model that supports JSON-schema decoding is detected through its wrappers; the schema reaches it."""
    llm = ScriptedChatModel([finish("ok")], supports_json_schema=True)
    agent = ReactAgent(wrap(llm), [add], prompts="en")
    assert agent.mode == "json_schema"
    agent.invoke("task")
    assert llm.calls[0].kwargs["response_format"]["type"] == "json_schema"


def test_a_bound_model_keeps_its_bound_arguments() -> None:
    """Arguments bound to the model reach every call."""
    llm = ScriptedChatModel([finish("ok")])
    ReactAgent(llm.bind(stop=["END"]), [add], prompts="en").invoke("task")
    assert llm.calls[0].kwargs.get("stop") == ["END"]


def test_a_non_runnable_llm_is_refused() -> None:
    """Something that is not a Runnable is a ConfigError naming its type."""
    with pytest.raises(ConfigError, match="got str"):
        ReactAgent("gpt-4", [add])


def test_messages_input_uses_earlier_turns_as_history() -> None:
    """A message list is a conversation: the last human message is the task, earlier turns are history."""
    llm = ScriptedChatModel([finish("ivan@test.com")])
    adder_agent = ReactAgent(llm, [add], prompts="en")
    adder_agent.invoke([SystemMessage("Be brief."), HumanMessage("Who registered last?"), AIMessage("Ivan."),
                        HumanMessage("And his email?")])
    text = llm.calls[0].text
    assert "Instructions: Be brief.\nUser: Who registered last?\nAssistant: Ivan." in text
    assert "conversation above): And his email?" in text
