"""Demo tools for agents: a real SQLite user registry, a safe calculator and a confined file reader.

These are the tools of the seed article ("register a user, then find him"), built to be run by a model
that makes mistakes and, sometimes, by a prompt that tries to abuse them:

* ``register_user`` / ``search_db`` work on :class:`UserDB`, an SQLite file with a ``users`` table.
  Every query is parameterised; ``LIKE`` wildcards typed by the model are matched literally.
  A connection is opened per call, so the tools may run in worker threads.
* ``calculator`` parses the expression with :mod:`ast` and walks the tree itself: numbers, ``+ - * /
  // % **``, unary signs, parentheses, a few :mod:`math` functions and the constants ``pi`` and ``e``.
  Nothing is ever passed to ``eval``/``exec``; the input length, the exponents and the size of integer
  results are bounded.
* ``read_file`` reads a UTF-8 text file under one root folder; ``..``, absolute paths and symlinks that
  lead outside the root are refused, large files are truncated with a marker.

Tool errors are raised as :class:`DemoToolError` (a ``ToolException`` and a ``ValueError``) with a
message written for the model; the agent turns them into observations. The messages and the argument
descriptions exist in Russian (the seed article's language) and English (``lang="ru" | "en"``).

Usage::

    tools = make_demo_tools(db_path="users.sqlite3", root="workspace", lang="en")
    tools[0].invoke({"username": "Ivan", "email": "ivan@test.com"})
    # 'User Ivan registered (email ivan@test.com)'
"""

from __future__ import annotations

import ast
import codecs
import logging
import math
import operator
import os
import re
import sqlite3
import stat
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Literal, TypedDict

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from react_agent._errors import ConfigError
from react_agent._types import FINISH, AgentAction, AgentStep, Example

__all__ = [
    "DEMO_EXAMPLES",
    "MAX_EXPONENT",
    "MAX_EXPRESSION_LENGTH",
    "MAX_FILE_BYTES",
    "MAX_INT_BITS",
    "MAX_SEARCH_LIMIT",
    "MAX_USERNAME_LENGTH",
    "SEED_TASKS",
    "CalculatorError",
    "DemoToolError",
    "FileAccessError",
    "Lang",
    "UserDB",
    "UserExistsError",
    "UserNotFoundError",
    "UserRecord",
    "evaluate_expression",
    "format_number",
    "make_calculator_tool",
    "make_demo_tools",
    "make_read_file_tool",
    "make_register_user_tool",
    "make_search_db_tool",
]

logger = logging.getLogger(__name__)

Lang = Literal["ru", "en"]
"""The language of tool descriptions, argument descriptions, results and error messages."""

# --------------------------------------------------------------------------------------------------
# Limits
# --------------------------------------------------------------------------------------------------

MAX_EXPRESSION_LENGTH = 500
"""Longest expression (in characters) the calculator accepts."""
MAX_EXPONENT = 1000
"""Largest absolute value of an exponent in ``**``."""
MAX_INT_BITS = 10_000
"""Largest integer (in bits, about 3000 decimal digits) the calculator computes or returns."""
MAX_FILE_BYTES = 100_000
"""Default number of bytes ``read_file`` returns; longer files are truncated with a marker."""
MAX_USERNAME_LENGTH = 128
"""Longest username (after stripping surrounding whitespace)."""
MAX_SEARCH_LIMIT = 100
"""Largest ``limit`` of a search."""

_DEFAULT_SEARCH_LIMIT = 5

# --------------------------------------------------------------------------------------------------
# Texts: tool results and error messages, per language (they are observations, not prompts)
# --------------------------------------------------------------------------------------------------

_RESULTS: dict[Lang, dict[str, str]] = {
    "ru": {
        "registered": "Пользователь {username} зарегистрирован (email {email})",
        "registered_phone": "Пользователь {username} зарегистрирован (email {email}, телефон {phone})",
        "found": "Найдено пользователей по запросу '{query}': {count}",
        "found_row": "- {username}: email {email}, телефон {phone}, зарегистрирован {created_at}",
        "no_phone": "не указан",
        "file_empty": "(файл пуст)",
        "file_truncated": "[... файл обрезан: показаны первые {shown} из {size} байт]",
    },
    "en": {
        "registered": "User {username} registered (email {email})",
        "registered_phone": "User {username} registered (email {email}, phone {phone})",
        "found": "Found {count} user(s) matching '{query}'",
        "found_row": "- {username}: email {email}, phone {phone}, registered {created_at}",
        "no_phone": "none",
        "file_empty": "(the file is empty)",
        "file_truncated": "[... truncated: showing the first {shown} of {size} bytes]",
    },
}

_CALC_ALLOWED: dict[Lang, str] = {
    "ru": (
        "Разрешены: числа, + - * / // % ** (степень), скобки, функции sqrt, abs, round, min, max, "
        "log, sin, cos и константы pi, e."
    ),
    "en": (
        "Allowed: numbers, + - * / // % ** (power), parentheses, functions sqrt, abs, round, min, max, "
        "log, sin, cos and constants pi, e."
    ),
}

_ERRORS: dict[Lang, dict[str, str]] = {
    "ru": {
        "user_exists": "пользователь '{username}' уже существует",
        "user_not_found": "пользователь '{username}' не найден",
        "username_empty": "логин не может быть пустым",
        "username_too_long": "логин слишком длинный ({length} символов, максимум {limit})",
        "username_invalid": "логин не должен содержать управляющих символов (переводов строк, табуляций)",
        "email_invalid": "некорректный email '{email}': ожидается адрес вида name@example.com",
        "phone_invalid": (
            "некорректный номер телефона '{phone}': ожидается международный формат +<код страны><номер>, "
            "7-15 цифр, например +7999999999"
        ),
        "limit_invalid": "лимит должен быть от 1 до {limit}, получено {value}",
        "db_error": "ошибка базы данных: {detail}",
        "calc_empty": "пустое выражение",
        "calc_too_long": "выражение слишком длинное ({length} символов, максимум {limit})",
        "calc_syntax": "это не арифметическое выражение ({detail}). " + _CALC_ALLOWED["ru"],
        "calc_not_allowed": "разрешена только арифметика: «{fragment}» не поддерживается. " + _CALC_ALLOWED["ru"],
        "calc_unknown_name": "разрешена только арифметика: неизвестное имя '{name}'. " + _CALC_ALLOWED["ru"],
        "calc_not_called": "'{name}' — функция, её нужно вызвать, например {name}(2)",
        "calc_exponent": "слишком большой показатель степени ({exponent}, по модулю не больше {limit})",
        "calc_too_big": "слишком большой результат (больше {limit} бит)",
        "calc_overflow": "слишком большой результат для вычисления",
        "calc_not_finite": "результат не является конечным числом",
        "calc_not_real": "результат не является вещественным числом",
        "calc_zero_division": "деление на ноль",
        "calc_math": "математическая ошибка: {detail}",
        "calc_args": "неверные аргументы функции '{name}': {detail}",
        "calc_round_digits": "round: число знаков должно быть целым от -{limit} до {limit}",
        "calc_too_complex": "выражение слишком сложное",
        "file_empty_path": "путь к файлу не может быть пустым",
        "file_invalid_path": "некорректный путь '{path}'",
        "file_outside": "путь '{path}' ведёт за пределы разрешённой папки: можно читать только файлы в ней",
        "file_not_found": "файл '{path}' не найден",
        "file_is_dir": "'{path}' — папка, а не файл",
        "file_not_regular": "'{path}' — не обычный файл",
        "file_unreadable": "не удалось прочитать '{path}': {detail}",
    },
    "en": {
        "user_exists": "user '{username}' already exists",
        "user_not_found": "user '{username}' not found",
        "username_empty": "the username must not be empty",
        "username_too_long": "the username is too long ({length} characters, at most {limit})",
        "username_invalid": "the username must not contain control characters (newlines, tabs)",
        "email_invalid": "invalid email '{email}': expected an address like name@example.com",
        "phone_invalid": (
            "invalid phone number '{phone}': expected the international format +<country code><number>, "
            "7-15 digits, e.g. +7999999999"
        ),
        "limit_invalid": "the limit must be between 1 and {limit}, got {value}",
        "db_error": "database error: {detail}",
        "calc_empty": "empty expression",
        "calc_too_long": "the expression is too long ({length} characters, at most {limit})",
        "calc_syntax": "not an arithmetic expression ({detail}). " + _CALC_ALLOWED["en"],
        "calc_not_allowed": "only arithmetic is allowed: `{fragment}` is not supported. " + _CALC_ALLOWED["en"],
        "calc_unknown_name": "only arithmetic is allowed: unknown name '{name}'. " + _CALC_ALLOWED["en"],
        "calc_not_called": "'{name}' is a function: call it, e.g. {name}(2)",
        "calc_exponent": "the exponent is too large ({exponent}, at most {limit} in absolute value)",
        "calc_too_big": "the result is too large (more than {limit} bits)",
        "calc_overflow": "the result is too large to compute",
        "calc_not_finite": "the result is not a finite number",
        "calc_not_real": "the result is not a real number",
        "calc_zero_division": "division by zero",
        "calc_math": "math error: {detail}",
        "calc_args": "wrong arguments for function '{name}': {detail}",
        "calc_round_digits": "round: the number of digits must be an integer from -{limit} to {limit}",
        "calc_too_complex": "the expression is too complex",
        "file_empty_path": "the file path must not be empty",
        "file_invalid_path": "invalid path '{path}'",
        "file_outside": "path '{path}' is outside the allowed folder: only files inside it can be read",
        "file_not_found": "file '{path}' not found",
        "file_is_dir": "'{path}' is a directory, not a file",
        "file_not_regular": "'{path}' is not a regular file",
        "file_unreadable": "cannot read '{path}': {detail}",
    },
}

_TOOL_DESCRIPTIONS: dict[Lang, dict[str, str]] = {
    "ru": {
        "register_user": ("Регистрирует нового пользователя в базе данных: логин, email и, по желанию, телефон."),
        "search_db": (
            "Ищет пользователей в базе данных по логину: сначала точное совпадение, затем логины, "
            "начинающиеся с запроса или содержащие его."
        ),
        "calculator": ("Вычисляет арифметическое выражение и возвращает число. " + _CALC_ALLOWED["ru"]),
        "read_file": (
            "Читает текстовый файл из рабочей папки и возвращает его содержимое. "
            "Путь указывается относительно рабочей папки."
        ),
    },
    "en": {
        "register_user": "Registers a new user in the database: username, email and, optionally, phone.",
        "search_db": (
            "Searches the user database by username: the exact match first, then usernames that start "
            "with or contain the query."
        ),
        "calculator": "Evaluates an arithmetic expression and returns the number. " + _CALC_ALLOWED["en"],
        "read_file": (
            "Reads a text file from the working folder and returns its content. "
            "The path is relative to the working folder."
        ),
    },
}

SEED_TASKS: dict[str, list[str]] = {
    "ru": [
        "Зарегистрируй пользователя Ivan с email ivan@test.com",
        "Зарегистрируй пользователя Viacheslav с email Viacheslav@test.com и найди пользователя Ivan",
    ],
    "en": [
        "Register user Ivan with email ivan@test.com",
        "Register user Viacheslav with email Viacheslav@test.com and find user Ivan",
    ],
}
"""The seed article's tasks for these tools, per language."""


# --------------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------------


class DemoToolError(ToolException, ValueError):
    """An error a demo tool reports to the model (the agent turns it into an observation).

    ``code`` names the error and ``params`` fill its message; :meth:`localized` renders the same
    error in another language. The classes and functions of this module raise English messages;
    the tools re-raise them in the tool's language.
    """

    def __init__(self, code: str, /, *, lang: Lang = "en", **params: object) -> None:
        self.code = code
        self.params: dict[str, object] = params
        self.lang: Lang = lang
        self.message = _ERRORS[lang][code].format(**params)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.code, self.lang, self.params))

    def localized(self, lang: Lang) -> DemoToolError:
        """The same error (same class, code and parameters) with its message in ``lang``."""
        if lang == self.lang:
            return self
        return type(self)(self.code, lang=lang, **self.params)


def _rebuild_error(cls: type[DemoToolError], code: str, lang: Lang, params: dict[str, object]) -> DemoToolError:
    """Unpickle a DemoToolError (its constructor does not take the message)."""
    return cls(code, lang=lang, **params)


class UserExistsError(DemoToolError):
    """``register`` was asked for a username that is already taken."""


class UserNotFoundError(DemoToolError):
    """A search found no user."""


class CalculatorError(DemoToolError):
    """An expression the calculator refuses or cannot compute."""


class FileAccessError(DemoToolError):
    """A path ``read_file`` refuses or cannot read."""


def _check_lang(lang: str) -> Lang:
    if lang == "ru":
        return "ru"
    if lang == "en":
        return "en"
    raise ConfigError(f"unsupported language {lang!r}: use 'ru' or 'en'")


# --------------------------------------------------------------------------------------------------
# UserDB
# --------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------
# Calculator
# --------------------------------------------------------------------------------------------------

Number = int | float

_ROUND_DIGITS_LIMIT = 100


def _check_number(value: object) -> Number:
    """Accept a finite real result of a bounded size, refuse everything else."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise CalculatorError("calc_too_big", limit=MAX_INT_BITS)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalculatorError("calc_not_finite")
        return value
    raise CalculatorError("calc_not_real")


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculatorError("calc_exponent", exponent=format_number(exponent), limit=MAX_EXPONENT)
    # An int result has at least (bits(base) - 1) * exponent + 1 bits: refuse before computing it.
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and (abs(base).bit_length() - 1) * exponent >= MAX_INT_BITS
    ):
        raise CalculatorError("calc_too_big", limit=MAX_INT_BITS)
    return _check_number(base**exponent)


def _round(value: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(value)
    if not isinstance(ndigits, int) or abs(ndigits) > _ROUND_DIGITS_LIMIT:
        raise CalculatorError("calc_round_digits", limit=_ROUND_DIGITS_LIMIT)
    return round(value, ndigits)


_BINARY_OPS: dict[type[ast.operator], Callable[[Number, Number], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
}
_UNARY_OPS: dict[type[ast.unaryop], Callable[[Number], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": _round,
    "min": min,
    "max": max,
    "log": math.log,
    "sin": math.sin,
    "cos": math.cos,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


class _Evaluator:
    """Walks an expression tree, computing only the whitelisted node types."""

    def __init__(self, source: str) -> None:
        self.source = source

    def refuse(self, node: ast.AST) -> CalculatorError:
        fragment = ast.get_source_segment(self.source, node) or type(node).__name__
        if len(fragment) > 60:
            fragment = fragment[:57] + "..."
        return CalculatorError("calc_not_allowed", fragment=fragment)

    def visit(self, node: ast.AST) -> Number:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return _check_number(node.value)
            raise self.refuse(node)
        if isinstance(node, ast.BinOp):
            binary = _BINARY_OPS.get(type(node.op))
            if binary is None:
                raise self.refuse(node)
            left = self.visit(node.left)
            right = self.visit(node.right)
            return _check_number(binary(left, right))
        if isinstance(node, ast.UnaryOp):
            unary = _UNARY_OPS.get(type(node.op))
            if unary is None:
                raise self.refuse(node)
            return _check_number(unary(self.visit(node.operand)))
        if isinstance(node, ast.Name):
            if node.id in _CONSTANTS:
                return _CONSTANTS[node.id]
            if node.id in _FUNCTIONS:
                raise CalculatorError("calc_not_called", name=node.id)
            raise CalculatorError("calc_unknown_name", name=node.id[:60])
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.refuse(node)

    def call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name):
            raise self.refuse(node.func)
        name = node.func.id
        function = _FUNCTIONS.get(name)
        if function is None:
            raise CalculatorError("calc_unknown_name", name=name[:60])
        if node.keywords:
            raise self.refuse(node.keywords[0])
        args: list[Number] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.refuse(arg)
            args.append(self.visit(arg))
        try:
            result = function(*args)
        except TypeError as exc:
            raise CalculatorError("calc_args", name=name, detail=str(exc)) from exc
        return _check_number(result)


def evaluate_expression(expression: str) -> Number:
    """Compute an arithmetic expression without ``eval``: parse it with :mod:`ast`, walk the tree.

    Allowed: ``int``/``float`` literals, ``+ - * / // % **``, unary ``+``/``-``, parentheses, the
    functions ``sqrt abs round min max log sin cos`` (positional arguments only) and the constants
    ``pi`` and ``e``. Everything else (names, attributes, other calls, subscripts, strings, lambdas,
    comprehensions, comparisons...) raises :class:`CalculatorError`, as do expressions longer than
    :data:`MAX_EXPRESSION_LENGTH`, exponents above :data:`MAX_EXPONENT` in absolute value, integers
    above :data:`MAX_INT_BITS` bits, non-finite or complex results, division by zero and math
    domain errors.
    """
    text = expression.strip()
    if not text:
        raise CalculatorError("calc_empty")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CalculatorError("calc_too_long", length=len(text), limit=MAX_EXPRESSION_LENGTH)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError("calc_syntax", detail=exc.msg) from None
    except (ValueError, RecursionError, MemoryError):  # null bytes, absurd nesting
        raise CalculatorError("calc_too_complex") from None
    try:
        return _Evaluator(text).visit(tree.body)
    except CalculatorError:
        raise
    except ZeroDivisionError:
        raise CalculatorError("calc_zero_division") from None
    except OverflowError:  # float overflow, int too large to convert to float
        raise CalculatorError("calc_overflow") from None
    except RecursionError:
        raise CalculatorError("calc_too_complex") from None
    except ValueError as exc:  # math domain error: sqrt(-1), log(0)
        raise CalculatorError("calc_math", detail=str(exc)) from None


def format_number(value: Number) -> str:
    """Render a calculator result: integers exactly, floats with 15 significant digits."""
    if isinstance(value, int):
        return str(value)
    return format(value, ".15g")


# --------------------------------------------------------------------------------------------------
# Confined file reading
# --------------------------------------------------------------------------------------------------


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _read_confined(root: Path, relative: str, max_bytes: int) -> tuple[str, int, bool]:
    """Read ``relative`` under ``root`` (already resolved); return (text, size, truncated)."""
    if not relative.strip():
        raise FileAccessError("file_empty_path")
    shown_path = relative[:200]
    if "\x00" in relative:
        raise FileAccessError("file_invalid_path", path=shown_path.replace("\x00", "\\0"))
    candidate = root / relative  # an absolute ``relative`` replaces the root, and is checked below
    # Decide "outside" before "missing", so that probing paths outside the root learns nothing.
    if not _is_within(Path(os.path.realpath(candidate)), root):
        logger.info("read_file refused %r: outside %s", relative, root)
        raise FileAccessError("file_outside", path=shown_path)
    try:
        resolved = candidate.resolve(strict=True)
    except FileNotFoundError:
        raise FileAccessError("file_not_found", path=shown_path) from None
    except (OSError, RuntimeError) as exc:  # symlink loops, permissions, names too long
        detail = getattr(exc, "strerror", None) or "symbolic link loop"
        raise FileAccessError("file_unreadable", path=shown_path, detail=detail) from None
    if not _is_within(resolved, root):
        logger.info("read_file refused %r: outside %s", relative, root)
        raise FileAccessError("file_outside", path=shown_path)
    # O_NOFOLLOW: the last component must not have become a symlink since it was resolved;
    # O_NONBLOCK: opening a FIFO must not hang (it is then refused as "not a regular file").
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(resolved, flags)
    except OSError as exc:
        detail = exc.strerror or type(exc).__name__
        raise FileAccessError("file_unreadable", path=shown_path, detail=detail) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileAccessError("file_is_dir", path=shown_path)
        if not stat.S_ISREG(info.st_mode):
            raise FileAccessError("file_not_regular", path=shown_path)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    if truncated:
        # Drop a multi-byte character cut in half at the limit instead of showing a replacement char.
        text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data[:max_bytes], final=False)
    else:
        text = data.decode("utf-8", errors="replace")
    return text, max(info.st_size, len(data)), truncated


# --------------------------------------------------------------------------------------------------
# Argument schemas (the agent renders tool descriptions from these)
# --------------------------------------------------------------------------------------------------


class _RegisterUserArgsRu(BaseModel):
    """Аргументы register_user."""

    username: str = Field(description="Логин", examples=["ViacheslavVoo"])
    email: str = Field(description="Email", examples=["Viacheslav@test.com"])
    phone: str | None = Field(default=None, description="Номер телефона в формате +7XXX...", examples=["+7999999999"])


class _RegisterUserArgsEn(BaseModel):
    """Arguments of register_user."""

    username: str = Field(description="Username (login)", examples=["ViacheslavVoo"])
    email: str = Field(description="Email", examples=["Viacheslav@test.com"])
    phone: str | None = Field(default=None, description="Phone number in the format +7XXX...", examples=["+7999999999"])


class _SearchDbArgsRu(BaseModel):
    """Аргументы search_db."""

    username: str = Field(description="Логин/имя пользователя", examples=["Ivan"])
    limit: int | None = Field(
        default=_DEFAULT_SEARCH_LIMIT,
        ge=1,
        le=MAX_SEARCH_LIMIT,
        description="Лимит результатов",
        examples=[5],
    )


class _SearchDbArgsEn(BaseModel):
    """Arguments of search_db."""

    username: str = Field(description="Username or its beginning", examples=["Ivan"])
    limit: int | None = Field(
        default=_DEFAULT_SEARCH_LIMIT,
        ge=1,
        le=MAX_SEARCH_LIMIT,
        description="Maximum number of results",
        examples=[5],
    )


class _CalculatorArgsRu(BaseModel):
    """Аргументы calculator."""

    expression: str = Field(
        description="Арифметическое выражение", examples=["2 + 2 * 3", "sqrt(16) / (1.5 + 0.5) ** 2"]
    )


class _CalculatorArgsEn(BaseModel):
    """Arguments of calculator."""

    expression: str = Field(description="Arithmetic expression", examples=["2 + 2 * 3", "sqrt(16) / (1.5 + 0.5) ** 2"])


class _ReadFileArgsRu(BaseModel):
    """Аргументы read_file."""

    path: str = Field(description="Путь к файлу относительно рабочей папки", examples=["notes.txt"])


class _ReadFileArgsEn(BaseModel):
    """Arguments of read_file."""

    path: str = Field(description="File path relative to the working folder", examples=["notes.txt"])


_SCHEMAS: dict[Lang, dict[str, type[BaseModel]]] = {
    "ru": {
        "register_user": _RegisterUserArgsRu,
        "search_db": _SearchDbArgsRu,
        "calculator": _CalculatorArgsRu,
        "read_file": _ReadFileArgsRu,
    },
    "en": {
        "register_user": _RegisterUserArgsEn,
        "search_db": _SearchDbArgsEn,
        "calculator": _CalculatorArgsEn,
        "read_file": _ReadFileArgsEn,
    },
}

# --------------------------------------------------------------------------------------------------
# Tool factories
# --------------------------------------------------------------------------------------------------


def _tool(name: str, lang: Lang, func: Callable[..., str]) -> StructuredTool:
    return StructuredTool.from_function(
        func=func,
        name=name,
        description=_TOOL_DESCRIPTIONS[lang][name],
        args_schema=_SCHEMAS[lang][name],
    )


def _db_error(exc: sqlite3.Error, lang: Lang) -> DemoToolError:
    logger.exception("user database error")
    return DemoToolError("db_error", lang=lang, detail=str(exc))


def make_register_user_tool(db: UserDB, *, lang: Lang = "ru") -> BaseTool:
    """The ``register_user`` tool bound to ``db``: args ``username``, ``email``, ``phone=None``.

    Returns a confirmation such as ``"User Ivan registered (email ivan@test.com)"``; raises
    :class:`DemoToolError` on an invalid email or phone and :class:`UserExistsError` on a taken
    username.
    """
    lang = _check_lang(lang)

    def register_user(username: str, email: str, phone: str | None = None) -> str:
        try:
            user = db.register(username, email, phone)
        except DemoToolError as exc:
            raise exc.localized(lang) from None
        except sqlite3.Error as exc:
            raise _db_error(exc, lang) from exc
        texts = _RESULTS[lang]
        key = "registered" if user["phone"] is None else "registered_phone"
        return texts[key].format(username=user["username"], email=user["email"], phone=user["phone"])

    return _tool("register_user", lang, register_user)


def make_search_db_tool(db: UserDB, *, lang: Lang = "ru") -> BaseTool:
    """The ``search_db`` tool bound to ``db``: args ``username``, ``limit=5`` (1..100).

    Returns a header line and one line per user (exact match first); raises
    :class:`UserNotFoundError` when nothing matches.
    """
    lang = _check_lang(lang)

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
        texts = _RESULTS[lang]
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

    return _tool("search_db", lang, search_db)


def make_calculator_tool(*, lang: Lang = "ru") -> BaseTool:
    """The ``calculator`` tool: arg ``expression``; returns the number as text (see
    :func:`evaluate_expression` for what is allowed and :func:`format_number` for the rendering)."""
    lang = _check_lang(lang)

    def calculator(expression: str) -> str:
        try:
            value = evaluate_expression(expression)
        except DemoToolError as exc:
            logger.debug("calculator refused %r: %s", expression[:100], exc.code)
            raise exc.localized(lang) from None
        return format_number(value)

    return _tool("calculator", lang, calculator)


def make_read_file_tool(
    root: str | os.PathLike[str], *, lang: Lang = "ru", max_bytes: int = MAX_FILE_BYTES
) -> BaseTool:
    """The ``read_file`` tool confined to the folder ``root``: arg ``path`` (relative to ``root``).

    The path is resolved with every symlink followed and must stay inside the (resolved) root:
    ``..``, absolute paths elsewhere, symlinks and symlinked folders pointing outside are refused,
    as are directories and non-regular files. The content is decoded as UTF-8 (invalid bytes become
    U+FFFD); a file longer than ``max_bytes`` is cut there and a ``[... truncated ...]`` marker line
    is appended. The root must exist when the tool is made (:class:`ConfigError` otherwise).
    Assumes nobody swaps folders inside the root for symlinks while a read is in progress.
    """
    lang = _check_lang(lang)
    if max_bytes < 1:
        raise ConfigError(f"max_bytes must be positive, got {max_bytes}")
    try:
        resolved_root = Path(root).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"read_file root {os.fspath(root)!r} does not exist: {exc}") from exc
    if not resolved_root.is_dir():
        raise ConfigError(f"read_file root {os.fspath(root)!r} is not a directory")

    def read_file(path: str) -> str:
        try:
            text, size, truncated = _read_confined(resolved_root, path, max_bytes)
        except DemoToolError as exc:
            raise exc.localized(lang) from None
        texts = _RESULTS[lang]
        if truncated:
            return text + "\n" + texts["file_truncated"].format(shown=max_bytes, size=size)
        return text if text else texts["file_empty"]

    return _tool("read_file", lang, read_file)


def make_demo_tools(
    *,
    db_path: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    lang: Lang = "ru",
) -> list[BaseTool]:
    """The demo tool set: ``[register_user, search_db, calculator]``, plus ``read_file`` if ``root``
    is given. The two database tools share one :class:`UserDB` at ``db_path`` (created if missing).
    """
    lang = _check_lang(lang)
    db = UserDB(db_path)
    tools = [
        make_register_user_tool(db, lang=lang),
        make_search_db_tool(db, lang=lang),
        make_calculator_tool(lang=lang),
    ]
    if root is not None:
        tools.append(make_read_file_tool(root, lang=lang))
    return tools


# --------------------------------------------------------------------------------------------------
# Few-shot examples for small models
# --------------------------------------------------------------------------------------------------

_EXAMPLE_USER = {"username": "Anna", "email": "anna@mail.org"}
_EXAMPLE_CREATED_AT = "2025-01-01T10:00:00Z"
_EXAMPLE_EXPRESSION = "12 * 3"

_EXAMPLE_TEXTS: dict[Lang, dict[str, str]] = {
    "ru": {
        "calc_task": "Сколько будет 12 * 3?",
        "calc": "Нужно вычислить 12 * 3.",
        "computed": "Результат получен, задача решена.",
        "register_task": "Зарегистрируй пользователя Anna с email anna@mail.org",
        "register": "Нужно зарегистрировать Anna.",
        "registered": "Anna зарегистрирована, задача решена.",
        "registered_answer": "Пользователь Anna зарегистрирован.",
        "find_task": "Найди пользователя Anna",
        "find": "Нужно найти Anna.",
        "found": "Anna найдена, задача решена.",
        "found_answer": "Anna: email anna@mail.org.",
    },
    "en": {
        "calc_task": "What is 12 * 3?",
        "calc": "I must compute 12 * 3.",
        "computed": "I have the result, the task is done.",
        "register_task": "Register user Anna with email anna@mail.org",
        "register": "I must register Anna.",
        "registered": "Anna is registered, the task is done.",
        "registered_answer": "User Anna is registered.",
        "find_task": "Find user Anna",
        "find": "I must find Anna.",
        "found": "Anna is found, the task is done.",
        "found_answer": "Anna: email anna@mail.org.",
    },
}


def _called(action: AgentAction, observation: str) -> AgentStep:
    return AgentStep(thought=action.thought, action=action.action, action_input=action.action_input,
                     observation=observation)


def _demo_examples(lang: Lang) -> list[Example]:
    """Compute 12 * 3, FINISH with the result; register Anna, FINISH after her registration; find Anna, FINISH
    after finding her. The observations are made by this module's own code and result messages, so they are
    exactly what the tools return (the registration date aside)."""
    texts, results = _EXAMPLE_TEXTS[lang], _RESULTS[lang]
    calc = AgentAction(thought=texts["calc"], action="calculator", action_input={"expression": _EXAMPLE_EXPRESSION})
    product = format_number(evaluate_expression(_EXAMPLE_EXPRESSION))
    register = AgentAction(thought=texts["register"], action="register_user", action_input=dict(_EXAMPLE_USER))
    registered = results["registered"].format(**_EXAMPLE_USER)
    find = AgentAction(thought=texts["find"], action="search_db", action_input={"username": "Anna"})
    found = "\n".join([
        results["found"].format(query="Anna", count=1),
        results["found_row"].format(**_EXAMPLE_USER, phone=results["no_phone"], created_at=_EXAMPLE_CREATED_AT),
    ])
    return [
        Example(task=texts["calc_task"], answer=calc),
        Example(task=texts["calc_task"], steps=[_called(calc, product)],
                answer=AgentAction(thought=texts["computed"], action=FINISH,
                                   action_input=f"{_EXAMPLE_EXPRESSION} = {product}")),
        Example(task=texts["register_task"], answer=register),
        Example(task=texts["register_task"], steps=[_called(register, registered)],
                answer=AgentAction(thought=texts["registered"], action=FINISH,
                                   action_input=texts["registered_answer"])),
        Example(task=texts["find_task"], answer=find),
        Example(task=texts["find_task"], steps=[_called(find, found)],
                answer=AgentAction(thought=texts["found"], action=FINISH, action_input=texts["found_answer"])),
    ]


DEMO_EXAMPLES: dict[str, list[Example]] = {"ru": _demo_examples("ru"), "en": _demo_examples("en")}
"""Few-shot examples for the demo tools, per language, in pairs (the call with no history yet, then FINISH
after the observation the tool really returns): compute ``12 * 3`` with ``calculator``, register Anna with
``register_user``, find Anna with ``search_db``. For a small model, with a compact prompt set:
``ReactAgent(llm, make_demo_tools(...), prompts="en-compact", examples=DEMO_EXAMPLES["en"])``."""
