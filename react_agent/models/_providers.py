"""``make_model("provider:name")``: a chat model from a one-line spec (LangChain's ``init_chat_model`` style).

* ``local``, ``local:NAME`` or ``local:PATH``: :class:`LocalChatModel` (the default embedded model, the
  catalogue model ``NAME`` such as ``qwen2.5-coder-1.5b``, or the GGUF at ``PATH``); extra ``local``;
  constrained mode ``json_schema``.
* ``openai:NAME``: ``ChatOpenAI`` (OpenAI, or any OpenAI-compatible server given ``base_url``);
  ``langchain-openai``; ``json_schema`` on OpenAI, off for another server unless the agent says.
* ``vllm:NAME``: ``ChatOpenAI`` at a vLLM server (default ``http://127.0.0.1:8000/v1``); ``json_schema``.
* ``llamacpp:NAME``: ``ChatOpenAI`` at a llama.cpp server, ``llama-server`` or
  ``python -m llama_cpp.server`` (default ``http://127.0.0.1:8080/v1``); ``json_object``.
* ``ollama:NAME``: ``ChatOllama``, Ollama's native API; ``langchain-ollama``; ``json_schema`` (sent
  as ``format``).
* ``gigachat`` or ``gigachat:NAME``: ``GigaChat``; ``langchain-gigachat``; off.

The name is everything after the first colon (``ollama:qwen3:8b`` is model ``qwen3:8b``). The
constrained mode of ``vllm:`` and ``llamacpp:`` is recorded in the model's ``metadata`` under
:data:`react_agent.models._structured.METADATA_KEY`, where the agent's detection reads it.

Every mistake is a :class:`~react_agent.ConfigError` that says what to do: an unknown provider lists
the known ones, a missing package gives the ``pip install`` command, a missing API key names the
environment variable. Nothing is contacted here: a server that does not answer fails the first call,
and :func:`react_agent.runtime._retry.explain_model_error` names its URL.

``ChatOpenAI`` models are built with ``max_retries=0`` (the agent's :class:`~react_agent.RetryPolicy`
retries transient errors; the client's own retries would multiply them) and, for ``vllm:`` and
``llamacpp:``, ``max_tokens=1024`` (those servers otherwise generate up to the context size); pass
``max_retries=``/``max_tokens=`` to change them. Other keyword arguments go to the model's class.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel

from react_agent.errors import ConfigError, install_hint
from react_agent.models._setup import gigachat_has_credentials
from react_agent.models._structured import METADATA_KEY

__all__ = ["DEFAULT_SERVER_MAX_TOKENS", "PROVIDERS", "make_model"]

DEFAULT_SERVER_MAX_TOKENS = 1024
"""``max_tokens`` given to ``vllm:`` and ``llamacpp:`` models unless the caller passes one."""

_EXAMPLES = "local, openai:gpt-4.1, vllm:Qwen/Qwen2.5-7B-Instruct, llamacpp:gemma, ollama:qwen3, gigachat"
_DEFAULT_BASE_URLS = {"vllm": "http://127.0.0.1:8000/v1", "llamacpp": "http://127.0.0.1:8080/v1"}
_SERVER_MODES = {"vllm": "json_schema", "llamacpp": "json_object"}


_EXTRAS = {"langchain-openai": "openai"}
"""The react-agent extra that installs a client package (the others are installed by name)."""


def _import(module: str, package: str, spec: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = _EXTRAS.get(package)
        how = install_hint(extra, package) if extra else f"pip install {package}"
        raise ConfigError(f"model {spec!r} needs the package {package}, which is not installed: {how}") from exc


def _env_value(name: str, spec: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise ConfigError(f"model {spec!r} needs an API key: set the environment variable {name}")
    return value


def _with_metadata(kwargs: dict[str, Any], provider: str) -> dict[str, Any]:
    mode = _SERVER_MODES.get(provider)
    if mode is not None:
        metadata = dict(kwargs.get("metadata") or {})
        metadata.setdefault(METADATA_KEY, mode)
        kwargs["metadata"] = metadata
    return kwargs


def _openai(provider: str, name: str, spec: str, base_url: str | None, api_key_env: str | None,
            kwargs: dict[str, Any]) -> BaseChatModel:
    module = _import("langchain_openai", "langchain-openai", spec)
    if not name:
        raise ConfigError(f"model {spec!r} needs a model name, e.g. {provider}:gpt-4.1")
    url = base_url or _DEFAULT_BASE_URLS.get(provider)
    if api_key_env:
        api_key = _env_value(api_key_env, spec)
    elif url is None:  # OpenAI itself
        api_key = _env_value("OPENAI_API_KEY", spec)
    else:  # a server of your own usually checks no key; OPENAI_API_KEY is used when set
        api_key = os.environ.get("OPENAI_API_KEY") or "EMPTY"
    kwargs.setdefault("max_retries", 0)
    if provider in _DEFAULT_BASE_URLS:
        kwargs.setdefault("max_tokens", DEFAULT_SERVER_MAX_TOKENS)
    if url is not None:
        kwargs["base_url"] = url
    model: BaseChatModel = module.ChatOpenAI(model=name, api_key=api_key, **_with_metadata(kwargs, provider))
    return model


def _ollama(provider: str, name: str, spec: str, base_url: str | None, api_key_env: str | None,
            kwargs: dict[str, Any]) -> BaseChatModel:
    module = _import("langchain_ollama", "langchain-ollama", spec)
    if not name:
        raise ConfigError(f"model {spec!r} needs a model name, e.g. ollama:qwen3")
    if base_url:
        kwargs["base_url"] = base_url
    if api_key_env:  # a hosted Ollama behind a bearer token
        headers = dict(kwargs.get("headers") or {})
        headers["Authorization"] = f"Bearer {_env_value(api_key_env, spec)}"
        kwargs["headers"] = headers
    model: BaseChatModel = module.ChatOllama(model=name, **kwargs)
    return model


def _gigachat(provider: str, name: str, spec: str, base_url: str | None, api_key_env: str | None,
              kwargs: dict[str, Any]) -> BaseChatModel:
    module = _import("langchain_gigachat", "langchain-gigachat", spec)
    if api_key_env:
        kwargs["credentials"] = _env_value(api_key_env, spec)
    elif not gigachat_has_credentials(kwargs):
        raise ConfigError(f"model {spec!r} needs credentials: set the environment variable GIGACHAT_CREDENTIALS "
                          "(your authorization key), or name another one with api_key_env (--api-key-env)")
    if name:
        kwargs["model"] = name
    if base_url:
        kwargs["base_url"] = base_url
    model: BaseChatModel = module.GigaChat(**kwargs)
    return model


def _local(provider: str, name: str, spec: str, base_url: str | None, api_key_env: str | None,
           kwargs: dict[str, Any]) -> BaseChatModel:
    if base_url:
        raise ConfigError("model 'local' runs in this process: it takes no base URL (use llamacpp:NAME for a server)")
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError("model 'local' needs llama-cpp-python, which is not installed: install the extra "
                          "react-agent[local] with `react-agent setup-local` (a portable build of llama.cpp)")
    from react_agent.models.local._catalog import CATALOG, DEFAULT_LOCAL_MODEL, catalog_entry
    from react_agent.models.local._model import LocalChatModel
    from react_agent.models.local._weights import check_installed

    if name and (name.lower() in CATALOG or not _looks_like_path(name)):
        kwargs["model"] = catalog_entry(name).name  # an unknown name: the ConfigError lists the known ones
    elif name:
        path = Path(name).expanduser()
        if not path.is_file():
            raise ConfigError(f"model {spec!r}: GGUF file not found: {path}")
        kwargs["model_path"] = str(path)
    if "model_path" not in kwargs:
        check_installed(catalog_entry(kwargs.get("model") or DEFAULT_LOCAL_MODEL))
    return LocalChatModel(**kwargs)


def _looks_like_path(name: str) -> bool:
    return name.lower().endswith(".gguf") or any(sep in name for sep in ("/", "\\", "~"))


_Factory = Callable[[str, str, str, "str | None", "str | None", "dict[str, Any]"], BaseChatModel]

PROVIDERS: dict[str, _Factory] = {
    "local": _local,
    "openai": _openai,
    "vllm": _openai,
    "llamacpp": _openai,
    "ollama": _ollama,
    "gigachat": _gigachat,
}
"""The providers :func:`make_model` knows, by the prefix of the spec."""

_ALIASES = {"llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "llama_cpp": "llamacpp"}


def make_model(spec: str, *, base_url: str | None = None, api_key_env: str | None = None,
               **kwargs: Any) -> BaseChatModel:
    """The chat model named by ``spec`` (``"provider:name"``; the module docstring has the table).

    ``base_url`` points ``openai``/``vllm``/``llamacpp``/``ollama``/``gigachat`` at a server;
    ``api_key_env`` names the environment variable holding the API key (default ``OPENAI_API_KEY``
    for OpenAI, the ``GIGACHAT_*`` variables for GigaChat). Other keyword arguments go to the model.
    Raises :class:`ConfigError` with the fix for an unknown provider, a missing package or API key.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"a model spec is 'provider:name', e.g. {_EXAMPLES}; got {spec!r}")
    provider, _, name = spec.strip().partition(":")
    provider = _ALIASES.get(provider.lower(), provider.lower())
    factory = PROVIDERS.get(provider)
    if factory is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"unknown model provider {provider!r} in {spec!r}: use one of {known} "
                          f"(e.g. {_EXAMPLES})")
    return factory(provider, name.strip(), spec, base_url, api_key_env, dict(kwargs))
