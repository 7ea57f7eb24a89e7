"""llama.cpp's own log lines (model loading, cache notes such as ``llama_kv_cache_iswa: using full-size SWA
cache``) go to :mod:`logging` instead of stderr: logger ``react_agent.models.local.llama_cpp``, at DEBUG (at
INFO for a model loaded with ``verbose=True``, which also writes them to stderr as llama-cpp-python does).

llama-cpp-python's own log callback maps an older ggml level enum, so a llama.cpp warning passes its
"errors only" filter and lands on stderr on every run; :func:`route_llama_logs` replaces it through the
public ``llama_cpp.llama_log_set``.
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
from typing import Any

__all__ = ["forward_llama_log", "route_llama_logs"]

logger = logging.getLogger("react_agent.models.local.llama_cpp")

_LOCK = threading.Lock()
_routed: list[Any] = []  # the ctypes callback, kept alive as long as llama.cpp may call it
_echo = threading.Event()  # a verbose=True model was loaded: llama.cpp's lines go to stderr too


def forward_llama_log(level: int, text: bytes | None, user_data: Any = None) -> None:
    """The log callback: one llama.cpp log text (a line, or a piece of one) to :data:`logger`."""
    try:
        message = (text or b"").decode("utf-8", "replace")
        if _echo.is_set():
            sys.stderr.write(message)
            sys.stderr.flush()
        if message.strip():
            logger.log(logging.INFO if _echo.is_set() else logging.DEBUG, "%s", message.rstrip("\n"))
    except Exception:  # an exception must not cross back into C
        return


def route_llama_logs(llama_cpp: Any, *, verbose: bool = False) -> None:
    """Send llama.cpp's log output to :func:`forward_llama_log` (once per process; ``verbose`` echoes it)."""
    if verbose:
        _echo.set()
    with _LOCK:
        if _routed:
            return
        callback = llama_cpp.llama_log_callback(forward_llama_log)
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
        _routed.append(callback)
