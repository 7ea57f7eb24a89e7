"""The agent options a model's profile implies when the user did not give them.

A model may declare ``agent_profile``; ``"compact"`` (``LocalChatModel`` on a base model) means a small model: an
agent given no ``prompts=`` uses the compact prompt set of its language, and one given no ``examples=`` the worked
examples ``examples_for_tools`` generates from its tools' schemas. ``"chat"`` (``LocalChatModel`` on an instruct
model with a chat template) adds ``history_layout="messages"``: the decisions follow the prompt as chat turns.
Options the user gives always win.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from react_agent.errors import ConfigError
from react_agent.models import agent_profile
from react_agent.tools import examples_for_tools

__all__ = ["PROFILES", "profile_options"]

logger = logging.getLogger(__name__)

PROFILES = ("compact", "chat")
"""The profiles a model may declare."""


def profile_options(llm: Any, tools: Sequence[Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with what the profile of ``llm``'s model adds (``tools``: the registry's tool objects)."""
    profile = agent_profile(llm)
    if profile not in PROFILES:
        return dict(options)
    out = dict(options)
    lang = options.get("lang") or _language(options.get("prompts")) or "ru"
    if "prompts" not in options:
        out["prompts"] = f"{lang}-compact"
    if profile == "chat" and "history_layout" not in options:
        out["history_layout"] = "messages"
    if "examples" not in options:
        try:
            out["examples"] = examples_for_tools(list(tools), lang=lang)
        except ConfigError as exc:  # a schema no example can be made for: the agent works without examples
            logger.debug("no worked examples for these tools: %s", exc)
    return out


def _language(prompts: Any) -> str | None:
    """The language of a built-in prompt-set name (``"en"``, ``"en-compact"``), else ``None``."""
    base = prompts.split("-", 1)[0] if isinstance(prompts, str) else None
    return base if base in ("ru", "en") else None
