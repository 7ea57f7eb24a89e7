"""The development suites (bench/suites/): the tasks load, every expected call (and every documented
alternative) runs on its real tool over a fresh store, the tool sets behave, and the runner scores a
scripted model end to end (100 % when it plays the expected calls, less when one is wrong)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("bench", reason="the bench/ folder is not in this source tree")

import bench.suites as suites  # noqa: E402
from bench.suites import (  # noqa: E402
    LANGS,
    TOOLSETS,
    Store,
    SuiteToolError,
    load_tasks,
    make_tools,
    oracle_cases,
    tool_schemas,
)
from bench.suites import runner as suite_runner  # noqa: E402
from bench.suites.judge import judge_call, judge_outcome  # noqa: E402

TASKS = [(lang, task) for lang in LANGS for task in load_tasks(lang)]


def tools_of(store, *toolsets):
    return {tool.name: tool for tool in make_tools(toolsets or tuple(TOOLSETS), store)}


# ------------------------------------------------------------------------------------------ the tasks
@pytest.mark.parametrize("lang", LANGS)
def test_each_language_has_enough_tasks_of_every_kind(lang):
    tasks = load_tasks(lang)
    kinds = Counter(task.kind for task in tasks)
    tags = Counter(tag for task in tasks for tag in task.tags)
    assert len(tasks) >= 40
    assert 0.12 <= kinds["none"] / len(tasks) <= 0.2
    assert 0.12 <= kinds["multi"] / len(tasks) <= 0.2
    assert tags["number_words"] >= 5 and tags["percent"] >= 3 and tags["date"] >= 5 and tags["list"] >= 2
    if lang == "ru":
        assert tags["nominative"] >= 10


@pytest.mark.parametrize("lang", LANGS)
def test_every_task_offers_many_tools_at_once(lang):
    for task in load_tasks(lang):
        count = len(make_tools(task.toolsets, Store.fresh(lang)))
        assert 10 <= count <= 14, (task.id, count)


@pytest.mark.parametrize(("lang", "task"), TASKS, ids=[task.id for _, task in TASKS])
def test_every_expected_call_runs_on_its_tool_and_satisfies_the_judge(lang, task):
    store = Store.fresh(lang)
    tools = tools_of(store, *task.toolsets)
    schemas = tool_schemas(list(tools.values()))
    for expected in task.calls:
        assert expected.tool in tools, f"{task.id}: {expected.tool} is not offered"
        tools[expected.tool].invoke(expected.arguments)  # a SuiteToolError or ValidationError fails the test
        assert judge_call(expected.call(), expected, schemas[expected.tool]).ok
    assert [call.tool for call in store.log] == [call.tool for call in task.calls]
    outcome = judge_outcome(status="finished", calls=[c.as_dict() for c in store.log],
                            output=" ".join(task.answer_contains), expected=task.calls, schemas=schemas,
                            answer_contains=task.answer_contains)
    assert outcome.ok, outcome.reason


@pytest.mark.parametrize(("lang", "task"), TASKS, ids=[task.id for _, task in TASKS])
def test_every_documented_alternative_is_accepted_by_the_tool(lang, task):
    for position, expected in enumerate(task.calls):
        for key, values in expected.accept.items():
            for value in values:
                store = Store.fresh(lang)
                tools = tools_of(store, *task.toolsets)
                for earlier in task.calls[:position]:
                    tools[earlier.tool].invoke(earlier.arguments)
                tools[expected.tool].invoke({**expected.arguments, key: value})


def test_the_first_tasks_of_a_file_mix_the_domains():
    for lang in LANGS:
        domains = {task.id.split("-")[1] for task in load_tasks(lang)[:7]}
        assert len(domains) == 7, domains


def test_no_task_text_is_shared_between_the_languages():
    ru = {task.text for task in load_tasks("ru")}
    assert not ru & {task.text for task in load_tasks("en")}


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="ru, en"):
        load_tasks("de")


# ------------------------------------------------------------------------------------------ the tool sets
def test_tools_are_described_in_the_store_language():
    ru = tools_of(Store.fresh("ru"))["create_deal"]
    en = tools_of(Store.fresh("en"))["create_deal"]
    assert "сделку" in ru.description and "deal" in en.description
    assert ru.tool_call_schema.model_json_schema()["properties"]["close_date"]["anyOf"][0]["format"] == "date"


def test_every_toolset_has_distinct_tool_names():
    names = [tool.name for tool in make_tools(tuple(TOOLSETS), Store.fresh("ru"))]
    assert len(names) == len(set(names)) == 29


def test_a_store_is_fresh_per_run():
    first = Store.fresh("ru")
    tools_of(first, "crm")["create_deal"].invoke({"company": "Сфера", "amount": 1000, "currency": "RUB"})
    assert len(first.table("deals")) == 4
    assert len(Store.fresh("ru").table("deals")) == 3


def test_crm_tools_find_create_and_update():
    store = Store.fresh("ru")
    tools = tools_of(store, "crm")
    found = json.loads(tools["find_contacts"].invoke({"query": "морозов"}))
    assert [c["email"] for c in found] == ["morozov@romashka.ru"]
    created = json.loads(tools["create_deal"].invoke({"company": "Сфера", "amount": 5e4, "currency": "USD",
                                                      "close_date": "2026-05-01"}))
    assert created["id"] == "D-104" and created["close_date"] == "2026-05-01"
    discounted = json.loads(tools["apply_discount"].invoke({"deal_id": "D-104", "percent": 10}))
    assert discounted["amount_after_discount"] == 45000
    assert store.log[-1].arguments == {"deal_id": "D-104", "percent": 10.0}


def test_a_tool_that_fails_records_nothing_and_explains_in_the_language():
    store = Store.fresh("ru")
    tools = tools_of(store, "crm", "tickets")
    with pytest.raises(SuiteToolError, match="не найдены"):
        tools["find_contacts"].invoke({"query": "Морозова"})
    with pytest.raises(SuiteToolError, match="именительном"):
        tools["assign_ticket"].invoke({"ticket_id": 17, "assignee": "Петрова"})
    assert store.log == []


def test_tickets_and_people_take_names_in_the_nominative():
    store = Store.fresh("ru")
    tools = tools_of(store, "tickets")
    assigned = json.loads(tools["assign_ticket"].invoke({"ticket_id": 31, "assignee": "Иван Петров"}))
    assert assigned["assignee"] == "Петров"
    opened = json.loads(tools["search_tickets"].invoke({"status": "open", "assignee": "Смирнова"}))
    assert [t["id"] for t in opened] == [35]


def test_calendar_tools_know_today_and_keep_dates_iso():
    store = Store.fresh("en")
    tools = tools_of(store, "calendar")
    assert json.loads(tools["get_current_date"].invoke({})) == {"date": "2026-03-04", "weekday": "Wednesday"}
    event = json.loads(tools["create_event"].invoke({"title": "Call", "date": "2026-03-12", "start_time": "15:30",
                                                     "attendees": ["Emily Stone", "Michael"]}))
    assert event["attendees"] == ["Emily", "Michael"] and event["duration_minutes"] == 60
    assert [e["title"] for e in json.loads(tools["list_events"].invoke({"date": "2026-03-12"}))] == ["Call"]
    with pytest.raises(ValueError):
        tools["create_event"].invoke({"title": "Call", "date": "12.03.2026", "start_time": "15:30"})


def test_file_tools_list_move_and_share():
    store = Store.fresh("ru")
    tools = tools_of(store, "files")
    assert json.loads(tools["list_files"].invoke({"folder": "Документы/"})) == [
        "/Документы/договор_ромашка.docx", "/Документы/план_на_март.txt"]
    moved = json.loads(tools["move_file"].invoke({"source": "Входящие/счёт_4471.pdf", "destination": "/Бухгалтерия"}))
    assert moved["to"] == "/Бухгалтерия/счёт_4471.pdf"
    assert "/Бухгалтерия/счёт_4471.pdf" in json.loads(tools["list_files"].invoke({"folder": "/Бухгалтерия"}))
    with pytest.raises(SuiteToolError):
        tools["read_file"].invoke({"path": "/Входящие/счёт_4471.pdf"})
    with pytest.raises(SuiteToolError):
        tools["share_file"].invoke({"path": "/Документы/план_на_март.txt", "email": "не-почта"})


def test_messaging_and_search_tools():
    store = Store.fresh("en")
    tools = tools_of(store, "messaging", "search")
    sent = json.loads(tools["send_message"].invoke({"recipient": "michael", "text": "late", "channel": "sms"}))
    assert sent["to"] == "Michael Brooks" and store.table("sent")[-1]["kind"] == "sms"
    assert len(json.loads(tools["list_inbox"].invoke({"unread_only": False}))) == 3
    assert json.loads(tools["convert_currency"].invoke(
        {"amount": 250, "from_currency": "EUR", "to_currency": "USD"}))["result"] == 272.5
    with pytest.raises(SuiteToolError, match="unknown currency"):
        tools["convert_currency"].invoke({"amount": 1, "from_currency": "XYZ", "to_currency": "USD"})
    assert json.loads(tools["get_weather"].invoke({"city": "Seattle", "units": "fahrenheit"}))["temperature"] == 39


# ------------------------------------------------------------------------------------------ oracle cases
@pytest.mark.parametrize("lang", LANGS)
def test_oracle_cases_give_the_text_the_tool_specs_and_the_expected_call(lang):
    cases = list(oracle_cases(lang))
    tasks = load_tasks(lang)
    assert len(cases) == len(tasks)
    for (text, specs, expected), task in zip(cases, tasks, strict=True):
        assert text == task.text
        assert all({"name", "description", "parameters"} <= set(spec) for spec in specs)
        if task.expected is None:
            assert expected is None
            continue
        assert expected["tool"] in {spec["name"] for spec in specs}
        assert expected["arguments"] == task.expected.arguments
        assert set(expected["arguments"]) <= set(next(s for s in specs if s["name"] == expected["tool"])
                                                 ["parameters"]["properties"])


# ------------------------------------------------------------------------------------------ the runner
def expected_replies(lang, wrong=None):
    """The replies of a model that makes each task's expected calls and then finishes; ``wrong`` maps a task
    id to the arguments of its first call instead."""
    replies = []
    for task in load_tasks(lang):
        for index, call in enumerate(task.calls):
            arguments = (wrong or {}).get(task.id, call.arguments) if index == 0 else call.arguments
            replies.append(json.dumps({"thought": "t", "action": call.tool, "action_input": arguments},
                                      ensure_ascii=False))
        answer = " ".join(task.answer_contains) or "done"
        replies.append(json.dumps({"thought": "t", "action": "FINISH", "action_input": answer}, ensure_ascii=False))
    return replies


def run_runner(tmp_path, capsys, replies, *args):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "records.jsonl"
    code = suite_runner.main(["--model", f"scripted:{script}", "--out", str(out), "--quiet", *args])
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return code, capsys.readouterr().out, records


def test_the_runner_scores_the_expected_calls_100_percent(tmp_path, capsys):
    replies = expected_replies("ru") + expected_replies("en")
    code, printed, records = run_runner(tmp_path, capsys, replies, "--lang", "both")
    assert code == 0
    for lang in LANGS:
        total = len(load_tasks(lang))
        assert f"{lang} | first call {total}/{total} | run outcome {total}/{total} |" in printed
    assert len(records) == len(TASKS)
    assert all(r["first_ok"] and r["outcome_ok"] and r["status"] == "finished" for r in records)


def test_a_wrong_first_call_lowers_both_scores_and_is_explained(tmp_path, capsys):
    wrong = {"ru-tk-assign-petrov": {"ticket_id": 17, "assignee": "Петрова"}}
    code, printed, records = run_runner(tmp_path, capsys, expected_replies("ru", wrong), "--lang", "ru")
    total = len(load_tasks("ru"))
    assert code == 0
    assert f"ru | first call {total - 1}/{total} | run outcome {total - 1}/{total} |" in printed
    record = next(r for r in records if r["id"] == "ru-tk-assign-petrov")
    assert not record["first_ok"] and "assignee='Петрова'" in record["first_reason"]
    assert not record["outcome_ok"] and record["steps"][0]["is_error"]


def test_the_runner_limits_tasks_and_judges_a_finish_where_a_call_was_due(tmp_path, capsys):
    finish = json.dumps({"thought": "t", "action": "FINISH", "action_input": "ok"})
    code, printed, records = run_runner(tmp_path, capsys, [finish] * 3, "--lang", "en", "--limit", "3")
    assert code == 0 and len(records) == 3
    assert "en | first call 0/3 | run outcome 0/3 |" in printed
    assert records[0]["decision_kind"] == "finish" and "no call" in records[0]["first_reason"]


def test_the_results_file_holds_the_summary_and_the_page_lists_the_misses(tmp_path, capsys):
    wrong = {"ru-tk-assign-petrov": {"ticket_id": 17, "assignee": "Петрова"}}
    code, _, _ = run_runner(tmp_path, capsys, expected_replies("ru", wrong), "--lang", "ru", "--results",
                            "--out-dir", str(tmp_path))
    assert code == 0
    data = json.loads((tmp_path / "suites.json").read_text(encoding="utf-8"))
    ru = data["results"]["languages"]["ru"]
    total = len(load_tasks("ru"))
    assert (ru["tasks"], ru["first_ok"]) == (total, total - 1)
    assert [r["id"] for r in ru["records"] if not r["first_ok"]] == ["ru-tk-assign-petrov"]
    page = suites.markdown(data)
    assert f"{total - 1}/{total}" in page and "`ru-tk-assign-petrov`: assignee='Петрова'" in page


def test_a_run_of_first_calls_only_shows_no_run_outcome_on_the_page(tmp_path, capsys):
    from bench import run_all

    finish = json.dumps({"thought": "t", "action": "FINISH", "action_input": "ok"})
    code, _, records = run_runner(tmp_path, capsys, [finish] * 3, "--lang", "en", "--limit", "3",
                                  "--max-iterations", "1", "--results", "--out-dir", str(tmp_path))
    assert code == 0 and len(records) == 3
    data = json.loads((tmp_path / "suites.json").read_text(encoding="utf-8"))
    page = suites.markdown(data)
    assert "first calls only, no run outcome" in page and "not run (one step)" in page
    headline = run_all.headline_table({"suites": data})
    assert "first calls only (one step per run)" in headline and "run outcome" not in headline
    data["config"]["max_iterations"] = 6
    assert "run outcome" in run_all.headline_table({"suites": data})
    assert "not run (one step)" not in suites.markdown(data)


def test_the_runner_runs_only_the_kinds_asked_for(tmp_path, capsys):
    none = [t for t in load_tasks("en") if t.kind == "none"]
    replies = [json.dumps({"thought": "t", "action": "FINISH", "action_input": "ok"})] * 20
    code, printed, records = run_runner(tmp_path, capsys, replies, "--lang", "en", "--kind", "none")
    assert code == 0 and [r["id"] for r in records] == [t.id for t in none]
    assert f"en | first call {len(none)}/{len(none)} |" in printed


def test_model_options_are_read_as_json_or_text():
    assert suite_runner.model_option("grounding=false") == ("grounding", False)
    assert suite_runner.model_option("n_threads=2") == ("n_threads", 2)
    assert suite_runner.model_option("model=qwen") == ("model", "qwen")
    with pytest.raises(Exception, match="NAME=VALUE"):
        suite_runner.model_option("grounding")


def test_the_runner_answers_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        suite_runner.main(["--help"])
    assert exit_info.value.code == 0
    assert "usage: python -m bench.suites" in capsys.readouterr().out
