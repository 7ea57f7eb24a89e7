"""A GGUF file's metadata read in Python: the chat template of a model_path is found without llama.cpp, and a file
that is not a well-formed GGUF has none (no exception)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from react_agent.models import LocalChatModel
from react_agent.models.local._gguf import metadata_string


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf(pairs: list[tuple[str, int, bytes]], *, version: int = 3) -> bytes:
    out = b"GGUF" + struct.pack("<I", version) + struct.pack("<Q", 0) + struct.pack("<Q", len(pairs))
    for key, kind, value in pairs:
        out += _string(key) + struct.pack("<I", kind) + value
    return out


TOKENS = struct.pack("<I", 8) + struct.pack("<Q", 3) + b"".join(_string(t) for t in ("<s>", "a", "b"))
SCORES = struct.pack("<I", 6) + struct.pack("<Q", 3) + struct.pack("<3f", 0.0, 1.0, 2.0)
PAIRS = [("general.architecture", 8, _string("qwen2")), ("qwen2.block_count", 4, struct.pack("<I", 28)),
         ("general.flag", 7, b"\x01"), ("tokenizer.ggml.tokens", 9, TOKENS), ("tokenizer.ggml.scores", 9, SCORES),
         ("tokenizer.chat_template", 8, _string("{% for m in messages %}{{ m.content }}{% endfor %}"))]


def test_a_string_after_arrays_and_numbers_is_found(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf(PAIRS))
    assert metadata_string(str(path), "tokenizer.chat_template") == "{% for m in messages %}{{ m.content }}{% endfor %}"
    assert metadata_string(str(path), "general.architecture") == "qwen2"
    assert metadata_string(str(path), "qwen2.block_count") is None  # not a string
    assert metadata_string(str(path), "missing") is None


@pytest.mark.parametrize("data", [
    b"", b"not a gguf at all", b"GGUF" + struct.pack("<I", 99),
    gguf(PAIRS)[:60],                                                      # cut
    gguf([("k", 8, struct.pack("<Q", 10**12))]),                           # a length past the end
    gguf([("k", 42, b"")]),                                                # an unknown type
    gguf([("k", 9, (struct.pack("<I", 9) + struct.pack("<Q", 1)) * 5000 + struct.pack("<I", 4) + struct.pack("<Q", 0)),
          *PAIRS]),                                                        # arrays nested 5,000 deep
])
def test_anything_else_has_no_metadata(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    assert metadata_string(str(path), "tokenizer.chat_template") is None
    assert metadata_string(str(tmp_path / "absent.gguf"), "tokenizer.chat_template") is None


@pytest.mark.parametrize(("pairs", "profile"), [(PAIRS, "chat"), (PAIRS[:-1], "compact")])
def test_a_model_paths_profile_comes_from_its_metadata(tmp_path: Path, pairs: Any, profile: str) -> None:
    path = tmp_path / f"own-{profile}.gguf"
    path.write_bytes(gguf(pairs))
    assert LocalChatModel(model_path=str(path)).agent_profile == profile
    assert LocalChatModel(model_path=str(tmp_path / "not-there.gguf")).agent_profile == "compact"
