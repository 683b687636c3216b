"""toolrepair.integrations.mcp on result kinds beyond text, against a real in-process server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolrepair as tr
from toolrepair.integrations.mcp import tools_from_session

mcp = pytest.importorskip("mcp")
server_mod = pytest.importorskip("mcp.server.mcpserver")

PNG = bytes.fromhex("89504e470d0a1a0a")


def build_server() -> Any:
    server = server_mod.MCPServer("toolrepair-results")

    @server.tool()
    def picture() -> Any:
        """A picture: image content only, no text."""
        return server_mod.Image(data=PNG, format="png")

    @server.tool(name="odd-keys")
    def odd_keys(**kwargs: Any) -> str:
        """Takes any keyword (its schema is open)."""
        return "ok"

    return server


def test_image_results_come_back_as_content_blocks() -> None:
    async def main() -> None:
        async with mcp.Client(build_server()) as client:
            specs = {s.name: s for s in await tools_from_session(client)}
            registry = tr.ToolRegistry(specs.values())
            outcome = await registry.arun({"name": "picture", "arguments": {}})
            assert outcome.ok, outcome.content
            [block] = outcome.value
            assert block["type"] == "image" and block["mimeType"] == "image/png"
            assert "picture" in registry.names and "odd-keys" in registry.names

    asyncio.run(main())
