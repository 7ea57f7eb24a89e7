"""The company's employees (the ``employees`` table), shared by the tickets, calendar and messaging tools."""

from __future__ import annotations

from typing import Any

from bench.suites._base import Store, SuiteToolError, normal


def employee(store: Store, name: str) -> dict[str, Any]:
    """The employee called ``name``: a surname, a first name, or both in either order (nominative)."""
    wanted = normal(name)
    for person in store.table("employees"):
        first, last = normal(person["first_name"]), normal(person["last_name"])
        if wanted in (first, last, f"{first} {last}", f"{last} {first}"):
            return dict(person)
    raise SuiteToolError(store, "employee_unknown", name=name)
