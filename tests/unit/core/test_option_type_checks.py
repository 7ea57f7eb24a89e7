"""Option checks keep their promise: a wait of seconds is checked by one function, so the agent's
``timeout``, a ``RetryPolicy``'s waits and a batch's ``task_timeout`` give the same ``ConfigError`` for the
same bad value; an unknown ``RetryPolicy`` option is a ``ConfigError`` listing the options, not a bare
``TypeError``; and a string option such as ``name`` takes a ``str`` only, never a silently decoded ``bytes``."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import threading
from typing import Any

import pytest

from react_agent import ReactAgent, ReflectionAgent, RetryPolicy
from react_agent.batch import run_batch
from react_agent.errors import ConfigError
from react_agent.runtime import seconds_problem
from react_agent.testing import ScriptedChatModel
from react_agent.tools import short_repr

BAD_SECONDS: list[Any] = [True, False, "5", None, float("nan"), float("inf"), float("-inf"), -1, -0.5, 10**400,
                          -10**400, threading.TIMEOUT_MAX * 2, 1e300]
BAD_IDS = ["True", "False", "str", "None", "nan", "inf", "-inf", "-1", "-0.5", "int-beyond-float", "-int-beyond-float",
           "twice-TIMEOUT_MAX", "1e300"]
GOOD_SECONDS: list[Any] = [1, 2.5, 0.001, threading.TIMEOUT_MAX, int(threading.TIMEOUT_MAX)]


def _agent(**options: Any) -> ReactAgent:
    finish = json.dumps({"thought": "t", "action": "FINISH", "action_input": "ok"})
    return ReactAgent(ScriptedChatModel([finish]), [], **{"prompts": "en", **options})


def _message(make: Any) -> str:
    with pytest.raises(ConfigError) as info:
        make()
    return str(info.value)


# ---------------------------------------------------------------------------------------------- seconds
@pytest.mark.parametrize("value", BAD_SECONDS, ids=BAD_IDS)
def test_a_bad_wait_is_the_same_config_error_in_the_agent_a_retry_policy_and_a_batch(value: Any) -> None:
    """One answer per value: the option's name, the same problem, the value shown through short_repr."""
    problem = seconds_problem(value, allow_none=True) if value is not None else seconds_problem(value)
    assert problem is not None and problem.startswith("must be ")
    got = f", got {short_repr(value)}"
    if value is not None:  # None is "no limit" for the agent's and the batch's waits
        assert _message(lambda: _agent(timeout=value)) == f"timeout {problem}{got}"
        assert _message(lambda: _agent(max_execution_time=value)) == f"max_execution_time {problem}{got}"
        assert _message(lambda: ReflectionAgent(ScriptedChatModel([]), [], timeout=value)) == f"timeout {problem}{got}"
        assert _message(lambda: run_batch(_agent(), ["x"], task_timeout=value)) == f"task_timeout {problem}{got}"
    retry_problem = seconds_problem(value, allow_zero=True)
    assert retry_problem is not None
    for name in ("initial_wait", "max_wait", "jitter"):
        assert _message(lambda name=name: RetryPolicy(**{name: value})) == f"RetryPolicy: {name} {retry_problem}{got}"


@pytest.mark.parametrize("value", [10**400, threading.TIMEOUT_MAX * 2, 1e300],
                         ids=["int-beyond-float", "twice-TIMEOUT_MAX", "1e300"])
def test_a_wait_above_timeout_max_names_the_limit_everywhere(value: Any) -> None:
    limit = f"must be at most threading.TIMEOUT_MAX = {threading.TIMEOUT_MAX:g} seconds"
    assert seconds_problem(value) == seconds_problem(value, allow_zero=True, allow_none=True) == limit
    assert limit in _message(lambda: _agent(timeout=value))
    assert limit in _message(lambda: RetryPolicy(max_wait=value))
    assert limit in _message(lambda: run_batch(_agent(), ["x"], task_timeout=value))


def test_zero_is_a_retry_wait_but_not_a_time_limit() -> None:
    assert seconds_problem(0, allow_zero=True) is None and seconds_problem(0.0, allow_zero=True) is None
    assert seconds_problem(0) == seconds_problem(0.0) == "must be positive seconds (a finite number)"
    assert RetryPolicy(initial_wait=0, jitter=0.0).initial_wait == 0
    assert _message(lambda: _agent(timeout=0)) == "timeout must be None or positive seconds (a finite number), got 0"
    assert _message(lambda: run_batch(_agent(), ["x"], task_timeout=0.0)) == (
        "task_timeout must be None or positive seconds (a finite number), got 0.0")


def test_a_bool_is_named_as_such() -> None:
    assert _message(lambda: _agent(timeout=True)) == (
        "timeout must be None or positive seconds (a finite number, not a bool), got True")


@pytest.mark.parametrize("value", GOOD_SECONDS, ids=["1", "2.5", "0.001", "TIMEOUT_MAX", "int-TIMEOUT_MAX"])
def test_a_good_wait_is_kept_as_before(value: Any) -> None:
    assert seconds_problem(value) is None
    agent = _agent(timeout=value, max_execution_time=value)
    assert agent.config.timeout == agent.config.max_execution_time == float(value)
    assert isinstance(agent.config.timeout, float)
    assert RetryPolicy(initial_wait=value, max_wait=value, jitter=value).max_wait is value  # kept as given
    batch = run_batch(_agent(), ["x"], task_timeout=value)
    assert [result.status for result in batch] == ["finished"]


def test_no_limit_stays_none() -> None:
    assert _agent().config.timeout is None and _agent(timeout=None).config.max_execution_time is None
    assert [result.output for result in run_batch(_agent(), ["x"], task_timeout=None)] == ["ok"]


# ---------------------------------------------------------------------------------------------- RetryPolicy
def test_an_unknown_retry_option_is_a_config_error_listing_the_options() -> None:
    message = _message(lambda: RetryPolicy(bogus=1))  # type: ignore[call-arg]
    assert "'bogus'" in message and message.startswith("RetryPolicy: unknown option")
    assert "max_attempts, initial_wait, max_wait, jitter, retry_on" in message
    assert "did you mean 'max_attempts'?" in _message(lambda: RetryPolicy(max_attempt=2))  # type: ignore[call-arg]
    assert "did you mean 'max_wait'" in _message(lambda: RetryPolicy(maxwait=2))  # type: ignore[call-arg]


def test_too_many_or_doubled_retry_options_are_config_errors() -> None:
    assert "at most 5 options by position" in _message(
        lambda: RetryPolicy(3, 0.5, 8.0, 0.5, lambda exc: True, 6))  # type: ignore[call-arg]
    assert "max_attempts is given twice" in _message(lambda: RetryPolicy(2, max_attempts=3))  # type: ignore[misc]


def test_retry_policy_is_still_a_plain_frozen_dataclass() -> None:
    policy = RetryPolicy(2, 0.1, jitter=0)
    assert (policy.max_attempts, policy.initial_wait, policy.max_wait, policy.jitter) == (2, 0.1, 8.0, 0)
    assert policy == RetryPolicy(max_attempts=2, initial_wait=0.1, jitter=0)
    assert hash(policy) == hash(RetryPolicy(2, 0.1, jitter=0))
    assert pickle.loads(pickle.dumps(policy)) == policy == copy.deepcopy(policy) == copy.copy(policy)
    assert dataclasses.replace(policy, jitter=0.25).jitter == 0.25
    with pytest.raises(ConfigError, match="unknown option 'bogus'"):
        dataclasses.replace(policy, bogus=1)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_attempts = 5  # type: ignore[misc]

    @dataclasses.dataclass(frozen=True)
    class Patient(RetryPolicy):
        patience: int = 1

    assert Patient(patience=3).patience == 3 and Patient(1).max_attempts == 1
    assert "patience" in _message(lambda: Patient(bogus=1))  # type: ignore[call-arg]


# ---------------------------------------------------------------------------------------------- string options
@pytest.mark.parametrize("value", [b"x", bytearray(b"x"), 5, ["x"]], ids=["bytes", "bytearray", "int", "list"])
@pytest.mark.parametrize("agent_class", [ReactAgent, ReflectionAgent])
def test_a_name_that_is_not_a_str_is_a_config_error(agent_class: type[ReactAgent], value: Any) -> None:
    message = _message(lambda: agent_class(ScriptedChatModel([]), [], name=value))
    assert message == f"name must be None or a non-empty string, got {short_repr(value)}"


@pytest.mark.parametrize(("option", "value"), [
    ("lang", b"en"), ("final_answer", b"auto"), ("history_layout", b"prompt"), ("protocol", b"text"),
    ("constrained", b"grammar"), ("prompts", b"en"), ("journal", b"runs.jsonl"),
])
def test_no_string_option_decodes_bytes(option: str, value: bytes) -> None:
    assert _message(lambda: _agent(**{option: value})).startswith(f"{option} must be ")


def test_a_str_name_is_kept() -> None:
    assert _agent(name="researcher").config.name == "researcher" and _agent().config.name is None
