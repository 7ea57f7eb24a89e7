"""Demo tools for agents: a real SQLite user registry, a safe calculator and a confined file reader.

These are the tools of the demo tasks ("register a user, then find him"), built to be run by a model
that makes mistakes and, sometimes, by a prompt that tries to abuse them:

* ``register_user`` / ``search_db`` (:mod:`react_agent.demo.users`) work on :class:`UserDB`, an SQLite
  file with a ``users`` table. Every query is parameterised; ``LIKE`` wildcards typed by the model are
  matched literally. A connection is opened per call, so the tools may run in worker threads.
* ``calculator`` (:mod:`react_agent.demo.calculator`) parses the expression with :mod:`ast` and walks the
  tree itself; nothing is ever passed to ``eval``/``exec``, and the cost is bounded.
* ``read_file`` (:mod:`react_agent.demo.files`) reads a UTF-8 text file under one root folder; ``..``,
  absolute paths and symlinks that lead outside the root are refused, large files are truncated.
* :data:`SEED_TASKS` and :data:`DEMO_EXAMPLES` (:mod:`react_agent.demo.examples`): the demo
  tasks and few-shot examples for small models, per language, built on first use.

Tool errors are raised as :class:`DemoToolError` (a ``ToolException`` and a ``ValueError``) with a
message written for the model; the agent turns them into observations. Every text a tool shows (its
description, its arguments' descriptions, results and error messages) is data, in
``react_agent/demo/strings/ru.json`` (the default language) and ``en.json`` (``lang="ru" | "en"``),
read when a language is first used. Importing this package reads no file and builds no example.

Usage::

    tools = make_demo_tools(db_path="users.sqlite3", root="workspace", lang="en")
    tools[0].invoke({"username": "Ivan", "email": "ivan@test.com"})
    # 'User Ivan registered (email ivan@test.com)'
"""

from __future__ import annotations

from react_agent.demo._common import DemoToolError, Lang
from react_agent.demo.calculator import (
    MAX_EXPONENT,
    MAX_EXPRESSION_LENGTH,
    MAX_INT_BITS,
    CalculatorError,
    evaluate_expression,
    format_number,
    make_calculator_tool,
)
from react_agent.demo.examples import DEMO_EXAMPLES, SEED_TASKS
from react_agent.demo.files import MAX_FILE_BYTES, FileAccessError, make_read_file_tool
from react_agent.demo.tools import make_demo_tools
from react_agent.demo.users import (
    MAX_SEARCH_LIMIT,
    MAX_USERNAME_LENGTH,
    UserDB,
    UserExistsError,
    UserNotFoundError,
    UserRecord,
    make_register_user_tool,
    make_search_db_tool,
)

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
