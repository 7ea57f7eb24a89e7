"""Confined file reading: the ``read_file`` tool.

It reads a UTF-8 text file under one root folder; ``..``, absolute paths and symlinks that lead outside the
root are refused, large files are truncated with a marker.
"""

from __future__ import annotations

import codecs
import logging
import os
import stat
from pathlib import Path

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from react_agent.demo._common import DemoToolError, Lang, check_lang, demo_strings, make_tool
from react_agent.errors import ConfigError

__all__ = ["MAX_FILE_BYTES", "FileAccessError", "make_read_file_tool"]

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 100_000
"""Default number of bytes ``read_file`` returns; longer files are truncated with a marker."""


class FileAccessError(DemoToolError):
    """A path ``read_file`` refuses or cannot read."""


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _read_confined(root: Path, relative: str, max_bytes: int) -> tuple[str, int, bool]:
    """Read ``relative`` under ``root`` (already resolved); return (text, size, truncated)."""
    if not relative.strip():
        raise FileAccessError("file_empty_path")
    shown_path = relative[:200]
    if "\x00" in relative:
        raise FileAccessError("file_invalid_path", path=shown_path.replace("\x00", "\\0"))
    candidate = root / relative  # an absolute ``relative`` replaces the root, and is checked below
    # Decide "outside" before "missing", so that probing paths outside the root learns nothing.
    if not _is_within(Path(os.path.realpath(candidate)), root):
        logger.info("read_file refused %r: outside %s", relative, root)
        raise FileAccessError("file_outside", path=shown_path)
    try:
        resolved = candidate.resolve(strict=True)
    except FileNotFoundError:
        raise FileAccessError("file_not_found", path=shown_path) from None
    except (OSError, RuntimeError) as exc:  # symlink loops, permissions, names too long
        detail = getattr(exc, "strerror", None) or "symbolic link loop"
        raise FileAccessError("file_unreadable", path=shown_path, detail=detail) from None
    if not _is_within(resolved, root):
        logger.info("read_file refused %r: outside %s", relative, root)
        raise FileAccessError("file_outside", path=shown_path)
    # O_NOFOLLOW: the last component must not have become a symlink since it was resolved;
    # O_NONBLOCK: opening a FIFO must not hang (it is then refused as "not a regular file").
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(resolved, flags)
    except OSError as exc:
        detail = exc.strerror or type(exc).__name__
        raise FileAccessError("file_unreadable", path=shown_path, detail=detail) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileAccessError("file_is_dir", path=shown_path)
        if not stat.S_ISREG(info.st_mode):
            raise FileAccessError("file_not_regular", path=shown_path)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    if truncated:
        # Drop a multi-byte character cut in half at the limit instead of showing a replacement char.
        text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data[:max_bytes], final=False)
    else:
        text = data.decode("utf-8", errors="replace")
    return text, max(info.st_size, len(data)), truncated


class _ReadFileArgs(BaseModel):  # the description comes from strings/<lang>.json
    path: str = Field(examples=["notes.txt"])


def make_read_file_tool(
    root: str | os.PathLike[str], *, lang: Lang = "ru", max_bytes: int = MAX_FILE_BYTES
) -> BaseTool:
    """The ``read_file`` tool confined to the folder ``root``: arg ``path`` (relative to ``root``).

    The path is resolved with every symlink followed and must stay inside the (resolved) root:
    ``..``, absolute paths elsewhere, symlinks and symlinked folders pointing outside are refused,
    as are directories and non-regular files. The content is decoded as UTF-8 (invalid bytes become
    U+FFFD); a file longer than ``max_bytes`` is cut there and a ``[... truncated ...]`` marker line
    is appended. The root must exist when the tool is made (:class:`ConfigError` otherwise).
    Assumes nobody swaps folders inside the root for symlinks while a read is in progress.
    """
    lang = check_lang(lang)
    if max_bytes < 1:
        raise ConfigError(f"max_bytes must be positive, got {max_bytes}")
    try:
        resolved_root = Path(root).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"read_file root {os.fspath(root)!r} does not exist: {exc}") from exc
    if not resolved_root.is_dir():
        raise ConfigError(f"read_file root {os.fspath(root)!r} is not a directory")

    def read_file(path: str) -> str:
        try:
            text, size, truncated = _read_confined(resolved_root, path, max_bytes)
        except DemoToolError as exc:
            raise exc.localized(lang) from None
        texts = demo_strings(lang).results
        if truncated:
            return text + "\n" + texts["file_truncated"].format(shown=max_bytes, size=size)
        return text if text else texts["file_empty"]

    return make_tool("read_file", lang, read_file, _ReadFileArgs)

