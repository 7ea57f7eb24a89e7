"""``LocalChatModel``: a langchain-core chat model that runs a GGUF file in-process via llama.cpp.

Why our own thin adapter and not langchain-community's ``ChatLlamaCpp``
-------------------------------------------------------------------------
``ChatLlamaCpp`` does forward extra call kwargs to ``Llama.create_chat_completion``, so a per-call
``grammar=``/``response_format={"type": "json_object", "schema": ...}`` would reach llama.cpp, but:

* it always goes through ``create_chat_completion``, i.e. through the GGUF's chat template. A base
  model (Gemma 3 270M) ships **no** ``tokenizer.chat_template``, and llama-cpp-python then falls
  back to a Llama-2 ``[INST]`` format the model has never seen; and a constrained answer decoded in
  stages must continue the rendered text, which the chat API does not expose;
* it does not understand the OpenAI ``{"type": "json_schema", "json_schema": {...}}`` shape the
  agent sends to every backend, it loads the weights eagerly in a validator (no lazy, shared,
  locked instance), it needs ``model_path`` (no default weights), it reports no
  ``usage_metadata`` on the ``AIMessage``, and it would add langchain-community (a large
  dependency tree) to the ``local`` extra.

So this module talks to ``llama_cpp.Llama`` directly and stays small: it renders the messages to
text, turns a per-call JSON schema into a llama.cpp grammar, calls ``create_completion`` on the
text (reusing the cached prompt prefix: :mod:`react_agent.models.local._prefix`) and wraps the result.

Prompt format
-------------
``prompt_format="auto"`` (the default) uses the GGUF's own chat template when it has one
(``tokenizer.chat_template`` in its metadata) and the *plain* format otherwise; ``"plain"`` and
``"chat"`` force one. The chat format renders the messages (system, user, assistant; tool messages
as user turns) with the GGUF's template in a sandbox (:mod:`react_agent.models.local._chat_template`), up
to the assistant's header; every completion of the answer continues that text. The plain format
treats the conversation as one document, which is what a base model continues:

* the text of every message (system, human, AI, tool…) verbatim, in order, separated by a blank
  line (``"\\n\\n"``); list content keeps its text blocks only;
* then a single ``"\\n"`` so the answer starts on a new line, *unless* the last message is an
  ``AIMessage``: its text is then a prefill that the model continues directly.

The text protocol of this package puts the instructions, tools, examples and history inside the
prompt text anyway, so no role markers are needed.

llama-cpp-python is an optional dependency (extra ``local``); it is imported only inside methods,
so ``import react_agent.models`` works without it.
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult

from react_agent._types import FINISH
from react_agent.errors import ConfigError
from react_agent.models._grammar import literal_safe
from react_agent.models.local._catalog import CATALOG, DEFAULT_LOCAL_MODEL, CatalogEntry, catalog_entry
from react_agent.models.local._chat_template import chat_prompt, chat_template
from react_agent.models.local._decoding import (
    branches,
    copied_fields,
    filled_enums,
    grounded_schema,
    named_tools,
    opening_turn,
    relevant_tools,
    should_abstain,
    task_text,
    tool_descriptions,
    ungrounded,
    with_argument_descriptions,
    with_format_patterns,
)
from react_agent.models.local._prefix import PrefixUse, complete
from react_agent.models.local._values import (
    FORM_TECHNIQUES,
    VALUE_TECHNIQUES,
    asked_optionals,
    bounded_lists,
    corrected,
    in_forms,
    kept_optionals,
)
from react_agent.models.local._weights import assembled_path

__all__ = [
    "DEFAULT_MODEL_NAME",
    "LocalChatModel",
    "default_model_path",
    "model_file",
    "render_plain",
    "schema_from_response_format",
]

DEFAULT_MODEL_NAME = DEFAULT_LOCAL_MODEL
"""Short name of the default weights (:data:`react_agent.models.local._catalog.DEFAULT_LOCAL_MODEL`)."""

logger = logging.getLogger(__name__)

_INSTALL_HINT = ("the extra react-agent[local]: run `react-agent setup-local` (builds llama-cpp-python "
                 "portably and installs it with the default weights)")

_PATH_LOCK = threading.Lock()
_paths: dict[str, str] = {}  # catalogue name -> verified GGUF of this process

_CACHE_LOCK = threading.Lock()
# (path, n_ctx, n_threads, seed, verbose) -> (Llama, lock that serialises its use)
_LLAMAS: dict[tuple[str, int, int | None, int, bool], tuple[Any, threading.Lock]] = {}


def _close_all() -> None:
    """Free every cached ``Llama``, each once no call is using it.

    Registered with ``atexit``: a ``Llama`` left for the interpreter's final teardown fails in its
    ``__del__`` ("'NoneType' object is not callable") because llama_cpp's globals are gone by then.
    """
    with _CACHE_LOCK:
        entries = list(_LLAMAS.values())
        _LLAMAS.clear()
    for llama, lock in entries:
        with lock:
            llama.close()


atexit.register(_close_all)


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ImportError(
            f"LocalChatModel needs llama-cpp-python, which is not installed. Install {_INSTALL_HINT}."
        ) from exc
    return llama_cpp


def default_model_path() -> str:
    """Path of the default model's GGUF, joined from its chunk packages and verified on first use
    (:func:`react_agent.models.local._weights.assembled_path`).

    Raises :class:`ConfigError` naming the install command when the weights are not installed.
    """
    return model_file(DEFAULT_LOCAL_MODEL)


def model_file(name: str) -> str:
    """Path of the catalogue model ``name``'s GGUF (joined and verified once per process)."""
    entry = catalog_entry(name)
    with _PATH_LOCK:
        known = _paths.get(entry.name)
        if known is None or not Path(known).is_file():
            known = _paths[entry.name] = str(assembled_path(entry))
        return known


def render_plain(messages: Sequence[BaseMessage]) -> str:
    """Render messages as one plain document for a base model (the module docstring has the rules)."""
    parts = [_text_of(message) for message in messages]
    text = "\n\n".join(parts)
    if messages and isinstance(messages[-1], AIMessage):
        return text
    return text + "\n"


def schema_from_response_format(response_format: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema carried by ``response_format``, ``{}`` for "any JSON", ``None`` for none.

    Accepted shapes: ``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}``
    (OpenAI), ``{"type": "json_object", "schema": {...}}`` (llama-cpp-python),
    ``{"type": "json_object"}`` (any JSON object), ``{"type": "text"}`` / ``None`` (no constraint).
    """
    if response_format is None:
        return None
    if not isinstance(response_format, Mapping):
        raise TypeError(f"response_format must be a dict, got {type(response_format).__name__}")
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("schema"), Mapping):
            raise ValueError(
                'response_format of type "json_schema" needs {"json_schema": {"name": ..., "schema": {...}}}'
            )
        return dict(spec["schema"])
    if kind == "json_object":
        schema = response_format.get("schema")
        if schema is None:
            return {}
        if not isinstance(schema, Mapping):
            raise ValueError('response_format "schema" must be a JSON-schema dict')
        return dict(schema)
    allowed = '"json_schema", "json_object" or "text"'
    raise ValueError(f"unsupported response_format type {kind!r} (use {allowed})")


MAX_ENUM_RANGE = 256
"""Integer ranges with at most this many values are enumerated for the grammar (see :func:`bounded_integers`)."""


def bounded_integers(schema: Any) -> Any:
    """A copy of ``schema`` in which every bounded integer range also lists its values as an ``enum``.

    llama-cpp-python's JSON-schema converter ignores ``minimum``/``maximum`` (and the exclusive
    forms): an integer may get any of up to 16 digits, and a small model that would rather close the
    object than stop a number keeps adding digits (``"limit": 5000000000000000``). An ``enum`` *is*
    enforced, so a ``{"type": "integer", "minimum": 1, "maximum": 100}`` gains ``"enum": [1, ..., 100]``
    and the grammar admits exactly those values. Ranges of more than :data:`MAX_ENUM_RANGE` values,
    and nodes that already have ``enum`` or ``const``, are left as they are.
    """
    if isinstance(schema, list):
        return [bounded_integers(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: bounded_integers(value) for key, value in schema.items()}
    if out.get("type") != "integer" or "enum" in out or "const" in out:
        return out
    low, high = _bound(out, "minimum", "exclusiveMinimum", 1), _bound(out, "maximum", "exclusiveMaximum", -1)
    if low is not None and high is not None and 0 <= high - low < MAX_ENUM_RANGE:
        out["enum"] = list(range(low, high + 1))
    return out


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, step: int) -> int | None:
    """The tightest integer bound of one side of a range (``step`` +1 for a minimum, -1 for a maximum)."""
    candidates: list[int] = []
    value, flag = schema.get(inclusive), schema.get(exclusive)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if flag is True:  # draft 4: a boolean exclusiveMinimum/exclusiveMaximum makes the bound exclusive
            candidates.append(math.floor(value) + 1 if step > 0 else math.ceil(value) - 1)
        else:
            candidates.append(math.ceil(value) if step > 0 else math.floor(value))
    if isinstance(flag, (int, float)) and not isinstance(flag, bool):
        candidates.append(math.floor(flag) + 1 if step > 0 else math.ceil(flag) - 1)
    if not candidates:
        return None
    return max(candidates) if step > 0 else min(candidates)


@lru_cache(maxsize=64)
def _grammar_for(schema_json: str, suffix: str = "") -> Any:
    """The llama.cpp grammar of a JSON schema (integer ranges enumerated), cached; ``suffix``: a literal the
    output must end with after the value (the two-stage answer closes its object this way)."""
    _import_llama_cpp()  # the clear ImportError when the extra is missing
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar, json_schema_to_gbnf

    try:
        if schema_json == "{}":
            text = JSON_GBNF
        else:
            text = json_schema_to_gbnf(json.dumps(literal_safe(bounded_integers(json.loads(schema_json)))))
        if suffix:  # a continued value: an optional leading space (the prompt ends at the colon), then the suffix
            root = f'\nroot ::= " "? stage-root {json.dumps(suffix)}\n'
            text = re.sub(r"(?m)^root ::=", "stage-root ::=", text) + root
        return LlamaGrammar.from_string(text, verbose=False)
    except Exception as exc:  # the converter asserts on schemas it cannot express
        raise ValueError(f"llama.cpp cannot turn this JSON schema into a grammar: {exc}") from exc


def _text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
    return "".join(texts)


def _role_of(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ChatMessage):
        return message.role
    return "user"  # tool/function messages: chat templates rarely know a "tool" role


class LocalChatModel(BaseChatModel):
    """A chat model running a GGUF file in-process with llama-cpp-python (extra ``local``).

    ``model=`` names a catalogue model (:data:`react_agent.models.local._catalog.CATALOG`; ``None``: the default,
    :func:`default_model_path`), whose GGUF is joined from its chunk packages and verified on first use
    (:mod:`react_agent.models.local._weights`); ``model_path=`` runs any GGUF instead. The ``Llama`` object is
    created on the first call and shared by every instance with the same loading parameters; calls
    to one ``Llama`` are serialised by a lock (it is not thread-safe).

    Per call (``invoke(..., **kwargs)`` or ``bind(...)``) it accepts ``stop=[...]``,
    ``response_format=`` (see :func:`schema_from_response_format`), ``grammar=`` (a GBNF string,
    wins over ``response_format``), ``grounding_text=`` (the task and observations that arguments must
    come from, for ``grounding``; by default the prompt after its last turn marker, without the lines a worked
    example shares with it such as ``No history yet``) and overrides of
    ``max_tokens``, ``temperature`` and ``seed``.
    A schema is compiled into a llama.cpp grammar, so the output is guaranteed to match it (unless
    ``max_tokens`` cuts it short: ``response_metadata["finish_reason"] == "length"``).

    The returned ``AIMessage`` has ``usage_metadata`` (input/output/total tokens; ``input_token_details``
    ``cache_read``: the prompt tokens taken from the cached prefix) and ``response_metadata`` with
    ``finish_reason``, ``model_name``, ``prompt_tokens_evaluated`` and ``prompt_tokens_reused`` (summed over
    the answer's completions).
    """

    supports_json_schema: ClassVar[bool] = True
    """Constrained decoding is available: the agent passes ``response_format`` with a JSON schema."""

    model: str | None = None
    """Short name of a catalogue model (``gemma-3-270m``, ``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``:
    :data:`react_agent.models.local._catalog.CATALOG`); ``None``: the default one, unless ``model_path`` is given."""
    model_path: str | None = None
    """Path of any GGUF file (``~`` is expanded); ``None``: the catalogue model ``model``."""
    n_ctx: int = 4096
    """Context window in tokens (prompt + answer)."""
    temperature: float = 0.0
    """0 is greedy decoding (deterministic)."""
    max_tokens: int = 256
    """Upper bound of generated tokens per call."""
    seed: int = 0
    """Sampling seed (matters only with ``temperature > 0``)."""
    n_threads: int | None = None
    """CPU threads; ``None``: llama.cpp's default."""
    verbose: bool = False
    """Let llama.cpp print its loading and timing logs."""
    prompt_format: Literal["auto", "plain", "chat"] = "auto"
    """``auto``: the GGUF's chat template if it has one, else plain text (module docstring)."""
    format_patterns: bool = True
    """Give string arguments that are e-mails, user names, phones or URLs (by ``format`` or by name) a
    ``pattern`` in the grammar (:func:`_decoding.with_format_patterns`)."""
    two_stage: bool = True
    """Decode an agent answer in two stages: ``{"thought", "action"}`` under an enum of the action names, then
    ``action_input`` under that one action's schema, continuing the same text (plain prompt format only)."""
    abstain: bool = True
    """Answer FINISH instead of a call with a required argument whose value is invented (absent from the task
    and history: :func:`_decoding.should_abstain`); the model then writes the answer text."""
    grounding: bool = True
    """After an agent answer, decode the arguments again when a free-text string value (or a list item)
    occurs nowhere in the task and history, with that field restricted to spans of the task text (list of
    numbers: to the numbers in it) (plain prompt format only)."""
    preselect: bool = True
    """Offer the model only the tools whose name and description (as the prompt lists them, ``name -
    description``) share the most content words with the task and history, and FINISH
    (:func:`_decoding.relevant_tools`); every tool when none shares a word, when the prompt lists
    no descriptions or when the task is written in another alphabet than the descriptions."""
    fill_enums: bool = True
    """After an agent answer, set each optional argument the call left out, whose schema is an ``enum`` (or an
    array of one), to the allowed values the task names word for word
    (:func:`_decoding.filled_enums`; plain prompt format only)."""
    abstain_unrelated: bool = True
    """Answer FINISH (the model writes a short answer text) when no tool's name and description shares a
    content word with the task and history: the task asks for something no tool does. Skipped in the cases
    ``preselect`` skips."""

    commit_named: bool = True
    """On the opening turn of a task that names a tool (two content words of its name, "book a room" for
    ``book_room``), FINISH is not offered: a small model otherwise "answers" such a task from its own
    knowledge without acting. The opening turn is told by the empty history the worked examples show too
    (:func:`_decoding.opening_turn`; without worked examples this never acts) and by no tool name
    in the turn (:func:`_decoding.named_tools`); ``abstain`` may still answer FINISH when the
    call's required values are invented; plain prompt format only."""
    retry_cut: bool = True
    """Arguments the token budget cut (a value that ran away: "1000000…", "name_and_season_and_…") are decoded
    once more (with a reserve of tokens) with every free-text, number and list field restricted to the task's
    values, and a FINISH answer text that was cut is closed where it was cut; plain prompt format only."""
    reconsider_finish: bool = False
    """On the opening turn, a FINISH while tools are offered is decoded once more without FINISH; the call then
    goes through grounding and abstaining, which answer FINISH when the task gives no values for it. Off by
    default (measured in the benchmarks page); plain prompt format only."""
    ask_optionals: bool = True
    """After the call is decided, its optional free-text, number and list arguments that it left out are asked
    for once more (the decided arguments fixed, those required) and kept where the task gives them: a value it
    mentions that is no other argument's (:func:`_values.kept_optionals`); plain prompt format
    only."""
    ground_numbers: bool = True
    """With ``grounding``: a number argument the task does not write is decoded again too, restricted to the
    numbers the task writes (a percentage also as its fraction)."""
    anchor_numbers: bool = True
    """A number argument whose name the task writes next to one number takes that number ("decay rate of
    0.1", "for 1 year"; :func:`_values.anchored_numbers`; plain prompt format only)."""
    percent_rates: bool = True
    """A rate/ratio/fraction argument (by name) whose value the task writes as a percentage becomes the
    fraction ("3%" -> 0.03; :func:`_values.percent_rates`); abstaining then accepts the fraction."""
    distinct_values: bool = True
    """Two arguments with the same value that the task writes once: an optional one is dropped, a required one
    is decoded again without that value, the pair in the order the task names the values
    (:func:`_values.shared_values`)."""
    named_enums: bool = True
    """An ``enum`` argument of the call takes the values the task names: a list of an enum the named values in
    the task's order, a single value the one named value (:func:`_values.named_enums`)."""
    bounded_lists: bool = True
    """Lists get a ``maxItems`` in the grammar (the enum's size, the numbers the task writes, the items it
    lists) and lose items they repeat when the task does not (:func:`_values.bounded_lists`)."""
    omit_unmentioned: bool = True
    """Optional arguments whose value the task never mentions are left out (the tool's default applies;
    :func:`_values.omitted_unmentioned`)."""
    sibling_order: bool = True
    """Numbered sibling arguments (``place1``/``place2``, ``pointA``/``pointB``) with string values the task names
    take them in the order the task names them (:func:`_values.sibling_order`)."""
    whole_names: bool = True
    """A free-text value the task writes as the start of a longer capitalised name grows to the whole name
    ("Gibson" -> "Gibson Les Paul"; :func:`_values.whole_names`)."""
    implied_options: bool = True
    """Optional arguments the call left out but the task asks for in words are added: a boolean whose name's
    words the task writes (not after a negation) is true, a string whose description quotes its values takes
    the one quoted value the task names (:func:`_values.implied_options`)."""
    clean_spans: bool = True
    """With ``grounding`` and ``abstain``: a free-text value that is a piece of the question's syntax (a lower-case
    function word alone, a span that ends with one or begins with one: "size of the sculpture with", "in
    London"; :func:`_decoding.is_fragment`) is decoded again like an invented one, among the task's
    spans that are no such pieces and no other argument's value, and abstaining counts it as invented."""
    whole_spans: bool = True
    """A free-text value grows to the capitalised name it ends ("Carlsen" -> "Magnus Carlsen") and to the quoted
    title it starts, and loses a lower-case article ("the theory of evolution";
    :func:`_spans.whole_spans`)."""
    nested_spans: bool = True
    """A short free-text value that holds another argument's value at one end and more words is cut to those
    words when the task writes them ("David by Michelangelo" beside ``title`` "David" -> "Michelangelo", "2021
    La Liga" beside ``league`` "La Liga" -> "2021"; not a capitalised name, not a comma-joined value;
    :func:`_spans.nested_spans`)."""
    listed_values: bool = True
    """A free-text argument whose description lists its values ("Can be 'summary' or 'detailed'", "i.e., victim,
    accused") takes the one listed value the task names ("detail" -> "detailed";
    :func:`_spans.listed_values`); applied after abstaining."""
    unit_numbers: bool = True
    """A number argument whose description names a unit ("in farads (F)", "in seconds") and whose value the task
    writes with another unit of that kind ("100µF", "3 minutes") is converted (0.0001, 180;
    :func:`_forms.unit_numbers`); applied after abstaining."""
    date_formats: bool = True
    """A date value is written in the format the argument's description spells ("Format: yyyy-mm-dd") or its
    schema's ``"format": "date"`` asks for ("March 11, 2022" -> "2022-03-11";
    :func:`_forms.date_formats`); applied after abstaining."""

    def __init__(self, **data: Any) -> None:
        for name in TECHNIQUES:
            if name in data and not isinstance(data[name], bool):
                raise ConfigError(f"LocalChatModel({name}=...) takes True or False, got "
                                  f"{type(data[name]).__name__} {data[name]!r}; pass {name}=True or {name}=False")
        if data.get("model") is not None:
            if data.get("model_path") is not None:
                raise ConfigError("LocalChatModel takes model= (a catalogue name) or model_path= (a GGUF file), "
                                  "not both")
            data["model"] = catalog_entry(data["model"]).name
        super().__init__(**data)

    @property
    def catalog_entry(self) -> CatalogEntry | None:
        """The catalogue entry of the weights, ``None`` for a ``model_path`` of your own."""
        return None if self.model_path is not None else CATALOG[self.model or DEFAULT_LOCAL_MODEL]

    @property
    def _values(self) -> frozenset[str]:
        """The value techniques switched on (:data:`VALUE_TECHNIQUES`)."""
        return frozenset(name for name in VALUE_TECHNIQUES if getattr(self, name))

    @property
    def _llm_type(self) -> str:
        return "react-agent-llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path or self.model_name,
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "prompt_format": self.prompt_format,
        }

    @property
    def model_name(self) -> str:
        """The catalogue name of the weights, or the file stem of ``model_path``."""
        return Path(self.model_path).stem if self.model_path else (self.model or DEFAULT_LOCAL_MODEL)

    @classmethod
    def clear_cache(cls) -> None:
        """Free every loaded ``Llama`` (waits for a running call on it to end)."""
        _close_all()

    def _client(self) -> tuple[Any, threading.Lock]:
        """The shared ``Llama`` for this configuration and its lock, loading it on first use."""
        llama_cpp = _import_llama_cpp()
        path = Path(self.model_path).expanduser() if self.model_path is not None \
            else Path(model_file(self.model or DEFAULT_LOCAL_MODEL))
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model file not found: {path}")
        key = (str(path.resolve()), self.n_ctx, self.n_threads, self.seed, self.verbose)
        with _CACHE_LOCK:
            entry = _LLAMAS.get(key)
            if entry is None:
                llama = llama_cpp.Llama(
                    model_path=key[0],
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=self.verbose,
                )
                entry = (llama, threading.Lock())
                _LLAMAS[key] = entry
            return entry

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        response_format = kwargs.pop("response_format", None)
        grammar_text = kwargs.pop("grammar", None)
        max_tokens = int(kwargs.pop("max_tokens", self.max_tokens))
        temperature = float(kwargs.pop("temperature", self.temperature))
        seed = int(kwargs.pop("seed", self.seed))
        grounding_text = kwargs.pop("grounding_text", None)
        if grounding_text is not None and not isinstance(grounding_text, str):
            raise TypeError("grounding_text must be a string (the task and the observations so far)")
        if kwargs:
            raise TypeError(f"LocalChatModel got unsupported call options: {sorted(kwargs)}")

        grammar: Any = None
        schema: dict[str, Any] | None = None
        if grammar_text is not None:
            if not isinstance(grammar_text, str):
                raise TypeError("grammar must be a GBNF string")
            _import_llama_cpp()
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
        else:
            schema = schema_from_response_format(response_format)
            if schema is not None and self.format_patterns:
                schema = with_format_patterns(schema)

        llama, lock = self._client()
        options: dict[str, Any] = {"temperature": temperature, "seed": seed, "stop": list(stop or [])}
        template = chat_template(llama)
        if self.prompt_format == "chat" and template is None:
            raise ConfigError(f"LocalChatModel(prompt_format='chat'): {self.model_name} has no chat template in its "
                              "GGUF; use prompt_format='plain' or 'auto'")
        use_chat = template is not None and self.prompt_format != "plain"
        prompt = chat_prompt(llama, template, [(_role_of(m), _text_of(m)) for m in messages]) \
            if use_chat and template is not None else render_plain(messages)
        techniques = (self.two_stage or self.grounding or self.abstain or self.preselect or self.abstain_unrelated
                      or self.fill_enums or self.commit_named or bool(self._values))
        staged = grammar is None and schema is not None and techniques and branches(schema) is not None
        with lock:
            if staged:
                assert schema is not None
                calls = _Calls(llama, options, max_tokens)
                text = _staged_answer(calls, prompt, schema, two_stage=self.two_stage,
                                      grounding=self.grounding, abstain=self.abstain,
                                      source=grounding_text if grounding_text is not None or not use_chat
                                      else task_text(render_plain(messages)),  # without the template's markup
                                      preselect=self.preselect, abstain_unrelated=self.abstain_unrelated,
                                      fill_enums=self.fill_enums, commit_named=self.commit_named,
                                      retry_cut=self.retry_cut, reconsider_finish=self.reconsider_finish,
                                      ask_optionals=self.ask_optionals,
                                      values=self._values)
                input_tokens, output_tokens, finish_reason = calls.prompt_tokens, calls.completion_tokens, calls.finish
                use = calls.use
            else:
                if schema is not None:
                    grammar = _grammar_for(json.dumps(schema, sort_keys=False))
                options.update(max_tokens=max_tokens, grammar=grammar)
                response, use = complete(llama, prompt, **options)
                choice = response["choices"][0]
                text = choice["text"]
                usage = response.get("usage") or {}
                input_tokens = int(usage.get("prompt_tokens", 0))
                output_tokens = int(usage.get("completion_tokens", 0))
                finish_reason = choice.get("finish_reason")

        # a cast: mypy (target 3.10) misreads the NotRequired keys of UsageMetadata
        usage_metadata = cast(
            "UsageMetadata",
            {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
                "input_token_details": {"cache_read": use.reused},
            },
        )
        message = AIMessage(
            content=text,
            usage_metadata=usage_metadata,
            response_metadata={"finish_reason": finish_reason, "model_name": self.model_name,
                               "prompt_tokens_evaluated": use.evaluated, "prompt_tokens_reused": use.reused},
        )
        return ChatResult(
            generations=[ChatGeneration(message=message, generation_info={"finish_reason": finish_reason})],
            llm_output={
                "token_usage": {
                    "prompt_tokens": input_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": input_tokens + output_tokens,
                },
                "model_name": self.model_name,
            },
        )


class _Calls:
    """Completions of one answer made of several llama.cpp calls: the token counts add up, the
    ``max_tokens`` budget is shared, and the finish reason is ``"length"`` if any call was cut. A ``spare``
    completion (one the answer does without: optional arguments asked for) uses only what is left of the
    budget, is not made when nothing is, and its cut does not cut the answer."""

    def __init__(self, llama: Any, options: dict[str, Any], max_tokens: int) -> None:
        self.llama, self.options, self.budget = llama, options, max_tokens
        self.prompt_tokens = self.completion_tokens = 0
        self.use = PrefixUse()
        self.finish: str | None = "stop"

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "",
                 stop: Sequence[str] = (), min_tokens: int = 1, spare: bool = False) -> str:
        left = self.budget - self.completion_tokens
        if spare and left < _SPARE_TOKENS:
            return ""
        grammar = _grammar_for(json.dumps(schema, sort_keys=False), suffix)
        remaining = left if spare else max(min_tokens, left)
        options = {**self.options, "stop": [*self.options.get("stop", []), *stop]}
        response, use = complete(self.llama, prompt, grammar=grammar, max_tokens=remaining, **options)
        self.use += use
        usage = response.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.completion_tokens += int(usage.get("completion_tokens", 0))
        choice = response["choices"][0]
        if choice.get("finish_reason") == "length" and not spare:
            self.finish = "length"
        return str(choice["text"])


_SPARE_TOKENS = 24
"""Budget a spare completion needs left before it is made (the decided arguments are written again in it)."""


TECHNIQUES = ("format_patterns", "two_stage", "grounding", "abstain", "preselect", "abstain_unrelated", "fill_enums",
              "commit_named", "retry_cut", "reconsider_finish", "ask_optionals", *VALUE_TECHNIQUES)
"""Every on/off technique option of ``LocalChatModel``."""

_ARGS_KEY = '"action_input"'
_ABSTAIN_ANSWER_LENGTH = 160
_THOUGHT = re.compile(r'"thought"\s*:\s*("(?:[^"\\]|\\.)*")')
_ACTION = re.compile(r'"action"\s*:\s*("(?:[^"\\]|\\.)*")')


def _offered(prompt: str, schema: Mapping[str, Any], source: str, *, preselect: bool,
             abstain_unrelated: bool) -> tuple[Mapping[str, Any], bool]:
    """The answer schema with only the actions to offer (:func:`_decoding.relevant_tools`), and
    whether only FINISH is left (no tool is related to the task)."""
    names = [name for name in branches(schema) or {} if name != FINISH]
    kept = relevant_tools(tool_descriptions(prompt, names, arguments=True), source)
    if kept is None or (kept and not preselect) or (not kept and not abstain_unrelated) or len(kept) == len(names):
        return schema, False
    if not kept and FINISH not in (branches(schema) or {}):
        return schema, False
    allowed = {*kept, FINISH}
    logger.debug("offering the actions %s of %s (the others share fewer words with the task)", sorted(allowed), names)
    options = [b for b in schema["anyOf"] if b["properties"]["action"]["const"] in allowed]
    return {**schema, "anyOf": options}, not kept


def _staged_answer(complete: Callable[..., str], prompt: str, schema: Mapping[str, Any], *,
                   two_stage: bool, grounding: bool, abstain: bool = False, source: str | None = None,
                   preselect: bool = False, abstain_unrelated: bool = False, fill_enums: bool = False,
                   commit_named: bool = False, retry_cut: bool = False, reconsider_finish: bool = False,
                   ask_optionals: bool = False, values: frozenset[str] = frozenset()) -> str:
    """One agent answer under an answer schema, decoded in two stages and/or with grounded arguments.

    ``complete(prompt, schema, suffix=..., stop=...)`` is one constrained completion. Two stages: first the
    answer up to its ``"action_input"`` key (the whole answer schema, stopped there: the thought and the
    action name, written as the model writes them), then the text goes on with ``"action_input":`` and the
    arguments under that one action's schema (an optional space first: a prompt that ends in a space makes
    the model start its value with an unusual token), followed by the closing ``}``. Grounding: when a free-text
    argument does not occur in the task and history (:func:`_decoding.ungrounded`), the
    arguments are decoded once more after the same prefix, each suspect field restricted to spans of the
    task. Abstaining: when a required argument is still invented
    (:func:`_decoding.should_abstain`), the answer becomes FINISH after the same thought, with
    an answer text the model writes. ``source`` is the text the arguments must come from; ``None``: the
    prompt after its last turn marker without the template's own lines (:func:`_decoding.task_text`).
    A reply that cannot
    be read at any point is returned as it is (a cut reply stays cut). Preselection (``preselect``,
    ``abstain_unrelated``): the actions offered at all are the tools most related to the task (:func:`_offered`);
    when that leaves only FINISH, its answer text is as short as an abstaining one. ``fill_enums``: optional
    ``enum`` arguments the task names are added at the end (:func:`_decoding.filled_enums`).
    ``commit_named``: on the opening turn (:func:`_decoding.opening_turn`) of a task that names a
    tool (:func:`_decoding.named_tools`), the model may not choose FINISH; abstaining still may.
    ``retry_cut``: arguments cut by the token budget (a value that ran away, "1000000…") are decoded once more
    with every copied field (:func:`_decoding.copied_fields`) restricted to the task's values, and
    a cut answer text of FINISH is closed where it was cut. ``reconsider_finish``: on the opening turn, a
    FINISH while tools are offered is decoded once more without FINISH, and the call goes through grounding and
    abstaining, which answers FINISH when the task gives no values for it. ``ask_optionals``: the call's
    optional free-text, number and list arguments it left out are asked for once more (every decided argument
    fixed, those required) and kept where the task gives them (:func:`_values.kept_optionals`).
    The ``complete`` of ``ask_optionals`` is ``spare`` (``complete(..., spare=True)``): made only while the
    budget lasts, and its cut does not cut the answer (:class:`_Calls`).
    ``values``: the argument-value techniques switched on (:data:`VALUE_TECHNIQUES`): ``bounded_lists``
    bounds the lists of every action's schema, ``ground_numbers`` adds invented numbers to grounding's
    suspects, and the others correct the arguments after grounding and before abstaining (:func:`_corrected`).
    """
    asked = task_text(prompt) if source is None else source  # the task alone, without the template's lines
    if retry_cut:
        complete = _uncut(complete, asked, clean="clean_spans" in values)
    unrelated = False
    every = [name for name in branches(schema) or {} if name != FINISH]
    if preselect or abstain_unrelated:
        schema, unrelated = _offered(prompt, schema, asked, preselect=preselect, abstain_unrelated=abstain_unrelated)
    source = asked  # what the arguments must come from: the task and observations, not the template's lines
    if "bounded_lists" in values:
        schema = bounded_lists(schema, asked)
    actions = branches(schema) or {}
    if unrelated:
        actions[FINISH] = {**actions[FINISH], "maxLength": _ABSTAIN_ANSWER_LENGTH}
    if isinstance(schema.get("$defs"), Mapping):  # hoisted recursive definitions: every stage needs them
        actions = {name: {**args, "$defs": schema["$defs"]} for name, args in actions.items()}
    if commit_named and not unrelated and FINISH in actions and opening_turn(prompt) \
            and set(named_tools(every, asked)) & set(actions):
        logger.debug("the task names a tool it has not called yet: FINISH is not offered")
        schema = _without_finish(schema)
    if two_stage:
        head = complete(prompt, schema, stop=[_ARGS_KEY])
        found = _ACTION.search(head)
        action = _json_or_none(found.group(1)) if found else None
        if action == FINISH and reconsider_finish and not unrelated and opening_turn(prompt) \
                and len(actions) > 1 and FINISH in (branches(schema) or {}):
            logger.debug("FINISH on the opening turn while tools are offered: deciding again without it")
            head = complete(prompt, _without_finish(schema), stop=[_ARGS_KEY])
            found = _ACTION.search(head)
            action = _json_or_none(found.group(1)) if found else None
        if action not in actions or head.rstrip().endswith("}"):
            return head
        thought_match = _THOUGHT.search(head)
        thought = _json_or_none(thought_match.group(1)) if thought_match else ""
        thought = thought if isinstance(thought, str) else ""
        prefix = head + _ARGS_KEY + ":"
        reserve = _ABSTAIN_ANSWER_TOKENS if unrelated else 1
        body = complete(prompt + prefix, actions[action], suffix="}", min_tokens=reserve)
    else:
        text = complete(prompt, schema)
        if not (grounding or abstain or fill_enums or values):
            return text
        try:
            decided = json.loads(text, strict=False)
            action, thought = decided["action"], decided.get("thought", "")
            body = json.dumps(decided["action_input"], ensure_ascii=False) + "}"
        except (ValueError, KeyError, TypeError, AttributeError):
            return text
        if action not in actions or action == FINISH:
            return text
        prefix = "{" + "".join(f"{json.dumps(k)}: {json.dumps(decided[k], ensure_ascii=False)}, "
                               for k in decided if k != "action_input") + _ARGS_KEY + ":"
    changed = two_stage
    # the argument descriptions the prompt lists, for the value techniques (llama.cpp's schema has lost them)
    described = with_argument_descriptions(actions[action], prompt, action) if values and action != FINISH \
        else actions[action]
    args: Any = None
    if action != FINISH and (grounding or abstain or values):
        args = _json_or_none(body.rstrip()[:-1])
        clean = "clean_spans" in values
        suspects = ungrounded(args, actions[action], source, numbers="ground_numbers" in values,
                              fragments=clean) if grounding else []
        taken = [v for k, v in args.items() if k not in suspects and isinstance(v, str)] \
            if clean and isinstance(args, dict) else []
        retry = grounded_schema(actions[action], suspects, source, clean=clean, taken=taken) if suspects else None
        if retry is not None and retry != actions[action]:  # no value of the task fits: decoding again changes nothing
            logger.debug("arguments %s of %s do not occur in the task; decoding them again", suspects, action)
            body = complete(prompt + prefix, retry, suffix="}")
            args, changed = _json_or_none(body.rstrip()[:-1]), True
        if values and isinstance(args, dict):
            corrected = _corrected(complete, prompt + prefix, args, described, source, values)
            if corrected != args:
                logger.debug("arguments of %s corrected from the task: %s -> %s", action, args, corrected)
                args, body, changed = corrected, json.dumps(corrected, ensure_ascii=False) + "}", True
        if abstain and FINISH in actions and should_abstain(args, actions[action], source,
                                                            percent="percent_rates" in values, fragments=clean):
            logger.debug("the task gives no values for %s's arguments: answering FINISH instead", action)
            said = json.dumps(thought, ensure_ascii=False)
            finish = "{" + f'"thought": {said}, "action": "{FINISH}", {_ARGS_KEY}:'
            short = {**actions[FINISH], "maxLength": _ABSTAIN_ANSWER_LENGTH}  # a refusal; unbounded, it rambles
            answer = finish + complete(prompt + finish, short, suffix="}", min_tokens=_ABSTAIN_ANSWER_TOKENS)
            if _json_or_none(answer) is None:  # cut by the token budget after all: close the answer text
                answer = finish + _closed_text(answer[len(finish):])
            return answer
    if ask_optionals and action != FINISH:
        decided = args if isinstance(args, dict) else _json_or_none(body.rstrip()[:-1])
        asked_for = asked_optionals(decided, actions[action]) if isinstance(decided, dict) else []
        if asked_for:
            fixed = {k: {"const": v} for k, v in decided.items()}
            props = actions[action]["properties"]
            ask = {"type": "object", "properties": {**fixed, **{n: props[n] for n in asked_for}},
                   "required": [*fixed, *asked_for], "additionalProperties": False}
            filled = _json_or_none(complete(prompt + prefix, ask, suffix="}", spare=True).rstrip()[:-1])
            kept = kept_optionals(decided, filled, described, source)
            if kept != decided:
                logger.debug("optional arguments %s of %s are given by the task", sorted(set(kept) - set(decided)),
                             action)
                args, body, changed = kept, json.dumps(kept, ensure_ascii=False) + "}", True
    if values & set(FORM_TECHNIQUES) and action != FINISH and isinstance(args, dict):  # args: as decided above
        formed = in_forms(args, described, source, values)
        if formed != args:
            logger.debug("arguments of %s written in the described forms: %s -> %s", action, args, formed)
            body, changed = json.dumps(formed, ensure_ascii=False) + "}", True
    if fill_enums and action != FINISH:
        filled = filled_enums(_json_or_none(body.rstrip()[:-1]), actions[action], asked)
        if filled is not None:
            logger.debug("optional arguments %s of %s are named by the task", sorted(set(filled)), action)
            body, changed = json.dumps(filled, ensure_ascii=False) + "}", True
    return prefix + body if changed else text


def _without_finish(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {**schema, "anyOf": [b for b in schema["anyOf"] if b["properties"]["action"]["const"] != FINISH]}


def _closed_text(body: str) -> str:
    """An answer text (the JSON string after ``"action_input":`` and the closing ``}``) cut by the token budget,
    closed where it was cut."""
    text = body.strip().removeprefix('"').rstrip("}").rstrip('"').rstrip("\\")
    value = _json_or_none('"' + text + '"')
    return " " + json.dumps(value if isinstance(value, str) else text, ensure_ascii=False) + "}"


_CUT_RETRY_TOKENS = 96
"""Tokens the arguments decoded again after a cut may use even when the call's budget is spent."""


def _uncut(complete: Callable[..., str], source: str, *, clean: bool) -> Callable[..., str]:
    """``complete`` whose arguments (a completion with ``suffix="}"``: the text after ``"action_input":``) are
    made whole when the token budget cuts them: a FINISH answer text (a string schema) is closed where it was
    cut; a call's arguments (an object schema) are decoded again with their copied fields restricted to the
    values of ``source`` (:func:`_decoding.copied_fields`, :func:`_decoding.grounded_schema`),
    which ends a value that ran away ("1000000…"); they stay cut when that is cut too."""

    def whole(prompt: str, schema: Mapping[str, Any], *, suffix: str = "", stop: Sequence[str] = (),
              min_tokens: int = 1, spare: bool = False) -> str:
        if spare:  # an answer that does without it: a cut one is dropped, not made whole
            return str(complete(prompt, schema, suffix=suffix, stop=stop, min_tokens=min_tokens, spare=True))
        text = complete(prompt, schema, suffix=suffix, stop=stop, min_tokens=min_tokens)
        if suffix != "}" or _json_or_none(text.rstrip()[:-1]) is not None:  # the grammar holds: only a cut fails
            return text
        if schema.get("type") == "string":
            return _closed_text(text)
        if not isinstance(schema.get("properties"), Mapping):
            return text
        logger.debug("arguments cut by the token budget; decoding them again among the task's values")
        retry = grounded_schema(schema, copied_fields(schema), source, clean=clean)
        again = complete(prompt, retry, suffix=suffix, stop=stop, min_tokens=_CUT_RETRY_TOKENS)
        return again if _json_or_none(again.rstrip()[:-1]) is not None else text

    return whole


def _corrected(complete: Callable[..., str], prompt: str, args: dict[str, Any], schema: Mapping[str, Any],
               source: str, values: frozenset[str]) -> dict[str, Any]:
    """``args`` corrected by the value techniques in ``values`` (:func:`_values.corrected`); a
    required argument that copies a sibling's value is decoded again after ``prompt`` (the text up to
    ``"action_input":``) under :func:`_values.distinct_schema`."""

    def redecode(retry: Mapping[str, Any]) -> Any:
        return _json_or_none(complete(prompt, retry, suffix="}").rstrip()[:-1])

    return corrected(args, schema, source, values, redecode=redecode)


_ABSTAIN_ANSWER_TOKENS = 80
"""Tokens the abstaining answer may use even when the call's budget is spent (160 characters fit)."""


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text, strict=False)  # a raw control character inside a string: the grammar allows it
    except ValueError:
        return None
