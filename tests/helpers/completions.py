"""A scripted completion function for the embedded model's decoder (``complete(prompt, schema, ...)``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Script:
    """A completion function with scripted outputs; records (prompt, schema, suffix, stop, min_tokens)."""

    def __init__(self, *outputs: str) -> None:
        self.outputs = list(outputs)
        self.calls: list[tuple[str, Mapping[str, Any], str, list[str], int]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append((prompt, schema, suffix, list(stop), min_tokens))
        return self.outputs.pop(0)
