"""A call repeated after it succeeded: the tool is not run again, the model is told the result is there, and a
second repeat ends the run with status "repeated" and that result."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import StructuredTool

from react_agent import ReactAgent
from react_agent._types import AgentAction, AgentStep
from react_agent.core._repetition import failures, repeats
from react_agent.testing import ScriptedChatModel

RUNS: list[dict[str, Any]] = []


def find_user(username: str) -> str:
    """Find a user by name."""
    RUNS.append({"username": username})
    return f"{username}: email {username.lower()}@example.org"


def call(name: str = "find_user", **args: Any) -> str:
    return json.dumps({"thought": "t", "action": name, "action_input": args or {"username": "Zoe"}})


def finish(text: str) -> str:
    return json.dumps({"thought": "t", "action": "FINISH", "action_input": text})


TOOL = StructuredTool.from_function(find_user)


def test_a_repeated_call_is_told_the_result_is_there_and_the_tool_runs_once() -> None:
    RUNS.clear()
    model = ScriptedChatModel([call(), call(), finish("Zoe: zoe@example.org")])
    result = ReactAgent(model, [TOOL], lang="en").run("Find user Zoe")
    assert result.status == "finished" and len(RUNS) == 1
    assert "You already called find_user" in result.steps[1].observation
    assert "zoe@example.org" in result.steps[1].observation and not result.steps[1].is_error
    assert "You already called find_user" in model.calls[2].text  # the model saw it


def test_a_second_repeat_ends_the_run_with_the_result_and_status_repeated() -> None:
    RUNS.clear()
    model = ScriptedChatModel([call(), call(), call()])
    result = ReactAgent(model, [TOOL], lang="ru", max_iterations=10).run("Найди пользователя Zoe")
    assert result.status == "repeated" and result.output == "Zoe: email zoe@example.org"
    assert len(RUNS) == 1 and len(result.steps) == 3 and model.remaining == 0
    assert "Ты уже вызывал find_user" in result.steps[2].observation


def test_other_arguments_a_failed_call_and_a_call_in_between_are_no_repeats() -> None:
    ok = AgentStep(action="find_user", action_input={"username": "Zoe"}, observation="found")
    failed = ok.model_copy(update={"is_error": True})
    other = AgentStep(action="find_user", action_input={"username": "Ann"}, observation="found")
    again = AgentAction(action="find_user", action_input={"username": "Zoe"})
    assert repeats([ok], again) == (1, ok)
    assert repeats([ok, ok], again) == (2, ok)
    assert repeats([ok, other], again) == (0, None)
    assert repeats([failed], again) == (0, None)
    assert repeats([other, failed, ok], again) == (1, ok)
    assert repeats([], again) == (0, None)
    assert repeats([ok], AgentAction(action="find_user", action_input={"username": "Zoe", "x": 1})) == (0, None)


def test_a_call_that_succeeded_is_a_repeat_across_failed_calls_in_between() -> None:
    ok = AgentStep(action="create", action_input={"title": "X"}, observation="created 1")
    failed_other = AgentStep(action="assign", action_input={"who": "Y"}, observation="no Y", is_error=True)
    done_other = failed_other.model_copy(update={"is_error": False})
    again = AgentAction(action="create", action_input={"title": "X"})
    assert repeats([ok, failed_other], again) == (1, ok)         # a failed call changed nothing
    assert repeats([ok, failed_other, failed_other], again) == (1, ok)
    assert repeats([ok, done_other], again) == (0, None)         # a call that succeeded may have changed things


CREATED: list[str] = []


def create_ticket(title: str) -> str:
    """Create a ticket."""
    CREATED.append(title)
    return f"ticket {len(CREATED)} created"


def assign_ticket(ticket: int, assignee: str) -> str:
    """Assign a ticket."""
    raise ValueError(f"no employee {assignee!r}")


def test_a_side_effect_is_not_repeated_after_a_failed_follow_up_call() -> None:
    CREATED.clear()
    tools = [StructuredTool.from_function(create_ticket), StructuredTool.from_function(assign_ticket)]
    make = call("create_ticket", title="Printer")
    assign = call("assign_ticket", ticket=1, assignee="Nobody")
    model = ScriptedChatModel([make, assign, make, finish("ticket 1 created")])
    result = ReactAgent(model, tools, lang="en").run("Create a ticket 'Printer'")
    assert CREATED == ["Printer"] and result.status == "finished"
    assert "You already called create_ticket" in result.steps[2].observation


def test_a_call_that_keeps_failing_is_stopped_and_then_ends_the_run() -> None:
    RUNS.clear()

    def lookup(username: str) -> str:
        """Find a user by name."""
        RUNS.append({"username": username})
        raise ValueError(f"user {username!r} not found")

    tool = StructuredTool.from_function(lookup)
    again = call("lookup", username="Zoe")
    model = ScriptedChatModel([again] * 4)
    result = ReactAgent(model, [tool], lang="en", max_iterations=10).run("Find user Zoe")
    assert len(RUNS) == 2                                    # run twice, then not again
    assert "2 times" in result.steps[2].observation and result.steps[2].is_error
    assert "not found" in result.steps[2].observation
    assert result.status == "repeated" and "not found" in result.output and result.error
    assert len(result.steps) == 4 and model.remaining == 0


def test_a_failing_call_with_other_arguments_is_tried() -> None:
    RUNS.clear()

    def lookup(username: str) -> str:
        """Find a user by name."""
        RUNS.append({"username": username})
        if username != "Zoe":
            raise ValueError(f"user {username!r} not found")
        return "Zoe: zoe@example.org"

    tool = StructuredTool.from_function(lookup)
    wrong = call("lookup", username="Zo")
    model = ScriptedChatModel([wrong, wrong, call("lookup", username="Zoe"), finish("zoe@example.org")])
    result = ReactAgent(model, [tool], lang="en").run("Find user Zoe")
    assert result.status == "finished" and [r["username"] for r in RUNS] == ["Zo", "Zo", "Zoe"]
    assert failures(result.steps[:2], AgentAction(action="lookup", action_input={"username": "Zo"})) == (
        2, result.steps[0])
    assert failures(result.steps[:3], AgentAction(action="lookup", action_input={"username": "Zo"})) == (0, None)


def test_two_failing_calls_in_turn_are_both_repeats() -> None:
    a = AgentStep(action="move", action_input={"source": "X"}, observation="no X", is_error=True)
    b = AgentStep(action="delete", action_input={"path": "X"}, observation="no X", is_error=True)
    ok = AgentStep(action="list", action_input={}, observation="[]")
    again = AgentAction(action="move", action_input={"source": "X"})
    assert failures([a, b, a, b], again) == (2, a)
    assert failures([a, ok, a, b], again) == (1, a)      # a success in between starts afresh


# --------------------------------------------------------------------------- answers from the worked examples
def test_an_answer_with_the_examples_facts_only_is_not_accepted() -> None:
    from react_agent import Example
    from react_agent._types import AgentAction as Action

    example = Example(task="Find user Xq-Quill", steps=[AgentStep(
        action="find_user", action_input={"username": "Xq-Quill"}, observation="Xq-Quill: email xq@quill.test")],
        answer=Action(action="FINISH", action_input="Xq-Quill: xq@quill.test"))
    model = ScriptedChatModel([finish("Zoe: email xq@quill.test"), call(), finish("Zoe: zoe@example.org")])
    RUNS.clear()
    result = ReactAgent(model, [TOOL], lang="en", examples=[example]).run("Find user Zoe")
    assert result.status == "finished" and result.output == "Zoe: zoe@example.org"
    assert result.steps[0].is_error and "xq@quill.test" in result.steps[0].observation
    assert "worked examples" in result.steps[0].observation


def test_example_values_the_task_or_a_result_gives_are_fine() -> None:
    from react_agent import Example
    from react_agent._types import AgentAction as Action

    example = Example(task="Find user Zoe", answer=Action(action="find_user", action_input={"username": "Zoe"}))
    model = ScriptedChatModel([finish("Zoe is a user.")])
    assert ReactAgent(model, [TOOL], lang="en", examples=[example]).run("Is Zoe a user?").status == "finished"


def test_the_same_borrowed_answer_after_the_note_ends_the_run_with_the_last_result() -> None:
    from react_agent import Example
    from react_agent._types import AgentAction as Action

    example = Example(task="Find user Xq-Quill",
                      answer=Action(action="find_user", action_input={"username": "Xq-Quill"}))
    model = ScriptedChatModel([call(), finish("Xq-Quill"), finish("Xq-Quill"), finish("never asked")])
    RUNS.clear()
    result = ReactAgent(model, [TOOL], lang="en", examples=[example], max_iterations=10).run("Find user Zoe")
    assert result.status == "repeated" and result.output == "Zoe: email zoe@example.org"
    assert result.error is not None and "Xq-Quill" in result.error and "worked examples" in result.error
    assert len(result.steps) == 3 and result.steps[1].is_error and result.steps[2].is_error
    assert model.remaining == 1 and len(RUNS) == 1


def test_a_borrowed_answer_that_changes_after_the_note_is_told_again() -> None:
    from react_agent import Example
    from react_agent._types import AgentAction as Action

    examples = [Example(task=f"Find user {name}", answer=Action(action="find_user", action_input={"username": name}))
                for name in ("Xq-Quill", "Vontrel")]
    model = ScriptedChatModel([finish("Xq-Quill"), finish("Vontrel"), finish("Zoe is not found.")])
    result = ReactAgent(model, [TOOL], lang="en", examples=examples, max_iterations=10).run("Find user Zoe")
    assert result.status == "finished" and result.output == "Zoe is not found."
    assert [s.is_error for s in result.steps] == [True, True, False]


def test_a_borrowed_answer_repeated_with_no_tool_result_ends_with_no_output() -> None:
    from react_agent import Example
    from react_agent._types import AgentAction as Action

    example = Example(task="Find user Xq-Quill",
                      answer=Action(action="find_user", action_input={"username": "Xq-Quill"}))
    model = ScriptedChatModel([finish("Xq-Quill"), finish("Xq-Quill")])
    result = ReactAgent(model, [TOOL], lang="ru", examples=[example], max_iterations=10).run("Найди Zoe")
    assert result.status == "repeated" and result.output == "" and "Xq-Quill" in (result.error or "")


def test_a_borrowed_answer_repeated_after_a_repeated_call_ends_with_the_result_not_the_note() -> None:
    from react_agent import Example
    from react_agent._types import AgentAction as Action

    example = Example(task="Find user Xq-Quill",
                      answer=Action(action="find_user", action_input={"username": "Xq-Quill"}))
    model = ScriptedChatModel([call(), call(), finish("Xq-Quill"), finish("Xq-Quill")])
    RUNS.clear()
    result = ReactAgent(model, [TOOL], lang="en", examples=[example], max_iterations=10).run("Find user Zoe")
    assert result.steps[1].observation != "Zoe: email zoe@example.org"  # the repeated_call note
    assert result.status == "repeated" and result.output == "Zoe: email zoe@example.org" and len(RUNS) == 1
