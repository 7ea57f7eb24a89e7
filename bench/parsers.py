"""Benchmark 2: parser robustness on the project's parser corpus (``tests/helpers/parser_corpus.py``).

Every reply text of the corpus goes through ``react_agent.parse_response`` and through the peers'
parsers: LangChain's ``JSONAgentOutputParser`` and ``ReActSingleInputOutputParser``
(langchain-classic), LlamaIndex's ``ReActOutputParser`` and smolagents' ``get_tool_call_from_text``
(with its default keys ``name``/``arguments`` and with this protocol's ``action``/``action_input``).

Each parser's result is normalised to ``(action, action_input)`` or "refused" (it raised):

* a final answer is ``FINISH`` with its text: LangChain ``AgentFinish`` → its ``output``, LlamaIndex
  ``ResponseReasoningStep`` → its ``response``, smolagents' ``final_answer`` tool → its ``answer``
  argument. For every parser an action named ``FINISH``/``Final Answer``/``final_answer`` (any case)
  counts as a final answer too, and a non-string answer is compared as its JSON text;
* in the peers' favour, a tool input given as a JSON string that decodes to the expected object counts
  as that object, and ``None``/``""``/``{}`` are the same empty input; strings are compared stripped.

Outcomes per case: *correct* (the expected action and input, or refused when the case must be
refused), *accepted a must-refuse reply* (split: as a tool call — it would execute something — or as
a final answer), *wrong action/args* (a valid reply turned into another call), *refused a valid
reply*.

    python -m bench.parsers [--corpus tests/helpers/parser_corpus.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import _common

NAME = "parsers"
DEFAULT_CORPUS = _common.ROOT / "tests" / "helpers" / "parser_corpus.py"
FINISH = "FINISH"
_FINISH_NAMES = {"finish", "final answer", "final_answer", "finalanswer"}

OUTCOMES = ("correct", "accepted_tool", "accepted_finish", "wrong", "refused")
OUTCOME_LABELS = {
    "correct": "correct",
    "accepted_tool": "accepted a must-refuse reply as a tool call",
    "accepted_finish": "accepted a must-refuse reply as a final answer",
    "wrong": "wrong action/args",
    "refused": "refused a valid reply",
}

Normalised = tuple[str, Any]


class Refused(Exception):
    """The parser raised: nothing would be executed."""


def load_corpus(path: Path | None = None) -> list[Any]:
    """``CASES`` of the corpus module at ``path`` (imported by file path: tests/ is not a package)."""
    path = Path(path or DEFAULT_CORPUS)
    if not path.is_file():
        raise FileNotFoundError(f"parser corpus not found: {path}")
    spec = importlib.util.spec_from_file_location("_bench_parser_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return list(module.CASES)


# ------------------------------------------------------------------------------------------ parsers
def _finish_text(value: Any) -> str:
    if _empty(value):
        return ""
    if isinstance(value, dict) and set(value) <= {"answer", "output", "final_answer"} and len(value) == 1:
        value = next(iter(value.values()))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _named(action: Any, action_input: Any) -> Normalised:
    name = str(action).strip()
    if name.lower() in _FINISH_NAMES:
        return FINISH, _finish_text(action_input)
    return name, action_input


def react_agent_parser() -> Callable[[str, Any], Normalised]:
    from react_agent import OutputParseError, parse_response

    def parse(text: str, tool_names: Any) -> Normalised:
        try:
            action = parse_response(text, tool_names or ())
        except OutputParseError as exc:
            raise Refused(exc.reason) from exc
        return _named(action.action, action.action_input)

    return parse


def _langchain(parser: Any) -> Callable[[str, Any], Normalised]:
    from langchain_core.agents import AgentFinish

    def parse(text: str, tool_names: Any) -> Normalised:
        try:
            out = parser.parse(text)
        except Exception as exc:  # OutputParserException and anything else it raises
            raise Refused(type(exc).__name__) from exc
        if isinstance(out, AgentFinish):
            return FINISH, _finish_text(out.return_values.get("output"))
        return _named(out.tool, out.tool_input)

    return parse


def langchain_json_parser() -> Callable[[str, Any], Normalised]:
    from langchain_classic.agents.output_parsers import JSONAgentOutputParser

    return _langchain(JSONAgentOutputParser())


def langchain_react_parser() -> Callable[[str, Any], Normalised]:
    from langchain_classic.agents.output_parsers import ReActSingleInputOutputParser

    return _langchain(ReActSingleInputOutputParser())


def llama_index_parser() -> Callable[[str, Any], Normalised]:
    from llama_index.core.agent.react.output_parser import ReActOutputParser
    from llama_index.core.agent.react.types import ActionReasoningStep, ResponseReasoningStep

    parser = ReActOutputParser()

    def parse(text: str, tool_names: Any) -> Normalised:
        try:
            out = parser.parse(text)
        except Exception as exc:
            raise Refused(type(exc).__name__) from exc
        if isinstance(out, ResponseReasoningStep):
            return FINISH, _finish_text(out.response)
        if isinstance(out, ActionReasoningStep):
            return _named(out.action, out.action_input)
        raise Refused(type(out).__name__)

    return parse


def smolagents_parser(name_key: str, args_key: str) -> Callable[[], Callable[[str, Any], Normalised]]:
    def factory() -> Callable[[str, Any], Normalised]:
        try:
            from smolagents.models import get_tool_call_from_text
        except ImportError:  # older releases kept it in smolagents.utils
            from smolagents.utils import get_tool_call_from_text  # type: ignore[no-redef,unused-ignore]

        def parse(text: str, tool_names: Any) -> Normalised:
            try:
                call = get_tool_call_from_text(text, name_key, args_key)
            except Exception as exc:
                raise Refused(type(exc).__name__) from exc
            return _named(call.function.name, call.function.arguments)

        return parse

    return factory


PARSERS: dict[str, tuple[str, str, Callable[[], Callable[[str, Any], Normalised]]]] = {
    # key: (label, module needed, factory)
    "react_agent": ("react_agent `parse_response`", "react_agent", react_agent_parser),
    "langchain_json": ("LangChain `JSONAgentOutputParser`", "langchain_classic", langchain_json_parser),
    "langchain_react": ("LangChain `ReActSingleInputOutputParser`", "langchain_classic", langchain_react_parser),
    "llama_index_react": ("LlamaIndex `ReActOutputParser`", "llama_index.core", llama_index_parser),
    "smolagents_name_arguments": ("smolagents `get_tool_call_from_text` (keys name/arguments, its default)",
                                  "smolagents", smolagents_parser("name", "arguments")),
    "smolagents_action_input": ("smolagents `get_tool_call_from_text` (keys action/action_input)",
                                "smolagents", smolagents_parser("action", "action_input")),
}


# ------------------------------------------------------------------------------------------ scoring
def _empty(value: Any) -> bool:
    return value is None or value == "" or value == {}


def same_input(expected: Any, got: Any) -> bool:
    if _empty(expected) and _empty(got):
        return True
    if isinstance(expected, dict):
        if isinstance(got, str):
            try:
                got = json.loads(got)
            except ValueError:
                return False
        return bool(got == expected)
    if isinstance(expected, str):
        return isinstance(got, str) and got.strip() == expected.strip()
    return bool(got == expected)


def classify(case: Any, outcome: Normalised | Refused) -> str:
    expected = case.expected
    if isinstance(outcome, Refused):
        return "correct" if expected is None else "refused"
    action, action_input = outcome
    if expected is None:
        return "accepted_finish" if action == FINISH else "accepted_tool"
    if action != expected["action"]:
        return "wrong"
    if action == FINISH:
        ok = _finish_text(action_input).strip() == _finish_text(expected["action_input"]).strip()
    else:
        ok = same_input(expected["action_input"], action_input)
    return "correct" if ok else "wrong"


def source_group(case: Any) -> str:
    source = case.source.lower()
    for key, label in (("crewai", "CrewAI"), ("llama_index", "LlamaIndex"), ("smolagents", "smolagents"),
                       ("json_repair", "json_repair"), ("agents-course", "smolagents"), ("langchain", "LangChain"),
                       ("react_agent", "react_agent (GigaChat, seed)")):
        if key in source:
            return label
    return "other projects"


def run(*, corpus: Path | None = None) -> dict[str, Any]:
    cases = load_corpus(corpus)
    results: dict[str, Any] = {"cases": len(cases), "must_refuse": sum(c.expected is None for c in cases),
                               "parsers": {}, "skipped": {}}
    groups = sorted({source_group(c) for c in cases})
    results["groups"] = {g: sum(source_group(c) == g for c in cases) for g in groups}
    for key, (label, module, factory) in PARSERS.items():
        if not _common.available(module):
            results["skipped"][key] = f"{module} is not installed: {_common.INSTALL_HINT}"
            continue
        parse = factory()
        counts = dict.fromkeys(OUTCOMES, 0)
        by_group: dict[str, int] = dict.fromkeys(groups, 0)
        per_case = {}
        for case in cases:
            try:
                outcome: Normalised | Refused = parse(case.text, case.tool_names)
            except Refused as refused:
                outcome = refused
            kind = classify(case, outcome)
            counts[kind] += 1
            if kind == "correct":
                by_group[source_group(case)] += 1
            per_case[case.id] = {"outcome": kind, "got": None if isinstance(outcome, Refused) else
                                 [outcome[0], outcome[1]]}
        results["parsers"][key] = {"label": label, "counts": counts, "correct_by_source": by_group,
                                   "cases": per_case}
    return results


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    parsers = results["parsers"]
    keys = list(parsers)
    labels = [parsers[k]["label"].replace("`", "").replace(" (keys", "\n(keys") for k in keys]
    colors = {"correct": "#1b9e77", "accepted_tool": "#d95f02", "accepted_finish": "#e6ab02",
              "wrong": "#7570b3", "refused": "#999999"}
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(keys) + 1.6))
    left = [0] * len(keys)
    for kind in OUTCOMES:
        values = [parsers[k]["counts"][kind] for k in keys]
        ax.barh(labels, values, left=left, color=colors[kind], label=OUTCOME_LABELS[kind])
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel(f"cases of the parser corpus ({results['cases']}, {results['must_refuse']} must be refused)")
    ax.set_title("Parser robustness")
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, -0.3), ncol=3)
    return _common.save_figure(fig, path, bbox_inches="tight")


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    n = r["cases"]
    rows = []
    for p in r["parsers"].values():
        c = p["counts"]
        rows.append([p["label"], f"**{c['correct']}** ({_common.pct(c['correct'], n)})", c["accepted_tool"],
                     c["accepted_finish"], c["wrong"], c["refused"]])
    parts = [
        f"{n} replies of `tests/helpers/parser_corpus.py` ({r['must_refuse']} must be refused: cut-off JSON, prose "
        "about a tool, an action together with an invented answer, ...).",
        "",
        _common.table(["parser", "correct", "accepted a must-refuse reply as a tool call",
                       "… as a final answer", "wrong action/args", "refused a valid reply"], rows),
        "",
        "Correct answers by the source of the case (each peer is strongest on its own test fixtures):",
        "",
        _common.table(["parser", *[f"{g} ({k})" for g, k in r["groups"].items()]],
                      [[p["label"], *[p["correct_by_source"][g] for g in r["groups"]]]
                       for p in r["parsers"].values()]),
    ]
    for key, reason in r.get("skipped", {}).items():
        parts += ["", f"Skipped {key}: {reason}"]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.parsers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="a Python file defining CASES: list[Case] (default: tests/helpers/parser_corpus.py)")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    results = run(corpus=args.corpus)
    config = {"corpus": str(args.corpus)}
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
