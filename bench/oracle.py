"""The oracle: do the embedded model's post-decoding steps keep a correct call as it is?

For each case the correct call (BFCL: the first possible answer; a suite: its expected call) stands in for the
model's output and goes through every after-decoding step of ``LocalChatModel()``'s default configuration, with
the task and the tools as the agent hands them (``CallContext``). A case is preserved when every one of its calls
comes out unchanged; a case whose right answer is no call (irrelevance) is preserved when a FINISH answer comes out
unchanged. ``python -m bench.bfcl --oracle --category-file FILE`` prints one line per category::

    simple_python | oracle | preserved 400/400
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_agent import FINISH
from react_agent.models import CallContext, LocalChatModel, ToolInfo

DEVELOPMENT_CATEGORIES = ("simple_python", "multiple", "irrelevance", "parallel", "parallel_multiple", "simple_java",
                          "simple_javascript")
"""The BFCL categories the oracle may run on (the ``live_*`` ones are reserved for independent checks)."""


@dataclass(frozen=True)
class OracleCase:
    """One case: its id, the task, the tools (``ToolInfo``) and the correct calls (``[]``: no call is right)."""

    id: str
    task: str
    tools: tuple[ToolInfo, ...]
    calls: tuple[tuple[str, Mapping[str, Any]], ...]


def admitted(name: str, args: Mapping[str, Any], case: OracleCase, model: LocalChatModel,
             context: CallContext) -> bool:
    """Whether the grammar the model builds for ``case`` (its grammar stage applied) admits the call when the tool's
    own schema does: its arguments validate against that tool's decoding schema (patterns and enums included)."""
    import jsonschema

    params = next((t.parameters for t in case.tools if t.name == name), None)
    if params is None:
        return True  # a call of a tool the case does not list: nothing to check
    branch = {"type": "object", "properties": {"action": {"const": name}, "action_input": params}}
    decoded = model.decoding_schema({"anyOf": [branch]}, context)
    try:
        jsonschema.validate(dict(args), params)
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return True  # the tool's own schema rejects the recorded answer: no grammar would admit it
    try:
        jsonschema.validate(dict(args), decoded["anyOf"][0]["properties"]["action_input"])
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        return True  # a schema jsonschema cannot read (BFCL's own types): the grammar stage did not touch it
    return True


def preserved(case: OracleCase, model: LocalChatModel | None = None) -> bool:
    """Whether every correct call of ``case`` is admitted by the grammar and leaves the model's after-decoding
    steps unchanged."""
    model = model or LocalChatModel()
    context = CallContext(task=case.task, tools=case.tools)
    if not all(admitted(name, args, case, model, context) for name, args in case.calls):
        return False
    answers = [{"thought": "", "action": name, "action_input": dict(args)} for name, args in case.calls] \
        or [{"thought": "", "action": FINISH, "action_input": "No tool does this."}]
    return all(model.after_decoding(answer, context) == answer for answer in answers)


def changed(cases: Iterable[OracleCase], model: LocalChatModel | None = None) -> list[str]:
    """The ids of the cases whose correct calls are not preserved."""
    return [case.id for case in cases if not preserved(case, model)]


def line(category: str, cases: Sequence[OracleCase], model: LocalChatModel | None = None) -> str:
    """``<category> | oracle | preserved N/M``."""
    kept = len(cases) - len(changed(cases, model))
    return f"{category} | oracle | preserved {kept}/{len(cases)}"


def bfcl_cases(category_file: Path, answers: Path | None = None) -> list[OracleCase]:
    """The cases of a BFCL development category file with their first possible answers."""
    from bench._bfcl_data import category_of, ideal_args, json_schema, load_category

    category = category_of(Path(category_file))
    if category.startswith("live_") or category not in DEVELOPMENT_CATEGORIES:
        raise SystemExit(f"--oracle runs on the development categories only ({', '.join(DEVELOPMENT_CATEGORIES)}); "
                         f"got {category!r}")
    out = []
    for case in load_category(Path(category_file), answers):
        docs = {doc["name"]: doc for doc in case.functions}
        tools = tuple(ToolInfo(name=doc["name"], description=str(doc.get("description") or ""),
                               parameters=json_schema({**(doc.get("parameters") or {}), "type": "dict"}))
                      for doc in case.functions)
        calls = tuple(ideal_args(truth, docs.get(next(iter(truth)))) for truth in case.ground_truth or []) \
            if case.expects_call else ()
        out.append(OracleCase(id=case.id, task=case.question, tools=tools, calls=calls))
    return out


def suite_cases(lang: str) -> list[OracleCase]:
    """The project's suite of ``lang`` through ``bench.suites.oracle_cases(lang)``: ``(task_text, tool_specs,
    expected_call)`` tuples, the specs ``{"name", "description", "parameters"}``, the expected call
    ``{"tool", "arguments"}`` or ``None`` for no call."""
    from bench.suites import oracle_cases

    return [as_case(item, f"{lang}-{i}") for i, item in enumerate(oracle_cases(lang), 1)]


def as_case(item: Any, case_id: str) -> OracleCase:
    """An :class:`OracleCase` from one ``(task_text, tool_specs, expected_call)`` item of a suite."""
    task, specs, expected = item
    tools = tuple(ToolInfo(name=spec["name"], description=str(spec.get("description") or ""),
                           parameters=dict(spec.get("parameters") or {})) for spec in specs)
    calls = () if expected is None else ((str(expected["tool"]), dict(expected.get("arguments") or {})),)
    return OracleCase(id=case_id, task=str(task), tools=tools, calls=calls)
