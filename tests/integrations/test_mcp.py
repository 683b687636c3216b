"""toolrepair.integrations.mcp against a real MCP server: in process (memory) and over stdio (subprocess)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolrepair as tr
from toolrepair.integrations.mcp import MCPToolError, tools_from_session

mcp = pytest.importorskip("mcp")

SERVER = Path(__file__).with_name("mcp_server.py")
sys.path.insert(0, str(SERVER.parent))
from mcp_server import build_server  # noqa: E402


async def _exercise(session: Any, hermes: Callable[[str, str], str]) -> None:
    specs = await tools_from_session(session)
    assert [s.name for s in specs] == ["web_search", "read_file"]
    assert specs[0].parameters["required"] == ["query"] and specs[0].description == "Search the web."
    registry = tr.ToolRegistry(specs)

    # Name drift (and a string where the schema wants an integer).
    drift = await registry.arun({"id": "c1", "name": "WebSearch", "arguments": '{"query": "cats", "limit": "5"}'})
    assert (drift.ok, drift.content, drift.call.name, drift.call.id) == (True, "5 results for cats", "web_search", "c1")

    # A call written as text.
    [salvaged] = registry.salvage("Checking. " + hermes("web_search", '{"query": "otters"}')).calls
    assert (await registry.arun(salvaged)).content == "3 results for otters"

    # An unknown name never reaches the server.
    unknown = await registry.arun({"name": "delete_repo", "arguments": {}})
    assert not unknown.ok
    assert unknown.content == "Tool 'delete_repo' not found. Available tools: ['read_file', 'web_search']"

    # Bad arguments are answered from the server's inputSchema, before any round trip.
    bad = await registry.arun({"name": "web_search", "arguments": {"limit": "many"}})
    assert not bad.ok and bad.error.kind == "arguments"
    assert bad.content.endswith("Expected parameters for 'web_search' — required: ['query'], optional: ['limit'].")

    # A tool error (isError) is a failed outcome carrying the server's text.
    failed = await registry.arun({"name": "read_file", "arguments": {"path": "/nope"}})
    assert not failed.ok and failed.error.kind == "tool-error"
    assert "No such file: /nope" in failed.content
    assert isinstance(failed.error.__cause__, MCPToolError)
    with pytest.raises(tr.ToolExecutionError, match="No such file: /x"):
        await registry.aexecute("read_file", {"path": "/x"})


def test_in_process(hermes) -> None:
    async def main() -> None:
        if hasattr(mcp, "Client"):  # mcp 2.x: the high-level client connects to a server object
            async with mcp.Client(build_server()) as client:
                await _exercise(client, hermes)
                await _exercise(client.session, hermes)  # the ClientSession underneath
        else:  # mcp 1.x: a ClientSession over memory streams
            from mcp.shared.memory import create_connected_server_and_client_session

            async with create_connected_server_and_client_session(build_server()._mcp_server) as session:
                await _exercise(session, hermes)

    asyncio.run(main())


def test_over_stdio_with_client_session(hermes) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=dict(os.environ))

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await _exercise(session, hermes)

    asyncio.run(main())


class PagedSession:
    """A session in the wire shapes of mcp 1.x (camelCase mappings), listing its tools in pages."""

    def __init__(self) -> None:
        self.cursors: list[Any] = []

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        self.cursors.append(cursor)
        if cursor is None:
            return {
                "tools": [
                    {
                        "name": "structured",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"x": {"type": "integer"}},
                            "required": ["x"],
                            "additionalProperties": False,
                        },
                    }
                ],
                "nextCursor": "page-2",
            }
        return {"tools": [{"name": "images", "description": 7, "inputSchema": None}], "nextCursor": None}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "structured":
            return {"content": [], "structuredContent": {"x": arguments["x"]}, "isError": False}
        return {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "isError": False}


def test_paged_listings_and_results_that_are_not_text() -> None:
    session = PagedSession()

    async def main() -> None:
        specs = await tools_from_session(session)
        assert [s.name for s in specs] == ["structured", "images"] and session.cursors == [None, "page-2"]
        assert specs[1].parameters == {"type": "object"} and specs[1].description == ""
        registry = tr.ToolRegistry(specs)
        assert (await registry.arun({"name": "structured", "arguments": {"x": "4"}})).value == {"x": 4}
        assert (await registry.arun({"name": "images", "arguments": {}})).value == [
            {"type": "image", "data": "AA==", "mimeType": "image/png"}
        ]
        # A closed schema binds exactly its properties.
        assert not (await registry.arun({"name": "structured", "arguments": {"x": 1, "y": 2}})).ok

    asyncio.run(main())
