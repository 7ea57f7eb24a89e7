"""Greedy decoding under a grammar that checks the top token first chooses what llama.cpp's grammar sampler chooses.

The real default model (marked ``local_model``): each prompt is decoded twice from an empty cache, once with
llama-cpp-python's ``grammar=`` (the whole vocabulary masked before every token) and once with
:class:`~react_agent.models.local._sampling.GrammarFirst`; the texts must be equal, on grammars where the
model's top token is mostly allowed and on one where it mostly is not.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from react_agent.models.local._weights import weights_installed

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed"),
    pytest.mark.skipif(not weights_installed(), reason="the default model's weights are not installed"),
]

CALL = {"type": "object", "properties": {
    "thought": {"type": "string"},
    "action": {"type": "string", "enum": ["search_contacts", "create_deal", "send_email", "FINISH"]},
    "action_input": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                     "required": ["query"]}},
    "required": ["thought", "action", "action_input"]}

PROMPTS = [
    "<|im_start|>user\nFind the contact Ivan Petrov and tell me his email. Answer with JSON: thought, action, "
    "action_input.<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nНайди контакт Петрова и напиши ему письмо. Ответь JSON.<|im_end|>\n<|im_start|>assistant\n",
]


@pytest.fixture(scope="module")
def llama() -> Any:
    from llama_cpp import Llama

    from react_agent.models import default_model_path

    return Llama(model_path=default_model_path(), n_ctx=1024, n_threads=2, verbose=False)


def both(llama: Any, prompt: str, grammar: str, max_tokens: int) -> tuple[str, str, int]:
    """The greedy text under ``grammar=`` and under :class:`GrammarFirst`, and how often the latter masked."""
    from llama_cpp.llama_grammar import LlamaGrammar

    from react_agent.models.local._sampling import GrammarFirst

    llama.reset()
    whole = llama.create_completion(prompt, max_tokens=max_tokens, temperature=0.0,
                                    grammar=LlamaGrammar.from_string(grammar, verbose=False))
    first = GrammarFirst(llama, grammar)
    llama.reset()
    try:
        fast = llama.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, logits_processor=[first])
    finally:
        first.close()
    return whole["choices"][0]["text"], fast["choices"][0]["text"], first.masked


@pytest.mark.parametrize("prompt", PROMPTS, ids=["en", "ru"])
def test_a_json_schema_grammar_decodes_the_same_text(llama: Any, prompt: str) -> None:
    from react_agent.models.local._model import _grammar_for

    whole, fast, _ = both(llama, prompt, _grammar_for(json.dumps(CALL)), 96)
    assert fast == whole
    assert json.loads(fast)["action"] in CALL["properties"]["action"]["enum"]  # type: ignore[index]


def test_a_grammar_the_model_would_not_follow_is_masked_and_decodes_the_same_text(llama: Any) -> None:
    grammar = 'root ::= "Zq" [0-9] [0-9] "-xy" ("!" | "?")'
    whole, fast, masked = both(llama, PROMPTS[0], grammar, 16)
    assert fast == whole and fast.startswith("Zq") and fast.endswith(("!", "?"))
    assert masked >= 2  # the top token was refused, and the whole vocabulary was masked


def test_a_grammar_llama_cpp_cannot_parse_is_a_clear_error(llama: Any) -> None:
    from react_agent.models.local._sampling import GrammarFirst

    with pytest.raises(ValueError, match="cannot parse this grammar"):
        GrammarFirst(llama, "root ::= undefined-rule")


def test_a_closed_grammar_refuses_another_completion(llama: Any) -> None:
    from react_agent.models.local._sampling import GrammarFirst

    first = GrammarFirst(llama, 'root ::= "a"')
    first.close()
    first.close()
    with pytest.raises(RuntimeError, match="closed"):
        first([1, 2], [0.0, 1.0])


@pytest.mark.parametrize(("temperature", "checked_first"), [(0.0, True), (0.7, False)])
def test_the_embedded_model_checks_the_top_token_first_when_it_decodes_greedily(
        monkeypatch: pytest.MonkeyPatch, temperature: float, checked_first: bool) -> None:
    """Sampling at a temperature keeps llama-cpp-python's ``grammar=``: the top token is not the one it draws."""
    import react_agent.models.local._prefix as prefix
    from react_agent.models import LocalChatModel
    from react_agent.models.local._sampling import GrammarFirst

    made: list[GrammarFirst] = []

    class Counted(GrammarFirst):
        def __init__(self, llama: Any, grammar: str, *begun: Any) -> None:
            super().__init__(llama, grammar, *begun)
            made.append(self)

    monkeypatch.setattr(prefix, "GrammarFirst", Counted)
    schema = {"type": "object", "properties": {"n": {"type": "integer", "enum": [3, 4, 5]}}, "required": ["n"]}
    reply = LocalChatModel(temperature=temperature, max_tokens=16).invoke(
        "How many sides has a square? Answer as JSON.", response_format={"type": "json_object", "schema": schema})
    assert json.loads(str(reply.content))["n"] in (3, 4, 5)
    assert bool(made) is checked_first


def test_an_output_begun_as_written_text_goes_on_as_the_whole_decoding_does(llama: Any) -> None:
    """The model's own start of an answer (its keys and quotes up to the thought's text), written into the prompt
    and read by the grammar first, continues into the answer decoded whole when the model decoded that start as
    the tokenizer writes it (as the agents' prompts have it write ``{"thought": "``)."""
    from react_agent.models.local._model import _grammar_for
    from react_agent.models.local._prefix import can_begin, complete, prompt_tokens

    prompt, grammar = PROMPTS[0], _grammar_for(json.dumps(CALL))
    whole, _, _ = both(llama, prompt, grammar, 96)
    start = whole[: whole.index('"', whole.index(":")) + 1]  # {"thought": "
    held, written = prompt_tokens(llama, prompt), prompt_tokens(llama, prompt + start)
    decoded = [int(t) for t in llama.input_ids[len(held): len(written)]]
    assert held + decoded == written  # the model decoded the start as the tokenizer writes it
    assert can_begin(llama, {"temperature": 0.0})
    llama.reset()
    rest, _ = complete(llama, prompt + start, grammar=grammar, begun=start, max_tokens=96, temperature=0.0)
    assert start + rest["choices"][0]["text"] == whole
    assert rest["usage"]["completion_tokens"] < len(llama.tokenize(whole.encode(), add_bos=False))


def test_written_text_the_grammar_cannot_read_is_a_value_error_not_an_abort(llama: Any) -> None:
    from react_agent.models.local._model import _grammar_for
    from react_agent.models.local._prefix import complete

    with pytest.raises(ValueError, match="does not allow"):
        complete(llama, PROMPTS[0] + '["thought"', grammar=_grammar_for(json.dumps(CALL)), begun='["thought"',
                 max_tokens=8, temperature=0.0)
