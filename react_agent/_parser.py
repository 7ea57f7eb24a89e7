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

Every stage is bounded, so hostile input of any size costs about one linear pass.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection
from itertools import islice
from typing import Any

import json_repair

from react_agent._errors import OutputParseError
from react_agent._types import FINISH, AgentAction

__all__ = ["parse_response"]

logger = logging.getLogger(__name__)

_MAX_CANDIDATES = 16  # complete objects decoded per reply
_MAX_OPEN_CHECKED = 16  # never-closed objects inspected for truncation
_REPAIR_BUDGET = 16_000  # characters per reply handed to json_repair
_PROSE_WINDOW = 8_000  # characters of prose searched for talk about tools
_MAX_SCAN_STEPS = 20_000  # regex steps of one brace scan
_MAX_DEPTH = 256  # deeper nesting counts as never closed
_MAX_NAME = 128

_NAME_KEYS = ("action", "tool", "tool_name", "name", "function")
_INPUT_KEYS = ("action_input", "tool_input", "args", "arguments", "parameters", "params", "input")
_THOUGHT_KEYS = ("thought", "though", "reasoning", "thinking")
_PROTOCOL = {*_NAME_KEYS, *_INPUT_KEYS, *_THOUGHT_KEYS}
_RESERVED = _PROTOCOL | {"type", "id", "observation", "tool_calls"}  # never flat arguments
_ANSWER_KEYS = ("answer", "output", "final_answer", "text", "response", "result", "content")
_FINISH_NAMES = {"finish", "final answer", "finalanswer"}
_GENERIC_NAMES = {"tool", "tools", "call_tool", "tool_call", "use_tool", "tool_use", "function", "action",
                  "function_call", "call", "call_function", "invoke", "execute", "run", "use"}  # fmt: skip
_NONE_NAMES = {"none", "null", "n/a", "na", "no action", "nothing", "no tool"}

_MESSAGES = {
    "empty": 'Your reply was empty. Reply with one JSON object with "thought", "action" and "action_input".',
    "truncated": "Your reply was cut off before the action was complete, so nothing was executed. "
    "Reply again with one complete, shorter JSON object.",
    "missing_action": 'Your reply has no action name: put the tool name, or FINISH, in "action".',
    "invalid_action": 'The "action" must be the name of one tool, or FINISH, written as a string.',
    "invalid_input": 'The "action_input" must be a JSON object with the tool arguments (or a string).',
    "prose": "You described the action in words, so nothing was executed. To call a tool, reply with one "
    'JSON object: {"thought": "...", "action": "<tool name>", "action_input": {...}}.',
    "no_action": 'No action was found in your reply. Reply with one JSON object with "thought", "action" and '
    '"action_input"; use the action FINISH to give the final answer.',
}

_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
# scan tokens: a run of flat objects (no nested braces, no single quotes), a brace run, a stretch of
# whole strings and plain text that cannot change the state (inside objects), or a lone quote
_STRING = r'"(?:[^"\\]|\\.)*"'
_FLAT_OBJECT = r"""\{(?:[^{}"'\\]|""" + _STRING + r")*\}"
_APOSTROPHE = r"(?:(?<![{\[,:\s])|(?<=[^{\[,:\s]\s))'"  # a "'" that cannot open a string
_FLAT = re.compile(_FLAT_OBJECT)
_TOP = re.compile("(" + _FLAT_OBJECT + "(?:[^{}]*" + _FLAT_OBJECT + r")*)|(\{+)")
_INSIDE = re.compile(
    "(" + _FLAT_OBJECT + """(?:[^{}"']*""" + _FLAT_OBJECT + r")*)|(\{+)|(\}+)"
    "|(?:" + _STRING + """|[^{}"']|""" + _APOSTROPHE + """)+|(")|(')"""
)
_SINGLE_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'")
_KEY = re.compile(r"""(?:["']|(?<=[{,]))(?:""" + "|".join(sorted(_PROTOCOL)) + r""")["']?\s*:""", re.IGNORECASE)
_NON_SPACE = re.compile(r"\S")
_CALL_FORM = re.compile(r"[A-Za-z_][\w.]*\(\s*(?=\{)")
_INTENT = re.compile(r"\b(?:call\w*|invok\w*|tools?|actions?|functions?|use|using|run)\b|вызов|вызв|инструмент", re.I)
_STRONG_INTENT = re.compile(
    r"\b(?:i(?:'ll| will| am going to| need to| should)|let me|let's)\s+(?:now\s+)?(?:call|use|invoke|run)\b"
    r"|\buse the \w+ tool\b|вызову|вызываю|воспользуюсь|использую инструмент",
    re.IGNORECASE,
)


def _label(words: str) -> re.Pattern[str]:
    """A line-anchored ``Label:`` marker, tolerant of markdown decoration and numbering."""
    return re.compile(rf"^[ \t>#*_-]*(?:{words})[ \t]*\d*[ \t*_]*:(?:\*\*|__)?[ \t]*", re.IGNORECASE | re.MULTILINE)


_ACTION = _label("action")
_INPUT = _label(r"action[ \t_]*input")
_FINAL = _label(r"final[ \t_]*answer|answer|финальный ответ|окончательный ответ")
_THOUGHT = _label("thought|мысль")
_STOP = _label(
    r"thought|action(?:[ \t_]*input)?|observation|final[ \t_]*answer|answer|question"
    r"|наблюдение|мысль|действие|финальный ответ|окончательный ответ"
)


class _Refusal(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason, self.message = reason, f"{_MESSAGES[reason]} {detail}".strip()


class _Budget:
    """Characters still allowed through json_repair for this reply."""

    def __init__(self, chars: int) -> None:
        self.chars = chars


_Event = tuple[int, "AgentAction | _Refusal"]  # where in the text, and what it amounts to


def parse_response(
    text: str, tool_names: Collection[str] | None = None, *, allow_plain_answer: bool = False
) -> AgentAction:
    """Extract the first action of a model reply; raise :class:`OutputParseError` when none is safe.

    ``tool_names`` only disambiguates envelopes and prose: unknown names are not refused here.
    ``allow_plain_answer`` accepts prose without any action or format marker as the FINISH answer.
    """
    try:
        return _parse(text, frozenset(tool_names or ()), allow_plain_answer)
    except _Refusal as refusal:
        logger.debug("model output refused: %s (%d chars)", refusal.reason, len(text or ""))
        raise OutputParseError(refusal.message, text, reason=refusal.reason) from None
    except Exception as exc:  # a safety net: nothing but AgentAction or OutputParseError leaves here
        logger.debug("parser failure on %d chars: %r", len(text or ""), exc)
        raise OutputParseError(_MESSAGES["no_action"], text, reason="no_action") from exc


def _parse(text: str, names: frozenset[str], allow_plain: bool) -> AgentAction:
    if not text or not text.strip():
        raise _Refusal("empty")
    fast = _whole_object(text, names)
    if fast is not None:
        return fast
    body = _strip_think(text)
    budget = _Budget(_REPAIR_BUDGET)
    json_event, saw_dict, saw_protocol = _json_stage(body, names, budget)
    events = [e for e in (json_event, _text_stage(body, budget)) if e is not None]
    if events:
        outcome = min(events, key=lambda e: e[0])[1]
        if isinstance(outcome, _Refusal):
            raise outcome
        return outcome
    if saw_protocol or (saw_dict and not allow_plain):
        raise _Refusal("missing_action")
    return _prose(body, names, allow_plain)


def _whole_object(text: str, names: frozenset[str]) -> AgentAction | None:
    """The common case, a reply that is exactly one strict-JSON action object, without the scans.

    Equivalent to the full pipeline for such a reply (its object starts at 0, so nothing can come
    before it); ``None`` sends anything else through the pipeline.
    """
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")) or "<think" in stripped.lower():
        return None
    try:
        obj = json.loads(stripped, strict=False)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    obj = _unwrap(obj)
    if not _looks_like_action(obj, names):
        return None
    return _from_object(obj, names, "", _Budget(_REPAIR_BUDGET))


# -- 1. think blocks ---------------------------------------------------------------------------------


def _strip_think(text: str) -> str:
    close, opening = _THINK_CLOSE.search(text), _THINK_OPEN.search(text)
    if close and (opening is None or close.start() < opening.start()):
        text = text[close.end() :]  # the chat template opened the block
    kept: list[str] = []
    pos = 0
    while (start := _THINK_OPEN.search(text, pos)) is not None:
        kept.append(text[pos : start.start()])
        end = _THINK_CLOSE.search(text, start.end())
        if end is None:  # never closed: the rest is still thinking
            if not "".join(kept).strip():
                raise _Refusal("truncated", "Close the <think> block, then write the action.")
            return "".join(kept)
        pos = end.end()
    body = "".join(kept) + text[pos:]
    if not body.strip():
        raise _Refusal("no_action", "Your reply held only a <think> block.")
    return body


# -- 2. candidates -----------------------------------------------------------------------------------


def _scan_objects(text: str, first_only: bool = False) -> tuple[list[tuple[int, int]], list[int]]:
    """One pass: the outermost complete ``{…}`` spans in order, and the starts of objects never closed.

    Quotes delimit strings only inside an object; a ``'`` opens one only where a key or value may start,
    so apostrophes in prose do not. Each step is one regex match over a stretch of text, and the steps
    and the depth are capped: past the caps the rest counts as never closed.
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


def _value_may_start(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "{[,:"


def _decode(candidate: str, budget: _Budget) -> Any:
    try:
        return json.loads(candidate, strict=False)
    except (ValueError, RecursionError):
        pass
    if ":" not in candidate or len(candidate) > budget.chars:
        return None
    budget.chars -= len(candidate)
    try:
        return json_repair.loads(candidate, skip_json_loads=True)
    except Exception:  # json_repair's own failures on pathological input
        return None


def _json_stage(body: str, names: frozenset[str], budget: _Budget) -> tuple[_Event | None, bool, bool]:
    """The first action-looking object (or its refusal); whether any object / protocol key was seen."""
    spans, unclosed = _scan_objects(body)
    found: _Event | None = None
    saw_dict = saw_protocol = False
    for start, end in spans[:_MAX_CANDIDATES]:
        obj = _decode(body[start:end], budget)
        if isinstance(obj, dict):
            obj = _unwrap(obj)
            saw_dict, saw_protocol = True, saw_protocol or not _PROTOCOL.isdisjoint(obj)
            if _looks_like_action(obj, names):
                found = (start, _outcome(_from_object, obj, names, body[:start], budget))
                break
    for start in unclosed[:_MAX_OPEN_CHECKED]:  # an action cut off before the first complete one
        if found and start > found[0]:
            break
        region_end = body.find("{", start + 1, start + 2000)
        if _KEY.search(body, start + 1, region_end if region_end > 0 else start + 2000):
            return (start, _Refusal("truncated")), saw_dict, saw_protocol
    return found, saw_dict, saw_protocol


def _text_stage(body: str, budget: _Budget) -> _Event | None:
    """The first classic ``Final Answer:`` or ``Action:`` + ``Action Input:``, whichever comes first.

    Only the first ``Action:`` label counts: when it introduces a JSON block the JSON stage decides.
    """
    final = _FINAL.search(body)
    events: list[_Event] = [] if final is None else [(final.start(), _outcome(_final_answer, body, final))]
    label = _ACTION.search(body, 0, final.start() if final else len(body))
    name, name_end = _action_name(body, label.end()) if label else (None, 0)
    if label is not None and name is not None:
        events.append((label.start(), _outcome(_text_action, body, label.start(), name, name_end, budget)))
    orphan = _INPUT.search(body)
    if not events and orphan is not None and not _ACTION.search(body, 0, orphan.start()):
        events.append((orphan.start(), _Refusal("missing_action", "Write 'Action:' before 'Action Input:'.")))
    return min(events, key=lambda e: e[0]) if events else None


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
    elif following.startswith(("{", "```")):  # "Action: x" over a JSON block: the JSON is the action
        return None, line_end
    return (None if value.startswith(("{", "`", "[{")) else value), line_end


# -- 3. normalise ------------------------------------------------------------------------------------


def _norm_keys(obj: dict[str, Any]) -> dict[str, Any]:
    """``"Action Input"`` → ``action_input``; keys that are not protocol keys keep their spelling."""
    canon = {key: re.sub(r"[\s-]+", "_", str(key).strip().lower()) for key in obj}
    return {(canon[k] if canon[k] in _RESERVED else k): v for k, v in obj.items()}


def _unwrap(obj: dict[str, Any]) -> dict[str, Any]:
    """Flatten envelopes: ``tool_calls: [...]``, ``function: {...}``, ``action: {name, args}``."""
    obj = _norm_keys(obj)
    for _ in range(3):
        calls = obj.pop("tool_calls", None)
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            obj.update(_norm_keys(calls[0]))
            continue
        key = next((k for k in ("function", "action", "tool") if isinstance(obj.get(k), dict)), None)
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


def _canon(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.strip().lower())


def _resolve_name(obj: dict[str, Any], names: frozenset[str]) -> Any:
    """The tool name; ``{"action": "call_tool", "name": "x"}`` and the like resolve to ``x``."""
    first, *rest = [obj[k] for k in _NAME_KEYS if k in obj]
    if isinstance(first, str) and first in names:
        return first
    others = [v for v in rest if isinstance(v, str) and v.strip()]
    known = [v for v in others if v in names]
    placeholder = first is None or (
        isinstance(first, str) and (not first.strip() or _canon(first).replace(" ", "_") in _GENERIC_NAMES)
    )
    if known and (first is None or isinstance(first, str)):
        return known[0]
    return others[0] if others and placeholder else first


def _from_object(obj: dict[str, Any], names: frozenset[str], prefix: str, budget: _Budget) -> AgentAction:
    thought_key = next((k for k in _THOUGHT_KEYS if k in obj), None)
    thought = _as_text(obj[thought_key]) if thought_key else _prefix_thought(prefix)
    name = _check_name(_resolve_name(obj, names))
    input_key = next((k for k in _INPUT_KEYS if k in obj), None)
    if input_key is not None:
        raw_input = obj[input_key]
    else:  # flat arguments beside the name
        raw_input = {k: v for k, v in obj.items() if k not in _RESERVED} or None
    return _build(thought, name, raw_input, budget)


def _check_name(raw: Any) -> str:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise _Refusal("missing_action")
    if not isinstance(raw, str):
        raise _Refusal("invalid_action", f"It was a {type(raw).__name__}.")
    name: str = raw.strip()
    canon = _canon(name)
    if canon in _NONE_NAMES or len(name) > _MAX_NAME or "\n" in name:
        raise _Refusal("invalid_action", "To give the final answer use FINISH.")
    if "final answer" in canon and canon not in _FINISH_NAMES:
        raise _Refusal("invalid_action", "Either call one tool or give the final answer, not both.")
    return name


def _build(thought: str, name: str, raw_input: Any, budget: _Budget) -> AgentAction:
    if _canon(name) in _FINISH_NAMES:
        return AgentAction(thought=thought, action=FINISH, action_input=_finish_answer(raw_input))
    return AgentAction(thought=thought, action=name, action_input=_tool_input(raw_input, budget))


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _finish_answer(value: Any) -> str:
    if isinstance(value, dict):
        key = next((k for k in _ANSWER_KEYS if k in value), None)
        if key is not None:
            return _as_text(value[key])
        if len(value) == 1:
            return _as_text(next(iter(value.values())))
    return _as_text(value)


def _tool_input(value: Any, budget: _Budget) -> dict[str, Any] | str:
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


def _leading_object(text: str, budget: _Budget) -> Any:
    """Decode the object that opens ``text``; refuse it as truncated when it never closes."""
    spans, unclosed = _scan_objects(text, first_only=True)
    if spans and spans[0][0] == 0:
        return _decode(text[: spans[0][1]], budget)
    if unclosed and unclosed[0] == 0:
        raise _Refusal("truncated")
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


def _text_action(body: str, label: int, raw_name: str, name_end: int, budget: _Budget) -> AgentAction:
    name = raw_name.strip().strip("*`'\" ")
    if name.find("(") > 0 and name.endswith(")"):  # "add (add two numbers)"
        name = name[: name.find("(")]
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    name = _check_name(name.strip().rstrip(".:"))
    stop = _STOP.search(body, name_end)
    if stop is None or not _INPUT.match(body, stop.start()):
        raise _Refusal("invalid_input", "Write 'Action Input:' on the line after 'Action:'.")
    return _build(_prefix_thought(body[:label]), name, _text_input(_section(body, stop.end()), budget), budget)


def _text_input(value: str, budget: _Budget) -> Any:
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
