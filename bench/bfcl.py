"""Benchmark 1: tool-call accuracy on BFCL (Berkeley Function Calling Leaderboard) with one local model.

The same model (the embedded Gemma 3 270M GGUF by default), the same cases and the same run; for each
case only the agent's FIRST decision is taken (one model call) and scored with BFCL's answer-matching
rules (``bench/_bfcl_data.py``), under three text protocols:

a. ``react_agent``: ``ReactAgent(llm, tools, prompts=PromptSet.load("en"))`` (the templates are
   loaded once per run): its step prompt
   (``agent.build_messages(RunState(task))``), constrained decoding with ``agent.response_format``
   (the JSON schema derived from the tools) and its parser (``agent.parse``);
b. ``seed``: the seed article's ReactAgent prompt, verbatim (Russian, with its tool description), no
   constraint, ``json.loads(text.strip())`` then ``data["action"], data["action_input"]``;
c. ``langchain``: langchain-classic's ``create_json_chat_agent`` with its hub-free default prompt
   (the one its docstring spells out) and default tool renderer, its ``"\\nObservation"`` stop sequence
   and its ``JSONAgentOutputParser``; invoked with no intermediate steps.

BFCL function docs become langchain-core ``StructuredTool`` objects with a JSON-schema ``args_schema``
(BFCL's ``dict``/``float``/``tuple``/``any`` mapped to ``object``/``number``/``array``/no type) and a
Python signature for LangChain's renderer. A decision is a call (name + arguments), FINISH (LangChain:
``AgentFinish``) or unparseable. For every protocol alike, a string argument that is a JSON object is
decoded, and a plain string for a one-parameter tool becomes that parameter (what both frameworks do
when they execute). Irrelevance cases are right only when the decision is FINISH (BFCL itself also
counts an undecodable reply as "no call"; that lenient number is reported too).

    python -m bench.bfcl [--limit 8] [--categories simple_python multiple irrelevance]
    python -m bench.bfcl --category-file PATH [--answers PATH]   # any BFCL category file

The embedded model's decoding techniques (docs/local-models.md, "How the embedded model decodes") are
measured as an ablation of the react_agent protocol: each ``--variant NAME=PROMPTS:EXAMPLES:TECHNIQUES`` is a
prompt set, the worked examples (``none`` or ``generated`` by ``examples_for_tools``) and the
``LocalChatModel(techniques=...)`` switched on; every variant runs on every case, the categories interleaved,
and each decision is appended to ``--records`` at once (a stopped run is resumed, and summarised on the cases
all variants have). ``--offset K`` shifts every picked case K rows on: with ``--limit 40`` and K from 1 to 4, a
held-out slice that shares no case with the default one.
``--oracle`` needs no model: each case's correct call goes through the model's post-decoding steps
(``bench/oracle.py``), one line per category: ``<category> | oracle | preserved N/M``; ``--suite ru|en`` does
the same for the project's suites.
The summaries go to the ``ablation`` list of bench/results/bfcl.json, next to the main results::

    python -m bench.bfcl --limit 40 --records runs.jsonl --variant base=en:none:- \
        --variant full=en-compact:generated:two_stage,retry_cut,format_patterns,bounded_integers,unique_items
    python -m bench.bfcl --oracle --category-file .../BFCL_v4_simple_python.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from bench import _common, oracle
from bench._bfcl_data import BfclCase, category_of, data_dir, ideal_args, load_category, score, to_tool
from bench._peers import langchain_json_chat_prompt
from react_agent.models import DEFAULT_LOCAL_MODEL
from react_agent.models.local._pipeline import DEFAULT_TECHNIQUES, TECHNIQUES

NAME = "bfcl"
DEFAULT_CATEGORIES = ("simple_python", "multiple", "irrelevance")
DEFAULT_LIMIT = 8
PROTOCOLS = {
    "react_agent": "react_agent (prompt + constrained decoding + parser)",
    "seed": "seed article (prompt + json.loads)",
    "langchain": "LangChain create_json_chat_agent (prompt + JSONAgentOutputParser)",
    "react_agent_free": "react_agent without constrained decoding (prompt + parser)",
}
DEFAULT_PROTOCOLS = ("react_agent", "seed", "langchain")

SEED_PROMPT = (
    "\n"
    "        Ты  - умный ассистент, который помогает решаить задачу пользователя. Ты должен выбрать один из доступных инструментов\n"  # noqa: E501
    "        или написать FINISH если задача выполнена \n"
    "        \n"
    "        **Задача**: <<TASK>>\n"
    "\n"
    "        **Доступные инструменты**:\n"
    "        <<TOOLS>>\n"
    "        \n"
    "        **Инструкции**:\n"
    "        -проанализируй задачу \n"
    "        -проанлизируй историю \n"
    "        -выбери подходящий инструмент или FINISH, если задача была выполнена в истории. \n"
    "        -обязательно проанализируй вызовы, которые ты делал раньше\n"
    "        -если в истории ты уже вызывал инструмент с такими аргументами и  инструмент был выполнен успешно, то не вызывай его снова. Переходи к следующему инструменту или к FINISH.\n"  # noqa: E501
    '        -если ты выбераешь FINISH  то action_input: ""\n'
    "\n"
    "        **Твоя история вызова инструментов и результаты вызовов**:\n"
    "        <<HISTORY>>\n"
    "        \n"
    "     \n"
    "        **Ответ в формате JSON**:\n"
    "        {\n"
    '            "action": "имя_инструмента",\n'
    '            "action_input": {\n'
    '                "arg1": "значение",\n'
    '                "arg2": "значение"\n'
    "            },\n"
    '            "though": "обоснование выбора инструмента"\n'
    "        }\n"
    "        \n"
    "        Верни только ответ сторого в формате JSON со всеми заполненными полями. Не добавляй других слов и комментариев\n"  # noqa: E501
    "        "
)

"""The seed article's ReactAgent._build_prompt, verbatim (its f-string with the placeholders marked)."""

SEED_FINISH_LINE = "FINISH  - выбери для завершения работы, если задача выполнена"


# ------------------------------------------------------------------------------------------ protocols
def seed_tool_desc(doc: dict[str, Any]) -> str:
    """The seed's ``tool_desc`` entry of one tool (field description and required/optional)."""
    params = doc.get("parameters") or {}
    required = set(params.get("required", []))
    lines = [f"    {name}: {prop.get('description')} ({'обязательный' if name in required else 'опциональный'})"
             for name, prop in (params.get("properties") or {}).items()]
    return f"{doc['name']} - {doc.get('description')}\n" + "\n".join(lines)


def seed_prompt(task: str, docs: list[dict[str, Any]]) -> str:
    tools = [seed_tool_desc(d) for d in docs] + [SEED_FINISH_LINE]
    return (SEED_PROMPT.replace("<<TASK>>", task).replace("<<TOOLS>>", "\n".join(tools))
            .replace("<<HISTORY>>", "Нет истории"))


def _normalise_args(name: str, args: Any, case: BfclCase) -> Any:
    if args is None:
        return {}
    if isinstance(args, str):
        text = args.strip()
        if text.startswith("{"):
            try:
                decoded = json.loads(text)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                return decoded
        doc = next((f for f in case.functions if f["name"] == name), None)
        props = list(((doc or {}).get("parameters") or {}).get("properties") or {})
        if len(props) == 1:
            return {props[0]: args}
    return args


def _call(name: Any, args: Any, case: BfclCase) -> dict[str, Any]:
    name = str(name)
    return {"kind": "call", "name": name, "args": _normalise_args(name, args, case)}


def _text(message: Any) -> str:
    content = getattr(message, "content", message)
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


_PROMPT_SETS: dict[str, Any] = {}


def prompt_set(lang: str) -> Any:
    """react_agent's prompt set, loaded once per run, so every case sees the same templates."""
    if lang not in _PROMPT_SETS:
        from react_agent import PromptSet

        _PROMPT_SETS[lang] = PromptSet.load(lang)
    return _PROMPT_SETS[lang]


EXAMPLES = {"none": "no worked examples", "generated": "examples_for_tools(tools): one per tool + an irrelevant task"}
_EXAMPLES_MODE = {"value": "none"}


def examples_for(tools: list[Any], lang: str) -> list[Any]:
    """The worked examples of the current run's ``--examples`` mode for these tools."""
    if _EXAMPLES_MODE["value"] == "none":
        return []
    from react_agent import examples_for_tools

    return examples_for_tools(tools, lang=lang.split("-", 1)[0])


def accepts_call_context(llm: Any) -> bool:
    return getattr(type(llm), "accepts_call_context", False) is True


PARALLEL_CALLS = 8
"""``max_parallel_calls`` of the agent on the categories whose answers are several calls in one decision
(``parallel``, ``parallel_multiple``): a limit no case's answer exceeds, whatever its number of calls."""


def parallel_limit(case: BfclCase) -> int | None:
    """The agent's ``max_parallel_calls`` for ``case``: :data:`PARALLEL_CALLS` on a parallel category."""
    return PARALLEL_CALLS if case.category.startswith("parallel") else None


def decide_react_agent(llm: Any, case: BfclCase, tools: list[Any], lang: str, *,
                       constrained: bool | None = None) -> dict[str, Any]:
    from react_agent import OutputParseError, ReactAgent, RunState
    from react_agent.parsing import parse_actions

    limit = parallel_limit(case)
    agent = ReactAgent(llm, tools, prompts=prompt_set(lang), constrained=constrained,
                       examples=examples_for(tools, lang), max_parallel_calls=limit)
    state = RunState(case.question)
    messages = agent.build_messages(state)
    kwargs = {"response_format": agent.response_format} if agent.response_format is not None else {}
    if accepts_call_context(llm):  # what the agent's loop hands the embedded model with each decision
        kwargs["react_agent_call"] = agent.call_context(state)
    if limit is not None:  # the decision's schema admits several calls: the call the agent's loop makes
        call = agent.decision_call(state)
        messages, kwargs = call.messages, agent.model_kwargs(call)
    text = _text(llm.invoke(messages, **kwargs))
    try:
        actions = [agent.parse(text)] if limit is None else \
            parse_actions(text, [t.name for t in tools], validate=agent.valid_call)[:limit]
    except OutputParseError as exc:
        return {"kind": "unparseable", "raw": text, "reason": exc.reason}
    if any(action.is_finish for action in actions):
        return {"kind": "finish", "raw": text}
    calls = [_call(action.action, action.action_input, case) for action in actions]
    if limit is None:
        return {**calls[0], "raw": text}
    return {"kind": "call", "calls": [{"name": c["name"], "args": c["args"]} for c in calls], "raw": text}


def decide_seed(llm: Any, case: BfclCase, tools: list[Any], lang: str) -> dict[str, Any]:
    text = _text(llm.invoke(seed_prompt(case.question, case.functions)))
    try:
        data = json.loads(text.strip())
        action, action_input = data["action"], data["action_input"]
    except Exception as exc:  # the seed's parser: anything but a clean JSON object fails
        return {"kind": "unparseable", "raw": text, "reason": type(exc).__name__}
    if action == "FINISH":
        return {"kind": "finish", "raw": text}
    return {**_call(action, action_input, case), "raw": text}


def decide_langchain(llm: Any, case: BfclCase, tools: list[Any], lang: str) -> dict[str, Any]:
    from langchain_classic.agents import create_json_chat_agent
    from langchain_core.agents import AgentFinish
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.exceptions import OutputParserException

    class Capture(BaseCallbackHandler):
        text = ""

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            Capture.text = response.generations[0][0].text

    agent = create_json_chat_agent(llm, tools, langchain_json_chat_prompt())
    Capture.text = ""
    try:
        out = agent.invoke({"input": case.question, "intermediate_steps": []}, {"callbacks": [Capture()]})
    except OutputParserException as exc:
        return {"kind": "unparseable", "raw": Capture.text, "reason": type(exc).__name__}
    if isinstance(out, AgentFinish):
        return {"kind": "finish", "raw": Capture.text}
    return {**_call(out.tool, out.tool_input, case), "raw": Capture.text}


DECIDERS: dict[str, Callable[[Any, BfclCase, list[Any], str], dict[str, Any]]] = {
    "react_agent": decide_react_agent, "seed": decide_seed, "langchain": decide_langchain,
    "react_agent_free": lambda llm, case, tools, lang: decide_react_agent(llm, case, tools, lang, constrained=False),
}


# ------------------------------------------------------------------------------------------ models
def ideal_model() -> Any:
    """A stand-in for the local model (tests, dry runs): it answers each case ideally, in the protocol
    the prompt asks for (set ``model.current = (case, protocol)`` before each call)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class IdealChatModel(BaseChatModel):
        supports_json_schema: ClassVar[bool] = True
        current: Any = None

        @property
        def _llm_type(self) -> str:
            return "bench-ideal"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            case, protocol = self.current
            finish = "Final Answer" if protocol == "langchain" else "FINISH"
            if case.ground_truth:
                truth = case.ground_truth[0]
                doc = next((f for f in case.functions if f["name"] == next(iter(truth))), None)
                name, args = ideal_args(truth, doc)
                reply: dict[str, Any] = {"action": name, "action_input": args}
            elif case.expects_call:
                reply = {"action": case.functions[0]["name"], "action_input": {}}
            else:
                reply = {"action": finish, "action_input": "No tool fits this request."}
            text = json.dumps({"thought": "ideal", **reply} if protocol.startswith("react_agent") else reply)
            if protocol.startswith("react_agent") and case.ground_truth and len(case.ground_truth) > 1:
                answers = []  # several calls in one decision, as the agent's parallel schema writes them
                for truth in case.ground_truth:
                    doc = next((f for f in case.functions if f["name"] == next(iter(truth))), None)
                    name, args = ideal_args(truth, doc)
                    answers.append({"thought": "ideal", "action": name, "action_input": args})
                text = json.dumps({"actions": answers})
            if protocol == "langchain":
                text = f"```json\n{text}\n```"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    return IdealChatModel()


TECHNIQUE_FLAGS: tuple[str, ...] = TECHNIQUES
"""The LocalChatModel techniques the ablation switches (``--two-stage/--no-two-stage``, ...): every one, the
opt-in ones included."""


def local_model(model_path: str | None, max_tokens: int | None, n_threads: int | None,
                techniques: dict[str, bool] | None = None) -> Any:
    from react_agent.models import LocalChatModel

    options: dict[str, Any] = {}
    if techniques:
        options["techniques"] = [name for name in TECHNIQUE_FLAGS if techniques.get(name, name in DEFAULT_TECHNIQUES)]
    if model_path:
        options["model_path"] = model_path
    if max_tokens:
        options["max_tokens"] = max_tokens
    if n_threads:
        options["n_threads"] = n_threads
    return LocalChatModel(**options)


# ------------------------------------------------------------------------------------------ the run
def category_files(categories: list[str]) -> list[tuple[Path, Path | None]]:
    folder = data_dir()
    out: list[tuple[Path, Path | None]] = []
    for name in categories:
        path = folder / f"BFCL_v4_{name}.json"
        if not path.is_file():
            known = sorted(p.stem.replace("BFCL_v4_", "") for p in folder.glob("BFCL_v4_*.json"))
            raise SystemExit(f"no BFCL category {name!r} in {folder}; known: {', '.join(known)}")
        out.append((path, None))
    return out


def run(*, files: list[tuple[Path, Path | None]], limit: int | None, protocols: list[str], model: str = "local",
        model_path: str | None = None, max_tokens: int | None = None, n_threads: int | None = None,
        lang: str = "en", progress: bool = True, examples: str = "none",
        techniques: dict[str, bool] | None = None) -> dict[str, Any]:
    _EXAMPLES_MODE["value"] = examples
    llm = ideal_model() if model == "scripted" else local_model(model_path, max_tokens, n_threads, techniques)
    cases = [case for path, answers in files for case in load_category(path, answers, limit=limit)]
    if any(p.startswith("react_agent") for p in protocols):
        _PROMPT_SETS.clear()
        prompt_set(lang)  # load (and validate) the templates once, before the first case
    records: list[dict[str, Any]] = []
    started = time.monotonic()
    for i, case in enumerate(cases, 1):
        tools = [to_tool(doc) for doc in case.functions]
        for protocol in protocols:
            if model == "scripted":
                llm.current = (case, protocol)
            t0 = time.monotonic()
            try:
                decision = DECIDERS[protocol](llm, case, tools, lang)
            except Exception as exc:  # a prompt too long for the context, a schema llama.cpp rejects, ...
                decision = {"kind": "error", "raw": "", "reason": f"{type(exc).__name__}: {exc}"[:300]}
            seconds = time.monotonic() - t0
            correct, why = score(case, decision)
            records.append({"id": case.id, "category": case.category, "protocol": protocol,
                            "kind": decision["kind"], "name": decision.get("name"), "args": decision.get("args"),
                            "calls": decision.get("calls"), "correct": correct, "why": why,
                            "reason": decision.get("reason"),
                            "raw": str(decision.get("raw", ""))[:400], "seconds": round(seconds, 3)})
        if progress:
            done = [r for r in records if r["id"] == case.id]
            marks = " ".join(f"{r['protocol']}={'ok' if r['correct'] else r['kind']}" for r in done)
            print(f"[{i}/{len(cases)} {time.monotonic() - started:.0f}s] {case.id}: {marks}", file=sys.stderr,
                  flush=True)
    return {"model": getattr(llm, "model_name", model) if model != "scripted" else "scripted ideal stand-in",
            "model_settings": {**{k: getattr(llm, k, None) for k in ("temperature", "max_tokens", "n_ctx")},
                               **{k: k in (getattr(llm, "techniques", None) or ()) for k in TECHNIQUE_FLAGS}},
            "categories": summarise(records, protocols), "records": records,
            "seconds": round(time.monotonic() - started, 1)}


# ------------------------------------------------------------------------------------------ the ablation
def parse_variant(text: str) -> tuple[str, str, str, dict[str, bool]]:
    """``NAME=PROMPTS:EXAMPLES:FLAGS`` (FLAGS: comma-separated technique names, ``-`` for none; a technique
    left out is off) -> (name, prompts, examples, techniques)."""
    name, _, spec = text.partition("=")
    parts = spec.split(":")
    if not name or len(parts) != 3 or parts[1] not in EXAMPLES:
        raise SystemExit(f"--variant {text!r}: expected NAME=PROMPTS:EXAMPLES:FLAGS, e.g. "
                         "full=en-compact:generated:two_stage,format_patterns")
    flags = {f for f in parts[2].split(",") if f and f != "-"}
    unknown = flags - set(TECHNIQUE_FLAGS)
    if unknown:
        raise SystemExit(f"--variant {text!r}: unknown techniques {sorted(unknown)}; known: {TECHNIQUE_FLAGS}")
    return name, parts[0], parts[1], {flag: flag in flags for flag in TECHNIQUE_FLAGS}


def interleave(groups: list[list[BfclCase]]) -> list[BfclCase]:
    """Cases of several categories in turn (a stopped run has about as many cases of each)."""
    out: list[BfclCase] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file; a line that is not a JSON object (cut by a crash mid-write) is skipped,
    so its case is run again."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "id" in record and "variant" in record:
            out.append(record)
    return out


def run_ablation(*, files: list[tuple[Path, Path | None]], limit: int | None,
                 variants: list[tuple[str, str, str, dict[str, bool]]], records_path: Path, offset: int = 0,
                 model_path: str | None = None, max_tokens: int | None = None, n_threads: int | None = None,
                 progress: bool = True) -> list[dict[str, Any]]:
    """Every variant on every case, the categories interleaved, each record appended to ``records_path``
    (JSON lines) as soon as it is made; records already in the file are kept and not run again."""
    done = read_records(records_path) if records_path.is_file() else []
    seen = {(r["id"], r["variant"]) for r in done}
    if records_path.is_file() and not records_path.read_bytes().endswith(b"\n") and records_path.stat().st_size:
        with records_path.open("a", encoding="utf-8") as out:
            out.write("\n")  # a line cut by a crash: the next record starts on a line of its own
    by_key = {(r["id"], r["variant"]): r for r in done}
    cases = interleave([load_category(path, answers, limit=limit, offset=offset) for path, answers in files])
    started = time.monotonic()
    with records_path.open("a", encoding="utf-8") as out:
        for i, case in enumerate(cases, 1):
            tools = [to_tool(doc) for doc in case.functions]
            for name, prompts, examples, techniques in variants:
                if (case.id, name) in seen:
                    continue
                _EXAMPLES_MODE["value"] = examples
                llm = local_model(model_path, max_tokens, n_threads, techniques)
                t0 = time.monotonic()
                try:
                    decision = decide_react_agent(llm, case, tools, prompts)
                except Exception as exc:
                    decision = {"kind": "error", "raw": "", "reason": f"{type(exc).__name__}: {exc}"[:300]}
                correct, why = score(case, decision)
                record = {"id": case.id, "category": case.category, "variant": name, "prompts": prompts,
                          "examples": examples, "techniques": techniques, "protocol": "react_agent",
                          "kind": decision["kind"], "name": decision.get("name"), "args": decision.get("args"),
                          "calls": decision.get("calls"), "correct": correct, "why": why,
                          "raw": str(decision.get("raw", ""))[:400],
                          "seconds": round(time.monotonic() - t0, 3)}
                done.append(record)
                by_key[(case.id, name)] = record
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                out.flush()
                if progress:
                    print(f"[{i}/{len(cases)} {time.monotonic() - started:.0f}s] {case.id} {name}: "
                          f"{'ok' if correct else why}", file=sys.stderr, flush=True)
    return done


def record_ablation_records(records: list[dict[str, Any]], *, limit: int | None, model: str,
                            out_dir: Path | None = None, sizes: dict[str, int] | None = None) -> Path:
    """Summarise ablation records per variant and add each to the published ``ablation`` list (``sizes``: the
    cases in each category's file, so a reader sees how much of a file a run covers)."""
    path = out_dir or _common.RESULTS
    for name in dict.fromkeys(r["variant"] for r in records):
        rows = [r for r in records if r["variant"] == name]
        first = rows[0]
        results = {"model": model, "model_settings": first["techniques"], "records": rows,
                   "seconds": round(sum(r["seconds"] for r in rows), 1),
                   "categories": summarise(rows, ["react_agent"])}
        config = {"lang": first["prompts"], "examples": first["examples"], "limit": limit, "variant": name,
                  "simulated": bool(first.get("simulated")), "sizes": sizes,
                  "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        written = record_ablation(config, results, out_dir=path)
    return written


def summarise(records: list[dict[str, Any]], protocols: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    categories = list(dict.fromkeys(r["category"] for r in records))
    for category in [*categories, "all"]:
        block = {}
        for protocol in protocols:
            rows = [r for r in records if r["protocol"] == protocol and category in ("all", r["category"])]
            n = len(rows)
            kinds = {k: sum(r["kind"] == k for r in rows) for k in ("call", "finish", "unparseable", "error")}
            block[protocol] = {
                "n": n, "correct": sum(r["correct"] for r in rows),
                "accuracy": sum(r["correct"] for r in rows) / n if n else 0.0,
                **kinds, "unparseable_rate": kinds["unparseable"] / n if n else 0.0,
                "mean_seconds": sum(r["seconds"] for r in rows) / n if n else 0.0,
            }
            if "irrelevance" in category:
                lenient = sum(r["kind"] in ("finish", "unparseable") for r in rows)
                block[protocol]["bfcl_lenient_correct"] = lenient
        out[category] = block
    return out


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    cats = [c for c in results["categories"] if c != "all"] + ["all"]
    protocols = list(results["categories"]["all"])
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(protocols)
    for i, p in enumerate(protocols):
        values = [100 * results["categories"][c][p]["accuracy"] for c in cats]
        bars = ax.bar([j + i * width for j in range(len(cats))], values, width=width, label=PROTOCOLS.get(p, p))
        for bar, c in zip(bars, cats, strict=True):
            block = results["categories"][c][p]
            ax.annotate(f"{block['correct']}/{block['n']}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=6)
    ax.set_xticks([j + width * (len(protocols) - 1) / 2 for j in range(len(cats))])
    ax.set_xticklabels(cats)
    ax.set_ylabel("accuracy of the first decision, %")
    ax.set_ylim(0, 105)
    ax.set_title(f"BFCL, one local model ({results['model']})")
    ax.legend(fontsize=7)
    return _common.save_figure(fig, path)


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    cfg = data.get("config", {})
    rows = []
    for category, block in r["categories"].items():
        for protocol, s in block.items():
            lenient = f" (BFCL lenient: {s['bfcl_lenient_correct']})" if "bfcl_lenient_correct" in s else ""
            rows.append([category, PROTOCOLS.get(protocol, protocol), f"**{s['correct']}/{s['n']}** "
                         f"({100 * s['accuracy']:.0f} %){lenient}", s["call"], s["finish"],
                         f"{s['unparseable']} ({100 * s['unparseable_rate']:.0f} %)", s["error"],
                         f"{s['mean_seconds']:.1f}"])
    return "\n".join([
        f"Model: **{r['model']}** ({', '.join(f'{k}={v}' for k, v in r['model_settings'].items())}); "
        f"{cfg.get('limit', '?')} cases per category, evenly spread over each file; first decision only; "
        f"run time {r['seconds'] / 60:.1f} min. This comparison of the three protocols is the run of "
        f"{data.get('date', '?')[:10]}, with the local model's defaults of that day; the ablation below holds "
        "the later runs, on 40 cases per category (today's defaults: the rows the headline names).",
        "",
        _common.table(["category", "protocol", "correct", "calls", "FINISH", "unparseable", "errors",
                       "s / case"], rows),
        *(["", "Effect of each small-model technique (react_agent protocol only): cases gained (+) or lost (-) by "
           "turning it on, summed over every recorded pair of runs on the same cases that differ in that "
           "technique alone (`python -m bench.bfcl --record-ablation ...` records a run; "
           "`bench/results/bfcl.json` holds every run, docs/local-models.md explains each technique):", "",
           effects_markdown(data), "", TARGETS_NOTE] if data.get("ablation") else []),
    ])


TARGETS_NOTE = (
    "Only the techniques of today's pipeline are listed (the runs of earlier pipelines, whose benchmark-keyed "
    "value rules are removed because they changed correct calls, stay in `bench/results/bfcl.json`); these pairs "
    "were recorded on samples of 34 to 80 cases, some with the 270M model. `bench/NOTES.md` has the other "
    "techniques' measurements on the default model, and today's default model and pipeline are the headline's "
    "BFCL rows (the ablation run named `default`).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bfcl", description=__doc__.split("\n\n")[0])
    parser.add_argument("--categories", nargs="+", default=list(DEFAULT_CATEGORIES),
                        help="BFCL categories shipped in bfcl_eval/data (default: %(default)s)")
    parser.add_argument("--category-file", type=Path, action="append", default=None,
                        help="a BFCL category file (JSON lines); repeatable; replaces --categories")
    parser.add_argument("--answers", type=Path, action="append", default=None,
                        help="its possible-answer file (default: possible_answer/<same name> beside it)")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                        help="cases per category, evenly spread (default %(default)s; 0: all)")
    parser.add_argument("--offset", type=int, default=0,
                        help="shift every picked case this many rows on: a held-out slice (with --limit 40, an "
                             "offset of 1-4 picks no case of the default slice in any category)")
    parser.add_argument("--protocols", nargs="+", choices=list(PROTOCOLS), default=list(DEFAULT_PROTOCOLS),
                        help="default: %(default)s; react_agent_free is react_agent without the grammar (ablation)")
    parser.add_argument("--model", choices=("local", "scripted"), default="local",
                        help="local: the embedded GGUF model; scripted: an ideal stand-in (plumbing check)")
    parser.add_argument("--model-path", default=None, help="another GGUF file for the local model")
    parser.add_argument("--max-tokens", type=int, default=None, help="generation limit (default: the model's)")
    parser.add_argument("--n-threads", type=int, default=None, help="llama.cpp threads (default: its own)")
    parser.add_argument("--lang", default="en",
                        help="react_agent's built-in prompt set (en, ru, or another name PromptSet.load accepts)")
    parser.add_argument("--quiet", action="store_true", help="no per-case progress on stderr")
    parser.add_argument("--examples", choices=list(EXAMPLES), default="none",
                        help="worked examples in react_agent's prompt (use a compact set: --lang en-compact)")
    for flag in TECHNIQUE_FLAGS:
        option = "--" + flag.replace("_", "-").replace("format-", "")
        parser.add_argument(option, dest=flag, action=argparse.BooleanOptionalAction, default=None,
                            help=f"LocalChatModel({flag}=...) (default: the model's default)")
    parser.add_argument("--variant", action="append", default=None, metavar="NAME=PROMPTS:EXAMPLES:FLAGS",
                        help="ablation mode: run every variant on every case (categories interleaved), e.g. "
                             "base=en:none:- full=en-compact:generated:two_stage,grounding,format_patterns; "
                             "records go to --records as they are made; then recorded as with --record-ablation")
    parser.add_argument("--records", type=Path, default=None, help="JSON-lines file of the ablation records "
                        "(resumed: cases already in it are not run again)")
    parser.add_argument("--no-run", action="store_true", help="with --variant: only summarise the --records file")
    parser.add_argument("--oracle", action="store_true",
                        help="no model: put each case's correct call in place of the model's output, run the "
                             "post-decoding steps of LocalChatModel()'s default and print '<category> | oracle | "
                             "preserved N/M' (development categories only)")
    parser.add_argument("--suite", action="append", choices=("ru", "en"), default=None,
                        help="with --oracle: the project's suite of that language (bench.suites.oracle_cases)")
    parser.add_argument("--record-ablation", action="store_true",
                        help="add this run's summary to the 'ablation' list of the published bfcl.json (keeping its "
                             "main results) instead of replacing the file")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    if args.oracle:
        return run_oracle(args.category_file or [], args.answers or [], args.suite or [],
                          default=[] if args.category_file or args.suite else list(oracle.DEVELOPMENT_CATEGORIES))
    _common.require("bfcl_eval", "bfcl-eval")
    _common.require("langchain_classic", "langchain-classic")
    if args.category_file:
        answers = args.answers or []
        files = [(p, answers[i] if i < len(answers) else None) for i, p in enumerate(args.category_file)]
    else:
        files = category_files(args.categories)
    limit = args.limit or None
    if args.variant:
        if args.records is None:
            raise SystemExit("--variant needs --records PATH")
        parsed = [parse_variant(v) for v in args.variant]
        records = [] if args.no_run else run_ablation(
            files=files, limit=limit, variants=parsed, records_path=args.records,
            offset=args.offset,
            model_path=args.model_path, max_tokens=args.max_tokens, n_threads=args.n_threads,
            progress=not args.quiet)
        if args.no_run:
            records = read_records(args.records)
        # only the cases every variant has, so that the variants are compared on the same cases
        variants = {v[0] for v in parsed}
        records = [r for r in records if r["variant"] in variants]
        common = {i for i in {r["id"] for r in records}
                  if all(any(r["id"] == i and r["variant"] == v for r in records) for v in variants)}
        records = [r for r in records if r["id"] in common]
        sizes = {category_of(p): len(load_category(p, a, limit=None)) for p, a in files}
        path = record_ablation_records(records, limit=limit, model=args.model_path or DEFAULT_LOCAL_MODEL,
                                       out_dir=args.out_dir, sizes=sizes)
        print(ablation_markdown(json.loads(path.read_text(encoding="utf-8"))))
        print(f"\nwrote {path}")
        return 0
    techniques = {flag: getattr(args, flag) for flag in TECHNIQUE_FLAGS if getattr(args, flag) is not None}
    results = run(files=files, limit=limit, protocols=args.protocols, model=args.model, model_path=args.model_path,
                  max_tokens=args.max_tokens, n_threads=args.n_threads, lang=args.lang, progress=not args.quiet,
                  examples=args.examples, techniques=techniques)
    config = {"files": [str(p) for p, _ in files], "limit": limit, "protocols": args.protocols, "model": args.model,
              "lang": args.lang, "examples": args.examples, "techniques": techniques}
    if args.record_ablation:
        path = record_ablation(config, results, out_dir=args.out_dir)
        print(ablation_markdown(json.loads(path.read_text(encoding="utf-8"))))
        print(f"\nwrote {path}")
        return 0
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


def run_oracle(category_files: list[Path], answers: list[Path], suites: list[str], *,
               default: list[str]) -> int:
    """``--oracle``: one ``<category> | oracle | preserved N/M`` line per category file and suite; exit status 1
    when any is under 99 %."""
    lines: list[tuple[str, list[oracle.OracleCase]]] = []
    if category_files or default:
        _common.require("bfcl_eval", "bfcl-eval")
    files = [(p, answers[i] if i < len(answers) else None) for i, p in enumerate(category_files)]
    files += [(data_dir() / f"BFCL_v4_{name}.json", None) for name in default]
    for path, answer in files:
        lines.append((category_of(path), oracle.bfcl_cases(path, answer)))
    for lang in suites:
        lines.append((f"suite_{lang}", oracle.suite_cases(lang)))
    worst = 1.0
    for category, cases in lines:
        print(oracle.line(category, cases))
        if cases:
            worst = min(worst, 1 - len(oracle.changed(cases)) / len(cases))
    return 0 if worst >= 0.99 else 1


def ablation_entry(config: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """One row of the ablation: the technique flags, the per-category summary and the per-case outcomes."""
    settings = results.get("model_settings", {})
    return {
        "prompts": config.get("lang"), "examples": config.get("examples", "none"),
        "techniques": {flag: settings.get(flag) for flag in TECHNIQUE_FLAGS},
        "limit": config.get("limit"), "model": results.get("model"), "seconds": results.get("seconds"),
        "variant": config.get("variant"), "simulated": bool(config.get("simulated")),
        "date": config.get("date"), "cases_in_file": config.get("sizes"),
        "categories": {c: b.get("react_agent") for c, b in results.get("categories", {}).items()},
        "cases": [{k: r[k] for k in ("id", "kind", "name", "args", "correct", "why")}
                  for r in results.get("records", []) if r.get("protocol") == "react_agent"],
    }


def record_ablation(config: dict[str, Any], results: dict[str, Any], *, out_dir: Path | None = None) -> Path:
    """Add this run to ``ablation`` in the published result (a run with the same settings is replaced)."""
    path = (out_dir or _common.RESULTS) / f"{NAME}.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"benchmark": NAME}
    entry = ablation_entry(config, results)
    def key(row: dict[str, Any]) -> tuple[Any, ...]:  # techniques by the ones on: a flag added later is off
        on = sorted(flag for flag, value in (row.get("techniques") or {}).items() if value)
        return row.get("variant"), row.get("prompts"), row.get("examples"), on, row.get("limit")

    rows = [r for r in data.get("ablation", []) if key(r) != key(entry)]
    data["ablation"] = [*rows, entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


CATEGORIES = ("simple_python", "multiple", "irrelevance")


def technique_effects(ablation: list[dict[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """Per technique, per category: ``[cases gained, cases compared, pairs]`` over every pair of recorded runs
    ``V`` and ``V+...``/``V-...`` on the same cases whose technique flags differ in exactly one flag (a rerun
    with the same flags, or a run that changes several flags at once, is no pair)."""
    by_name = {e.get("variant"): e for e in ablation if e.get("variant")}
    effects: dict[str, dict[str, list[int]]] = {}
    for name, entry in by_name.items():
        cut = max(name.rfind("+"), name.rfind("-"))
        base = by_name.get(name[:cut]) if cut > 0 else None
        if base is None:
            continue
        flags = set(entry["techniques"]) | set(base["techniques"])
        changed = [f for f in flags if bool(entry["techniques"].get(f)) != bool(base["techniques"].get(f))]
        if len(changed) != 1:
            continue
        technique = changed[0]
        on, off = (entry, base) if entry["techniques"].get(technique) else (base, entry)
        for category in CATEGORIES:
            a, b = (on["categories"] or {}).get(category), (off["categories"] or {}).get(category)
            if not a or not b or a["n"] != b["n"]:
                continue
            row = effects.setdefault(technique, {}).setdefault(category, [0, 0, 0])
            row[0] += a["correct"] - b["correct"]
            row[1] += a["n"]
            row[2] += 1
    return effects


def effects_markdown(data: dict[str, Any]) -> str:
    """One row per technique: its measured effect per category (see :func:`technique_effects`)."""
    effects = technique_effects(data.get("ablation", []))
    rows = []
    for technique, cats in sorted(effects.items()):
        if technique not in TECHNIQUES:  # a technique of an earlier pipeline: bench/results/bfcl.json keeps it
            continue
        cells = [f"{cats[c][0]:+d} of {cats[c][1]}" if c in cats else "" for c in CATEGORIES]
        rows.append([f"`{technique}`", *cells])
    if not rows:
        return ""
    return _common.table(["technique", *CATEGORIES], rows)


def ablation_markdown(data: dict[str, Any]) -> str:
    """The ablation table: one row per recorded run (prompt set, examples, techniques, accuracy per category)."""
    rows = []
    for entry in data.get("ablation", []):
        flags = ", ".join(f for f, on in entry["techniques"].items() if on) or "-"
        if entry.get("simulated"):
            flags += " (simulated from the records)"
        cells = []
        for category in ("simple_python", "multiple", "irrelevance"):
            s = (entry["categories"] or {}).get(category)
            cells.append(f"{s['correct']}/{s['n']} ({100 * s['accuracy']:.0f} %)" if s else "")
        seconds = (entry["categories"].get("all") or {}).get("mean_seconds", 0.0)
        rows.append([entry.get("variant") or "", entry["prompts"], entry["examples"], flags, *cells,
                     f"{seconds:.1f}"])
    if not rows:
        return ""
    return _common.table(["variant", "prompts", "examples", "LocalChatModel techniques", "simple_python",
                          "multiple", "irrelevance", "s / case"], rows)


if __name__ == "__main__":
    raise SystemExit(main())
