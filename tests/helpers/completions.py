"""A scripted completion function for the embedded model's decoder (``complete(prompt, schema, ...)``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Script:
    """A completion function with scripted outputs; records (prompt, schema, suffix, stop, min_tokens)."""

    def __init__(self, *outputs: str) -> None:
        self.outputs = list(outputs)
        self.calls: list[tuple[str, Mapping[str, Any], str, list[str], int]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1) -> str:
        self.calls.append((prompt, schema, suffix, list(stop), min_tokens))
        return self.outputs.pop(0)


class Writer:
    """A completion function that always writes the one ``answer`` (a whole answer object) and takes an answer's
    start as written text (``begun=``, ``begins = True``): a head completion continues the answer from where the
    prompt's answer part ends, up to the first stop string; an arguments completion (``suffix="}"``) continues the
    answer's ``action_input`` value from ``begun``. ``budget``: the most characters one completion writes (it is
    ``cut`` then). Records (prompt, begun, text) of each call."""

    begins = True

    def __init__(self, base: str, answer: str, *, budget: int = 10_000) -> None:
        self.base, self.answer, self.budget = base, answer, budget
        self.cut = False
        self.calls: list[tuple[str, str, str]] = []

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Any = (),
                 min_tokens: int = 1, begun: str = "") -> str:
        assert prompt.startswith(self.base) and prompt.endswith(begun)
        if suffix:
            body = self.answer[self.answer.index('"action_input":') + len('"action_input":'):]
        else:
            body = self.answer
            assert prompt[len(self.base):] == begun, "a head completion continues the answer the prompt begins"
        assert body.startswith(begun), f"{begun!r} is no start of {body!r}"
        rest = body[len(begun):]
        ends = [rest.find(s) for s in stop if s in rest]
        text = rest[: min(ends)] if ends else rest
        self.cut = len(text) > self.budget
        text = text[: self.budget]
        self.calls.append((prompt, begun, text))
        return text
