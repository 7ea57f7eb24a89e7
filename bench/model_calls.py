"""Benchmark 5: model calls per task on the seed article's tasks, per agent.

Agents: ``ReactAgent`` with ``final_answer="never"`` and ``"always"`` (with and without the extra
final-answer call), ``ReflectionAgent`` and ``PlanAndExecuteAgent`` (when ``react_agent.plan`` is
installed), each on the demo tools (``make_demo_tools``) and the tasks of ``react_agent.demo.SEED_TASKS``
(run in order on one fresh database: register Ivan; register Viacheslav and find Ivan), plus a
recovery task: the first call (or the first plan) uses a wrong argument name (``user_email``), as in the
seed article's reflection example.

Scripted mode (default, deterministic): an *oracle* chat model answers each prompt by its kind (the
benchmark tags every rendered template with its name): a step prompt gets the next call of the ideal
solution (FINISH with the answer at the end), a plan prompt the whole plan, a reflection prompt a
short fix, a final-answer prompt the answer text. The oracle never decides how many calls are made;
the agent's control flow does.

``--local`` also runs the embedded local model (slow: seconds per call) and reports calls, status and
whether the database ends up right.

    python -m bench.model_calls [--local] [--lang ru|en]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench import _common

NAME = "model_calls"
_TAG = "bench_template"
_TOP = {"step", "corrective", "reflection", "final_answer", "plan", "fill_open"}

Call = tuple[str, dict[str, Any]]


# ------------------------------------------------------------------------------------------ tasks
def tasks(lang: str) -> list[dict[str, Any]]:
    """The seed tasks (in order, on one database) and the recovery task, with their ideal calls and the
    user each task must leave registered (checked in the database after the task)."""
    from react_agent.demo import SEED_TASKS

    first, second = SEED_TASKS[lang]
    ivan = {"username": "Ivan", "email": "ivan@test.com"}
    slava = {"username": "Viacheslav", "email": "Viacheslav@test.com"}
    petr = {"username": "Petr", "email": "petr@test.com"}
    recovery = ("Зарегистрируй пользователя Petr с email petr@test.com" if lang == "ru"
                else "Register user Petr with email petr@test.com")
    return [
        {"id": "seed_1_register", "task": first, "calls": [("register_user", ivan)], "wrong_first": False,
         "users": ["Ivan"]},
        {"id": "seed_2_register_and_search", "task": second,
         "calls": [("register_user", slava), ("search_db", {"username": "Ivan"})], "wrong_first": False,
         "users": ["Viacheslav"]},
        {"id": "recovery_wrong_argument", "task": recovery, "calls": [("register_user", petr)], "wrong_first": True,
         "users": ["Petr"]},
    ]


def _wrong(call: Call) -> Call:
    name, args = call
    return name, {("user_email" if k == "email" else k): v for k, v in args.items()}


# ------------------------------------------------------------------------------------------ the oracle
@contextlib.contextmanager
def tagged_templates() -> Iterator[None]:
    """Tag every top-level rendered prompt with its template name (in this process only)."""
    from react_agent._prompts import PromptSet

    original = PromptSet.messages

    def messages(self: Any, name: str, **variables: Any) -> Any:
        out = original(self, name, **variables)
        if name in _TOP:
            out = [m.model_copy(update={"additional_kwargs": {**m.additional_kwargs, _TAG: name}}) for m in out]
        return out

    PromptSet.messages = messages  # type: ignore[method-assign]
    try:
        yield
    finally:
        PromptSet.messages = original  # type: ignore[method-assign]


def oracle_model(calls: list[Call], *, wrong_first: bool, answer: str) -> Any:
    """A chat model that answers each prompt kind with the ideal reply (see the module docstring)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import PrivateAttr

    class OracleChatModel(BaseChatModel):
        _steps: list[str] = PrivateAttr(default_factory=list)
        _plans: list[str] = PrivateAttr(default_factory=list)
        _kinds: list[str] = PrivateAttr(default_factory=list)

        @property
        def _llm_type(self) -> str:
            return "bench-oracle"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            kind = next((m.additional_kwargs.get(_TAG) for m in reversed(messages) if _TAG in m.additional_kwargs),
                        "step")
            self._kinds.append(kind)
            if kind in ("step", "corrective"):
                text = self._steps.pop(0) if self._steps else _action("FINISH", answer)
            elif kind == "plan":
                text = self._plans.pop(0) if len(self._plans) > 1 else self._plans[0]
            elif kind == "reflection":
                text = "The argument is called email, not user_email: call register_user again with email."
            elif kind == "fill_open":
                text = "{}"
            else:  # final_answer
                text = answer
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    model = OracleChatModel()
    first = [_wrong(calls[0]), *calls] if wrong_first else list(calls)
    model._steps = [_action(name, args) for name, args in first]
    plans = [[_wrong(calls[0]), *calls[1:]]] if wrong_first else []
    plans.append(list(calls))
    model._plans = [json.dumps({"plan": [{"tool": n, "args": a, "open": []} for n, a in p]}) for p in plans]
    return model


def _action(name: str, action_input: Any) -> str:
    return json.dumps({"thought": "next step", "action": name, "action_input": action_input}, ensure_ascii=False)


# ------------------------------------------------------------------------------------------ agents
def agent_factories() -> dict[str, tuple[str, Callable[..., Any]]]:
    """label and ``factory(llm, tools, **options)`` per agent."""
    from react_agent import ReactAgent, ReflectionAgent

    out: dict[str, tuple[str, Callable[..., Any]]] = {
        "react_never": ('ReactAgent(final_answer="never")',
                        lambda llm, tools, **o: ReactAgent(llm, tools, final_answer="never", **o)),
        "react_always": ('ReactAgent(final_answer="always")',
                         lambda llm, tools, **o: ReactAgent(llm, tools, final_answer="always", **o)),
        "reflection": ("ReflectionAgent", lambda llm, tools, **o: ReflectionAgent(llm, tools, **o)),
    }
    try:
        from react_agent.plan import PlanAndExecuteAgent
    except ImportError:
        return out
    out["plan_and_execute"] = ("PlanAndExecuteAgent", lambda llm, tools, **o: PlanAndExecuteAgent(llm, tools, **o))
    return out


def agent_options(lang: str, tools: list[Any], *, local: bool) -> dict[str, Any]:
    """The agents' options: the language's prompts; for the local model what the CLI uses with
    ``--model local`` (the compact prompt set and the demo's worked examples of these tools)."""
    if not local:
        return {"prompts": lang}
    try:
        from react_agent import FINISH
        from react_agent.demo import DEMO_EXAMPLES
    except ImportError:  # an older react_agent without examples
        return {"prompts": lang}
    names = {FINISH, *(t.name for t in tools)}
    examples = [e for e in DEMO_EXAMPLES[lang] if {e.answer.action, *(s.action for s in e.steps if s.action)} <= names]
    return {"prompts": f"{lang}-compact", "examples": examples}


def _users(db_path: Path) -> list[str]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        return sorted(row[0] for row in conn.execute("SELECT username FROM users"))


def run_agents(make_llm: Callable[[dict[str, Any]], Any], lang: Any, *, only: list[str] | None = None,
               scripted: bool = True) -> dict[str, Any]:
    from react_agent.demo import make_demo_tools

    out: dict[str, Any] = {}
    factories = agent_factories()
    for key, (label, factory) in factories.items():
        if only and key not in only:
            continue
        rows = []
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "users.sqlite3"
            tools = make_demo_tools(db_path=db, lang=lang)
            options = agent_options(lang, tools, local=not scripted)
            for spec in tasks(lang):
                llm = make_llm(spec)
                agent = factory(llm, tools, **options)
                started = time.monotonic()
                result = agent.run(spec["task"])
                users = _users(db)
                rows.append({"task": spec["id"], "llm_calls": result.llm_calls, "status": result.status,
                             "steps": len(result.steps), "seconds": round(time.monotonic() - started, 3),
                             "users_ok": all(u in users for u in spec["users"]),
                             "kinds": list(getattr(llm, "_kinds", [])) if scripted else None,
                             "output": result.output[:200]})
        out[key] = {"label": label, "tasks": rows}
    return out


def run(*, lang: str = "ru", local: bool = False, only: list[str] | None = None) -> dict[str, Any]:
    results: dict[str, Any] = {"lang": lang, "tasks": [{k: t[k] for k in ("id", "task")} for t in tasks(lang)]}
    answer = "Готово." if lang == "ru" else "Done."
    with tagged_templates():
        results["scripted"] = run_agents(
            lambda spec: oracle_model(spec["calls"], wrong_first=spec["wrong_first"], answer=answer), lang, only=only)
    if local:
        from react_agent.models import LocalChatModel

        llm = LocalChatModel()
        results["local"] = run_agents(lambda spec: llm, lang, only=only, scripted=False)
        results["local_model"] = llm.model_name
    return results


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    from matplotlib.ticker import MaxNLocator

    scripted = results["scripted"]
    agents = list(scripted)
    task_ids = [t["id"] for t in results["tasks"]]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(agents)
    for i, key in enumerate(agents):
        values = [next(r["llm_calls"] for r in scripted[key]["tasks"] if r["task"] == t) for t in task_ids]
        ax.bar([j + i * width for j in range(len(task_ids))], values, width=width, label=scripted[key]["label"])
    ax.set_xticks([j + width * (len(agents) - 1) / 2 for j in range(len(task_ids))])
    ax.set_xticklabels([t.replace("_", " ") for t in task_ids], fontsize=8)
    ax.set_ylabel("model calls")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Model calls per task (scripted oracle model)")
    ax.legend(fontsize=7)
    return _common.save_figure(fig, path)


def _table(block: dict[str, Any], task_ids: list[str], *, with_status: bool) -> str:
    rows = []
    for entry in block.values():
        by_task = {r["task"]: r for r in entry["tasks"]}
        cells = []
        for t in task_ids:
            r = by_task[t]
            cell = str(r["llm_calls"])
            if with_status:
                cell += f" ({r['status']}{', DB ok' if r['users_ok'] else ', DB wrong'}, {r['seconds']:.0f} s)"
            cells.append(cell)
        rows.append([entry["label"], *cells, sum(by_task[t]["llm_calls"] for t in task_ids)])
    return _common.table(["agent", *task_ids, "total"], rows)


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    task_ids = [t["id"] for t in r["tasks"]]
    parts = [
        "Tasks (`" + r["lang"] + "`): " + "; ".join(f"`{t['id']}`: {t['task']}" for t in r["tasks"]) + ".",
        "",
        "Scripted oracle model (deterministic; it answers each prompt kind ideally, the agent decides how many "
        "calls are made):",
        "",
        _table(r["scripted"], task_ids, with_status=False),
    ]
    if "plan_and_execute" not in r["scripted"]:
        parts += ["", "PlanAndExecuteAgent: `react_agent.plan` is not installed in this checkout, so it is not listed."]
    if r.get("local"):
        model = r.get("local_model", "gemma-3-270m")  # files written before the model was recorded: Gemma's runs
        parts += ["", f"Embedded local model (`{model}`, constrained decoding, configured as the CLI's "
                  "`--model local`: the compact prompt set and the demo's worked examples; calls, status, "
                  "database check, time):",
                  "", _table(r["local"], task_ids, with_status=True)]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.model_calls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", choices=("ru", "en"), default="ru", help="tasks, tools and prompts (default ru)")
    parser.add_argument("--local", action="store_true", help="also run the embedded local model (slow)")
    parser.add_argument("--agents", nargs="*", default=None,
                        help="only these agents: react_never react_always reflection plan_and_execute")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    results = run(lang=args.lang, local=args.local, only=args.agents)
    config = {"lang": args.lang, "local": args.local, "agents": args.agents}
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
