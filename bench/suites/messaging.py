"""Email and chat (``send_email``, ``send_message``, ``list_inbox``); a chat or SMS recipient is an employee
by name, an email goes to an address."""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from bench.suites._base import Store, SuiteToolError, suite_tool
from bench.suites._people import employee

NAME = "messaging"

Channel = Literal["chat", "sms"]
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class SendEmail(BaseModel):
    to: str = Field(min_length=3)
    subject: str = Field(min_length=1)
    body: str = Field(min_length=1)
    cc: list[str] = []


class SendMessage(BaseModel):
    recipient: str = Field(min_length=1)
    text: str = Field(min_length=1)
    channel: Channel = "chat"


class ListInbox(BaseModel):
    unread_only: bool = True
    limit: int = Field(default=10, ge=1, le=50)


def send_email(store: Store, to: str, subject: str, body: str, cc: list[str] | None = None) -> dict[str, Any]:
    for address in [to, *(cc or [])]:
        if not _EMAIL.match(address):
            raise SuiteToolError(store, "email_invalid", email=address)
    mail = {"kind": "email", "to": to, "cc": list(cc or []), "subject": subject, "body": body}
    store.table("sent").append(mail)
    return {"sent": True, **mail}


def send_message(store: Store, recipient: str, text: str, channel: str = "chat") -> dict[str, Any]:
    person = employee(store, recipient)
    message = {"kind": channel, "to": f"{person['first_name']} {person['last_name']}", "text": text}
    store.table("sent").append(message)
    return {"sent": True, **message}


def list_inbox(store: Store, unread_only: bool = True, limit: int = 10) -> list[dict[str, Any]]:
    mails = [m for m in store.table("inbox") if m["unread"] or not unread_only]
    return mails[:limit]


def make_tools(store: Store) -> list[BaseTool]:
    return [
        suite_tool(store, "send_email", send_email, SendEmail),
        suite_tool(store, "send_message", send_message, SendMessage),
        suite_tool(store, "list_inbox", list_inbox, ListInbox),
    ]
