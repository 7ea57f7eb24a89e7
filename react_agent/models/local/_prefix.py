"""Completions that reuse the evaluated prompt prefix, and say how much they reused.

llama.cpp keeps the key/value cache of the last evaluated tokens; llama-cpp-python's ``Llama`` compares a new
prompt's tokens with them and evaluates only the part after the longest common prefix. So a step whose prompt
starts with the static part (instructions, tools, worked examples) and only adds the new history evaluates
only the new tokens, across the steps and the runs of one agent, and a two-stage answer's second stage
evaluates only the first stage's text. :func:`complete` tokenizes the prompt once, counts the tokens the
cache already holds and passes the tokens on, so the count is the one llama.cpp uses.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["PrefixUse", "complete"]


class PrefixUse(BaseModel):
    """Prompt tokens of one or more completions: how many were evaluated and how many came from the cache."""

    model_config = ConfigDict(frozen=True)

    evaluated: int = 0
    reused: int = 0

    def __add__(self, other: PrefixUse) -> PrefixUse:
        return PrefixUse(evaluated=self.evaluated + other.evaluated, reused=self.reused + other.reused)


def complete(llama: Any, prompt: str, **options: Any) -> tuple[dict[str, Any], PrefixUse]:
    """``llama.create_completion`` of ``prompt`` (special tokens of a chat template read as such) and the prefix
    it reused."""
    tokens = prompt_tokens(llama, prompt)
    held = [int(t) for t in llama.input_ids[: llama.n_tokens]]
    reused = llama.longest_token_prefix(held, tokens)
    if reused >= len(tokens):  # llama.cpp evaluates the last token again for fresh logits
        reused = len(tokens) - 1
    response = llama.create_completion(tokens, **options)
    return response, PrefixUse(evaluated=len(tokens) - reused, reused=reused)


def prompt_tokens(llama: Any, prompt: str) -> list[int]:
    """The tokens of ``prompt`` as ``create_completion`` makes them: the model's BOS unless the text starts with
    it (a chat template may write it), special tokens parsed."""
    bos = llama.token_bos()
    tokens = list(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
    if bos >= 0 and len(tokens) > 1 and tokens[0] == bos and tokens[1] == bos:
        tokens = tokens[1:]
    return tokens
