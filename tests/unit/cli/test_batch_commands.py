"""The ``react-agent batch`` and ``eval`` commands: in-process with a scripted model, and once as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from batch_cli import SCRIPT, run_cli, write
from conftest import finish

from react_agent.cli import CliError


def test_batch_command_runs_tasks_and_prints_a_summary(tmp_path: Path) -> None:
    tasks, script = write(tmp_path)
    out = tmp_path / "results.jsonl"
    code, stdout, stderr = run_cli(["batch", str(tasks), "--out", str(out), "--model", f"scripted:{script}",
                                    "--concurrency", "1", "--lang", "en"])
    assert code == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in results] == ["calc", "ivan", "olga"]
    assert [r["status"] for r in results] == ["finished"] * 3 and results[0]["output"] == "17 * 23 = 391"
    assert [r["passed"] for r in results] == [True, True, None]
    assert "[1/3] calc: finished, 2 model calls" in stderr and "[3/3] olga" in stderr  # plain lines off a TTY
    assert "tasks          3" in stdout and "checks passed  2/2" in stdout
    assert "model calls    6 (2.00 per task)" in stdout
    assert (tmp_path / "results.jsonl.journal" / "calc.jsonl").exists()
    assert (tmp_path / "results.jsonl.db").exists()  # the demo tools' database next to the results
    # the same command again: nothing to do, the summary counts the earlier results
    code, stdout, stderr = run_cli(["batch", str(tasks), "--out", str(out), "--model", f"scripted:{script}",
                                    "--lang", "en"])
    assert code == 0 and stderr == "" and "3 (3 from an earlier run)" in stdout
    assert len(out.read_text().splitlines()) == 3


def test_batch_command_reports_failed_tasks_with_exit_1(tmp_path: Path) -> None:
    tasks, script = write(tmp_path, script=[finish("about 400"), *SCRIPT[2:]])
    code, stdout, stderr = run_cli(["batch", str(tasks), "--out", str(tmp_path / "r.jsonl"), "--model",
                                    f"scripted:{script}", "--concurrency", "1"])
    assert code == 1
    assert "calc: check failed" in stderr and "failed         1" in stdout and "checks passed  1/2" in stdout


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    tasks, script = write(tmp_path)
    code, _, stderr = run_cli(["batch", str(tasks), "--out", str(tmp_path / "r.jsonl"), "--model",
                               f"scripted:{script}", "--concurrency", "1"], tty=True)
    assert code == 0 and "3/3" in stderr and "failed 0" in stderr and "tokens" in stderr and "ETA" in stderr


def test_usage_errors_name_the_fix(tmp_path: Path) -> None:
    tasks, script = write(tmp_path)
    with pytest.raises(CliError, match="tasks file not found"):
        run_cli(["batch", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "r.jsonl")])
    with pytest.raises(CliError, match="--model must be"):
        run_cli(["batch", str(tasks), "--out", str(tmp_path / "r.jsonl"), "--model", "gpt4"])
    (tmp_path / "bad.json").write_text('{"not": "a list"}')
    with pytest.raises(CliError, match="JSON list of replies"):
        run_cli(["batch", str(tasks), "--out", str(tmp_path / "r.jsonl"), "--model", f"scripted:{tmp_path}/bad.json"])
    with pytest.raises(CliError, match="need --backend ray"):
        run_cli(["batch", str(tasks), "--out", str(tmp_path / "r.jsonl"), "--model", f"scripted:{script}",
                 "--workers", "2"])
    with pytest.raises(CliError, match="--variant must be"):
        run_cli(["eval", str(tasks), "--variant", "react:de", "--model", f"scripted:{script}"])
    with pytest.raises(CliError, match="shipped suites"):
        run_cli(["eval", "no_such_suite", "--model", f"scripted:{script}"])
    (tmp_path / "latin1.jsonl").write_bytes('"fine"\n"caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(CliError, match=r"line 2: not UTF-8 text") as info:
        run_cli(["batch", str(tmp_path / "latin1.jsonl"), "--out", str(tmp_path / "r.jsonl"), "--model",
                 f"scripted:{script}"])
    assert info.value.code == 2


def test_eval_command_prints_a_side_by_side_table_and_draws_a_plot(tmp_path: Path) -> None:
    tasks, script = write(tmp_path)
    code, stdout, stderr = run_cli(["eval", str(tasks), "--variant", "react", "--variant", "reflection:en",
                                    "--model", f"scripted:{script}", "--concurrency", "1",
                                    "--out-dir", str(tmp_path / "eval"), "--allow-failures"])
    assert code == 0
    rows = [line for line in stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| variant") and "95% CI" in rows[0]
    assert rows[1].startswith("| react-en ") and "3/3 (100%)" in rows[1] and "44%–100%" in rows[1]
    assert rows[2].startswith("| reflection-en ") and "2.00" in rows[2]
    scores = json.loads((tmp_path / "eval" / "scores.json").read_text())
    assert [s["variant"] for s in scores] == ["react-en", "reflection-en"]
    if "no plot" not in stderr:
        assert (tmp_path / "eval" / "eval.png").read_bytes()[:4] == b"\x89PNG"


def test_eval_runs_a_shipped_suite_by_name(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([finish("no idea")] * 20))
    code, stdout, stderr = run_cli(["eval", "seed_ru", "--model", f"scripted:{script}", "--concurrency", "1",
                                    "--out-dir", str(tmp_path / "eval"), "--no-plot"])
    assert code == 1 and "| react-ru " in stdout and "/8 (" in stdout  # ru detected from the suite's text
    assert "--allow-failures" in stderr  # the tasks failed their checks: eval says so in its exit status


def test_batch_command_as_a_process(tmp_path: Path) -> None:
    from react_agent.cli._main import build_parser

    if "batch" not in build_parser().format_help():
        pytest.skip("react-agent batch is not wired into react_agent.cli yet")
    tasks, script = write(tmp_path)
    done = subprocess.run([sys.executable, "-m", "react_agent.cli", "batch", str(tasks), "--out",
                           str(tmp_path / "r.jsonl"), "--model", f"scripted:{script}", "--concurrency", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "checks passed  2/2" in done.stdout and "[3/3] olga: finished" in done.stderr


def test_a_second_batch_on_the_same_out_file_is_refused_with_exit_2(tmp_path: Path) -> None:
    """While one batch holds the results file, a second one on it is a usage error (exit 2), not a bug."""
    from react_agent.batch import ResultsFile

    tasks, script = write(tmp_path)
    out = tmp_path / "r.jsonl"
    with ResultsFile(out), pytest.raises(CliError, match="another batch is writing") as info:
        run_cli(["batch", str(tasks), "--out", str(out), "--model", f"scripted:{script}"])
    assert info.value.code == 2
