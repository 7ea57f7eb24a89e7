"""What the demo tools share: the language, the texts read from ``strings/<lang>.json``, the error base class
and the construction of a localized tool.

Every sentence a demo tool shows (its description, its arguments' descriptions, its results and its error
messages) lives in ``strings/ru.json`` and ``strings/en.json``, next to this module, never in Python code.
A language's file is read the first time one of its texts is needed, then kept. The texts are
:meth:`str.format` templates: ``{name}`` fields are filled by the code, and ``{allowed}`` (in tool
descriptions and error messages) by the file's ``calc_allowed`` sentence.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any, Literal

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from react_agent.errors import ConfigError

__all__ = ["LANGUAGES", "DemoStrings", "DemoToolError", "Lang", "check_lang", "demo_strings", "make_tool"]

Lang = Literal["ru", "en"]
"""The language of tool descriptions, argument descriptions, results and error messages."""

LANGUAGES: tuple[Lang, ...] = ("ru", "en")
"""The languages that have a strings file."""


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolStrings(_Data):
    """The texts of one tool: its description and one description per argument."""

    description: str
    arguments: dict[str, str]


class DemoStrings(_Data):
    """The contents of one ``strings/<lang>.json`` file."""

    language: Lang
    calc_allowed: str
    arguments_of: str
    tools: dict[str, ToolStrings]
    results: dict[str, str]
    errors: dict[str, str]
    seed_tasks: tuple[str, ...]
    examples: dict[str, str]

    def error(self, code: str, params: Mapping[str, object]) -> str:
        """The message of the error ``code``, filled with ``params``."""
        return self.errors[code].format_map({"allowed": self.calc_allowed, **params})


def check_lang(lang: str) -> Lang:
    """``lang`` if it is a supported language; a :class:`ConfigError` otherwise."""
    if lang == "ru":
        return "ru"
    if lang == "en":
        return "en"
    raise ConfigError(f"unsupported language {lang!r}: use 'ru' or 'en'")


@functools.cache
def demo_strings(lang: Lang) -> DemoStrings:
    """The texts of ``lang``, read from ``strings/<lang>.json`` on first use and then cached."""
    source = resources.files("react_agent.demo") / "strings" / f"{check_lang(lang)}.json"
    try:
        strings = DemoStrings.model_validate(json.loads(source.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:  # a broken installation, not a user's mistake
        raise ConfigError(f"the demo strings file {source} is missing or invalid: {exc}") from exc
    if strings.language != lang:
        raise ConfigError(f"the demo strings file {source} says it is {strings.language!r}, not {lang!r}")
    return strings


class DemoToolError(ToolException, ValueError):
    """An error a demo tool reports to the model (the agent turns it into an observation).

    ``code`` names the error and ``params`` fill its message; :meth:`localized` renders the same
    error in another language. The classes and functions of this package raise English messages;
    the tools re-raise them in the tool's language.
    """

    def __init__(self, code: str, /, *, lang: Lang = "en", **params: object) -> None:
        self.code = code
        self.params: dict[str, object] = params
        self.lang: Lang = lang
        self.message = demo_strings(lang).error(code, params)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.code, self.lang, self.params))

    def localized(self, lang: Lang) -> DemoToolError:
        """The same error (same class, code and parameters) with its message in ``lang``."""
        if lang == self.lang:
            return self
        return type(self)(self.code, lang=lang, **self.params)


def _rebuild_error(cls: type[DemoToolError], code: str, lang: Lang, params: dict[str, object]) -> DemoToolError:
    """Unpickle a DemoToolError (its constructor does not take the message)."""
    return cls(code, lang=lang, **params)


@functools.cache
def _localized_args(model: type[BaseModel], tool: str, lang: Lang) -> type[BaseModel]:
    """``model`` with the descriptions of ``lang``: a subclass named ``<model><Lang>`` whose docstring and
    field descriptions come from the strings file; types, defaults, examples and constraints are the model's."""
    strings = demo_strings(lang)
    described = strings.tools[tool].arguments
    if set(described) != set(model.model_fields):
        raise ConfigError(f"strings/{lang}.json describes the arguments {sorted(described)} of {tool!r}, "
                          f"but its model has {sorted(model.model_fields)}")
    fields: dict[str, Any] = {
        name: (field.annotation, FieldInfo.merge_field_infos(field, description=described[name]))
        for name, field in model.model_fields.items()
    }
    return create_model(
        f"{model.__name__}{lang.title()}",
        __base__=model,
        __module__=model.__module__,
        __doc__=strings.arguments_of.format(tool=tool),
        **fields,
    )


def make_tool(name: str, lang: Lang, func: Callable[..., str], args: type[BaseModel]) -> StructuredTool:
    """The tool ``name`` running ``func``, described in ``lang``; ``args`` is its (language-free) argument model."""
    strings = demo_strings(lang)
    return StructuredTool.from_function(
        func=func,
        name=name,
        description=strings.tools[name].description.format(allowed=strings.calc_allowed),
        args_schema=_localized_args(args, name, lang),
    )
