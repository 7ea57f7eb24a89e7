"""The calendar (``get_current_date``, ``create_event``, ``list_events``, ``cancel_event``,
``create_reminder``); dates are ISO ``YYYY-MM-DD``, times ``HH:MM``, people are employees by name."""

from __future__ import annotations

import datetime as dt
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from bench.suites._base import Store, SuiteToolError, strings, suite_tool
from bench.suites._people import employee

NAME = "calendar"

TIME = r"^([01]\d|2[0-3]):[0-5]\d$"


class GetCurrentDate(BaseModel):
    pass


class CreateEvent(BaseModel):
    title: str = Field(min_length=1)
    date: dt.date
    start_time: str = Field(pattern=TIME)
    duration_minutes: int = Field(default=60, ge=5, le=720)
    attendees: list[str] = []
    location: str | None = None


class ListEvents(BaseModel):
    date: dt.date


class CancelEvent(BaseModel):
    event_id: int = Field(ge=1)


class CreateReminder(BaseModel):
    person: str = Field(min_length=1)
    date: dt.date
    text: str = Field(min_length=1)
    time: str | None = Field(default=None, pattern=TIME)


def get_current_date(store: Store) -> dict[str, str]:
    return {"date": store.today.isoformat(), "weekday": strings(store.lang)["weekdays"][store.today.weekday()]}


def create_event(store: Store, title: str, date: dt.date, start_time: str, duration_minutes: int = 60,
                 attendees: list[str] | None = None, location: str | None = None) -> dict[str, Any]:
    people = [employee(store, name)["first_name"] for name in attendees or []]
    event = {"id": store.next_id("events"), "title": title, "date": date.isoformat(), "start_time": start_time,
             "duration_minutes": duration_minutes, "attendees": people, "location": location}
    store.table("events").append(event)
    return event


def list_events(store: Store, date: dt.date) -> list[dict[str, Any]]:
    return [e for e in store.table("events") if e["date"] == date.isoformat()]


def cancel_event(store: Store, event_id: int) -> dict[str, Any]:
    events = store.table("events")
    for index, event in enumerate(events):
        if event["id"] == event_id:
            return dict(events.pop(index))
    raise SuiteToolError(store, "event_unknown", event_id=event_id)


def create_reminder(store: Store, person: str, date: dt.date, text: str, time: str | None = None) -> dict[str, Any]:
    who = employee(store, person)
    reminder = {"id": store.next_id("reminders"), "person": f"{who['first_name']} {who['last_name']}",
                "date": date.isoformat(), "time": time, "text": text}
    store.table("reminders").append(reminder)
    return reminder


def make_tools(store: Store) -> list[BaseTool]:
    return [
        suite_tool(store, "get_current_date", get_current_date, GetCurrentDate),
        suite_tool(store, "create_event", create_event, CreateEvent),
        suite_tool(store, "list_events", list_events, ListEvents),
        suite_tool(store, "cancel_event", cancel_event, CancelEvent),
        suite_tool(store, "create_reminder", create_reminder, CreateReminder),
    ]
