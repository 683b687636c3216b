"""repair_tool_selections on the tool-call shapes other LLM classes leave in additional_kwargs."""

from __future__ import annotations

from typing import Any

import pytest

import toolrepair as tr
from toolrepair.integrations.llamaindex import repair_tool_selections

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import ChatResponse
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.llm import ToolSelection


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    return f"{limit} results for {query}"


def _response(tool_calls: list[Any]) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": tool_calls}))


@pytest.mark.parametrize(
    "raw",
    [
        {"id": "c1", "type": "function", "function": {"name": "WebSearch", "arguments": '{"query": "cats",}'}},
        {"id": "c1", "name": "web_search", "input": {"query": "cats"}},
        {"id": "c1", "name": "web_search", "arguments": '{"query": "cats"}'},
        ToolSelection(tool_id="c1", tool_name="web-search", tool_kwargs={"query": "cats"}),
    ],
)
def test_additional_kwargs_shapes_are_repaired(raw: Any) -> None:
    [selection] = repair_tool_selections(_response([raw]), tr.ToolRegistry([web_search]))
    assert (selection.tool_id, selection.tool_name, selection.tool_kwargs) == ("c1", "web_search", {"query": "cats"})


@pytest.mark.parametrize("tool_calls", [[], [7], [{"id": "c1", "arguments": "{}"}]])
def test_unknown_shapes_give_no_selections(tool_calls: list[Any]) -> None:
    assert repair_tool_selections(_response(tool_calls), tr.ToolRegistry([web_search])) == []
