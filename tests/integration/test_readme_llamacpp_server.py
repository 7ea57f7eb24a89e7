"""The README's command for a model behind an OpenAI-compatible server, run as written against a real
llama.cpp server on loopback (llama-cpp-python's ``python -m llama_cpp.server`` with the embedded Gemma 3
270M): constrained decoding is found by asking the server, so every reply parses and the run finishes.

Marked ``local_model``: it needs the ``local``, ``server`` and ``openai`` extras and the default weights.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def _default_weights_missing() -> list[str]:
    """The default model's chunk packages that are not installed (their metadata, never their code)."""
    from importlib.metadata import PackageNotFoundError, distribution

    from react_agent.models import CATALOG, DEFAULT_LOCAL_MODEL

    missing = []
    for package in CATALOG[DEFAULT_LOCAL_MODEL].packages:
        try:
            distribution(package)
        except PackageNotFoundError:
            missing.append(package)
    return missing

_MISSING = [name for name in ("llama_cpp", "langchain_openai", "fastapi", "uvicorn", "sse_starlette",
                              "starlette_context", "pydantic_settings")
            if importlib.util.find_spec(name) is None] + _default_weights_missing()
pytestmark = [pytest.mark.local_model,
              pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {', '.join(_MISSING)}")]

ROOT = Path(__file__).resolve().parents[2]
TOOLS = '''from langchain_core.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


tools = [add]
'''
EXAMPLES = [
    {"task": "What is 3 + 4?", "steps": [],
     "answer": {"thought": "I add the numbers", "action": "add", "action_input": {"a": 3, "b": 4}}},
    {"task": "What is 3 + 4?", "steps": [{"thought": "I add the numbers", "action": "add",
                                          "action_input": {"a": 3, "b": 4}, "observation": "7"}],
     "answer": {"thought": "I have the sum", "action": "FINISH", "action_input": "3 + 4 = 7"}},
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from react_agent.models import default_model_path

    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", default_model_path(),
                                    "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
                                   stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    pytest.fail(f"llama_cpp.server exited: {log.read().decode()[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/models", timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail("llama_cpp.server not ready after 120 s")
                    time.sleep(0.25)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_readme_openai_command_runs_green_on_a_llama_cpp_server(server: str, tmp_path: Path) -> None:
    """react-agent run "What is 2 + 40?" --tools my_tools:tools --model openai:qwen3 --base-url URL, with the
    small model's compact prompts, worked examples and the history as chat turns: exit 0 and the sum on stdout."""
    (tmp_path / "my_tools.py").write_text(TOOLS)
    (tmp_path / "examples.json").write_text(json.dumps(EXAMPLES))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "not-needed", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "react_agent.cli", "run", "What is 2 + 40?", "--tools", "my_tools:tools",
         "--model", "openai:qwen3", "--base-url", server, "--prompts", "en-compact", "--examples", "examples.json",
         "--history-layout", "messages",
         "-o", "temperature=0", "--debug"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "42" in done.stdout
    assert "accepts constrained decoding as 'json_object'" in done.stderr
    assert "unparseable" not in done.stderr
