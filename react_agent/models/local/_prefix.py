"""Completions that reuse the evaluated prompt prefix, and say how much they reused.

llama.cpp keeps the key/value cache of the last evaluated tokens; llama-cpp-python's ``Llama`` compares a new
prompt's tokens with them and evaluates only the part after the longest common prefix. So a step whose prompt
starts with the static part (instructions, tools, worked examples) and only adds the new history evaluates
only the new tokens, across the steps and the runs of one agent, and a two-stage answer's second stage
evaluates only the first stage's text. :func:`complete` tokenizes the prompt once, counts the tokens the
cache already holds and passes the tokens on, so the count is the one llama.cpp uses.

The cache holds one context. An agent whose prompts come in families (a planner's and an executor's, an actor's
and a critic's, two agents on one model) would evaluate each family's static part again on every switch, so
:class:`SavedPrefixes` keeps the llama.cpp context data (``llama_state_get_data``) of the last few contexts a
completion was about to overwrite, and loads one back when it shares more of the new prompt than the cache does.

A process starts with an empty cache, so its first step evaluates the whole static part (about 12 s for 850
tokens of the 1.5B model on two cores). Given a folder, :func:`complete` evaluates the static part of an agent's
prompt (what comes before the task) on its own and :class:`DiskPrefixes` keeps its context there; a later process
of the same model loads it instead of evaluating it (llama.cpp's ``--prompt-cache`` does the same for its command
line, with the whole prompt).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import tempfile
import threading
import time
import weakref
from array import array
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from react_agent.models.local._sampling import GrammarFirst
from react_agent.models.local._weights import cache_home

__all__ = ["DiskPrefixes", "PrefixUse", "SavedPrefixes", "complete", "default_prompt_cache_dir", "fits",
           "llama_restore", "llama_snapshot", "prompt_tokens", "saved_prefixes", "static_tokens", "window"]

logger = logging.getLogger(__name__)

MIN_SAVED_TOKENS = 256
"""A context shorter than this is not worth a saved state (evaluating it again costs little)."""
MIN_GAIN_TOKENS = 64
"""A saved state is loaded only when it reuses at least this many more tokens than the cache holds."""
MAX_SAVED = 3
"""Saved states per model (each costs the key/value cache of its tokens in memory)."""
MIN_DISK_TOKENS = 256
"""With a folder: a static part of at least this many tokens that had to be evaluated is kept there, and a kept
context is loaded only when it spares at least this many."""
MAX_DISK = 4
"""Contexts kept on disk per model file and context size, the least recently used deleted first (each holds the
key/value cache of its tokens: about 28 KB a token for the 1.5B model)."""
MAX_DISK_STATE_BYTES = 256 * 2**20
"""A context larger than this is not kept on disk (a large model with a long prompt: writing it would cost more
than it spares, and four of them would fill a disk)."""
STALE_PARTIAL_SECONDS = 600.0
"""A half-written file this old was left by a process that died while writing it, and is deleted."""


class PrefixUse(BaseModel):
    """Prompt tokens of one or more completions: how many were evaluated and how many came from the cache."""

    model_config = ConfigDict(frozen=True)

    evaluated: int = 0
    reused: int = 0

    def __add__(self, other: PrefixUse) -> PrefixUse:
        return PrefixUse(evaluated=self.evaluated + other.evaluated, reused=self.reused + other.reused)


class SavedPrefixes:
    """The saved llama.cpp states of one model: the contexts completions were about to overwrite, newest last.

    ``snapshot(llama) -> state`` and ``restore(llama, tokens, state)`` save and load the model's context holding
    ``tokens`` (for a ``llama_cpp.Llama``: :func:`llama_snapshot` and :func:`llama_restore`). Callers hold the
    model's lock (one completion at a time), as :func:`complete` is called."""

    def __init__(self, snapshot: Callable[[Any], Any], restore: Callable[[Any, list[int], Any], None]) -> None:
        self.snapshot, self.restore = snapshot, restore
        self.states: list[tuple[list[int], Any]] = []

    def prepare(self, llama: Any, held: list[int], tokens: list[int]) -> int:
        """Make the cache hold the longest prefix of ``tokens`` any context offers (the cache's own or a saved
        one) and return its length; a context about to be overwritten is saved first."""
        reused = int(llama.longest_token_prefix(held, tokens))
        best: tuple[list[int], Any] | None = None
        gain = reused + MIN_GAIN_TOKENS
        for entry in self.states:
            shared = int(llama.longest_token_prefix(entry[0], tokens))
            if shared >= gain:
                best, gain = entry, shared
        losing = len(held) - reused
        if len(held) >= MIN_SAVED_TOKENS and (best is not None or losing * 2 > len(held)):
            self._save(llama, held, keep=best)
        if best is None:
            return reused
        self.states = [entry for entry in self.states if entry is not best] + [best]
        self.restore(llama, *best)
        gain = min(gain, len(best[0]) - 1)  # the restored context's last token is evaluated again
        logger.debug("loaded a saved prompt prefix: %d tokens reused instead of %d", gain, reused)
        return gain

    def _save(self, llama: Any, held: list[int], *, keep: tuple[list[int], Any] | None) -> None:
        # a saved context that shares a long prefix with this one is of the same family: the newer one replaces it
        self.states = [entry for entry in self.states
                       if entry is keep or llama.longest_token_prefix(entry[0], held) < MIN_SAVED_TOKENS]
        self.states.append((held, self.snapshot(llama)))
        while len(self.states) > MAX_SAVED:
            index = next(i for i, entry in enumerate(self.states) if entry is not keep)
            del self.states[index]


def llama_snapshot(llama: Any) -> bytes:
    """The context data of a ``llama_cpp.Llama`` (llama.cpp's ``llama_state_get_data``: the key/value cache of its
    evaluated tokens; not ``Llama.save_state``, which also copies a logits buffer of ``n_batch`` x the vocabulary,
    hundreds of megabytes)."""
    import ctypes

    import llama_cpp

    size = llama_cpp.llama_state_get_size(llama.ctx)
    buffer = (ctypes.c_uint8 * int(size))()
    written = llama_cpp.llama_state_get_data(llama.ctx, buffer, size)
    return ctypes.string_at(buffer, int(written))


def llama_restore(llama: Any, tokens: list[int], data: bytes) -> None:
    """Load a :func:`llama_snapshot` of the context holding ``tokens`` back. The last token is left for the next
    completion to evaluate again, so its logits are always fresh."""
    import ctypes

    import llama_cpp

    buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if llama_cpp.llama_state_set_data(llama.ctx, buffer, len(data)) != len(data):
        raise RuntimeError("llama.cpp could not load a saved prompt prefix")
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = max(0, len(tokens) - 1)


_SAVED: weakref.WeakKeyDictionary[Any, SavedPrefixes] = weakref.WeakKeyDictionary()
_SAVED_LOCK = threading.Lock()


def saved_prefixes(llama: Any) -> SavedPrefixes | None:
    """The saved states of a ``llama_cpp.Llama`` (made on first use, gone with the model); ``None`` for any
    other object (a stand-in of the tests)."""
    try:
        from llama_cpp import Llama
    except ImportError:
        return None
    if not isinstance(llama, Llama):
        return None
    with _SAVED_LOCK:
        found = _SAVED.get(llama)
        if found is None:
            found = _SAVED[llama] = SavedPrefixes(llama_snapshot, llama_restore)
        return found


def default_prompt_cache_dir() -> Path:
    """The folder ``react-agent`` commands keep evaluated prompts in: ``$XDG_CACHE_HOME/react-agent/prompts``, else
    ``~/.cache/react-agent/prompts``."""
    return cache_home() / "prompts"


class DiskPrefixes:
    """The contexts of one model kept in a folder for later processes: ``<folder>/<key>/<hash>.state``, the key
    naming the model file (path, size, modification time), the context size and llama-cpp-python's version
    (:meth:`of`). ``snapshot`` and ``restore`` save and load a context as :class:`SavedPrefixes` takes them
    (default: :func:`llama_snapshot` and :func:`llama_restore`).

    A file holds a header (the tokens and the SHA-256 of the state) and llama.cpp's context data; it is written to a
    temporary file and renamed, so a reader sees a whole file or none, and one that does not verify is deleted. The
    folder is a cache: any error reading or writing it is logged and the completion evaluates its prompt as if the
    folder were empty."""

    MAGIC = b"react-agent prompt state 1\n"

    def __init__(self, folder: Path, snapshot: Callable[[Any], bytes] | None = None,
                 restore: Callable[[Any, list[int], bytes], None] | None = None) -> None:
        self.folder = folder
        self.snapshot = snapshot or llama_snapshot
        self.restore_state = restore or llama_restore

    @classmethod
    def of(cls, llama: Any, folder: str | os.PathLike[str]) -> DiskPrefixes:
        """The contexts of the ``llama_cpp.Llama`` ``llama`` in ``folder``."""
        import llama_cpp

        path = Path(llama.model_path).resolve()
        stat = path.stat()
        key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{llama.n_ctx()}|{llama_cpp.__version__}"
        return cls(Path(folder).expanduser() / hashlib.sha256(key.encode("utf-8")).hexdigest()[:16])

    def restore(self, llama: Any, tokens: list[int], reused: int) -> int:
        """Load the kept context that shares the most of ``tokens`` when it spares at least
        :data:`MIN_DISK_TOKENS` more than ``reused`` (the tokens the cache holds); the prefix now held."""
        best: tuple[int, list[int], Path] | None = None
        for path in self._files():
            held = self.held_tokens(path)
            shared = 0 if held is None else int(llama.longest_token_prefix(held, tokens))
            if held is not None and shared >= reused + MIN_DISK_TOKENS and (best is None or shared > best[0]):
                best = (shared, held, path)
        if best is None:
            return reused
        shared, held, path = best
        data = self._state(path)
        if data is None:
            return reused
        try:
            self.restore_state(llama, held, data)
        except (RuntimeError, ValueError):  # llama.cpp refused it, or its tokens do not fit this context
            logger.warning("the prompt state %s did not load; it is deleted and the prompt evaluated", path)
            llama.n_tokens = 0  # the context may be half overwritten: the next evaluation starts from nothing
            self._delete(path)
            return 0
        with _quiet(path, "touch"):
            os.utime(path)
        logger.debug("loaded a prompt state from %s: %d tokens reused", path, shared)
        return min(shared, len(held) - 1)

    def save(self, llama: Any) -> None:
        """Keep the context ``llama`` holds now, then delete the least recently used beyond :data:`MAX_DISK`."""
        held = [int(t) for t in llama.input_ids[: llama.n_tokens]]
        data = self.snapshot(llama)
        if len(data) > MAX_DISK_STATE_BYTES:
            logger.debug("a prompt state of %d bytes is not kept on disk", len(data))
            return
        tokens = array("i", held).tobytes()
        name = hashlib.sha256(tokens).hexdigest()[:32] + ".state"
        with _quiet(self.folder, "write"):
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".partial")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(self.MAGIC + struct.pack("<Q", len(held)) + hashlib.sha256(data).digest())
                    out.write(tokens)
                    out.write(data)
                os.replace(temporary, self.folder / name)
            finally:
                if os.path.exists(temporary):
                    os.unlink(temporary)
            logger.debug("kept a prompt state of %d tokens in %s", len(held), self.folder / name)
        for stale in self._files()[MAX_DISK:]:
            self._delete(stale)
        with _quiet(self.folder, "list"):
            for partial in self.folder.glob("*.partial"):
                with _quiet(partial, "read"):
                    if time.time() - partial.stat().st_mtime > STALE_PARTIAL_SECONDS:
                        self._delete(partial)

    def _files(self) -> list[Path]:
        """The kept contexts, the most recently used first."""
        dated: list[tuple[int, Path]] = []
        with _quiet(self.folder, "list"):
            for path in self.folder.glob("*.state"):
                with _quiet(path, "read"):
                    dated.append((path.stat().st_mtime_ns, path))
        return [path for _, path in sorted(dated, key=lambda item: item[0], reverse=True)]

    def _header(self, stream: Any) -> tuple[list[int], bytes] | None:
        head = stream.read(len(self.MAGIC) + 8 + 32)
        if len(head) != len(self.MAGIC) + 40 or not head.startswith(self.MAGIC):
            return None
        (count,) = struct.unpack("<Q", head[len(self.MAGIC):len(self.MAGIC) + 8])
        if 4 * count > os.fstat(stream.fileno()).st_size - len(head):
            return None  # more tokens than the file holds (a damaged count): not read, not allocated
        raw = stream.read(4 * count)
        if len(raw) != 4 * count:
            return None
        return array("i", raw).tolist(), head[-32:]

    def held_tokens(self, path: Path) -> list[int] | None:
        """The tokens whose context the file at ``path`` holds; ``None`` (and the file deleted) when it is not one."""
        with _quiet(path, "read"), path.open("rb") as stream:
            header = self._header(stream)
            if header is None:
                self._delete(path)
                return None
            return header[0]
        return None

    def _state(self, path: Path) -> bytes | None:
        with _quiet(path, "read"), path.open("rb") as stream:
            header = self._header(stream)
            data = stream.read()
            if header is None or hashlib.sha256(data).digest() != header[1]:
                logger.warning("the prompt state %s is damaged; it is deleted", path)
                self._delete(path)
                return None
            return data
        return None

    @staticmethod
    def _delete(path: Path) -> None:
        with _quiet(path, "delete"):
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def _quiet(path: Path, doing: str) -> Iterator[None]:
    """Log an ``OSError`` of the prompt-state folder and go on (it is a cache)."""
    try:
        yield
    except OSError as error:
        logger.warning("prompt state folder: cannot %s %s: %s", doing, path, error)


def complete(llama: Any, prompt: str, *, grammar: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
             task: str = "", begun: str = "", **options: Any) -> tuple[dict[str, Any], PrefixUse]:
    """``llama.create_completion`` of ``prompt`` (special tokens of a chat template read as such) and the prefix
    it reused (from the cache, a saved state loaded back: :class:`SavedPrefixes`, or one kept in ``cache_dir``:
    :class:`DiskPrefixes`). ``grammar``: GBNF text the output must match; greedy decoding on a ``llama_cpp.Llama``
    checks the top token first (:class:`~react_agent.models.local._sampling.GrammarFirst`), anything else gets
    llama-cpp-python's ``grammar=``.

    With ``cache_dir``, the part of the prompt before ``task`` (instructions, tools, worked examples: no task, no
    history, no tool result) is evaluated first and kept there when it is long and no kept context has it.

    ``begun``: the output's start that ``prompt`` ends with (text written, not decoded): the grammar reads it before
    the first token; greedy decoding on a ``llama_cpp.Llama`` only (:func:`can_begin`), a ``ValueError`` otherwise
    or when the grammar does not allow it."""
    saved = saved_prefixes(llama)
    real = saved is not None  # a llama_cpp.Llama, not a stand-in of the tests
    greedy = _greedy(saved, options)
    if begun and (grammar is None or not greedy):
        raise ValueError("an output begun as written text needs a grammar and greedy decoding on a llama_cpp.Llama")
    begun_tokens = _written_tokens(llama, begun) if begun else []
    tokens = prompt_tokens(llama, prompt)
    fits(llama, len(tokens))
    held = [int(t) for t in llama.input_ids[: llama.n_tokens]]
    reused = saved.prepare(llama, held, tokens) if saved is not None \
        else int(llama.longest_token_prefix(held, tokens))
    if cache_dir is not None and real and len(tokens) - reused >= MIN_DISK_TOKENS:
        disk = DiskPrefixes.of(llama, cache_dir)
        reused = disk.restore(llama, tokens, reused)
        static = static_tokens(llama, prompt, tokens, task)
        if static - reused >= MIN_DISK_TOKENS:
            llama.n_tokens = reused  # the cache holds these; Llama.eval drops the rest and evaluates the static part
            llama.eval(tokens[reused:static])
            disk.save(llama)
    if reused >= len(tokens):  # llama.cpp evaluates the last token again for fresh logits
        reused = len(tokens) - 1
    first = None
    if grammar is not None:
        if greedy:
            first = GrammarFirst(llama, grammar, begun_tokens)
            options["logits_processor"] = [*(options.get("logits_processor") or []), first]
        else:
            from llama_cpp.llama_grammar import LlamaGrammar

            options["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
    try:
        response = llama.create_completion(tokens, **options)
    finally:
        if first is not None:
            first.close()
    return response, PrefixUse(evaluated=len(tokens) - reused, reused=reused)


def can_begin(llama: Any, options: Mapping[str, Any]) -> bool:
    """Whether :func:`complete` can take an output's start as written text (``begun=``): greedy decoding on a
    ``llama_cpp.Llama`` whose tokenizer gives such text back byte for byte."""
    if not _greedy(saved_prefixes(llama), options):
        return False
    probe = '{"thought": "Ж ok", "action": "'
    return bytes(llama.detokenize(_text_tokens(llama, probe))) == probe.encode("utf-8")


def _greedy(saved: SavedPrefixes | None, options: Mapping[str, Any]) -> bool:
    """Whether a completion with ``options`` decodes greedily on a ``llama_cpp.Llama`` (``saved``: its saved
    prefixes, ``None`` for any other object)."""
    return saved is not None and options.get("temperature") == 0.0


def _text_tokens(llama: Any, text: str) -> list[int]:
    return [int(t) for t in llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)]


def _written_tokens(llama: Any, begun: str) -> list[int]:
    """The tokens of ``begun``, which the tokenizer must give back as written (a ``ValueError`` otherwise)."""
    tokens = _text_tokens(llama, begun)
    if bytes(llama.detokenize(tokens)) != begun.encode("utf-8"):
        raise ValueError(f"the tokenizer does not give {begun!r} back as written")
    return tokens


def static_tokens(llama: Any, prompt: str, tokens: list[int], task: str) -> int:
    """How many of ``tokens`` (``prompt``'s) come before the first place ``prompt`` writes ``task``; 0 when the task
    is blank or not written. The agents' prompts write the task after the instructions, tools and worked examples
    and before the history, so these tokens hold nothing of the run."""
    at = prompt.find(task) if task.strip() else -1
    if at <= 0:
        return 0
    return int(llama.longest_token_prefix(prompt_tokens(llama, prompt[:at]), tokens))


def window(llama: Any) -> int | None:
    """The tokens ``llama``'s context holds (``None`` when it cannot tell): its ``n_ctx()``, or the ``n_ctx`` it was
    given when that is less (llama.cpp rounds ``n_ctx=300`` up to 512; llama-cpp-python's buffers keep 300)."""
    n_ctx = getattr(llama, "n_ctx", None)
    if not callable(n_ctx):
        return None
    given = getattr(getattr(llama, "context_params", None), "n_ctx", None)
    size = int(n_ctx())
    return min(size, given) if isinstance(given, int) and given > 0 else size


def fits(llama: Any, count: int) -> None:
    """Raise a ``ValueError`` that names the remedies when a prompt of ``count`` tokens leaves no room for an answer
    in ``llama``'s context window (llama-cpp-python fails on it with a numpy broadcasting error)."""
    size = window(llama)
    if size is None or count < size:
        return
    metadata = getattr(llama, "metadata", None)
    trained = next((value for key, value in metadata.items() if key.endswith(".context_length")), None) \
        if isinstance(metadata, dict) else None
    most = f" (this model was trained on {trained} tokens)" if trained else ""
    raise ValueError(f"the prompt has {count} tokens, but the context window holds {size} for the prompt "
                     f"and the answer: give LocalChatModel a larger n_ctx={most}, or make the prompt shorter (fewer "
                     "tools, or the agent's history_window= and max_observation_chars=)")


def prompt_tokens(llama: Any, prompt: str) -> list[int]:
    """The tokens of ``prompt`` as ``create_completion`` makes them: the model's BOS unless the text starts with
    it (a chat template may write it), special tokens parsed."""
    bos = llama.token_bos()
    tokens = list(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
    if bos >= 0 and len(tokens) > 1 and tokens[0] == bos and tokens[1] == bos:
        tokens = tokens[1:]
    return tokens
