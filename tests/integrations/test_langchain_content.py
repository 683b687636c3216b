"""repair_ai_message on block-list content (what chat models with content blocks return)."""

from __future__ import annotations

import json

import pytest

import toolrepair as tr

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage

from toolrepair.integrations.langchain import repair_ai_message


def web_search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def hermes(name: str, arguments: dict[str, str]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_text_calls_in_blocks_are_salvaged_and_other_blocks_kept() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:,"}}
    message = AIMessage(
        content=[
            "Looking. " + hermes("web_search", {"query": "cats"}),
            {"type": "text", "text": hermes("WebSearch", {"query": "dogs"})},  # all call: the block goes
            image,
            hermes("web_search", {"query": "otters"}),  # a bare string that is all call: it goes too
        ]
    )
    repaired = repair_ai_message(message, tr.ToolRegistry([web_search]))
    assert [(c["name"], c["args"]) for c in repaired.tool_calls] == [
        ("web_search", {"query": "cats"}),
        ("web_search", {"query": "dogs"}),
        ("web_search", {"query": "otters"}),
    ]
    assert repaired.content == ["Looking. ", image]


def test_content_of_another_type_is_left_alone() -> None:
    message = AIMessage(content=[{"type": "text", "text": "no calls here"}])
    repaired = repair_ai_message(message, tr.ToolRegistry([web_search]))
    assert repaired.tool_calls == [] and repaired.content == message.content
