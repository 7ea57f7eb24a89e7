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
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from react_agent.models.local._sampling import GrammarFirst

__all__ = ["PrefixUse", "SavedPrefixes", "complete", "llama_restore", "llama_snapshot", "saved_prefixes"]

logger = logging.getLogger(__name__)

MIN_SAVED_TOKENS = 256
"""A context shorter than this is not worth a saved state (evaluating it again costs little)."""
MIN_GAIN_TOKENS = 64
"""A saved state is loaded only when it reuses at least this many more tokens than the cache holds."""
MAX_SAVED = 3
"""Saved states per model (each costs the key/value cache of its tokens in memory)."""


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


def complete(llama: Any, prompt: str, *, grammar: str | None = None,
             **options: Any) -> tuple[dict[str, Any], PrefixUse]:
    """``llama.create_completion`` of ``prompt`` (special tokens of a chat template read as such) and the prefix
    it reused (from the cache, or from a saved state loaded back: :class:`SavedPrefixes`). ``grammar``: GBNF text
    the output must match; greedy decoding on a ``llama_cpp.Llama`` checks the top token first
    (:class:`~react_agent.models.local._sampling.GrammarFirst`), anything else gets llama-cpp-python's
    ``grammar=``."""
    tokens = prompt_tokens(llama, prompt)
    held = [int(t) for t in llama.input_ids[: llama.n_tokens]]
    saved = saved_prefixes(llama)
    reused = saved.prepare(llama, held, tokens) if saved is not None \
        else int(llama.longest_token_prefix(held, tokens))
    if reused >= len(tokens):  # llama.cpp evaluates the last token again for fresh logits
        reused = len(tokens) - 1
    first = None
    if grammar is not None:
        if saved is not None and options.get("temperature") == 0.0:  # greedy, on a llama_cpp.Llama
            first = GrammarFirst(llama, grammar)
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


def prompt_tokens(llama: Any, prompt: str) -> list[int]:
    """The tokens of ``prompt`` as ``create_completion`` makes them: the model's BOS unless the text starts with
    it (a chat template may write it), special tokens parsed."""
    bos = llama.token_bos()
    tokens = list(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
    if bos >= 0 and len(tokens) > 1 and tokens[0] == bos and tokens[1] == bos:
        tokens = tokens[1:]
    return tokens
