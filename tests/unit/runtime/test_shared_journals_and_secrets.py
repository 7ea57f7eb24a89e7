"""Shared journals, honoured approvals, changed options, leaked session values and secrets."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
import traceback
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, call, finish
from langchain_core.tools import StructuredTool
from pydantic import SecretStr

from react_agent import (
    JournalMismatchError,
    PlanAndExecuteAgent,
    ReactAgent,
    ReflectionAgent,
    RunError,
    read_journal,
)
from react_agent.testing import ScriptedChatModel


def echo_tool(calls: list[str] | None = None, *, approval: bool = False) -> StructuredTool:
    def echo(text: str) -> str:
        """Echo the text."""
        if calls is not None:
            calls.append(text)
        return f"echo {text}"

    return StructuredTool.from_function(echo, metadata={"requires_approval": True} if approval else None)


# ------------------------------------------------------------------------------------ the journal
def test_torn_tail_then_a_new_run_poisons_nothing(tmp_path: Path) -> None:
    """A crash leaves half a record; a new run on the same file still starts a clean line, and both the
    new run and every record before the tear stay readable and resumable."""
    journal = tmp_path / "j.jsonl"
    ReactAgent(ScriptedChatModel([finish("one")]), []).run("first", journal=journal)
    with open(journal, "ab") as handle:
        handle.write(b'{"type":"model","run":"x","seq":9,"text":"{\\"act')  # torn: no newline
    ReactAgent(ScriptedChatModel([finish("two")]), []).run("second", journal=journal)
    records = read_journal(journal)
    assert [r["task"] for r in records if r["type"] == "run"] == ["first", "second"]
    assert all(json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines())
    assert ReactAgent(ScriptedChatModel([]), []).resume(journal).output == "two"


def test_threads_appending_to_one_journal_lose_nothing(tmp_path: Path) -> None:
    """16 runs in threads share one journal file: every record is whole and every run is resumable."""
    journal = tmp_path / "shared.jsonl"
    calls: list[str] = []

    def one(n: int) -> None:
        llm = ScriptedChatModel([call("echo", text=str(n)), finish(f"done {n}")])
        ReactAgent(llm, [echo_tool(calls)]).run(f"task {n}", journal=journal,
                                                config={"run_id": f"run-{n}"})

    threads = [threading.Thread(target=one, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = read_journal(journal)
    for n in range(16):
        mine = [r for r in records if r["run"] == f"run-{n}"]
        assert [r["type"] for r in mine] == ["run", "model", "tool_start", "tool_end", "step", "model", "step", "end"]
        again = ReactAgent(ScriptedChatModel([]), [echo_tool(calls)]).resume(journal, run_id=f"run-{n}")
        assert again.output == f"done {n}"
    assert sorted(calls) == sorted(str(n) for n in range(16))


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from conftest import call, finish
    from langchain_core.tools import StructuredTool
    from react_agent import ReactAgent
    from react_agent.testing import ScriptedChatModel

    def echo(text: str) -> str:
        '''Echo the text.'''
        return "echo " + text

    journal, worker = sys.argv[1], sys.argv[2]
    for n in range(15):
        llm = ScriptedChatModel([call("echo", text=f"{{worker}}-{{n}}"), finish(f"done {{worker}}-{{n}}")])
        ReactAgent(llm, [StructuredTool.from_function(echo)]).run(
            "task", journal=journal, config={{"run_id": f"{{worker}}-{{n}}"}})
""")


def test_processes_appending_while_runs_are_resumed_lose_nothing(tmp_path: Path) -> None:
    """Three processes append runs to one journal while this process resumes a crashed run in the same
    file (wave 1 truncated the file to the length it had read, deleting the others' records)."""
    journal = tmp_path / "shared.jsonl"
    calls: list[str] = []
    crashed = ScriptedChatModel([call("echo", text="a")])
    ReactAgent(crashed, [echo_tool(calls)], retry=None).run("crashed", journal=journal, config={"run_id": "crashed"})
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(tests=str(ROOT / "tests")), encoding="utf-8")
    workers = [subprocess.Popen([sys.executable, str(script), str(journal), f"w{i}"]) for i in range(3)]
    resumed = []
    for _ in range(5):  # resume (and replay) the crashed run while the writers append
        resumed.append(ReactAgent(ScriptedChatModel([finish("recovered")]), [echo_tool(calls)])
                       .resume(journal, run_id="crashed").output)
    for worker in workers:
        assert worker.wait(timeout=120) == 0
    assert resumed == ["recovered"] * 5
    records = read_journal(journal)
    ends = {r["run"] for r in records if r["type"] == "end"}
    assert {f"w{i}-{n}" for i in range(3) for n in range(15)} <= ends
    for i, n in ((0, 0), (1, 7), (2, 14)):
        again = ReactAgent(ScriptedChatModel([]), [echo_tool()]).resume(journal, run_id=f"w{i}-{n}")
        assert again.output == f"done w{i}-{n}"


def test_journaled_approval_is_honoured_by_an_agent_without_approve(tmp_path: Path) -> None:
    """Crash inside an approved call; resume with an agent built without approve=: the journaled "yes"
    stands, the call runs again with its key, and nobody is asked."""
    journal = tmp_path / "j.jsonl"
    calls: list[str] = []

    class Crash(Exception):
        pass

    def crashing(text: str) -> str:
        """Echo the text."""
        raise KeyboardInterrupt  # the process "dies" inside the approved call

    tool = StructuredTool.from_function(crashing, name="echo", metadata={"requires_approval": True})
    with pytest.raises(KeyboardInterrupt):
        ReactAgent(ScriptedChatModel([call("echo", text="a")]), [tool], approve=lambda t, a: True).run(
            "task", journal=journal)
    assert [r["approved"] for r in read_journal(journal) if r["type"] == "approval"] == [True]
    again = ReactAgent(ScriptedChatModel([finish("ok")]), [echo_tool(calls, approval=True)]).resume(journal)
    assert again.status == "finished" and calls == ["a"]
    assert again.steps[0].observation == "echo a" and not again.steps[0].is_error


@pytest.mark.parametrize(("option", "value"), [("max_iterations", 2), ("history_window", None),
                                               ("final_answer", "always"), ("max_parse_errors", 1)])
def test_resume_with_changed_outcome_options_is_refused(tmp_path: Path, option: str, value: Any) -> None:
    """Options that change a run's outcome are part of the journal's identity: a resume with other
    values raises JournalMismatchError naming them (instead of silently giving another result)."""
    journal = tmp_path / "j.jsonl"
    ReactAgent(ScriptedChatModel([call("echo", text="a")]), [echo_tool()], retry=None).run("task", journal=journal)
    with pytest.raises(JournalMismatchError, match=option):
        ReactAgent(ScriptedChatModel([]), [echo_tool()], **{option: value}).resume(journal)
    # options that do not change the outcome may differ
    again = ReactAgent(ScriptedChatModel([finish("ok")]), [echo_tool()], timeout=3, retry=None).resume(journal)
    assert again.output == "ok"


# ------------------------------------------------------------------------------------ session values
SESSION = {"email": "ceo.private@example.com"}


def leaking_tool(shape: str) -> StructuredTool:
    import base64
    import html
    import urllib.parse

    value = SESSION["email"]
    encodings = {"plain": value, "json": json.dumps({"to": value}), "upper": value.upper(),
                 "url": urllib.parse.quote(value, safe=""), "base64": base64.b64encode(value.encode()).decode(),
                 "html": html.escape(value), "straddle": "x" * 40 + value + "y" * 10}

    def notify(to: str) -> str:
        """Notify someone."""
        return f"sent: {encodings[shape]}"

    return StructuredTool.from_function(notify)


@pytest.mark.parametrize("shape", ["plain", "json", "upper", "url", "base64", "html", "straddle"])
def test_session_values_never_reach_the_model_and_the_journal_replays_them(tmp_path: Path, shape: str) -> None:
    """A tool result carrying a session value (in any plausible encoding, or across the truncation
    cut) shows the model only the reference; the journal (a file only its owner reads) keeps the exact
    result, so the resume replays the same run."""
    plan = json.dumps({"plan": [{"tool": "notify", "args": {"to": "$session.email"}, "open": []}]})
    llm = ScriptedChatModel([plan, "composed answer"])
    journal = tmp_path / "j.jsonl"
    agent = PlanAndExecuteAgent(llm, [leaking_tool(shape)], prompts="en", final_answer="always",
                                max_observation_chars=50)
    result = agent.run("notify the CEO", journal=journal, session=SESSION)
    assert result.status == "finished"
    value = SESSION["email"]
    shown = llm.calls[-1].text
    for variant in (value, value.upper(), value.lower(), "ceo.private%40example.com", "Y2VvLnByaXZhdGVA"):
        assert variant not in shown
    if shape != "straddle":
        assert "$session.email" in shown
    assert journal.stat().st_mode & 0o077 == 0
    again = PlanAndExecuteAgent(ScriptedChatModel([]), [leaking_tool(shape)], prompts="en", final_answer="always",
                                max_observation_chars=50).resume(journal, session=SESSION)
    assert again.output == result.output
    assert [s.model_dump(exclude={"duration_s"}) for s in again.steps] == [
        s.model_dump(exclude={"duration_s"}) for s in result.steps]


# ------------------------------------------------------------------------------------ secrets
class KeyedModel(ScriptedChatModel):
    api_key: SecretStr = SecretStr("sk-FAKE-API-KEY-67890")


def test_no_secret_in_the_traceback_of_a_run_error(caplog: pytest.LogCaptureFixture) -> None:
    """RunError's message, its cause chain as formatted by traceback and logger.exception carry no secret."""

    class Buggy(ReflectionAgent):
        def needs_reflection(self, state: Any) -> bool:
            raise RuntimeError(f"debug dump: {self.llm.api_key.get_secret_value()}")  # type: ignore[attr-defined]

    llm = KeyedModel([json.dumps({"action": "echo", "action_input": {"text": "a"}})])
    with pytest.raises(RunError) as info:
        Buggy(llm, [echo_tool()]).run("task")
    text = "".join(traceback.format_exception(info.value))
    assert "sk-FAKE-API-KEY-67890" not in text and "***" in text and "RuntimeError" in text
    logger = logging.getLogger("test.secrets")
    with caplog.at_level(logging.ERROR):
        try:
            raise info.value
        except RunError:
            logger.exception("the run failed")
    assert "sk-FAKE-API-KEY-67890" not in caplog.text and "needs_reflection" in caplog.text


def test_a_runtime_token_of_the_client_is_masked(tmp_path: Path) -> None:
    """A bearer token the model's client obtained at run time (not a setting) is masked when a server
    error echoes it: in result.error and in the journal."""

    class Client:
        token = "eyJ-RUNTIME-TOKEN-123456"

    class TokenModel(ScriptedChatModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            self.__dict__["_client"] = Client()  # the client logs in during the first call
            raise PermissionError(f"401: bad header Authorization: Bearer {Client.token}")

    journal = tmp_path / "j.jsonl"
    result = ReactAgent(TokenModel([]), [], retry=None).run("task", journal=journal)
    assert result.status == "error" and Client.token not in (result.error or "") and "***" in (result.error or "")
    assert Client.token not in journal.read_text(encoding="utf-8")


async def test_arun_writes_the_journal_off_the_event_loop_and_before_going_on(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Under arun, journal records are written and fsync-ed in a worker thread (the event loop never waits
    for the disk), and each is on disk before the next model call."""
    import react_agent.runtime._journal as journal_module

    journal = tmp_path / "j.jsonl"
    writers: list[str] = []
    real = journal_module._append_durably

    def spy(path: Path, data: bytes) -> None:
        writers.append(threading.current_thread().name)
        real(path, data)

    monkeypatch.setattr(journal_module, "_append_durably", spy)
    seen: list[list[str]] = []

    class Checking(ScriptedChatModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            seen.append([r["type"] for r in read_journal(journal)])
            return super()._generate(messages, stop, run_manager, **kwargs)

    llm = Checking([call("echo", text="a"), finish("ok")])
    result = await ReactAgent(llm, [echo_tool()]).arun("task", journal=journal)
    assert result.output == "ok"
    assert writers and threading.main_thread().name not in writers
    assert seen[0] == ["run"]
    assert seen[1] == ["run", "model", "tool_start", "tool_end", "step"]
    assert [r["type"] for r in read_journal(journal)][-1] == "end"


def test_gigachat_access_token_is_masked_through_the_real_client(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The real GigaChat client against GigaChat's REST API on loopback: it logs in (the OAuth endpoint hands
    out an access token), then the chat endpoint echoes the bearer token in its error. The token is masked in
    result.error, the journal and the log records."""
    import time as clock
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from langchain_gigachat import GigaChat

    token = "eyJ-GIGACHAT-ACCESS-TOKEN-0123456789"

    class Api(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.endswith("/oauth"):
                status, body = 200, {"access_token": token, "expires_at": int(clock.time() * 1000) + 3_600_000}
            else:
                status, body = 400, {"message": f"bad header: {self.headers.get('Authorization')}"}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        llm = GigaChat(credentials="Y2xpZW50OnNlY3JldA==", base_url=f"http://127.0.0.1:{port}/api/v1",
                       auth_url=f"http://127.0.0.1:{port}/oauth", verify_ssl_certs=False, model="GigaChat")
        journal = tmp_path / "j.jsonl"
        with caplog.at_level(logging.DEBUG, logger="react_agent"):
            result = ReactAgent(llm, [], retry=None).run("task", journal=journal)
    finally:
        server.shutdown()
    assert result.status == "error" and "Bearer ***" in (result.error or "")
    assert token not in (result.error or "") and token not in journal.read_text(encoding="utf-8")
    assert token not in caplog.text
