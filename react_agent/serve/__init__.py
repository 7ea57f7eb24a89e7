"""Serve an agent over HTTP with a live page (``serve``, ``create_app``: the optional ``serve`` extra,
FastAPI and uvicorn), and draw any run, batch or evaluation as one self-contained HTML file
(``write_view``). docs/serving.md documents both.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from react_agent.serve._view import write_view

if TYPE_CHECKING:
    from react_agent.serve._app import check_binding, create_app, serve

__all__ = ["check_binding", "create_app", "serve", "write_view"]

_SERVER_NAMES = ("check_binding", "create_app", "serve")


def __getattr__(name: str) -> Any:
    """The server's names, imported on first use (they need FastAPI; ``write_view`` does not)."""
    if name in _SERVER_NAMES:
        return getattr(importlib.import_module("react_agent.serve._app"), name)
    raise AttributeError(f"module 'react_agent.serve' has no attribute {name!r}")
