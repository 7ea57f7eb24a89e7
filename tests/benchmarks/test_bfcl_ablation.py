"""bench.bfcl's simulated ablation rows (no model): abstaining on an unrelated question, optional enums, the
argument-value corrections; the held-out slice (``--offset``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None,
                                reason="install the bench extra and bfcl-eval (bench/README.md)")


def test_simulate_unrelated_finishes_only_where_no_tool_shares_a_word() -> None:
    from bench._bfcl_data import BfclCase
    from bench.bfcl import simulate_unrelated

    bmi = {"name": "determine_body_mass_index", "description": "Calculate body mass index given weight and height.",
           "parameters": {"type": "dict", "properties": {"weight": {"type": "float"}}, "required": ["weight"]}}
    cases = {
        "irrelevance_0": BfclCase("irrelevance_0", "irrelevance", "Area of a triangle with base 10?", [bmi], None,
                                  expects_call=False),
        "simple_1": BfclCase("simple_1", "simple_python", "Body mass index for a weight of 80?", [bmi],
                             [{"determine_body_mass_index": {"weight": [80]}}]),
    }
    records = [
        {"id": "irrelevance_0", "variant": "v", "kind": "call", "name": "determine_body_mass_index",
         "args": {"weight": 10}, "correct": False, "why": "call instead of no call", "techniques": {}},
        {"id": "simple_1", "variant": "v", "kind": "call", "name": "determine_body_mass_index",
         "args": {"weight": 80}, "correct": True, "why": "", "techniques": {}},
        {"id": "simple_1", "variant": "other", "kind": "finish", "correct": False, "why": "", "techniques": {}},
    ]
    irrelevant, simple = simulate_unrelated(records, cases, "v")
    assert irrelevant["kind"] == "finish" and irrelevant["correct"] is True and irrelevant["simulated"]
    assert irrelevant["variant"] == "v+unrelated" and irrelevant["techniques"]["abstain_unrelated"] is True
    assert simple["kind"] == "call" and simple["correct"] is True  # a related question keeps its decision


def test_simulate_fill_adds_the_named_optional_enum() -> None:
    from bench._bfcl_data import BfclCase
    from bench.bfcl import simulate_fill

    props = {"location": {"type": "string"},
             "diet": {"type": "array", "items": {"type": "string", "enum": ["vegan", "halal"]}}}
    doc = {"name": "find_restaurants", "description": "Find restaurants.",
           "parameters": {"type": "dict", "properties": props, "required": ["location"]}}
    case = BfclCase("simple_9", "simple_python", "Restaurants in Manhattan with a vegan menu", [doc],
                    [{"find_restaurants": {"location": ["Manhattan"], "diet": [["vegan"]]}}])
    record = {"id": "simple_9", "variant": "v", "kind": "call", "name": "find_restaurants",
              "args": {"location": "Manhattan"}, "correct": False, "why": "missing_optional", "techniques": {}}
    [filled] = simulate_fill([record], {"simple_9": case}, "v")
    assert filled["args"] == {"location": "Manhattan", "diet": ["vegan"]} and filled["correct"] is True
    assert filled["variant"] == "v+fill" and filled["simulated"]


def test_simulate_values_applies_the_pure_corrections() -> None:
    from bench._bfcl_data import BfclCase
    from bench.bfcl import simulate_values

    props = {"deposit": {"type": "integer"}, "annual_interest_rate": {"type": "float"}, "years": {"type": "integer"}}
    doc = {"name": "calculate_roi", "description": "Return of investment.",
           "parameters": {"type": "dict", "properties": props, "required": list(props)}}
    case = BfclCase("simple_150", "simple_python", "A deposit of $1000, annual interest rate of 3% for 1 year.",
                    [doc], [{"calculate_roi": {"deposit": [1000], "annual_interest_rate": [0.03], "years": [1]}}])
    record = {"id": "simple_150", "variant": "v", "kind": "call", "name": "calculate_roi",
              "args": {"deposit": 1000, "annual_interest_rate": 3.0, "years": 1000}, "correct": False,
              "why": "value_error:others", "techniques": {}}
    [fixed] = simulate_values([record], {"simple_150": case}, "v", ["anchor_numbers", "percent_rates"])
    assert fixed["args"] == {"deposit": 1000, "annual_interest_rate": 0.03, "years": 1} and fixed["correct"] is True
    assert fixed["variant"] == "v+anchor_numbers+percent_rates" and fixed["techniques"]["percent_rates"] is True
    [half] = simulate_values([record], {"simple_150": case}, "v", ["percent_rates"])
    assert half["correct"] is False  # years is still the deposit's 1000


def test_offset_picks_a_held_out_slice(tmp_path: Path) -> None:
    from bench._bfcl_data import load_category

    rows = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"q{i}"}]], "function": []}
            for i in range(20)]
    answers = [{"id": r["id"], "ground_truth": []} for r in rows]
    (tmp_path / "possible_answer").mkdir()
    path = tmp_path / "BFCL_v4_simple_python.json"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    (tmp_path / "possible_answer" / path.name).write_text("\n".join(json.dumps(a) for a in answers), encoding="utf-8")
    first = [c.id for c in load_category(path, limit=5)]
    held = [c.id for c in load_category(path, limit=5, offset=2)]
    assert first == [f"simple_python_{i}" for i in (0, 4, 8, 12, 16)]
    assert held == [f"simple_python_{i}" for i in (2, 6, 10, 14, 18)] and not set(first) & set(held)


def test_drop_runs_the_model_only_where_the_technique_can_act(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--drop VARIANT=commit_named`` copies VARIANT's record where the question names no function, and runs
    the model (here a stand-in that records its cases) only where it does."""
    from bench import bfcl

    room = {"name": "book_room", "description": "Book a hotel room.",
            "parameters": {"type": "dict", "properties": {"hotel": {"type": "string"}}, "required": ["hotel"]}}
    rows = [{"id": "simple_python_0", "question": [[{"role": "user", "content": "Book a room at the Plaza"}]],
             "function": [room]},
            {"id": "simple_python_1", "question": [[{"role": "user", "content": "Capital of France?"}]],
             "function": [room]}]
    (tmp_path / "possible_answer").mkdir()
    path = tmp_path / "BFCL_v4_simple_python.json"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    answers = [{"id": "simple_python_0", "ground_truth": [{"book_room": {"hotel": ["the Plaza"]}}]},
               {"id": "simple_python_1", "ground_truth": [{"book_room": {"hotel": ["x"]}}]}]
    (tmp_path / "possible_answer" / path.name).write_text("\n".join(json.dumps(a) for a in answers), encoding="utf-8")
    base = bfcl.parse_variant(f"full=en-compact:none:{','.join(bfcl.TECHNIQUE_FLAGS)}")
    dropped, technique, name = bfcl.parse_drop("full=commit_named", [base])
    assert dropped[0] == "full-commit_named" and dropped[3]["commit_named"] is False and name == "full"
    assert technique == "commit_named"
    with pytest.raises(SystemExit, match="--drop"):
        bfcl.parse_drop("full=no_such_technique", [base])
    records = tmp_path / "records.jsonl"
    kept = {"kind": "call", "name": "book_room", "args": {"hotel": "the Plaza"}, "correct": True, "why": ""}
    records.write_text("\n".join(json.dumps({"id": f"simple_python_{i}", "category": "simple_python",
                                             "variant": "full", "techniques": base[3], **kept}) for i in (0, 1)),
                       encoding="utf-8")
    ran: list[str] = []
    monkeypatch.setattr(bfcl, "local_model", lambda *a, **k: object())
    monkeypatch.setattr(bfcl, "decide_react_agent", lambda llm, case, tools, prompts: (
        ran.append(case.id) or {"kind": "finish", "raw": ""}))
    out = bfcl.run_ablation(files=[(path, None)], limit=None, variants=[base, dropped], records_path=records,
                            progress=False, copied={"full-commit_named": ("full", "commit_named")})
    assert ran == ["simple_python_0"]  # "Book a room" names book_room; the other question names nothing
    new = {r["id"]: r for r in out if r["variant"] == "full-commit_named"}
    assert new["simple_python_0"]["kind"] == "finish" and not new["simple_python_0"].get("copied")
    assert new["simple_python_1"]["copied"] is True and new["simple_python_1"]["name"] == "book_room"
    assert len(bfcl.read_records(records)) == 4  # the seed file's last line had no newline: not glued to the next
    with records.open("a", encoding="utf-8") as cut:
        cut.write('{"id": "simple_python_1", "variant": "x", "kin')  # a crash mid-write
    assert len(bfcl.read_records(records)) == 4
    assert len(bfcl.run_ablation(files=[(path, None)], limit=None, variants=[base, dropped], records_path=records,
                                 progress=False, copied={"full-commit_named": ("full", "commit_named")})) == 4
    assert ran == ["simple_python_0"] and len(bfcl.read_records(records)) == 4  # nothing run twice


def test_the_benchmarks_headline_gives_every_slice_and_their_sum() -> None:
    from bench.run_all import bfcl_headline

    def entry(variant: str, simple: int, irrelevance: int) -> dict[str, object]:
        return {"variant": variant, "categories": {
            "simple_python": {"correct": simple, "n": 40, "accuracy": simple / 40},
            "irrelevance": {"correct": irrelevance, "n": 40, "accuracy": irrelevance / 40},
            "all": {"correct": simple + irrelevance, "n": 80, "accuracy": (simple + irrelevance) / 80}}}

    lines = bfcl_headline([entry("s7-final0", 26, 30), entry("other", 1, 1), entry("s7-final5", 20, 34)])
    assert "over 2 slices of 40 cases, simple_python 46/80 (57.5 %), irrelevance 64/80 (80.0 %)" in lines[0]
    assert lines[1].startswith("  - the default slice (offset 0): simple_python 26/40 (65 %)")
    assert lines[2].startswith("  - slice 5 (simple_python and irrelevance") and len(lines) == 3
    assert bfcl_headline([entry("other", 1, 1)]) == []
    held = bfcl_headline([entry("s7-final0", 26, 30), entry("s7-final8", 31, 0), entry("s7-final9", 27, 0)])
    assert "over 3 slices of 40 cases, simple_python 84/120 (70.0 %)" in held[0]
    assert held[1] == "  - held out (2 slices): simple_python 58/80 (72.5 %), irrelevance 0/80 (0.0 %)"
    assert held[4].startswith("  - slice 9 (simple_python; held out likewise)") and len(held) == 5


def test_a_rerecorded_variant_replaces_its_row_even_after_a_flag_was_added(tmp_path: Path) -> None:
    from bench.bfcl import record_ablation

    results = {"model": "m", "seconds": 1.0, "categories": {}, "records": [],
               "model_settings": {"two_stage": True, "grounding": False}}
    config = {"lang": "en-compact", "examples": "generated", "limit": 40, "variant": "final"}
    record_ablation(config, results, out_dir=tmp_path)
    later = {**results, "model_settings": {"two_stage": True, "grounding": False, "whole_names": False}}
    path = record_ablation(config, later, out_dir=tmp_path)
    assert [r["variant"] for r in json.loads(path.read_text(encoding="utf-8"))["ablation"]] == ["final"]
    other = {**results, "model_settings": {"two_stage": True, "grounding": True}}
    path = record_ablation(config, other, out_dir=tmp_path)
    assert len(json.loads(path.read_text(encoding="utf-8"))["ablation"]) == 2  # other techniques: another row
