"""A GGUF file's metadata read in Python, without llama.cpp: whether the weights bring a chat template.

The GGUF header is ``GGUF``, a version (2 or 3), the tensor and key/value counts, then the key/value pairs
(a key string, a type code, the value). :func:`metadata_string` walks the pairs and returns one string value;
anything that is not a well-formed GGUF (another file, a cut one, lengths past the end) gives ``None``.
"""

from __future__ import annotations

import os
import struct
from typing import BinaryIO

__all__ = ["metadata_string"]

_MAGIC = b"GGUF"
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # type code -> size in bytes
_STRING, _ARRAY = 8, 9
MAX_ARRAY_DEPTH = 16
"""Arrays nested deeper than this make a file malformed (real files nest one or two; twelve bytes a level would
otherwise let a small file exhaust the stack)."""


class _Malformed(Exception):
    pass


def _read(f: BinaryIO, n: int, size: int) -> bytes:
    if n < 0 or f.tell() + n > size:
        raise _Malformed
    data = f.read(n)
    if len(data) != n:
        raise _Malformed
    return data


def _u32(f: BinaryIO, size: int) -> int:
    return int(struct.unpack("<I", _read(f, 4, size))[0])


def _u64(f: BinaryIO, size: int) -> int:
    return int(struct.unpack("<Q", _read(f, 8, size))[0])


def _string(f: BinaryIO, size: int) -> bytes:
    return _read(f, _u64(f, size), size)


def _skip(f: BinaryIO, kind: int, size: int, depth: int = 0) -> None:
    if depth > MAX_ARRAY_DEPTH:
        raise _Malformed
    if kind in _FIXED:
        f.seek(_FIXED[kind], os.SEEK_CUR)
    elif kind == _STRING:
        f.seek(_u64(f, size), os.SEEK_CUR)
    elif kind == _ARRAY:
        inner, count = _u32(f, size), _u64(f, size)
        if inner in _FIXED:
            f.seek(_FIXED[inner] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _skip(f, inner, size, depth + 1)
    else:
        raise _Malformed
    if f.tell() > size:
        raise _Malformed


def metadata_string(path: str, key: str) -> str | None:
    """The string value of ``key`` in the GGUF metadata of the file at ``path``, or ``None`` (no such key, not a
    string, or not a readable GGUF file)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if _read(f, 4, size) != _MAGIC or _u32(f, size) not in (2, 3):
                return None
            _u64(f, size)  # tensors
            pairs = _u64(f, size)
            for _ in range(pairs):
                name = _string(f, size)
                kind = _u32(f, size)
                if name == key.encode():
                    return _string(f, size).decode("utf-8", "replace") if kind == _STRING else None
                _skip(f, kind, size)
    except (OSError, _Malformed, struct.error):
        return None
    return None
