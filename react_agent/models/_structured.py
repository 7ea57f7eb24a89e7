"""How the answer schema reaches the model: one adapter per client and server family.

The agent derives a JSON schema for its answers (:func:`react_agent.answer_schema`) and can ask the
model to decode under it. Servers disagree on how that request is spelled, so the ``constrained``
option names a *mode*:

``"json_schema"``
    OpenAI's ``response_format={"type": "json_schema", "json_schema": {"name": ..., "schema": ...}}``:
    OpenAI, vLLM, LM Studio, Ollama's ``/v1`` endpoint, llama.cpp's C++ ``llama-server`` and
    :class:`~react_agent.models.LocalChatModel`. For ``langchain_ollama.ChatOllama`` (Ollama's native
    API) the same schema goes as ``format=<schema>``.
``"json_object"``
    ``response_format={"type": "json_object", "schema": ...}``: what llama-cpp-python's own server
    (``python -m llama_cpp.server``) accepts (it answers HTTP 500 to ``json_schema``), also understood
    by ``llama-server``. Servers that do not read the ``schema`` key (OpenAI, vLLM, Ollama ``/v1``)
    treat it as "any JSON object".
``"grammar"``
    The schema compiled to a llama.cpp GBNF grammar on the client (needs llama-cpp-python installed,
    extra ``local``): ``grammar=`` for ``LocalChatModel``, ``extra_body={"grammar": ...}`` for
    ``ChatOpenAI`` talking to a llama.cpp server (llama-cpp-python's or ``llama-server``).
``False``
    No constraint: the parser alone reads the reply.

``None`` detects the mode with :func:`detect_mode`, cheaply and without network calls: it looks
through ``bind``/``with_retry``/``with_fallbacks``/``with_config`` wrappers to the chat model, then

* a model with ``metadata={"react_agent.constrained": MODE}`` (set by :func:`react_agent.models.make_model`
  for ``vllm:``/``llamacpp:``, or by you) gets ``MODE``;
* a model whose class says ``supports_json_schema = True`` (``LocalChatModel``) gets ``"json_schema"``;
* ``ChatOllama`` gets ``"json_schema"`` (Ollama >= 0.5 takes a schema in ``format``);
* ``ChatOpenAI`` gets ``"json_schema"`` when its client points at ``api.openai.com`` or at Ollama's
  port 11434; for any other ``base_url`` the server is asked once per process which family it is
  (:func:`react_agent.models._probe.server_mode`: ``GET /v1/models``, ``/props``, ``/openapi.json``, 2 s
  each): llama-cpp-python's server gets ``"json_object"``, llama-server, vLLM, LM Studio and Ollama
  ``"json_schema"``; an unknown family gets ``False`` and one warning naming ``constrained=...``;
* anything else (GigaChat, other LangChain models) gets ``False``.

Schemas are adapted to the family that converts them: for llama.cpp's Python converter (modes
``json_object`` and ``grammar``, and ``LocalChatModel``) annotation keywords are dropped (a node with
only a ``description`` makes the converter fail), keywords it does not enforce are dropped, an
unanchored ``pattern`` or a non-local ``$ref`` is dropped (the converter rejects them), a pattern's
escapes are rewritten into what llama.cpp's grammar parser reads (:func:`gbnf_safe_pattern`), bounded
integer ranges become enums; every drop is logged at DEBUG level on the ``react_agent`` logger.
OpenAI's *strict* mode is not used: it needs an object at the root, and the answer schema's root is an
``anyOf`` with one branch per tool, so the request goes without ``strict`` (OpenAI then treats the
schema as guidance; vLLM and Ollama enforce it anyway) and the parser checks every reply.

For ``ChatOpenAI`` every structured field (``response_format``, ``grammar``) goes in ``extra_body``,
which the OpenAI SDK merges into the JSON body, so the server receives exactly the same request. A
top-level ``response_format`` would send the call through the SDK's ``parse()``, which raises
``LengthFinishReasonError`` when ``max_tokens`` cuts the reply; this way a cut reply comes back as text
with ``finish_reason == "length"``, as from every other model, and the agent's parser tells the model it
was truncated.

``ChatOpenAI`` sends its ``max_tokens`` as ``max_completion_tokens``, which llama.cpp's servers
ignore (they then generate up to the context size). For a ``ChatOpenAI`` whose ``base_url`` is not
OpenAI's, :func:`compat_kwargs` (part of :func:`model_call_kwargs`) puts ``max_tokens`` in
``extra_body`` (sent verbatim in the JSON body) on every call, so every server family honours it.

Pure functions: they read the model's attributes, never call it (the one-time server probe aside).
"""

from __future__ import annotations

import copy
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.runnables.configurable import DynamicRunnable
from langchain_core.runnables.fallbacks import RunnableWithFallbacks

from react_agent._types import CallContext
from react_agent.errors import ConfigError
from react_agent.models._grammar import gbnf_safe_literal, literal_safe

__all__ = [
    "CONSTRAINED_MODES",
    "METADATA_KEY",
    "ConstrainedMode",
    "adapt_schema",
    "compat_kwargs",
    "detect_mode",
    "gbnf_safe_pattern",
    "merge_kwargs",
    "model_call_kwargs",
    "resolve_mode",
    "schema_to_gbnf",
    "structured_kwargs",
    "unwrap_model",
]

logger = logging.getLogger("react_agent")

ConstrainedMode = Literal["json_schema", "json_object", "grammar"]
CONSTRAINED_MODES: tuple[ConstrainedMode, ...] = ("json_schema", "json_object", "grammar")
"""The values of the ``constrained`` option besides ``None``, ``True`` and ``False``."""

METADATA_KEY = "react_agent.constrained"
"""A model's ``metadata`` entry that names its constrained mode (read by :func:`detect_mode`)."""

SCHEMA_NAME = "agent_action"
"""The ``json_schema.name`` sent with ``response_format``."""

_OPENAI_HOSTS = ("api.openai.com",)
_OLLAMA_PORT = 11434

# llama.cpp's Python JSON-schema converter (llama_cpp.llama_grammar): keywords that only annotate
# (a node made only of them fails the converter) and keywords it silently does not enforce.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated",
                          "readOnly", "writeOnly", "$schema", "$id"})
_NOT_ENFORCED = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                           "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
                           "uniqueItems", "contains", "minContains", "maxContains", "minProperties",
                           "maxProperties", "patternProperties", "propertyNames",
                           "unevaluatedProperties", "unevaluatedItems"})
# Keywords whose value maps *names* to schemas: the names are data, not keywords.
_NAME_MAPS = ("properties", "$defs", "definitions")
_ANY_VALUE = ["string", "number", "boolean", "object", "array", "null"]


# ------------------------------------------------------------------------------------------ the model
def _layers(llm: Any) -> tuple[Any, list[Mapping[str, Any]]]:
    """The chat model inside ``llm`` and the ``bind`` kwargs of the wrapper layers, outermost first."""
    if not _wrapper_class(llm.__class__):
        return llm, []
    kwargs: list[Mapping[str, Any]] = []
    for _ in range(32):
        if isinstance(llm, RunnableBindingBase):
            if llm.kwargs:
                kwargs.append(llm.kwargs)
            llm = llm.bound
        elif isinstance(llm, RunnableWithFallbacks):
            llm = llm.runnable
        elif isinstance(llm, DynamicRunnable):
            llm = llm.default
        else:
            break
    return llm, kwargs


@lru_cache(maxsize=256)
def _wrapper_class(cls: type) -> bool:
    return issubclass(cls, (RunnableBindingBase, RunnableWithFallbacks, DynamicRunnable))


def unwrap_model(llm: Any) -> Any:
    """The chat model inside ``llm``: through ``bind``, ``with_config``, ``with_retry`` (``.bound``),
    ``with_fallbacks`` (its first runnable) and ``configurable_fields`` (``.default``)."""
    return _layers(llm)[0]


def bound_kwargs(llm: Any) -> dict[str, Any]:
    """The call options ``llm.bind(...)`` layers add, outer layers winning (as at call time)."""
    merged: dict[str, Any] = {}
    for kwargs in reversed(_layers(llm)[1]):  # innermost first, so outer layers override
        merged.update(kwargs)
    return merged


_KINDS: dict[type, str] = {}
_CLIENTS = (("BaseChatOpenAI", "langchain_openai", "openai"), ("ChatOllama", "langchain_ollama", "ollama"),
            ("LocalChatModel", "react_agent.", "local"))


def _kind(cls: type) -> str:
    """``"openai"`` (``BaseChatOpenAI``), ``"ollama"`` (``ChatOllama``), ``"local"`` (``LocalChatModel``)
    or ``"other"``, by the class's ancestry (no import of the client packages); remembered per class."""
    kind = _KINDS.get(cls)
    if kind is None:
        kind = next((found for base in cls.__mro__ for name, module, found in _CLIENTS
                     if base.__name__ == name and base.__module__.startswith(module)), "other")
        _KINDS[cls] = kind
    return kind


def _is_openai_client(model: Any) -> bool:
    return _kind(type(model)) == "openai"


def _is_ollama_native(model: Any) -> bool:
    return _kind(type(model)) == "ollama"


def _is_local_llama(model: Any) -> bool:
    return _kind(type(model)) == "local"


def openai_base_url(model: Any) -> str | None:
    """The URL a ``ChatOpenAI`` sends to: its client's ``base_url`` (which also reflects
    ``OPENAI_BASE_URL``), else its ``openai_api_base``; ``None`` for other models."""
    if not _is_openai_client(model):
        return None
    client = getattr(model, "root_client", None) or getattr(model, "root_async_client", None)
    url = getattr(client, "base_url", None)
    if url is not None:
        return str(url)
    base = getattr(model, "openai_api_base", None)
    return str(base) if base else "https://api.openai.com/v1"


def _is_openai_host(url: str | None) -> bool:
    host = (urlsplit(url).hostname or "") if url else ""
    return host in _OPENAI_HOSTS or host.endswith(".openai.com")


def _metadata_mode(model: Any) -> ConstrainedMode | Literal[False] | None:
    metadata = getattr(model, "metadata", None)
    if not isinstance(metadata, Mapping) or METADATA_KEY not in metadata:
        return None
    value = metadata[METADATA_KEY]
    if value is False or value in CONSTRAINED_MODES:
        return cast("ConstrainedMode | Literal[False]", value)
    raise ConfigError(f"metadata[{METADATA_KEY!r}] must be one of {_mode_list()} or False, got {value!r}")


def detect_mode(llm: Any) -> ConstrainedMode | Literal[False]:
    """The constrained mode to use when the user did not choose one (module docstring has the rules)."""
    model = unwrap_model(llm)
    declared = _metadata_mode(model)
    if declared is not None:
        return declared
    if getattr(model, "supports_json_schema", False) is True:
        return "json_schema"
    if _is_ollama_native(model):
        return "json_schema"
    if _is_openai_client(model):
        url = openai_base_url(model)
        if _is_openai_host(url) or urlsplit(url or "").port == _OLLAMA_PORT:
            return "json_schema"
        if url:
            from react_agent.models._probe import server_mode

            probed = server_mode(url, _api_key(model))
            if probed is not None:
                return probed
    return False


def _api_key(model: Any) -> str | None:
    key = getattr(model, "openai_api_key", None)
    if key is None:
        return None
    value = key.get_secret_value() if hasattr(key, "get_secret_value") else key
    return value if isinstance(value, str) and value else None


def _mode_list() -> str:
    return ", ".join(repr(m) for m in CONSTRAINED_MODES)


def resolve_mode(llm: Any, constrained: bool | str | None) -> ConstrainedMode | Literal[False]:
    """The mode for the agent option ``constrained``: ``None`` detects (:func:`detect_mode`), ``True``
    detects and falls back to ``"json_schema"``, ``False`` is off, a mode name is taken as it is.
    Anything else raises :class:`ConfigError`."""
    if constrained is None:
        return detect_mode(llm)
    if constrained is False:
        return False
    if constrained is True:
        return detect_mode(llm) or "json_schema"
    if isinstance(constrained, str) and constrained in CONSTRAINED_MODES:
        return constrained
    raise ConfigError(f"constrained must be None (detect), True, False or one of {_mode_list()}, got {constrained!r}")


# ------------------------------------------------------------------------------------------ the schema
def adapt_schema(schema: Mapping[str, Any], family: str) -> dict[str, Any]:
    """A copy of ``schema`` that the converter of ``family`` accepts and enforces as written.

    ``family`` ``"llama.cpp"`` (llama-cpp-python's converter) drops annotations, keywords it does not
    enforce, unanchored patterns and non-local ``$ref`` s, makes an empty schema ("any value") an
    explicit type list, and enumerates bounded integer ranges. Other families get a plain copy.
    Each dropped keyword is logged at DEBUG level with its JSON pointer.
    """
    if family != "llama.cpp":
        return copy.deepcopy(dict(schema))
    from react_agent.models.local._pipeline import bounded_integers  # pure; does not import llama_cpp

    dropped: list[str] = []

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, list):
            return [walk(item, f"{path}/{i}") for i, item in enumerate(node)]
        if not isinstance(node, Mapping):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            where = f"{path}/{key}"
            if key in _NAME_MAPS and isinstance(value, Mapping):
                out[key] = {name: walk(sub, f"{where}/{name}") for name, sub in value.items()}
            elif key in ("const", "enum") and not gbnf_safe_literal(value):
                dropped.append(where)
            elif key in ("const", "enum", "required"):  # data, not schemas
                out[key] = copy.deepcopy(value)
            elif key == "pattern":
                safe = gbnf_safe_pattern(value) if isinstance(value, str) else None
                if safe is None:
                    dropped.append(where)
                else:
                    out[key] = safe
            elif _unsupported_by_llama_cpp(node, key, value):
                dropped.append(where)
            else:
                out[key] = walk(value, where)
        if not out and node is not schema and path:
            out = {"type": list(_ANY_VALUE)}
        return out

    adapted = bounded_integers(walk(schema, ""))
    if dropped:
        logger.debug("schema keywords llama.cpp's converter does not support, dropped: %s", ", ".join(dropped))
    return cast("dict[str, Any]", adapted)


_CLASS_SHORTHANDS = {"d": "0-9", "w": "0-9A-Za-z_", "s": " \\t\\n\\r"}
_GBNF_ESCAPES = frozenset("\\nrt[]")
_LITERAL_PUNCTUATION = frozenset(".+*?()|{}$/,:;!#%&'<=>@~`")


def gbnf_safe_pattern(pattern: str) -> str | None:
    """``pattern`` rewritten so that llama-cpp-python's converter makes a valid GBNF rule of it, or ``None``.

    The converter copies backslash escapes into the grammar as they are, and llama.cpp's grammar parser
    knows only ``\\\\``, ``\\n``, ``\\r``, ``\\t``, ``\\[`` and ``\\]``: ``\\d`` or ``\\.`` make the grammar
    unparsable, and llama.cpp then crashes the process while sampling. So ``\\d``/``\\w``/``\\s`` become
    character classes and an escaped punctuation character becomes ``[.]`` (outside a class) or the bare
    character (inside one). ``None`` (drop the pattern) for a pattern without both ``^`` and ``$`` (the
    converter rejects it), with a class that opens with ``]``, or with another escape (``\\b``, ``\\1``,
    ``\\-``...).
    """
    if not (pattern.startswith("^") and pattern.endswith("$")) or len(pattern) < 2:
        return None
    if "[]" in pattern or "[^]" in pattern:  # a class opening with "]": the converter mishandles it
        return None
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern):
                return None
            nxt = pattern[i + 1]
            i += 2
            if nxt in _CLASS_SHORTHANDS:
                out.append(_CLASS_SHORTHANDS[nxt] if in_class else f"[{_CLASS_SHORTHANDS[nxt]}]")
            elif nxt in _GBNF_ESCAPES:
                out.append("\\" + nxt)
            elif nxt in _LITERAL_PUNCTUATION:
                out.append(nxt if in_class else f"[{nxt}]")
            else:
                return None
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


def _unsupported_by_llama_cpp(node: Mapping[str, Any], key: str, value: Any) -> bool:
    """Whether llama-cpp-python's converter rejects or ignores ``key`` in ``node``. Integer bounds stay:
    :func:`bounded_integers` turns small ranges into an enforced ``enum``."""
    if key in _ANNOTATIONS:
        return True
    if key in _NOT_ENFORCED:
        integer_bound = key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        return not (integer_bound and node.get("type") == "integer")
    if key == "$ref":  # remote refs would be fetched (refused); other forms raise
        return not (isinstance(value, str) and value.startswith("#/"))
    return False


_ADAPTED: OrderedDict[tuple[int, str], tuple[Mapping[str, Any], dict[str, Any]]] = OrderedDict()
_ADAPTED_LOCK = threading.Lock()
_ADAPTED_MAX = 64


def _adapted(schema: Mapping[str, Any], family: str) -> dict[str, Any]:
    """:func:`adapt_schema`, remembered per schema object (an agent sends the same schema every step).
    The entry holds the schema itself, so its ``id`` cannot be reused while cached; the result is shared
    by the calls and must not be mutated (clients only serialise it)."""
    key = (id(schema), family)
    with _ADAPTED_LOCK:
        entry = _ADAPTED.get(key)
        if entry is not None and entry[0] is schema:
            _ADAPTED.move_to_end(key)
            return entry[1]
    adapted = adapt_schema(schema, family)
    with _ADAPTED_LOCK:
        _ADAPTED[key] = (schema, adapted)
        while len(_ADAPTED) > _ADAPTED_MAX:
            _ADAPTED.popitem(last=False)
    return adapted


def _family(model: Any, mode: ConstrainedMode) -> str:
    if mode in ("json_object", "grammar") or _is_local_llama(model):
        return "llama.cpp"
    if _is_ollama_native(model):
        return "ollama"
    return "openai"


def schema_to_gbnf(schema: Mapping[str, Any]) -> str:
    """``schema`` as a llama.cpp GBNF grammar, by llama-cpp-python's converter (extra ``local``);
    compiled once per distinct schema."""
    return _gbnf(json.dumps(schema))  # key order kept: it is the order the grammar writes properties in


@lru_cache(maxsize=64)
def _gbnf(schema_json: str) -> str:
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError as exc:
        raise ConfigError("constrained='grammar' compiles the schema with llama-cpp-python, which is not "
                          "installed: install the extra react-agent[local] (`react-agent setup-local`), or use "
                          "constrained='json_object'") from exc
    try:
        return str(json_schema_to_gbnf(json.dumps(literal_safe(json.loads(schema_json)))))
    except Exception as exc:  # the converter asserts on what it cannot express
        raise ConfigError(f"llama.cpp cannot turn the answer schema into a grammar ({exc}); "
                          "use constrained='json_schema' or False") from exc


# ------------------------------------------------------------------------------------------ call kwargs
def _target(llm: Any) -> tuple[Any, dict[str, Any]]:
    """The chat model inside ``llm`` and the merged ``bind`` kwargs around it (outer layers winning)."""
    model, layers = _layers(llm)
    bound: dict[str, Any] = {}
    for kwargs in reversed(layers):
        bound.update(kwargs)
    return model, bound


def _extra_body(model: Any, bound: Mapping[str, Any], **entries: Any) -> dict[str, Any]:
    """The ``extra_body`` to send: the model's own, then ``bind``-ed ones, then ``entries``."""
    body: dict[str, Any] = {}
    for source in (getattr(model, "extra_body", None), bound.get("extra_body")):
        if isinstance(source, Mapping):
            body.update(source)
    body.update(entries)
    return body


def structured_kwargs(llm: Any, schema: Mapping[str, Any], mode: ConstrainedMode | Literal[False],
                      *, name: str = SCHEMA_NAME) -> dict[str, Any]:
    """The ``invoke`` keyword arguments that ask ``llm`` for an answer matching ``schema`` in ``mode``
    (``name`` is the ``json_schema.name`` of OpenAI's ``response_format``).

    ``{}`` for ``False``. Raises :class:`ConfigError` for a mode the client cannot carry (a grammar to
    Ollama) or an unknown mode. The schema is adapted to the server family first (:func:`adapt_schema`).
    """
    return _structured(*_target(llm), schema, mode, name)


def _structured(model: Any, bound: Mapping[str, Any], schema: Mapping[str, Any],
                mode: ConstrainedMode | Literal[False], name: str) -> dict[str, Any]:
    if mode is False:
        return {}
    if mode not in CONSTRAINED_MODES:
        raise ConfigError(f"unknown constrained mode {mode!r}: use one of {_mode_list()} or False")
    adapted = _adapted(schema, _family(model, mode))
    if _is_ollama_native(model):
        if mode == "grammar":
            raise ConfigError("Ollama takes no grammar: use constrained='json_schema' (sent as format=<schema>)")
        return {"format": adapted}
    entry: dict[str, Any]
    if mode == "json_schema":
        entry = {"response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": adapted}}}
    elif mode == "json_object":
        entry = {"response_format": {"type": "json_object", "schema": adapted}}
    else:
        entry = {"grammar": schema_to_gbnf(adapted)}
    if _is_openai_client(model):  # in the JSON body, past ChatOpenAI's parse() path (module docstring)
        return {"extra_body": _extra_body(model, bound, **entry)}
    return entry


def compat_kwargs(llm: Any) -> dict[str, Any]:
    """``invoke`` keyword arguments every call needs for the server to honour the model's settings.

    Today one case: a ``ChatOpenAI`` with ``max_tokens`` (or a ``bind(max_tokens=...)``) whose
    ``base_url`` is not OpenAI's gets ``extra_body={"max_tokens": N}``, because ``ChatOpenAI`` sends
    the limit only as ``max_completion_tokens``, which llama.cpp's servers ignore.
    """
    return _compat(*_target(llm))


def _compat(model: Any, bound: Mapping[str, Any]) -> dict[str, Any]:
    if not _is_openai_client(model) or _is_openai_host(openai_base_url(model)):
        return {}
    limit = bound.get("max_tokens", bound.get("max_completion_tokens", getattr(model, "max_tokens", None)))
    if not isinstance(limit, int) or isinstance(limit, bool):
        return {}
    return {"extra_body": _extra_body(model, bound, max_tokens=limit)}


def merge_kwargs(*parts: Mapping[str, Any]) -> dict[str, Any]:
    """``parts`` merged left to right, their ``extra_body`` dicts merged too (not replaced)."""
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key == "extra_body" and isinstance(merged.get(key), dict) and isinstance(value, Mapping):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = dict(value) if key == "extra_body" and isinstance(value, Mapping) else value
    return merged


def model_call_kwargs(llm: Any, schema: Mapping[str, Any] | None, mode: ConstrainedMode | Literal[False],
                      *, name: str = SCHEMA_NAME, context: CallContext | None = None) -> dict[str, Any]:
    """Everything one call passes to ``llm.invoke``: :func:`compat_kwargs` for every call, plus
    :func:`structured_kwargs` when ``schema`` is given and ``mode`` is not ``False`` (``extra_body``
    entries of both merged), plus ``react_agent_call=context`` for a model whose class declares
    ``accepts_call_context = True`` (no other model ever sees it). A fresh dict each time; the schema inside is
    shared (do not mutate it)."""
    inner = unwrap_model(llm)
    extra = {"react_agent_call": context} if context is not None and _reads_call_context(type(inner)) else {}
    if (schema is None or mode is False) and not _is_openai_client(inner):
        return extra  # what the rest gives for any other client, without merging its layers' kwargs
    model, bound = _target(llm)
    compat = _compat(model, bound)
    if schema is None or mode is False:
        return merge_kwargs(compat, extra)
    return merge_kwargs(compat, _structured(model, bound, schema, mode, name), extra)


def agent_profile(llm: Any) -> str | None:
    """The agent profile the model under ``llm``'s wrappers declares (``LocalChatModel.agent_profile``:
    ``"compact"`` or ``"chat"``), or ``None``: which prompt set, worked examples and history layout an agent uses
    when it is not told."""
    try:
        profile = getattr(unwrap_model(llm), "agent_profile", None)
    except Exception:  # a model whose profile cannot be read has none
        return None
    return profile if isinstance(profile, str) else None


def accepts_call_context(llm: Any) -> bool:
    """Whether the model under ``llm``'s wrappers declares ``accepts_call_context = True`` (``LocalChatModel``):
    it reads the task, observations and tools of a decision from the ``react_agent_call`` keyword."""
    return _reads_call_context(type(unwrap_model(llm)))


_CONTEXT_READERS: dict[type, bool] = {}


def _reads_call_context(cls: type) -> bool:
    """Whether the model class declares ``accepts_call_context = True``; remembered per class, like
    :func:`_kind` (a class without it answers ``getattr`` only through an ``AttributeError``, which a pydantic
    class makes costly)."""
    reads = _CONTEXT_READERS.get(cls)
    if reads is None:
        reads = _CONTEXT_READERS[cls] = getattr(cls, "accepts_call_context", False) is True
    return reads
