"""A process of the real embedded model loads the prompt an earlier process evaluated (``prompt_cache_dir``), and
``react-agent`` commands keep prompts in the default folder unless told otherwise."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from react_agent.models.local._weights import weights_installed

installed = [
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed"),
    pytest.mark.skipif(not weights_installed(), reason="the default model's weights are not installed"),
]
pytestmark = installed

CHILD = """
import json, sys, tempfile
from pathlib import Path
from react_agent import ReactAgent
from react_agent.demo import DEMO_EXAMPLES, make_demo_tools
from react_agent.models import LocalChatModel

llm = LocalChatModel(prompt_cache_dir=sys.argv[1], max_tokens=96)
tools = make_demo_tools(db_path=Path(tempfile.mkdtemp()) / "u.db", lang="en")
agent = ReactAgent(llm, tools, prompts="en-compact", examples=DEMO_EXAMPLES["en"], max_iterations=1)
result = agent.run(sys.argv[2])  # one decision (a run tells the model its task)
usage = result.usage
print(json.dumps({"action": result.steps[0].action, "prompt_tokens_reused": usage.cached_input_tokens,
                  "prompt_tokens_evaluated": usage.input_tokens - usage.cached_input_tokens}))
"""


def decide(folder: Path, task: str) -> dict[str, object]:
    """The first decision of the demo agent on ``task`` in a new process."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder), task], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def kept_text(folder: Path) -> str:
    """The text whose context the one file in ``folder`` keeps."""
    from llama_cpp import Llama

    from react_agent.models import default_model_path
    from react_agent.models.local._prefix import DiskPrefixes

    (path,) = folder.glob("*/*.state")
    tokens = DiskPrefixes(path.parent).held_tokens(path)
    assert tokens
    vocab = Llama(model_path=default_model_path(), vocab_only=True, verbose=False)
    return vocab.detokenize(tokens, special=True).decode("utf-8")


@pytest.mark.local_model
def test_a_new_process_evaluates_only_what_an_earlier_one_did_not(tmp_path: Path) -> None:
    first = decide(tmp_path, "Register user Ivan with email ivan@test.com")
    assert int(first["prompt_tokens_evaluated"]) > 300, first  # type: ignore[call-overload]
    kept = kept_text(tmp_path)  # the instructions, tools and worked examples; nothing of the run
    assert "register_user" in kept and "Example" in kept
    assert "ivan@test.com" not in kept and "Register user Ivan" not in kept
    second = decide(tmp_path, "Find user Maria")
    assert int(second["prompt_tokens_reused"]) > 300 > 100 > int(second["prompt_tokens_evaluated"]), second  # type: ignore[call-overload]
    assert second["action"] in {"search_db", "register_user", "FINISH"}
    assert len(list(tmp_path.glob("*/*.state"))) == 1  # the same static part: nothing more kept


@pytest.mark.local_model
def test_a_prompt_that_is_no_agents_step_is_not_kept(tmp_path: Path) -> None:
    from react_agent.models import LocalChatModel

    long = "Notes. " + " ".join(f"Item {i} is private." for i in range(120))
    reply = LocalChatModel(prompt_cache_dir=str(tmp_path)).invoke(long, max_tokens=2)
    assert int(reply.response_metadata["prompt_tokens_evaluated"]) > 300
    assert list(tmp_path.rglob("*.state")) == []  # no task: nothing tells what part is static


@pytest.mark.parametrize(("options", "folder"), [
    ([], "default"), (["prompt_cache_dir=null"], None), (["prompt_cache_dir=/tmp/states"], "/tmp/states")])
def test_react_agent_commands_keep_prompts_in_the_default_folder(options: list[str], folder: str | None) -> None:
    from react_agent import cli
    from react_agent.models import LocalChatModel, default_prompt_cache_dir

    args = SimpleNamespace(model="local", model_path=None, base_url=None, api_key_env=None, model_option=options)
    model = cli.build_model(args)  # type: ignore[arg-type]
    assert isinstance(model, LocalChatModel)
    assert model.prompt_cache_dir == (str(default_prompt_cache_dir()) if folder == "default" else folder)


@pytest.mark.local_model
def test_a_prompt_longer_than_a_window_llama_cpp_rounds_up_names_the_remedies() -> None:
    """``n_ctx=300``: llama.cpp's context holds 512, llama-cpp-python's token buffer 300 (it failed with a numpy
    broadcasting error)."""
    from react_agent.models import CallContext, LocalChatModel

    static = "Rules. " + " ".join(f"Rule {i} applies." for i in range(80))  # about 400 tokens
    with pytest.raises(ValueError, match=r"holds 300 .*larger n_ctx=") as caught:
        LocalChatModel(n_ctx=300).invoke(f"{static}\nTask: say hi", max_tokens=2,
                                          react_agent_call=CallContext(task="say hi"))
    assert "broadcast" not in str(caught.value)


@pytest.mark.local_model
def test_a_prompt_longer_than_the_context_window_says_so_with_a_prompt_folder(tmp_path: Path) -> None:
    from react_agent.models import CallContext, LocalChatModel

    static = "Rules. " + " ".join(f"Rule {i} applies." for i in range(200))  # about 900 tokens
    model = LocalChatModel(n_ctx=512, prompt_cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="context window"):
        model.invoke(f"{static}\nTask: say hi", max_tokens=2, react_agent_call=CallContext(task="say hi"))
    assert list(tmp_path.rglob("*.state")) == []
