"""The HTTP API of `react_agent.serve`, tested against a real uvicorn server on loopback (tests/helpers/serve_worker.py
in a subprocess): runs, the SSE stream, the queue, approvals, a crash mid-tool and the resume, auth, the
OpenAI-compatible facade, and that no secret reaches a response."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from serve_helpers import ROOT, Server, free_port, poll, sse_events  # noqa: E402

from react_agent import ConfigError, ReactAgent, read_journal  # noqa: E402
from react_agent.testing import ScriptedChatModel  # noqa: E402

TOKEN = "tok-3f9a1c7e5b2d4a6f"


@pytest.fixture
def server(tmp_path: Path):
    started = Server(tmp_path).start()
    yield started
    started.stop()


def test_a_run_returns_its_answer_steps_and_tokens(server: Server) -> None:
    with server.client() as client:
        run_id = server.run(client, "TASK[add 2] please")
        run = server.wait_done(client, run_id)
        assert run["status"] == "finished"
        assert run["result"]["output"] == "ANSWER SUM=5"
        assert [s["action"] for s in run["steps"]] == ["add", "FINISH"]
        assert run["steps"][0]["action_input"] == {"a": 2, "b": 3}
        assert run["steps"][0]["observation"] == "SUM=5"
        assert run["result"]["usage"]["total_tokens"] > 0
        listed = client.get("/runs").json()["runs"]
        assert [r["id"] for r in listed] == [run_id]
        assert listed[0]["status"] == "finished"


def test_wait_returns_the_finished_run(server: Server) -> None:
    with server.client() as client:
        response = client.post("/runs?wait=true", json={"task": "TASK[add 4]"})
        assert response.status_code == 200
        assert response.json()["result"]["output"] == "ANSWER SUM=7"


def test_sse_streams_each_step_as_it_happens_then_the_result(server: Server) -> None:
    with server.client() as client:
        run_id = server.run(client, "TASK[gate g1]")
        seen = []
        for event, data in sse_events(client, run_id):
            seen.append(event)
            if event == "started":  # the tool is still closed: no step can have come yet
                poll(lambda: server.invocations("gate") == ["g1"], "the gate tool to be called")
                assert client.get(f"/runs/{run_id}").json()["steps"] == []
                server.release("g1")
            if event == "step" and data["index"] == 1:
                assert data["action"] == "gate" and data["observation"] == "PASSED-g1"
                assert data["usage"]["total_tokens"] > 0 and data["duration_s"] >= 0
            if event == "result":
                assert data["status"] == "finished" and data["output"] == "ANSWER PASSED-g1"
        assert seen == ["queued", "started", "step", "step", "result"]


def test_reconnecting_with_last_event_id_gets_only_the_later_events(server: Server) -> None:
    with server.client() as client:
        run_id = server.run(client, "TASK[add 1]")
        server.wait_done(client, run_id)
        events = [e for e, _ in sse_events(client, run_id, headers={"Last-Event-ID": "2"})]
        assert events == ["step", "result"]


def test_runs_beyond_max_concurrency_wait_in_the_queue(tmp_path: Path) -> None:
    server = Server(tmp_path, "--max-concurrency", "2").start()
    try:
        with server.client() as client:
            ids = [server.run(client, f"TASK[gate q{n}]") for n in range(3)]
            poll(lambda: len(server.invocations("gate")) == 2, "two runs at the gate")

            def statuses() -> list[str]:
                return sorted(client.get(f"/runs/{i}").json()["status"] for i in ids)

            assert statuses() == ["queued", "running", "running"]
            for n in range(3):
                server.release(f"q{n}")
            outputs = [server.wait_done(client, i)["result"]["output"] for i in ids]
            assert outputs == [f"ANSWER PASSED-q{n}" for n in range(3)]
            assert sorted(server.invocations("gate")) == ["q0", "q1", "q2"]
    finally:
        server.stop()


def test_an_approval_answered_by_a_person_lets_the_tool_run(server: Server) -> None:
    with server.client() as client:
        run_id = server.run(client, "TASK[refund 7781]")
        events = []
        for event, data in sse_events(client, run_id):
            events.append(event)
            if event == "approval":
                assert data["tool"] == "refund" and data["input"] == {"order": "7781"}
                assert server.invocations("refund") == []  # it waits for the person
                pending = client.get(f"/runs/{run_id}").json()
                assert pending["status"] == "waiting_approval"
                assert pending["pending_approval"]["id"] == data["id"]
                answer = client.post(f"/runs/{run_id}/approval", json={"approved": True, "approval_id": data["id"]})
                assert answer.status_code == 200 and answer.json()["approved"] is True
            if event == "approval_decided":
                assert data["approved"] is True and data["by"] == "person"
        assert events.index("approval") < events.index("approval_decided") < events.index("step")
        run = client.get(f"/runs/{run_id}").json()
        assert run["result"]["output"] == "ANSWER REFUNDED-7781"
        assert server.invocations("refund") == ["7781"]


def test_a_denied_approval_never_runs_the_tool(server: Server) -> None:
    with server.client() as client:
        run_id = server.run(client, "TASK[refund 12]")
        poll(lambda: client.get(f"/runs/{run_id}").json()["pending_approval"], "the approval request")
        assert client.post(f"/runs/{run_id}/approval", json={"approved": False}).status_code == 200
        run = server.wait_done(client, run_id)
        assert run["result"]["output"] == "ANSWER refused"
        assert "was not approved" in run["steps"][0]["observation"]
        assert server.invocations("refund") == []
        again = client.post(f"/runs/{run_id}/approval", json={"approved": True})
        assert again.status_code == 409


def test_an_unanswered_approval_is_refused_after_the_timeout(tmp_path: Path) -> None:
    server = Server(tmp_path, "--approval-timeout", "0.3").start()
    try:
        with server.client() as client:
            run_id = server.run(client, "TASK[refund 5]")
            decided = [d for e, d in sse_events(client, run_id) if e == "approval_decided"]
            assert decided == [{"id": decided[0]["id"], "tool": "refund", "approved": False, "by": "timeout"}]
            assert server.wait_done(client, run_id)["result"]["output"] == "ANSWER refused"
            assert server.invocations("refund") == []
    finally:
        server.stop()


def test_a_server_killed_mid_tool_resumes_the_run_once_after_a_restart(tmp_path: Path) -> None:
    first = Server(tmp_path).start()
    with first.client() as client:
        run_id = first.run(client, "TASK[both n1]")
        poll(lambda: first.invocations("write") == ["n1"], "the run to be inside write_note")
    first.kill()
    journal = first.journal_dir / f"{run_id}.jsonl"
    assert not [r for r in read_journal(journal) if r["type"] == "end"]

    second = Server(tmp_path, journal_dir=first.journal_dir).start()
    try:
        with second.client() as client:
            poll(lambda: second.invocations("write") == ["n1", "n1"], "the resumed run to call write_note again")
            second.release("n1")
            run = second.wait_done(client, run_id)
            assert run["result"]["output"] == "ANSWER WROTE-n1"
            assert run["resumed"] is True
            assert [(s["action"], s["replayed"]) for s in run["steps"]] == [
                ("add", True), ("write_note", False), ("FINISH", False)]
    finally:
        second.stop()
    assert second.invocations("add") == ["1"]  # the completed tool call was replayed, not run again

    third = Server(tmp_path, journal_dir=first.journal_dir).start()
    try:
        with third.client() as client:
            run = client.get(f"/runs/{run_id}").json()
            assert run["status"] == "finished" and run["result"]["output"] == "ANSWER WROTE-n1"
            assert [r["id"] for r in client.get("/runs").json()["runs"]] == [run_id]
    finally:
        third.stop()
    assert third.invocations("write") == ["n1", "n1"] and third.invocations("add") == ["1"]
    assert len([r for r in read_journal(journal) if r["type"] == "end"]) == 1


def test_a_server_killed_while_an_approval_waits_asks_again_after_the_restart(tmp_path: Path) -> None:
    first = Server(tmp_path).start()
    with first.client() as client:
        run_id = first.run(client, "TASK[refund 31]")
        poll(lambda: client.get(f"/runs/{run_id}").json()["pending_approval"], "the approval request")
    first.kill()
    second = Server(tmp_path, journal_dir=first.journal_dir).start()
    try:
        with second.client() as client:
            pending = poll(lambda: client.get(f"/runs/{run_id}").json()["pending_approval"], "the approval again")
            assert pending["tool"] == "refund" and second.invocations("refund") == []
            assert client.post(f"/runs/{run_id}/approval", json={"approved": True}).status_code == 200
            assert second.wait_done(client, run_id)["result"]["output"] == "ANSWER REFUNDED-31"
        assert second.invocations("refund") == ["31"]
    finally:
        second.stop()


def test_a_full_queue_answers_503(tmp_path: Path) -> None:
    server = Server(tmp_path, "--max-concurrency", "1", "--max-queue", "1").start()
    try:
        with server.client() as client:
            running = server.run(client, "TASK[gate f1]")
            poll(lambda: server.invocations("gate") == ["f1"], "the first run at the gate")
            waiting = server.run(client, "TASK[gate f2]")
            refused = client.post("/runs", json={"task": "TASK[gate f3]"})
            assert refused.status_code == 503 and "queue is full" in refused.json()["detail"]
            server.release("f1")
            server.release("f2")
            assert server.wait_done(client, running)["status"] == "finished"
            assert server.wait_done(client, waiting)["status"] == "finished"
            assert server.invocations("gate") == ["f1", "f2"]
    finally:
        server.stop()


def test_the_serve_command_serves_a_scripted_model(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"thought": "easy", "action": "FINISH", "action_input": "Hello from the script"}]))
    port = free_port()
    command = [sys.executable, "-c", "import sys; from react_agent.cli import main; sys.exit(main(sys.argv[1:]))",
               "serve", "--model", f"scripted:{script}", "--port", str(port), "--journal-dir", str(tmp_path / "runs"),
               "--lang", "en", "--db", str(tmp_path / "demo.db")]
    log = (tmp_path / "cli.log").open("wb")
    process = subprocess.Popen(command, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        url = f"http://127.0.0.1:{port}"
        poll(lambda: httpx.get(f"{url}/healthz", timeout=2).status_code == 200, "the serve command to listen")
        with httpx.Client(base_url=url, timeout=30) as client:
            run = client.post("/runs?wait=true", json={"task": "Say hello"}).json()
            assert run["result"]["output"] == "Hello from the script"
            assert "register_user" in client.get("/info").json()["tools"]  # the demo tools, as `run` has them
        assert (tmp_path / "runs" / f"{run['id']}.jsonl").is_file()
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
    assert "serving ReactAgent on http://127.0.0.1" in (tmp_path / "cli.log").read_text()


def test_a_second_server_on_the_same_journal_folder_is_refused(server: Server, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    other = Server(tmp_path / "other", journal_dir=server.journal_dir)
    with pytest.raises(AssertionError, match="another server uses the journal folder"):
        other.start()


def test_a_thread_carries_the_conversation(server: Server) -> None:
    with server.client() as client:
        first = server.run(client, "TASK[add 2]", thread_id="t-1")
        server.wait_done(client, first)
        second = server.run(client, "TASK[recall x]", thread_id="t-1")
        assert "ANSWER SUM=5" in server.wait_done(client, second)["result"]["output"]
        alone = server.run(client, "TASK[recall x]")
        assert server.wait_done(client, alone)["result"]["output"] == "RECALL []"
        thread = client.get("/runs", params={"thread_id": "t-1"}).json()["runs"]
        assert [r["id"] for r in thread] == [second, first]


def test_bad_requests_are_refused_with_their_reason(server: Server) -> None:
    with server.client() as client:
        assert client.post("/runs", json={"task": ""}).status_code == 422
        assert client.post("/runs", json={"task": "x", "colour": "red"}).status_code == 422
        assert client.post("/runs", json={"task": ["x"]}).status_code == 422
        broken = client.post("/runs", content=b"{not json", headers={"content-type": "application/json"})
        assert broken.status_code == 422
        assert client.get("/runs/no-such-run").status_code == 404
        assert client.get("/runs/no-such-run/events").status_code == 404
        assert client.post("/runs/no-such-run/approval", json={"approved": True}).status_code == 404
        assert client.get("/runs?limit=0").status_code == 422
        assert client.get("/static/../_app.py").status_code == 404
        assert client.get("/static/view.html.jinja").status_code == 404
        assert client.post("/runs", json={"task": "x" * 100_001}).status_code == 422
        assert client.post("/runs", json={"task": "x", "session": {"a": {"b": [1]}}}).status_code == 422
        assert client.post("/runs", json={"task": "x", "thread_id": ""}).status_code == 422
        assert client.post("/runs/x/approval", json={"approved": "maybe"}).status_code == 422
        run_id = server.run(client, "TASK[add 1]")
        server.wait_done(client, run_id)
        for last_id in ("not a number", "-3", "-1"):
            events = [e for e, _ in sse_events(client, run_id, headers={"Last-Event-ID": last_id})]
            assert events == ["queued", "started", "step", "step", "result"], last_id
        for messages in ([{"role": "system", "content": "be brief"}], [{"role": "assistant", "content": "hi"}],
                         [{"role": "user", "content": "x" * 100_001}], [{"role": "user", "content": "  "}]):
            refused = client.post("/v1/chat/completions", json={"messages": messages})
            assert refused.status_code == 400 and "user message" in refused.json()["detail"]


def test_requests_without_the_token_are_refused_and_with_it_accepted(tmp_path: Path) -> None:
    server = Server(tmp_path, "--token-env", "SERVE_TOKEN", env={"SERVE_TOKEN": TOKEN}, token=TOKEN).start()
    try:
        for headers in ({}, {"Authorization": "Bearer wrong-token-123"}, {"Authorization": TOKEN},
                        {"Authorization": f"Basic {TOKEN}"}):
            with httpx.Client(base_url=server.url, headers=headers) as anonymous:
                for method, path in (("GET", "/runs"), ("POST", "/runs"), ("GET", "/info"),
                                     ("POST", "/v1/chat/completions"), ("GET", "/v1/models")):
                    response = anonymous.request(method, path, json={"task": "TASK[add 1]"})
                    assert response.status_code == 401, (headers, path)
                    assert response.headers["www-authenticate"] == "Bearer"
        with httpx.Client(base_url=server.url) as anonymous:  # the page itself holds no data
            assert anonymous.get("/").status_code == 200
            assert 'data-auth="true"' in anonymous.get("/").text
            assert anonymous.get("/healthz").status_code == 200
        with server.client() as client:
            run_id = server.run(client, "TASK[add 1]")
            assert server.wait_done(client, run_id)["result"]["output"] == "ANSWER SUM=4"
    finally:
        server.stop()


def test_no_secret_reaches_any_response(tmp_path: Path) -> None:
    key = "sk-live-9d8c7b6a5f4e3d2c1b0a"
    server = Server(tmp_path, "--token-env", "SERVE_TOKEN", "--secret-model",
                    env={"SERVE_TOKEN": TOKEN, "WORKER_MODEL_KEY": key}, token=TOKEN).start()
    try:
        texts = []
        with server.client() as client:
            run_id = server.run(client, f"TASK[add 1] my key is {key} and the token {TOKEN}")
            run = server.wait_done(client, run_id)
            assert run["status"] == "error" and run["result"]["error"]
            for path in (f"/runs/{run_id}", "/runs", "/info", "/", "/v1/models"):
                response = client.get(path)
                texts.append(response.text + json.dumps(dict(response.headers)))
            texts += [json.dumps(d) for _, d in sse_events(client, run_id)]
            texts.append(client.post("/v1/chat/completions", json={"messages": [
                {"role": "user", "content": f"TASK[add 2] {key}"}]}).text)
            invalid = client.post("/runs", json={"task": 1, "session": {"token": {"value": TOKEN}}, "key": key})
            assert invalid.status_code == 422 and invalid.json()["detail"]
            texts.append(invalid.text)
        with httpx.Client(base_url=server.url) as anonymous:
            texts.append(anonymous.get("/runs").text)
        assert "***" in texts[0]  # the task's copy of the key is masked too
        for text in texts:
            assert key not in text and TOKEN not in text
    finally:
        server.stop()


def test_chat_openai_talks_to_the_agent_through_the_facade(tmp_path: Path) -> None:
    openai = pytest.importorskip("langchain_openai")
    server = Server(tmp_path, "--token-env", "SERVE_TOKEN", env={"SERVE_TOKEN": TOKEN}, token=TOKEN).start()
    try:
        llm = openai.ChatOpenAI(base_url=f"{server.url}/v1", api_key=TOKEN, model="ReactAgent", max_retries=0)
        message = llm.invoke("TASK[add 2]")
        assert message.content == "ANSWER SUM=5"
        assert message.usage_metadata["total_tokens"] > 0
        streamed = "".join(str(chunk.content) for chunk in llm.stream("TASK[add 10]"))
        assert streamed == "ANSWER SUM=13"
        history = llm.invoke([("user", "TASK[add 2]"), ("assistant", "ANSWER SUM=5"), ("user", "TASK[recall y]")])
        assert "ANSWER SUM=5" in history.content
        refused = openai.ChatOpenAI(base_url=f"{server.url}/v1", api_key="not-the-token", model="x", max_retries=0)
        with pytest.raises(Exception, match="401"):
            refused.invoke("TASK[add 1]")
    finally:
        server.stop()


# -------------------------------------------------------------------------------------------- in process
def test_a_reachable_address_without_a_token_is_refused() -> None:
    from react_agent.serve import check_binding, serve

    agent = ReactAgent(ScriptedChatModel([]), [])
    for host in ("0.0.0.0", "192.168.1.10", "::", "example.org"):
        with pytest.raises(ConfigError, match="--token-env"):
            check_binding(host, None)
    with pytest.raises(ConfigError, match="without a token"):
        serve(agent, host="0.0.0.0", port=1)
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        check_binding(host, None)
    check_binding("0.0.0.0", TOKEN)


def test_the_cli_refuses_a_reachable_address_without_a_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    from react_agent.cli import main

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"action": "FINISH", "action_input": "hi"}]))
    code = main(["serve", "--host", "0.0.0.0", "--model", f"scripted:{script}", "--journal-dir", str(tmp_path / "r")])
    assert code == 2
    assert "--token-env" in capsys.readouterr().err
    code = main(["serve", "--token-env", "SERVE_NO_SUCH_VAR", "--model", f"scripted:{script}"])
    assert code == 2
    assert "SERVE_NO_SUCH_VAR" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "value", "message"), [
    ("max_concurrency", 0, "max_concurrency must be a positive integer"),
    ("max_concurrency", "4", "max_concurrency must be a positive integer"),
    ("max_queue", True, "max_queue must be a positive integer"),
    ("approval_timeout", -1, "approval_timeout must be a positive number"),
    ("approval", "yes", "approval must be 'page' or 'agent'"),
    ("token", "short", "token must be a string of at least 8"),
    ("token", 12345678, "token must be a string of at least 8"),
    ("lang", "de", "lang must be 'en' or 'ru'"),
    ("journal_dir", 3, "journal_dir must be the path of a folder"),
    ("journal_dir", "", "journal_dir must be the path of a folder"),  # not the current folder
    ("approval_timeout", float("nan"), "approval_timeout must be a positive number"),
])
def test_wrong_options_raise_config_error_naming_them(tmp_path: Path, option: str, value: object,
                                                      message: str) -> None:
    from react_agent.serve import create_app

    agent = ReactAgent(ScriptedChatModel([]), [])
    options = {"journal_dir": tmp_path / "runs", option: value}
    with pytest.raises(ConfigError, match=message):
        create_app(agent, **options)  # type: ignore[arg-type]


def test_something_else_than_an_agent_is_refused(tmp_path: Path) -> None:
    from react_agent.serve import create_app

    with pytest.raises(ConfigError, match="serve needs an agent"):
        create_app("ReactAgent", journal_dir=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="serve needs an agent"):
        create_app(lambda: None, journal_dir=tmp_path)  # type: ignore[arg-type,return-value]
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="is a file"):
        create_app(ReactAgent(ScriptedChatModel([]), []), journal_dir=tmp_path / "file")


def _refund_agent(approve: object) -> tuple[ReactAgent, list[str]]:
    from langchain_core.tools import StructuredTool

    ran: list[str] = []

    def refund(order: str) -> str:
        """Refund an order."""
        ran.append(order)
        return f"REFUNDED-{order}"

    llm = ScriptedChatModel(['{"action": "refund", "action_input": {"order": "8"}}',
                             '{"action": "FINISH", "action_input": "done"}'])
    tool = StructuredTool.from_function(refund, metadata={"requires_approval": True})
    return ReactAgent(llm, [tool], prompts="en", approve=approve), ran


def test_approval_by_the_agent_keeps_its_own_approve(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from react_agent.serve import create_app

    asked: list[str] = []
    agent, ran = _refund_agent(lambda tool, args: asked.append(tool) or True)
    with TestClient(create_app(agent, journal_dir=tmp_path, approval="agent")) as client:
        run = client.post("/runs?wait=true", json={"task": "refund 8"}).json()
    assert run["result"]["output"] == "done"
    assert asked == ["refund"] and ran == ["8"]
    assert next(e for e in read_journal(tmp_path / f"{run['id']}.jsonl") if e["type"] == "approval")["approved"]


def test_approval_by_the_page_replaces_the_agents_approve(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from react_agent.serve import create_app

    agent, ran = _refund_agent(lambda tool, args: True)
    with TestClient(create_app(agent, journal_dir=tmp_path, approval_timeout=0.2)) as client:
        run = client.post("/runs?wait=true", json={"task": "refund 8"}).json()
    assert "was not approved" in run["steps"][0]["observation"]  # nobody answered: refused
    assert ran == []


def test_the_serve_command_refuses_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from react_agent.cli import main

    script = tmp_path / "replies.json"
    script.write_text("[]")
    assert main(["serve", "--model", f"scripted:{script}", "--trace", str(tmp_path / "t.jsonl")]) == 2
    assert "--journal-dir" in capsys.readouterr().err


def test_the_folder_is_read_back_whatever_a_crash_left_in_it(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from react_agent.serve import create_app

    def meta(run_id: str, task: str, at: float) -> None:
        (tmp_path / f"{run_id}.run.json").write_text(json.dumps({"id": run_id, "task": task, "thread_id": None,
                                                                 "created_at": at}))

    never_started = "00000000-0000-4000-8000-000000000001"
    corrupt = "00000000-0000-4000-8000-000000000002"
    meta(never_started, "asked before the crash", 1.0)
    meta(corrupt, "its journal is corrupt", 2.0)
    (tmp_path / f"{corrupt}.jsonl").write_text('{"type": "run", "run": "x"}\nnot json\n{"type": "end"}\n')
    (tmp_path / "broken.run.json").write_text("{not json")
    llm = ScriptedChatModel(['{"action": "FINISH", "action_input": "done after the restart"}'])
    with TestClient(create_app(ReactAgent(llm, [], prompts="en"), journal_dir=tmp_path)) as client:
        started = poll(lambda: (lambda r: r if r["result"] else None)(client.get(f"/runs/{never_started}").json()),
                       "the run asked before the crash")
        assert started["result"]["output"] == "done after the restart"
        broken = client.get(f"/runs/{corrupt}").json()
        assert broken["status"] == "error" and "line 2 is corrupt" in broken["result"]["error"]
        events = client.get(f"/runs/{corrupt}/events").text
        assert "event: result" in events and "corrupt" in events
        assert sorted(r["id"] for r in client.get("/runs").json()["runs"]) == [never_started, corrupt]
