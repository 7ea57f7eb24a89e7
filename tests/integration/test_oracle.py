"""The oracle (``python -m bench.bfcl --oracle``): correct calls come out of the post-decoding steps unchanged, on
every BFCL development category and on a suite given through ``bench.suites.oracle_cases``. No model needed."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from bench import oracle
from bench.bfcl import main

pytest.importorskip("bfcl_eval")


@pytest.mark.parametrize("category", oracle.DEVELOPMENT_CATEGORIES)
def test_at_least_99_percent_of_correct_calls_are_preserved(category: str) -> None:
    from bench._bfcl_data import data_dir

    cases = oracle.bfcl_cases(data_dir() / f"BFCL_v4_{category}.json")
    assert len(cases) >= 50
    lost = oracle.changed(cases)
    assert len(lost) <= 0.01 * len(cases), lost


def test_the_command_prints_one_line_per_category(capsys: pytest.CaptureFixture[str]) -> None:
    from bench._bfcl_data import data_dir

    files = [str(data_dir() / f"BFCL_v4_{name}.json") for name in ("simple_javascript", "irrelevance")]
    assert main(["--oracle", "--category-file", files[0], "--category-file", files[1]]) == 0
    assert capsys.readouterr().out.splitlines() == ["simple_javascript | oracle | preserved 50/50",
                                                     "irrelevance | oracle | preserved 240/240"]


def test_reserved_categories_are_refused(tmp_path: Any) -> None:
    reserved = tmp_path / "BFCL_v4_live_simple.json"
    reserved.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit, match="development categories only"):
        oracle.bfcl_cases(reserved)


def test_a_suite_is_read_through_oracle_cases(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"name": "create_deal", "description": "Create a deal in the CRM.", "parameters": {
        "type": "object", "properties": {"company": {"type": "string"}, "amount": {"type": "integer"},
                                         "tags": {"type": "array", "items": {"type": "string"}}}}}
    cases = {"ru": [("Создай сделку с «Ромашкой» на пятнадцать тысяч", [spec],
                     {"tool": "create_deal", "arguments": {"company": "Ромашка", "amount": 15000}}),
                    ("Привет!", [spec], None)],
             "en": [("Deal with Acme for 12% of 5000, tag it hot and hot", [spec],
                     {"tool": "create_deal", "arguments": {"company": "Acme", "amount": 600, "tags": ["hot", "hot"]}})]}
    suites = types.ModuleType("bench.suites")
    suites.oracle_cases = lambda lang: iter(cases[lang])  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.suites", suites)
    assert main(["--oracle", "--suite", "ru", "--suite", "en"]) == 0
    assert capsys.readouterr().out.splitlines() == ["suite_ru | oracle | preserved 2/2",
                                                     "suite_en | oracle | preserved 1/1"]


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_projects_suites_are_preserved(lang: str) -> None:
    cases = oracle.suite_cases(lang)
    assert len(cases) >= 40 and oracle.changed(cases) == []
