"""protocol='native' through real clients: ChatOpenAI and GigaChat against loopback servers speaking their APIs."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from pydantic import BaseModel
from tool_call_servers import GigaChatToolServer, OpenAIToolServer

from react_agent import ReactAgent
from react_agent.runtime._journal import read_journal

langchain_openai = pytest.importorskip("langchain_openai")
langchain_gigachat = pytest.importorskip("langchain_gigachat")

LATENCY = 0.4


def weather_tools(log: list[str]) -> list[Any]:
    lock = threading.Lock()

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        time.sleep(LATENCY)
        with lock:
            log.append(city)
        return f"{city}: sunny"

    return [weather]


def chat_openai(server: OpenAIToolServer) -> Any:
    return langchain_openai.ChatOpenAI(model="loopback", base_url=server.base_url, api_key="sk-loopback",
                                       max_retries=0, timeout=10)


THREE_CITIES = [[("weather", {"city": "Oslo"}), ("weather", {"city": "Rome"}), ("weather", {"city": "Lima"})],
                "Oslo, Rome and Lima are sunny."]


def test_chat_openai_parallel_tool_calls_run_concurrently_and_go_back_as_tool_messages() -> None:
    """Three calls in one reply run at once (about one tool latency) and return in call order; the second
    request carries the assistant message with the three tool_calls and one tool message per call id."""
    log: list[str] = []
    server = OpenAIToolServer(THREE_CITIES)
    with server.running():
        agent = ReactAgent(chat_openai(server), weather_tools(log), protocol="native", prompts="en")
        started = time.monotonic()
        result = agent.run("Weather in Oslo, Rome and Lima?")
        elapsed = time.monotonic() - started
    assert result.status == "finished" and result.output == "Oslo, Rome and Lima are sunny."
    assert [s.observation for s in result.steps[:3]] == ["Oslo: sunny", "Rome: sunny", "Lima: sunny"]
    assert sorted(log) == ["Lima", "Oslo", "Rome"]
    assert elapsed < 2.5 * LATENCY, elapsed
    first, second = server.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["weather"]
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "tool"]
    ids = [c["id"] for c in second["messages"][2]["tool_calls"]]
    assert ids == ["call_1_1", "call_1_2", "call_1_3"]
    assert [m["tool_call_id"] for m in second["messages"][3:]] == ids
    assert [m["content"] for m in second["messages"][3:]] == ["Oslo: sunny", "Rome: sunny", "Lima: sunny"]
    assert result.llm_calls == 2 and result.usage.total_tokens > 0


def test_chat_openai_async_run_matches_the_sync_one() -> None:
    log: list[str] = []
    server = OpenAIToolServer(THREE_CITIES)
    with server.running():
        agent = ReactAgent(chat_openai(server), weather_tools(log), protocol="native", prompts="en")
        started = time.monotonic()
        result = asyncio.run(agent.arun("Weather in Oslo, Rome and Lima?"))
        elapsed = time.monotonic() - started
    assert result.status == "finished"
    assert [s.observation for s in result.steps[:3]] == ["Oslo: sunny", "Rome: sunny", "Lima: sunny"]
    assert elapsed < 2.5 * LATENCY, elapsed


def test_chat_openai_bad_arguments_are_an_error_observation_for_that_call_only() -> None:
    """One call with arguments that are not JSON and one with a wrong argument: each is an error
    observation for that call; the valid call runs."""
    log: list[str] = []
    server = OpenAIToolServer([[("weather", {"city": "Oslo"}), ("weather", "{not json"), ("weather", {"town": "X"})],
                               "Done."])
    with server.running():
        agent = ReactAgent(chat_openai(server), weather_tools(log), protocol="native", prompts="en")
        result = agent.run("Weather?")
    assert log == ["Oslo"]
    good, *bad = result.steps[:3]
    assert not good.is_error and all(s.is_error for s in bad)
    assert {s.call_id for s in result.steps[:3]} == {"call_1_1", "call_1_2", "call_1_3"}
    messages = server.requests[1]["messages"]
    assert sorted(m["tool_call_id"] for m in messages if m["role"] == "tool") == ["call_1_1", "call_1_2", "call_1_3"]


def test_chat_openai_output_schema_answers_through_the_final_answer_tool(tmp_path: Path) -> None:
    class Forecast(BaseModel):
        city: str
        sky: str

    server = OpenAIToolServer([[("weather", {"city": "Oslo"})], [("final_answer", {"city": "Oslo", "sky": "sunny"})]])
    with server.running():
        agent = ReactAgent(chat_openai(server), weather_tools([]), protocol="native", output_schema=Forecast,
                           prompts="en")
        result = agent.run("Weather in Oslo?", journal=tmp_path / "j.jsonl")
    assert result.status == "finished" and result.output_object == Forecast(city="Oslo", sky="sunny")
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["weather", "final_answer"]


def test_chat_openai_native_run_resumes_from_its_journal_without_calling_anything(tmp_path: Path) -> None:
    """A finished native run replays from its journal: no request reaches the server, no tool runs."""
    log: list[str] = []
    journal = tmp_path / "run.jsonl"
    server = OpenAIToolServer(THREE_CITIES)
    with server.running():
        agent = ReactAgent(chat_openai(server), weather_tools(log), protocol="native", prompts="en")
        first = agent.run("Weather in Oslo, Rome and Lima?", journal=journal)
        again = agent.resume(journal)
    assert len(server.requests) == 2 and len(log) == 3
    assert again.output == first.output and [s.observation for s in again.steps] == [s.observation
                                                                                       for s in first.steps]
    starts = [r for r in read_journal(journal) if r["type"] == "tool_start"]
    assert len({r["key"] for r in starts}) == 3 and {r["batch"] for r in starts} == {starts[0]["seq"]}


def gigachat(server: GigaChatToolServer) -> Any:
    return langchain_gigachat.GigaChat(credentials="Y2xpZW50OnNlY3JldA==", base_url=server.base_url,
                                       auth_url=server.auth_url, verify_ssl_certs=False, model="GigaChat",
                                       timeout=10)


GIGA_SCRIPT = [[("weather", {"city": "Oslo"})], [("weather", {"city": "Rome"})], "Oslo and Rome are sunny."]


def check_gigachat_history(server: GigaChatToolServer) -> None:
    """GigaChat's functions, one call per assistant message, each with the functions_state_id it came with."""
    first, _, third = server.requests
    assert [f["name"] for f in first["functions"]] == ["weather"]
    messages = third["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "function", "assistant", "function"]
    assert [m["function_call"]["name"] for m in messages if m["role"] == "assistant"] == ["weather", "weather"]
    assert [m.get("functions_state_id") for m in messages if m["role"] == "assistant"] == ["state-1", "state-2"]
    assert [m["content"] for m in messages if m["role"] == "function"] == ['"Oslo: sunny"', '"Rome: sunny"'] or \
        [m["content"] for m in messages if m["role"] == "function"] == ["Oslo: sunny", "Rome: sunny"]


def test_gigachat_functions_round_trip_their_state_id() -> None:
    log: list[str] = []
    server = GigaChatToolServer(GIGA_SCRIPT)
    with server.running():
        agent = ReactAgent(gigachat(server), weather_tools(log), protocol="native")
        result = agent.run("Погода в Осло и Риме?")
    assert result.status == "finished" and result.output == "Oslo and Rome are sunny."
    assert log == ["Oslo", "Rome"]
    check_gigachat_history(server)


def test_gigachat_async_run_round_trips_the_state_id_too() -> None:
    server = GigaChatToolServer(GIGA_SCRIPT)
    with server.running():
        agent = ReactAgent(gigachat(server), weather_tools([]), protocol="native")
        result = asyncio.run(agent.arun("Погода в Осло и Риме?"))
    assert result.status == "finished"
    check_gigachat_history(server)
