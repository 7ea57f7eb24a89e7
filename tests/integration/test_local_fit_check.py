"""``fit_check`` on the real default model (marked ``local_model``): asked whether a tool does what the task asks,
the model leans to "no" past :data:`FIT_CHECK` for a tool that does not and stays under it for one that does, so
a call of the wrong tool is decided again as FINISH and the right call stands."""

from __future__ import annotations

import importlib.util
import json
import logging
import re

import pytest
from langchain_core.tools import StructuredTool

from react_agent import FINISH, ReactAgent, RunState
from react_agent.models import LocalChatModel
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES
from react_agent.models.local._staged import FIT_CHECK
from react_agent.models.local._weights import weights_installed

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed"),
    pytest.mark.skipif(not weights_installed(), reason="the default model's weights are not installed"),
]


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency into another at today's rate."""
    return "converted"


CONVERT = StructuredTool.from_function(convert_currency)
ANSWERED = re.compile(r"asked whether (\S+) does what the task asks, the model gives no ([0-9.]+)")
NO_VOTE = [*(t for t in DEFAULT_TECHNIQUES if t != "finish_vote"), "fit_check"]  # the check decides, not the vote


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel(techniques=NO_VOTE, max_tokens=96)


def first_decision(model: LocalChatModel, task: str, caplog: pytest.LogCaptureFixture) -> tuple[dict, list[float]]:
    agent = ReactAgent(model, [CONVERT])
    state = RunState(task)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="react_agent.models.local"):
        reply = model.invoke(agent.build_messages(state), response_format=agent.response_format,
                             react_agent_call=agent.call_context(state))
    shares = [float(m.group(2)) for r in caplog.records if (m := ANSWERED.search(r.getMessage()))]
    return json.loads(str(reply.content)), shares


@pytest.mark.parametrize("task", ["Convert 250 US dollars into euros.", "Переведи 3000 рублей в доллары."])
def test_a_call_of_the_tool_that_does_the_task_stands(model: LocalChatModel, task: str,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    answer, shares = first_decision(model, task, caplog)
    assert answer["action"] == "convert_currency"
    assert len(shares) == 1 and shares[0] <= FIT_CHECK


def test_a_call_of_a_tool_that_does_not_do_the_task_is_decided_again_as_finish(
        model: LocalChatModel, caplog: pytest.LogCaptureFixture) -> None:
    """Without the finish vote the model calls the currency tool to translate a phrase (its thought first talks it
    into the only tool); asked, it says the tool does not fit, and the decision taken again is FINISH."""
    answer, shares = first_decision(model, "Translate the phrase 'good morning' into German.", caplog)
    assert shares and shares[0] > FIT_CHECK, shares
    assert answer["action"] == FINISH
