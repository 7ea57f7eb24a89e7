"""Greedy decoding under a grammar that checks the model's top token first.

llama-cpp-python's ``grammar=`` runs llama.cpp's grammar sampler over the whole vocabulary before every token
(151,936 candidates for Qwen2.5), which costs more than a third of a token's time on two cores. Greedy decoding
needs one answer only: is the top token allowed? :class:`GrammarFirst` asks the grammar that for the top token
alone and masks the whole vocabulary only when the answer is no (llama.cpp's own ``common_sampler`` does the
same). The chosen token is the one ``grammar=`` would choose: the highest logit among the allowed tokens, the
lowest id on a tie, as llama.cpp's greedy sampler picks.

It is a logits processor (``create_completion(logits_processor=[...])``) over llama.cpp's public sampler API
(``llama_sampler_init_grammar``, ``llama_sampler_apply``, ``llama_sampler_accept``); the tokens a completion
chose reach the grammar on the next call, from the ids it is given.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["GrammarFirst"]


class GrammarFirst:
    """A logits processor that leaves the logits to greedy decoding as the GBNF ``grammar`` would: unchanged when
    the top token is allowed, the disallowed ones at ``-inf`` otherwise. One per completion; :meth:`close` frees
    the grammar (the processor keeps no reference to the model). ``accepted``: tokens the grammar reads before the
    completion's first one (the end of a prompt that begins the output: text the grammar must allow)."""

    def __init__(self, llama: Any, grammar: str, accepted: Sequence[int] = ()) -> None:
        import llama_cpp
        import numpy as np

        self._llama_cpp, self._np = llama_cpp, np
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not self._sampler:
            raise ValueError("llama.cpp cannot parse this grammar (its log says where)")
        self._seen: int | None = None
        self._one: Any = llama_cpp.llama_token_data()
        self._one_array: Any = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False)
        for token in accepted:  # llama.cpp aborts the process on a token its grammar cannot read: ask first
            if not self._allows(int(token), 0.0):
                self.close()
                raise ValueError(f"the grammar does not allow token {int(token)} of the text it is to read first")
            llama_cpp.llama_sampler_accept(self._sampler, int(token))
        self._all: Any = None
        self.masked = 0
        """How many tokens needed the whole vocabulary masked (the top token was not allowed)."""

    def __call__(self, input_ids: Sequence[int], scores: Any) -> Any:
        llama_cpp, np = self._llama_cpp, self._np
        if self._sampler is None:
            raise RuntimeError("this grammar was closed: a GrammarFirst serves one completion")
        if self._seen is not None:  # the tokens chosen since the last call
            for token in input_ids[self._seen:]:
                llama_cpp.llama_sampler_accept(self._sampler, int(token))
        self._seen = len(input_ids)
        top = int(np.argmax(scores))
        if self._allows(top, float(scores[top])):
            return scores
        self.masked += 1
        return self._mask(scores)

    def _allows(self, token: int, logit: float) -> bool:
        """Whether the grammar, where it is now, allows ``token`` next."""
        self._one.id, self._one.logit, self._one.p = token, logit, 0.0
        self._one_array.data, self._one_array.size = ctypes.pointer(self._one), 1
        self._one_array.selected, self._one_array.sorted = -1, False
        self._llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(self._one_array))
        return not math.isinf(self._one.logit)

    def _mask(self, scores: Any) -> Any:
        llama_cpp, np = self._llama_cpp, self._np
        size = len(scores)
        if self._all is None or len(self._all) != size:
            self._all = np.zeros(size, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)],
                                                      align=True))
            self._all["id"] = np.arange(size, dtype=np.intc)
        self._all["logit"] = scores
        array = llama_cpp.llama_token_data_array(
            data=self._all.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)), size=size, selected=-1,
            sorted=False)
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(array))
        return np.where(np.isneginf(self._all["logit"]), np.float32(-np.inf), scores)

    def close(self) -> None:
        """Free the grammar; a second call does nothing."""
        if self._sampler is not None:
            self._llama_cpp.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        self.close()
