"""Tool results as text for the model. Rendering never fails, whatever a tool returns or raises.

- ``str``: as is. ``None``: ``null``. ``bytes``: the text when it is UTF-8, else a size summary.
- Content blocks (what MCP tools and LangChain content-block tools return): the text parts joined by
  newlines, ids and other metadata dropped, every other part summarised, e.g.
  ``[image: image/png, 1234 bytes]``.
- A raw MCP ``CallToolResult`` (or its JSON) is read the same way; ``isError`` makes it an error.
- A LangChain message (``ToolMessage``): its content; ``status="error"`` makes it an error.
- pydantic models, dataclasses, mappings, sequences, numbers: compact JSON (``ensure_ascii=False``).
- Anything else, or anything whose rendering raises (a ``__str__`` that raises, an integer too large
  to print, a structure nested too deep): ``str()``, then ``repr()``, then a text naming the type.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

__all__ = ["error_text", "result_error", "safe_str", "short_repr", "stringify", "tool_outcome"]

_TEXT_TYPES = frozenset({"text", "text-plain", "input_text", "output_text"})
_MEDIA_TYPES = frozenset({"image", "image_url", "file", "audio", "video", "document", "resource_link"})
_OTHER_TYPES = frozenset({"json", "resource", "search_result", "custom_tool_call_output"})
_BLOCK_TYPES = _TEXT_TYPES | _MEDIA_TYPES | _OTHER_TYPES


def type_name(obj: object) -> str:
    """The name of ``obj``'s type, even for hostile classes."""
    try:
        return str(type(obj).__qualname__)
    except Exception:
        return "object"


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` in at most ``limit`` characters (cut with ``...``), for an error message; a value whose
    ``repr`` raises is named by its type."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def safe_str(obj: object) -> str:
    """``str(obj)``; if that raises, ``repr(obj)``; if that raises too, a text naming the type."""
    for render in (str, repr):
        try:
            text = render(obj)
        except Exception:  # a hostile __str__/__repr__, an int too large to print, too deep nesting
            continue
        if isinstance(text, str):
            return text
    return f"<{type_name(obj)} object that cannot be shown as text>"


def error_text(exc: BaseException) -> str:
    """An exception as one observation text: its message, or its type name when it has none.

    Never raises: an exception whose ``__str__`` raises is described by ``repr()`` or its type.
    """
    try:
        text = str(exc)
    except Exception:
        return f"{type_name(exc)} (its message cannot be shown as text)"
    if not isinstance(text, str):
        return type_name(exc)
    return text.strip() or type_name(exc)


def stringify(result: Any) -> str:
    """A tool result as observation text (see the module docstring). Never raises."""
    try:
        return _render(result)
    except Exception:
        return safe_str(result)


def result_error(result: Any) -> str | None:
    """The error text when ``result`` reports a failure (MCP ``isError``, a ``ToolMessage`` with
    ``status="error"``, an awaitable nobody ran), else ``None``. Never raises."""
    try:
        if isinstance(result, BaseMessage):
            return stringify(result.content) if getattr(result, "status", None) == "error" else None
        mcp = _mcp_result(result)
        if mcp is not None and mcp[1]:
            return _blocks_text(mcp[0]) if mcp[0] else "the MCP tool reported an error with no content"
        if _is_awaitable(result):
            return f"the tool returned {type_name(result)} that was never awaited"
    except Exception:
        return None
    return None


def tool_outcome(result: Any) -> tuple[str, bool]:
    """``(observation text, is_error)`` for a value a tool returned. Never raises."""
    error = result_error(result)
    return (error, True) if error is not None else (stringify(result), False)


# -- rendering ---------------------------------------------------------------------------------------


def _render(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, BaseMessage):
        return _render(result.content)
    if isinstance(result, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(result))
    mcp = _mcp_result(result)
    if mcp is not None:
        return _blocks_text(mcp[0])
    if _is_blocks(result):
        return _blocks_text(result)
    if _is_awaitable(result):
        return f"<{type_name(result)} that was never awaited>"
    return json.dumps(result, ensure_ascii=False, default=_jsonable)


def _jsonable(obj: Any) -> Any:
    """``json.dumps`` fallback: a JSON-able stand-in for one value json cannot encode."""
    try:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return _bytes_text(bytes(obj))
        if isinstance(obj, (set, frozenset)):
            return list(obj)
        if isinstance(obj, enum.Enum):
            return obj.value
        if isinstance(obj, (datetime.date, datetime.time)):
            return obj.isoformat()
    except Exception:
        pass
    return safe_str(obj)


def _bytes_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"[binary data: {len(data)} bytes]"


def _is_awaitable(obj: Any) -> bool:
    return hasattr(type(obj), "__await__")


# -- content blocks ----------------------------------------------------------------------------------


def _is_block(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type")
    if kind in _TEXT_TYPES:
        return isinstance(item.get("text"), str)
    return kind in _BLOCK_TYPES


def _is_blocks(value: Any) -> bool:
    """A list of content blocks: every item a block (or a plain string), at least one block."""
    if not isinstance(value, (list, tuple)) or not value:
        return False
    return all(isinstance(i, str) or _is_block(i) for i in value) and any(not isinstance(i, str) for i in value)


def _blocks_text(blocks: Sequence[Any]) -> str:
    parts = []
    for block in blocks:
        item = block.model_dump(mode="json") if isinstance(block, BaseModel) else block
        text = item if isinstance(item, str) else _block_text(item) if isinstance(item, Mapping) else None
        parts.append(text if text is not None else safe_str(item))
    return "\n".join(parts)


def _block_text(block: Mapping[str, Any]) -> str:
    kind = str(block.get("type", "block"))
    if kind in _TEXT_TYPES or (kind not in _MEDIA_TYPES and isinstance(block.get("text"), str)):
        return str(block.get("text", ""))
    if kind == "json":
        return json.dumps(block.get("json"), ensure_ascii=False, default=_jsonable)
    if kind == "resource" and isinstance(block.get("resource"), Mapping):  # MCP embedded resource
        resource = block["resource"]
        if isinstance(resource.get("text"), str):
            return str(resource["text"])
        return _summary("resource", resource)
    if kind == "image_url":
        return _summary("image", {"url": _nested(block, "image_url", "url")})
    return _summary(kind, block)


def _summary(kind: str, block: Mapping[str, Any]) -> str:
    """``[image: image/png, 1234 bytes]``, ``[file: application/pdf, https://...]``."""
    raw_source = block.get("source")
    source: Mapping[str, Any] = raw_source if isinstance(raw_source, Mapping) else {}
    mime = block.get("mime_type") or block.get("mimeType") or source.get("media_type")
    data = block.get("base64") or block.get("data") or block.get("blob") or source.get("data")
    url = block.get("url") or block.get("uri") or source.get("url")
    where: str | None = None
    if isinstance(url, str) and url.startswith("data:"):
        header, _, payload = url.partition(",")
        mime = mime or header[5:].split(";")[0] or None
        data = payload if ";base64" in header else None
        where = None if data else "inline data"
    elif isinstance(url, str) and url:
        where = url
    elif block.get("file_id"):
        where = f"file id {block['file_id']}"
    details = [str(mime)] if mime else []
    if isinstance(data, str) and data:
        details.append(f"{_base64_size(data)} bytes")
    if where:
        details.append(where)
    return f"[{kind}: {', '.join(details)}]" if details else f"[{kind}]"


def _base64_size(data: str) -> int:
    stripped = data.strip()
    return max(0, len(stripped) * 3 // 4 - stripped[-2:].count("="))


def _nested(block: Mapping[str, Any], key: str, inner: str) -> Any:
    value = block.get(key)
    return value.get(inner) if isinstance(value, Mapping) else value


def _mcp_result(value: Any) -> tuple[list[Any], bool] | None:
    """``(content, is_error)`` of an MCP ``CallToolResult`` (the object or its JSON), else ``None``.

    A result with no content but ``structuredContent`` gets that object, as one JSON block, for content.
    """
    if isinstance(value, Mapping):
        content, flag, structured = value.get("content"), value.get("isError"), value.get("structuredContent")
        extra = set(value) - {"content", "isError", "structuredContent", "_meta", "meta"}
    elif isinstance(value, BaseModel):
        content, flag, extra = getattr(value, "content", None), getattr(value, "isError", None), set()
        structured = getattr(value, "structuredContent", None)
    else:
        return None
    if not isinstance(content, list) or not isinstance(flag, bool) or extra:
        return None
    if not content and structured is not None:
        content = [{"type": "json", "json": structured}]
    return content, flag
