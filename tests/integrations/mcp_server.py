"""A tiny MCP server for the integration tests: run as a script it serves over stdio."""

from __future__ import annotations

from typing import Any


def build_server() -> Any:
    try:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer as Server
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]
        from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

    server = Server("toolrepair-demo")

    @server.tool()
    def web_search(query: str, limit: int = 3) -> str:
        """Search the web."""
        return f"{limit} results for {query}"

    @server.tool()
    def read_file(path: str) -> str:
        """Read a file."""
        raise ToolError(f"No such file: {path}")

    return server


if __name__ == "__main__":
    build_server().run()
