"""Turn one model reply into one :class:`AgentAction`, or refuse it with :class:`OutputParseError`.

The pipeline (the policy, with its reasons, is in ``docs/parser-policy.md``):

1. **strip think blocks** - ``<think>`` / ``<thinking>`` blocks are dropped; an unclosed one hides the rest.
2. **find candidates** - one linear, string-aware scan lists the balanced ``{…}`` objects (outermost only,
   never "first ``{`` to last ``}``") and the objects that never close; line-anchored regexes find the
   classic ``Action:`` / ``Action Input:`` / ``Final Answer:`` markers. The first candidate in the text
   wins: a fabricated ``Observation:``, second action or invented answer after it is never executed. An
   action-looking object that never closes was cut off: refused before ``json_repair`` could complete it.
3. **normalise keys** - ``json.loads``, else ``json_repair`` (quotes, Python literals, commas, comments);
   key synonyms, envelopes and FINISH synonyms map onto ``thought`` / ``action`` / ``action_input``.
4. **validate** - anything that is not clearly one action is refused with a reason code; no guessing.
   JSON that decodes but cannot be taken as written is refused with what is wrong, wherever it is read
   (the object, an ``Action Input:``, ``<tool_call>``, an XML parameter, a string holding an object): a
   key given twice with different values (``duplicate_key``, naming the key), nesting deeper than the
   decoder goes (``too_deep``), an integer longer than ``sys.get_int_max_str_digits()`` (``too_many_digits``).

Besides JSON and the classic text format, three dialects are read the same way (first one in the text
wins): DSPy-style field markers (``[[ ## next_tool_name ## ]]``), XML tool calls (``<tool_call>{…}``,
``<invoke name=…><parameter name=…>``, ``<function=…>``), and wrapper objects (``{"tool_call": {…}}``,
AutoGPT's ``{"command": {"name", "args"}, "thoughts": {…}}``). A JSON action after an answer label is
that action, never a final answer. With ``validate``, output cut after a complete value (only closing
brackets missing) is completed when the completed call validates.

Every stage is bounded, so hostile input of any size costs about one linear pass.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

from react_agent._types import FINISH, AgentAction
from react_agent.errors import ConfigError, OutputParseError
from react_agent.parsing._extract import drop_think
from react_agent.parsing._jsonish import DECODER, Budget, Malformed, decode, loads, malformed

__all__ = ["FINISH_NAMES", "MAX_NAME", "MAX_NESTING", "NONE_NAMES", "canonical_name", "nesting_depth",
           "parse_response"]

logger = logging.getLogger(__name__)

_MAX_CANDIDATES = 16  # complete objects decoded per reply
_MAX_OPEN_CHECKED = 16  # never-closed objects inspected for truncation
_MAX_COMPLETION = 16_000  # longest cut-off object a validator may see completed
_MAX_MARKERS = 64  # field markers read per reply
_MAX_PARAMETERS = 64  # XML parameters read per call
_PROSE_WINDOW = 8_000  # characters of prose searched for talk about tools
_MAX_SCAN_STEPS = 5_000  # regex steps of one brace scan
_MAX_DEPTH = 256  # deeper nesting counts as never closed
MAX_NAME = 128
MAX_REPLY = 1_000_000  # longest reply parsed; a longer one is refused unread
MAX_NESTING = 64  # deepest action_input accepted (lists and objects); deeper is refused

_NAME_KEYS = ("action", "tool", "tool_name", "name", "function")
_INPUT_KEYS = ("action_input", "tool_input", "args", "arguments", "parameters", "params", "input")
_THOUGHT_KEYS = ("thought", "though", "reasoning", "thinking", "thoughts")
_ENVELOPE_KEYS = ("function", "action", "tool", "tool_call", "function_call", "command", "tools")  # {"k": {name}}
_PROTOCOL = {*_NAME_KEYS, *_INPUT_KEYS, *_THOUGHT_KEYS, *_ENVELOPE_KEYS}
_RESERVED = _PROTOCOL | {"type", "id", "observation", "tool_calls"}  # never flat arguments
_ANSWER_KEYS = ("answer", "output", "final_answer", "text", "response", "result", "content")
FINISH_NAMES = {"finish", "final answer", "finalanswer"}
_GENERIC_NAMES = {"tool", "tools", "call_tool", "tool_call", "use_tool", "tool_use", "function", "action",
                  "function_call", "call", "call_function", "invoke", "execute", "run", "use"}  # fmt: skip
NONE_NAMES = {"none", "null", "n/a", "na", "no action", "nothing", "no tool"}

_MESSAGES = {
    "empty": 'Your reply was empty. Reply with one JSON object with "thought", "action" and "action_input".',
    "truncated": "Your reply was cut off before the action was complete, so nothing was executed. "
    "Reply again with one complete, shorter JSON object.",
    "missing_action": 'Your reply has no action name: put the tool name, or FINISH, in "action".',
    "invalid_action": 'The "action" must be the name of one tool, or FINISH, written as a string.',
    "invalid_input": 'The "action_input" must be a JSON object with the tool arguments (or a string).',
    "prose": "You described the action in words, so nothing was executed. To call a tool, reply with one "
    'JSON object: {"thought": "...", "action": "<tool name>", "action_input": {...}}.',
    "too_long": "Your reply was too long to read, so nothing was executed. Reply again with one short JSON object.",
    "too_deep": f"Your action_input is nested more than {MAX_NESTING} levels deep, so nothing was executed. "
    "Reply again with flatter arguments.",
    "no_action": 'No action was found in your reply. Reply with one JSON object with "thought", "action" and '
    '"action_input"; use the action FINISH to give the final answer.',
}
_BOTH = "Either call one tool or give the final answer, not both."

# scan tokens: a run of flat objects (no nested braces, no single quotes), a brace run, a stretch of
# whole strings and plain text that cannot change the state (inside objects), or a lone quote
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_FLAT_OBJECT = r"""\{(?:[^{}"'\\]|""" + _STRING + r")*\}"
_APOSTROPHE = r"(?:(?<![{\[,:\s])|(?<=[^{\[,:\s]\s))'"  # a "'" that cannot open a string
_FLAT = re.compile(_FLAT_OBJECT)
_SEPARATORS = re.compile(r"[\s_-]+")
_TOP = re.compile("(" + _FLAT_OBJECT + "(?:[^{}]*" + _FLAT_OBJECT + r")*)|(\{+)")
_INSIDE = re.compile(
    "(" + _FLAT_OBJECT + """(?:[^{}"']*""" + _FLAT_OBJECT + r")*)|(\{+)|(\}+)"
    "|(?:" + _STRING + """|[^{}"']+|""" + _APOSTROPHE + """)+|(")|(')"""
)
_SINGLE_QUOTED = re.compile(r"'[^'\\]*(?:\\.[^'\\]*)*'")
_KEY = re.compile(r"""(?:["']|(?<=[{,]))(?:""" + "|".join(sorted(_PROTOCOL)) + r""")["']?\s*:""", re.IGNORECASE)
_NON_SPACE = re.compile(r"\S")
_JSON_TOKEN = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")|([\w.+-]+)|([{}\[\]:,])|\s+|(.)', re.DOTALL)
_CALL_FORM = re.compile(r"[A-Za-z_][\w.]*\(\s*(?=\{)")
_INTENT = re.compile(r"\b(?:call\w*|invok\w*|tools?|actions?|functions?|use|using|run)\b|вызов|вызв|инструмент", re.I)
_STRONG_INTENT = re.compile(
    r"\b(?:i(?:'ll| will| am going to| need to| should)|let me|let's)\s+(?:now\s+)?(?:call|use|invoke|run)\b"
    r"|\buse the \w+ tool\b|вызову|вызываю|воспользуюсь|использую инструмент",
    re.IGNORECASE,
)


def _label(words: str) -> re.Pattern[str]:
    """A line-anchored ``Label:`` marker, tolerant of markdown decoration and numbering.

    The colon may be left out when the label stands alone on its line (``Action`` / ``search``).
    """
    return re.compile(
        rf"^(?=([ \t>#*_-]*))\1(?:{words})[ \t]*(?:\d+[ \t*_]*|[*_][ \t*_]*)?(?::(?:\*\*|__)?[ \t]*|(?=\r?$))",
        re.IGNORECASE | re.MULTILINE,
    )


_ACTION = _label("action")
_INPUT = _label(r"action[ \t_]*input|input")  # the input after an action
_ACTION_INPUT = _label(r"action[ \t_]*input")  # an orphan input without any action
_FINAL = _label(r"final[ \t_]*answer|answer|финальный ответ|окончательный ответ")
_THOUGHT = _label("thought|мысль")
_STOP = _label(
    r"thought|action(?:[ \t_]*input)?|input|observation|final[ \t_]*answer|answer|question"
    r"|наблюдение|мысль|действие|финальный ответ|окончательный ответ"
)
_INLINE_ACTION = re.compile(r"(?:(?i:(?<![\w-])action)|(?<=[a-z])Action)[ \t]*:[ \t]*")  # "Thought: … Action: x"
_INLINE_OBSERVATION = re.compile(r"(?<![\w-])observation[ \t]*:", re.IGNORECASE)
_GLUED_INPUT = re.compile(r"(?:action[ \t_]*)?input[ \t]*:[ \t]*", re.IGNORECASE)  # "Action:SearchAction Input:{"
_INLINE_ARGS = re.compile(r"([A-Za-z_][\w.\-]*)[ \t]*(?:(\()[ \t]*)?(?=[{)])")  # "search ({", "search {", "ping()"
_ANSWER_ACTION = re.compile(r"[ \t]*(?:\r?\n[ \t]*)?(?:\*\*)?(?i:action)[ \t]*(?:\*\*)?:[ \t]*")  # "Answer: Action: x"
_ANSWER_OPENING = re.compile(r"\s*(?:`{3,}[\w-]*[ \t]*\n\s*)?(?=\{)")
_MARKER = re.compile(r"\[\[[ \t]*##[ \t]*([A-Za-z_]\w{0,40})[ \t]*##[ \t]*\]\]")
_MARKER_NAME = ("next_tool_name", "tool_name", "action", "tool")
_MARKER_ARGS = ("next_tool_args", "tool_args", "action_input", "tool_input", "args", "arguments")
_MARKER_THOUGHT = ("next_thought", "thought", "reasoning")
_MARKER_ANSWER = ("answer", "final_answer")
_XML_CALL = re.compile(
    r"<(?:[\w-]+:)?(?:(tool_call)>|invoke\s+name\s*=\s*[\"']([^\"'<>]{1,128})[\"']\s*/?>|function=([^<>\s]{1,128})>)",
    re.IGNORECASE,
)
_XML_PARAMETER = re.compile(
    r"\s*<(?:[\w-]+:)?parameter(?:\s+name\s*=\s*[\"']([^\"'<>]{1,128})[\"']\s*|=([^<>\s]{1,128}))>", re.IGNORECASE
)
_XML_PARAMETER_END = re.compile(r"</(?:[\w-]+:)?parameter>", re.IGNORECASE)
_XML_CALL_END = re.compile(r"\s*</(?:[\w-]+:)?(?:invoke|function)>", re.IGNORECASE)


class _Refusal(Exception):
    def __init__(self, reason: str, detail: str = "", *, message: str = "", value: Any = None,
                 key: str | None = None, limit: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.message = reason, message or f"{_MESSAGES[reason]} {detail}".strip()
        self.value = value  # for a repeated key: the object as json alone reads it (the last value winning)
        self.key, self.limit = key, limit  # what the parse_error template says about it

    def error(self, text: str) -> OutputParseError:
        return OutputParseError(self.message, text, reason=self.reason, key=self.key, limit=self.limit)


def _malformed(problem: Malformed) -> _Refusal:
    """The refusal of JSON that decodes but cannot be taken as written, saying what is wrong with it."""
    key, limit = None, None
    if problem.reason == "duplicate_key":
        key = problem.key if len(problem.key) <= 60 else problem.key[:60] + "…"
        message = (f"Your reply gives the key {json.dumps(key, ensure_ascii=False)} twice in one JSON object with "
                   "different values, so it is unclear which one you meant and nothing was executed. "
                   "Write each key once.")
    elif problem.reason == "too_deep":
        limit = MAX_NESTING
        message = (f"The JSON in your reply is nested deeper than {limit} levels, so nothing was executed. "
                   "Reply again with flatter arguments.")
    else:
        limit = problem.digits
        message = (f"Your reply has a number with more than {limit} digits, so nothing was executed. "
                   "Write such a long number as a string.")
    return _Refusal(problem.reason, message=message, value=problem.value, key=key, limit=limit)


def malformed_error(problem: Malformed, text: str) -> OutputParseError:
    """The :class:`OutputParseError` for ``text`` that holds JSON that cannot be taken as written."""
    return _malformed(problem).error(text)


Validate = Callable[[str, dict[str, Any]], bool]


@dataclass
class _Ctx:
    """What every stage of one parse shares: the tool names, the decoding budget, the caller's validator."""

    names: frozenset[str]
    budget: Budget = field(default_factory=Budget)
    validate: Validate | None = None


@dataclass(frozen=True)
class _Event:
    """A candidate reading of the reply: where it starts (and ends), and what it amounts to."""

    start: int
    outcome: AgentAction | _Refusal
    end: int = -1
    explicit: bool = False  # an ``Action:`` label with its name


def parse_response(
    text: str,
    tool_names: Collection[str] | None = None,
    *,
    allow_plain_answer: bool = False,
    validate: Validate | None = None,
) -> AgentAction:
    """Extract the first action of a model reply; raise :class:`OutputParseError` when none is safe.

    ``tool_names`` only disambiguates envelopes, bare ``{"name": …}`` calls and prose: unknown names are
    not refused here. ``allow_plain_answer`` accepts prose without any action or format marker as the
    FINISH answer. ``validate(name, arguments)`` says whether a tool call is valid for that tool's
    schema; only with it is output cut off after a complete value (nothing but closing brackets
    missing) completed, and only when the completed call validates. It is never called otherwise.
    """
    if text is not None and not isinstance(text, str):
        raise ConfigError(f"parse_response reads the text of a reply (a str), got {type(text).__name__}")
    try:
        action = _parse(text, _Ctx(frozenset(tool_names or ()), validate=validate), allow_plain_answer)
        if nesting_depth(action.action_input, MAX_NESTING) > MAX_NESTING:
            raise _Refusal("too_deep", limit=MAX_NESTING)
        return action
    except _Refusal as refusal:
        logger.debug("model output refused: %s (%d chars)", refusal.reason, len(text or ""))
        raise refusal.error(text) from None
    except Exception as exc:  # a safety net: nothing but AgentAction or OutputParseError leaves here
        logger.debug("parser failure on %d chars: %r", len(text or ""), exc)
        raise OutputParseError(_MESSAGES["no_action"], text, reason="no_action") from exc


def _parse(text: str, ctx: _Ctx, allow_plain: bool) -> AgentAction:
    if not text or not text.strip():
        raise _Refusal("empty")
    if len(text) > MAX_REPLY:
        raise _Refusal("too_long")
    fast = _whole_object(text, ctx)
    if fast is not None:
        return fast
    body = _strip_think(text)
    json_event, saw_dict, saw_protocol = _json_stage(body, ctx)
    text_event = _text_stage(body, ctx)
    events = [e for e in (json_event, text_event, _marker_stage(body, ctx), _xml_stage(body, ctx)) if e]
    if events:
        first = min(events, key=lambda e: e.start)
        if first is json_event and text_event is not None and _quoted_example(body, json_event, text_event):
            first = text_event
        if isinstance(first.outcome, _Refusal):
            raise first.outcome
        return first.outcome
    if saw_protocol or (saw_dict and not allow_plain):
        raise _Refusal("missing_action")
    return _prose(body, ctx.names, allow_plain)


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How deep lists, tuples and dicts nest in ``value`` (a scalar: 0), counted up to ``limit + 1``."""
    if isinstance(value, dict) and not any(isinstance(item, (dict, list, tuple)) for item in value.values()):
        return 1  # the common case: flat arguments
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if not isinstance(item, (dict, list, tuple)):
            continue
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _quoted_example(body: str, json_event: _Event, text_event: _Event) -> bool:
    """A JSON object written inside the prose of a thought, right before an explicit ``Action:`` line.

    The object must start mid-line (after words, not on a line or in a fence of its own) and the
    next marker after it must be that ``Action:`` label; then the object is an example the model
    quoted, and the explicit action is what it asked for.
    """
    if not text_event.explicit or json_event.end < 0 or json_event.end > text_event.start:
        return False
    line = body[body.rfind("\n", 0, json_event.start) + 1 : json_event.start].strip()
    following = _STOP.search(body, json_event.end)
    return (
        bool(line) and not line.startswith("```") and following is not None and (following.start() == text_event.start)
    )


def _whole_object(text: str, ctx: _Ctx) -> AgentAction | None:
    """The common case, a reply that is exactly one strict-JSON action object, without the scans.

    Equivalent to the full pipeline for such a reply (its object starts at 0, so nothing can come
    before it); ``None`` sends anything else through the pipeline.
    """
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")) or "<think" in stripped.lower():
        return None
    try:  # json.loads(stripped, strict=False) without a new decoder per call, nor its skips of the whitespace
        obj, end = DECODER.raw_decode(stripped)  # that ``stripped`` has none of, before or after the value
    except (ValueError, RecursionError, Malformed) as error:
        # one action object that gives a key twice is refused here, as the pipeline would after its scan;
        # anything else (not JSON, too deep, too long a number, not one action) goes to the pipeline
        problem = malformed(error, stripped)
        value = problem.value if problem is not None and problem.end == len(stripped) else None
        if problem is not None and isinstance(value, dict) and _looks_like_action(_unwrap(value), ctx.names):
            raise _malformed(problem) from None
        return None
    if end != len(stripped) or not isinstance(obj, dict):  # something after the value: json.loads's "Extra data"
        return None
    if len(obj) == 3 and type(obj.get("thought")) is str and type(obj.get("action")) is str and "action_input" in obj:
        # exactly the protocol's keys: what _unwrap, _looks_like_action and _from_object would make of it
        return _build(obj["thought"], _check_name(obj["action"]), obj["action_input"], ctx.budget)
    obj = _unwrap(obj)
    if not _looks_like_action(obj, ctx.names):
        return None
    return _from_object(obj, ctx, "")


# -- 1. think blocks ---------------------------------------------------------------------------------


def _strip_think(text: str) -> str:
    body, unclosed = drop_think(text)
    if unclosed and not body.strip():
        raise _Refusal("truncated", "Close the <think> block, then write the action.")
    if not body.strip():
        raise _Refusal("no_action", "Your reply held only a <think> block.")
    return body


# -- 2. candidates -----------------------------------------------------------------------------------


def _scan_objects(text: str, first_only: bool = False) -> tuple[list[tuple[int, int]], list[int]]:
    """One pass: the outermost complete ``{…}`` spans in order, and the starts of objects never closed.

    Quotes delimit strings only inside an object; a ``'`` opens one only where a key or value may start,
    so apostrophes in prose do not. Each step is one regex match over a stretch of text, and the steps
    and the depth are capped: past the caps the rest counts as never closed (past the depth cap there
    are more than :data:`_MAX_DEPTH` starts never closed: :func:`_unclosed_refusal` tells it from a cut).
    """
    starts: list[int] = []  # open objects
    closed: list[tuple[int, int]] = []  # in closing order; objects closed inside a run are dropped
    pos = steps = 0
    while (token := (_INSIDE if starts else _TOP).search(text, pos)) is not None:
        kind, (i, pos) = token.lastindex, token.span()
        if kind == 1:  # a run of flat objects
            closed.extend(m.span() for m in islice(_FLAT.finditer(text, i, pos), _MAX_CANDIDATES))
        elif kind == 2:
            starts.extend(range(i, pos))
        elif kind == 3:
            depth = max(len(starts) - (pos - i), 0)
            closed.append((starts[depth], i + len(starts) - depth))
            del starts[depth:]
        elif kind == 4 or (kind == 5 and _value_may_start(text, i)):  # a string opens here
            string = _SINGLE_QUOTED.match(text, i) if kind == 5 else None
            if string is None:  # never closed: nothing after it can close either
                break
            pos = string.end()
        steps += 1
        if (first_only and closed and not starts) or steps > _MAX_SCAN_STEPS or len(starts) > _MAX_DEPTH:
            break
    spans: list[tuple[int, int]] = []
    for start, end in reversed(closed):  # outermost: no object closed later starts before it
        if not spans or start < spans[-1][0]:
            spans.append((start, end))
    return spans[::-1], starts


def _unclosed_refusal(unclosed: list[int]) -> _Refusal:
    """An object that never closed: cut off, or nested past the scan's depth cap (which is above MAX_NESTING)."""
    if len(unclosed) > _MAX_DEPTH:
        return _malformed(Malformed("too_deep"))
    return _Refusal("truncated")


def _value_may_start(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "{[,:"


def _decode(candidate: str, budget: Budget) -> Any:
    """Strict JSON; relaxed and repaired decoding only for text with a ``key: value`` colon.

    JSON that cannot be taken as written (a repeated key, too deep, too long a number) is refused.
    """
    try:
        if ":" in candidate:
            return decode(candidate, budget, checked=True)
        try:
            return loads(candidate)
        except ValueError:
            return None
    except Malformed as problem:
        raise _malformed(problem) from None


def _action_like(refusal: _Refusal, candidate: str, ctx: _Ctx) -> bool:
    """Whether a candidate refused while decoding was meant as an action: what json alone makes of it looks
    like one, or (when it does not decode at all) it holds a protocol key."""
    if isinstance(refusal.value, dict):
        return _looks_like_action(_unwrap(refusal.value), ctx.names)
    return refusal.value is None and _KEY.search(candidate) is not None


def _json_stage(body: str, ctx: _Ctx) -> tuple[_Event | None, bool, bool]:
    """The first action-looking object (or its refusal); whether any object / protocol key was seen."""
    spans, unclosed = _scan_objects(body)
    found: _Event | None = None
    saw_dict = saw_protocol = False
    for start, end in spans[:_MAX_CANDIDATES]:
        refusal: _Refusal | None = None
        try:
            obj = _decode(body[start:end], ctx.budget)
        except _Refusal as problem:  # JSON that cannot be taken as written: refused if it is the action
            refusal, obj = problem, problem.value
            if obj is None and _KEY.search(body, start, end):
                found = _Event(start, refusal, end)
                break
        if isinstance(obj, dict):
            obj = _unwrap(obj)
            saw_dict, saw_protocol = True, saw_protocol or not _PROTOCOL.isdisjoint(obj)
            if _looks_like_action(obj, ctx.names):
                found = _Event(start, refusal or _outcome(_from_object, obj, ctx, body[:start]), end)
                break
    for start in unclosed[:_MAX_OPEN_CHECKED]:  # an action cut off before the first complete one
        if found and start > found.start:
            break
        region_end = body.find("{", start + 1, start + 2000)
        if _KEY.search(body, start + 1, region_end if region_end > 0 else start + 2000):
            outcome = _completed(body, start, ctx) if len(unclosed) <= _MAX_DEPTH else _unclosed_refusal(unclosed)
            return _Event(start, outcome), saw_dict, saw_protocol
    return found, saw_dict, saw_protocol


def _completed(body: str, start: int, ctx: _Ctx) -> AgentAction | _Refusal:
    """A cut-off action object, completed only when nothing but closers is missing and it validates."""
    text = _closed(body[start:], ctx)
    if text is not None:
        try:
            obj = _decode(text, ctx.budget)
        except _Refusal as refusal:
            return refusal
        if isinstance(obj, dict) and _looks_like_action(obj := _unwrap(obj), ctx.names):
            action = _outcome(_from_object, obj, ctx, body[:start])
            if isinstance(action, AgentAction) and _valid(action, ctx):
                return action
    return _Refusal("truncated")


def _valid(action: AgentAction, ctx: _Ctx) -> bool:
    if ctx.validate is None or action.action == FINISH or not isinstance(action.action_input, dict):
        return False
    try:
        return ctx.validate(action.action, action.action_input) is True
    except Exception:  # a failing validator accepts nothing
        logger.debug("validate() raised for a completed call to %r", action.action)
        return False


def _closed(text: str, ctx: _Ctx) -> str | None:
    """``text`` (one cut-off JSON value) with its missing closers appended, or ``None``.

    Only with a validator, only for strict JSON (double-quoted strings) up to :data:`_MAX_COMPLETION`
    characters, and only when the text ends right after a complete value: a closed string that is
    not a key, ``true``/``false``/``null``, or a closing bracket. A trailing number, comma, colon or
    key, or an open string, means the cut fell inside a value or before one: ``None``.
    """
    text = text.rstrip()
    if ctx.validate is None or len(text) > _MAX_COMPLETION:
        return None
    stack: list[str] = []
    expect_key = False
    last = ""  # the kind of the last token: "key", "value", "open", ",", ":"
    for token in _JSON_TOKEN.finditer(text):
        kind = token.lastindex
        if kind == 1:  # a string
            last = "key" if expect_key else "value"
            expect_key = False
        elif kind == 2:  # a word or a number
            word = token.group()
            last = "value" if word in ("true", "false", "null") else "number"
        elif kind == 3:  # punctuation
            char = token.group()
            if char in "{[":
                stack.append("}" if char == "{" else "]")
                expect_key, last = char == "{", "open"
            elif char in "}]":
                if not stack or stack.pop() != char:
                    return None
                last = "value"
            else:
                expect_key, last = char == "," and bool(stack) and stack[-1] == "}", char
        elif kind == 4:  # anything else: not strict JSON (or an open string)
            return None
    if not stack or last not in ("value",):
        return None
    return text + "".join(reversed(stack))


def _text_stage(body: str, ctx: _Ctx) -> _Event | None:
    """The first classic ``Final Answer:`` or ``Action:`` + ``Action Input:``, whichever comes first.

    Only the first ``Action:`` label counts: when it introduces a JSON block the JSON stage decides.
    An answer label followed by a JSON action is not an answer: the JSON stage reads that action (or
    refuses it). An ``Action:`` whose "name" is prose, with no input before a ``Final Answer:``, is
    the model saying it needs no tool: the answer stands. An answer label followed by ``Action:`` is
    that action too (``Answer: Action: search`` / ``Action Input: x``).
    """
    events: list[_Event] = []
    final = _FINAL.search(body)
    acting = _ANSWER_ACTION.match(body, final.end()) if final is not None else None
    if final is not None and acting is None:
        answer = _answer_event(body, final, ctx)
        if answer is not None:
            events.append(answer)
    label = _ACTION.search(body, 0, final.start() if final else len(body))
    if label is not None:
        label_start, label_end = label.start(), label.end()
    elif acting is not None and final is not None:
        label_start, label_end = final.start(), acting.end()
    else:
        label_start, label_end = _inline_action(body, final)
    name, name_end = _action_name(body, label_end) if label_start >= 0 else (None, 0)
    if name is not None:
        action = _outcome(_text_action, body, label_start, label_end, name, name_end, ctx)
        if not (final is not None and events and _no_tool(body, action, name, name_end, final, ctx)):
            events.append(_Event(label_start, action, explicit=True))
    orphan = _ACTION_INPUT.search(body)
    if not events and orphan is not None and not _ACTION.search(body, 0, orphan.start()):
        events.append(_Event(orphan.start(), _Refusal("missing_action", "Write 'Action:' before 'Action Input:'.")))
    return min(events, key=lambda e: e.start) if events else None


def _answer_event(body: str, final: re.Match[str], ctx: _Ctx) -> _Event | None:
    """The answer after ``Final Answer:`` / ``Answer:``; ``None`` when a JSON action opens it."""
    opening = _ANSWER_OPENING.match(body, final.end())
    if opening is not None:
        spans, unclosed = _scan_objects(body[opening.end() : opening.end() + _MAX_COMPLETION], first_only=True)
        if spans and spans[0][0] == 0:
            candidate = body[opening.end() : opening.end() + spans[0][1]]
            try:
                obj = _decode(candidate, ctx.budget)
            except _Refusal as refusal:
                if _action_like(refusal, candidate, ctx):
                    return None  # the JSON stage refuses this action
                obj = None
            if isinstance(obj, dict) and _looks_like_action(_unwrap(obj), ctx.names):
                return None  # the JSON stage reads this action
        elif unclosed and unclosed[0] == 0 and _KEY.search(body, opening.end() + 1, opening.end() + 2000):
            return None  # a cut-off action: the JSON stage refuses it
    inside, _, _ = _json_stage(_section(body, final.end()), ctx)
    if inside is not None:  # an answer that also holds an action: neither is safe to take
        return _Event(final.start(), _Refusal("invalid_action", _BOTH))
    return _Event(final.start(), _outcome(_final_answer, body, final))


def _inline_action(body: str, final: re.Match[str] | None) -> tuple[int, int]:
    """An ``Action:`` written on the line of a ``Thought:`` label (the whole step on one line)."""
    thought = _THOUGHT.search(body, 0, final.start() if final else len(body))
    if thought is None:
        return -1, -1
    line_end = body.find("\n", thought.end()) % (len(body) + 1)
    inline = _INLINE_ACTION.search(body, thought.end(), line_end)
    return (inline.start(), inline.end()) if inline else (-1, -1)


def _no_tool(
    body: str, action: AgentAction | _Refusal, name: str, name_end: int, final: re.Match[str], ctx: _Ctx
) -> bool:
    """``Action:`` with prose or "None" for a name and no input, then ``Final Answer:``: no tool was meant."""
    stop = _STOP.search(body, name_end)
    if stop is None or stop.start() != final.start() or isinstance(action, AgentAction):
        return False
    words = canonical_name(name.split("(")[0].strip("*`'\" ").rstrip(".:"))
    if words in NONE_NAMES or (ctx.names and name.strip() not in ctx.names and " " in words):
        return True
    return len(words.split()) >= 3


def _outcome(build: Callable[..., AgentAction], *args: Any) -> AgentAction | _Refusal:
    try:
        return build(*args)
    except _Refusal as refusal:
        return refusal


def _action_name(body: str, pos: int) -> tuple[str | None, int]:
    """The name after an ``Action:`` label (same or next line) and where it ends; None if it labels JSON."""
    line_end = body.find("\n", pos) % (len(body) + 1)  # -1 (no newline) becomes len(body)
    value = body[pos:line_end].strip()
    nxt = _NON_SPACE.search(body, line_end)
    start = body.rfind("\n", 0, nxt.start()) + 1 if nxt else len(body)
    end = body.find("\n", start) % (len(body) + 1)
    following = body[start:end].strip()
    if not value:  # the name may sit on the next non-empty line
        if nxt is None or _STOP.match(body, start):
            return "", line_end
        value, line_end = following, end
    elif following.startswith(("{", "```")) and not _INLINE_ARGS.match(value):
        return None, line_end  # "Action: x" over a JSON block: the JSON is the action
    return (None if value.startswith(("{", "`", "[{")) else value), line_end


# -- 2b. other dialects: field markers and XML tool calls ---------------------------------------------


def _marker_stage(body: str, ctx: _Ctx) -> _Event | None:
    """DSPy-style ``[[ ## next_tool_name ## ]]`` fields: name, arguments, thought, or an answer field."""
    markers = list(islice(_MARKER.finditer(body), _MAX_MARKERS))
    fields: dict[str, str] = {}
    for n, marker in enumerate(markers):
        key = marker.group(1).lower()
        if key in fields:  # a second step: the model went on writing
            break
        end = markers[n + 1].start() if n + 1 < len(markers) else len(body)
        fields[key] = body[marker.end() : end].strip()
    known = {*_MARKER_NAME, *_MARKER_ARGS, *_MARKER_ANSWER}
    if not markers or known.isdisjoint(fields):
        return None
    return _Event(markers[0].start(), _outcome(_marker_action, fields, "completed" in fields, ctx))


def _marker_action(fields: dict[str, str], completed: bool, ctx: _Ctx) -> AgentAction:
    thought = next((fields[k] for k in _MARKER_THOUGHT if k in fields), "")
    name_key = next((k for k in _MARKER_NAME if k in fields), None)
    if name_key is None:
        if any(k in fields for k in _MARKER_ARGS):
            raise _Refusal("missing_action")
        answer = next(fields[k] for k in _MARKER_ANSWER if k in fields)
        if not answer:
            raise _Refusal("invalid_input", "Write the answer after its field marker.")
        return AgentAction(thought=thought, action=FINISH, action_input=answer)
    name = _check_name(fields[name_key].strip().strip("`'\"").strip())
    args_key = next((k for k in _MARKER_ARGS if k in fields), None)
    if args_key is None:
        raise _Refusal("invalid_input" if completed else "truncated", "Write the arguments field after the name.")
    return _build(thought, name, _object_or_text(fields[args_key], ctx.budget), ctx.budget)


def _object_or_text(section: str, budget: Budget) -> Any:
    """A text-format input, with a JSON object written as text decoded (refused when it never closes)."""
    value = _text_input(section, budget)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        decoded = _leading_object(value.strip(), budget)
        if isinstance(decoded, dict):
            return decoded
    return value


def _xml_stage(body: str, ctx: _Ctx) -> _Event | None:
    """The first XML-style call: ``<tool_call>{json}``, ``<invoke name="x">``, ``<function=x>``."""
    call = _XML_CALL.search(body)
    if call is None:
        return None
    if call.group(1) is not None:  # <tool_call>: JSON inside, or one of the forms below
        after = _NON_SPACE.search(body, call.end())
        inner = _XML_CALL.match(body, after.start()) if after else None
        if inner is None or inner.group(1) is not None:
            return _Event(call.start(), _outcome(_tagged_json, body, call.end(), ctx))
        call = inner
    return _Event(call.start(), _outcome(_xml_invoke, body, call, ctx))


def _tagged_json(body: str, pos: int, ctx: _Ctx) -> AgentAction:
    """``<tool_call>{"name": …, "arguments": …}</tool_call>``; the tag says it is a call, so a name alone is."""
    text = body[pos:].lstrip()
    if not text.startswith("{"):
        raise _Refusal("invalid_input", "Put one JSON object inside <tool_call>.")
    spans, unclosed = _scan_objects(text, first_only=True)
    if not spans or spans[0][0] != 0:
        raise _unclosed_refusal(unclosed) if unclosed else _Refusal("invalid_input")
    obj = _decode(text[: spans[0][1]], ctx.budget)
    if not isinstance(obj, dict):
        raise _Refusal("invalid_input", "Put one JSON object inside <tool_call>.")
    obj = _unwrap(obj)
    if not any(k in obj for k in _NAME_KEYS):
        raise _Refusal("missing_action")
    return _from_object(obj, ctx, body[: body.rfind("<", 0, pos)])


def _xml_invoke(body: str, call: re.Match[str], ctx: _Ctx) -> AgentAction:
    """``<invoke name="x"><parameter name="k">v</parameter>…</invoke>`` (or ``<function=x>`` and
    ``<parameter=k>``): each value decoded as JSON where it decodes, else kept as text."""
    name = _check_name(call.group(2) or call.group(3))
    args: dict[str, Any] = {}
    pos = call.end()
    for _ in range(_MAX_PARAMETERS + 1):
        parameter = _XML_PARAMETER.match(body, pos)
        if parameter is None:
            break
        end = _XML_PARAMETER_END.search(body, parameter.end())
        if end is None:
            raise _Refusal("truncated")
        args[parameter.group(1) or parameter.group(2)] = _xml_value(body[parameter.end() : end.start()])
        pos = end.end()
    if _XML_CALL_END.match(body, pos) is None:
        if not body[pos:].strip():
            raise _Refusal("truncated")
        raise _Refusal("invalid_input", 'Write each argument as <parameter name="...">value</parameter>.')
    thought = _prefix_thought(re.sub(r"<[^<>]{0,200}>\s*$", "", body[: call.start()]))
    return _build(thought, name, args, ctx.budget)


def _xml_value(raw: str) -> Any:
    value = raw.strip("\r\n")
    try:
        return loads(value)
    except ValueError:
        return value
    except Malformed as problem:  # JSON, but not to be taken as written
        raise _malformed(problem) from None


# -- 3. normalise ------------------------------------------------------------------------------------


def _norm_keys(obj: dict[str, Any]) -> dict[str, Any]:
    """``"Action Input"`` → ``action_input``; keys that are not protocol keys keep their spelling."""
    canon = {key: re.sub(r"[\s-]+", "_", str(key).strip().lower()) for key in obj}
    return {(canon[k] if canon[k] in _RESERVED else k): v for k, v in obj.items()}


def _unwrap(obj: dict[str, Any]) -> dict[str, Any]:
    """Flatten envelopes: ``tool_calls: [...]``, ``function: {...}``, ``action: {name, args}``,
    ``tool_call: {...}``, AutoGPT's ``command: {name, args}``."""
    obj = _norm_keys(obj)
    for _ in range(3):
        calls = obj.pop("tool_calls", None)
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            calls = calls[0]
        if isinstance(calls, dict):
            obj.update(_norm_keys(calls))
            continue
        key = next((k for k in _ENVELOPE_KEYS if isinstance(obj.get(k), dict)), None)
        inner = _norm_keys(obj[key]) if key else {}
        if key is None or not any(k in inner for k in _NAME_KEYS):
            return obj
        del obj[key]
        obj.update(inner)
    return obj


def _looks_like_action(obj: dict[str, Any], names: frozenset[str]) -> bool:
    if any(k in obj for k in ("action", "tool", "tool_name")):
        return True
    weak = [v for v in (obj.get("name"), obj.get("function")) if isinstance(v, str)]
    return bool(weak) and (any(k in obj for k in _INPUT_KEYS) or any(w in names for w in weak))


def canonical_name(name: str) -> str:
    return _canon_name(name) if len(name) <= MAX_NAME else _SEPARATORS.sub(" ", name.strip().lower())


@lru_cache(maxsize=1024)
def _canon_name(name: str) -> str:  # names repeat from step to step; long texts are not kept
    return _SEPARATORS.sub(" ", name.strip().lower())


def _resolve_name(obj: dict[str, Any], names: frozenset[str]) -> Any:
    """The tool name; ``{"action": "call_tool", "name": "x"}`` and the like resolve to ``x``."""
    first, *rest = [obj[k] for k in _NAME_KEYS if k in obj]
    if isinstance(first, str) and first in names:
        return first
    others = [v for v in rest if isinstance(v, str) and v.strip()]
    known = [v for v in others if v in names]
    placeholder = first is None or (
        isinstance(first, str) and (not first.strip() or canonical_name(first).replace(" ", "_") in _GENERIC_NAMES)
    )
    if known and (first is None or isinstance(first, str)):
        return known[0]
    return others[0] if others and placeholder else first


def _from_object(obj: dict[str, Any], ctx: _Ctx, prefix: str) -> AgentAction:
    thought_key = next((k for k in _THOUGHT_KEYS if k in obj), None)
    thought = _thought_text(obj[thought_key]) if thought_key else _prefix_thought(prefix)
    name = _check_name(_resolve_name(obj, ctx.names))
    input_key = next((k for k in _INPUT_KEYS if k in obj), None)
    if input_key is not None:
        raw_input = obj[input_key]
    else:  # flat arguments beside the name
        raw_input = {k: v for k, v in obj.items() if k not in _RESERVED} or None
    return _build(thought, name, raw_input, ctx.budget)


def _thought_text(value: Any) -> str:
    """A thought; AutoGPT's ``thoughts`` object gives its ``text`` (or ``reasoning``)."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("text", "thought", "reasoning") if isinstance(value.get(k), str)), value)
    return _as_text(value)


def _check_name(raw: Any) -> str:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise _Refusal("missing_action")
    if not isinstance(raw, str):
        raise _Refusal("invalid_action", f"It was a {type(raw).__name__}.")
    name: str = raw.strip()
    canon = canonical_name(name)
    if canon in NONE_NAMES or len(name) > MAX_NAME or "\n" in name:
        raise _Refusal("invalid_action", "To give the final answer use FINISH.")
    if "final answer" in canon and canon not in FINISH_NAMES:
        raise _Refusal("invalid_action", _BOTH)
    return name


def _build(thought: str, name: str, raw_input: Any, budget: Budget) -> AgentAction:
    if canonical_name(name) in FINISH_NAMES:
        return AgentAction(thought=thought, action=FINISH, action_input=_finish_answer(raw_input))
    return AgentAction(thought=thought, action=name, action_input=_tool_input(raw_input, budget))


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return "" if value is None else json.dumps(value, ensure_ascii=False)
    except RecursionError:  # decoded near the recursion limit, one level too deep to write back
        raise _malformed(Malformed("too_deep")) from None


def _finish_answer(value: Any) -> str:
    if value == {}:
        return ""
    if isinstance(value, dict):
        key = next((k for k in _ANSWER_KEYS if k in value), None)
        if key is not None:
            return _as_text(value[key])
        if len(value) == 1:
            return _as_text(next(iter(value.values())))
    return _as_text(value)


def _tool_input(value: Any, budget: Budget) -> dict[str, Any] | str:
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise _Refusal("invalid_input", f"It was a {type(value).__name__}.")
    if value.lstrip().startswith("{"):
        decoded = _leading_object(value.strip(), budget)
        if isinstance(decoded, dict):
            return decoded
    return value


def _leading_object(text: str, budget: Budget) -> Any:
    """Decode the object that opens ``text``; refuse it as truncated when it never closes."""
    spans, unclosed = _scan_objects(text, first_only=True)
    if spans and spans[0][0] == 0:
        return _decode(text[: spans[0][1]], budget)
    if unclosed and unclosed[0] == 0:
        raise _unclosed_refusal(unclosed)
    return None


# -- the classic text format -------------------------------------------------------------------------


def _section(body: str, start: int) -> str:
    """Text from ``start`` up to the next marker line, without a trailing partial ``Obs``."""
    stop = _STOP.search(body, start)
    chunk = body[start : stop.start() if stop else len(body)].strip()
    head, _, last = chunk.rpartition("\n")
    if stop is None and len(last.strip()) >= 3 and "observation:".startswith(last.strip().lower()):
        chunk = head
    return chunk.strip()


def _prefix_thought(prefix: str) -> str:
    tail = prefix[-2000:]
    labels = list(_THOUGHT.finditer(tail))
    tail = tail[labels[-1].end() :] if labels else tail
    lines = [ln for ln in tail.splitlines() if not ln.strip().startswith("```") and not _ACTION.match(ln)]
    return "\n".join(lines).strip()


def _final_answer(body: str, label: re.Match[str]) -> AgentAction:
    answer = _section(body, label.end())
    if not answer:
        raise _Refusal("invalid_input", "Write the answer after 'Final Answer:'.")
    return AgentAction(thought=_prefix_thought(body[: label.start()]), action=FINISH, action_input=answer)


def _text_action(body: str, label: int, label_end: int, raw_name: str, name_end: int, ctx: _Ctx) -> AgentAction:
    thought = _prefix_thought(body[:label])
    first = _NON_SPACE.search(body, label_end)
    name_start = first.start() if first else label_end
    glued = _GLUED_INPUT.search(body, name_start + 1, name_end)
    if glued is not None:  # "Action: search Action Input: {...}" or "Action:SearchAction Input:{...}"
        name = _clean_name(body[name_start : glued.start()])
        section = _section(body, glued.end())
        observation = _INLINE_OBSERVATION.search(section)  # "… Action Input: x Observation:" on one line
        section = section[: observation.start()].strip() if observation else section
        return _build(thought, name, _input_of(name, section, ctx), ctx.budget)
    inline = _INLINE_ARGS.match(body, name_start, name_end)
    stop = _STOP.search(body, name_end)
    has_input = stop is not None and _INPUT.match(body, stop.start()) is not None
    if inline is not None and (body[inline.end()] == "{" or (inline.group(2) and not has_input)):
        name = _check_name(inline.group(1))
        args: Any = {}
        if body[inline.end()] == "{":  # "search ({...})", "search {...}"
            args = _inline_args(body, inline.end(), name_end, name, bool(inline.group(2)), ctx)
            if has_input and _section(body, stop.end() if stop else len(body)):
                raise _Refusal("invalid_input", "Give the arguments once: inline or after 'Action Input:'.")
        return _build(thought, name, args, ctx.budget)
    name = _clean_name(raw_name)
    if stop is None or not has_input:
        raise _Refusal("invalid_input", "Write 'Action Input:' on the line after 'Action:'.")
    return _build(thought, name, _input_of(name, _section(body, stop.end()), ctx), ctx.budget)


def _clean_name(raw: str) -> str:
    name = raw.strip().strip("*`'\" ")
    if name.find("(") > 0 and name.endswith(")"):  # "add (add two numbers)"
        name = name[: name.find("(")]
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return _check_name(name.strip().rstrip(".:"))


def _inline_args(body: str, start: int, line_end: int, name: str, paren: bool, ctx: _Ctx) -> Any:
    """The object after an inline tool name, up to a closing ``)`` and the end of its line."""
    text = body[start:]
    spans, unclosed = _scan_objects(text, first_only=True)
    if not spans or spans[0][0] != 0:
        completed = _complete_input(name, text, ctx) if len(unclosed) <= _MAX_DEPTH else None
        if completed is None:
            raise _unclosed_refusal(unclosed)
        return completed
    end = start + spans[0][1]
    rest = body[end : max(line_end, end)].strip().rstrip(".`")
    if rest != (")" if paren else ""):
        raise _Refusal("invalid_input", "Write the arguments as one JSON object after the tool name.")
    return _decode(body[start:end], ctx.budget)


def _input_of(name: str, section: str, ctx: _Ctx) -> Any:
    """The text-format input; a cut-off JSON object only when a validator accepts its completion."""
    try:
        return _object_or_text(section, ctx.budget)
    except _Refusal as refusal:
        completed = _complete_input(name, section, ctx) if refusal.reason == "truncated" else None
        if completed is None:
            raise
        return completed


def _complete_input(name: str, text: str, ctx: _Ctx) -> dict[str, Any] | None:
    closed = _closed(text, ctx) if text.lstrip().startswith("{") else None
    args = _decode(closed, ctx.budget) if closed is not None else None
    valid = isinstance(args, dict) and canonical_name(name) not in FINISH_NAMES
    return args if valid and _valid(AgentAction(action=name, action_input=args), ctx) else None


def _text_input(value: str, budget: Budget) -> Any:
    """A text-format input: JSON object, ``Wrapper({...})``, quoted or bare string, ``None``."""
    value = value.strip("*").strip() if value.startswith("**") else value
    tag, _, rest = value.strip("`").partition("\n")
    fenced = (rest if tag.strip().isalnum() else tag + rest) if value.startswith("```") else ""
    call = _CALL_FORM.match(value)  # QueryEngineTool({"a": 1})
    for inner in (fenced, value[call.end() : -1] if call and value.endswith(")") else ""):
        decoded = _leading_object(inner.strip(), budget) if inner.strip().startswith("{") else None
        if isinstance(decoded, dict):
            return decoded
    if value.lower() in ("none", "null"):
        return None
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = value[1:-1] if value.count('"') == 2 else value
        return decoded if isinstance(decoded, str) else value
    if value.count('"') == 1 and (value.startswith('"') or value.endswith('"')):
        return value.strip('"')
    return value


# -- 4. nothing found --------------------------------------------------------------------------------


def _prose(body: str, names: frozenset[str], allow_plain: bool) -> AgentAction:
    """Refuse prose about calling a tool; accept other prose only when plain answers are allowed."""
    head = body[:_PROSE_WINDOW]  # talk about calling a tool comes first; this bounds the work
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n.strip())
    mentions = bool(alternatives) and re.search(rf"(?<!\w)(?:{alternatives})(?!\w)", head, re.I) is not None
    if allow_plain:
        if mentions or _STRONG_INTENT.search(head):
            raise _Refusal("prose")
        if _STOP.search(body) is None:
            return AgentAction(action=FINISH, action_input=body.strip())
        raise _Refusal("no_action")
    raise _Refusal("prose" if mentions or _INTENT.search(head) else "no_action")
