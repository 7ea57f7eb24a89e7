"""The text an embedded model continues and the prompt prefix it reuses, on stand-in llama objects (no weights)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from react_agent import ConfigError
from react_agent.models import LocalChatModel
from react_agent.models._providers import make_model
from react_agent.models.local._catalog import DEFAULT_LOCAL_MODEL
from react_agent.models.local._prefix import PrefixUse, complete
from react_agent.models.local._weights import weights_installed

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python missing")

CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class StandIn:
    """The parts of ``llama_cpp.Llama`` the model uses: a character tokenizer, the evaluated tokens, completions."""

    def __init__(self, template: str | None = CHATML) -> None:
        self.metadata = {"tokenizer.chat_template": template} if template else {}
        self.input_ids: list[int] = []
        self.n_tokens = 0
        self.prompts: list[list[int]] = []

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return ([1] if add_bos else []) + list(text)

    def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
        return {1: b"<s>", 2: b"</s>"}.get(tokens[0], b"") if len(tokens) == 1 and tokens[0] < 3 else bytes(tokens)

    def token_bos(self) -> int:
        return 1

    def token_eos(self) -> int:
        return 2

    @staticmethod
    def longest_token_prefix(a: list[int], b: list[int]) -> int:
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return n

    def create_completion(self, prompt: list[int], **options: Any) -> dict[str, Any]:
        self.prompts.append(prompt)
        self.input_ids, self.n_tokens = list(prompt), len(prompt)
        return {"choices": [{"text": "ok", "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1}}


def test_a_second_prompt_sharing_the_prefix_counts_only_its_new_tokens_as_evaluated() -> None:
    llama = StandIn()
    _, first = complete(llama, "static part. task one")
    _, second = complete(llama, "static part. task two, longer")
    assert first == PrefixUse(evaluated=len("static part. task one") + 1, reused=0)
    assert second.reused == len("static part. task ") + 1  # BOS and the shared text
    assert second.evaluated == len("two, longer")
    _, same = complete(llama, "static part. task two, longer")
    assert same.reused == len(llama.prompts[-1]) - 1 and same.evaluated == 1  # the last token again
    assert first + second == PrefixUse(evaluated=first.evaluated + second.evaluated, reused=second.reused)


@needs_llama
def test_an_instruct_model_is_prompted_through_its_chat_template(monkeypatch: pytest.MonkeyPatch) -> None:
    llama = StandIn()
    model = LocalChatModel(model_path="/any.gguf")
    monkeypatch.setattr(model.__class__, "_client", lambda self: (llama, __import__("threading").Lock()))
    reply = model.invoke([SystemMessage("You call tools."), HumanMessage("Task: find Ivan")])
    text = bytes(llama.prompts[-1][1:]).decode()
    assert text == ("<|im_start|>system\nYou call tools.<|im_end|>\n<|im_start|>user\nTask: find Ivan<|im_end|>\n"
                    "<|im_start|>assistant\n")
    assert reply.response_metadata["prompt_tokens_evaluated"] == len(llama.prompts[-1])
    assert reply.usage_metadata is not None and reply.usage_metadata["input_token_details"] == {"cache_read": 0}
    model.invoke([SystemMessage("You call tools."), HumanMessage("Task: find Ivan"), AIMessage('{"thought": "')])
    assert bytes(llama.prompts[-1][1:]).decode().endswith('<|im_start|>assistant\n{"thought": "')
    again = model.invoke([SystemMessage("You call tools."), HumanMessage("Task: find Olga")])
    assert again.response_metadata["prompt_tokens_reused"] == len("<|im_start|>system\nYou call tools.<|im_end|>\n"
                                                                  "<|im_start|>user\nTask: find ") + 1


@needs_llama
def test_a_base_model_keeps_the_plain_document_and_chat_needs_a_template(monkeypatch: pytest.MonkeyPatch) -> None:
    llama = StandIn(template=None)
    monkeypatch.setattr(LocalChatModel, "_client", lambda self: (llama, __import__("threading").Lock()))
    LocalChatModel(model_path="/any.gguf").invoke([SystemMessage("sys"), HumanMessage("task")])
    assert bytes(llama.prompts[-1][1:]).decode() == "sys\n\ntask\n"
    with pytest.raises(ConfigError, match="no chat template"):
        LocalChatModel(model_path="/any.gguf", prompt_format="chat").invoke("task")
    chat = StandIn()
    monkeypatch.setattr(LocalChatModel, "_client", lambda self: (chat, __import__("threading").Lock()))
    LocalChatModel(model_path="/any.gguf", prompt_format="plain").invoke("task")
    assert bytes(chat.prompts[-1][1:]).decode() == "task\n"


def test_catalogue_names_select_the_weights_and_mistakes_are_config_errors() -> None:
    assert LocalChatModel().model_name == DEFAULT_LOCAL_MODEL
    assert LocalChatModel(model="Qwen2.5-Coder-0.5B").model_name == "qwen2.5-coder-0.5b"
    assert LocalChatModel(model="gemma-3-270m").catalog_entry is not None
    assert LocalChatModel(model_path="/x/my.gguf").catalog_entry is None
    with pytest.raises(ConfigError, match="use one of gemma-3-270m"):
        LocalChatModel(model="gpt-5")
    with pytest.raises(ConfigError, match="not both"):
        LocalChatModel(model="gemma-3-270m", model_path="/x/my.gguf")


@needs_llama
@pytest.mark.skipif(not weights_installed(), reason="the default model's weights are not installed")
def test_the_local_spec_takes_a_catalogue_name_or_a_file(tmp_path: Any) -> None:
    assert getattr(make_model(f"local:{DEFAULT_LOCAL_MODEL}"), "model", None) == DEFAULT_LOCAL_MODEL
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    assert getattr(make_model(f"local:{gguf}"), "model_path", None) == str(gguf)
    with pytest.raises(ConfigError, match=r"unknown local model 'llama-70b'.*qwen2\.5-coder-1\.5b"):
        make_model("local:llama-70b")
    with pytest.raises(ConfigError, match="GGUF file not found"):
        make_model(f"local:{tmp_path}/missing.gguf")
