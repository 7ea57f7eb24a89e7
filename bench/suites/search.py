"""Look-ups outside the company (``web_search``, ``get_weather``, ``convert_currency``, ``find_places``),
answered from the store's fixed tables so that runs are reproducible."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from bench.suites._base import Store, SuiteToolError, strings, suite_tool

NAME = "search"

Units = Literal["celsius", "fahrenheit"]
CURRENCY = r"^[A-Z]{3}$"


class WebSearch(BaseModel):
    query: str = Field(min_length=1)
    max_results: int = Field(default=5, ge=1, le=20)


class GetWeather(BaseModel):
    city: str = Field(min_length=1)
    date: dt.date | None = None
    units: Units = "celsius"


class ConvertCurrency(BaseModel):
    amount: float = Field(gt=0)
    from_currency: str = Field(pattern=CURRENCY)
    to_currency: str = Field(pattern=CURRENCY)


class FindPlaces(BaseModel):
    query: str = Field(min_length=1)
    city: str = Field(min_length=1)
    limit: int = Field(default=5, ge=1, le=20)


def web_search(store: Store, query: str, max_results: int = 5) -> list[dict[str, str]]:
    template = strings(store.lang)["results"]["search"]
    return [{"title": template.format(query=query, n=n), "url": f"https://example.org/{n}"}
            for n in range(1, min(max_results, 3) + 1)]


def get_weather(store: Store, city: str, date: dt.date | None = None, units: str = "celsius") -> dict[str, Any]:
    celsius = 4
    temperature = celsius if units == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": city, "date": (date or store.today).isoformat(), "temperature": temperature, "units": units,
            "sky": strings(store.lang)["results"]["sky"]}


def convert_currency(store: Store, amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    rates: dict[str, float] = store.table("rates")
    for code in (from_currency, to_currency):
        if code not in rates:
            raise SuiteToolError(store, "currency_unknown", code=code, known=", ".join(sorted(rates)))
    converted = round(amount * rates[from_currency] / rates[to_currency], 2)
    return {"amount": amount, "from": from_currency, "to": to_currency, "result": converted}


def find_places(store: Store, query: str, city: str, limit: int = 5) -> list[dict[str, str]]:
    template = strings(store.lang)["results"]["place"]
    return [{"name": template.format(query=query, n=n), "city": city} for n in range(1, min(limit, 3) + 1)]


def make_tools(store: Store) -> list[BaseTool]:
    return [
        suite_tool(store, "web_search", web_search, WebSearch),
        suite_tool(store, "get_weather", get_weather, GetWeather),
        suite_tool(store, "convert_currency", convert_currency, ConvertCurrency),
        suite_tool(store, "find_places", find_places, FindPlaces),
    ]
