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
from react_agent import ReactAgent, RunState
from react_agent.demo import DEMO_EXAMPLES, make_demo_tools
from react_agent.models import LocalChatModel

llm = LocalChatModel(prompt_cache_dir=sys.argv[1], max_tokens=96)
tools = make_demo_tools(db_path=Path(tempfile.mkdtemp()) / "u.db", lang="en")
agent = ReactAgent(llm, tools, prompts="en-compact", examples=DEMO_EXAMPLES["en"])
reply = llm.invoke(agent.build_messages(RunState(sys.argv[2])), response_format=agent.response_format)
print(json.dumps({"content": reply.content, **reply.response_metadata}))
"""


def decide(folder: Path, task: str) -> dict[str, object]:
    """The first decision of the demo agent on ``task`` in a new process."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder), task], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.local_model
def test_a_new_process_evaluates_only_what_an_earlier_one_did_not(tmp_path: Path) -> None:
    first = decide(tmp_path, "Register user Ivan with email ivan@test.com")
    assert int(first["prompt_tokens_evaluated"]) > 300, first  # type: ignore[call-overload]
    assert len(list(tmp_path.glob("*/*.state"))) == 1
    second = decide(tmp_path, "Find user Maria")
    assert int(second["prompt_tokens_reused"]) > 300 > 100 > int(second["prompt_tokens_evaluated"]), second  # type: ignore[call-overload]
    assert json.loads(str(second["content"]))["action"] in {"search_db", "register_user", "FINISH"}
    assert len(list(tmp_path.glob("*/*.state"))) == 1  # nothing long was evaluated: nothing more kept


@pytest.mark.parametrize(("options", "folder"), [
    ([], "default"), (["prompt_cache_dir=null"], None), (["prompt_cache_dir=/tmp/states"], "/tmp/states")])
def test_react_agent_commands_keep_prompts_in_the_default_folder(options: list[str], folder: str | None) -> None:
    from react_agent import cli
    from react_agent.models import LocalChatModel, default_prompt_cache_dir

    args = SimpleNamespace(model="local", model_path=None, base_url=None, api_key_env=None, model_option=options)
    model = cli.build_model(args)  # type: ignore[arg-type]
    assert isinstance(model, LocalChatModel)
    assert model.prompt_cache_dir == (str(default_prompt_cache_dir()) if folder == "default" else folder)
