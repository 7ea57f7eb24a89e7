"""Proposed core performance fixes, as monkeypatches of the installed package (for measurement only).

Each proposal names the file and function to change and what to change; ``apply()`` patches this
process (the package files are never edited) and returns a function that undoes the patch. The
overhead benchmark (``python -m bench.overhead --fixes``) measures each one alone and cumulatively.
The patches are written to be behaviour-preserving; ``check_parser_equivalence`` verifies the parser
one on the parser corpus.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

Undo = Callable[[], None]


def _swap(owner: Any, name: str, value: Any) -> Undo:
    missing = object()
    old = owner.__dict__.get(name, missing) if isinstance(owner, type) else getattr(owner, name, missing)
    setattr(owner, name, value)

    def undo() -> None:
        if old is missing:
            delattr(owner, name)
        else:
            setattr(owner, name, old)

    return undo


# --------------------------------------------------------------------------------- 2. retry fast path
def apply_retry_fast_path() -> Undo:
    from tenacity import Retrying, stop_after_attempt

    from react_agent._retry import RetryPolicy

    def call(self: Any, fn: Callable[[], Any]) -> Any:
        try:
            return fn()  # first attempt outside tenacity: no Retrying object per model call
        except Exception as exc:
            if self.max_attempts < 2 or not self.retry_on(exc):
                raise
        time.sleep(min(self.initial_wait, self.max_wait))  # the wait tenacity would make after attempt 1
        options = {**self._options(), "stop": stop_after_attempt(self.max_attempts - 1)}
        return Retrying(**options)(fn)

    return _swap(RetryPolicy, "call", call)


# --------------------------------------------------------------------------------- 3. render text directly
def apply_render_text() -> Undo:
    import jinja2

    from react_agent import _prompts as p

    original = p.PromptSet.render

    def render(self: Any, name: str, **variables: Any) -> str:
        template = self._templates[name]
        if isinstance(template, jinja2.Template):
            _, allowed = p.TEMPLATE_VARIABLES[name]
            return str(template.render({k: v for k, v in variables.items() if k in allowed})).strip()
        return str(original(self, name, **variables))

    return _swap(p.PromptSet, "render", render)


# --------------------------------------------------------------------------------- 7. file-less journal
def apply_lazy_journal() -> Undo:
    from react_agent import _journal as j

    cls = j.RunJournal
    originals = {name: cls.__dict__[name] for name in ("model_call", "model_done", "step_done", "end")}
    finish = j.ToolCallRecord.finish

    def inert(journal: Any) -> bool:  # nothing to replay and nowhere to write
        return journal.path is None and journal._live

    def model_call(self: Any, messages: Any) -> Any:
        if inert(self):
            self._seq += 1
            self._live_effects += 1
            return None
        return originals["model_call"](self, messages)

    def model_done(self: Any, text: str, usage: Any, seconds: float) -> None:
        if self.path is not None:
            originals["model_done"](self, text, usage, seconds)

    def step_done(self: Any, index: int, step: Any) -> None:
        if self.path is None:
            self._steps_recorded = max(self._steps_recorded, index)
            return
        originals["step_done"](self, index, step)

    def end(self: Any, result: Any) -> None:
        if self.path is None:
            self._ended = True
            return
        originals["end"](self, result)

    def finish_(self: Any, outcome: Any) -> Any:
        return outcome if self.journal.path is None else finish(self, outcome)

    undos = [_swap(cls, "model_call", model_call), _swap(cls, "model_done", model_done),
             _swap(cls, "step_done", step_done), _swap(cls, "end", end), _swap(j.ToolCallRecord, "finish", finish_)]

    def undo() -> None:
        for u in reversed(undos):
            u()

    return undo


PROPOSALS: list[dict[str, Any]] = [
    {"name": "retry fast path", "where": "react_agent/_retry.py: RetryPolicy.call / acall",
     "change": "Call fn() once directly; build tenacity's Retrying only after a transient failure, for the "
               "remaining max_attempts - 1 attempts (sleep the first backoff wait before it). A Retrying object "
               "per model call costs more than the rest of the call's bookkeeping.",
     "apply": apply_retry_fast_path},
    {"name": "render jinja text directly", "where": "react_agent/_prompts.py: PromptSet.render",
     "change": "For a jinja template return template.render(filtered vars).strip() instead of building a "
               "HumanMessage via messages() and joining its content (same text).",
     "apply": apply_render_text},
    {"name": "inert journal", "where": "react_agent/_journal.py: RunJournal.model_call / model_done / step_done / "
                                       "end, ToolCallRecord.finish",
     "change": "When the journal has no file and nothing to replay (path is None and live), skip the prompt "
               "sha256 in model_call and return before building the record dicts (step.model_dump(mode='json'), "
               "usage.model_dump()) that append() then throws away.",
     "apply": apply_lazy_journal},
]
