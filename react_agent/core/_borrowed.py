"""Answers built from the worked examples: a small model that finishes with an example's values instead of its own.

:func:`example_values` collects the text values of the examples' calls (``"anna@mail.org"``); :func:`borrowed`
finds those an answer writes while neither the task nor any observation of the run does. The loop does not accept
such an answer as finished: the model is told (the ``example_facts`` template) and the run goes on; the same values
written again right after that end the run with status ``"repeated"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from react_agent._types import FINISH, Example
from react_agent.parsing import strings_in

__all__ = ["MIN_VALUE_LENGTH", "borrowed", "example_values"]

MIN_VALUE_LENGTH = 3
"""Values shorter than this are not compared (``"a"``, ``"no"`` occur anywhere)."""


def example_values(examples: Sequence[Example]) -> frozenset[str]:
    """The text values of every call the examples show (their steps and their answers; not a FINISH text), and the
    identifiers their observations write (a word with ``@`` or a digit: an e-mail, an id, a date)."""
    calls = [s.action_input for e in examples for s in e.steps if s.action and s.action != FINISH]
    calls += [e.answer.action_input for e in examples if not e.answer.is_finish]
    values = {v.strip() for call in calls for v in strings_in(call)
              if len(v.strip()) >= MIN_VALUE_LENGTH and _has_letter(v)}
    for text in [s.observation for e in examples for s in e.steps]:  # the results' identifiers: e-mails, ids, dates
        values.update(t for t in (m.rstrip(".") for m in _TOKEN.findall(text))
                      if len(t) >= MIN_VALUE_LENGTH and ("@" in t or any(ch.isdigit() for ch in t)))
    return frozenset(values)


_TOKEN = re.compile(r"[^\s,;:()\[\]{}\"'«»]+")


def borrowed(answer: str, values: Iterable[str], known: str) -> list[str]:
    """The example values (sorted) that ``answer`` writes as whole words and ``known`` (the task and the
    observations) does not, case ignored."""
    return sorted(v for v in values if _written(v, answer) and not _written(v, known))


def _written(value: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text, re.IGNORECASE) is not None


def _has_letter(text: str) -> bool:
    return any(ch.isalpha() for ch in text)
