"""Which structured output an OpenAI-compatible server accepts, asked once per server.

A ``ChatOpenAI`` pointed at a server that is not OpenAI's says nothing of the server's family, and the
families disagree (module ``_structured``). :func:`server_mode` asks the server, with side-effect free
``GET`` requests and a short timeout, once per base URL in a process:

* ``GET {base}/models``: the ``owned_by`` of the served model names the family: ``"me"`` is
  llama-cpp-python's server (``"json_object"``), ``"llamacpp"`` llama.cpp's ``llama-server``, ``"vllm"``
  vLLM, ``"library"`` Ollama, ``"organization_owner"`` LM Studio (``"json_schema"``);
* else ``GET {root}/props`` (only ``llama-server`` has it: ``"json_schema"``) and ``GET {root}/openapi.json``
  (llama-cpp-python's FastAPI app titles itself "llama.cpp Python API": ``"json_object"``).

An unknown family gets ``None`` and ONE warning naming the fix (``constrained=...``); an unreachable
server gets ``None`` quietly (the run's first call then fails with the reason).
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

__all__ = ["PROBE_TIMEOUT", "server_mode"]

logger = logging.getLogger("react_agent")

PROBE_TIMEOUT = 2.0
"""Seconds each probe request may take."""

_OWNERS: dict[str, Literal["json_schema", "json_object"]] = {
    "me": "json_object", "llamacpp": "json_schema", "vllm": "json_schema", "library": "json_schema",
    "organization_owner": "json_schema"}
_MAX_BODY = 1 << 20

_KNOWN: dict[str, Literal["json_schema", "json_object"] | None] = {}
_LOCK = threading.Lock()


def server_mode(base_url: str, api_key: str | None = None) -> Literal["json_schema", "json_object"] | None:
    """The structured-output mode the server at ``base_url`` accepts, or ``None`` (unknown or unreachable);
    asked once per base URL (module docstring)."""
    key = base_url.rstrip("/")
    with _LOCK:
        if key in _KNOWN:
            return _KNOWN[key]
    mode, reachable = _ask(key, api_key)
    if mode is None and reachable:
        logger.warning("constrained decoding is off for the OpenAI-compatible server at %s: its family is "
                       "unknown. Pass constrained='json_schema' (vLLM, llama-server, LM Studio, Ollama) or "
                       "constrained='json_object' (llama-cpp-python's server); constrained=False silences this",
                       key)
    elif mode is not None:
        logger.info("the server at %s accepts constrained decoding as %r", key, mode)
    with _LOCK:
        _KNOWN.setdefault(key, mode)
        return _KNOWN[key]


def _ask(base: str, api_key: str | None) -> tuple[Literal["json_schema", "json_object"] | None, bool]:
    """(mode, whether the server answered at all)."""
    status, models = _get(f"{base}/models", api_key)
    if status is None:
        return None, False
    owners = [item.get("owned_by") for item in (models or {}).get("data") or [] if isinstance(item, dict)]
    for owner in owners:
        if isinstance(owner, str) and owner in _OWNERS:
            return _OWNERS[owner], True
    root = _root(base)
    if _get(f"{root}/props", api_key)[0] == 200:
        return "json_schema", True
    status, spec = _get(f"{root}/openapi.json", api_key)
    title = str(((spec or {}).get("info") or {}).get("title", "")) if isinstance(spec, dict) else ""
    if "llama.cpp python" in title.lower():
        return "json_object", True
    return None, True


def _root(base: str) -> str:
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def _get(url: str, api_key: str | None) -> tuple[int | None, Any]:
    """(HTTP status, decoded JSON body or None); status ``None`` when the server did not answer."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT) as response:
            body = response.read(_MAX_BODY)
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code), None
    except (OSError, ValueError) as exc:  # refused, timed out, not HTTP, a bad URL
        logger.debug("structured-output probe of %s failed: %s", url, type(exc).__name__)
        return None, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None
