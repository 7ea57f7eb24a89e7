"""Batch runs on the local backend: results stream as tasks end, failures stay per task, bounded tasks in
flight, results file safe against a kill, and a second run does only what is missing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_worker import AgentFactory, RuleChatModel, answer, ledger_items, make_record_tool, task_text, write_tasks
from conftest import call, finish
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from react_agent import ConfigError, ReactAgent
from react_agent.batch import (
    BatchSummary,
    ResultsFile,
    TaskError,
    TaskResult,
    arun_batch,
    iter_tasks,
    journal_name,
    read_results,
    run_batch,
)
from react_agent.testing import ScriptedChatModel


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def calls_made(folder: Path) -> int:
    log = folder / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_batch_yields_each_result_and_writes_one_line_per_task(tmp_path: Path) -> None:
    write_tasks(tmp_path / "tasks.jsonl", 6, 2)
    batch = run_batch(AgentFactory(str(tmp_path)), tmp_path / "tasks.jsonl", concurrency=3,
                      journal_dir=tmp_path / "journals", out=tmp_path / "out.jsonl")
    results = list(batch)
    assert sorted(r.id for r in results) == [f"task-{n}" for n in range(1, 7)]
    for result in results:
        number = int(result.id.split("-")[1])
        assert result.status == "finished" and result.output == answer(number, 2)
        assert (result.steps, result.llm_calls, result.total_tokens) == (3, 3, 45)
        assert [c["args"]["item"] for c in result.tool_calls] == [f"t{number}-i1", f"t{number}-i2"]
        assert result.passed is True and [c.name for c in result.checks] == ["status", "answer"]
    written = lines(tmp_path / "out.jsonl")
    assert [w["id"] for w in written] == [r.id for r in results]  # in completion order, as yielded
    summary = batch.summary
    assert (summary.done, summary.failed, summary.running, summary.llm_calls, summary.passed) == (6, 0, 0, 18, 6)
    assert summary.total == 6 and run_batch(AgentFactory(str(tmp_path)), ["x", "y"]).summary.total == 2
    assert summary.total_tokens == 6 * 45
    assert sorted(ledger_items(tmp_path / "ledger.txt")) == sorted(f"t{n}-i{j}" for n in range(1, 7) for j in (1, 2))
    assert {p.name for p in (tmp_path / "journals").iterdir()} == {f"task-{n}.jsonl" for n in range(1, 7)}


def test_tasks_may_be_strings_with_stable_default_ids(tmp_path: Path) -> None:
    agent = AgentFactory(str(tmp_path))()
    tasks = [task_text(1, 1), {"task": task_text(2, 1)}, task_text(1, 1)]
    first = {r.task: r.id for r in run_batch(agent, tasks, concurrency=2)}
    ids = [t.id for t in iter_tasks(tasks)]
    assert ids[0] != ids[1] and ids[2] == ids[0] + "-2" and ids == [t.id for t in iter_tasks(tasks)]
    assert first[task_text(2, 1)] == ids[1] and ids[0].startswith("t-")


def test_explicit_duplicate_ids_and_bad_lines_are_task_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="used twice"):
        list(iter_tasks([{"id": "a", "task": "x"}, {"id": "a", "task": "y"}]))
    (tmp_path / "t.jsonl").write_text('{"task": "fine"}\n{oops\n', encoding="utf-8")
    with pytest.raises(TaskError, match=r"t\.jsonl line 2: not JSON"):
        list(iter_tasks(tmp_path / "t.jsonl"))
    with pytest.raises(TaskError, match="no 'task' field"):
        list(iter_tasks([{"id": "a"}]))
    with pytest.raises(TaskError, match="answer_regex"):
        list(iter_tasks([{"task": "x", "checks": {"answer_regex": "("}}]))


def test_a_tasks_file_with_a_byte_order_mark_is_read_and_one_not_in_utf8_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + '"first"\n{"id": "b", "task": "вторая"}\n'.encode())
    assert [t.task for t in iter_tasks(tmp_path / "bom.jsonl")] == ["first", "вторая"]
    (tmp_path / "latin1.jsonl").write_bytes('"fine"\n"caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(TaskError, match=r"latin1\.jsonl line 2: not UTF-8 text"):
        list(iter_tasks(tmp_path / "latin1.jsonl"))


def test_a_batch_from_a_file_knows_its_total_before_it_runs_counting_only_task_lines(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(b"\xef\xbb\xbf# a comment\n\n" + '"one"\n  \n  # indented comment\n"два"\n'.encode()
                      + "\u00a0\u3000\n".encode() + b'"caf\xe9"\n')
    assert run_batch(AgentFactory(str(tmp_path)), tasks).summary.total == 3  # a bad line counts: the reader names it
    assert run_batch(AgentFactory(str(tmp_path)), tmp_path / "missing.jsonl").summary.total is None


def test_journal_names_are_safe_file_names_and_distinct() -> None:
    assert journal_name("task-1") == "task-1.jsonl"
    odd = [journal_name(i) for i in ("../etc/passwd", "a/b", "a_b", ".hidden", "x" * 300)]
    assert all("/" not in n and not n.startswith(".") and len(n) < 120 for n in odd)
    assert len(set(odd)) == len(odd)


class FailingModel(RuleChatModel):
    """The rule model, raising a non-transient error for one task's prompts."""

    def _result(self, messages: list[BaseMessage]) -> ChatResult:
        if "t2-i1" in "\n".join(str(m.content) for m in messages):
            raise ValueError("the model refuses task 2")
        return super()._result(messages)


class BuggyAgent(ReactAgent):
    def parse(self, text: str) -> Any:
        if "t3-i1" in text:
            raise KeyError("a bug in an override")
        return super().parse(text)


def test_one_tasks_failure_never_stops_the_batch(tmp_path: Path) -> None:
    tools = [make_record_tool(tmp_path / "ledger.txt")]
    agent = BuggyAgent(FailingModel(delay=0.0), tools, prompts="en", history_window=None, retry=None)
    slow = {"id": "slow", "task": task_text(4, 1)}

    class SlowModel(RuleChatModel):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            if "t4-i1" in "\n".join(str(m.content) for m in messages):
                await asyncio.sleep(30)
            return await super()._agenerate(messages, stop, run_manager, **kw)

    results = {r.id: r for r in run_batch(agent, [task_text(1, 1), task_text(2, 1), task_text(3, 1)], concurrency=3,
                                          out=tmp_path / "out.jsonl")}
    statuses = sorted((r.task, r.status) for r in results.values())
    assert statuses == [(task_text(1, 1), "finished"), (task_text(2, 1), "error"), (task_text(3, 1), "error")]
    by_task = {r.task: r for r in results.values()}
    assert "the model refuses task 2" in (by_task[task_text(2, 1)].error or "")
    assert "RunError" in (by_task[task_text(3, 1)].error or "") and "a bug in an override" in (
        by_task[task_text(3, 1)].error or "")
    timed = list(run_batch(ReactAgent(SlowModel(), tools, prompts="en"), [slow, task_text(5, 1)], concurrency=2,
                           task_timeout=0.5))
    assert {r.id: r.status for r in timed}["slow"] == "timeout"
    assert sorted(r.status for r in timed) == ["finished", "timeout"]


def test_tasks_in_flight_are_bounded_and_read_lazily(tmp_path: Path) -> None:
    active, peak, pulled = 0, 0, 0

    class Counting(RuleChatModel):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            try:
                return await super()._agenerate(messages, stop, run_manager, **kw)
            finally:
                active -= 1

    def tasks() -> Iterator[str]:
        nonlocal pulled
        for number in range(1, 41):
            pulled += 1
            yield task_text(number, 1)

    agent = ReactAgent(Counting(delay=0.005), [make_record_tool(tmp_path / "ledger.txt")], prompts="en")
    ahead = []
    for done, _ in enumerate(run_batch(agent, tasks(), concurrency=4), 1):
        ahead.append(pulled - done)
    assert peak == 4 and max(ahead) <= 4 and pulled == 40


def test_second_run_runs_nothing_and_a_lost_result_is_replayed_without_calls(tmp_path: Path) -> None:
    write_tasks(tmp_path / "tasks.jsonl", 5, 2)
    options: dict[str, Any] = {"concurrency": 2, "journal_dir": tmp_path / "j", "out": tmp_path / "out.jsonl"}
    run_batch(AgentFactory(str(tmp_path)), tmp_path / "tasks.jsonl", **options).run()
    calls = calls_made(tmp_path)
    assert calls == 15
    again = run_batch(AgentFactory(str(tmp_path)), tmp_path / "tasks.jsonl", **options)
    assert list(again) == [] and again.summary.previous == 5 and again.summary.done == 5
    # the results of two tasks are lost (the batch died after their journals ended), one line is torn
    kept = (tmp_path / "out.jsonl").read_text().splitlines(keepends=True)
    lost = {json.loads(kept[3])["id"], json.loads(kept[4])["id"]}
    (tmp_path / "out.jsonl").write_text("".join(kept[:3]) + kept[3][:20])
    replayed = list(run_batch(AgentFactory(str(tmp_path)), tmp_path / "tasks.jsonl", **options))
    assert {r.id for r in replayed} == lost and all(r.resumed and r.status == "finished" for r in replayed)
    assert calls_made(tmp_path) == calls  # replayed from the journals: no model call
    assert len(ledger_items(tmp_path / "ledger.txt")) == 10
    ids = [w["id"] for w in lines(tmp_path / "out.jsonl")]
    assert sorted(ids) == [f"task-{n}" for n in range(1, 6)]
    assert len(list(read_results(tmp_path / "out.jsonl"))) == 5


def test_interrupted_task_resumes_with_only_the_remaining_calls(tmp_path: Path) -> None:
    tasks = [{"id": "a", "task": task_text(1, 3)}]
    journals = tmp_path / "j"
    journals.mkdir()
    tools = [make_record_tool(tmp_path / "ledger.txt")]
    # a first session made the first two decisions and one tool call, then died
    script = [call("record", item="t1-i1"), call("record", item="t1-i2")]
    partial = ReactAgent(ScriptedChatModel([*script, RuntimeError("killed")]), tools, prompts="en",
                         history_window=None, retry=None)
    partial.run(task_text(1, 3), journal=journals / "a.jsonl")
    assert ledger_items(tmp_path / "ledger.txt") == ["t1-i1", "t1-i2"]
    rest = ScriptedChatModel([call("record", item="t1-i3"), finish(answer(1, 3))])
    agent = ReactAgent(rest, tools, prompts="en", history_window=None, retry=None)
    [result] = run_batch(agent, tasks, journal_dir=journals)
    assert result.resumed and result.status == "finished" and result.output == answer(1, 3)
    assert len(rest.calls) == 2 and result.llm_calls == 4  # two decisions replayed, two live
    assert ledger_items(tmp_path / "ledger.txt") == ["t1-i1", "t1-i2", "t1-i3"]


def test_changed_task_text_for_a_journaled_id_is_refused(tmp_path: Path) -> None:
    factory = AgentFactory(str(tmp_path))
    list(run_batch(factory, [{"id": "a", "task": task_text(1, 1)}], journal_dir=tmp_path / "j"))
    [result] = run_batch(factory, [{"id": "a", "task": task_text(2, 1)}], journal_dir=tmp_path / "j")
    assert result.status == "error" and "tasks file changed" in (result.error or "")


def test_results_file_is_locked_against_a_second_batch(tmp_path: Path) -> None:
    with ResultsFile(tmp_path / "out.jsonl"), pytest.raises(ConfigError, match="another batch"):
        ResultsFile(tmp_path / "out.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        ResultsFile(tmp_path / "missing" / "out.jsonl")


def test_bad_options_are_config_errors(tmp_path: Path) -> None:
    agent = AgentFactory(str(tmp_path))()
    with pytest.raises(ConfigError, match="concurrency"):
        run_batch(agent, ["x"], concurrency=0)
    with pytest.raises(ConfigError, match="backend"):
        list(run_batch(agent, ["x"], backend="spark"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="factory returned"):
        list(run_batch(lambda: "not an agent", ["x"]))  # type: ignore[arg-type, return-value]
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="is a file"):
        list(run_batch(agent, ["x"], journal_dir=tmp_path / "file"))


@pytest.mark.parametrize(("options", "named"), [
    ({"task_timeout": float("nan")}, "task_timeout"),  # every task would end "timeout"
    ({"task_timeout": float("inf")}, "task_timeout"),
    ({"task_timeout": True}, "task_timeout"),
    ({"task_timeout": -10**400}, "task_timeout"),  # an int no float holds: still the option's error
    ({"task_timeout": 10**400}, "TIMEOUT_MAX"),
    ({"task_timeout": 1e300}, "TIMEOUT_MAX"),
    ({"journal_dir": ""}, "journal_dir"),  # the current folder, silently
    ({"journal_dir": 5}, "journal_dir"),
    ({"out": ""}, "out"),
    ({"out": 5}, "out"),
    ({"retry": "error"}, r"retry=\('error', 'timeout'\)"),  # a string is not a collection of statuses
    ({"retry": 5}, "retry"),
    ({"retry": ["errors"]}, "unknown status 'errors'"),
])
async def test_a_wrong_type_or_value_of_a_batch_option_is_a_config_error_naming_it(
        tmp_path: Path, options: dict[str, Any], named: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    agent = AgentFactory(str(tmp_path))()
    with pytest.raises(ConfigError, match=named):
        run_batch(agent, ["x"], **options)
    with pytest.raises(ConfigError, match=named):
        [r async for r in arun_batch(agent, ["x"], **options)]
    assert not list(tmp_path.glob("*.jsonl"))  # nothing journaled or written


async def test_arun_batch_streams_in_the_callers_event_loop(tmp_path: Path) -> None:
    summary = BatchSummary()
    agent = AgentFactory(str(tmp_path))()
    results: list[TaskResult] = [r async for r in arun_batch(agent, [task_text(n, 1) for n in range(1, 5)],
                                                            concurrency=2, summary=summary)]
    assert len(results) == 4 and summary.done == summary.total == 4 and all(r.ok for r in results)


def test_session_values_reach_the_run(tmp_path: Path) -> None:
    from react_agent import PlanAndExecuteAgent

    plan = json.dumps({"plan": [{"tool": "record", "args": {"item": "$session.item"}, "open": []}]})
    agent = PlanAndExecuteAgent(ScriptedChatModel([plan, plan]), [make_record_tool(tmp_path / "ledger.txt")],
                                prompts="en")
    tasks = [{"id": f"s{n}", "task": "Record the session's item", "session": {"item": f"secret-{n}"}}
             for n in (1, 2)]
    results = list(run_batch(agent, tasks, concurrency=1, journal_dir=tmp_path / "j"))
    assert sorted(r.status for r in results) == ["finished", "finished"]
    assert sorted(ledger_items(tmp_path / "ledger.txt")) == ["secret-1", "secret-2"]


def test_retry_runs_failed_tasks_again_and_keeps_one_line_per_task(tmp_path: Path) -> None:
    flag = tmp_path / "model-down"
    flag.touch()

    class Flaky(RuleChatModel):
        def _result(self, messages: list[BaseMessage]) -> ChatResult:
            if flag.exists() and "t2-i1" in "\n".join(str(m.content) for m in messages):
                raise ValueError("model down")
            return super()._result(messages)

    def agent() -> ReactAgent:
        return ReactAgent(Flaky(log_dir=str(tmp_path)), [make_record_tool(tmp_path / "ledger.txt")], prompts="en",
                          history_window=None, retry=None)

    options: dict[str, Any] = {"journal_dir": tmp_path / "j", "out": tmp_path / "out.jsonl", "concurrency": 2}
    tasks = [{"id": f"t{n}", "task": task_text(n, 1)} for n in (1, 2, 3)]
    first = {r.id: r.status for r in run_batch(agent, tasks, **options)}
    assert first == {"t1": "finished", "t2": "error", "t3": "finished"}
    flag.unlink()
    assert list(run_batch(agent, tasks, **options)) == []  # without retry: errors are results too
    [again] = run_batch(agent, tasks, retry=("error", "timeout"), **options)
    assert (again.id, again.status, again.resumed, again.output) == ("t2", "finished", True, answer(2, 1))
    assert sorted(w["id"] for w in lines(tmp_path / "out.jsonl")) == ["t1", "t2", "t3"]
    assert {w["status"] for w in lines(tmp_path / "out.jsonl")} == {"finished"}


def test_memory_stays_flat_in_the_number_of_tasks(tmp_path: Path) -> None:
    import gc
    import tracemalloc

    agent = ReactAgent(RuleChatModel(), [make_record_tool(tmp_path / "ledger.txt")], prompts="en")

    def peak(count: int) -> int:
        gc.collect()
        tracemalloc.start()
        try:
            tasks = ({"id": f"{count}-{n}", "task": task_text(n, 1)} for n in range(count))
            run_batch(agent, tasks, concurrency=10, out=tmp_path / f"out-{count}.jsonl").run()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(20)  # warm caches (prompts, schemas) before measuring
    small, large = peak(60), peak(240)
    assert large < small * 1.5, (small, large)  # results are written out, not kept
