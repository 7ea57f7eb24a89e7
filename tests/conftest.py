"""Shared fixtures and helpers: the user-registry tools of the recorded GigaChat scenarios (an in-memory
'database'), ``call``/``finish`` replies, and the repository paths the tests need.

Hypothesis runs with no deadline: its property tests assert behaviour, and a 200 ms limit per example fails them
when a loaded machine pauses one example (performance is measured in ``bench/``, never in unit tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

settings.register_profile("react_agent", deadline=None)
settings.load_profile("react_agent")

ROOT = Path(__file__).resolve().parents[1]  # the repository
HELPERS = ROOT / "tests" / "helpers"  # servers, workers and data the tests start or import by name


class RegisterUserInput(BaseModel):
    username: str = Field(..., description="Логин", examples=["ViacheslavVoo"])
    email: str = Field(..., description="Email", examples=["Viacheslav@test.com"])
    phone: str | None = Field(None, description="Номер телефона в формате +7XXX...", examples=["+7999999999"])


class RegisterUserRenamedInput(BaseModel):
    """The reflection case: the argument ``email`` was renamed to ``user_email``."""

    username: str = Field(..., description="Логин", examples=["ViacheslavVoo"])
    user_email: str = Field(..., description="Email", examples=["Viacheslav@test.com"])
    phone: str | None = Field(None, description="Номер телефона в формате +7XXX...", examples=["+7999999999"])


class SearchDBInput(BaseModel):
    username: str = Field(..., description="Логин/имя пользователя", examples=["ViacheslavVoo"])
    limit: int | None = Field(5, description="Лимит результатов")


class RegisterUserTool(BaseTool):
    name: str = "register_user"
    description: str = "Регистрация пользователя в системе"
    args_schema: type[BaseModel] = RegisterUserInput
    users: Any  # shared, not copied by pydantic
    calls: list[dict[str, Any]] = Field(default_factory=list)

    def _run(self, username: str, email: str | None = None, user_email: str | None = None,
             phone: str | None = None) -> str:
        self.calls.append({"username": username, "email": email or user_email})
        self.users[username] = email or user_email or ""
        return f"User {username} успешно зарегистрирован"


class SearchDBTool(BaseTool):
    name: str = "search_db"
    description: str = "Ищет данные пользователей в системе"
    args_schema: type[BaseModel] = SearchDBInput
    users: Any  # shared, not copied by pydantic

    def _run(self, username: str, limit: int | None = 5) -> str:
        if username not in self.users:
            raise ValueError(f"пользователь {username} не найден")
        return f"Найден пользователь {self.users[username]}"


@pytest.fixture
def users() -> dict[str, str]:
    return {}


@pytest.fixture
def seed_tools(users: dict[str, str]) -> list[BaseTool]:
    return [RegisterUserTool(users=users), SearchDBTool(users=users)]


def call(action: str, **args: Any) -> str:
    """A scripted model reply calling ``action`` with ``args``."""
    return json.dumps({"thought": "t", "action": action, "action_input": args}, ensure_ascii=False)


def finish(answer: str) -> str:
    """A scripted model reply ending the run with ``answer``."""
    return json.dumps({"thought": "done", "action": "FINISH", "action_input": answer}, ensure_ascii=False)
