"""Benchmark 4: prompt tokens per step over a 20-step run, react_agent vs LangChain's scratchpad.

One scripted run of 19 tool calls and a final answer (the demo tools in English: ``search_db`` and
``calculator`` alternately) goes through ``ReactAgent`` (``history_window=3``, the default, and
``history_window=None``: the whole history) and through LangChain's ``AgentExecutor`` with
``create_json_chat_agent`` (its scratchpad repeats every earlier reply and tool response). Both are
driven by ``react_agent.testing.ScriptedChatModel``, which records the messages of every call; each
prompt is rendered as the plain document a base model reads (message texts joined by a blank line)
and counted with a fixed offline tokenizer:

* ``gemma`` (default when llama-cpp-python and the default GGUF are installed): the Gemma 3 tokenizer
  of the embedded model, ``llama_cpp.Llama(model_path, vocab_only=True).tokenize``;
* ``regex``: word pieces ``\\w+|[^\\w\\s]`` (no dependency; roughly comparable across languages).

    python -m bench.prompt_size [--steps 20] [--tokenizer gemma|regex]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import _common
from bench._peers import langchain_json_chat_prompt, messages_text

NAME = "prompt_size"
TASK = "Look up user Ivan again and again and compute the running totals, step by step."


# ------------------------------------------------------------------------------------------ tokenizers
def gemma_tokenizer() -> Callable[[str], int]:
    import llama_cpp

    from react_agent.models import default_model_path

    with _common.quiet_stderr():
        vocab = llama_cpp.Llama(model_path=default_model_path(), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return count


_PIECE = re.compile(r"\w+|[^\w\s]")


def regex_tokenizer() -> Callable[[str], int]:
    return lambda text: len(_PIECE.findall(text))


def tokenizer(name: str) -> tuple[str, Callable[[str], int]]:
    if name in ("auto", "gemma"):
        try:
            return "gemma (Gemma 3 270M GGUF vocabulary via llama_cpp, vocab_only)", gemma_tokenizer()
        except Exception as exc:
            if name == "gemma":
                raise SystemExit(f"the Gemma tokenizer is unavailable ({exc}); use --tokenizer regex or "
                                 "pip install 'react-agent[local]'") from exc
    return "regex word pieces \\w+|[^\\w\\s]", regex_tokenizer()


# ------------------------------------------------------------------------------------------ the run
def script(steps: int, finish_name: str) -> list[str]:
    out = []
    for i in range(steps - 1):
        if i % 2 == 0:
            call = {"thought": "Look Ivan up again.", "action": "search_db", "action_input": {"username": "Ivan"}}
        else:
            call = {"thought": "Add the next number.", "action": "calculator",
                    "action_input": {"expression": f"{i} * ({i} + 1) / 2"}}
        out.append(json.dumps(call))
    out.append(json.dumps({"thought": "Done.", "action": finish_name, "action_input": "All lookups done."}))
    return out


def demo_tools(folder: Path) -> list[Any]:
    from react_agent.demo import make_demo_tools

    tools = make_demo_tools(db_path=folder / "users.sqlite3", lang="en")
    tools[0].invoke({"username": "Ivan", "email": "ivan@test.com", "phone": "+79990000000"})
    return tools


def react_prompts(steps: int, history_window: int | None) -> list[str]:
    from react_agent import ReactAgent
    from react_agent.testing import ScriptedChatModel

    with tempfile.TemporaryDirectory() as folder:
        llm = ScriptedChatModel(script(steps, "FINISH"))
        agent = ReactAgent(llm, demo_tools(Path(folder)), prompts="en", max_iterations=steps + 2,
                           history_window=history_window)
        result = agent.run(TASK)
        assert result.status == "finished" and result.llm_calls == steps, result
        return [messages_text(call.messages) for call in llm.calls]


def langchain_prompts(steps: int) -> list[str]:
    from langchain_classic.agents import AgentExecutor, create_json_chat_agent

    from react_agent.testing import ScriptedChatModel

    with tempfile.TemporaryDirectory() as folder:
        tools = demo_tools(Path(folder))
        llm = ScriptedChatModel(script(steps, "Final Answer"))
        agent = create_json_chat_agent(llm, tools, langchain_json_chat_prompt())
        executor = AgentExecutor(agent=agent, tools=tools, max_iterations=steps + 2)
        result = executor.invoke({"input": TASK})
        assert result["output"] == "All lookups done." and len(llm.calls) == steps, result
        return [messages_text(call.messages) for call in llm.calls]


def run(*, steps: int = 20, tokenizer_name: str = "auto") -> dict[str, Any]:
    _common.require("langchain_classic", "langchain-classic")
    label, count = tokenizer(tokenizer_name)
    prompts = {
        "react_agent_window_3": react_prompts(steps, 3),
        "react_agent_full_history": react_prompts(steps, None),
        "langchain_json_chat": langchain_prompts(steps),
    }
    tokens = {name: [count(p) for p in texts] for name, texts in prompts.items()}
    return {
        "tokenizer": label,
        "steps": steps,
        "tokens_per_step": tokens,
        "total_tokens": {k: sum(v) for k, v in tokens.items()},
        "last_step_tokens": {k: v[-1] for k, v in tokens.items()},
        "first_step_tokens": {k: v[0] for k, v in tokens.items()},
        "growth_per_step": {k: (v[-1] - v[0]) / max(1, len(v) - 1) for k, v in tokens.items()},
    }


LABELS = {
    "react_agent_window_3": "react_agent (history_window=3, default)",
    "react_agent_full_history": "react_agent (history_window=None)",
    "langchain_json_chat": "LangChain create_json_chat_agent (scratchpad)",
}


def plot(results: dict[str, Any], path: Path) -> Path | None:
    plt = _common.pyplot()
    if plt is None:
        return None
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7, 3.8))
    for key, values in results["tokens_per_step"].items():
        ax.plot(range(1, len(values) + 1), values, marker="o", markersize=3, label=LABELS.get(key, key))
    ax.set_xlabel("model step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("prompt tokens")
    ax.set_title(f"Prompt size per step ({results['tokenizer'].split(' (')[0]} tokens)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _common.save_figure(fig, path)


def markdown(data: dict[str, Any]) -> str:
    r = data["results"]
    lc = r["total_tokens"]["langchain_json_chat"]
    rows = [[LABELS.get(k, k), r["first_step_tokens"][k], r["last_step_tokens"][k], f"{r['growth_per_step'][k]:.0f}",
             r["total_tokens"][k], f"{r['total_tokens'][k] / lc:.2f}x"] for k in r["tokens_per_step"]]
    return "\n".join([
        f"A scripted {r['steps']}-step run (19 tool calls of the demo tools, then the final answer); tokens "
        f"counted with **{r['tokenizer']}** on each prompt rendered as plain text.",
        "",
        _common.table(["agent", "step 1", f"step {r['steps']}", "growth per step", "total over the run",
                       "total vs LangChain"], rows),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.prompt_size", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="model steps in the run (default 20)")
    parser.add_argument("--tokenizer", choices=("auto", "gemma", "regex"), default="auto",
                        help="token counter (default auto: gemma if available, else regex)")
    _common.add_common_args(parser)
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be at least 2")
    results = run(steps=args.steps, tokenizer_name=args.tokenizer)
    config = {"steps": args.steps, "tokenizer": args.tokenizer}
    return _common.publish(NAME, config, results, args, plot=plot, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
