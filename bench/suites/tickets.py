"""Help-desk tickets (``create_ticket``, ``assign_ticket``, ``update_ticket_status``, ``search_tickets``,
``add_comment``); an assignee is an employee's surname."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from bench.suites._base import Store, SuiteToolError, mentions, suite_tool
from bench.suites._people import employee

NAME = "tickets"

Priority = Literal["low", "medium", "high", "critical"]
Status = Literal["open", "in_progress", "resolved", "closed"]


class CreateTicket(BaseModel):
    title: str = Field(min_length=1)
    description: str = ""
    priority: Priority = "medium"
    assignee: str | None = None
    tags: list[str] = []


class AssignTicket(BaseModel):
    ticket_id: int = Field(ge=1)
    assignee: str = Field(min_length=1)


class UpdateTicketStatus(BaseModel):
    ticket_id: int = Field(ge=1)
    status: Status


class SearchTickets(BaseModel):
    query: str | None = None
    status: Status | None = None
    assignee: str | None = None


class AddComment(BaseModel):
    ticket_id: int = Field(ge=1)
    text: str = Field(min_length=1)


def _ticket(store: Store, ticket_id: int) -> dict[str, Any]:
    tickets: list[dict[str, Any]] = store.table("tickets")
    for ticket in tickets:
        if ticket["id"] == ticket_id:
            return ticket
    raise SuiteToolError(store, "ticket_unknown", ticket_id=ticket_id)


def create_ticket(store: Store, title: str, description: str = "", priority: str = "medium",
                  assignee: str | None = None, tags: list[str] | None = None) -> dict[str, Any]:
    owner = None if assignee is None else employee(store, assignee)["last_name"]
    ticket = {"id": store.next_id("tickets"), "title": title, "description": description, "priority": priority,
              "status": "open", "assignee": owner, "tags": list(tags or []), "comments": []}
    store.table("tickets").append(ticket)
    return ticket


def assign_ticket(store: Store, ticket_id: int, assignee: str) -> dict[str, Any]:
    ticket = _ticket(store, ticket_id)
    ticket["assignee"] = employee(store, assignee)["last_name"]
    return ticket


def update_ticket_status(store: Store, ticket_id: int, status: str) -> dict[str, Any]:
    ticket = _ticket(store, ticket_id)
    ticket["status"] = status
    return ticket


def search_tickets(store: Store, query: str | None = None, status: str | None = None,
                   assignee: str | None = None) -> list[dict[str, Any]]:
    owner = None if assignee is None else employee(store, assignee)["last_name"]
    found = [t for t in store.table("tickets")
             if (query is None or mentions(query, t["title"], t["description"], *t["tags"]))
             and (status is None or t["status"] == status) and (owner is None or t["assignee"] == owner)]
    return found


def add_comment(store: Store, ticket_id: int, text: str) -> dict[str, Any]:
    ticket = _ticket(store, ticket_id)
    ticket["comments"].append(text)
    return ticket


def make_tools(store: Store) -> list[BaseTool]:
    return [
        suite_tool(store, "create_ticket", create_ticket, CreateTicket),
        suite_tool(store, "assign_ticket", assign_ticket, AssignTicket),
        suite_tool(store, "update_ticket_status", update_ticket_status, UpdateTicketStatus),
        suite_tool(store, "search_tickets", search_tickets, SearchTickets),
        suite_tool(store, "add_comment", add_comment, AddComment),
    ]
