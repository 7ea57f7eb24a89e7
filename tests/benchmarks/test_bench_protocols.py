"""bench/protocols.py: the protocols' calls and prompt sizes, and parallel calls' wall time, on a small run."""

from __future__ import annotations

import pytest


def test_protocols_benchmark_counts_calls_and_shows_parallel_calls_save_wall_time() -> None:
    pytest.importorskip("langchain_openai")
    from bench import protocols

    results = protocols.run(latency=0.2, repeats=1)
    calls = {key: {row["task"]: row["llm_calls"] for row in rows} for key, rows in results["calls"].items()}
    assert calls["text"] == {"one": 2, "three": 4, "chain": 3}
    assert calls["text_parallel"]["three"] == calls["native"]["three"] == 2
    assert all(row["correct"] for rows in results["calls"].values() for row in rows)
    wall = results["wall"]
    for mode in ("run", "arun"):
        assert wall[f"native/{mode}"]["median_s"] < 0.7 * wall[f"text/{mode}"]["median_s"]
        assert wall[f"text_parallel/{mode}"]["median_s"] < 0.7 * wall[f"native_sequential/{mode}"]["median_s"]
    page = protocols.markdown({"results": results})
    assert "max_parallel_calls=3" in page and "| native (every call of a reply) |" in page


def test_protocols_benchmark_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import protocols

    with pytest.raises(SystemExit) as exit_info:
        protocols.main(["--help"])
    assert exit_info.value.code == 0 and "usage: python -m bench.protocols" in capsys.readouterr().out
