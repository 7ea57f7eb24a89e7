"""The decoder of one agent answer under an answer schema: the pipeline's stages around llama.cpp completions.

``complete(prompt, schema, suffix=..., stop=..., min_tokens=...)`` is one completion constrained by ``schema``
(``_model._Calls`` in the model, a scripted function in tests). :func:`decoded_answer` runs the techniques of
:mod:`_pipeline`: the before-decoding and grammar stages on the schema, the decoding itself (two stages and the
retry of a cut value when those techniques are on; with greedy decoding the keys and quotes every answer shares are
written into the prompt, not decoded), then the after-decoding stage on the decoded call;
:func:`answered` decides again without a tool whose call the after-decoding stage finds invented, or (``fit_check``;
``fit_check_unwritten`` for a call with a required value the task does not write) that the model itself, asked,
says does not do what the task asks.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from react_agent._types import FINISH, CallContext
from react_agent.models.local._pipeline import Step, Technique, branches, run_stage
from react_agent.models.local._unwritten import unwritten_required

__all__ = ["CUT_RETRY_TOKENS", "CUT_STRING_LENGTH", "FINISH_VOTE", "FINISH_VOTE_AFTER_RESULT", "FIT_CHECK",
           "VOTE_PREFIX", "Judge", "answered", "bounded_values", "decoded_answer", "finish_voted", "finished",
           "prepared", "unfit"]

logger = logging.getLogger("react_agent.models.local")

ARGS_KEY = '"action_input"'
THOUGHT_OPEN = '{"thought": "'
ACTION_OPEN = '", "action": "'
VOTE_PREFIX = '{"action": "'
"""The answer's start at which :func:`finish_voted` reads the model's probabilities of the actions."""
FINISH_VOTE = 0.5
"""FINISH wins the vote before a run's first call with more than this share of the probability of the actions'
first tokens."""
FINISH_VOTE_AFTER_RESULT = 0.7
"""FINISH wins the vote after a call's result with more than this share: the model asked for the action alone
gives FINISH 0.79 or more after the one call a task needs, and up to 0.58 after most lookups whose result the next
call needs (docs/local-models.md has the measurement)."""
FIT_CHECK = 0.3
"""With ``fit_check``, a run's first call is decided again without its tool when the model, asked whether that tool
does what the task asks, gives "no" more than this share of the probability of "yes" and "no". The default model
leans to "yes": on BFCL development tasks it gave "no" 0.10-0.27 for the tools that fit (one in 59 above 0.3) and
0.16-0.44 for tools it had called on tasks no tool fits (13 in 30 above 0.3)."""
CUT_RETRY_TOKENS = 96
"""Tokens the arguments decoded again after a cut may use even when the call's budget is spent."""
CUT_STRING_LENGTH = 80
"""``maxLength`` of a free-text argument decoded again after a cut (a value that ran away)."""

_ACTION = re.compile(r'"action"\s*:\s*("(?:[^"\\]|\\.)*")')
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w.])")


def prepared(techniques: Sequence[Technique], schema: Mapping[str, Any] | None, context: CallContext) -> Step:
    """The step the before-decoding and grammar stages leave for ``schema``."""
    step = run_stage(techniques, "before_decoding", Step(schema=schema), context)
    return run_stage(techniques, "grammar", step, context)


def finished(techniques: Sequence[Technique], text: str, context: CallContext) -> str:
    """``text`` (a decoded answer) after the after-decoding stage; the same text when no technique changes it
    (or when it is no answer object: a cut reply stays as it is)."""
    return _after(techniques, text, context)[0]


def _after(techniques: Sequence[Technique], text: str, context: CallContext) -> tuple[str, str | None, tuple[str, ...]]:
    """:func:`finished`'s text, the action to decide again without (``None`` when the call stands) and the paths
    of its invented arguments."""
    call = _json_or_none(text)
    if isinstance(call, dict) and list(call) == ["actions"] and isinstance(call["actions"], list):
        return _each_after(techniques, text, call["actions"], context), None, ()
    if not isinstance(call, dict) or not isinstance(call.get("action"), str) or "action_input" not in call:
        return text, None, ()
    step = run_stage(techniques, "after_decoding", Step(schema=None, call=call), context)
    done = step.call
    out = text if done is None or done == call else json.dumps(done, ensure_ascii=False)
    return (out, call["action"], step.invented) if step.invented else (out, None, ())


def _each_after(techniques: Sequence[Technique], text: str, items: list[Any], context: CallContext) -> str:
    """A reply of several calls (``{"actions": [...]}``, decoded under one grammar) after the after-decoding stage
    run on each call; a call it would reject stays as decoded (one grammar decodes the whole list, so no call of it
    can be decided again alone)."""
    done = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("action"), str) and "action_input" in item:
            item = run_stage(techniques, "after_decoding", Step(schema=None, call=item), context).call or item
        done.append(item)
    return text if done == items else json.dumps({"actions": done}, ensure_ascii=False)


Again = Callable[[Sequence[tuple[str, str, tuple[str, ...]]]], str]
"""Builds the prompt of a decision taken again from the rejected answers so far: ``(answer text, action, invented
argument paths)`` each (the model adds each answer and a note naming what it lacks as turns of the chat; no paths:
the model said the tool does not do what the task asks)."""

Judge = Callable[[str], tuple[str, str, str]]
"""For an action: the prompt that asks the model whether that tool does what the task asks (the answer begun), and
the "yes" and the "no" that continue it."""


def unfit(complete: Callable[..., str], judge: Judge, action: str) -> bool:
    """Whether the model, asked through ``judge(action)``, gives "no" more than :data:`FIT_CHECK` of the
    probability of "yes" and "no" (when ``complete.share`` can tell)."""
    share = getattr(complete, "share", None)
    if share is None:
        return False
    prompt, yes, no = judge(action)
    vote = share(prompt, [yes, no], no)
    if vote is None:
        return False
    logger.debug("local model: asked whether %s does what the task asks, the model gives no %.2f", action, vote)
    return bool(vote > FIT_CHECK)


def _doubted(step: Step, call: dict[str, Any], context: CallContext) -> bool:
    """Whether the model is asked if the tool of ``call`` (a decoded call) does what the task asks: always with
    ``fit_check``; with ``fit_check_unwritten`` when a required value of the call is written nowhere in the task
    (:func:`._unwritten.unwritten_required`)."""
    if step.fit_check:
        return True
    tool = next((t for t in context.tools if t.name == call.get("action")), None)
    paths = unwritten_required(call.get("action_input"), tool.parameters if tool else None, context.text)
    if paths:
        logger.info("local model: the task writes no value of %s's %s; asking whether the tool fits",
                    call.get("action"), ", ".join(paths))
    return bool(paths)


def _called(call: Any) -> str | None:
    """The action of a decoded answer (its JSON value), or ``None`` when it is no answer object."""
    return call["action"] if isinstance(call, dict) and isinstance(call.get("action"), str) else None


def answered(complete: Callable[..., str], prompt: str, step: Step, context: CallContext,
             techniques: Sequence[Technique], *, again: Again | None = None,
             restart: Callable[[], None] | None = None, judge: Judge | None = None) -> str:
    """:func:`decoded_answer` then :func:`finished`; a call whose arguments the after-decoding stage finds
    invented (:attr:`Step.invented`) is decided again with its action taken out of the schema, on the prompt
    ``again`` builds (the same prompt without it), with a fresh token budget (``restart``) and no second finish
    vote (the model decides after reading the note, thought first), until a call stands or one action is left
    (the last one stands as it is decoded). With ``step.fit_check`` and ``judge``, a run's first call that stands
    is decided again the same way when the model says its tool does not do what the task asks (:func:`unfit`;
    asked once a decision, and only while FINISH is an option); with ``step.fit_check_unwritten``, only a first
    call with a required value the task writes in no form is asked about."""
    rejected: list[tuple[str, str, tuple[str, ...]]] = []
    while True:
        decoded = decoded_answer(complete, prompt, step, context)
        text, action, paths = _after(techniques, decoded, context)
        options = branches(step.schema or {}) or {}
        if action is None and (step.fit_check or step.fit_check_unwritten) and judge is not None and context.task \
                and not context.observations and not rejected and FINISH in options:
            call = _json_or_none(text)
            called = _called(call)
            if called is not None and called != FINISH and called in options and _doubted(step, call, context) \
                    and unfit(complete, judge, called):
                action = called
        if action is None or action not in options or len(options) < 2:
            return text
        if paths:
            logger.info("local model: %s(...) has arguments that nothing in the task or the observations gives (%s); "
                        "deciding again without it", action, ", ".join(paths))
        else:
            logger.info("local model: %s does not do what the task asks, the model says; deciding again without it",
                        action)
        rejected.append((decoded, action, paths))
        step = replace(step, schema=_without(step.schema or {}, action), finish_vote=False)
        if again is not None:
            prompt = again(rejected)
        if restart is not None:
            restart()


def finish_voted(complete: Callable[..., str], prompt: str, schema: Mapping[str, Any], context: CallContext) -> bool:
    """Whether the model, asked for the action alone (the answer begun with :data:`VOTE_PREFIX`, no thought
    before it), gives FINISH more than :data:`FINISH_VOTE` (before a run's first call) or
    :data:`FINISH_VOTE_AFTER_RESULT` (once an observation is there) of the probability its next token gives the
    actions' first tokens. Asked with FINISH and a tool to choose from, and when ``complete`` can tell
    (``complete.share(prompt, options, option)``: ``None`` when it cannot, as when FINISH and a tool begin with
    the same token)."""
    actions = branches(schema) or {}
    share = getattr(complete, "share", None)
    if FINISH not in actions or len(actions) < 2 or share is None:
        return False
    vote = share(prompt + VOTE_PREFIX, list(actions), FINISH)
    if vote is None:
        return False
    logger.debug("local model: FINISH has %.2f of the first action token's probability", vote)
    return bool(vote > (FINISH_VOTE_AFTER_RESULT if context.observations else FINISH_VOTE))


def _only(schema: Mapping[str, Any], action: str) -> dict[str, Any]:
    """An answer schema with the branch of ``action`` alone."""
    kept = [branch for branch in schema["anyOf"] if branch["properties"]["action"].get("const") == action]
    return {**schema, "anyOf": kept}


def _without(schema: Mapping[str, Any], action: str) -> dict[str, Any]:
    """An answer schema without the branch of ``action``."""
    kept = [branch for branch in schema["anyOf"] if branch["properties"]["action"].get("const") != action]
    return {**schema, "anyOf": kept}


def decoded_answer(complete: Callable[..., str], prompt: str, step: Step, context: CallContext) -> str:
    """One answer decoded under ``step.schema`` (an answer schema: one branch per action).

    With ``step.finish_vote``: when :func:`finish_voted`, the answer schema keeps FINISH alone. With
    ``step.two_stage``: first the answer up to its ``"action_input"`` key under the whole schema (the
    thought and the action), then ``"action_input":`` and the arguments under that one action's schema, then
    ``}``. With ``step.bare_arguments``: a tool's arguments are decoded after the action alone
    (``{"action": "<tool>", "action_input":``), not after the thought; the answer keeps the thought, and FINISH's
    text is still decoded after it. With ``step.retry_cut``: arguments the token budget cut are decoded once more
    with bounded values (:func:`_uncut`). When ``complete.begins`` (greedy decoding on llama.cpp), the text every
    answer of the schema shares is written, not decoded (:func:`_written_head`, :func:`_arguments_opening`). A reply
    that cannot be read at any point is returned as it is.
    """
    schema = step.schema or {}
    if step.finish_vote and finish_voted(complete, prompt, schema, context):
        schema = _only(schema, FINISH)
    writer = complete if getattr(complete, "begins", False) and _thought_first(schema) else None
    if step.retry_cut:
        complete = _uncut(complete, context)
    actions = branches(schema) or {}
    if not step.two_stage or not actions:
        return str(complete(prompt, schema))
    if isinstance(schema.get("$defs"), Mapping):  # hoisted recursive definitions: every stage needs them
        actions = {name: {**args, "$defs": schema["$defs"]} for name, args in actions.items()}
    head = None
    if writer is not None:
        try:
            head = _written_head(writer, prompt, schema, actions)
        except ValueError:  # the grammar does not read the written text: the start is decoded whole
            logger.debug("local model: the answer's start decoded without written text")
    if head is None:
        head = complete(prompt, schema, stop=[ARGS_KEY])
    found = _ACTION.search(head)
    action = _json_or_none(found.group(1)) if found else None
    if action not in actions or head.rstrip().endswith("}"):
        return head
    prefix = head + ARGS_KEY + ":"
    lead = _bare_lead(action) if step.bare_arguments and action != FINISH else prefix
    opening = _arguments_opening(actions[action]) if writer is not None and action != FINISH else ""
    if opening:
        try:
            return prefix + opening + complete(prompt + lead + opening, actions[action], suffix="}", begun=opening)
        except ValueError:  # the grammar does not read the opening as written: the arguments are decoded whole
            logger.debug("local model: %s's arguments decoded without a written opening", action)
    return prefix + complete(prompt + lead, actions[action], suffix="}")


def _thought_first(schema: Mapping[str, Any]) -> bool:
    """Whether every branch of an answer schema is ``{"thought": <string>, "action": ..., "action_input": ...}`` in
    that order, all three required: the text around the thought and the action is then the same for every
    answer."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or not options:
        return False
    for branch in options:
        props = branch.get("properties") if isinstance(branch, Mapping) else None
        if not isinstance(props, Mapping) or list(props)[:3] != ["thought", "action", "action_input"]:
            return False
        thought = props["thought"]
        if not isinstance(thought, Mapping) or thought.get("type") != "string" or {"enum", "const"} & set(thought) \
                or not {"thought", "action", "action_input"} <= set(branch.get("required") or ()):
            return False
    return True


def _arguments_opening(schema: Mapping[str, Any]) -> str:
    """The text every value of an arguments schema begins with, as its grammar writes it after the ``:`` of
    ``"action_input":``: `` {"<first required key>":``; ``""`` when the schema requires no property (or its first
    key is not plain ASCII, which the grammar escapes). It ends before the value: the tokenizer joins a value's
    opening quote with the punctuation after it (`` "/`` begins a path), so the model decodes the quote itself."""
    props, required = schema.get("properties"), schema.get("required")
    if schema.get("type") != "object" or not isinstance(props, Mapping) or not isinstance(required, list):
        return ""
    first = next((name for name in props if name in required), None)
    if not isinstance(first, str) or json.dumps(first) != json.dumps(first, ensure_ascii=False):
        return ""
    return " {" + json.dumps(first) + ":"


def _written_head(complete: Callable[..., Any], prompt: str, schema: Mapping[str, Any],
                  actions: Mapping[str, Any]) -> str | None:
    """The answer up to its ``"action_input"`` key (as :func:`decoded_answer`'s first stage decodes it) with the
    text every answer shares written, not decoded: the thought is decoded after :data:`THOUGHT_OPEN` up to its
    closing quote, the action after :data:`ACTION_OPEN` up to its own, or written when it is the only one.
    ``complete(..., begun=...)`` takes a prompt that ends with the answer's start, which the grammar reads first;
    ``complete.cut`` says the last completion ended at the token budget. A cut answer is returned as it is;
    ``None`` when the action read is none of ``actions``."""
    written = THOUGHT_OPEN
    while True:  # an escaped quote in the thought ends a completion early: the thought goes on after it
        written += str(complete(prompt + written, schema, stop=['"'], begun=written))
        if getattr(complete, "cut", False):
            return written
        escaped = (len(written) - len(written.rstrip("\\"))) % 2 == 1
        written += '"'
        if not escaped:
            break
    written += ACTION_OPEN[1:]
    if len(actions) == 1:  # one action to choose from (FINISH after the vote): its name is written too
        return written + json.dumps(next(iter(actions)), ensure_ascii=False)[1:-1] + '", '
    action = str(complete(prompt + written, schema, stop=['"'], begun=written))
    if getattr(complete, "cut", False):
        return written + action
    if _json_or_none('"' + action + '"') not in actions:
        return None
    return written + action + '", '


def _bare_lead(action: str) -> str:
    """The answer's start a call's arguments are decoded after with ``bare_arguments``: the action alone, begun as
    :data:`VOTE_PREFIX` begins (the vote's prompt and this one share their tokens); the name JSON-escaped."""
    return '{"action": ' + json.dumps(action, ensure_ascii=False) + ", " + ARGS_KEY + ":"


def _closed_text(body: str) -> str:
    """An answer text (the JSON string after ``"action_input":`` and the closing ``}``) cut by the token budget,
    closed where it was cut."""
    text = body.strip().removeprefix('"').rstrip("}").rstrip('"').rstrip("\\")
    value = _json_or_none('"' + text + '"')
    return " " + json.dumps(value if isinstance(value, str) else text, ensure_ascii=False) + "}"


def bounded_values(schema: Mapping[str, Any], text: str) -> dict[str, Any]:
    """``schema`` (an object of arguments) with each top-level free-text string bounded to
    :data:`CUT_STRING_LENGTH` characters and each plain number restricted to the numbers ``text`` writes (when
    it writes any): what ends a value that ran away ("1000000…", "name_and_season_and_…")."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return dict(schema)
    written = sorted({float(n) for n in _NUMBER.findall(text)})
    out: dict[str, Any] = {}
    for name, sub in props.items():
        if not isinstance(sub, Mapping) or "enum" in sub or "const" in sub:
            out[name] = sub
        elif sub.get("type") == "string" and "pattern" not in sub:
            limit = min(int(sub.get("maxLength", CUT_STRING_LENGTH)), CUT_STRING_LENGTH)
            out[name] = {**sub, "maxLength": limit}
        elif sub.get("type") == "integer" and any(n.is_integer() for n in written):
            out[name] = {"enum": [int(n) for n in written if n.is_integer()]}
        elif sub.get("type") == "number" and written:
            out[name] = {"enum": [int(n) if n.is_integer() else n for n in written]}
        else:
            out[name] = sub
    return {**schema, "properties": out}


def _uncut(complete: Callable[..., str], context: CallContext) -> Callable[..., str]:
    """``complete`` whose arguments (a completion with ``suffix="}"``) are made whole when the token budget cuts
    them: a FINISH answer text (a string schema) is closed where it was cut; a call's arguments are decoded
    once more under :func:`bounded_values` with a reserve of tokens; they stay cut when that is cut too."""

    def whole(prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Sequence[str] = (),
              min_tokens: int = 1, **begun: str) -> str:
        text = complete(prompt, schema, suffix=suffix, stop=stop, min_tokens=min_tokens, **begun)
        start = begun.get("begun", "")
        if suffix != "}" or _json_or_none((start + text).rstrip()[:-1]) is not None:  # only a cut fails the grammar
            return text
        if schema.get("type") == "string" and not start:
            return _closed_text(text)
        if not isinstance(schema.get("properties"), Mapping):
            return text
        again = complete(prompt, bounded_values(schema, context.text), suffix=suffix, stop=stop,
                         min_tokens=CUT_RETRY_TOKENS, **begun)
        return again if _json_or_none((start + again).rstrip()[:-1]) is not None else text

    return whole


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text, strict=False)  # a raw control character inside a string: the grammar allows it
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's stack (a degenerate reply)
        return None
