"""Serving one agent from a web app: a real FastAPI app (ASGI, in process) shares one agent between requests."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from react_agent import ReactAgent
from react_agent.testing import FunctionChatModel

fastapi = pytest.importorskip("fastapi")
testclient = pytest.importorskip("fastapi.testclient")


def reply(messages: list[Any]) -> str:
    text = str(messages[-1].content)
    task = text.split("USER-")[1].split()[0]
    return json.dumps({"thought": "done", "action": "FINISH", "action_input": f"hello {task}"})


def make_app() -> Any:
    agent = ReactAgent(FunctionChatModel(function=reply, delay=0.01), [], prompts="en")  # one agent, built once
    app = fastapi.FastAPI()

    @app.post("/run")
    async def run(body: dict[str, Any]) -> dict[str, Any]:
        result = await agent.ainvoke({"input": body["task"]})
        return {"status": result.status, "output": result.output}

    return app


def test_one_agent_serves_concurrent_requests_of_a_fastapi_app() -> None:
    """Concurrent requests to a FastAPI app holding one agent each get the answer to their own task."""
    with testclient.TestClient(make_app()) as client, ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda n: client.post("/run", json={"task": f"greet USER-{n} please"}),
                                  range(24)))
    assert [r.json() for r in responses] == [{"status": "finished", "output": f"hello {n}"} for n in range(24)]
