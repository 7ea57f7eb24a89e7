"""Behaviour of the loop shared by every agent, with the scripted fake model."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from conftest import call, finish
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from react_agent import AgentResult, AgentStep, ConfigError, ReactAgent, ReflectionAgent, RetryPolicy, RunError
from react_agent.testing import FunctionChatModel, ScriptedChatModel, ScriptExhaustedError


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@tool
def broken(text: str) -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


@tool
def slow(seconds: float) -> str:
    """Sleep for a while."""
    time.sleep(seconds)
    return "woke up"


def test_history_is_isolated_between_runs():
    """A second run() sees none of the first run's history (the seed kept self.history across runs)."""
    llm = ScriptedChatModel([call("echo", text="one"), finish("a"), finish("b")])
    agent = ReactAgent(llm, [echo], prompts="en")
    agent.run("first task")
    second = agent.run("second task")
    assert "echo: one" not in llm.calls[2].text
    assert "No history yet" in llm.calls[2].text
    assert [s.action for s in second.steps] == ["FINISH"]


def test_parse_error_becomes_observation():
    """Unparseable text is fed back to the model as an observation, and the run goes on."""
    llm = ScriptedChatModel(["I think I should call a tool, maybe echo?", finish("ok")])
    result = ReactAgent(llm, [echo], prompts="en").run("task")
    assert result.status == "finished"
    bad = result.steps[0]
    assert bad.action is None and bad.is_error
    assert bad.raw_output.startswith("I think")
    assert "Format error" in bad.observation
    assert "Format error" in llm.calls[1].text
    assert "echo, FINISH" in llm.calls[1].text


def test_consecutive_parse_errors_are_bounded():
    """After max_parse_errors unparseable replies in a row the run ends with status 'error'."""
    llm = ScriptedChatModel(["nope", "still nope"])
    result = ReactAgent(llm, [echo], max_parse_errors=2, max_iterations=10).run("task")
    assert result.status == "error"
    assert "2 unparseable replies" in (result.error or "")
    assert len(result.steps) == 2


def test_unknown_tool_lists_available_tools():
    """Calling a tool that does not exist gives an error observation naming the available tools."""
    llm = ScriptedChatModel([call("delete_everything"), finish("ok")])
    result = ReactAgent(llm, [echo], prompts="en").run("task")
    step = result.steps[0]
    assert step.is_error
    assert step.observation == "Error: tool 'delete_everything' not found. Available tools: echo, FINISH."


def test_invalid_arguments_show_pydantic_message_and_arguments():
    """Wrong arguments are not executed; the observation has the validation message and the arguments."""
    llm = ScriptedChatModel([call("echo", txt="hi"), finish("ok")])
    result = ReactAgent(llm, [echo], prompts="en").run("task")
    obs = result.steps[0].observation
    assert "unexpected argument(s): txt" in obs
    assert "text: Field required" in obs
    assert "Available arguments: text" in obs


def test_tool_exception_becomes_observation():
    """A tool that raises gives an error observation with its message; the run continues."""
    llm = ScriptedChatModel([call("broken", text="x"), finish("gave up")])
    result = ReactAgent(llm, [broken], prompts="en").run("task")
    assert result.steps[0].is_error
    assert result.steps[0].observation == "Error executing broken: disk on fire"
    assert result.status == "finished"


def test_tool_timeout_is_real():
    """A tool running longer than timeout is abandoned and reported as an error observation."""
    llm = ScriptedChatModel([call("slow", seconds=5), finish("ok")])
    started = time.monotonic()
    result = ReactAgent(llm, [slow], timeout=0.2, prompts="en").run("task")
    assert time.monotonic() - started < 2
    assert result.steps[0].is_error
    assert "did not answer within 0.2 s" in result.steps[0].observation


def test_max_iterations_reports_last_observation():
    """The iteration limit ends the run with status 'max_iterations', all steps and the last observation."""
    llm = ScriptedChatModel([call("echo", text=str(i)) for i in range(3)])
    result = ReactAgent(llm, [echo], max_iterations=3, prompts="en").run("task")
    assert result.status == "max_iterations"
    assert len(result.steps) == 3
    assert result.output == "Max iterations reached. Last state: echo: 2"
    assert result.llm_calls == 3


def test_final_answer_always_writes_answer_from_history():
    """final_answer='always' makes one extra call that writes the answer from the history."""
    llm = ScriptedChatModel([call("echo", text="x"), finish(""), "Echoed x."])
    result = ReactAgent(llm, [echo], final_answer="always", prompts="en").run("task")
    assert result.output == "Echoed x."
    assert "writes the final answer" in llm.calls[2].text
    assert "echo: x" in llm.calls[2].text


def test_final_answer_auto_only_when_empty():
    """The default final_answer='auto' calls the model again only when FINISH came without an answer."""
    llm = ScriptedChatModel([finish(""), "Nothing to do."])
    assert ReactAgent(llm, [echo]).run("task").output == "Nothing to do."
    llm2 = ScriptedChatModel([finish("Done.")])
    assert ReactAgent(llm2, [echo]).run("task").llm_calls == 1


def test_max_iterations_with_final_answer_always():
    """With final_answer='always' the iteration limit still reports its status but with a written answer."""
    llm = ScriptedChatModel([call("echo", text="1"), "Partial: echoed 1."])
    result = ReactAgent(llm, [echo], max_iterations=1, final_answer="always").run("task")
    assert result.status == "max_iterations"
    assert result.output == "Partial: echoed 1."


def test_history_window_and_truncation():
    """The prompt shows only the last history_window steps; long observations are cut behind a marker."""

    @tool
    def big(n: int) -> str:
        """Return a long text."""
        return "x" * 50 + f"#{n}"

    llm = ScriptedChatModel([call("big", n=1), call("big", n=2), call("big", n=3), finish("ok")])
    result = ReactAgent(llm, [big], history_window=2, max_observation_chars=10, prompts="en").run("task")
    last_prompt = llm.calls[3].text
    assert '"n": 1' not in last_prompt and '"n": 2' in last_prompt and '"n": 3' in last_prompt
    assert "xxxxxxxxxx…[42 characters truncated]" in last_prompt
    assert result.steps[0].observation == "x" * 50 + "#1"  # the result keeps everything


def test_repetition_triggers_reflection():
    """The same action with the same input twice in a row triggers a reflection, even without errors."""
    llm = ScriptedChatModel([
        call("echo", text="a"), call("echo", text="a"), "You are repeating yourself; finish.", finish("ok"),
    ])
    result = ReflectionAgent(llm, [echo], prompts="en").run("task")
    assert result.steps[1].reflection == "You are repeating yourself; finish."
    assert result.steps[0].reflection is None
    assert "repeating yourself" in llm.calls[3].text
    assert result.llm_calls == 4


def test_same_action_three_times_triggers_reflection():
    """The same tool three times in a row (different inputs) triggers a reflection."""
    llm = ScriptedChatModel([call("echo", text="a"), call("echo", text="b"), call("echo", text="c"),
                             "Stop calling echo.", finish("ok")])
    result = ReflectionAgent(llm, [echo], prompts="en").run("task")
    assert [s.reflection for s in result.steps[:3]] == [None, None, "Stop calling echo."]


def test_reflections_are_bounded():
    """No more than max_reflections reflection calls happen in one run."""
    replies = []
    for i in range(4):
        replies += [call("broken", text=str(i)), f"reflection {i}"]
    llm = ScriptedChatModel([*replies[:-3], call("broken", text="x"), finish("stop")])
    result = ReflectionAgent(llm, [broken], max_reflections=2, max_iterations=5).run("task")
    assert sum(s.reflection is not None for s in result.steps) == 2
    assert result.status == "finished"


def test_model_error_ends_run_with_error_status():
    """A non-transient model error ends the run with status 'error', keeping the steps so far."""
    llm = ScriptedChatModel([call("echo", text="a"), ValueError("bad request")])
    result = ReactAgent(llm, [echo]).run("task")
    assert result.status == "error"
    assert "ValueError: bad request" in (result.error or "")
    assert len(result.steps) == 1


def test_transient_model_error_is_retried():
    """A transient error (ConnectionError) is retried with backoff and the run succeeds."""
    llm = ScriptedChatModel([ConnectionError("reset"), finish("ok")])
    agent = ReactAgent(llm, [echo], retry=RetryPolicy(max_attempts=2, initial_wait=0.01, jitter=0))
    result = agent.run("task")
    assert result.status == "finished" and len(llm.calls) == 2


def test_script_exhaustion_is_loud():
    """The fake model raises when its script runs out; the run reports it as a model error."""
    llm = ScriptedChatModel([call("echo", text="a")])
    result = ReactAgent(llm, [echo], retry=None).run("task")
    assert result.status == "error" and "ScriptExhaustedError" in (result.error or "")
    with pytest.raises(ScriptExhaustedError):
        llm.invoke("again")


@pytest.mark.parametrize(("make", "named"), [
    (lambda: ScriptedChatModel(finish("ok")), "takes a list of responses"),  # one text: read as its letters
    (lambda: ScriptedChatModel([finish("ok"), 5]), "response 2 must be a text, an AIMessage or an exception"),
    (lambda: ScriptedChatModel({"a": 1}), "takes a list of responses"),
    (lambda: FunctionChatModel(function="FINISH"), "needs function="),
    (lambda: FunctionChatModel(function=lambda messages: "x", delay=float("nan")), "delay must be seconds >= 0"),
    (lambda: FunctionChatModel(function=lambda messages: "x", delay=-0.5), "delay must be seconds >= 0"),
    (lambda: FunctionChatModel(function=lambda messages: "x", delay=10**400), "delay must be at most threading"),
])
def test_a_test_double_given_the_wrong_script_is_a_config_error(make, named):  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=named):
        make()


def test_a_scripted_model_takes_any_iterable_of_responses():
    llm = ScriptedChatModel(finish(text) for text in ("a", "b"))
    assert llm.remaining == 2 and ReactAgent(llm, [echo]).run("task").output == "a"


def test_bug_in_overridden_method_raises_run_error_with_steps():
    """An exception from our code or an override propagates as RunError carrying the steps so far."""

    class Buggy(ReflectionAgent):
        def needs_reflection(self, state):  # type: ignore[no-untyped-def]
            raise KeyError("oops")

    llm = ScriptedChatModel([call("echo", text="a")])
    with pytest.raises(RunError) as info:
        Buggy(llm, [echo]).run("task")
    assert len(info.value.steps) == 1 and isinstance(info.value.__cause__, KeyError)


def test_stream_yields_steps_then_result():
    """stream() yields each AgentStep as it completes, then the AgentResult."""
    llm = ScriptedChatModel([call("echo", text="a"), finish("ok")])
    items = list(ReactAgent(llm, [echo]).stream("task"))
    assert [type(i) for i in items] == [AgentStep, AgentStep, AgentResult]
    assert items[-1].output == "ok"


def test_stream_is_lazy():
    """stream() calls the model only as the consumer asks for the next step."""
    llm = ScriptedChatModel([call("echo", text="a"), finish("ok")])
    stream = ReactAgent(llm, [echo]).stream("task")
    next(stream)
    assert len(llm.calls) == 1


async def test_arun_matches_run():
    """arun() runs the same loop asynchronously and gives the same result."""
    script = [call("echo", text="a"), finish("ok")]
    sync = ReactAgent(ScriptedChatModel(script), [echo]).run("task")
    result = await ReactAgent(ScriptedChatModel(script), [echo]).arun("task")
    assert result.model_dump(exclude={"steps"}) == sync.model_dump(exclude={"steps"})
    assert [s.observation for s in result.steps] == [s.observation for s in sync.steps]


async def test_async_tool_timeout():
    """In arun() a slow async tool is cancelled after timeout."""

    @tool
    async def snooze(seconds: float) -> str:
        """Sleep asynchronously."""
        await asyncio.sleep(seconds)
        return "woke"

    llm = ScriptedChatModel([call("snooze", seconds=5), finish("ok")])
    result = await ReactAgent(llm, [snooze], timeout=0.1, prompts="en").arun("task")
    assert "did not answer within 0.1 s" in result.steps[0].observation


def test_list_content_blocks_are_read():
    """A model whose message content is a list of blocks works like one with a string."""
    reply = AIMessage(content=[{"type": "text", "text": '{"action": "FINISH", '},
                               {"type": "text", "text": '"action_input": "ok"}'}])
    result = ReactAgent(ScriptedChatModel([reply]), [echo]).run("task")
    assert result.output == "ok"


def test_usage_is_summed():
    """Token usage reported by the model is summed over calls."""
    llm = ScriptedChatModel([call("echo", text="a"), finish("ok")], usage=True)
    result = ReactAgent(llm, [echo]).run("task")
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.usage.input_tokens == sum(s.usage.input_tokens for s in result.steps)


def test_plain_functions_are_tools():
    """A plain typed function with a docstring works as a tool."""

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    llm = ScriptedChatModel([call("add", a=2, b=3), finish("5")])
    result = ReactAgent(llm=llm, tools=[add]).run("2+3")
    assert result.steps[0].observation == "5"
    assert "add - Add two integers." in llm.calls[0].text


def test_single_string_input_maps_to_single_argument_tool():
    """A bare string action_input is given to a tool that has exactly one argument."""
    text = json.dumps({"action": "echo", "action_input": "hello"})
    result = ReactAgent(ScriptedChatModel([text, finish("ok")]), [echo]).run("task")
    assert result.steps[0].observation == "echo: hello"


def test_constrained_decoding_passes_schema_when_supported():
    """A model declaring supports_json_schema gets a response_format derived from the tools."""
    llm = ScriptedChatModel([finish("ok")], supports_json_schema=True)
    ReactAgent(llm, [echo]).run("task")
    fmt = llm.calls[0].kwargs["response_format"]
    branches = fmt["json_schema"]["schema"]["anyOf"]
    assert {b["properties"]["action"]["const"] for b in branches} == {"echo", "FINISH"}


def test_constrained_decoding_off_by_detection_or_option():
    """Without the capability (or with constrained=False) no response_format is sent."""
    llm = ScriptedChatModel([finish("ok")])
    ReactAgent(llm, [echo]).run("task")
    assert "response_format" not in llm.calls[0].kwargs
    llm2 = ScriptedChatModel([finish("ok")], supports_json_schema=True)
    ReactAgent(llm2, [echo], constrained=False).run("task")
    assert "response_format" not in llm2.calls[0].kwargs


def test_callbacks_see_model_and_tool_calls():
    """LangChain callbacks passed in config see the agent run, the model calls and the tool calls."""
    events: list[str] = []

    class Recorder(BaseCallbackHandler):
        def on_chain_start(self, serialized, inputs, **kw):  # type: ignore[no-untyped-def]
            events.append("chain")

        def on_chat_model_start(self, serialized, messages, **kw):  # type: ignore[no-untyped-def]
            events.append("model")

        def on_tool_start(self, serialized, input_str, **kw):  # type: ignore[no-untyped-def]
            events.append("tool")

    llm = ScriptedChatModel([call("echo", text="a"), finish("ok")])
    ReactAgent(llm, [echo]).run("task", config={"callbacks": [Recorder()]})
    assert events[0] == "chain"
    assert events.count("model") == 2 and events.count("tool") == 1


def test_approval_refusal_becomes_observation():
    """A tool marked requires_approval runs only if the approve callback says yes."""
    guarded = echo.model_copy(update={"metadata": {"requires_approval": True}})
    asked: list[str] = []
    llm = ScriptedChatModel([call("echo", text="a"), finish("ok")])
    result = ReactAgent(llm, [guarded], prompts="en",
                        approve=lambda name, args: asked.append(name) is not None).run("task")
    assert asked == ["echo"]
    assert "not approved" in result.steps[0].observation


def test_max_execution_time_ends_run_with_timeout():
    """A per-run deadline ends the run with status 'timeout' and the steps so far."""
    llm = ScriptedChatModel([call("slow", seconds=0.3), call("slow", seconds=0.3)])
    result = ReactAgent(llm, [slow], max_execution_time=0.2, prompts="en").run("task")
    assert result.status == "timeout"
    assert len(result.steps) == 1
    assert result.output.startswith("Execution time limit reached")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_iterations": 0}, "max_iterations must be a positive integer"),
        ({"final_answer": "sometimes"}, "final_answer must be"),
        ({"timeout": -1}, "timeout must be None or positive"),
        ({"prompts": "de"}, "neither a language"),
    ],
)
def test_developer_mistakes_raise_config_error(kwargs, message):
    """Bad options raise ConfigError at construction with a message saying what to fix."""
    with pytest.raises(ConfigError, match=message):
        ReactAgent(ScriptedChatModel([]), [echo], **kwargs)


def test_duplicate_and_reserved_tool_names():
    """Two tools with one name, or a tool named FINISH, are rejected at construction."""
    with pytest.raises(ConfigError, match="two tools are named 'echo'"):
        ReactAgent(ScriptedChatModel([]), [echo, echo])

    @tool("finish")
    def fin(x: str) -> str:
        """Nope."""
        return x

    with pytest.raises(ConfigError, match=r"'finish' is FINISH or a synonym of it.*rename the tool"):
        ReactAgent(ScriptedChatModel([]), [fin])


def test_llm_must_be_a_langchain_model():
    """Passing something that is not a langchain-core model is a ConfigError."""
    with pytest.raises(ConfigError, match="langchain-core chat model"):
        ReactAgent("gpt-4", [echo])  # type: ignore[arg-type]


def test_streamed_step_carries_its_reflection():
    """stream() publishes a step only after its reflection is made, so the step shows the reflection."""
    llm = ScriptedChatModel([call("broken", text="a"), "Use another tool.", finish("ok")])
    items = list(ReflectionAgent(llm, [broken], prompts="en").stream("task"))
    assert items[0].reflection == "Use another tool."


def test_tool_raising_its_own_timeout_error_is_a_tool_error():
    """A TimeoutError raised by the tool itself is a tool error, not an abandoned call."""

    @tool
    def flaky(x: str) -> str:
        """Raise a TimeoutError of its own."""
        raise TimeoutError("upstream API timed out")

    llm = ScriptedChatModel([call("flaky", x="a"), finish("ok")])
    result = ReactAgent(llm, [flaky], prompts="en").run("task")
    assert result.steps[0].observation == "Error executing flaky: upstream API timed out"


def test_timeout_template_may_use_steps():
    """The timeout template gets the run's steps, as TEMPLATE_VARIABLES allows."""
    llm = ScriptedChatModel([call("slow", seconds=0.3), finish("late")])
    agent = ReactAgent(llm, [slow], max_execution_time=0.2,
                       prompts={"timeout": "{{ last_observation }} after {{ steps | length }} step(s)"})
    result = agent.run("task")
    assert result.status == "timeout"
    assert result.output.endswith(" after 1 step(s)")
    assert result.steps[0].is_error  # the tool's timeout was clipped to the deadline


def test_plain_llm_works_too():
    """A langchain-core LLM (text in, text out) drives the agent like a chat model does."""
    from langchain_core.language_models import FakeListLLM

    llm = FakeListLLM(responses=[call("echo", text="hi"), finish("done")])
    result = ReactAgent(llm, [echo]).run("task")
    assert result.status == "finished" and result.output == "done"
    assert result.steps[0].observation == "echo: hi"
