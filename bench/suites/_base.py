"""What the suite tool sets share: the fake store a run works on, the texts of each language and the
construction of a tool that records its successful calls.

A tool set module (``crm``, ``tickets``, ...) defines language-free argument models (types, defaults,
bounds, formats) and functions ``f(store, **arguments) -> result``; :func:`suite_tool` gives the model
its descriptions from ``strings/<lang>.json`` and turns it into a ``StructuredTool``. A result is shown to
the model as JSON. A failure is a :class:`SuiteToolError` whose message comes from the strings file too.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

Lang = Literal["ru", "en"]
LANGS: tuple[Lang, ...] = ("ru", "en")


def check_lang(lang: str) -> Lang:
    """``lang`` if the suites have it; a ``ValueError`` naming the choices otherwise."""
    for known in LANGS:
        if lang == known:
            return known
    raise ValueError(f"unknown suite language {lang!r}: use one of {', '.join(LANGS)}")


@functools.cache
def _json(folder: str, lang: Lang) -> dict[str, Any]:
    source = resources.files("bench.suites") / folder / f"{lang}.json"
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return data


def strings(lang: Lang) -> dict[str, Any]:
    """The texts of ``lang``: ``tools`` (description and argument descriptions per tool) and ``errors``."""
    return _json("strings", lang)


@dataclass(frozen=True)
class Call:
    """One successful tool call as the tool received it (dates as ISO strings)."""

    tool: str
    arguments: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments}


@dataclass
class Store:
    """The in-memory state one run works on: the tables of ``data/<lang>.json`` (copied, so a run never
    changes another's), the fixed ``today`` of the suite and the log of successful calls."""

    lang: Lang
    today: dt.date
    tables: dict[str, Any]
    log: list[Call] = field(default_factory=list)

    @classmethod
    def fresh(cls, lang: str) -> Store:
        known = check_lang(lang)
        seed = _json("data", known)
        return cls(known, dt.date.fromisoformat(seed["today"]), copy.deepcopy(seed["tables"]))

    def table(self, name: str) -> Any:
        return self.tables[name]

    def next_id(self, name: str) -> int:
        """A new numeric id for a row of the table ``name`` (one more than the largest)."""
        ids = [int(row["id"]) for row in self.tables[name] if str(row["id"]).isdigit()]
        return max(ids, default=0) + 1

    def record(self, tool: str, arguments: Mapping[str, Any]) -> None:
        self.log.append(Call(tool, {k: plain(v) for k, v in arguments.items()}))


def plain(value: Any) -> Any:
    """``value`` with dates, times and pydantic models as JSON values."""
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class SuiteToolError(ToolException):
    """An error a suite tool reports to the model: the message of ``code`` in the store's language."""

    def __init__(self, store: Store, code: str, /, **params: object) -> None:
        self.code = code
        super().__init__(strings(store.lang)["errors"][code].format_map(params))


@functools.cache
def _described(model: type[BaseModel], tool: str, lang: Lang) -> type[BaseModel]:
    """``model`` with the argument descriptions of ``lang`` (types, defaults and bounds unchanged)."""
    described: dict[str, str] = strings(lang)["tools"][tool]["arguments"]
    if set(described) != set(model.model_fields):
        raise ValueError(f"strings/{lang}.json describes {sorted(described)} for {tool!r}, "
                         f"its model has {sorted(model.model_fields)}")
    fields: dict[str, Any] = {
        name: (info.annotation, FieldInfo.merge_field_infos(info, description=described[name]))
        for name, info in model.model_fields.items()
    }
    return create_model(f"{model.__name__}{lang.title()}", __base__=model, __module__=model.__module__,
                        **fields)


ToolFunction = Callable[..., Any]


def suite_tool(store: Store, name: str, function: ToolFunction, args: type[BaseModel]) -> StructuredTool:
    """The tool ``name`` running ``function(store, **arguments)``, described in the store's language; a
    call that returns is recorded in ``store.log`` and its result shown as JSON."""

    def run(**arguments: Any) -> str:
        result = function(store, **arguments)
        store.record(name, arguments)
        return json.dumps(plain(result), ensure_ascii=False)

    return StructuredTool.from_function(
        func=run,
        name=name,
        description=strings(store.lang)["tools"][name]["description"],
        args_schema=_described(args, name, store.lang),
    )


def normal(text: str) -> str:
    """``text`` casefolded, ``ё`` as ``е``, runs of whitespace as one space: how the tools compare names."""
    return " ".join(text.casefold().replace("ё", "е").split())


def mentions(query: str, *values: object) -> bool:
    """Whether the (normalised) ``query`` occurs in one of ``values``: the tools' search."""
    needle = normal(query)
    return bool(needle) and any(needle in normal(str(v)) for v in values if v is not None)
