"""`react-agent view`: one self-contained HTML file for a journal, a --trace file, a batch results file or an
eval folder, made from the real outputs of those commands and APIs, checked as text and in a real browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, screenshot, wait_for
from langchain_core.tools import tool

from react_agent import ConfigError, ReactAgent
from react_agent.batch import evaluate, run_batch
from react_agent.serve import write_view
from react_agent.serve._view import load_view, render_view
from react_agent.testing import FunctionChatModel, ScriptedChatModel

HOSTILE = "<script>alert('x')</script><img src=http://example.org/x.png>"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key} {HOSTILE}" if key == "bad" else f"value of {key}"


def _reply(messages: list[Any]) -> str:
    text = "\n".join(str(m.content) for m in messages)
    key = re.findall(r"KEY\[(\w+)\]", text)[-1]
    if f"value of {key}" in text:
        return json.dumps({"thought": "found", "action": "FINISH", "action_input": f"the value of {key}"})
    return json.dumps({"thought": f"look {key} up", "action": "lookup", "action_input": {"key": key}})


def _agent() -> ReactAgent:
    return ReactAgent(FunctionChatModel(function=_reply, usage=True), [lookup], prompts="en")


@pytest.fixture
def browser() -> Any:
    yield from chromium()


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    _agent().run("Find KEY[bad]", journal=path)
    _agent().run("Find KEY[k2]", journal=path)
    return path


@pytest.fixture
def results(tmp_path: Path) -> Path:
    out = tmp_path / "results.jsonl"
    tasks = [{"id": "t1", "task": "Find KEY[k1]", "checks": {"answer": "value of k1"}},
             {"id": "t2", "task": "Find KEY[k2]", "checks": {"answer": "forty-two"}}]
    list(run_batch(_agent(), tasks, concurrency=1, out=out, journal_dir=f"{out}.journal"))
    return out


@pytest.fixture
def eval_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "eval"
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps(t) + "\n" for t in [
        {"id": "a", "task": "Find KEY[k1]", "checks": {"answer": "value of k1"}},
        {"id": "b", "task": "Find KEY[k2]", "checks": {"tool_calls": [{"tool": "lookup", "args": {"key": "k9"}}]}}]))
    give_up = ReactAgent(ScriptedChatModel(['{"action": "FINISH", "action_input": "no idea"}'] * 2), [lookup],
                         prompts="en")
    evaluate(suite, {"react": _agent(), "guess": give_up}, out_dir=folder, concurrency=1)
    return folder


def test_a_journal_shows_each_run_with_its_steps_status_and_tokens(journal: Path) -> None:
    data = load_view(journal)
    assert data.kind == "journal"
    assert [g.task for g in data.groups] == ["Find KEY[bad]", "Find KEY[k2]"]
    first = data.groups[0]
    assert first.status == "finished" and first.output == "the value of bad"
    assert [s["action"] for s in first.steps] == ["lookup", "FINISH"]
    assert first.llm_calls == 2 and first.total_tokens > 0 and first.seconds is not None
    html = render_view(data)
    assert "Find KEY[k2]" in html and "the value of k2" in html


def test_hostile_tool_output_is_escaped_and_nothing_is_fetched(journal: Path) -> None:
    html = write_view(journal).read_text(encoding="utf-8")
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(" in html
    assert not re.search(r"<(script|img|link|iframe)\b", html)  # no script, image or stylesheet to load
    assert not re.search(r"<[^>]*\s(src|href)=[\"']?(https?:)?//", html)  # no tag loads a URL


def test_a_trace_file_shows_its_runs(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    step = {"type": "step", "run": 1, "step": 1, "thought": "t", "action": "lookup", "action_input": {"key": "k"},
            "observation": "value of k", "is_error": False, "reflection": None, "raw_output": "{}",
            "duration_s": 0.25, "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
    result = {"type": "result", "run": 1, "task": "Find k", "status": "max_iterations", "output": "", "steps": 1,
              "llm_calls": 1, "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}, "error": None,
              "violations": [], "duration_s": 0.3}
    trace.write_text(json.dumps(step) + "\n" + json.dumps(result) + "\n")
    data = load_view(trace)
    assert data.kind == "trace"
    assert data.groups[0].status == "max_iterations" and data.groups[0].total_tokens == 15
    assert data.groups[0].steps[0]["observation"] == "value of k"


def test_a_batch_results_file_shows_per_task_status_and_failed_checks(results: Path) -> None:
    data = load_view(results)
    assert data.kind == "batch"
    by_id = {g.id: g for g in data.groups}
    assert by_id["t1"].failed_checks == []
    assert [c["name"] for c in by_id["t2"].failed_checks] == ["answer"]
    assert "forty-two" in by_id["t2"].failed_checks[0]["detail"]
    assert [s["action"] for s in by_id["t1"].steps] == ["lookup", "FINISH"]  # from the batch's journals
    html = render_view(data)
    assert 'class="failed-checks"' in html and "forty-two" in html


def test_an_eval_folder_shows_the_scores_and_the_chart(eval_dir: Path) -> None:
    data = load_view(eval_dir)
    assert data.kind == "eval"
    assert {s.variant: s.passed for s in data.scores} == {"guess": 0, "react": 1}
    assert sorted({g.variant for g in data.groups}) == ["guess", "react"]
    html = write_view(eval_dir).read_text(encoding="utf-8")
    assert (eval_dir / "index.html").is_file()
    assert html.count('<rect class="bar"') == 2
    assert "50%" in html and "0%" in html


def test_a_folder_of_journals_shows_every_run_oldest_first(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for number, key in enumerate(("k1", "k2", "k3")):
        _agent().run(f"Find KEY[{key}]", journal=folder / f"run-{2 - number}.jsonl")
    (folder / "run-x.run.json").write_text("{}")  # a broken run file of a serve folder is left alone
    data = load_view(folder)
    assert data.kind == "journal"
    assert [g.task for g in data.groups] == ["Find KEY[k1]", "Find KEY[k2]", "Find KEY[k3]"]


def test_a_serve_folder_shows_the_tasks_as_asked(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from react_agent.serve import create_app

    folder = tmp_path / "runs"
    with TestClient(create_app(_agent(), journal_dir=folder)) as client:
        for key in ("k1", "k2"):
            client.post("/runs?wait=true", json={"task": f"Find KEY[{key}]", "thread_id": "t"})
    data = load_view(folder)
    assert [g.task for g in data.groups] == ["Find KEY[k1]", "Find KEY[k2]"]  # not the composed conversation
    assert [g.output for g in data.groups] == ["the value of k1", "the value of k2"]


def test_the_labels_follow_the_language(journal: Path) -> None:
    html = render_view(load_view(journal), lang="ru")
    assert "Мысль" in html and "Сводка" in html and 'lang="ru"' in html
    with pytest.raises(ConfigError, match="lang must be one of en, ru"):
        render_view(load_view(journal), lang="de")


def test_what_is_not_a_run_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_view(tmp_path / "missing.jsonl")
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\nnot json\n')
    with pytest.raises(ConfigError, match="is not a journal, a --trace file or a batch results file"):
        load_view(other)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"holds no results .* and no journals"):
        load_view(tmp_path / "empty")

def test_an_output_in_a_missing_folder_is_refused(journal: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        write_view(journal, tmp_path / "no" / "such" / "out.html")


def test_a_torn_last_line_is_ignored(journal: Path) -> None:
    with journal.open("a") as handle:
        handle.write('{"type": "step", "run": "x", "tho')
    assert len(load_view(journal).groups) == 2


def test_the_view_command_writes_the_page(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from react_agent.cli import main

    out = tmp_path / "page.html"
    assert main(["view", str(results), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert "forty-two" in out.read_text(encoding="utf-8")
    assert main(["view", str(tmp_path / "nothing.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_view_opened_from_disk_shows_its_key_elements(browser: Any, eval_dir: Path, results: Path,
                                                         journal: Path, tmp_path: Path) -> None:
    page = write_view(eval_dir)
    browser.get(page.resolve().as_uri())
    wait_for(lambda: browser.find_elements("css selector", "#groups .group-row"), "the table of tasks")
    bars = browser.find_elements("css selector", "#chart svg rect.bar")
    assert len(bars) == 2 and all(bar.size["width"] > 0 for bar in bars)
    assert len(browser.find_elements("css selector", "#groups .group-row")) == 4
    assert len(browser.find_elements("css selector", "#scores .score")) == 2
    failed = [e.text for e in browser.find_elements("css selector", ".failed-checks li")]
    assert any(text.startswith("tool_calls") for text in failed)
    screenshot(browser, tmp_path, "view-eval.png")

    browser.get(write_view(journal).resolve().as_uri())
    wait_for(lambda: browser.find_elements("css selector", "details.group"), "the runs")
    browser.find_element("css selector", "details.group summary").click()
    observation = browser.find_elements("css selector", ".step-observation")[0].text
    assert HOSTILE in observation  # shown as text, not run
    assert browser.execute_script("return document.images.length + document.scripts.length") == 0
    screenshot(browser, tmp_path, "view-journal.png")
