"""The user registry: :class:`UserDB` (an SQLite file with a ``users`` table) and the ``register_user`` and
``search_db`` tools on it.

Every query is parameterised; ``LIKE`` wildcards typed by the model are matched literally. A connection is
opened per call, so the tools may run in worker threads.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Annotated, TypedDict

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, WithJsonSchema

from react_agent.demo._common import DemoToolError, Lang, check_lang, demo_strings, make_tool
from react_agent.errors import ConfigError

__all__ = [
    "MAX_SEARCH_LIMIT",
    "MAX_USERNAME_LENGTH",
    "UserDB",
    "UserExistsError",
    "UserNotFoundError",
    "UserRecord",
    "make_register_user_tool",
    "make_search_db_tool",
]

logger = logging.getLogger(__name__)

MAX_USERNAME_LENGTH = 128
"""Longest username (after stripping surrounding whitespace)."""
MAX_SEARCH_LIMIT = 100
"""Largest ``limit`` of a search."""

_DEFAULT_SEARCH_LIMIT = 5


class UserExistsError(DemoToolError):
    """``register`` was asked for a username that is already taken."""


class UserNotFoundError(DemoToolError):
    """A search found no user."""


class UserRecord(TypedDict):
    """One row of the ``users`` table."""

    username: str
    email: str
    phone: str | None
    created_at: str


_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    username   TEXT PRIMARY KEY,
    email      TEXT NOT NULL,
    phone      TEXT,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
)
"""

_EMAIL_RE = re.compile(
    r"^(?!\.)(?!.*\.\.)[\w.!#$%&'*+/=?^`{|}~-]{1,64}(?<!\.)"  # local part, no leading/trailing/double dot
    r"@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}$"  # domain labels, alphabetic TLD
)
_PHONE_SEPARATORS = re.compile(r"[\s()\-.]")
_PHONE_RE = re.compile(r"^\+\d{7,15}$")


def _clean_username(username: str) -> str:
    name = username.strip()
    if not name:
        raise DemoToolError("username_empty")
    if len(name) > MAX_USERNAME_LENGTH:
        raise DemoToolError("username_too_long", length=len(name), limit=MAX_USERNAME_LENGTH)
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise DemoToolError("username_invalid")
    return name


def _clean_email(email: str) -> str:
    value = email.strip()
    if len(value) > 254 or not _EMAIL_RE.fullmatch(value):
        raise DemoToolError("email_invalid", email=value[:100])
    return value


def _clean_phone(phone: str | None) -> str | None:
    if phone is None or not phone.strip():
        return None
    value = _PHONE_SEPARATORS.sub("", phone)
    if not _PHONE_RE.fullmatch(value):
        raise DemoToolError("phone_invalid", phone=phone.strip()[:100])
    return value


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _record(row: sqlite3.Row) -> UserRecord:
    return UserRecord(username=row["username"], email=row["email"], phone=row["phone"], created_at=row["created_at"])


class UserDB:
    """A user registry in an SQLite file: a ``users`` table keyed by a unique ``username``.

    Every method opens its own connection, so one instance may be shared by tools running in
    different threads; SQLite's file locking (with a ``timeout``) serialises the writers. All values
    reach SQL as bound parameters. Usernames are stripped of surrounding whitespace and compared
    case-sensitively for uniqueness; searches are case-insensitive for ASCII letters.

    Raises :class:`DemoToolError` subclasses (English messages) on invalid input, and
    ``sqlite3.Error`` if the file cannot be used.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 10.0) -> None:
        """Open (and create if needed) the database file at ``path``; its folder must exist.

        ``":memory:"`` is refused: every call opens a new connection, which would see an empty
        database each time.
        """
        raw = os.fspath(path)
        if raw in ("", ":memory:") or raw.startswith("file:"):
            raise ConfigError(f"UserDB needs a database file path, got {raw!r}")
        self.path = Path(raw)
        self.timeout = timeout
        with self._connect() as conn:
            conn.execute(_SCHEMA)
        logger.debug("user database ready at %s", self.path)

    def __repr__(self) -> str:
        return f"UserDB({str(self.path)!r})"

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A fresh connection in a transaction: committed on success, rolled back on error, closed."""
        with closing(sqlite3.connect(self.path, timeout=self.timeout)) as conn:
            conn.row_factory = sqlite3.Row
            with conn:
                yield conn

    def register(self, username: str, email: str, phone: str | None = None) -> UserRecord:
        """Insert a user and return the stored row.

        The email must look like ``name@example.com``; the phone (optional, ``None`` or blank for
        none) must be ``+`` and 7-15 digits, spaces, dashes and parentheses being dropped.
        Raises :class:`UserExistsError` if the username is taken.
        """
        name = _clean_username(username)
        mail = _clean_email(email)
        tel = _clean_phone(phone)
        try:
            with self._connect() as conn:
                conn.execute("INSERT INTO users (username, email, phone) VALUES (?, ?, ?)", (name, mail, tel))
                row = conn.execute(
                    "SELECT username, email, phone, created_at FROM users WHERE username = ?", (name,)
                ).fetchone()
        except sqlite3.IntegrityError as exc:
            if self.get(name) is not None:
                raise UserExistsError("user_exists", username=name) from exc
            raise
        logger.debug("registered user %r", name)
        return _record(row)

    def get(self, username: str) -> UserRecord | None:
        """The user with exactly this username (after stripping whitespace), or ``None``."""
        name = _clean_username(username)
        with self._connect() as conn:
            row = conn.execute(
                "SELECT username, email, phone, created_at FROM users WHERE username = ?", (name,)
            ).fetchone()
        return None if row is None else _record(row)

    def find(self, username: str, limit: int = _DEFAULT_SEARCH_LIMIT) -> list[UserRecord]:
        """Up to ``limit`` users: the exact match first, then usernames starting with ``username``,
        then usernames containing it (case-insensitive for ASCII letters).

        ``%``, ``_`` and ``\\`` in ``username`` are matched literally. Returns ``[]`` when nothing
        matches.
        """
        name = _clean_username(username)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise DemoToolError("limit_invalid", limit=MAX_SEARCH_LIMIT, value=limit)
        escaped = _escape_like(name)
        with self._connect() as conn:
            rows = conn.execute(
                """
                SELECT username, email, phone, created_at,
                       CASE WHEN username = :name THEN 0
                            WHEN username LIKE :prefix ESCAPE '\\' THEN 1
                            ELSE 2 END AS rank
                FROM users
                WHERE username = :name OR username LIKE :contains ESCAPE '\\'
                ORDER BY rank, username
                LIMIT :limit
                """,
                {"name": name, "prefix": escaped + "%", "contains": "%" + escaped + "%", "limit": limit},
            ).fetchall()
        logger.debug("search %r: %d user(s)", name, len(rows))
        return [_record(row) for row in rows]



# The argument models: types, defaults, examples and limits; the descriptions come from strings/<lang>.json.


_Login = Annotated[str, WithJsonSchema({"type": "string", "pattern": r'^[^@"\\]*$'})]
"""A login as the schema tells the model: not an address (and, for the grammar, no ``"`` or ``\\``: a character
class that admits them runs past the end of a JSON string); the tool checks the name (:func:`_clean_username`)."""
_Email = Annotated[str, WithJsonSchema({"type": "string", "format": "email"})]
"""An e-mail address: the schema says so (``format``), the tool checks it (:func:`_clean_email`)."""


class _RegisterUserArgs(BaseModel):
    username: _Login = Field(examples=["ViacheslavVoo"])
    email: _Email = Field(examples=["Viacheslav@test.com"])
    phone: str | None = Field(default=None, examples=["+7999999999"])


class _SearchDbArgs(BaseModel):
    username: str = Field(examples=["Ivan"])
    limit: int | None = Field(default=_DEFAULT_SEARCH_LIMIT, ge=1, le=MAX_SEARCH_LIMIT, examples=[5])


def _db_error(exc: sqlite3.Error, lang: Lang) -> DemoToolError:
    logger.exception("user database error")
    return DemoToolError("db_error", lang=lang, detail=str(exc))


def make_register_user_tool(db: UserDB, *, lang: Lang = "ru") -> BaseTool:
    """The ``register_user`` tool bound to ``db``: args ``username``, ``email``, ``phone=None``.

    Returns a confirmation such as ``"User Ivan registered (email ivan@test.com)"``; raises
    :class:`DemoToolError` on an invalid email or phone and :class:`UserExistsError` on a taken
    username.
    """
    lang = check_lang(lang)

    def register_user(username: str, email: str, phone: str | None = None) -> str:
        try:
            user = db.register(username, email, phone)
        except DemoToolError as exc:
            raise exc.localized(lang) from None
        except sqlite3.Error as exc:
            raise _db_error(exc, lang) from exc
        texts = demo_strings(lang).results
        key = "registered" if user["phone"] is None else "registered_phone"
        return texts[key].format(username=user["username"], email=user["email"], phone=user["phone"])

    return make_tool("register_user", lang, register_user, _RegisterUserArgs)


def make_search_db_tool(db: UserDB, *, lang: Lang = "ru") -> BaseTool:
    """The ``search_db`` tool bound to ``db``: args ``username``, ``limit=5`` (1..100).

    Returns a header line and one line per user (exact match first); raises
    :class:`UserNotFoundError` when nothing matches.
    """
    lang = check_lang(lang)

    def search_db(username: str, limit: int | None = _DEFAULT_SEARCH_LIMIT) -> str:
        try:
            users = db.find(username, _DEFAULT_SEARCH_LIMIT if limit is None else limit)
        except DemoToolError as exc:
            raise exc.localized(lang) from None
        except sqlite3.Error as exc:
            raise _db_error(exc, lang) from exc
        query = username.strip()
        if not users:
            raise UserNotFoundError("user_not_found", lang=lang, username=query)
        texts = demo_strings(lang).results
        lines = [texts["found"].format(query=query, count=len(users))]
        lines.extend(
            texts["found_row"].format(
                username=user["username"],
                email=user["email"],
                phone=user["phone"] or texts["no_phone"],
                created_at=user["created_at"],
            )
            for user in users
        )
        return "\n".join(lines)

    return make_tool("search_db", lang, search_db, _SearchDbArgs)
