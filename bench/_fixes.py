"""Proposed core performance fixes, as monkeypatches of the installed package (for measurement only).

Each proposal names the file and function to change and what to change; ``apply()`` patches this
process (the package files are never edited) and returns a function that undoes the patch. The
overhead benchmark (``python -m bench.overhead --fixes``) measures each one alone and cumulatively.
The patches are written to be behaviour-preserving; ``check_parser_equivalence`` verifies the parser
one on the parser corpus.
"""

from __future__ import annotations

import json
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


# --------------------------------------------------------------------------------- 1. parser fast path
def fast_parse(original: Callable[..., Any]) -> Callable[..., Any]:
    """``_parse`` with a fast path for the common reply: exactly one JSON object, no think block."""
    from react_agent import _parser as p

    def _parse(text: str, names: frozenset[str], allow_plain: bool) -> Any:
        stripped = text.strip() if text else ""
        if stripped[:1] == "{" and stripped[-1:] == "}" and not (
            "<" in stripped and (p._THINK_OPEN.search(stripped) or p._THINK_CLOSE.search(stripped))
        ):
            try:
                obj = json.loads(stripped, strict=False)
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                obj = p._unwrap(obj)
                if p._looks_like_action(obj, names):
                    return p._from_object(obj, names, "", p._Budget(p._REPAIR_BUDGET))
        return original(text, names, allow_plain)

    return _parse


def apply_parser_fast_path() -> Undo:
    from react_agent import _parser as p

    return _swap(p, "_parse", fast_parse(p._parse))


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


# --------------------------------------------------------------------------------- 4. dict keys first in jinja
def apply_jinja_dict_getattr() -> Undo:
    import jinja2

    from react_agent import _prompts as p

    env = p._ENV
    base = jinja2.Environment.getattr

    def getattr_(obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return base(env, obj, attribute)

    env.getattr = getattr_  # type: ignore[method-assign]

    def undo() -> None:
        del env.getattr

    return undo


# --------------------------------------------------------------------------------- 5. history entry cache
def apply_history_cache() -> Undo:
    from react_agent._core import BaseAgent

    original = BaseAgent._history_entry

    def _history_entry(self: Any, index: int, step: Any) -> dict[str, Any]:
        cache = self.__dict__.setdefault("_bench_entries", {})
        hit = cache.get(id(step))
        if hit is not None and hit[0] is step and hit[1] == index:
            return dict(hit[2])
        entry = original(self, index, step)
        if len(cache) > 512:
            cache.clear()
        cache[id(step)] = (step, index, entry)
        return dict(entry)

    return _swap(BaseAgent, "_history_entry", _history_entry)


# --------------------------------------------------------------------------------- 6. cheap usage / step records
def apply_cheap_records() -> Undo:
    from langchain_core.messages import AIMessage

    from react_agent import _core
    from react_agent._types import Usage

    zero = Usage()
    original_usage = _core.message_usage

    def message_usage(message: Any) -> Any:
        if not getattr(message, "usage_metadata", None) and not (
            getattr(message, "response_metadata", None) or {}
        ).get("token_usage"):
            return zero
        return original_usage(message)

    def _reply(self: Any, state: Any, message: Any, started: float) -> Any:
        usage = message_usage(message) if isinstance(message, AIMessage) else zero
        state.llm_calls += 1
        if usage is not zero:
            state.usage = state.usage + usage
        return _core.ModelReply(_core.message_text(message), usage, time.monotonic() - started)

    undos = [_swap(_core, "message_usage", message_usage), _swap(_core.BaseAgent, "_reply", _reply)]

    def undo() -> None:
        for u in reversed(undos):
            u()

    return undo


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
    {"name": "parser fast path", "where": "react_agent/_parser.py: _parse",
     "change": "Before the scan: if the stripped reply starts with '{' and ends with '}', holds no <think> tag "
               "and json.loads(strict=False) gives a dict that _looks_like_action after _unwrap, return "
               "_from_object(obj, names, '', _Budget(_REPAIR_BUDGET)); otherwise run the full pipeline. "
               "Same result on the whole parser corpus (checked by the benchmark).",
     "apply": apply_parser_fast_path},
    {"name": "retry fast path", "where": "react_agent/_retry.py: RetryPolicy.call / acall",
     "change": "Call fn() once directly; build tenacity's Retrying only after a transient failure, for the "
               "remaining max_attempts - 1 attempts (sleep the first backoff wait before it). A Retrying object "
               "per model call costs more than the rest of the call's bookkeeping.",
     "apply": apply_retry_fast_path},
    {"name": "render jinja text directly", "where": "react_agent/_prompts.py: PromptSet.render",
     "change": "For a jinja template return template.render(filtered vars).strip() instead of building a "
               "HumanMessage via messages() and joining its content (same text).",
     "apply": apply_render_text},
    {"name": "dict keys first in jinja", "where": "react_agent/_prompts.py: _ENV",
     "change": "Use a jinja2.Environment subclass whose getattr(obj, name) returns obj[name] first when "
               "type(obj) is dict (the history entries and tool specs are dicts): jinja's default tries "
               "getattr() first and pays an AttributeError per `s.action` lookup.",
     "apply": apply_jinja_dict_getattr},
    {"name": "cache history entries", "where": "react_agent/_core.py: BaseAgent.prompt_variables / _history_entry",
     "change": "Keep the rendered history entry of each step in the RunState (e.g. a list parallel to steps, "
               "rebuilt for an index whose step object changed), so json.dumps(action_input) and truncation run "
               "once per step instead of once per prompt (O(n) instead of O(n^2) with history_window=None).",
     "apply": apply_history_cache},
    {"name": "skip zero usage", "where": "react_agent/_core.py: message_usage / BaseAgent._reply",
     "change": "Return a module-level Usage() constant when the message reports no tokens, and skip "
               "state.usage + usage (a new pydantic model) when the usage is that constant.",
     "apply": apply_cheap_records},
    {"name": "inert journal", "where": "react_agent/_journal.py: RunJournal.model_call / model_done / step_done / "
                                       "end, ToolCallRecord.finish",
     "change": "When the journal has no file and nothing to replay (path is None and live), skip the prompt "
               "sha256 in model_call and return before building the record dicts (step.model_dump(mode='json'), "
               "usage.model_dump()) that append() then throws away.",
     "apply": apply_lazy_journal},
]


def check_parser_equivalence(texts: list[tuple[str, list[str]]]) -> dict[str, int]:
    """Parse every text with and without the fast path; count identical and different outcomes."""
    from react_agent import _parser as p
    from react_agent._errors import OutputParseError

    def outcome(text: str, names: list[str]) -> Any:
        try:
            a = p.parse_response(text, names)
            return ("ok", a.action, json.dumps(a.action_input, sort_keys=True, default=str), a.thought)
        except OutputParseError as exc:
            return ("refused", exc.reason)

    before = [outcome(t, n) for t, n in texts]
    undo = apply_parser_fast_path()
    try:
        after = [outcome(t, n) for t, n in texts]
    finally:
        undo()
    same = sum(a == b for a, b in zip(before, after, strict=True))
    return {"cases": len(texts), "same": same, "different": len(texts) - same}
