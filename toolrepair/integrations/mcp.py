"""MCP: a connected session's tools as ``ToolSpec``s, called through the session.

>>> async def main(session):                                   # doctest: +SKIP
...     registry = tr.ToolRegistry(await tools_from_session(session))
...     outcome = await registry.arun({"name": "Add", "arguments": '{"a": 1, "b": "2"}'})

Works with ``mcp.Client`` and ``mcp.ClientSession`` (mcp 1.x and 2.x field spellings alike).
The schema is the server's ``inputSchema``; a result with ``isError`` raises ``MCPToolError``
carrying the server's text, which ``ToolRegistry`` turns into a ``ToolExecutionError`` (or a
failed ``ToolOutcome``) whose message is that text.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from .._types import ToolSpec
from ._common import require

__all__ = ["MCPToolError", "tools_from_session"]

# A server that keeps handing out cursors is cut off here rather than listed forever.
_MAX_PAGES = 100


class MCPToolError(RuntimeError):
    """An MCP tool result with ``isError`` set; ``str()`` is the server's text, ``.result`` the result."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


def _field(obj: Any, *names: str) -> Any:
    # mcp 2 spells fields snake_case (input_schema); mcp 1 used the wire names (inputSchema).
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


async def _list_page(session: Any, cursor: str | None) -> Any:
    if cursor is None:
        return await session.list_tools()
    params = inspect.signature(session.list_tools).parameters
    if "cursor" in params:  # mcp.Client, and ClientSession in mcp 1.x
        return await session.list_tools(cursor=cursor)
    types = require("mcp.types", "mcp")  # ClientSession in mcp 2.x takes request params
    return await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))


async def tools_from_session(session: Any) -> list[ToolSpec]:
    """Every tool the server lists (all pages), each a ``ToolSpec`` that calls ``session.call_tool``."""
    require("mcp", "mcp")
    specs: list[ToolSpec] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await _list_page(session, cursor)
        for tool in _field(page, "tools") or []:
            specs.append(_spec(session, tool))
        cursor = _field(page, "next_cursor", "nextCursor")
        if not cursor:
            break
    return specs


def _spec(session: Any, tool: Any) -> ToolSpec:
    name: str = _field(tool, "name")
    schema = _field(tool, "input_schema", "inputSchema")
    schema = dict(schema) if isinstance(schema, Mapping) else {"type": "object"}

    async def call(**arguments: Any) -> Any:
        result = await session.call_tool(name, arguments)
        text = _text(result)
        if _field(result, "is_error", "isError"):
            raise MCPToolError(text or f"Tool {name!r} failed.", result)
        if text is not None:
            return text
        structured = _field(result, "structured_content", "structuredContent")
        if structured is not None:
            return structured
        return [_dump(block) for block in _field(result, "content") or []]

    call.__name__ = name
    # The registry reads parameter hints and binds arguments through the signature: give it
    # the schema's, not `**arguments`.
    call.__signature__ = _signature_from_schema(schema)  # type: ignore[attr-defined]
    description = _field(tool, "description")
    return ToolSpec(name, schema, description if isinstance(description, str) else "", call)


def _text(result: Any) -> str | None:
    """The result's text blocks joined, or None when it has only other kinds of content."""
    texts = [_field(block, "text") for block in _field(result, "content") or [] if _field(block, "type") == "text"]
    parts = [t for t in texts if isinstance(t, str)]
    return "\n".join(parts) if parts else None


def _dump(block: Any) -> Any:
    dump = getattr(block, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else block


def _signature_from_schema(schema: Mapping[str, Any]) -> inspect.Signature:
    props = schema.get("properties")
    names = [n for n in props if isinstance(n, str) and n.isidentifier()] if isinstance(props, Mapping) else []
    given = schema.get("required")
    required: list[Any] = given if isinstance(given, list) else []
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter(n, kw) for n in names if n in required]
    params += [inspect.Parameter(n, kw, default=None) for n in names if n not in required]
    if schema.get("additionalProperties") is not False or len(names) != len(props or {}):
        # Open schemas (and property names that are not identifiers) take any keyword.
        params.append(inspect.Parameter("_toolrepair_more", inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(params)
