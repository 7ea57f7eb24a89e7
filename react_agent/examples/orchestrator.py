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

from react_agent import FINISH, AgentAction, AgentStep, Example, ReactAgent
from react_agent.demo import DEMO_EXAMPLES, Lang, make_calculator_tool, make_register_user_tool, make_search_db_tool
from react_agent.demo.users import UserDB

__all__ = ["DESCRIPTIONS", "EXAMPLE_TEXTS", "TASKS", "build_orchestrator", "main", "orchestrator_examples"]

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

EXAMPLE_TEXTS = {
    "en": {"task": "Register user Boris with email boris@mail.org, then compute 7 * 6.",
           "users": "Register user Boris with email boris@mail.org", "math": "Compute 7 * 6",
           "first": "The registration first: the users specialist does it.", "registered": "Boris is registered.",
           "second": "Now the calculation: the math specialist does it.", "computed": "7 * 6 = 42",
           "done": "Both parts are done.", "answer": "Boris is registered; 7 * 6 = 42."},
    "ru": {"task": "Зарегистрируй пользователя Boris с почтой boris@mail.org, потом вычисли 7 * 6.",
           "users": "Зарегистрируй пользователя Boris с почтой boris@mail.org", "math": "Вычисли 7 * 6",
           "first": "Сначала регистрация: её делает специалист по пользователям.",
           "registered": "Boris зарегистрирован.", "second": "Теперь расчёт: его делает математик.",
           "computed": "7 * 6 = 42", "done": "Обе части выполнены.",
           "answer": "Boris зарегистрирован; 7 * 6 = 42."},
}
"""The texts of the orchestrator's few-shot examples (used with the compact prompts of small models)."""


def orchestrator_examples(lang: str) -> list[Example]:
    """Worked examples of delegation for the orchestrator: FINISH after both subtasks, the second subtask after
    the first, the first subtask."""
    t = EXAMPLE_TEXTS[lang]
    users = AgentAction(thought=t["first"], action="users", action_input={"task": t["users"]})
    math = AgentAction(thought=t["second"], action="math", action_input={"task": t["math"]})
    done_users = AgentStep(thought=users.thought, action="users", action_input=users.action_input,
                           observation=t["registered"])
    done_math = AgentStep(thought=math.thought, action="math", action_input=math.action_input,
                          observation=t["computed"])
    # the example without history last: a small model copies the example nearest to the task most
    return [Example(task=t["task"], steps=[done_users, done_math],
                    answer=AgentAction(thought=t["done"], action=FINISH, action_input=t["answer"])),
            Example(task=t["task"], steps=[done_users], answer=math),
            Example(task=t["task"], answer=users)]


def _examples_for(tools: Sequence[Any], lang: Lang) -> list[Example]:
    """The demo's examples that only call these tools."""
    names = {tool.name for tool in tools} | {FINISH}
    return [e for e in DEMO_EXAMPLES[lang]
            if e.answer.action in names and all(step.action in names for step in e.steps)]


def build_orchestrator(llm: Any, *, db_path: str | os.PathLike[str], lang: str = "en",
                       specialist_llm: Any = None, compact: bool = False, **options: Any) -> ReactAgent:
    """The orchestrator over two specialists sharing the user database at ``db_path``.

    ``llm`` drives the orchestrator and, unless ``specialist_llm`` is given, the specialists too.
    ``compact``: the compact prompt sets with worked examples, for small local models. ``options`` go to
    all three agents (``max_iterations``, ...; ``prompts`` defaults to ``lang`` or ``<lang>-compact``).
    """
    if lang not in DESCRIPTIONS:
        raise ValueError(f"lang must be one of {', '.join(DESCRIPTIONS)}, got {lang!r}")
    options.setdefault("prompts", f"{lang}-compact" if compact else lang)
    code = cast(Lang, lang)
    worker = llm if specialist_llm is None else specialist_llm
    db = UserDB(db_path)
    user_tools = [make_register_user_tool(db, lang=code), make_search_db_tool(db, lang=code)]
    math_tools = [make_calculator_tool(lang=code)]
    users = ReactAgent(worker, user_tools, name="users_agent",
                       examples=_examples_for(user_tools, code) if compact else (), **options)
    math = ReactAgent(worker, math_tools, name="math_agent",
                      examples=_examples_for(math_tools, code) if compact else (), **options)
    texts = DESCRIPTIONS[lang]
    return ReactAgent(llm, [users.as_tool(name="users", description=texts["users"]),
                            math.as_tool(name="math", description=texts["math"])],
                      name="orchestrator", examples=orchestrator_examples(lang) if compact else (), **options)


SMALL_MODEL_CAVEAT = ("note: delegation needs a model that plans; a small local model may not finish this task "
                      "(minutes on 2 cores, exit status 1). "
                      "Use --model openai:NAME, vllm:NAME or gigachat for the real thing.")


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

    from react_agent.models import make_model  # the CLI's model factory

    llm = make_model(args.model)
    if args.model.split(":", 1)[0] == "local":
        sys.stderr.write(SMALL_MODEL_CAVEAT + "\n")
    with tempfile.TemporaryDirectory() as folder:
        db_path = args.db or os.path.join(folder, "users.sqlite3")
        agent = build_orchestrator(llm, db_path=db_path, lang=args.lang, max_iterations=args.max_iterations,
                                   compact=args.model.split(":", 1)[0] == "local")
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
