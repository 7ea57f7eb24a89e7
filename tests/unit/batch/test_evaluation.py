"""Evaluation: checks of a result, the Wilson interval, scoring variants side by side, the table and the plot."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import call, finish

from react_agent import AgentResult, AgentStep, ConfigError, ReactAgent, ReflectionAgent
from react_agent.batch import (
    SUITES,
    Checks,
    Task,
    TaskResult,
    evaluate,
    format_scores,
    load_tasks,
    plot_scores,
    run_checks,
    score_results,
    suite_path,
    wilson_interval,
)
from react_agent.demo import make_demo_tools
from react_agent.testing import ScriptedChatModel


def result(output: str = "17 * 23 = 391", status: str = "finished", calls: Any = ()) -> AgentResult:
    steps = [AgentStep(action=tool, action_input=args, observation="ok") for tool, args in calls]
    return AgentResult(output=output, status=status, steps=[*steps, AgentStep(action="FINISH", action_input=output)])  # type: ignore[arg-type]


def verdict(checks: dict[str, Any], res: AgentResult) -> dict[str, bool]:
    task = Task(id="t", task="x", checks=Checks.model_validate(checks))
    assert task.checks is not None
    return {c.name: c.passed for c in run_checks(task.checks, res, task)}


def test_answer_checks_text_case_insensitively_and_regex() -> None:
    assert verdict({"answer": "391"}, result()) == {"status": True, "answer": True}
    assert verdict({"answer": ["IVAN", "registered"]}, result("User Ivan registered")) == {"status": True,
                                                                                            "answer": True}
    assert verdict({"answer": "390"}, result())["answer"] is False
    assert verdict({"answer_regex": r"\b391\b"}, result())["answer_regex"] is True
    assert verdict({"answer_regex": r"^391"}, result())["answer_regex"] is False
    assert verdict({}, result(status="max_iterations")) == {"status": False}
    assert verdict({"status": None}, result(status="max_iterations")) == {}


def test_tool_call_checks_need_the_calls_in_order_with_the_given_arguments() -> None:
    made = result(calls=[("register_user", {"username": "Ivan", "email": "IVAN@test.com", "phone": None}),
                         ("calculator", {"expression": "1+1"}), ("search_db", {"username": "Ivan", "limit": "5"})])
    ok = [{"tool": "register_user", "args": {"username": "ivan", "email": "ivan@test.com"}},
          {"tool": "search_db", "args": {"limit": 5}}]
    assert verdict({"tool_calls": ok}, made)["tool_calls"] is True
    assert verdict({"tool_calls": list(reversed(ok))}, made)["tool_calls"] is False
    petr = [{"tool": "register_user", "args": {"username": "Petr"}}]
    assert verdict({"tool_calls": petr}, made)["tool_calls"] is False
    assert verdict({"tool_calls": [{"tool": "calculator"}]}, made)["tool_calls"] is True
    task = Task(id="t", task="x", checks=Checks.model_validate({"tool_calls": [{"tool": "search_db"}]}))
    assert task.checks is not None
    [_, detail] = run_checks(task.checks, result(), task)
    assert "expected call 1 search_db" in detail.detail and "calls: none" in detail.detail


def answer_has_digits(res: AgentResult, task: Task) -> Any:
    return any(ch.isdigit() for ch in res.output), "no digits"


def broken_predicate(res: AgentResult, task: Task) -> bool:
    raise RuntimeError("predicate bug")


def test_predicate_checks_import_module_function() -> None:
    sys.modules.setdefault("test_eval", sys.modules[__name__])
    assert verdict({"predicate": "test_eval:answer_has_digits"}, result())["predicate"] is True
    assert verdict({"predicate": "test_eval:answer_has_digits"}, result("none"))["predicate"] is False
    task = Task(id="t", task="x", checks=Checks.model_validate({"predicate": "test_eval:broken_predicate"}))
    assert task.checks is not None
    [_, bad] = run_checks(task.checks, result(), task)
    assert not bad.passed and "RuntimeError: predicate bug" in bad.detail
    failing = result(calls=[("search_db", {"username": "x"})])
    failing = failing.model_copy(update={"steps": [failing.steps[0].model_copy(update={"is_error": True})]})
    assert verdict({"predicate": "react_agent.batch.predicates:no_tool_errors"}, failing)["predicate"] is False
    with pytest.raises(ValueError, match="module:function"):
        Checks.model_validate({"predicate": "no colon"})


def test_wilson_interval_matches_known_values() -> None:
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(81, 100) == pytest.approx((0.7222, 0.8749), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("successes", "n"), [(5, 3), (-1, 3)])
def test_wilson_interval_of_more_successes_than_trials_is_a_config_error(successes: int, n: int) -> None:
    with pytest.raises(ConfigError, match=f"successes must be between 0 and n={n}"):
        wilson_interval(successes, n)


def test_score_counts_finished_and_passed_tasks_only() -> None:
    rows = [TaskResult(id="a", task="x", status="finished", passed=True, llm_calls=2, input_tokens=10, seconds=1.0),
            TaskResult(id="b", task="x", status="finished", passed=False, llm_calls=4, output_tokens=30),
            TaskResult(id="c", task="x", status="error", llm_calls=0),
            TaskResult(id="d", task="x", status="finished", llm_calls=3)]
    score = score_results("v", rows)
    assert (score.tasks, score.passed, score.rate, score.llm_calls, score.tokens) == (4, 2, 0.5, 2.25, 10.0)
    assert score.failed_ids == ["b", "c"] and score.statuses == {"finished": 3, "error": 1}


SUITE = [
    {"id": "calc", "task": "What is 17 * 23?", "checks": {"answer": "391"}},
    {"id": "register", "task": "Register user Ivan with email ivan@test.com",
     "checks": {"tool_calls": [{"tool": "register_user", "args": {"username": "Ivan"}}]}},
]
GOOD = [call("calculator", expression="17 * 23"), finish("17 * 23 = 391"),
        call("register_user", username="Ivan", email="ivan@test.com"), finish("Ivan is registered.")]
BAD = [finish("about 400"), call("register_user", username="Ivna", email="ivan@test.com"), finish("done")]


def test_evaluate_scores_variants_side_by_side_and_resumes(tmp_path: Path) -> None:
    def factory(agent_class: Any, script: list[str], db: str) -> Any:
        return lambda: agent_class(ScriptedChatModel(script), make_demo_tools(db_path=tmp_path / db, lang="en"),
                                   prompts="en")

    variants = {"good": factory(ReactAgent, GOOD, "g.db"), "bad": factory(ReflectionAgent, BAD, "b.db")}
    scores = evaluate(SUITE, variants, out_dir=tmp_path / "eval", concurrency=1)
    good, bad = scores
    assert (good.variant, good.passed, good.tasks, good.llm_calls) == ("good", 2, 2, 2.0)
    assert (bad.variant, bad.passed, bad.failed_ids) == ("bad", 0, ["calc", "register"])
    assert good.low > bad.high - 1 and good.low == pytest.approx(wilson_interval(2, 2)[0])
    table = format_scores(scores)
    assert table.splitlines()[0].startswith("| variant") and "2/2 (100%)" in table and "0/2 (0%)" in table
    assert (tmp_path / "eval" / "good.jsonl").exists() and (tmp_path / "eval" / "bad.journal").is_dir()
    # started again: nothing runs (the scripts are used up: a new call would fail), the scores are the same
    again = evaluate(SUITE, {"good": factory(ReactAgent, [], "g.db"), "bad": factory(ReflectionAgent, [], "b.db")},
                     out_dir=tmp_path / "eval")
    assert [s.model_dump() for s in again] == [s.model_dump() for s in scores]


def test_plot_is_drawn_and_optional(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scores = [score_results("react", [TaskResult(id="a", task="x", status="finished", llm_calls=2)]),
              score_results("plan", [TaskResult(id="a", task="x", status="error")])]
    pytest.importorskip("matplotlib")
    path = plot_scores(scores, tmp_path / "eval.png")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert plot_scores(scores, tmp_path / "none.png") is None and not (tmp_path / "none.png").exists()


def test_shipped_suites_match_in_both_languages() -> None:
    en, ru = (load_tasks(suite_path(name)) for name in SUITES)
    assert [t.id for t in en] == [t.id for t in ru] and len(en) >= 8
    assert [t.checks for t in en] == [t.checks for t in ru]
    assert all(t.checks is not None for t in en)
    assert any("Ivan" in t.task for t in ru) and any("Зарегистрируй" in t.task for t in ru)
    assert json.loads(suite_path("seed_en").read_text().splitlines()[0])["id"] == "seed-1-register"
