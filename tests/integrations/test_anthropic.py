"""toolrepair.integrations.anthropic against real anthropic SDK objects (built from realistic payloads)."""

from __future__ import annotations

import pytest

import toolrepair as tr
from toolrepair.integrations.anthropic import repair_message, tool_calls, tool_result_block

anthropic = pytest.importorskip("anthropic")
from anthropic.types import Message  # noqa: E402


def _message(content: list[dict], stop_reason: str = "tool_use") -> Message:
    return Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 40},
        }
    )


def _tool_use(ident: str, name: str, arguments: object) -> dict:
    return {"type": "tool_use", "id": ident, "name": name, "input": arguments}


def test_name_drift_and_coercion_ids_kept(registry: tr.ToolRegistry) -> None:
    msg = _message(
        [{"type": "text", "text": "Searching."}, _tool_use("toolu_01", "WebSearch", {"query": "cats", "limit": "5"})]
    )
    out = repair_message(msg, registry)
    assert out["content"][0] == {"type": "text", "text": "Searching."}
    assert out["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "web_search",
        "input": {"query": "cats", "limit": 5},
    }
    assert "toolrepair_errors" not in out
    assert Message.model_validate(out).content[1].name == "web_search"  # still the SDK's shape
    block = tool_result_block(registry.run(tool_calls(out)[0]))
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": "5 results for cats",
        "is_error": False,
    }


def test_text_calls_become_tool_use_blocks(registry: tr.ToolRegistry, hermes) -> None:
    text = "I'll check.\n" + hermes("web_search", '{"query": "weather in Oslo"}')
    out = repair_message(_message([{"type": "text", "text": text}], stop_reason="end_turn"), registry)
    text_block, tool_use = out["content"]
    assert text_block["text"] == "I'll check."
    assert tool_use["type"] == "tool_use" and tool_use["id"].startswith("toolu_")
    assert tool_use["input"] == {"query": "weather in Oslo"}
    assert out["stop_reason"] == "tool_use"
    assert repair_message(_message([{"type": "text", "text": text}]), registry)["content"][1]["id"] == tool_use["id"]
    assert Message.model_validate(out).content[1].id == tool_use["id"]


def test_a_text_block_holding_only_a_call_is_dropped(registry: tr.ToolRegistry, hermes) -> None:
    out = repair_message(_message([{"type": "text", "text": hermes("WebSearch", '{"query": "x"}')}]), registry)
    assert [b["type"] for b in out["content"]] == ["tool_use"]


def test_unknown_name_is_kept_with_its_tool_result_ready(registry: tr.ToolRegistry) -> None:
    out = repair_message(_message([_tool_use("toolu_02", "send_email", {"to": "x"})]), registry)
    assert out["content"] == [_tool_use("toolu_02", "send_email", {"to": "x"})]
    assert tool_calls(out) == []
    [error] = out["toolrepair_errors"]
    assert error["tool_use_id"] == "toolu_02"
    assert error["message"] == "Tool 'send_email' not found. Available tools: ['read_file', 'web_search']"
    assert error["tool_result"] == {
        "type": "tool_result",
        "tool_use_id": "toolu_02",
        "content": error["message"],
        "is_error": True,
    }


def test_bad_arguments_are_kept_with_their_tool_result_ready(registry: tr.ToolRegistry) -> None:
    out = repair_message(_message([_tool_use("toolu_03", "web_search", {"limit": 2})]), registry)
    [error] = out["toolrepair_errors"]
    assert error["tool_use_id"] == "toolu_03" and tool_calls(out) == []
    assert "'query'" in error["message"]
    assert error["message"].endswith("Expected parameters for 'web_search' — required: ['query'], optional: ['limit'].")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Plain words.", "Plain words."),
        ("", ""),
    ],
)
def test_string_content_without_calls_is_kept(registry: tr.ToolRegistry, content: str, expected: str) -> None:
    out = repair_message({"role": "assistant", "content": content}, registry)
    assert out == {"role": "assistant", "content": expected}


def test_string_content_with_a_text_call(registry: tr.ToolRegistry, hermes) -> None:
    out = repair_message(
        {"role": "assistant", "content": "On it. " + hermes("WebSearch", '{"query": "x"}'), "stop_reason": "end_turn"},
        registry,
    )
    text, call = out["content"]
    assert text == {"type": "text", "text": "On it. "}
    assert call["type"] == "tool_use" and call["name"] == "web_search" and call["id"].startswith("toolu_")
    assert out["stop_reason"] == "tool_use" and [c.name for c in tool_calls(out)] == ["web_search"]


def delete_file(path: str) -> str:
    raise AssertionError("a denied tool ran")


@pytest.mark.parametrize("spelling", ["delete_file", "DeleteFile"])
def test_policy_refuses_native_and_text_calls(spelling: str, hermes) -> None:
    from tests.integrations.conftest import web_search

    registry = tr.ToolRegistry([web_search, delete_file], deny=["delete_file"])
    native = repair_message(_message([_tool_use("toolu_d", spelling, {"path": "/"})]), registry)
    text = repair_message(_message([{"type": "text", "text": hermes(spelling, '{"path": "/"}')}]), registry)
    for out in (native, text):
        assert tool_calls(out) == []
        [error] = out["toolrepair_errors"]
        assert error["tool_result"]["content"] == "Tool 'delete_file' is not allowed."
        assert error["tool_result"]["tool_use_id"] == out["content"][-1]["id"]


def test_tool_error_is_an_error_result(registry: tr.ToolRegistry) -> None:
    out = repair_message(_message([_tool_use("toolu_04", "read_file", {"path": "/etc/none"})]), registry)
    block = tool_result_block(registry.run(out["content"][0]))
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_04",
        "content": "No such file: /etc/none",
        "is_error": True,
    }


def test_an_outcome_without_an_id_is_refused(registry: tr.ToolRegistry) -> None:
    with pytest.raises(ValueError, match="no tool_use id"):
        tool_result_block(registry.run({"name": "web_search", "arguments": {"query": "x"}}))
