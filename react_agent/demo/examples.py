"""The demo tasks (:data:`SEED_TASKS`) and few-shot examples for small models (:data:`DEMO_EXAMPLES`).

Both are mappings from a language to a list, built from ``strings/<lang>.json`` the first time a language is
looked up (never at import) and then cached; each lookup returns a fresh list.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

from react_agent._types import FINISH, AgentAction, AgentStep, Example
from react_agent.demo._common import LANGUAGES, Lang, demo_strings
from react_agent.demo.calculator import evaluate_expression, format_number

__all__ = ["DEMO_EXAMPLES", "SEED_TASKS"]

_T = TypeVar("_T")


class _ByLanguage(Mapping[str, list[_T]]):
    """A read-only mapping ``lang -> list``, its values built by ``build(lang)`` on first lookup."""

    def __init__(self, build: Callable[[Lang], Sequence[_T]], what: str) -> None:
        self._build = functools.cache(build)
        self._what = what

    def __getitem__(self, lang: str) -> list[_T]:
        for known in LANGUAGES:
            if lang == known:
                return list(self._build(known))
        raise KeyError(lang)

    def __iter__(self) -> Iterator[str]:
        return iter(LANGUAGES)

    def __len__(self) -> int:
        return len(LANGUAGES)

    def __repr__(self) -> str:
        return f"<{self._what} for {', '.join(LANGUAGES)}, built on first use>"


def _seed_tasks(lang: Lang) -> tuple[str, ...]:
    return demo_strings(lang).seed_tasks


SEED_TASKS: Mapping[str, list[str]] = _ByLanguage(_seed_tasks, "the demo tasks")
"""The demo tasks for these tools, per language: ``SEED_TASKS["en"]`` is a list of two tasks."""

_EXAMPLE_USER = {"username": "Anna", "email": "anna@mail.org"}
_EXAMPLE_CREATED_AT = "2025-01-01T10:00:00Z"
_EXAMPLE_EXPRESSION = "12 * 3"


def _called(action: AgentAction, observation: str) -> AgentStep:
    return AgentStep(thought=action.thought, action=action.action, action_input=action.action_input,
                     observation=observation)


def _demo_examples(lang: Lang) -> tuple[Example, ...]:
    """Compute 12 * 3, FINISH with the result; register Anna, FINISH after her registration; find Anna, FINISH
    after finding her. The observations are made by this package's own code and result messages, so they are
    exactly what the tools return (the registration date aside)."""
    strings = demo_strings(lang)
    texts, results = strings.examples, strings.results
    calc = AgentAction(thought=texts["calc"], action="calculator", action_input={"expression": _EXAMPLE_EXPRESSION})
    product = format_number(evaluate_expression(_EXAMPLE_EXPRESSION))
    register = AgentAction(thought=texts["register"], action="register_user", action_input=dict(_EXAMPLE_USER))
    registered = results["registered"].format(**_EXAMPLE_USER)
    find = AgentAction(thought=texts["find"], action="search_db", action_input={"username": "Anna"})
    found = "\n".join([
        results["found"].format(query="Anna", count=1),
        results["found_row"].format(**_EXAMPLE_USER, phone=results["no_phone"], created_at=_EXAMPLE_CREATED_AT),
    ])
    return (
        Example(task=texts["calc_task"], answer=calc),
        Example(task=texts["calc_task"], steps=[_called(calc, product)],
                answer=AgentAction(thought=texts["computed"], action=FINISH,
                                   action_input=f"{_EXAMPLE_EXPRESSION} = {product}")),
        Example(task=texts["register_task"], answer=register),
        Example(task=texts["register_task"], steps=[_called(register, registered)],
                answer=AgentAction(thought=texts["registered"], action=FINISH,
                                   action_input=texts["registered_answer"])),
        Example(task=texts["find_task"], answer=find),
        Example(task=texts["find_task"], steps=[_called(find, found)],
                answer=AgentAction(thought=texts["found"], action=FINISH, action_input=texts["found_answer"])),
    )


DEMO_EXAMPLES: Mapping[str, list[Example]] = _ByLanguage(_demo_examples, "the demo tools' few-shot examples")
"""Few-shot examples for the demo tools, per language, in pairs (the call with no history yet, then FINISH
after the observation the tool really returns): compute ``12 * 3`` with ``calculator``, register Anna with
``register_user``, find Anna with ``search_db``. For a small model, with a compact prompt set:
``ReactAgent(llm, make_demo_tools(...), prompts="en-compact", examples=DEMO_EXAMPLES["en"])``.
Built on first lookup of a language, then cached."""
