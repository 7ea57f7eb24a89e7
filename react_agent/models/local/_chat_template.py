"""The prompt text of an instruct model: its messages through the GGUF's own chat template.

The template (``tokenizer.chat_template`` in the GGUF's metadata) comes with the weights, so it is untrusted
text: it is rendered by llama-cpp-python's :class:`llama_cpp.llama_chat_format.Jinja2ChatFormatter`, whose
Jinja environment is sandboxed (``ImmutableSandboxedEnvironment``). The result is plain text ending with the
assistant's header, which every completion of an answer continues: a constrained answer decoded in stages,
and a last ``assistant`` message given as a prefill.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["chat_prompt", "chat_template"]


def chat_template(llama: Any) -> str | None:
    """The GGUF's chat template, ``None`` when it has none (a base model)."""
    template = llama.metadata.get("tokenizer.chat_template")
    return template if isinstance(template, str) and template.strip() else None


def chat_prompt(llama: Any, template: str, turns: Sequence[tuple[str, str]]) -> str:
    """``turns`` (role, text) rendered by ``template`` up to the assistant's turn. A last ``assistant`` turn is
    a prefill: the turns before it are rendered with the generation prompt and its text follows verbatim."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    prefill = ""
    if turns and turns[-1][0] == "assistant":
        prefill, turns = turns[-1][1], turns[:-1]
    formatter = Jinja2ChatFormatter(template=template, eos_token=_token_text(llama, llama.token_eos()),
                                    bos_token=_token_text(llama, llama.token_bos()), add_generation_prompt=True)
    messages: list[Any] = [{"role": role, "content": text} for role, text in turns]
    return formatter(messages=messages).prompt + prefill


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", errors="replace")
