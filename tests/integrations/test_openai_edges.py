"""toolrepair.integrations.openai on the shapes beside the common path: custom tools, refused
Responses calls, a Response-like mapping, and tool_calls of each kind of repaired value."""

from __future__ import annotations

import pytest

import toolrepair as tr

pytest.importorskip("openai")

from toolrepair.integrations.openai import (
    ERRORS_KEY,
    repair_chat_message,
    repair_response_items,
    tool_calls,
)


def web_search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


REGISTRY = tr.ToolRegistry([web_search])


def test_custom_tools_have_no_schema_and_are_kept_as_written() -> None:
    custom = {"id": "c1", "type": "custom", "custom": {"name": "grammar", "input": "x"}}
    fixed = repair_chat_message({"role": "assistant", "content": None, "tool_calls": [custom]}, REGISTRY)
    assert fixed["tool_calls"] == [custom] and not fixed.get(ERRORS_KEY)


def test_a_refused_function_call_item_stays_and_is_answered() -> None:
    items = {
        "output": [
            {"type": "function_call", "call_id": "a", "name": "WebSearch", "arguments": '{"query": "cats",}'},
            {"type": "function_call", "call_id": "b", "name": "rm_rf", "arguments": "{}"},
            {"type": "reasoning", "summary": []},
        ]
    }
    repaired = repair_response_items(items, REGISTRY)
    assert [i.get("name") for i in repaired["output"]] == ["web_search", "rm_rf", None]
    [error] = repaired[ERRORS_KEY]
    assert error["call_id"] == "b" and error["output_item"]["type"] == "function_call_output"
    assert [(c.name, c.arguments, c.id) for c in tool_calls(repaired)] == [("web_search", {"query": "cats"}, "a")]


def test_tool_calls_of_a_repaired_chat_message_leave_refused_calls_out() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "x"}'}},
            {"id": "b", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        ],
    }
    repaired = repair_chat_message(message, REGISTRY)
    assert [c.id for c in tool_calls(repaired)] == ["a"]


def test_tool_calls_of_plain_response_items() -> None:
    items = [
        {"type": "message", "content": []},
        {"type": "function_call", "call_id": "z", "name": "web_search", "arguments": '{"query": "y"}'},
    ]
    assert [(c.name, c.arguments, c.id) for c in tool_calls(items)] == [("web_search", {"query": "y"}, "z")]
