"""toolrepair.integrations.openai against real openai SDK objects (built from realistic payloads)."""

from __future__ import annotations

import json

import pytest

import toolrepair as tr
from toolrepair.integrations.openai import (
    function_call_output,
    repair_chat_message,
    repair_response_items,
    tool_calls,
    tool_result_message,
)

openai = pytest.importorskip("openai")
from openai.types.chat import ChatCompletion, ChatCompletionMessage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage  # noqa: E402


def _message(content: str | None = None, calls: list[tuple[str, str, str]] = ()) -> ChatCompletionMessage:
    payload: dict = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        payload["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
        ]
    return ChatCompletionMessage.model_validate(payload)


def test_name_drift_and_broken_arguments_are_repaired_ids_kept(registry: tr.ToolRegistry) -> None:
    msg = _message(calls=[("call_A1", "WebSearch", "{'query': 'cats', 'limit': '5',}")])
    out = repair_chat_message(msg, registry)
    assert out["tool_calls"] == [
        {
            "id": "call_A1",
            "type": "function",
            "function": {"name": "web_search", "arguments": '{"query": "cats", "limit": 5}'},
        }
    ]
    assert "toolrepair_errors" not in out
    # Still the SDK's shape: it validates back into the same type.
    assert ChatCompletionMessage.model_validate(out).tool_calls[0].function.name == "web_search"
    outcome = registry.run(tool_calls(out)[0])
    assert tool_result_message(outcome) == {"role": "tool", "tool_call_id": "call_A1", "content": "5 results for cats"}


def test_a_whole_completion_payload(registry: tr.ToolRegistry) -> None:
    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "logprobs": None,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "tool_calls": [
                            {
                                "id": "call_x",
                                "type": "function",
                                "function": {"name": "functions.web_search", "arguments": '"{\\"query\\": \\"q\\"}"'},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        }
    )
    out = repair_chat_message(completion.choices[0].message, registry)
    assert out["tool_calls"][0]["function"] == {"name": "web_search", "arguments": '{"query": "q"}'}
    # The whole completion is accepted too: every choice is repaired.
    whole = repair_chat_message(completion, registry)
    assert whole["choices"][0]["message"] == out and whole["id"] == "chatcmpl-1"
    assert ChatCompletion.model_validate(whole).choices[0].message.tool_calls[0].function.name == "web_search"


def test_a_completion_whose_text_became_calls_finishes_with_tool_calls(registry: tr.ToolRegistry, hermes) -> None:
    completion = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": hermes("WebSearch", '{"query": "q"}')},
            },
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "No calls."}},
            {"index": 2, "finish_reason": "stop", "message": None},
        ],
    }
    out = repair_chat_message(completion, registry)
    first, second, third = out["choices"]
    assert (
        first["finish_reason"] == "tool_calls" and first["message"]["tool_calls"][0]["function"]["name"] == "web_search"
    )
    assert first["message"]["content"] is None
    assert second == completion["choices"][1] and third == completion["choices"][2]


@pytest.mark.parametrize("wrong", [{"role": "user", "content": "hi"}, {"id": "x", "object": "list"}, {"messages": []}])
def test_anything_else_is_a_type_error_naming_what_it_expects(registry: tr.ToolRegistry, wrong: dict) -> None:
    with pytest.raises(
        TypeError, match=r"expects an assistant message \(completion.choices\[0\].message\) or a ChatCompletion"
    ):
        repair_chat_message(wrong, registry)


def test_text_salvage_cuts_content_and_ids_are_deterministic(registry: tr.ToolRegistry, hermes) -> None:
    text = "Let me look that up.\n" + hermes("web_search", '{"query": "cats"}')
    first = repair_chat_message(_message(text), registry)
    again = repair_chat_message({"role": "assistant", "content": text}, registry)
    assert first["content"] == "Let me look that up."
    [call] = first["tool_calls"]
    assert call["id"].startswith("call_") and call == again["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"query": "cats"}
    assert ChatCompletionMessage.model_validate(first).tool_calls[0].id == call["id"]
    assert tool_result_message(registry.run(tool_calls(first)[0]))["tool_call_id"] == call["id"]


def test_unknown_name_is_kept_with_its_answer_ready(registry: tr.ToolRegistry) -> None:
    msg = _message(calls=[("call_ok", "web_search", '{"query": "x"}'), ("call_bad", "web_serch_v2", "{}")])
    out = repair_chat_message(msg, registry)
    # The call stays (the API wants an answer for every call id) and is not among those to run.
    assert [c["id"] for c in out["tool_calls"]] == ["call_ok", "call_bad"]
    assert out["tool_calls"][1]["function"] == {"name": "web_serch_v2", "arguments": "{}"}
    assert [c.id for c in tool_calls(out)] == ["call_ok"]
    [error] = out["toolrepair_errors"]
    assert error["tool_call_id"] == "call_bad" and error["name"] == "web_serch_v2"
    assert error["message"] == (
        "Tool 'web_serch_v2' not found. Did you mean 'web_search'? Available tools: ['read_file', 'web_search']"
    )
    assert error["tool_message"] == {"role": "tool", "tool_call_id": "call_bad", "content": error["message"]}


def test_unknown_name_written_as_text_is_reported(registry: tr.ToolRegistry, hermes) -> None:
    text = hermes("delete_everything", "{}")
    out = repair_chat_message(_message(text), registry)
    # A refused call, like a native one naming no tool: kept with its id, its answer ready, never run.
    [call] = out["tool_calls"]
    assert call["function"]["name"] == "delete_everything" and out["content"] is None
    [error] = out["toolrepair_errors"]
    assert error["tool_call_id"] == call["id"] and "Tool 'delete_everything' not found." in error["message"]
    assert error["tool_message"] == {"role": "tool", "tool_call_id": call["id"], "content": error["message"]}
    assert tool_calls(out) == []


def test_bad_arguments_are_kept_with_their_answers_ready(registry: tr.ToolRegistry) -> None:
    msg = _message(
        calls=[
            ("call_t", "web_search", '{"query": "cats", "limit": 3'),
            ("call_v", "web_search", '{"query": "cats", "limit": "many"}'),
        ]
    )
    out = repair_chat_message(msg, registry)
    assert [c["function"]["arguments"] for c in out["tool_calls"]] == [
        '{"query": "cats", "limit": 3',
        '{"query": "cats", "limit": "many"}',
    ]
    assert tool_calls(out) == []
    errors = {e["tool_call_id"]: e["message"] for e in out["toolrepair_errors"]}
    assert set(errors) == {"call_t", "call_v"}
    assert all("Expected parameters for 'web_search'" in m for m in errors.values())
    assert "limit" in errors["call_v"]


def _denying(tools: list, **policy) -> tr.ToolRegistry:
    return tr.ToolRegistry(tools, **policy)


def delete_file(path: str) -> str:
    raise AssertionError("a denied tool ran")


POLICIES = [
    {"deny": ["delete_file"]},
    {"allow": ["web_search"]},
    {"before_call": lambda call: call.name != "delete_file"},
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("spelling", ["delete_file", "DeleteFile", "functions.delete_file"])
def test_policy_refuses_native_and_text_calls(policy: dict, spelling: str, hermes) -> None:
    from tests.integrations.conftest import web_search

    registry = _denying([web_search, delete_file], **policy)
    refusal = (
        "Tool 'delete_file' was refused by policy." if "before_call" in policy else "Tool 'delete_file' is not allowed."
    )
    native = repair_chat_message(_message(calls=[("call_d", spelling, '{"path": "/"}')]), registry)
    text = repair_chat_message(_message(hermes(spelling, '{"path": "/"}')), registry)
    for out in (native, text):
        assert tool_calls(out) == []
        [error] = out["toolrepair_errors"]
        assert error["message"] == refusal
        assert error["tool_message"]["content"] == refusal
        assert error["tool_message"]["tool_call_id"] == out["tool_calls"][0]["id"]
    responses = repair_response_items([_fc("call_r", spelling, '{"path": "/"}')], registry)
    assert tool_calls(responses) == []
    assert responses["toolrepair_errors"][0]["output_item"] == {
        "type": "function_call_output",
        "call_id": "call_r",
        "output": refusal,
    }


def test_tool_error_reaches_the_model_as_its_own_message(registry: tr.ToolRegistry) -> None:
    out = repair_chat_message(_message(calls=[("call_f", "ReadFile", '{"path": "/nope"}')]), registry)
    outcome = registry.run(tool_calls(out)[0])
    assert not outcome.ok
    assert tool_result_message(outcome) == {"role": "tool", "tool_call_id": "call_f", "content": "No such file: /nope"}


def test_outcome_without_an_id_is_refused(registry: tr.ToolRegistry) -> None:
    with pytest.raises(ValueError, match="no call id"):
        tool_result_message(registry.run({"name": "web_search", "arguments": {"query": "x"}}))


# -- Responses API ---------------------------------------------------------------------------
def _fc(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall.model_validate(
        {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
            "status": "completed",
        }
    )


def _text_item(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage.model_validate(
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    )


def test_responses_function_calls_are_repaired_call_ids_kept(registry: tr.ToolRegistry) -> None:
    items = [
        _fc("call_1", "Web-Search", '{"query": "cats",}'),
        _fc("call_2", "nope", "{}"),
        _fc("call_3", "web_search", '{"query": 7'),
        _fc("call_4", "read_file", '{"path": "/x"}'),
    ]
    result = repair_response_items(items, registry)
    assert [i["call_id"] for i in result["output"]] == ["call_1", "call_2", "call_3", "call_4"]
    assert [c.id for c in tool_calls(result)] == ["call_1", "call_4"]
    assert result["output"][0]["name"] == "web_search" and result["output"][0]["arguments"] == '{"query": "cats"}'
    assert result["output"][0]["id"] == "fc_call_1"
    assert ResponseFunctionToolCall.model_validate(result["output"][0]).call_id == "call_1"
    errors = {e["call_id"]: e["message"] for e in result["toolrepair_errors"]}
    assert errors["call_2"].startswith("Tool 'nope' not found.")
    assert "Expected parameters for 'web_search'" in errors["call_3"]
    ok, failed = (registry.run(c) for c in tool_calls(result))
    assert function_call_output(ok) == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "3 results for cats",
    }
    assert function_call_output(failed) == {
        "type": "function_call_output",
        "call_id": "call_4",
        "output": "No such file: /x",
    }


def test_responses_text_calls_are_salvaged_into_function_call_items(registry: tr.ToolRegistry, hermes) -> None:
    text = "Searching. " + hermes("WebSearch", '{"query": "dogs", "limit": "2"}')
    result = repair_response_items([_text_item(text)], registry)
    message, call = result["output"]
    assert message["content"][0]["text"] == "Searching. "
    assert call["type"] == "function_call" and call["call_id"].startswith("call_")
    assert (call["name"], json.loads(call["arguments"])) == ("web_search", {"query": "dogs", "limit": 2})
    assert repair_response_items([_text_item(text)], registry)["output"][1]["call_id"] == call["call_id"]
    assert ResponseFunctionToolCall.model_validate(call).name == "web_search"


def test_custom_tools_and_empty_replies_pass_through(registry: tr.ToolRegistry) -> None:
    custom = {"id": "ct_1", "type": "custom", "custom": {"name": "grammar", "input": "x"}}
    out = repair_chat_message({"role": "assistant", "content": None, "tool_calls": [custom]}, registry)
    assert out["tool_calls"] == [custom] and tool_calls(out) == []
    assert repair_chat_message({"role": "assistant", "content": ""}, registry) == {"role": "assistant", "content": ""}
    # Every call refused: the key stays (each needs its answer) and none is to run.
    out = repair_chat_message(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "nope", "arguments": "{}"}}],
        },
        registry,
    )
    assert len(out["tool_calls"]) == 1 and tool_calls(out) == []


def test_responses_items_of_other_kinds_and_shapes(registry: tr.ToolRegistry, hermes) -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    mixed = {"output": [reasoning, _fc("call_1", "web_search", '{"query": "a"}').model_dump()]}
    result = repair_response_items(mixed, registry)
    assert result["output"][0] == reasoning and [c.id for c in tool_calls(result)] == ["call_1"]
    assert [c.id for c in tool_calls(result["output"])] == ["call_1"]  # the bare list of items
    refusal = {"type": "refusal", "refusal": "no"}
    message = {
        "type": "message",
        "id": "m",
        "role": "assistant",
        "status": "completed",
        "content": [refusal, {"type": "output_text", "text": "", "annotations": []}],
    }
    result = repair_response_items([reasoning, message], registry)
    assert result["output"] == [reasoning, message] and result["toolrepair_errors"] == []


@pytest.mark.parametrize(
    ("text", "reasoning_id", "kinds", "left"),
    [
        ("<think>Plan.</think> Hi.", None, ["message"], "<think>Plan.</think> Hi."),
        ("<think>Plan.</think> Hi.", "rs_x", ["reasoning", "message"], "Hi."),
        ("Hi.", "rs_x", ["message"], "Hi."),
        (
            '<think>Plan.</think><tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>',
            "rs_x",
            ["reasoning", "message", "function_call"],
            "",
        ),
    ],
)
def test_responses_reasoning_read_from_the_text_is_an_item_of_its_own(
    registry: tr.ToolRegistry, text: str, reasoning_id: str | None, kinds: list[str], left: str
) -> None:
    fixed = repair_response_items([_text_item(text)], registry, reasoning_id=reasoning_id)
    assert [item["type"] for item in fixed["output"]] == kinds
    [message] = [item for item in fixed["output"] if item["type"] == "message"]
    assert message["content"][0]["text"] == left
    for item in fixed["output"]:
        if item["type"] == "reasoning":
            assert item == {
                "type": "reasoning",
                "id": "rs_x",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "Plan."}],
            }
