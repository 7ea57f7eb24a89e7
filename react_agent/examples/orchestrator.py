"""An orchestrator: a top-level agent that hands subtasks to two specialist agents, each used as a tool.

- ``users_agent`` manages the user registry (the demo's ``register_user`` and ``search_db`` on SQLite);
- ``math_agent`` computes (the demo's safe ``calculator``);
- ``orchestrator`` has no tools of its own but the two specialists (``agent.as_tool(...)``): it splits the
  task, delegates each part with a subtask in words and writes the answer.

Each specialist run is a child of the orchestrator's tool call in traces, its token usage is added to the
orchestrator's result, and a specialist that fails (status other than ``"finished"``) is an error
observation for the orchestrator, which can retry or report it.

Run it::

    python -m react_agent.examples.orchestrator --model local
    python -m react_agent.examples.orchestrator --model openai:gpt-4.1-mini --task "..."

``--model`` takes the ``provider:name`` specs of :func:`react_agent.models.make_model`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any, cast

from react_agent import ReactAgent
from react_agent.demo import Lang, make_calculator_tool, make_register_user_tool, make_search_db_tool
from react_agent.demo.users import UserDB

__all__ = ["DESCRIPTIONS", "TASKS", "build_orchestrator", "main"]

DESCRIPTIONS = {
    "en": {
        "users": "Manages the user registry: registers users and finds them. Give it one request in words, "
                 "with the names and emails it needs.",
        "math": "Computes arithmetic expressions exactly. Give it the calculation in words or as an expression.",
    },
    "ru": {
        "users": "Ведёт реестр пользователей: регистрирует и находит их. Передай ему одну просьбу словами, "
                 "с нужными именами и адресами почты.",
        "math": "Точно вычисляет арифметические выражения. Передай ему расчёт словами или выражением.",
    },
}
"""What the orchestrator's model reads about each specialist (the tools' descriptions), per language."""

TASKS = {
    "en": "Register user Anna with email anna@mail.org, then tell me how much 12 * 37 is.",
    "ru": "Зарегистрируй пользователя Anna с почтой anna@mail.org, а потом скажи, сколько будет 12 * 37.",
}
"""A task that needs both specialists, per language."""


def build_orchestrator(llm: Any, *, db_path: str | os.PathLike[str], lang: str = "en",
                       specialist_llm: Any = None, **options: Any) -> ReactAgent:
    """The orchestrator over two specialists sharing the user database at ``db_path``.

    ``llm`` drives the orchestrator and, unless ``specialist_llm`` is given, the specialists too.
    ``options`` go to all three agents (``max_iterations``, ``prompts``...; ``prompts`` defaults to ``lang``).
    """
    if lang not in DESCRIPTIONS:
        raise ValueError(f"lang must be one of {', '.join(DESCRIPTIONS)}, got {lang!r}")
    options.setdefault("prompts", lang)
    code = cast(Lang, lang)
    worker = llm if specialist_llm is None else specialist_llm
    db = UserDB(db_path)
    users = ReactAgent(worker, [make_register_user_tool(db, lang=code), make_search_db_tool(db, lang=code)],
                       name="users_agent", **options)
    math = ReactAgent(worker, [make_calculator_tool(lang=code)], name="math_agent", **options)
    texts = DESCRIPTIONS[lang]
    return ReactAgent(llm, [users.as_tool(name="users", description=texts["users"]),
                            math.as_tool(name="math", description=texts["math"])],
                      name="orchestrator", **options)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the orchestrator on ``--task`` with ``--model`` and write its steps and answer to stdout."""
    parser = argparse.ArgumentParser(prog="python -m react_agent.examples.orchestrator",
                                     description="A top-level agent delegating to two specialist agents.")
    parser.add_argument("--model", default="local", help="provider:name, e.g. local, openai:gpt-4.1-mini")
    parser.add_argument("--lang", default="en", choices=sorted(DESCRIPTIONS))
    parser.add_argument("--task", default=None, help="the task (default: one that needs both specialists)")
    parser.add_argument("--db", default=None, help="the SQLite file of the user registry (default: a temporary one)")
    parser.add_argument("--max-iterations", type=int, default=6)
    args = parser.parse_args(argv)

    from react_agent.models._providers import make_model  # the CLI's model factory

    llm = make_model(args.model)
    with tempfile.TemporaryDirectory() as folder:
        db_path = args.db or os.path.join(folder, "users.sqlite3")
        agent = build_orchestrator(llm, db_path=db_path, lang=args.lang, max_iterations=args.max_iterations)
        result = agent.run(args.task or TASKS[args.lang])
    out = sys.stdout
    for number, step in enumerate(result.steps, 1):
        argument = step.action_input if isinstance(step.action_input, str) else json.dumps(step.action_input,
                                                                                           ensure_ascii=False)
        out.write(f"{number}. {step.action} {argument}\n   -> {step.observation}\n")
    out.write(f"status: {result.status}  model calls: {result.llm_calls}  tokens: {result.usage.total_tokens}\n")
    out.write(f"answer: {result.output}\n")
    return 0 if result.status == "finished" else 1


if __name__ == "__main__":
    raise SystemExit(main())
