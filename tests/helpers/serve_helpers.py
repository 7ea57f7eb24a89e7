"""Start and stop a real `serve` process (tests/helpers/serve_worker.py) on a free loopback port, and poll it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("serve_worker.py")
TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def poll(check: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    """``check()`` until it returns something truthy (errors count as not yet), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (httpx.HTTPError, OSError, ValueError) as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


class Server:
    """One server process; ``headers`` carry the token when there is one."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None, token: str | None = None,
                 journal_dir: Path | None = None, port: int | None = None) -> None:
        self.tmp = tmp
        self.state = tmp / "state"
        self.state.mkdir(exist_ok=True)
        self.journal_dir = journal_dir or tmp / "runs"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self.args = args
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None
        self.log = tmp / f"server-{self.port}.log"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def start(self) -> Server:
        command = [sys.executable, str(WORKER), str(self.port), str(self.journal_dir), str(self.state), *self.args]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        poll(self._healthy, f"the server on port {self.port} (log: {self.log})")
        return self

    def _healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the server exited with {self.process.returncode}: {self.log.read_text()}")
        return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200

    def kill(self) -> None:
        """SIGKILL: a crash, nothing cleaned up."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=TIMEOUT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=TIMEOUT)

    def run(self, client: httpx.Client, task: str, **extra: Any) -> str:
        response = client.post("/runs", json={"task": task, **extra})
        assert response.status_code == 202, response.text
        return str(response.json()["id"])

    def wait_done(self, client: httpx.Client, run_id: str) -> dict[str, Any]:
        return poll(lambda: (lambda r: r if r["result"] else None)(client.get(f"/runs/{run_id}").json()),
                    f"run {run_id} to end")

    def release(self, name: str) -> None:
        (self.state / f"release-{name}").touch()

    def invocations(self, kind: str) -> list[str]:
        path = self.state / f"{kind}.log"
        return [line.split()[0] for line in path.read_text().splitlines()] if path.exists() else []


def sse_events(client: httpx.Client, run_id: str, on_event: Callable[[str, dict[str, Any]], None] | None = None,
               headers: dict[str, str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of a run's SSE stream, as they arrive, until the stream ends."""
    with client.stream("GET", f"/runs/{run_id}/events", headers=headers or {}) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        event, data = "message", ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                data += line.split(":", 1)[1].strip()
            elif not line and data:
                parsed = json.loads(data)
                if on_event is not None:
                    on_event(event, parsed)
                yield event, parsed
                event, data = "message", ""
