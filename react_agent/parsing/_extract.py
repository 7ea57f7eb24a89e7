"""Find the JSON values in a plan or fill reply of :class:`~react_agent.plan.PlanAndExecuteAgent`.

Bounded time: think blocks are dropped in one pass, the bracket scan jumps between
structural characters with regexes, at most :data:`MAX_CANDIDATES` candidates are decoded, and decoding
shares the action parser's budgets (``_jsonish``): a 100 KB hostile reply costs a few milliseconds.
"""

from __future__ import annotations

import re
from typing import Any

from react_agent.parsing._jsonish import Budget, decode

__all__ = ["MAX_CANDIDATES", "extract_json", "outside_fences"]

MAX_CANDIDATES = 32  # balanced candidates decoded per reply; later ones are ignored

_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)```", re.DOTALL)
_FENCE_ON_ITS_LINE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)
_MAX_STEPS = 5_000  # regex steps of one scan
_OPEN = re.compile(r"([\[{]+)")
_INSIDE = re.compile(r'([\[{]+)|([\]}]+)|("[^"\\]*(?:\\.[^"\\]*)*(")?)', re.DOTALL)
_CLOSER = {"[": "]", "{": "}"}


def extract_json(text: str) -> list[Any]:
    """Every top-level JSON object or array in ``text``, decoded, in order.

    ``<think>`` blocks are dropped (an unclosed one hides the rest, a leading ``</think>`` what precedes
    it); when the text has fenced code blocks only their content is read. Candidates are found by a
    string-aware balanced-bracket scan (never "first ``[`` to last ``]``") and decoded with
    ``json.loads``, then a relaxed pass (single quotes, Python literals, trailing commas, comments,
    unquoted keys) and, for small candidates only, ``json_repair``. Undecodable candidates are skipped;
    at most :data:`MAX_CANDIDATES` are tried. Raises ``ValueError`` when nothing decodes and a bracket
    or string was left open (the reply was cut off).
    """
    text, cut_off = drop_think(text)
    values: list[Any] = []
    budget = Budget()
    tried = 0
    for source in _fenced(text) or [text]:
        spans, unclosed = _spans(source, MAX_CANDIDATES - tried)
        cut_off = cut_off or unclosed
        for start, end, depth in spans:
            tried += 1
            value = decode(source[start:end], budget, depth=depth)
            if isinstance(value, (dict, list)):
                values.append(value)
        if tried >= MAX_CANDIDATES:
            break
    if not values and cut_off:
        raise ValueError("the reply was cut off before its JSON was complete")
    return values


def outside_fences(text: str) -> str:
    """``text`` without its fenced code blocks (what :func:`extract_json` skips when there are fences)."""
    text = drop_think(text)[0]
    return (_FENCE_ON_ITS_LINE if _FENCE_ON_ITS_LINE.search(text) else _FENCE).sub("\n", text)


def _fenced(text: str) -> list[str]:
    """The contents of the fenced code blocks of ``text``: closed by a fence on its own line when the text has
    such a block (three backticks inside the JSON, as in a string, do not close it), else by the next three
    backticks (a model that closes the fence right after the value)."""
    return _FENCE_ON_ITS_LINE.findall(text) or _FENCE.findall(text)


def drop_think(text: str) -> tuple[str, bool]:
    """The text without think blocks, and whether it ended inside one."""
    close, opening = _THINK_CLOSE.search(text), _THINK_OPEN.search(text)
    if close and (opening is None or close.start() < opening.start()):
        text = text[close.end() :]  # the chat template opened the block
    kept: list[str] = []
    pos = 0
    while (start := _THINK_OPEN.search(text, pos)) is not None:
        kept.append(text[pos : start.start()])
        end = _THINK_CLOSE.search(text, start.end())
        if end is None:  # never closed: the rest is still thinking
            return "".join(kept), True
        pos = end.end()
    kept.append(text[pos:])
    return "".join(kept), False


def _spans(text: str, limit: int) -> tuple[list[tuple[int, int, int]], bool]:
    """Up to ``limit`` outermost balanced ``{…}``/``[…]`` as (start, end, depth); whether one never closed.

    A mismatched closer drops the candidate it was in. Each step is one regex match over a run of
    brackets or a whole string, and at most :data:`_MAX_STEPS` steps are taken (past that the rest of
    the text is ignored), so the scan is linear in the text.
    """
    spans: list[tuple[int, int, int]] = []
    closers: list[str] = []
    start = depth = pos = steps = 0
    while len(spans) < limit and steps < _MAX_STEPS:
        token = (_INSIDE if closers else _OPEN).search(text, pos)
        if token is None:
            break
        steps += 1
        i, pos = token.span()
        if token.lastindex == 3:  # a string
            if token.group(4) is None:  # it never closes: the reply was cut off inside it
                return spans, True
        elif token.lastindex == 1 or not closers:  # a run of openers
            if not closers:
                start, depth = i, 0
            closers.extend(_CLOSER[c] for c in text[i:pos])
            depth = max(depth, len(closers))
        else:  # a run of closers
            run = text[i:pos]
            take = min(len(run), len(closers))
            if run[:take] != "".join(reversed(closers[len(closers) - take :])):
                closers.clear()  # mismatched: not JSON, drop this candidate
                pos = i + 1
                continue
            del closers[len(closers) - take :]
            if not closers:
                spans.append((start, i + take, depth))
                pos = i + take
    return spans, bool(closers)
