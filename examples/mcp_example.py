"""An MCP server's tools behind a ToolRegistry: repaired calls, corrective errors, isError as a tool error.

    python examples/mcp_example.py

Offline: the server runs in process. Needs `pip install 'toolrepair[mcp]'` (mcp 2.x: MCPServer, mcp.Client).
"""

from __future__ import annotations

import asyncio
import logging

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

import toolrepair as tr
from toolrepair.integrations.mcp import tools_from_session

server = MCPServer("files")


@server.tool()
def read_file(path: str, max_lines: int = 10) -> str:
    """Read the first lines of a file."""
    if path != "README.md":
        raise ToolError(f"No such file: {path}")
    return "\n".join(["# toolrepair", "Repairs LLM tool calls."][:max_lines])


CALLS = [
    {"name": "ReadFile", "arguments": "{'path': 'README.md', 'max_lines': '1',}"},  # drift + broken JSON
    {"name": "read_file", "arguments": {"path": "secrets.txt"}},  # the server answers isError
    {"name": "read_file", "arguments": {"max_lines": 3}},  # missing the required path
    {"name": "delete_file", "arguments": {"path": "README.md"}},  # not offered
]


async def main() -> None:
    logging.getLogger("mcp").setLevel(logging.ERROR)  # the server logs each failed tool at INFO
    async with Client(server) as client:
        registry = tr.ToolRegistry(await tools_from_session(client))
        for call in CALLS:
            outcome = await registry.arun(call)
            print(f"{'ok ' if outcome.ok else 'ERR'} {call['name']}: {outcome.content}")


if __name__ == "__main__":
    asyncio.run(main())
