"""llama.cpp's log lines go to logging at DEBUG through the callback react_agent installs (no model needed)."""

from __future__ import annotations

import ctypes
import importlib.util
import logging
from typing import Any

import pytest

from react_agent.models.local import _logs
from react_agent.models.local._logs import forward_llama_log, route_llama_logs

LINE = b"llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194)\n"


def test_a_llama_cpp_line_becomes_a_debug_record_not_stderr(caplog: pytest.LogCaptureFixture,
                                                            capfd: pytest.CaptureFixture[str]) -> None:
    with caplog.at_level(logging.DEBUG, logger="react_agent.models.local.llama_cpp"):
        for level in (1, 2, 3, 4, 5):
            forward_llama_log(level, LINE, None)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.DEBUG, LINE.decode().rstrip())] * 5
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("text", [b"", b"\n", b".", None, b"\xff\xfe broken utf-8\n", b"x" * 100_000])
def test_pieces_empty_and_broken_texts_never_raise(text: bytes | None, caplog: pytest.LogCaptureFixture) -> None:
    """The callback runs inside C: whatever llama.cpp hands it, it returns (progress dots, empty lines, bytes
    that are not UTF-8, a huge line)."""
    with caplog.at_level(logging.DEBUG, logger="react_agent.models.local.llama_cpp"):
        forward_llama_log(3, text, None)
    assert all(r.levelno == logging.DEBUG for r in caplog.records)
    assert len(caplog.records) == (1 if text and text.strip() else 0)


class FakeLlamaCpp:
    """The two public names of llama_cpp the routing uses."""

    def __init__(self) -> None:
        self.installed: list[Any] = []
        self.llama_log_callback = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)

    def llama_log_set(self, callback: Any, user_data: Any) -> None:
        self.installed.append(callback)


def test_the_callback_is_installed_once_and_calls_the_forwarder(monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(_logs, "_routed", [])
    fake = FakeLlamaCpp()
    route_llama_logs(fake)
    route_llama_logs(fake)
    assert len(fake.installed) == 1
    with caplog.at_level(logging.DEBUG, logger="react_agent.models.local.llama_cpp"):
        fake.installed[0](3, LINE, None)  # called as llama.cpp calls it, through ctypes
    assert [r.getMessage() for r in caplog.records] == [LINE.decode().rstrip()]


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_the_real_llama_cpp_accepts_the_callback() -> None:
    """Installed for the rest of the process (as LocalChatModel does): the callback must stay referenced."""
    import llama_cpp

    route_llama_logs(llama_cpp)
    assert len(_logs._routed) == 1
