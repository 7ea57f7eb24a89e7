"""CRM tools: contacts and deals (``find_contacts``, ``create_contact``, ``find_deals``, ``create_deal``,
``update_deal_stage``, ``apply_discount``)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from bench.suites._base import Store, SuiteToolError, mentions, normal, suite_tool

NAME = "crm"

Stage = Literal["new", "negotiation", "won", "lost"]
Currency = Literal["RUB", "USD", "EUR"]
DEAL_ID = r"^D-\d+$"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class FindContacts(BaseModel):
    query: str = Field(min_length=1)
    limit: int = Field(default=5, ge=1, le=50)


class CreateContact(BaseModel):
    first_name: str = Field(min_length=1)
    last_name: str = Field(min_length=1)
    email: str | None = None
    phone: str | None = None
    company: str | None = None


class FindDeals(BaseModel):
    company: str | None = None
    stage: Stage | None = None


class CreateDeal(BaseModel):
    company: str = Field(min_length=1)
    amount: float = Field(gt=0)
    currency: Currency
    stage: Stage = "new"
    close_date: dt.date | None = None


class UpdateDealStage(BaseModel):
    deal_id: str = Field(pattern=DEAL_ID)
    stage: Stage


class ApplyDiscount(BaseModel):
    deal_id: str = Field(pattern=DEAL_ID)
    percent: float = Field(gt=0, le=100)


def find_contacts(store: Store, query: str, limit: int = 5) -> list[dict[str, Any]]:
    found = [c for c in store.table("contacts")
             if mentions(query, f"{c['first_name']} {c['last_name']}", c["company"], c["email"])]
    if not found:
        raise SuiteToolError(store, "contact_not_found", query=query)
    return found[:limit]


def create_contact(store: Store, first_name: str, last_name: str, email: str | None = None,
                   phone: str | None = None, company: str | None = None) -> dict[str, Any]:
    if email is not None and not _EMAIL.match(email):
        raise SuiteToolError(store, "email_invalid", email=email)
    contact = {"id": store.next_id("contacts"), "first_name": first_name, "last_name": last_name,
               "email": email, "phone": phone, "company": company}
    store.table("contacts").append(contact)
    return contact


def find_deals(store: Store, company: str | None = None, stage: str | None = None) -> list[dict[str, Any]]:
    found = [d for d in store.table("deals")
             if (company is None or mentions(company, d["company"])) and (stage is None or d["stage"] == stage)]
    if not found:
        raise SuiteToolError(store, "deal_not_found", query=company or stage or "")
    return found


def create_deal(store: Store, company: str, amount: float, currency: str, stage: str = "new",
                close_date: dt.date | None = None) -> dict[str, Any]:
    deals = store.table("deals")
    number = max(int(d["id"].removeprefix("D-")) for d in deals) + 1
    deal = {"id": f"D-{number}", "company": company, "amount": amount, "currency": currency, "stage": stage,
            "close_date": close_date.isoformat() if close_date else None, "discount_percent": 0}
    deals.append(deal)
    return deal


def _deal(store: Store, deal_id: str) -> dict[str, Any]:
    deals: list[dict[str, Any]] = store.table("deals")
    for deal in deals:
        if normal(deal["id"]) == normal(deal_id):
            return deal
    raise SuiteToolError(store, "deal_unknown", deal_id=deal_id)


def update_deal_stage(store: Store, deal_id: str, stage: str) -> dict[str, Any]:
    deal = _deal(store, deal_id)
    deal["stage"] = stage
    return deal


def apply_discount(store: Store, deal_id: str, percent: float) -> dict[str, Any]:
    deal = _deal(store, deal_id)
    deal["discount_percent"] = percent
    return {**deal, "amount_after_discount": round(deal["amount"] * (1 - percent / 100), 2)}


def make_tools(store: Store) -> list[BaseTool]:
    return [
        suite_tool(store, "find_contacts", find_contacts, FindContacts),
        suite_tool(store, "create_contact", create_contact, CreateContact),
        suite_tool(store, "find_deals", find_deals, FindDeals),
        suite_tool(store, "create_deal", create_deal, CreateDeal),
        suite_tool(store, "update_deal_stage", update_deal_stage, UpdateDealStage),
        suite_tool(store, "apply_discount", apply_discount, ApplyDiscount),
    ]
