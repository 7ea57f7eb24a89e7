"""The compared frameworks' own pieces, taken from the installed packages (no copies where avoidable)."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from typing import Any

from bench import _common


def langchain_json_chat_texts() -> tuple[str, str]:
    """The system and human templates of ``create_json_chat_agent``'s hub-free default prompt.

    langchain-classic ships no prompt object for the JSON chat agent (the hub's
    ``hwchase17/react-chat-json`` is fetched over the network); its docstring spells the same prompt
    out as Python source. That source is read from the installed function's docstring and evaluated
    as the string literals it contains, so the text is exactly the installed version's.
    """
    base = _common.require("langchain_classic.agents.json_chat.base", "langchain-classic")
    doc = inspect.cleandoc(base.create_json_chat_agent.__doc__ or "")
    texts = []
    for name in ("system", "human"):
        match = re.search(rf"^(\s*){name} = ('''.*?''')", doc, re.S | re.M)
        if match is None:
            raise RuntimeError(f"create_json_chat_agent's docstring no longer holds the {name!r} template")
        indent = match.group(1).strip("\n")
        source = match.group(2)
        first, _, rest = source.partition("\n")
        rest = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                         for line in rest.split("\n"))
        texts.append(ast.literal_eval(first + "\n" + textwrap.dedent(rest) if rest else first))
    return texts[0], texts[1]


def langchain_json_chat_prompt() -> Any:
    """The ``ChatPromptTemplate`` the JSON chat agent docstring builds (system, history, human, scratchpad)."""
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    system, human = langchain_json_chat_texts()
    return ChatPromptTemplate.from_messages([
        ("system", system),
        MessagesPlaceholder("chat_history", optional=True),
        ("human", human),
        MessagesPlaceholder("agent_scratchpad"),
    ])


def messages_text(messages: Any) -> str:
    """Messages as the plain document a base model reads (react_agent.models.render_plain's rule)."""
    parts = []
    for m in messages:
        content = m.content
        if isinstance(content, list):
            content = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
        parts.append(str(content))
    return "\n\n".join(parts)
