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
import os
import re
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult

from react_agent._prompts import fewshot_macros, task_language
from react_agent._types import CallContext
from react_agent.errors import ConfigError
from react_agent.models._grammar import literal_safe
from react_agent.models.local._catalog import CATALOG, DEFAULT_LOCAL_MODEL, CatalogEntry, catalog_entry
from react_agent.models.local._chat_template import chat_prompt, chat_template
from react_agent.models.local._gguf import metadata_string
from react_agent.models.local._logs import route_llama_logs
from react_agent.models.local._pipeline import (
    DEFAULT_TECHNIQUES,
    REMOVED_TECHNIQUES,
    TECHNIQUES,
    Step,
    Technique,
    after_decoding,
    branches,
    select,
)
from react_agent.models.local._prefix import PrefixUse, can_begin, complete, prompt_tokens, window
from react_agent.models.local._staged import answered, finished, prepared
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


@lru_cache(maxsize=32)
def _file_has_chat_template(path: str) -> bool:
    """Whether the GGUF at ``path`` has a chat template (read from its metadata in Python; a file that is not a
    GGUF has none)."""
    return bool(metadata_string(path, "tokenizer.chat_template"))


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


@lru_cache(maxsize=64)
def _grammar_for(schema_json: str, suffix: str = "") -> str:
    """The llama.cpp grammar (GBNF text) of a JSON schema, cached; ``suffix``: a literal the
    output must end with after the value (the two-stage answer closes its object this way)."""
    _import_llama_cpp()  # the clear ImportError when the extra is missing
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    try:
        if schema_json == "{}":
            text = JSON_GBNF
        else:
            text = json_schema_to_gbnf(json.dumps(literal_safe(json.loads(schema_json))))
        if suffix:  # a continued value: an optional leading space (the prompt ends at the colon), then the suffix
            root = f'\nroot ::= " "? stage-root {json.dumps(suffix)}\n'
            text = re.sub(r"(?m)^root ::=", "stage-root ::=", text) + root
        return text
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


def checked_count(option: str, value: Any, hint: str = "") -> int:
    """``value`` of the option ``option`` (``n_ctx``, ``max_tokens``, ``n_threads``) when it is a whole number >= 1;
    else a :class:`ConfigError` naming the fix, ``hint`` added (llama.cpp reads 0 as "no limit" or "the model's own
    size")."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"LocalChatModel({option}={value!r}): give a whole number >= 1{hint}")
    return value


def checked_temperature(value: Any) -> float:
    """``value`` as a temperature (a finite number >= 0; 0 is greedy decoding); else a :class:`ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"LocalChatModel(temperature={value!r}): give a number >= 0 (0: greedy decoding)")
    return float(value)


def checked_seed(value: Any) -> int:
    """``value`` as a llama.cpp seed (a whole number from -1, a random seed, to 2**32 - 1); else a
    :class:`ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value < 2**32:
        raise ConfigError(f"LocalChatModel(seed={value!r}): give a whole number from 0 to 2**32 - 1 (-1: random)")
    return value


def checked_path(option: str, value: Any, fix: str) -> str:
    """``value`` of the path option ``option`` as a string when it is a non-blank ``str`` or ``os.PathLike``; else a
    :class:`ConfigError` saying ``fix``."""
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ConfigError(f"LocalChatModel({option}={value!r}): {fix}")
    return os.fspath(value)


class LocalChatModel(BaseChatModel):
    """A chat model running a GGUF file in-process with llama-cpp-python (extra ``local``).

    ``model=`` names a catalogue model (:data:`react_agent.models.local._catalog.CATALOG`; ``None``: the default,
    :func:`default_model_path`), whose GGUF is joined from its chunk packages and verified on first use
    (:mod:`react_agent.models.local._weights`); ``model_path=`` runs any GGUF instead. The ``Llama`` object is
    created on the first call and shared by every instance with the same loading parameters; calls
    to one ``Llama`` are serialised by a lock (it is not thread-safe).

    Per call (``invoke(..., **kwargs)`` or ``bind(...)``) it accepts ``stop=[...]``,
    ``response_format=`` (see :func:`schema_from_response_format`), ``grammar=`` (a GBNF string,
    wins over ``response_format``), ``react_agent_call=`` (the :class:`~react_agent._types.CallContext` an
    agent passes: the task, observations and tools its techniques read) and overrides of
    ``max_tokens``, ``temperature`` and ``seed``. The decoding techniques (``techniques=``) are the pipeline of
    :mod:`._pipeline`.
    A schema is compiled into a llama.cpp grammar, so the output is guaranteed to match it (unless
    ``max_tokens`` cuts it short: ``response_metadata["finish_reason"] == "length"``).

    The returned ``AIMessage`` has ``usage_metadata`` (input/output/total tokens; ``input_token_details``
    ``cache_read``: the prompt tokens taken from the cached prefix) and ``response_metadata`` with
    ``finish_reason``, ``model_name``, ``prompt_tokens_evaluated`` and ``prompt_tokens_reused`` (summed over
    the answer's completions).
    """

    supports_json_schema: ClassVar[bool] = True
    """Constrained decoding is available: the agent passes ``response_format`` with a JSON schema."""
    accepts_call_context: ClassVar[bool] = True
    """The agent passes the task, observations and tools of each decision as ``react_agent_call``."""

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
    """CPU threads of decoding; ``None``: llama-cpp-python's default (half the logical CPUs; prompts are evaluated
    on all of them). More threads decode faster alone but collapse when two processes decode at once: llama.cpp's
    threads spin while they wait for each other (docs/local-models.md has the measurement)."""
    verbose: bool = False
    """Let llama.cpp print its loading and timing logs on stderr; otherwise they go to the logger
    ``react_agent.models.local.llama_cpp`` at DEBUG."""
    prompt_format: Literal["auto", "plain", "chat"] = "auto"
    """``auto``: the GGUF's chat template if it has one, else plain text (module docstring)."""
    techniques: tuple[str, ...] = DEFAULT_TECHNIQUES
    """The decoding techniques to use, by name (:data:`_pipeline.DEFAULT_TECHNIQUES`: all but ``fit_check``); they
    run in the pipeline's order whatever the order given. ``()`` decodes with the plain answer schema."""
    prompt_cache_dir: str | None = None
    """A folder where the static part of an agent's prompt (what comes before the task: instructions, tools, worked
    examples) is kept once evaluated, when it is 256 tokens or more, for later processes of the same model: their
    first step evaluates only what is new (``react-agent`` commands use :func:`default_prompt_cache_dir`); ``None``:
    this process's memory only."""

    def __init__(self, **data: Any) -> None:
        removed = sorted(set(data) & (REMOVED_TECHNIQUES | _TECHNIQUE_FLAGS))
        if removed:
            raise ConfigError(
                f"LocalChatModel({', '.join(f'{n}=...' for n in removed)}): these options were removed; the decoding "
                f"techniques are chosen by techniques=[...] (any of: {', '.join(TECHNIQUES)}); the "
                "benchmark-tuned value rules are gone because they changed correct calls (see the changelog)")
        if "techniques" in data:
            data["techniques"] = tuple(t.name for t in select(data["techniques"]))
        if data.get("prompt_cache_dir") is not None:
            folder = checked_path("prompt_cache_dir", data["prompt_cache_dir"],
                                  "give a folder path, or None to keep evaluated prompts in memory only")
            data["prompt_cache_dir"] = str(Path(folder).expanduser())
        if data.get("model_path") is not None:
            data["model_path"] = checked_path("model_path", data["model_path"],
                                              "give the path of a GGUF file, or leave it out for the catalogue model "
                                              "model=")
        for option in ("n_ctx", "max_tokens"):
            if option in data:
                checked_count(option, data[option])
        if data.get("n_threads") is not None:
            checked_count("n_threads", data["n_threads"], " threads, or None for llama-cpp-python's default")
        if "temperature" in data:
            checked_temperature(data["temperature"])
        if "seed" in data:
            checked_seed(data["seed"])
        if "verbose" in data and not isinstance(data["verbose"], bool):
            raise ConfigError(f"LocalChatModel(verbose={data['verbose']!r}): give True or False")
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
    def agent_profile(self) -> str:
        """``"compact"``: an agent given no ``prompts=`` uses the language's compact prompt set, and one given no
        ``examples=`` the worked examples ``examples_for_tools`` makes from its tools' schemas (a small model
        copies examples); ``"chat"`` when the model is prompted through its chat template: the same, with the
        decisions laid out as chat turns (``history_layout="messages"``), the form instruct models are tuned on."""
        return "chat" if self.uses_chat_template else "compact"

    @property
    def uses_chat_template(self) -> bool:
        """Whether prompts go through the GGUF's chat template (``prompt_format``; ``auto``: the catalogue's entry,
        or for a ``model_path`` whether the file has a template, read from its metadata without the weights)."""
        if self.prompt_format != "auto":
            return self.prompt_format == "chat"
        entry = self.catalog_entry
        if entry is not None:
            return entry.prompt_format == "chat"
        return _file_has_chat_template(str(Path(self.model_path or "").expanduser()))

    @property
    def _pipeline(self) -> tuple[Technique, ...]:
        return select(self.techniques)

    def decoding_schema(self, schema: Mapping[str, Any], context: CallContext) -> dict[str, Any]:
        """The answer ``schema`` as this model's grammar stage leaves it for ``context`` (what the grammar is built
        from; ``bench.bfcl --oracle`` checks that it admits correct calls)."""
        return dict(prepared(self._pipeline, schema, context).schema or {})

    def after_decoding(self, answer: Mapping[str, Any], context: CallContext) -> Mapping[str, Any] | None:
        """``answer`` (a decoded ``{"thought", "action", "action_input"}``) after this model's after-decoding
        techniques: what a decision goes through once decoded (``bench.bfcl --oracle`` feeds it correct calls).
        ``None`` when they reject it: the model would decide again without that tool."""
        return after_decoding(self._pipeline, answer, context)

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

    def get_token_ids(self, text: str) -> list[int]:
        """The model's own tokens of ``text`` (what LangChain's ``get_num_tokens`` counts); loads the model."""
        llama, _ = self._client()
        return [int(t) for t in llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)]

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
        route_llama_logs(llama_cpp, verbose=self.verbose)  # llama.cpp's lines to logging, not the terminal
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
        max_tokens = checked_count("max_tokens", kwargs.pop("max_tokens", self.max_tokens))
        temperature = checked_temperature(kwargs.pop("temperature", self.temperature))
        seed = checked_seed(kwargs.pop("seed", self.seed))
        context = kwargs.pop("react_agent_call", None)
        if context is None:
            context = CallContext()
        elif not isinstance(context, CallContext):
            raise TypeError(f"react_agent_call must be a react_agent CallContext, got {type(context).__name__}")
        if kwargs:
            raise TypeError(f"LocalChatModel got unsupported call options: {sorted(kwargs)}")

        pipeline = self._pipeline
        grammar: str | None = None
        step = Step(schema=None)
        if grammar_text is not None:
            if not isinstance(grammar_text, str):
                raise TypeError("grammar must be a GBNF string")
            _import_llama_cpp()
            grammar = grammar_text
        else:
            step = prepared(pipeline, schema_from_response_format(response_format), context)
        schema = None if step.schema is None else dict(step.schema)

        llama, lock = self._client()
        options: dict[str, Any] = {"temperature": temperature, "seed": seed, "stop": list(stop or [])}
        template = chat_template(llama)
        if self.prompt_format == "chat" and template is None:
            raise ConfigError(f"LocalChatModel(prompt_format='chat'): {self.model_name} has no chat template in its "
                              "GGUF; use prompt_format='plain' or 'auto'")
        use_chat = template is not None and self.prompt_format != "plain"
        turns = [(_role_of(m), _text_of(m)) for m in messages]
        prompt = chat_prompt(llama, template, turns) if use_chat and template is not None else render_plain(messages)

        def again(rejected: Sequence[tuple[str, str, tuple[str, ...]]]) -> str:
            """The prompt once more, each rejected answer followed by a note of what it lacks."""
            extra = [turn for answer, action, paths in rejected
                     for turn in (("assistant", answer), ("user", rejected_note(action, paths, context.task)))]
            if use_chat and template is not None:
                return chat_prompt(llama, template, [*turns, *extra])
            return render_plain([*messages, *(AIMessage(content=text) if role == "assistant"
                                              else HumanMessage(content=text) for role, text in extra)])
        def judge(action: str) -> tuple[str, str, str]:
            """The chat once more, then the question whether ``action`` does what the task asks (answer begun)."""
            macros = fewshot_macros(task_language(context.task))
            asked = [("user", str(macros.fit_question(action)).strip()), ("assistant", str(macros.fit_answer()))]
            return (chat_prompt(llama, template, [*turns, *asked]) if template is not None else "",
                    " " + str(macros.yes()).strip(), " " + str(macros.no()).strip())
        staged = grammar is None and schema is not None and branches(schema) is not None \
            and (step.two_stage or step.retry_cut or step.finish_vote or step.fit_check or step.fit_check_unwritten)
        with lock:
            if staged:
                calls = _Calls(llama, options, max_tokens, self.prompt_cache_dir, context.task)
                text = answered(calls, prompt, step, context, pipeline, again=again, restart=calls.restart,
                                judge=judge if use_chat else None)
                input_tokens, output_tokens, finish_reason = calls.prompt_tokens, calls.completion_tokens, calls.finish
                use = calls.use
            else:
                if schema is not None:
                    grammar = _grammar_for(json.dumps(schema, sort_keys=False))
                options.update(max_tokens=max_tokens, grammar=grammar)
                response, use = complete(llama, prompt, cache_dir=self.prompt_cache_dir, task=context.task, **options)
                choice = response["choices"][0]
                text = choice["text"]
                usage = response.get("usage") or {}
                input_tokens = int(usage.get("prompt_tokens", 0))
                output_tokens = int(usage.get("completion_tokens", 0))
                finish_reason = choice.get("finish_reason")
        if schema is not None and not staged:
            text = finished(pipeline, text, context)

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


def rejected_note(action: str, paths: Sequence[str], task: str) -> str:
    """The note after a rejected answer, in the task's language: ``action`` needs ``paths``, which nothing gives
    (the ``invented`` macro of ``prompts/fewshot/<lang>.jinja``), or with no paths, ``action`` does not do what
    the task asks (``unfit``)."""
    macros = fewshot_macros(task_language(task))
    return str(macros.invented(action, ", ".join(paths)) if paths else macros.unfit(action)).strip()


class _Calls:
    """Completions of one answer made of several llama.cpp calls: the token counts add up, the
    ``max_tokens`` budget is shared, and the finish reason is ``"length"`` if any call was cut."""

    def __init__(self, llama: Any, options: dict[str, Any], max_tokens: int, cache_dir: str | None = None,
                 task: str = "") -> None:
        self.llama, self.options, self.budget, self.cache_dir, self.task = llama, options, max_tokens, cache_dir, task
        self.prompt_tokens = self.completion_tokens = self.spent_before = 0
        self.use = PrefixUse()
        self.finish: str | None = "stop"
        self.cut = False
        """Whether the last completion ended at the token budget (or was made after it was spent)."""
        self.begins = can_begin(llama, options)
        """Whether a completion can take its output's start as written text (``begun=``)."""

    def restart(self) -> None:
        """A new answer begins (decided again): it gets the whole ``max_tokens`` budget."""
        self.spent_before = self.completion_tokens

    def __call__(self, prompt: str, schema: Mapping[str, Any], *, suffix: str = "",
                 stop: Sequence[str] = (), min_tokens: int = 1, begun: str = "") -> str:
        grammar = _grammar_for(json.dumps(schema, sort_keys=False), suffix)
        left = self.budget - (self.completion_tokens - self.spent_before)
        remaining = max(min_tokens, left)
        options = {**self.options, "stop": [*self.options.get("stop", []), *stop]}
        response, use = complete(self.llama, prompt, grammar=grammar, max_tokens=remaining, cache_dir=self.cache_dir,
                                 task=self.task, begun=begun, **options)
        self.use += use
        usage = response.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.completion_tokens += int(usage.get("completion_tokens", 0))
        choice = response["choices"][0]
        # a completion made once the budget is spent (given one token, not an allowance of its own) is cut whatever
        # it ends with: a thought that ends a completion at each escaped quote would otherwise go on a token a time
        self.cut = choice.get("finish_reason") == "length" or (left <= 0 and min_tokens <= 1)
        if self.cut:
            self.finish = "length"
        return str(choice["text"])

    def share(self, prompt: str, options: Sequence[str], option: str) -> float | None:
        """The probability the model's next token after ``prompt`` gives the first token of ``option``, as a share
        of what it gives the first tokens of all ``options`` (texts that continue ``prompt``); ``None`` when
        ``option``'s first token begins another option too, or when the context window has no room for it. Read
        from the logits of one one-token completion (a ``logits_processor`` sees them); the prompt's tokens count
        as the answer's."""
        tokens = prompt_tokens(self.llama, prompt)
        size = window(self.llama)
        if size is not None and len(tokens) >= size:
            return None  # no room for the one token: the answer itself says what the context window allows
        # each option is tokenized after the prompt's last line only (the whole prompt takes ~20 ms a time), once
        # that line is seen to tokenize as the prompt ends
        line = prompt[prompt.rfind("\n") + 1:]
        tail = self._tokens(line)
        if not tail or tokens[-len(tail):] != tail:
            return None
        firsts: dict[str, int] = {}
        for name in options:
            continued = self._tokens(line + name)
            if len(continued) <= len(tail) or continued[: len(tail)] != tail:
                return None  # the prompt's last token merges with the option's: no clean first token
            firsts[name] = int(continued[len(tail)])
        mine = firsts[option]
        if any(token == mine for name, token in firsts.items() if name != option):
            return None
        seen: list[Any] = []

        def record(input_ids: Any, scores: Any) -> Any:
            seen.append(scores.copy())
            return scores

        options_now = {key: value for key, value in self.options.items() if key != "stop"}
        response, use = complete(self.llama, prompt, max_tokens=1, logits_processor=[record], cache_dir=self.cache_dir,
                                 task=self.task, **options_now)
        self.use += use
        self.prompt_tokens += int((response.get("usage") or {}).get("prompt_tokens", 0))
        if not seen:
            return None
        logits = seen[0]
        distinct = sorted(set(firsts.values()))
        top = max(float(logits[t]) for t in distinct)
        weights = {t: math.exp(float(logits[t]) - top) for t in distinct}
        return weights[mine] / sum(weights.values())

    def _tokens(self, text: str) -> list[int]:
        return [int(t) for t in self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)]


_TECHNIQUE_FLAGS = frozenset({"format_patterns", "two_stage", "retry_cut"})
"""On/off options of earlier versions for techniques that are now chosen by ``techniques=[...]``."""
