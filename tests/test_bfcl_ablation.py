"""bench.bfcl's simulated ablation rows (no model): abstaining on an unrelated question."""

from __future__ import annotations

import importlib.util

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
