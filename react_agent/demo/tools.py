"""The demo tool set in one call: :func:`make_demo_tools`."""

from __future__ import annotations

import os

from langchain_core.tools import BaseTool

from react_agent.demo._common import Lang, check_lang
from react_agent.demo.calculator import make_calculator_tool
from react_agent.demo.files import make_read_file_tool
from react_agent.demo.users import UserDB, make_register_user_tool, make_search_db_tool

__all__ = ["make_demo_tools"]


def make_demo_tools(
    *,
    db_path: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    lang: Lang = "ru",
) -> list[BaseTool]:
    """The demo tool set: ``[register_user, search_db, calculator]``, plus ``read_file`` if ``root``
    is given. The two database tools share one :class:`UserDB` at ``db_path`` (created if missing).
    """
    lang = check_lang(lang)
    db = UserDB(db_path)
    tools = [
        make_register_user_tool(db, lang=lang),
        make_search_db_tool(db, lang=lang),
        make_calculator_tool(lang=lang),
    ]
    if root is not None:
        tools.append(make_read_file_tool(root, lang=lang))
    return tools
