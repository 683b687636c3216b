"""Tools shared by the framework suites: one that works, one that fails, nothing else."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import toolrepair as tr


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    return f"{limit} results for {query}"


def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


HERMES = '<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'


@pytest.fixture
def registry() -> tr.ToolRegistry:
    return tr.ToolRegistry([web_search, read_file])


@pytest.fixture
def hermes() -> Callable[[str, str], str]:
    """A tool call written as text, the way Hermes-style local models write them."""
    return lambda name, arguments: HERMES.format(name=name, arguments=arguments)


@pytest.fixture
def tool_functions() -> list[Callable[..., str]]:
    return [web_search, read_file]
