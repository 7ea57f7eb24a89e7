"""Argument values in the form the tool's description asks for (pure functions, for small local models).

A task writes "100µF", "3 minutes" or "March 11, 2022"; the tool's description says "in farads (F)", "in
seconds", "Format: yyyy-mm-dd". A 270M model copies what the task writes. These functions convert the value
the model copied into the unit or format the argument's description names, and nothing else: a number
only when the task writes that very number with a unit of the same kind, a date only when the value reads
as a whole date and the description spells a format.

They run after abstaining (:func:`_decoding.should_abstain`), which checks that the values come
from the task: a converted value is, by design, not written in it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from react_agent.models.local._decoding import changed_arguments, schema_types

__all__ = ["date_formats", "described_unit", "unit_numbers"]

_PREFIXES = {"p": 1e-12, "n": 1e-9, "µ": 1e-6, "μ": 1e-6, "u": 1e-6, "m": 1e-3, "c": 1e-2, "k": 1e3, "M": 1e6,
             "G": 1e9}
_PREFIX_WORDS = {"pico": 1e-12, "nano": 1e-9, "micro": 1e-6, "milli": 1e-3, "centi": 1e-2, "kilo": 1e3,
                 "mega": 1e6, "giga": 1e9}
_UNIT_WORDS = {  # unit word (singular) -> (kind, symbol, factor to the kind's base)
    "second": ("time", "s", 1.0), "sec": ("time", "s", 1.0), "minute": ("time", "min", 60.0),
    "min": ("time", "min", 60.0), "hour": ("time", "h", 3600.0), "hr": ("time", "h", 3600.0),
    "day": ("time", "d", 86400.0), "week": ("time", "wk", 604800.0),
    "farad": ("F", "F", 1.0), "henry": ("H", "H", 1.0), "henrie": ("H", "H", 1.0), "hertz": ("Hz", "Hz", 1.0),
    "volt": ("V", "V", 1.0), "ampere": ("A", "A", 1.0), "amp": ("A", "A", 1.0), "watt": ("W", "W", 1.0),
    "ohm": ("Ω", "Ω", 1.0), "joule": ("J", "J", 1.0), "newton": ("N", "N", 1.0), "pascal": ("Pa", "Pa", 1.0),
    "gram": ("g", "g", 1.0), "meter": ("m", "m", 1.0), "metre": ("m", "m", 1.0), "liter": ("L", "L", 1.0),
    "litre": ("L", "L", 1.0),
}
_SYMBOLS = {symbol: kind for kind, symbol, factor in _UNIT_WORDS.values() if factor == 1.0 and kind != "time"}
_DESCRIBED = re.compile(r"\b(?:in|as)\s+(?:the\s+)?([^\W\d_]+)(?![\w/])(?:\s*\(([^\W\d_]{1,3})\))?", re.IGNORECASE)
_MENTION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?([^\W\d_]+)(?![\w/])")


def _unit_word(word: str) -> tuple[str, float] | None:
    """``(kind, factor)`` of a unit word with an optional prefix word ("microfarads", "minutes", "kg")."""
    folded = word.casefold()
    for prefix, scale in (("", 1.0), *_PREFIX_WORDS.items()):
        if not folded.startswith(prefix):
            continue
        rest = folded[len(prefix):]
        for singular in (rest, rest[:-1] if rest.endswith("s") else None):
            if singular and singular in _UNIT_WORDS:
                kind, _, factor = _UNIT_WORDS[singular]
                if not (prefix and kind == "time"):
                    return kind, factor * scale
    return None


def _unit_symbol(symbol: str, kind: str) -> float | None:
    """The factor of a unit symbol of ``kind`` with an optional SI prefix ("µF", "mH", "kg"), or ``None``."""
    base = next((s for s, k in _SYMBOLS.items() if k == kind), None)
    if base is None or not symbol.endswith(base):
        return None
    prefix = symbol[:-len(base)]
    if not prefix:
        return 1.0
    return _PREFIXES.get(prefix)


def _symbol_unit(symbol: str) -> tuple[str, float] | None:
    """``(kind, factor)`` of a prefixed unit symbol of any kind ("kg" -> g, 1000), or ``None``."""
    for kind in _SYMBOLS.values():
        factor = _unit_symbol(symbol, kind)
        if factor is not None:
            return kind, factor
    return None


def described_unit(description: Any) -> tuple[str, float] | None:
    """``(kind, factor)`` of the unit an argument's description names ("The inductance (L) in henries (H)" ->
    H; "Length of the mix track in seconds." -> time, 1), or ``None``."""
    if not isinstance(description, str):
        return None
    for word, symbol in _DESCRIBED.findall(description):
        found = _unit_word(word) or _symbol_unit(word)
        if found is None and symbol:
            kind = _SYMBOLS.get(symbol)
            found = (kind, 1.0) if kind else None
        if found is not None:
            return found
    return None


def _mentions(source: str, kind: str) -> dict[float, set[float]]:
    """``{number as written: {its factors}}`` for each number the task writes with a unit of ``kind``."""
    out: dict[float, set[float]] = {}
    for number, unit in _MENTION.findall(source):
        factor = _unit_symbol(unit, kind)
        if factor is None:
            word = _unit_word(unit)
            factor = word[1] if word is not None and word[0] == kind else None
        if factor is not None:
            out.setdefault(float(number), set()).add(factor)
    return out


def unit_numbers(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each number argument whose description names a unit ("in farads (F)", "in seconds") and
    whose value the task writes with another unit of the same kind ("100µF", "3 minutes") converted to the
    described unit (0.0001, 180); ``None`` when nothing changes. Only one reading of that number is taken
    (the task writing it with two different units converts nothing), and an integer argument only takes a
    whole result."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        kinds = schema_types(sub)
        unit = described_unit(sub.get("description"))
        if unit is None or not kinds & {"integer", "number"}:
            return None
        factors = _mentions(source, unit[0]).get(float(value), set())
        if len(factors) != 1 or next(iter(factors)) == unit[1]:
            return None
        converted = float(f"{float(value) * next(iter(factors)) / unit[1]:.12g}")
        if converted.is_integer():
            return int(converted)
        return converted if "number" in kinds else None

    return changed_arguments(args, args_schema, fix)


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_FORMAT = re.compile(r"\b(yyyy|mm|dd)([-/.])(yyyy|mm|dd)\2(yyyy|mm|dd)\b", re.IGNORECASE)
_ISO = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")
_MONTH = r"(?P<month>[A-Za-z]{3,9})\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_WRITTEN = (re.compile(rf"^\s*{_MONTH}[\s.]*{_DAY},?\s*(?:of\s+)?{_YEAR}\s*$"),
            re.compile(rf"^\s*(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH},?\s*{_YEAR}\s*$", re.IGNORECASE))


def _month(word: str) -> int | None:
    folded = word.casefold()
    found = [i for i, m in enumerate(_MONTHS, 1) if m.startswith(folded) or folded == m]
    return found[0] if len(folded) >= 3 and len(found) == 1 else None


def _date_of(value: str) -> tuple[int, int, int] | None:
    """``(year, month, day)`` of a value that is a whole date ("2022-03-11", "March.11, 2022", "10th December
    2022"), or ``None``."""
    iso = _ISO.match(value)
    if iso:
        year, month, day = (int(g) for g in iso.groups())
    else:
        for pattern in _WRITTEN:
            written = pattern.match(value)
            if written:
                found = _month(written.group("month"))
                if found is None:
                    return None
                year, month, day = int(written.group("year")), found, int(written.group("day"))
                break
        else:
            return None
    return (year, month, day) if 1 <= month <= 12 and 1 <= day <= 31 else None


def date_formats(args: Any, args_schema: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """``args`` with each string argument whose description spells a date format ("Format: yyyy-mm-dd",
    "MM/DD/YYYY") or whose schema says ``"format": "date"``, and whose value reads as a whole date, written in
    that format ("March 11, 2022" -> "2022-03-11"); ``None`` when nothing changes."""

    def fix(name: Any, value: Any, sub: Mapping[str, Any]) -> Any:
        if not isinstance(value, str) or "string" not in schema_types(sub):
            return None
        spelled = _FORMAT.search(str(sub.get("description") or ""))
        if spelled is None and sub.get("format") != "date":
            return None
        date = _date_of(value)
        if date is None:
            return None
        parts = {"yyyy": f"{date[0]:04d}", "mm": f"{date[1]:02d}", "dd": f"{date[2]:02d}"}
        if spelled is None:
            return "-".join(parts[k] for k in ("yyyy", "mm", "dd"))
        order = [spelled.group(i).casefold() for i in (1, 3, 4)]
        return spelled.group(2).join(parts[k] for k in order) if sorted(order) == ["dd", "mm", "yyyy"] else None

    return changed_arguments(args, args_schema, fix)
