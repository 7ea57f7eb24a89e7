"""The react-agent command, run in-process with a scripted model in place of the real one."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from react_agent.cli import _main as cli
from react_agent.testing import ScriptedChatModel

SECRET = "ZmFrZS1naWdhY2hhdC1jcmVkZW50aWFscw=="


def reply(action: str, action_input: Any, thought: str = "") -> str:
    return json.dumps({"thought": thought, "action": action, "action_input": action_input})


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Install a ScriptedChatModel as the CLI's model; returns a function that sets its script."""

    def install(*responses: Any, usage: bool = False) -> ScriptedChatModel:
        llm = ScriptedChatModel(responses=list(responses), usage=usage)
        monkeypatch.setattr(cli, "build_model", lambda args: llm)
        return llm

    return install


@pytest.fixture
def run_args(tmp_path: Path) -> list[str]:
    return ["--db", str(tmp_path / "users.db"), "--root", str(tmp_path)]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# ------------------------------------------------------------------------------ usage errors


@pytest.mark.parametrize(
    ("argv", "mentions"),
    [
        (["run", "task", "--agent", "nope"], "--agent"),
        (["run", "task", "--max-iterations", "0"], "--max-iterations"),
        (["run", "task", "--max-iterations", "many"], "--max-iterations"),
        (["run"], "task"),
        (["demo", "--lang", "de"], "--lang"),
        ([], "run,resume,chat,demo,batch,eval"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv: list[str], mentions: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad or missing argument gives exit status 2 and one error line naming it."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert mentions in one_line(err)
    assert "error" in err


def test_empty_task_is_usage_error(run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A blank task is a usage error (exit 2), not a run."""
    assert cli.main(["run", "   ", *run_args]) == 2
    assert "task must not be empty" in one_line(capsys.readouterr().err)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the package version and exits 0."""
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"react-agent {cli.__version__}"


def test_help_as_module() -> None:
    """`python -m react_agent.cli --help` works and exits 0."""
    proc = subprocess.run([sys.executable, "-m", "react_agent.cli", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage: react-agent" in proc.stdout


# ------------------------------------------------------------------------------ setup errors


def test_missing_gigachat_credentials(monkeypatch: pytest.MonkeyPatch, run_args: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """--model gigachat without credentials: one clear line naming the variable, exit 5, no traceback."""
    for name in ("GIGACHAT_CREDENTIALS", "GIGACHAT_ACCESS_TOKEN", "GIGACHAT_USER", "GIGACHAT_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["run", "hello", "--model", "gigachat", *run_args]) == 5
    captured = capsys.readouterr()
    assert "GIGACHAT_CREDENTIALS" in one_line(captured.err)
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_gigachat_model_built_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """With GIGACHAT_CREDENTIALS set, --model gigachat builds a GigaChat model (no network needed)."""
    monkeypatch.setenv("GIGACHAT_CREDENTIALS", SECRET)
    args = cli.build_parser().parse_args(["run", "x", "--model", "gigachat"])
    assert type(cli.build_model(args)).__name__ == "GigaChat"


def test_missing_model_file(tmp_path: Path, run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--model-path to a file that does not exist: one clear line naming it, non-zero exit."""
    missing = tmp_path / "nope.gguf"
    assert cli.main(["run", "hello", "--model-path", str(missing), *run_args]) == 3
    captured = capsys.readouterr()
    assert f"model file not found: {missing}" in one_line(captured.err)
    assert "Traceback" not in captured.err


def test_missing_root_is_usage_error(tmp_path: Path, scripted: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """--root that does not exist: one line, exit 2."""
    scripted()
    argv = ["run", "hello", "--db", str(tmp_path / "u.db"), "--root", str(tmp_path / "absent")]
    assert cli.main(argv) == 2
    assert "--root" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize(("option", "says"), [("=3", "write KEY=VALUE"), ("temperature=0", "takes no model options")])
def test_model_options_a_scripted_model_cannot_take_are_a_usage_error(
        option: str, says: str, tmp_path: Path, run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([reply("FINISH", "hi")]), encoding="utf-8")
    assert cli.main(["run", "hello", "--model", f"scripted:{script}", "-o", option, *run_args]) == 2
    assert says in one_line(capsys.readouterr().err)


def test_a_replies_file_with_a_byte_order_mark_is_read(tmp_path: Path, run_args: list[str],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "replies.json"
    script.write_bytes(b"\xef\xbb\xbf" + json.dumps([reply("FINISH", "привет")]).encode())
    assert cli.main(["run", "hello", "--model", f"scripted:{script}", *run_args]) == 0
    assert capsys.readouterr().out.strip() == "привет"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc, a folder no file can be made in")
def test_a_journal_that_cannot_be_written_is_a_usage_error_before_the_run(
        scripted: Any, run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    llm = scripted(reply("FINISH", "hi"))
    assert cli.main(["run", "hello", "--journal", "/proc/self/journal.jsonl", *run_args]) == 2
    err = capsys.readouterr().err
    assert "cannot write it" in one_line(err) and "internal error" not in err and "resume" not in err
    assert llm.calls == []


def test_a_run_that_fails_to_set_up_leaves_no_journal_file_behind_and_an_old_one_unchanged(
        scripted: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llm = scripted(reply("FINISH", "hi"))
    journal, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    old.write_text('{"kept": true}\n', encoding="utf-8")
    for path in (journal, old):
        code = cli.main(["run", "hello", "--journal", str(path), "--tools", "no_such_module_here:tools"])
        assert code == 7 and "no_such_module_here" in capsys.readouterr().err  # EXIT_TOOLS
    assert not journal.exists() and old.read_text(encoding="utf-8") == '{"kept": true}\n'
    assert llm.calls == []


# ------------------------------------------------------------------------------ running


def test_run_shows_steps_and_prints_answer(scripted: Any, run_args: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A run shows thought, action, input and observation on stderr and the answer alone on stdout."""
    scripted(reply("calculator", {"expression": "2+3"}, "I need to add"), reply("FINISH", "The sum is 5"),
             usage=True)
    assert cli.main(["run", "What is 2+3?", *run_args]) == 0
    captured = capsys.readouterr()
    assert captured.out == "The sum is 5\n"
    for expected in ("Step 1", "Thought: I need to add", "Action: calculator", 'Input: {"expression": "2+3"}',
                     "Observation: 5", "tokens", "finished: 2 steps, 2 model calls"):
        assert expected in captured.err
    assert "\033[" not in captured.err  # no colours when stderr is not a terminal


def test_run_not_finished_exits_1(scripted: Any, run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A run that hits the iteration limit exits 1 and says so."""
    scripted(reply("calculator", {"expression": "1+1"}))
    assert cli.main(["run", "loop", "--max-iterations", "1", *run_args]) == 1
    assert "max_iterations: 1 steps" in capsys.readouterr().err


def test_russian_task_uses_russian_prompts(scripted: Any, run_args: list[str]) -> None:
    """Without --lang, a task in Cyrillic gets the Russian prompts and tool texts."""
    llm = scripted(reply("FINISH", "готово"))
    assert cli.main(["run", "Сколько будет 2+2?", *run_args]) == 0
    assert "Вычисляет арифметическое выражение" in llm.calls[0].text


def test_trace_is_jsonl_with_required_keys(scripted: Any, tmp_path: Path, run_args: list[str]) -> None:
    """--trace writes one JSON object per step with the step fields, then a result line."""
    scripted(reply("calculator", {"expression": "6*7"}, "multiply"), reply("FINISH", "42"), usage=True)
    trace = tmp_path / "trace.jsonl"
    assert cli.main(["run", "6 times 7?", "--trace", str(trace), *run_args]) == 0
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [r["type"] for r in records] == ["step", "step", "result"]
    step_keys = {"thought", "action", "action_input", "observation", "is_error", "duration_s", "usage", "reflection"}
    for record in records[:2]:
        assert step_keys <= record.keys()
    assert records[0]["action_input"] == {"expression": "6*7"}
    assert records[0]["observation"] == "42"
    result = records[-1]
    assert (result["status"], result["output"], result["llm_calls"]) == ("finished", "42", 2)
    assert result["usage"]["total_tokens"] > 0


def test_trace_keeps_reflections(scripted: Any, tmp_path: Path, run_args: list[str],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """With --agent reflection, the reflection made after a failed step is shown with that step and traced."""
    scripted(
        reply("register_user", {"username": "Ivan", "email": "not-an-email"}),
        "Use a valid address: ivan@test.com",
        reply("register_user", {"username": "Ivan", "email": "ivan@test.com"}),
        reply("FINISH", "Ivan registered"),
    )
    trace = tmp_path / "trace.jsonl"
    assert cli.main(["run", "Register Ivan", "--agent", "reflection", "--trace", str(trace), *run_args]) == 0
    steps = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()][:-1]
    assert [s["reflection"] for s in steps] == ["Use a valid address: ivan@test.com", None, None]
    assert steps[0]["is_error"] is True
    err = capsys.readouterr().err
    assert err.index("Reflection: Use a valid address") < err.index("Step 2")


def test_plan_agent(scripted: Any, run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--agent plan runs a PlanAndExecuteAgent: one planning call, then the plan's tool calls."""
    llm = scripted(json.dumps([{"tool": "calculator", "args": {"expression": "2*21"}, "open": []}]))
    assert cli.main(["run", "What is 2*21?", "--agent", "plan", *run_args]) == 0
    captured = capsys.readouterr()
    assert "Action: calculator" in captured.err
    assert "42" in captured.out
    assert len(llm.calls) == 1


def test_unwritable_trace_is_usage_error(scripted: Any, tmp_path: Path, run_args: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A trace path in a missing folder: one line, exit 2."""
    scripted(reply("FINISH", "x"))
    assert cli.main(["run", "t", "--trace", str(tmp_path / "no" / "t.jsonl"), *run_args]) == 2
    assert "trace file" in one_line(capsys.readouterr().err)


def test_demo_registers_ivan(scripted: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """`demo` runs both seed tasks on a fresh database and reports that Ivan was registered. On the local model
    the compound second task runs as its two parts, one tool each."""
    scripted(
        reply("register_user", {"username": "Ivan", "email": "ivan@test.com"}),
        reply("FINISH", "Ivan is registered"),
        reply("register_user", {"username": "Viacheslav", "email": "Viacheslav@test.com"}),
        reply("FINISH", "Viacheslav registered"),
        reply("search_db", {"username": "Ivan"}),
        reply("FINISH", "Ivan found"),
    )
    assert cli.main(["demo"]) == 0
    captured = capsys.readouterr()
    assert "Part: Register user Viacheslav" in captured.err and "Part: Find user Ivan" in captured.err
    assert "Task 1/2: Register user Ivan with email ivan@test.com" in captured.err
    assert "Observation: User Ivan registered (email ivan@test.com)" in captured.err
    assert "Ivan registered: yes" in captured.out
    assert "Viacheslav registered: yes" in captured.out
    assert "1. finished" in captured.out and "2. finished" in captured.out


def test_demo_reports_ivan_not_registered(scripted: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """When the model never registers Ivan, the demo says so and exits 1; each demo has a fresh database."""
    scripted(reply("FINISH", "done"), reply("FINISH", "done"))
    assert cli.main(["demo"]) == 1
    assert "Ivan registered: no" in capsys.readouterr().out


def test_approval_refused_without_terminal(scripted: Any, monkeypatch: pytest.MonkeyPatch, run_args: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A tool that requires approval is refused when stdin/stderr are not a terminal and --yes is absent."""
    calls: list[str] = []
    monkeypatch.setattr(cli, "make_demo_tools", lambda **kw: [_guarded_tool(calls)])
    scripted(reply("delete_all", {"what": "users"}), reply("FINISH", "stopped"))
    assert cli.main(["run", "delete everything", *run_args]) == 0
    assert calls == []
    assert "refused delete_all" in capsys.readouterr().err


def test_yes_approves(scripted: Any, monkeypatch: pytest.MonkeyPatch, run_args: list[str]) -> None:
    """--yes approves a tool that requires approval."""
    calls: list[str] = []
    monkeypatch.setattr(cli, "make_demo_tools", lambda **kw: [_guarded_tool(calls)])
    scripted(reply("delete_all", {"what": "users"}), reply("FINISH", "deleted"))
    assert cli.main(["run", "delete everything", "--yes", *run_args]) == 0
    assert calls == ["users"]


def test_approval_asked_on_terminal(scripted: Any, monkeypatch: pytest.MonkeyPatch, run_args: list[str]) -> None:
    """On a terminal the CLI asks y/n on stderr; "y" lets the tool run."""
    calls: list[str] = []
    monkeypatch.setattr(cli, "make_demo_tools", lambda **kw: [_guarded_tool(calls)])
    monkeypatch.setattr(sys, "stdin", _Tty("y\n"))
    monkeypatch.setattr(sys, "stderr", err := _Tty())
    scripted(reply("delete_all", {"what": "users"}), reply("FINISH", "deleted"))
    assert cli.main(["run", "delete everything", *run_args]) == 0
    assert calls == ["users"]
    assert 'Allow delete_all({"what": "users"})? [y/N]' in err.getvalue()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("no_color", "coloured"), [(None, True), ("1", False)])
def test_colours_only_on_terminal_without_no_color(no_color: str | None, coloured: bool, scripted: Any,
                                                   monkeypatch: pytest.MonkeyPatch, run_args: list[str]) -> None:
    """ANSI colours appear on a terminal stderr unless NO_COLOR is set; the answer on stdout stays plain."""
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setattr(sys, "stderr", err := _Tty())
    monkeypatch.setattr(sys, "stdout", out := io.StringIO())
    scripted(reply("FINISH", "done"))
    assert cli.main(["run", "x", *run_args]) == 0
    assert ("\033[3" in err.getvalue()) is coloured
    assert out.getvalue() == "done\n"


def _guarded_tool(calls: list[str]) -> StructuredTool:
    def delete_all(what: str) -> str:
        """Delete everything of one kind."""
        calls.append(what)
        return "deleted"

    return StructuredTool.from_function(delete_all, metadata={"requires_approval": True})


# ------------------------------------------------------------------------------ failures


def test_internal_error_is_one_line_by_default(monkeypatch: pytest.MonkeyPatch, run_args: list[str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An unexpected exception is one line without a traceback, exit 4."""
    monkeypatch.setattr(cli, "build_model", _boom)
    assert cli.main(["run", "x", *run_args]) == 4
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in one_line(err)
    assert "Traceback" not in err


def test_debug_shows_traceback(monkeypatch: pytest.MonkeyPatch, run_args: list[str],
                               capsys: pytest.CaptureFixture[str]) -> None:
    """With --debug the same internal error shows its traceback."""
    monkeypatch.setattr(cli, "build_model", _boom)
    assert cli.main(["run", "x", "--debug", *run_args]) == 4
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert "RuntimeError: boom" in err


def _boom(args: Any) -> Any:
    raise RuntimeError("boom")


def test_ctrl_c_exits_130(scripted: Any, run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during a run exits 130 with one line and no traceback."""
    scripted(KeyboardInterrupt())
    assert cli.main(["run", "x", *run_args]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err
    assert "Traceback" not in err


def test_secret_never_printed_or_traced(scripted: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """GIGACHAT_CREDENTIALS never reaches stdout, stderr or the trace, even when the model's error quotes it."""
    monkeypatch.setenv("GIGACHAT_CREDENTIALS", SECRET)
    scripted(RuntimeError(f"401 Unauthorized: bad key {SECRET}"))
    trace = tmp_path / "t.jsonl"
    assert cli.main(["run", "x", "--model", "gigachat", "--debug", "--trace", str(trace), *run_args]) == 1
    captured = capsys.readouterr()
    assert "401 Unauthorized" in captured.err  # the error is shown ...
    for text in (captured.out, captured.err, trace.read_text(encoding="utf-8")):
        assert SECRET not in text  # ... without the secret


def test_secret_not_in_debug_traceback(monkeypatch: pytest.MonkeyPatch, run_args: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A traceback shown by --debug has the credentials masked."""
    monkeypatch.setenv("GIGACHAT_CREDENTIALS", SECRET)

    def leaky(args: Any) -> Any:
        raise RuntimeError(f"client failed with credentials={SECRET}")

    monkeypatch.setattr(cli, "build_model", leaky)
    assert cli.main(["run", "x", "--debug", *run_args]) == 4
    err = capsys.readouterr().err
    assert "credentials=***" in err
    assert SECRET not in err


@pytest.mark.parametrize("command", ["run", "resume", "chat", "demo", "batch", "eval"])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command (batch and eval from react_agent.batch included) answers --help with exit 0."""
    assert cli.main([command, "--help"]) == 0
    assert f"usage: react-agent {command}" in capsys.readouterr().out
