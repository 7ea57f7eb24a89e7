"""Smoke runs of the benchmarks in bench/ on 2 or 3 cases each, so they do not rot.

Not performance tests: they check that each benchmark runs end to end on scripted models and
produces its result, table and page. The peers (langchain-classic, llama-index-core, smolagents,
bfcl-eval) come from the ``bench`` extra; a test skips with the install hint when one is missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("bench", reason="the bench/ folder is not in this source tree")

HINT = "install the bench extra: pip install -e '.[bench]' && pip install --no-deps bfcl-eval (bench/README.md)"


def need(module: str) -> None:
    pytest.importorskip(module, reason=f"{module} is not installed; {HINT}")


CORPUS = '''
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    expected: dict[str, Any] | None
    source: str
    tool_names: tuple[str, ...] | None = None
    reason: str | None = None


CASES = [
    Case("json", '{"thought": "t", "action": "search", "action_input": {"q": "x"}}',
         {"action": "search", "action_input": {"q": "x"}}, "react_agent: smoke"),
    Case("text_final", "Thought: done\\nFinal Answer: 4", {"action": "FINISH", "action_input": "4"},
         "langchain: smoke"),
    Case("cut", '{"action": "search", "action_input": {"q": "x', None, "react_agent: smoke"),
]
'''


@pytest.mark.parametrize("name", ["bfcl", "parsers", "overhead", "prompt_size", "model_calls", "concurrency",
                                  "run_all"])
def test_every_benchmark_has_help(name, capsys):
    """Each benchmark command answers --help and exits 0."""
    module = pytest.importorskip(f"bench.{name}")
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0
    assert "usage: python -m bench." in capsys.readouterr().out


def test_parsers_scores_a_small_corpus(tmp_path):
    """The parser benchmark classifies each case per parser; react_agent gets all three right."""
    need("langchain_classic")
    from bench import parsers

    corpus = tmp_path / "corpus.py"
    corpus.write_text(CORPUS, encoding="utf-8")
    results = parsers.run(corpus=corpus)

    assert results["cases"] == 3 and results["must_refuse"] == 1
    assert results["parsers"]["react_agent"]["counts"]["correct"] == 3
    json_parser = results["parsers"]["langchain_json"]["cases"]
    assert json_parser["json"]["outcome"] == "correct"
    assert json_parser["text_final"]["outcome"] == "refused"
    assert "react_agent `parse_response`" in parsers.markdown({"results": results})


def test_overhead_reports_ratio_and_own_overhead():
    """The overhead benchmark times react_agent, AgentExecutor and LangGraph, and splits off the model and tool
    time."""
    need("langchain_classic")
    from bench import overhead

    results = overhead.run(repeats=2)

    assert results["steps_per_run"] == 11
    assert results["ratio_react_to_langchain"] > 0
    breakdown = results["breakdown_median_s_per_step"]["react_agent"]
    assert breakdown["model_s"] > 0 and breakdown["tool_s"] > 0
    assert results["ratio_react_to_langgraph"] > 0 and results["ratio_built_per_run_to_langgraph"] > 0
    assert "LangChain's `AgentExecutor`" in overhead.markdown({"results": results})


def test_prompt_size_langchain_scratchpad_grows():
    """Over a 3-step run LangChain's prompt grows with the scratchpad; react_agent's window stays smaller."""
    need("langchain_classic")
    from bench import prompt_size

    results = prompt_size.run(steps=3, tokenizer_name="regex")

    tokens = results["tokens_per_step"]
    assert len(tokens["langchain_json_chat"]) == 3
    assert tokens["langchain_json_chat"][2] > tokens["langchain_json_chat"][0]
    assert results["total_tokens"]["react_agent_window_3"] < results["total_tokens"]["langchain_json_chat"]


def test_model_calls_counts_the_final_answer_call():
    """With the scripted oracle, final_answer="always" costs exactly one call more per task than "never"."""
    from bench import model_calls

    results = model_calls.run(lang="en", only=["react_never", "react_always"])

    never = [t["llm_calls"] for t in results["scripted"]["react_never"]["tasks"]]
    always = [t["llm_calls"] for t in results["scripted"]["react_always"]["tasks"]]
    assert never == [2, 3, 3]
    assert always == [n + 1 for n in never]
    assert all(t["users_ok"] for t in results["scripted"]["react_never"]["tasks"])


def test_bfcl_scores_ideal_answers_right(tmp_path):
    """On 2 cases per category an ideal stand-in model is scored right under all three protocols."""
    need("bfcl_eval")
    need("langchain_classic")
    from bench import bfcl

    results = bfcl.run(files=bfcl.category_files(list(bfcl.DEFAULT_CATEGORIES)), limit=2,
                       protocols=list(bfcl.DEFAULT_PROTOCOLS), model="scripted", progress=False)

    for protocol, summary in results["categories"]["all"].items():
        assert (summary["correct"], summary["n"]) == (6, 6), protocol
    assert results["categories"]["irrelevance"]["seed"]["finish"] == 2


def test_bfcl_parallel_categories_take_several_calls_in_one_decision_in_any_order():
    """On the parallel categories the agent may make several calls at once; an ideal stand-in writing them is
    right, and a reply with one call too few, or the same call for two answers, is not."""
    need("bfcl_eval")
    from bench import _bfcl_data, bfcl

    results = bfcl.run(files=bfcl.category_files(["parallel", "parallel_multiple"]), limit=3,
                       protocols=["react_agent"], model="scripted", progress=False)
    assert (results["categories"]["all"]["react_agent"]["correct"], results["categories"]["all"]["react_agent"]["n"]) \
        == (6, 6)
    [(path, answers)] = bfcl.category_files(["parallel_multiple"])
    case = _bfcl_data.load_category(path, answers, limit=1)[0]
    docs = {f["name"]: f for f in case.functions}
    calls = [{"name": name, "args": args}
             for name, args in (_bfcl_data.ideal_args(t, docs[next(iter(t))]) for t in case.ground_truth)]
    assert _bfcl_data.score(case, {"kind": "call", "calls": calls[::-1]}) == (True, "")
    assert _bfcl_data.score(case, {"kind": "call", "calls": calls[:-1]}) == (False, "wrong_count")
    assert _bfcl_data.score(case, {"kind": "call", "calls": [calls[0], *calls[:-1]]}) == (False, "no_match")


def test_bfcl_loader_accepts_any_category_file(tmp_path):
    """A category file and answers given by path are loaded and scored without code changes."""
    need("bfcl_eval")
    from bench import _bfcl_data

    case = {"id": "custom_0", "question": [[{"role": "user", "content": "Add 2 and 3."}]],
            "function": [{"name": "add", "description": "Add two numbers.", "parameters": {
                "type": "dict", "properties": {"a": {"type": "integer", "description": "first"},
                                               "b": {"type": "float", "description": "second"}},
                "required": ["a", "b"]}}]}
    (tmp_path / "BFCL_v4_custom.json").write_text(json.dumps(case) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"id": "custom_0", "ground_truth": [{"add": {"a": [2], "b": [3.0]}}]}) + "\n",
                       encoding="utf-8")

    [loaded] = _bfcl_data.load_category(tmp_path / "BFCL_v4_custom.json", answers)

    assert loaded.category == "custom" and loaded.question == "Add 2 and 3."
    assert _bfcl_data.score(loaded, {"kind": "call", "name": "add", "args": {"a": 2, "b": 3}}) == (True, "")
    assert _bfcl_data.score(loaded, {"kind": "call", "name": "add", "args": {"a": 2}})[0] is False
    assert _bfcl_data.score(loaded, {"kind": "finish"})[0] is False


def test_run_all_writes_the_page_from_results(tmp_path):
    """run_all renders the page (machine, versions, sections) from the JSON results it finds."""
    from bench import _common, model_calls, run_all

    results = model_calls.run(lang="en", only=["react_never"])
    _common.write_result("model_calls", {"lang": "en"}, results, out_dir=tmp_path)

    page = run_all.write_doc(tmp_path / "benchmarks.md", results_dir=tmp_path).read_text(encoding="utf-8")

    assert "python -m bench.run_all" in page
    assert _common.machine()["cpu"] in page
    assert "## 5. Model calls per task" in page
    assert "Not run yet: `python -m bench.bfcl`" in page


def test_the_headline_shows_the_default_models_bfcl_run_and_how_much_of_each_file_it_covers():
    from bench import run_all

    def summary(correct, n):
        return {"n": n, "correct": correct, "accuracy": correct / n}

    older = {"variant": "default", "model": "old", "date": "2026-12-01T10:00:00+00:00",
             "cases_in_file": {"irrelevance": 240},
             "categories": {"multiple": summary(1, 2), "irrelevance": summary(120, 240)}}
    newest = {"variant": "default", "model": "qwen2.5-coder-1.5b", "date": "2026-12-03T11:00:00+00:00",
              "cases_in_file": {"multiple": 200, "simple_python": 400},
              "categories": {"multiple": summary(180, 200), "simple_python": summary(90, 100),
                             "all": summary(270, 300)}}
    rows = run_all.bfcl_default_rows([older, {"variant": "other", "categories": {}}, newest])
    assert rows == [  # each category from the newest run that covers it, in the targets' order
        ["BFCL `simple_python`, first decision, default model `qwen2.5-coder-1.5b`", "90/100 (90.0 %)",
         "the file's first 100 of 400 cases, 2026-12-03", ">= 75 %"],
        ["BFCL `multiple`, first decision, default model `qwen2.5-coder-1.5b`", "180/200 (90.0 %)",
         "the whole file, 2026-12-03", ">= 70 %"],
        ["BFCL `irrelevance`, first decision, default model `old`", "120/240 (50.0 %)",
         "the whole file, 2026-12-01", ">= 75 %"]]
    assert run_all.bfcl_default_rows([{"variant": "s7-final0", "categories": {}}]) == []


def test_a_recorded_run_keeps_its_model_date_and_the_size_of_each_file(tmp_path):
    import json

    from bench import bfcl

    def record(i, correct):
        return {"id": f"multiple_{i}", "category": "multiple", "variant": "default", "prompts": "en-compact",
                "examples": "generated", "techniques": {"two_stage": True}, "protocol": "react_agent",
                "kind": "call", "name": "f", "args": {}, "correct": correct, "why": "", "raw": "", "seconds": 1.0}

    path = bfcl.record_ablation_records([record(0, True), record(1, False)], limit=None,
                                        model="qwen2.5-coder-1.5b", out_dir=tmp_path, sizes={"multiple": 200})
    entry = json.loads(path.read_text(encoding="utf-8"))["ablation"][-1]
    assert entry["model"] == "qwen2.5-coder-1.5b" and entry["cases_in_file"] == {"multiple": 200}
    assert entry["date"][:4].isdigit() and entry["limit"] is None
    assert (entry["categories"]["multiple"]["correct"], entry["categories"]["multiple"]["n"]) == (1, 2)


@pytest.mark.local_model
def test_bfcl_runs_one_case_on_the_local_model():
    """One BFCL case through the embedded local model under react_agent's protocol gives a decision."""
    pytest.importorskip("llama_cpp", reason="the local model needs the 'local' extra: pip install 'react-agent[local]'")
    need("bfcl_eval")
    need("langchain_classic")
    from bench import bfcl

    results = bfcl.run(files=bfcl.category_files(["simple_python"]), limit=1, protocols=["react_agent"],
                       progress=False)

    [record] = results["records"]
    assert record["kind"] in ("call", "finish")  # constrained decoding: never unparseable


def test_concurrency_benchmark_reports_runs_per_second_for_both():
    """The concurrency benchmark runs both frameworks concurrently and reports runs per second and the ratio."""
    need("langchain_classic")
    from bench import concurrency

    results = concurrency.run(sizes=(5,), repeats=1)
    row = results["sizes"]["5"]
    assert row["react_agent_runs_per_s"] > 0 and row["langchain_runs_per_s"] > 0 and row["ratio"] > 0
    assert row["public_calls_runs_per_s"] > 0 and row["floor_ratio"] > 0  # the public-call floor beside them
    assert "runs/s" in concurrency.markdown({"results": results})
    assert "public-call floor" in concurrency.markdown({"results": results})
