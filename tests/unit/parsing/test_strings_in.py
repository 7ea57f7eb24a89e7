"""``strings_in``: every string of a decoded value, at any depth, in order; keys and other scalars are not."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from react_agent.parsing import MAX_NESTING, strings_in


@pytest.mark.parametrize(("value", "expected"), [
    ("one", ["one"]),
    ("", [""]),
    ({"a": "x", "b": ["y", {"c": "z"}], "d": 3}, ["x", "y", "z"]),
    ({"key": 1, "other": None, "flag": True, "rate": 0.5}, []),
    (("t", ["u"]), ["t", "u"]),
    (MappingProxyType({"m": "v"}), ["v"]),
    ({"only keys": {}}, []),
    (42, []),
    (None, []),
    ({"bytes": b"raw", "set": {"s"}}, []),
])
def test_strings_in_yields_every_string_value_in_order(value: Any, expected: list[str]) -> None:
    assert list(strings_in(value)) == expected


def test_strings_in_leaves_the_value_unchanged() -> None:
    value = {"a": ["x", {"b": "y"}], "c": ("z",)}
    before = repr(value)
    assert list(strings_in(value)) == ["x", "y", "z"]
    assert repr(value) == before


def test_strings_in_walks_a_deep_value_as_deep_as_the_parser_returns() -> None:
    value: Any = "leaf"
    for _ in range(MAX_NESTING):
        value = {"k": [value]}
    assert list(strings_in(value)) == ["leaf"]
