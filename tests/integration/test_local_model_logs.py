"""A real local run prints nothing of llama.cpp's on stderr (marked ``local_model``: loads Gemma 3 270M)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from react_agent.models.local._weights import weights_installed

ROOT = Path(__file__).resolve().parents[2]
LLAMA_CPP_PREFIXES = ("llama_", "llama_model_loader", "load_tensors", "print_info", "ggml_", "gguf_", "init_")

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"),
    pytest.mark.skipif(not weights_installed(), reason="the default model's weights are not installed"),
]

INVOKE = """
import logging, sys
from react_agent.models import LocalChatModel
if "--debug-log" in sys.argv:
    logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(levelname)s %(name)s: %(message)s")
print(LocalChatModel(max_tokens=4).invoke("Say hi").content)
"""


def invoke(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", INVOKE, *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_local_invoke_writes_no_llama_cpp_line_on_stderr(tmp_path: Path) -> None:
    done = invoke(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert [line for line in done.stderr.splitlines() if line.strip()] == []


def test_llama_cpp_lines_are_debug_records_of_react_agent(tmp_path: Path) -> None:
    done = invoke(tmp_path, "--debug-log")
    assert done.returncode == 0, done.stderr
    ours = [line for line in done.stdout.splitlines() if line.startswith("DEBUG react_agent.models.local.llama_cpp: ")]
    assert any(line.split(": ", 1)[1].startswith(LLAMA_CPP_PREFIXES) for line in ours), done.stdout[-2000:]
    assert done.stderr.strip() == ""
