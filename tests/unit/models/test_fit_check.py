"""``fit_check`` (off unless named): a run's first call is decided again without its tool when the model, asked
whether that tool does what the task asks, leans to "no"; a call it says fits, and every later decision, go on as
decoded."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from completions import Script
from langchain_core.tools import StructuredTool

from react_agent import ReactAgent, RunState
from react_agent._types import FINISH, CallContext
from react_agent.models import LocalChatModel
from react_agent.models.local import _model
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES, select
from react_agent.models.local._staged import FIT_CHECK, VOTE_PREFIX, answered, prepared
from react_agent.tools import answer_schema

WITH_CHECK = (*DEFAULT_TECHNIQUES, "fit_check")


def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount of money into another currency."""
    return "converted"


def find_contact(name: str) -> str:
    """Find a contact's e-mail address by name."""
    return "found"


CONVERT = StructuredTool.from_function(convert_currency)
FIND = StructuredTool.from_function(find_contact)
CALL = '{"thought": "t", "action": "convert_currency", ', '{"amount": 12, "currency": "EUR"}}'


class Judged(Script):
    """A completion function that gives FINISH ``vote`` of the finish vote and "no" ``no`` when asked whether a
    tool fits; records every question."""

    def __init__(self, no: float | None, *outputs: str, vote: float = 0.1) -> None:
        super().__init__(*outputs)
        self.no, self.vote, self.asked = no, vote, []  # type: float | None, float, list[tuple[str, list[str], str]]

    def share(self, prompt: str, options: list[str], option: str) -> float | None:
        self.asked.append((prompt, list(options), option))
        return self.vote if option == FINISH else self.no


def judge(action: str) -> tuple[str, str, str]:
    return f"FITS {action}?", " yes", " no"


def _actions(schema: Any) -> list[str]:
    return [branch["properties"]["action"]["const"] for branch in schema["anyOf"]]


def _decide(script: Judged, context: CallContext, tools: list[Any] | None = None,
            techniques: tuple[str, ...] = WITH_CHECK) -> str:
    chosen = select(list(techniques))
    step = prepared(chosen, answer_schema(tools or [CONVERT]), context)
    return answered(script, "P", step, context, chosen, again=lambda rejected: f"AGAIN {rejected[-1][1]}",
                    judge=judge)


def _questions(script: Judged) -> list[str]:
    return [prompt for prompt, _, option in script.asked if option != FINISH]


def test_a_first_call_the_model_says_does_not_fit_is_decided_again_without_its_tool() -> None:
    script = Judged(FIT_CHECK + 0.01, *CALL, '{"thought": "no tool does it", "action": "FINISH", ', ' "No tool."}')
    text = _decide(script, CallContext(task="Translate 'good morning' into German"))
    assert json.loads(text) == {"thought": "no tool does it", "action": FINISH, "action_input": "No tool."}
    assert _questions(script) == ["FITS convert_currency?"]
    assert script.asked[-1][1:] == ([" yes", " no"], " no")
    again = script.calls[2]
    assert again[0] == "AGAIN convert_currency" and _actions(again[1]) == [FINISH]


def test_with_another_tool_left_the_model_may_choose_it_after_the_check() -> None:
    script = Judged(0.9, *CALL, '{"thought": "t", "action": "find_contact", ', '{"name": "Ann"}}')
    text = _decide(script, CallContext(task="Find Ann's address"), [CONVERT, FIND])
    assert json.loads(text)["action"] == "find_contact"
    assert set(_actions(script.calls[2][1])) == {"find_contact", FINISH}
    assert _questions(script) == ["FITS convert_currency?"]  # a decision taken again is not checked again


@pytest.mark.parametrize("no", [FIT_CHECK, 0.05, None])
def test_a_call_the_model_says_fits_or_cannot_say_stands_as_decoded(no: float | None) -> None:
    script = Judged(no, *CALL)
    text = _decide(script, CallContext(task="Convert 12 dollars into euros"))
    assert json.loads(text) == {"thought": "t", "action": "convert_currency",
                                "action_input": {"amount": 12, "currency": "EUR"}}
    assert len(script.calls) == 2 and _questions(script) == ["FITS convert_currency?"]


@pytest.mark.parametrize("context", [
    CallContext(task="Convert 12 dollars into euros", observations=("rate: 0.9",)),  # not a run's first call
    CallContext(),  # a plain completion: no task to ask about
])
def test_the_check_is_asked_only_before_a_runs_first_call(context: CallContext) -> None:
    script = Judged(0.99, *CALL)
    assert json.loads(_decide(script, context))["action"] == "convert_currency"
    assert _questions(script) == []


def test_the_check_is_off_by_default() -> None:
    assert "fit_check" not in LocalChatModel().techniques
    assert LocalChatModel(techniques=WITH_CHECK).techniques[4] == "fit_check"


def test_the_check_is_asked_only_when_it_is_on_and_never_of_finish() -> None:
    off = DEFAULT_TECHNIQUES
    script = Judged(0.99, *CALL)
    assert json.loads(_decide(script, CallContext(task="Convert 12 dollars"), techniques=off))["action"] \
        == "convert_currency"
    finish = Judged(0.99, '{"thought": "t", "action": "FINISH", ', ' "Hi."}')
    assert json.loads(_decide(finish, CallContext(task="Say hi")))["action"] == FINISH
    assert _questions(script) == _questions(finish) == []


def test_the_model_asks_in_the_tasks_language_after_the_chat_and_notes_the_rejection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The question follows the agent's chat (the prompt up to it is the decision's own, so its cache is reused)
    with the answer begun; the yes and no are the prompt set's words; a rejected tool gets a note in the task's
    language."""
    seen: dict[str, Any] = {}

    class Llama:
        def __init__(self) -> None:
            template = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}</>{% endfor %}"
                        "{% if add_generation_prompt %}<assistant>{% endif %}")
            self.metadata = {"tokenizer.chat_template": template}

        def token_bos(self) -> int:
            return -1

        def token_eos(self) -> int:
            return -1

    def capture(complete: Any, prompt: str, step: Any, context: Any, techniques: Any, **kwargs: Any) -> str:
        seen.update(prompt=prompt, **kwargs)
        return '{"thought": "t", "action": "FINISH", "action_input": "ok"}'

    monkeypatch.setattr(LocalChatModel, "_client", lambda self: (Llama(), threading.Lock()))
    monkeypatch.setattr(_model, "answered", capture)
    model = LocalChatModel(techniques=WITH_CHECK)
    agent = ReactAgent(model, [CONVERT])
    state = RunState("Переведи 12 долларов в евро")
    model.invoke(agent.build_messages(state), response_format=agent.response_format,
                       react_agent_call=agent.call_context(state))
    prompt, yes, no = seen["judge"]("convert_currency")
    assert prompt.startswith(seen["prompt"].removesuffix("<assistant>"))
    assert prompt.endswith("<user>Делает ли инструмент convert_currency то, о чём просит задача? Ответь да или нет."
                           "</><assistant>Ответ:")
    assert (yes, no) == (" да", " нет")
    note = seen["again"]([('{"action": "convert_currency"}', "convert_currency", ())])
    assert "convert_currency не делает того, о чём просит задача" in note
    assert VOTE_PREFIX not in prompt
