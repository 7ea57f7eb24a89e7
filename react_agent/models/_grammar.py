"""What llama-cpp-python's JSON-schema-to-GBNF converter writes wrongly, kept out of the schemas it gets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["gbnf_safe_literal", "literal_safe"]

_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_ANY_VALUE = ("string", "number", "boolean", "object", "array", "null")  # as _structured writes "any value"


def gbnf_safe_literal(value: Any) -> bool:
    """Whether llama-cpp-python's converter writes ``value`` (a ``const``, or an ``enum``'s values) as a valid
    GBNF literal: it does not escape the backslash of an escaped quote or backslash, so a string holding ``"``
    or ``\\`` gives a grammar that llama.cpp accepts and then crashes on while sampling."""
    items = value if isinstance(value, list) else [value]
    return not any(isinstance(item, str) and ('"' in item or "\\" in item) for item in items)


def literal_safe(schema: Any) -> Any:
    """``schema`` without the ``const``/``enum`` keywords :func:`gbnf_safe_literal` refuses (the node keeps
    its type, so such a value can still be written, unconstrained; the tool's validation still checks it)."""
    if isinstance(schema, list):
        return [literal_safe(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NAME_MAPS and isinstance(value, Mapping):  # names of properties or definitions, not keywords
            out[key] = {name: literal_safe(sub) for name, sub in value.items()}
        elif key in ("const", "enum"):
            if gbnf_safe_literal(value):
                out[key] = value
        else:
            out[key] = value if key == "required" else literal_safe(value)
    if not out and schema:
        return {"type": list(_ANY_VALUE)}
    return out
