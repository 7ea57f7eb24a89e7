"""One CLI for every command: run, chat, resume, batch and eval take the same model and tool flags, through
the real ``react-agent`` entry point in a subprocess (and its parser in process)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from react_agent.cli import _main as cli

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
SHARED = ("--model", "--model-path", "--base-url", "--api-key-env", "--option", "--prompts", "--constrained",
          "--examples", "--tools", "--mcp")


def reply(action: str, action_input: object) -> str:
    return json.dumps({"thought": "t", "action": action, "action_input": action_input})


def react_agent(*argv: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS / "helpers")]), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "react_agent.cli", *argv], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["run", "chat", "resume", "batch", "eval"])
def test_every_command_has_the_shared_model_and_tool_flags(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args([command, "--help"])
    shown = capsys.readouterr().out
    assert [flag for flag in SHARED if flag not in shown] == []


def test_run_plays_a_scripted_model_with_the_users_tools(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply("add", {"a": 2, "b": 40}), reply("FINISH", "42")]))
    done = react_agent("run", "What is 2 + 40?", "--tools", "cli_tools:tools", "--model", f"scripted:{script}",
                       cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42" and "Observation: 42" in done.stderr


def test_prompts_and_examples_reach_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--prompts en-compact --examples FILE: the compact step prompt shows the worked example."""
    from react_agent.testing import ScriptedChatModel

    examples = tmp_path / "examples.json"
    examples.write_text(json.dumps([{"task": "What is 1 + 1?", "steps": [],
                                     "answer": {"thought": "add them", "action": "add",
                                                "action_input": {"a": 1, "b": 1}}}]))
    llm = ScriptedChatModel([reply("FINISH", "42")])
    monkeypatch.setattr(cli, "build_model", lambda args: llm)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(TESTS / "helpers"))
    code = cli.main(["run", "What is 2 + 40?", "--tools", "cli_tools:tools", "--prompts", "en-compact",
                     "--examples", str(examples), "--constrained", "off"])
    assert code == 0
    assert "What is 1 + 1?" in llm.calls[0].text and '"add them"' in llm.calls[0].text
    assert "response_format" not in json.dumps(llm.calls[0].kwargs)


def test_a_malformed_option_or_examples_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("[]")
    bad = react_agent("run", "x", "--model", "openai:qwen3", "-o", "temperature", cwd=tmp_path)
    assert bad.returncode == 2 and "-o 'temperature': write KEY=VALUE" in bad.stderr
    (tmp_path / "e.json").write_text('{"task": 1}')
    bad = react_agent("run", "x", "--model", f"scripted:{tmp_path / 's.json'}", "--examples", "e.json", cwd=tmp_path)
    assert bad.returncode == 2 and "--examples" in bad.stderr and "JSON list" in bad.stderr


def test_model_options_go_to_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from react_agent.cli._models import model_options

    args = cli.build_parser().parse_args(["run", "x", "-o", "temperature=0", "-o", "max_tokens=256",
                                          "-o", "stop=[\"\\n\"]", "-o", "model=qwen3"])
    assert model_options(args) == {"temperature": 0, "max_tokens": 256, "stop": ["\n"], "model": "qwen3"}


def test_batch_runs_the_users_tools_and_eval_fails_when_a_check_fails(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "sum", "task": "What is 2 + 40?",
                                 "checks": {"answer": "42"}}) + "\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply("add", {"a": 2, "b": 40}), reply("FINISH", "42")]))
    done = react_agent("batch", str(tasks), "--out", "out.jsonl", "--tools", "cli_tools:tools",
                       "--model", f"scripted:{script}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert result["status"] == "finished" and result["output"] == "42"

    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([reply("FINISH", "41")]))
    failed = react_agent("eval", str(tasks), "--tools", "cli_tools:tools", "--model", f"scripted:{wrong}",
                         "--no-plot", "--out-dir", "ev", cwd=tmp_path)
    assert failed.returncode == 1 and "--allow-failures" in failed.stderr
    allowed = react_agent("eval", str(tasks), "--tools", "cli_tools:tools", "--model", f"scripted:{wrong}",
                          "--no-plot", "--out-dir", "ev2", "--allow-failures", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr


def test_eval_help_prints_a_single_percent_sign() -> None:
    done = react_agent("eval", "--help", cwd=ROOT)
    assert "95% Wilson" in " ".join(done.stdout.split()) and "%%" not in done.stdout


def test_mcp_python_is_the_running_interpreter() -> None:
    argv = cli.mcp_server("python my_server.py --flag")
    assert argv == [sys.executable, "my_server.py", "--flag"]


def test_the_install_section_lists_every_extra_of_the_package() -> None:
    """README and docs/index.md have the same install section, and its table names exactly pyproject's extras."""
    import re
    tomllib = pytest.importorskip("tomllib")

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    sections = []
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        text = page.read_text(encoding="utf-8")
        start = text.index("## Install\n")
        sections.append(text[start:text.index("\n## ", start + 1)] if "\n## " in text[start + 1:] else text[start:])
    assert sections[0].split("An error that")[0] == sections[1].split("An error that")[0]
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", sections[0], re.MULTILINE))
    assert listed == extras


def test_setup_local_finds_the_cached_portable_wheel_without_rebuilding(tmp_path: Path) -> None:
    """setup-local --wheel-only with a wheel already in the cache for these flags prints it and builds nothing."""
    from react_agent.cli._setup import LLAMA_VERSION, PORTABLE_CMAKE_ARGS, wheel_dir

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    os.environ["XDG_CACHE_HOME"] = str(tmp_path)
    try:
        folder = wheel_dir(LLAMA_VERSION, PORTABLE_CMAKE_ARGS, sys.executable)
    finally:
        del os.environ["XDG_CACHE_HOME"]
    folder.mkdir(parents=True)
    wheel = folder / f"llama_cpp_python-{LLAMA_VERSION}-py3-none-linux_x86_64.whl"
    wheel.write_bytes(b"")
    done = subprocess.run([sys.executable, str(ROOT / "react_agent" / "cli" / "_setup.py"), "--wheel-only"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(wheel) and "building" not in done.stderr
    assert "-DGGML_NATIVE=OFF" in PORTABLE_CMAKE_ARGS and "AMX_INT8=OFF" in PORTABLE_CMAKE_ARGS


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for the interpreter")
def test_two_setups_at_once_build_the_wheel_once_and_a_file_in_its_folders_place_is_replaced(tmp_path: Path) -> None:
    """Two set-ups started together (two CI jobs, a user's two terminals) share one build and one wheel."""
    builds = tmp_path / "builds.txt"
    fake = tmp_path / "python"  # answers the version question and plays `pip wheel ... -w DIR` slowly
    fake.write_text('#!/bin/sh\nif [ "$1" = "-c" ]; then echo "(3, 11)"; exit 0; fi\n'
                    f'echo build >> "{builds}"\nsleep 1\nfor last; do :; done\n'
                    'touch "$last/llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, str(ROOT / "react_agent" / "cli" / "_setup.py"), "--wheel-only", "--python", str(fake)]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    wheels = {out.strip() for out, _ in outputs}
    assert len(wheels) == 1
    wheel = Path(wheels.pop())
    assert wheel.is_file() and builds.read_text(encoding="utf-8").count("build") == 1
    assert not list((tmp_path / "cache").rglob("*.tmp"))
    shutil.rmtree(wheel.parent)  # a file where the wheel's folder goes (a build interrupted by an older set-up)
    wheel.parent.write_bytes(b"not a folder")
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == str(wheel) and wheel.is_file()


def test_a_missing_client_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from react_agent import ConfigError
    from react_agent.models import make_model

    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # as if it were not installed
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    with pytest.raises(ConfigError, match=r"react-agent\[openai\]"):
        make_model("openai:gpt-4.1")


class _CtrlCAtPrompt:
    """A terminal stdin whose first read is a Ctrl-C."""

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        raise KeyboardInterrupt


def test_ctrl_c_at_the_chat_prompt_ends_the_session_quietly(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from react_agent.testing import ScriptedChatModel

    monkeypatch.setattr(cli, "build_model", lambda args: ScriptedChatModel([]))
    monkeypatch.setattr(sys, "stdin", _CtrlCAtPrompt())
    monkeypatch.syspath_prepend(str(TESTS / "helpers"))
    assert cli.main(["chat", "--tools", "cli_tools"]) == 0
    assert "error" not in capsys.readouterr().err


def test_a_dead_mcp_url_asks_whether_the_server_runs(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("langchain_mcp_adapters")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    code = cli.main(["run", "x", "--mcp", url, "--model", "openai:unused", "--base-url", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert code == 8 and f"is the MCP server running at {url}?" in err and "run the command yourself" not in err


def test_showcases_that_the_default_model_fails_say_so_when_they_start(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--agent plan and chat on the default local model print their caveat; another model prints none."""
    import io

    from react_agent.testing import ScriptedChatModel

    monkeypatch.syspath_prepend(str(TESTS / "helpers"))
    monkeypatch.setattr(cli, "build_model", lambda args: ScriptedChatModel([reply("FINISH", "ok")] * 3))
    cli.main(["run", "hi", "--tools", "cli_tools", "--agent", "plan"])
    assert "--agent plan needs a model that writes a whole plan" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    cli.main(["chat", "--tools", "cli_tools"])
    assert "weak at following a conversation" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    cli.main(["chat", "--tools", "cli_tools", "--model", "openai:other"])
    assert "note:" not in capsys.readouterr().err


def test_the_orchestrator_prints_its_caveat_on_the_local_model(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import react_agent.models
    from react_agent.examples import orchestrator
    from react_agent.testing import FunctionChatModel

    model = FunctionChatModel(function=lambda messages: reply("FINISH", "done"))
    monkeypatch.setattr(react_agent.models, "make_model", lambda spec: model)
    assert orchestrator.main(["--model", "local", "--task", "say done"]) == 0
    assert orchestrator.SMALL_MODEL_CAVEAT in capsys.readouterr().err
    orchestrator.main(["--model", "openai:other", "--task", "say done"])
    assert orchestrator.SMALL_MODEL_CAVEAT not in capsys.readouterr().err
