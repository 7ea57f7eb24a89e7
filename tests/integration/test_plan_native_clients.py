"""PlanAndExecuteAgent with protocol='native' through real clients: ChatOpenAI and GigaChat against loopback
servers speaking their APIs. The plan is a text reply; each fill is the server's tool call of the step's tool."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from langchain_core.tools import tool
from tool_call_servers import GigaChatToolServer, OpenAIToolServer

from react_agent import PlanAndExecuteAgent

langchain_openai = pytest.importorskip("langchain_openai")
langchain_gigachat = pytest.importorskip("langchain_gigachat")

PATIENCE = 20.0

PLAN = json.dumps([{"tool": "lookup", "args": {"name": "Ann"}, "open": [], "depends_on": []},
                   {"tool": "lookup", "args": {"name": "Bob"}, "open": [], "depends_on": []},
                   {"tool": "send", "args": {"to": "$session.email"}, "open": ["text"], "depends_on": [1, 2]}])


def plan_tools(meet: int, log: list[Any]) -> list[Any]:
    """``lookup`` calls meet at a barrier of ``meet`` parties: run one after the other, the first would wait
    in vain (PATIENCE) and fail."""
    barrier, lock = threading.Barrier(meet, timeout=PATIENCE), threading.Lock()

    @tool
    def lookup(name: str) -> str:
        """Where a person lives."""
        barrier.wait()
        with lock:
            log.append(("lookup", name))
        return f"{name} lives in Oslo"

    @tool
    def send(to: str, text: str) -> str:
        """Send a message."""
        with lock:
            log.append(("send", to, text))
        return f"sent to {to}"

    return [lookup, send]


def chat_openai(server: OpenAIToolServer) -> Any:
    return langchain_openai.ChatOpenAI(model="loopback", base_url=server.base_url, api_key="sk-loopback",
                                       max_retries=0, timeout=10)


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_chat_openai_native_plan_runs_independent_steps_together_and_fills_with_a_tool_call(driver: str) -> None:
    log: list[Any] = []
    server = OpenAIToolServer([PLAN, [("send", {"text": "Ann and Bob live in Oslo"})]])
    with server.running():
        agent = PlanAndExecuteAgent(chat_openai(server), plan_tools(2, log), protocol="native", prompts="en",
                                    session={"email": "boss@corp.example"})
        result = agent.run("Tell the boss where Ann and Bob live") if driver == "run" else asyncio.run(
            agent.arun("Tell the boss where Ann and Bob live"))
    assert result.status == "finished" and result.output == "sent to boss@corp.example", result.error
    assert sorted(log[:2]) == [("lookup", "Ann"), ("lookup", "Bob")]
    assert log[2] == ("send", "boss@corp.example", "Ann and Bob live in Oslo")
    plan_request, fill_request = server.requests
    assert "tools" not in plan_request
    assert [t["function"]["name"] for t in fill_request["tools"]] == ["send"]
    assert list(fill_request["tools"][0]["function"]["parameters"]["properties"]) == ["text"]
    assert "boss@corp.example" not in json.dumps(server.requests)  # the session value never reaches the model


def test_gigachat_native_plan_fills_with_a_function_call() -> None:
    log: list[Any] = []
    server = GigaChatToolServer([PLAN, [("send", {"text": "both in Oslo"})]])
    with server.running():
        model = langchain_gigachat.GigaChat(credentials="Y2xpZW50OnNlY3JldA==", base_url=server.base_url,
                                            auth_url=server.auth_url, verify_ssl_certs=False, model="GigaChat",
                                            timeout=10)
        agent = PlanAndExecuteAgent(model, plan_tools(2, log), protocol="native", session={"email": "b@corp.example"})
        result = agent.run("Tell the boss where Ann and Bob live")
    assert result.status == "finished", result.error
    assert log[2] == ("send", "b@corp.example", "both in Oslo")
    fill_request = server.requests[-1]
    assert [f["name"] for f in fill_request["functions"]] == ["send"]
