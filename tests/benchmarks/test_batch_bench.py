"""Smoke test of bench/batch.py on a tiny workload: every run completes and the result file has the figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("langchain_classic")


def test_batch_benchmark_quick_run_writes_its_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench import batch

    assert batch.main(["--quick", "--out-dir", str(tmp_path), "--no-plot"]) == 0
    results = json.loads((tmp_path / "batch.json").read_text())["results"]
    assert results["ideal_s"] == pytest.approx(20 * 3 * 0.01 / 10)
    for key in ("public_calls", "react_agent", "react_agent_journaled", "langchain"):
        assert results[key]["seconds"] > results["ideal_s"] * 0.9
    assert results["react_agent"]["llm_calls"] == 60  # 3 calls per task: no observation lost from a prompt
    assert results["memory"]["tasks_2x"] == 40 and results["memory"]["peak_mib"] > 0
    out = capsys.readouterr().out
    assert "LangChain AgentExecutor.abatch" in out and "public ainvoke" in out
