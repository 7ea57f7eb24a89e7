"""react-agent run/resume/chat with the user's own tools (--tools), MCP servers (--mcp) and journals, in-process
with a scripted model; the clear error and exit code of each misconfiguration."""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import HELPERS

from react_agent.cli import _main as cli
from react_agent.testing import ScriptedChatModel

TOOLS_FILE = HELPERS / "cli_tools.py"
MCP_SERVER = HELPERS / "cli_mcp_server.py"
HAS_MCP = importlib.util.find_spec("mcp") is not None and importlib.util.find_spec("langchain_mcp_adapters") is not None
needs_mcp = pytest.mark.skipif(not HAS_MCP, reason="the mcp extra is not installed (pip install 'react-agent[mcp]')")
if HAS_MCP:  # mcp binds its stdio client's default errlog=sys.stderr at import: import it now, not under a capture
    importlib.import_module("mcp.client.stdio")


def reply(action: str, action_input: Any, thought: str = "") -> str:
    return json.dumps({"thought": thought, "action": action, "action_input": action_input})


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Install a ScriptedChatModel as the CLI's model; returns a function that sets its script."""

    def install(*responses: Any) -> ScriptedChatModel:
        llm = ScriptedChatModel(responses=list(responses))
        monkeypatch.setattr(cli, "build_model", lambda args: llm)
        return llm

    return install


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the `note` tool of cli_tools appends each call to."""
    log = tmp_path / "notes.log"
    monkeypatch.setenv("CLI_TOOLS_LOG", str(log))
    return log


def noted(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# ------------------------------------------------------------------------------ --tools


@pytest.mark.parametrize("spec", ["cli_tools:tools", "cli_tools", "cli_tools:make_tools", f"{TOOLS_FILE}:tools",
                                  str(TOOLS_FILE)])
def test_run_with_user_tools(spec: str, scripted: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """--tools takes a dotted module or a .py file, and a list attribute (default `tools`) or a factory; the
    agent sees exactly those tools (not the demo tools) and calls them."""
    llm = scripted(reply("add", {"a": 2, "b": 3}, "add them"), reply("FINISH", "The sum is 5"))
    assert cli.main(["run", "What is 2+3?", "--tools", spec]) == 0
    captured = capsys.readouterr()
    assert captured.out == "The sum is 5\n"
    assert "Action: add" in captured.err and "Observation: 5" in captured.err
    prompt = llm.calls[0].text
    assert "Add two integers" in prompt and "Write a note" in prompt
    assert "register_user" not in prompt and "calculator" not in prompt


def test_tools_repeatable(scripted: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Several --tools are merged."""
    extra = tmp_path / "extra_tools.py"
    extra.write_text('def shout(text: str) -> str:\n    """Upper-case the text."""\n    return text.upper()\n\n'
                     "tools = [shout]\n", encoding="utf-8")
    llm = scripted(reply("shout", {"text": "hi"}), reply("FINISH", "HI"))
    assert cli.main(["run", "Shout hi", "--tools", "cli_tools:tools", "--tools", f"{extra}:tools"]) == 0
    assert "Upper-case the text" in llm.calls[0].text and "Add two integers" in llm.calls[0].text
    assert "Observation: HI" in capsys.readouterr().err


@pytest.mark.parametrize(("spec", "mentions"), [
    ("no_such_module_xyz:tools", ["no module named 'no_such_module_xyz'", "PYTHONPATH"]),
    ("cli_tools:missing", ["has no attribute 'missing'", "cli_tools:tools"]),
    ("cli_tools:not_a_list", ["not a list of tools", "tools = [my_tool, ...]"]),
    ("cli_tools:empty", ["holds no tools"]),
    ("cli_tools:not_tools", ["item 1 of not_tools is a str, not a tool"]),
    ("cli_tools:needs_arguments", ["needs arguments (prefix)"]),
    ("cli_tools:undocumented", ["the agent refuses the tools"]),
    ("./no/such/file.py:tools", ["file not found"]),
])
def test_tools_mistakes_exit_7(spec: str, mentions: list[str], scripted: Any,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """Each mistake in --tools: one line that says what to fix, exit 7, no model call, no traceback."""
    llm = scripted(reply("FINISH", "never"))
    assert cli.main(["run", "task", "--tools", spec]) == 7
    line = one_line(capsys.readouterr().err)
    for text in mentions:
        assert text in line
    assert llm.calls == []


def test_tools_module_that_fails_to_import(tmp_path: Path, scripted: Any,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A tool module raising on import: the error says which module and why, exit 7."""
    broken = tmp_path / "broken_tools.py"
    broken.write_text("import no_such_dependency_xyz\ntools = []\n", encoding="utf-8")
    scripted()
    assert cli.main(["run", "task", "--tools", str(broken)]) == 7
    line = one_line(capsys.readouterr().err)
    assert "broken_tools.py" in line and "no_such_dependency_xyz" in line


def test_db_with_user_tools_is_usage_error(scripted: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--db configures the demo tools that --tools replaces: saying both is a usage error."""
    scripted()
    assert cli.main(["run", "task", "--tools", "cli_tools", "--db", str(tmp_path / "u.db")]) == 2
    assert "--db and --root" in one_line(capsys.readouterr().err)


def test_timeout_and_max_iterations_reach_the_agent(scripted: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """--timeout is the run's max_execution_time, --tool-timeout a tool call's, --max-iterations the limit."""
    seen: list[Any] = []
    real = cli.build_agent

    def spy(*args: Any, **kwargs: Any) -> Any:
        agent = real(*args, **kwargs)
        seen.append(agent.config)
        return agent

    monkeypatch.setattr(cli, "build_agent", spy)
    scripted(reply("FINISH", "ok"))
    argv = ["run", "t", "--tools", "cli_tools", "--timeout", "12.5", "--tool-timeout", "3", "--max-iterations", "4"]
    assert cli.main(argv) == 0
    assert (seen[0].max_execution_time, seen[0].timeout, seen[0].max_iterations) == (12.5, 3.0, 4)


@pytest.mark.parametrize("flag", ["--timeout", "--tool-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_bad_seconds_are_usage_errors(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "t", flag, value]) == 2
    assert flag in one_line(capsys.readouterr().err)


# ------------------------------------------------------------------------------ --mcp


@needs_mcp
def test_run_with_a_real_mcp_server(scripted: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """--mcp starts a real stdio MCP server; the agent calls its tool and the observation is its result.
    (capfd: the server's stderr is the process's real stderr, which capsys replaces with a file-less buffer.)"""
    llm = scripted(reply("multiply", {"a": 6, "b": 7}), reply("FINISH", "42"))
    trace = tmp_path / "t.jsonl"
    argv = ["run", "6 times 7?", "--mcp", f"{sys.executable} {MCP_SERVER}", "--trace", str(trace)]
    assert cli.main(argv) == 0
    assert "Multiply two integers" in llm.calls[0].text
    steps = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert (steps[0]["action"], steps[0]["observation"], steps[0]["is_error"]) == ("multiply", "42", False)
    assert capfd.readouterr().out == "42\n"


@needs_mcp
def test_mcp_and_tools_together(scripted: Any, capfd: pytest.CaptureFixture[str]) -> None:
    """--tools and --mcp combine into one tool list."""
    llm = scripted(reply("FINISH", "ok"))
    assert cli.main(["run", "t", "--tools", "cli_tools", "--mcp", f"{sys.executable} {MCP_SERVER}"]) == 0
    prompt = llm.calls[0].text
    assert "Multiply two integers" in prompt and "Add two integers" in prompt


@pytest.mark.parametrize(("command", "mentions"), [
    ("no-such-command-xyz --stdio", "command not found: no-such-command-xyz"),
    pytest.param(f"{sys.executable} -c 'import sys; sys.exit(3)'", "could not be started", marks=needs_mcp),
])
def test_mcp_server_that_fails_exits_8(command: str, mentions: str, scripted: Any,
                                       capfd: pytest.CaptureFixture[str]) -> None:
    """An MCP command that cannot be found or dies at start: one line naming it, exit 8. (A server that dies
    at once can race asyncio's child watcher, which may log its own "Unknown child process" warning: only
    react-agent's lines are counted.)"""
    llm = scripted(reply("FINISH", "never"))
    assert cli.main(["run", "t", "--mcp", command]) == 8
    err = capfd.readouterr().err
    ours = "\n".join(line for line in err.splitlines() if not line.startswith("WARNING asyncio:"))
    assert mentions in one_line(ours)
    assert "Traceback" not in err
    assert llm.calls == []


@pytest.mark.parametrize("command", ["", "'unclosed"])
def test_mcp_unsplittable_command_is_usage_error(command: str, scripted: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    scripted()
    assert cli.main(["run", "t", "--mcp", command]) == 2
    assert "--mcp" in one_line(capsys.readouterr().err)


# ------------------------------------------------------------------------------ --journal and resume


def _cut_after_first_step(journal: Path) -> None:
    """Simulate a crash: keep the records up to the first completed step, then half of the next record."""
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    first_step = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "step")
    torn = lines[first_step + 1][: len(lines[first_step + 1]) // 2]
    journal.write_text("".join(lines[: first_step + 1]) + torn, encoding="utf-8")


def test_journal_then_crash_then_resume(scripted: Any, notes: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """run --journal, a crash after step 1, then resume: step 1 is replayed (no model call, the tool does not
    run again), the run goes on live, every side effect happened exactly once."""
    journal = tmp_path / "run.jsonl"
    scripted(reply("note", {"text": "first"}), reply("note", {"text": "second"}), reply("FINISH", "two notes"))
    assert cli.main(["run", "Write two notes", "--tools", "cli_tools", "--journal", str(journal)]) == 0
    first = capsys.readouterr()
    assert f"react-agent resume {journal} --run-id" in first.err
    assert noted(notes) == ["first", "second"]

    _cut_after_first_step(journal)
    notes.write_text("first\n", encoding="utf-8")  # the world as it was at the crash
    llm = scripted(reply("note", {"text": "second"}), reply("FINISH", "two notes"))
    assert cli.main(["resume", str(journal), "--tools", "cli_tools"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "two notes\n"
    assert "Step 1 (replayed from the journal)" in captured.err
    assert "Step 2 (" in captured.err and "Step 2 (replayed" not in captured.err
    assert "Observation: noted: first" in captured.err
    assert "finished: 3 steps (1 replayed), 3 model calls" in captured.err
    assert noted(notes) == ["first", "second"]
    assert len(llm.calls) == 2  # only the steps after the crash asked the model


def test_resume_picks_the_run_by_id_and_traces_replayed_steps(scripted: Any, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs in one journal: --run-id picks the first; the trace marks replayed steps."""
    journal, trace = tmp_path / "runs.jsonl", tmp_path / "t.jsonl"
    scripted(reply("add", {"a": 1, "b": 1}), reply("FINISH", "two"))
    assert cli.main(["run", "1+1?", "--tools", "cli_tools", "--journal", str(journal)]) == 0
    scripted(reply("FINISH", "nothing"))
    assert cli.main(["run", "Say nothing", "--tools", "cli_tools", "--journal", str(journal)]) == 0
    capsys.readouterr()
    first_id = next(json.loads(line)["run"] for line in journal.read_text(encoding="utf-8").splitlines())
    llm = scripted()
    argv = ["resume", str(journal), "--run-id", first_id, "--tools", "cli_tools", "--trace", str(trace)]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == "two\n"
    assert llm.calls == []
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [r.get("replayed") for r in records[:-1]] == [True, True]
    assert records[-1]["output"] == "two"


@pytest.mark.parametrize(("setup", "argv_tail", "mentions"), [
    ("none", [], "journal file not found"),
    ("empty", [], "holds no run"),
    ("run", ["--run-id", "nope"], "holds no run 'nope' to resume; its runs:"),
    ("run", ["--max-iterations", "2"], "resume with the same"),
    ("run", ["--agent", "reflection"], "resume with the same"),
])
def test_resume_mistakes_exit_2(setup: str, argv_tail: list[str], mentions: str, scripted: Any, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """A missing journal, no such run, or other options than the run's: one line, exit 2."""
    journal = tmp_path / "j.jsonl"
    if setup == "empty":
        journal.write_text("", encoding="utf-8")
    if setup == "run":
        scripted(reply("add", {"a": 1, "b": 2}), reply("FINISH", "3"))
        assert cli.main(["run", "1+2?", "--tools", "cli_tools", "--journal", str(journal)]) == 0
        capsys.readouterr()
    scripted()
    assert cli.main(["resume", str(journal), "--tools", "cli_tools", *argv_tail]) == 2
    assert mentions in one_line(capsys.readouterr().err)


def test_journal_in_missing_folder_is_usage_error(scripted: Any, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    scripted()
    assert cli.main(["run", "t", "--tools", "cli_tools", "--journal", str(tmp_path / "no" / "j.jsonl")]) == 2
    assert "--journal" in one_line(capsys.readouterr().err)


# ------------------------------------------------------------------------------ chat


def test_chat_reads_messages_until_exit(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """chat answers each line of stdin (trace on stderr, answer on stdout) and stops at /exit."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("What is 2+3?\n\nAnd plus 10?\n/exit\nnever read\n"))
    llm = scripted(reply("add", {"a": 2, "b": 3}), reply("FINISH", "5"), reply("add", {"a": 5, "b": 10}),
                   reply("FINISH", "15"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "5\n15\n"
    assert captured.err.count("Action: add") == 2
    assert len(llm.calls) == 4


def test_chat_remembers_the_conversation(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The second message's prompt carries the first turn (question and answer) as conversation history."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("My name is Zoltan.\nWhat is my name?\n"))
    llm = scripted(reply("FINISH", "Nice to meet you, Zoltan."), reply("FINISH", "Zoltan"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    assert "My name is Zoltan." in llm.calls[1].text and "Nice to meet you, Zoltan." in llm.calls[1].text
    assert "Zoltan" not in llm.calls[0].text.replace("My name is Zoltan.", "")
    assert capsys.readouterr().out == "Nice to meet you, Zoltan.\nZoltan\n"


def test_chat_reset_forgets(scripted: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """/reset starts a new conversation."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("My name is Zoltan.\n/reset\nWhat is my name?\n"))
    llm = scripted(reply("FINISH", "Hello Zoltan."), reply("FINISH", "I do not know"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    assert "Zoltan" not in llm.calls[1].text


def test_chat_unfinished_turn_goes_on(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A turn that hits the iteration limit says so on stdout; the session continues and ends at EOF with 0."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("loop\nthen stop\n"))
    scripted(reply("add", {"a": 1, "b": 1}), reply("FINISH", "stopped"))
    assert cli.main(["chat", "--tools", "cli_tools", "--max-iterations", "1"]) == 0
    assert capsys.readouterr().out == "(no answer: max_iterations)\nstopped\n"


def test_chat_journals_every_turn(scripted: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """chat --journal writes one journaled run per message."""
    journal = tmp_path / "chat.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("one\ntwo\n"))
    scripted(reply("FINISH", "1"), reply("FINISH", "2"))
    assert cli.main(["chat", "--tools", "cli_tools", "--journal", str(journal)]) == 0
    runs = [r for r in map(json.loads, journal.read_text(encoding="utf-8").splitlines()) if r["type"] == "run"]
    assert [r["task"].splitlines()[-1][-3:] for r in runs] == ["one", "two"]


def test_chat_on_a_terminal_shows_a_prompt(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal, chat prints a banner and a `> ` prompt (on stderr) before each message."""
    monkeypatch.setattr(sys, "stdin", _Tty("hi\n/quit\n"))
    scripted(reply("FINISH", "hello"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    captured = capsys.readouterr()
    assert "/exit ends it" in captured.err
    assert captured.err.count("> ") == 2
    assert captured.out == "hello\n"


def test_chat_ctrl_c_drops_the_message_and_goes_on(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during a message drops it; the next message is answered; the session ends with 0."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("slow question\nnext\n"))
    scripted(KeyboardInterrupt(), reply("FINISH", "answered"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    captured = capsys.readouterr()
    assert "interrupted" in captured.err
    assert captured.out == "answered\n"


def test_api_key_env_value_is_masked(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The value of the --api-key-env variable (whatever its name) never reaches stderr or the trace."""
    secret = "my-private-key-0123456789"
    monkeypatch.setenv("CLI_TEST_PRIVATE", secret)
    scripted(RuntimeError(f"401 Unauthorized: bad key {secret}"))
    trace = tmp_path / "t.jsonl"
    argv = ["run", "t", "--tools", "cli_tools", "--api-key-env", "CLI_TEST_PRIVATE", "--debug", "--trace", str(trace)]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "401 Unauthorized: bad key ***" in err
    assert secret not in err + trace.read_text(encoding="utf-8")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_chat_refuses_bad_tools_before_the_first_message(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A tool the agent refuses stops chat at once (exit 7), before any message is read."""
    stdin = io.StringIO("hello\n")
    monkeypatch.setattr(sys, "stdin", stdin)
    scripted()
    assert cli.main(["chat", "--tools", "cli_tools:undocumented"]) == 7
    assert "the agent refuses the tools" in one_line(capsys.readouterr().err)
    assert stdin.tell() == 0


def test_chat_in_russian_gets_russian_prompts(scripted: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without --lang, a first message in Cyrillic gives the Russian prompts (an English one the English
    prompts); empty lines and /reset do not count as messages in the trace."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("Сколько будет 2+3?\n\n/reset\nспасибо\n"))
    trace = tmp_path / "t.jsonl"
    llm = scripted(reply("FINISH", "5"), reply("FINISH", "пожалуйста"))
    assert cli.main(["chat", "--tools", "cli_tools", "--trace", str(trace)]) == 0
    assert "Задача" in llm.calls[0].text and "Task" not in llm.calls[0].text
    results = [r for r in map(json.loads, trace.read_text(encoding="utf-8").splitlines()) if r["type"] == "result"]
    assert [r["run"] for r in results] == [1, 2]
    monkeypatch.setattr(sys, "stdin", io.StringIO("What is 2+3?\n"))
    llm = scripted(reply("FINISH", "5"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    assert "Task" in llm.calls[0].text and "Задача" not in llm.calls[0].text


def test_mcp_without_the_extra_says_what_to_install(scripted: Any, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """--mcp when langchain-mcp-adapters is not installed: the extra and the pip command, exit 8."""
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters", None)  # importing it now fails
    scripted()
    assert cli.main(["run", "t", "--mcp", f"{sys.executable} {MCP_SERVER}"]) == 8
    assert "react-agent[mcp] (pip install '.[mcp]'" in one_line(capsys.readouterr().err)
