"""The serve benchmark runs both servers (real uvicorn processes on loopback) and reports what it says."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def test_serve_benchmark_reports_requests_per_second_and_latency_for_both() -> None:
    from bench import serve

    results = serve.run(n=5, repeats=1)
    for side in ("serve", "plain"):
        assert results[side]["requests_per_s"] > 0
        assert serve.LATENCY * serve.CALLS <= results[side]["p50_s"] <= results[side]["p95_s"]
    assert results["ratio_requests_per_s"] > 0
    text = serve.markdown({"results": results})
    assert "requests/s" in text and "p95 latency" in text
