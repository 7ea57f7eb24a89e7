"""BFCL data: load a category file and its possible answers, turn function docs into langchain tools,
and score one call with BFCL's AST answer-matching rules (a port of ``simple_function_checker``).

The checker is ported rather than imported because ``bfcl_eval.eval_checker.ast_eval.ast_checker``
imports BFCL's model registry, which needs the heavy dependencies that ``pip install --no-deps
bfcl-eval`` leaves out. The port keeps the Python rules of bfcl-eval (Apache-2.0): required
parameters present, no unknown parameters, Python type check (int accepted for float, tuple compared
as list), strings compared after BFCL's standardisation (lower case, spaces and ``,./-_*^`` removed),
lists/dicts element-wise, each value among the accepted ones, ``""`` in the accepted list meaning the
argument may be omitted.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PYTHON_TYPE_MAPPING: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list,
    "dict": dict, "any": str,
}
PYTHON_NESTED_TYPE_CHECK_LIST = ("array", "tuple")
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "integer": "integer", "string": "string",
               "boolean": "boolean", "array": "array", "object": "object", "number": "number"}
_KEPT = ("description", "enum")


def data_dir() -> Path:
    import bfcl_eval

    return Path(bfcl_eval.__file__).resolve().parent / "data"


@dataclass
class BfclCase:
    id: str
    category: str
    question: str
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None  # None: no call is the right answer
    expects_call: bool = True
    meta: dict[str, Any] = field(default_factory=dict)


def category_of(path: Path) -> str:
    return re.sub(r"^BFCL_v\d+_", "", path.stem)


def default_answers(category_file: Path) -> Path | None:
    candidate = category_file.parent / "possible_answer" / category_file.name
    return candidate if candidate.is_file() else None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _question_text(question: Any) -> str:
    """The first turn's messages (system prompt first), joined; BFCL nests turns as lists of messages."""
    turn = question[0] if question and isinstance(question[0], list) else question
    parts = [str(m.get("content", "")) for m in turn if isinstance(m, dict)]
    return "\n\n".join(p for p in parts if p.strip())


def load_category(category_file: Path, answers_file: Path | None = None, *, limit: int | None = None,
                  offset: int = 0) -> list[BfclCase]:
    """Cases of one BFCL category file; ``limit`` takes that many, evenly spread over the file; ``offset``
    shifts every picked row that many rows on (a held-out slice: with ``limit=40`` and an offset smaller than
    the spacing, no case of the offset-0 slice is picked)."""
    category_file = Path(category_file)
    category = category_of(category_file)
    answers_file = answers_file or default_answers(category_file)
    answers = {a["id"]: a["ground_truth"] for a in _read_jsonl(answers_file)} if answers_file else {}
    rows = _read_jsonl(category_file)
    if limit is not None and 0 < limit < len(rows):
        step = len(rows) / limit
        rows = [rows[min(int(i * step) + offset, len(rows) - 1)] for i in range(limit)]
    elif offset:
        rows = rows[offset:]
    no_call = "irrelevance" in category
    cases = []
    for row in rows:
        truth = answers.get(row["id"])
        if truth is None and not no_call and "relevance" not in category:
            raise ValueError(f"{row['id']}: no possible answer in {answers_file}; pass --answers PATH")
        cases.append(BfclCase(
            id=row["id"], category=category, question=_question_text(row.get("question", [])),
            functions=list(row.get("function", [])), ground_truth=truth, expects_call=not no_call,
        ))
    return cases


# ------------------------------------------------------------------------------------------ tools
def json_schema(param: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter doc (types dict/float/tuple/any…) as standard JSON schema."""
    out: dict[str, Any] = {}
    kind = param.get("type")
    if isinstance(kind, str) and kind != "any":
        out["type"] = _JSON_TYPES.get(kind, kind)
    for key in _KEPT:
        if key in param:
            out[key] = param[key]
    if isinstance(param.get("items"), dict):
        out["items"] = json_schema(param["items"])
    if isinstance(param.get("properties"), dict):
        props = {name: json_schema(sub) for name, sub in param["properties"].items() if isinstance(sub, dict)}
        out["properties"] = props
        out["required"] = [r for r in param.get("required", []) if r in props]
        if out.get("type") is None:
            out["type"] = "object"
    return out


_PY_TYPES: dict[str, Any] = {"string": str, "integer": int, "float": float, "boolean": bool, "array": list,
                             "tuple": tuple, "dict": dict, "any": Any}


def _signature(params: dict[str, Any]) -> inspect.Signature | None:
    """A Python signature for LangChain's default tool renderer (``name(signature) - description``)."""
    props = params.get("properties", {})
    required = set(params.get("required", []))
    ordered = [n for n in props if n in required] + [n for n in props if n not in required]
    try:
        return inspect.Signature([
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=inspect.Parameter.empty if n in required else props[n].get("default"),
                              annotation=_PY_TYPES.get(str(props[n].get("type")), Any))
            for n in ordered
        ])
    except (ValueError, TypeError):  # a parameter name that is not a Python identifier
        return None


def to_tool(doc: dict[str, Any]) -> Any:
    """A langchain-core ``StructuredTool`` with the doc's JSON schema as ``args_schema`` (never run)."""
    from langchain_core.tools import StructuredTool

    params = doc.get("parameters") or {"type": "dict", "properties": {}}
    schema = json_schema({**params, "type": "dict"})
    schema.setdefault("properties", {})
    schema.setdefault("required", [])

    def stub(*args: Any, **kwargs: Any) -> str:
        return "not executed"

    signature = _signature(params)
    if signature is not None:
        stub.__signature__ = signature  # type: ignore[attr-defined]
    return StructuredTool(name=doc["name"], description=doc.get("description") or doc["name"],
                          args_schema=schema, func=stub)


# ------------------------------------------------------------------------------------------ checker
def standardize_string(text: str) -> str:
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def _possible_type(possible: list[Any]) -> type | None:
    for answer in possible:
        if answer != "":
            return type(answer)
    return None


def _type_ok(value: Any, possible: list[Any], expected: type, nested: type | None) -> tuple[bool, bool]:
    """(valid, is_variable) as BFCL's type_checker decides them (one level of nesting)."""
    possible_type = _possible_type(possible)
    is_variable = possible_type is not None and possible_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for item in possible:
            items: Any = value
            if isinstance(item, list) and not all(_type_ok(v, item, nested, None)[0] for v in items):
                continue
            return True, is_variable
        return False, is_variable
    if possible_type is not None and type(value) is possible_type:
        return True, True
    return False, is_variable


def _standard(value: Any) -> Any:
    return standardize_string(value) if isinstance(value, str) else value


def _dict_ok(value: dict[str, Any], possible: list[Any]) -> bool:
    for answer in possible:
        if answer == "" or not isinstance(answer, dict):
            continue
        if any(k not in answer or _standard(v) not in [_standard(a) for a in answer[k]] for k, v in value.items()):
            continue
        if any(k not in value and "" not in v for k, v in answer.items()):
            continue
        return True
    return False


def check_call(doc: dict[str, Any], name: str, args: dict[str, Any], truth: dict[str, Any]) -> tuple[bool, str]:
    """BFCL's ``simple_function_checker`` (Python): is ``name(**args)`` an accepted answer ``truth``?"""
    expected_name, possible = next(iter(truth.items()))
    if name != expected_name:
        return False, "wrong_func_name"
    props = doc.get("parameters", {}).get("properties", {})
    for param in doc.get("parameters", {}).get("required", []):
        if param not in args:
            return False, "missing_required"
    for param, value in args.items():
        if param not in props or param not in possible:
            return False, "unexpected_param"
        kind = props[param].get("type", "any")
        expected = PYTHON_TYPE_MAPPING.get(kind, str)
        nested = None
        if kind in PYTHON_NESTED_TYPE_CHECK_LIST:
            nested = PYTHON_TYPE_MAPPING.get(props[param].get("items", {}).get("type", "any"), str)
        if kind == "tuple" and isinstance(value, tuple):
            value = list(value)
        if kind == "float" and type(value) is int:
            value = float(value)
        ok, is_variable = _type_ok(value, possible[param], expected, nested)
        if not ok:
            return False, "type_error"
        if not is_variable:
            if expected is dict:
                if not _dict_ok(value, possible[param]):
                    return False, "value_error:dict"
                continue
            if expected is list and nested is dict:
                if not any(isinstance(a, list) and len(a) == len(value)
                           and all(_dict_ok(v, [d]) for v, d in zip(value, a, strict=True)) for a in possible[param]):
                    return False, "value_error:list_dict"
                continue
            if expected is str:
                if standardize_string(value) not in [standardize_string(a) for a in possible[param]
                                                     if isinstance(a, str)]:
                    return False, "value_error:string"
                continue
            if expected is list:
                got = [_standard(v) for v in value]
                options = [[_standard(v) for v in a] for a in possible[param] if isinstance(a, list)]
                if got not in options:
                    return False, "value_error:list"
                continue
        if value not in possible[param]:
            return False, "value_error:others"
    for param, accepted in possible.items():
        if param not in args and "" not in accepted:
            return False, "missing_optional"
    return True, ""


def score(case: BfclCase, decision: dict[str, Any]) -> tuple[bool, str]:
    """Whether a first decision is right for ``case``; decision kinds: call, finish, unparseable, error."""
    kind = decision["kind"]
    if not case.expects_call:
        return kind == "finish", "" if kind == "finish" else f"{kind} instead of no call"
    if case.ground_truth is None:  # relevance: any call is right
        return kind == "call", "" if kind == "call" else kind
    if kind != "call":
        return False, kind
    if "calls" in decision:
        return check_calls(case, decision["calls"])
    if len(case.ground_truth) != 1:
        return False, "wrong_count"
    truth = case.ground_truth[0]
    expected_name = next(iter(truth))
    doc = next((f for f in case.functions if f["name"] == expected_name), None)
    if doc is None:
        return False, "no_doc"
    args = decision.get("args")
    if not isinstance(args, dict):
        return False, "args_not_object"
    return check_call(doc, decision["name"], args, truth)


def check_calls(case: BfclCase, calls: list[dict[str, Any]]) -> tuple[bool, str]:
    """BFCL's parallel checker: ``calls`` (``{"name", "args"}`` each) are right when there are as many as the
    ground truth's answers and each answer accepts a different call, in any order."""
    truths = case.ground_truth or []
    if len(calls) != len(truths):
        return False, "wrong_count"
    docs = {f["name"]: f for f in case.functions}
    fits = [[i for i, call in enumerate(calls)
             if isinstance(call.get("args"), dict) and next(iter(truth)) in docs
             and check_call(docs[next(iter(truth))], str(call.get("name")), call["args"], truth)[0]]
            for truth in truths]

    def match(k: int, used: frozenset[int]) -> bool:  # one distinct call per answer (a small bipartite search)
        return k == len(fits) or any(match(k + 1, used | {i}) for i in fits[k] if i not in used)

    return (True, "") if match(0, frozenset()) else (False, "no_match")


def ideal_args(truth: dict[str, Any], doc: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """One accepted answer of a ground truth: the first accepted value of each argument; optional
    arguments (``""`` accepted) omitted unless ``doc`` marks them required."""
    name, possible = next(iter(truth.items()))
    required = set((doc or {}).get("parameters", {}).get("required", []))
    args = {}
    for param, accepted in possible.items():
        values = [a for a in accepted if a != ""]
        if values and ("" not in accepted or param in required):
            args[param] = _ideal_value(values[0])
    return name, args


def _ideal_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _ideal_value(next(a for a in v if a != "")) for k, v in value.items()
                if isinstance(v, list) and "" not in v and any(a != "" for a in v)}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_ideal_value(v) for v in value]
    return value
