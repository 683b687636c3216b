"""Messages and Responses replies repaired whole and streamed, assembled by the SDKs' own
accumulators (``anthropic``'s ``accumulate_event``, ``openai``'s ``ResponseStreamState``).

Sans-I/O: the repairers are pure, so every case runs in every chunking and the property runs
over arbitrary cuts in milliseconds; test_shapes_clients.py runs the same code behind sockets.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrepair.proxy._errors import ProxyError
from toolrepair.proxy._messages import MessagesStream, corrective_messages, message_tools, repair_message_body
from toolrepair.proxy._report import Note, Tally
from toolrepair.proxy._responses import ResponsesStream, corrective_input, repair_response_body, response_tools

from .replies import CASES, CHUNKINGS, Reply
from .shapes import MESSAGE_TOOLS, RESPONSE_TOOLS, message, message_events, response, response_events

anthropic_streaming = pytest.importorskip("anthropic.lib.streaming._messages")
openai = pytest.importorskip("openai")
from openai._models import construct_type  # noqa: E402
from openai.lib.streaming.responses._responses import ResponseStreamState  # noqa: E402
from openai.types.responses import ResponseStreamEvent  # noqa: E402


def _registry(api: str, profile: str = "local") -> Any:
    read = message_tools if api == "messages" else response_tools
    tools = MESSAGE_TOOLS if api == "messages" else RESPONSE_TOOLS
    registry = read({"tools": tools}, profile).registry  # type: ignore[arg-type]
    assert registry is not None
    return registry


def _wire(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # what crosses the socket: JSON, so no object is shared between events
    return [json.loads(json.dumps(e)) for e in events]


def _stream(api: str, events: list[dict[str, Any]], profile: str = "local") -> tuple[list[dict[str, Any]], Tally]:
    tally = Tally()
    repair = (MessagesStream if api == "messages" else ResponsesStream)(_registry(api, profile), tally)
    out = [e for event in events for e in repair.feed(event)]
    out += repair.close()
    assert repair.finished
    return _wire(out), tally


def anthropic_assembled(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The message the anthropic SDK builds from the events (``messages.stream``'s rules)."""
    snapshot, buffers = None, {}
    for event in events:
        snapshot = anthropic_streaming.accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    assert snapshot is not None
    return snapshot.model_dump(mode="json", exclude_none=True)


def openai_assembled(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The response the openai SDK builds from the events (``responses.stream``'s rules)."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
    for event in events:
        state.handle_event(construct_type(type_=ResponseStreamEvent, value=event))
    final = state._completed_response
    assert final is not None
    return final.model_dump(mode="json", exclude_none=True)


def _message_seen(body: dict[str, Any]) -> tuple[str | None, list[tuple[str, Any]], str]:
    content = body["content"]
    text = "".join(b["text"] for b in content if b["type"] == "text") or None
    calls = [(b["name"], b["input"]) for b in content if b["type"] == "tool_use"]
    return text, calls, body["stop_reason"]


def _response_seen(body: dict[str, Any]) -> tuple[str | None, list[tuple[str, Any]]]:
    text = (
        "".join(
            p["text"]
            for item in body["output"]
            if item["type"] == "message"
            for p in item["content"]
            if p["type"] == "output_text"
        )
        or None
    )
    calls = [(i["name"], _loads(i["arguments"])) for i in body["output"] if i["type"] == "function_call"]
    return text, calls


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _native_written(reply: Reply) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], _loads(c["function"]["arguments"])) for c in reply.tool_calls or ()]


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("key", sorted(CASES))
def test_messages_each_case(key: str, chunking: str) -> None:
    reply, expected = CASES[key]
    whole_tally = Tally()
    whole = repair_message_body(message(reply), _registry("messages"), whole_tally)
    out, stream_tally = _stream("messages", message_events(reply, chunking))
    streamed = anthropic_assembled(out)
    stop = "tool_use" if expected.calls else "end_turn"
    assert _message_seen(whole) == (expected.content, expected.calls, stop)
    assert _message_seen(streamed) == (expected.content, expected.calls, stop)
    assert whole["content"] == streamed["content"]
    assert whole_tally.header() == stream_tally.header() == expected.header
    for block in whole["content"]:
        assert block["type"] != "text" or block["text"]  # no empty text block
        if block["type"] == "tool_use" and not reply.tool_calls:
            assert block["id"].startswith("toolu_")
    thinking = [b["thinking"] for b in whole["content"] if b["type"] == "thinking"]
    assert thinking == ([reply.reasoning] if reply.reasoning else [])  # passed through, never salvaged from


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("key", sorted(CASES))
def test_responses_each_case(key: str, chunking: str) -> None:
    reply, expected = CASES[key]
    whole_tally = Tally()
    whole = repair_response_body(response(reply), _registry("responses"), whole_tally)
    out, stream_tally = _stream("responses", response_events(reply, chunking))
    streamed = openai_assembled(out)
    assert _response_seen(whole) == (expected.content, expected.calls)
    assert _response_seen(streamed) == (expected.content, expected.calls)
    assert [(i["type"], i.get("id"), i.get("call_id")) for i in whole["output"]] == [
        (i["type"], i.get("id"), i.get("call_id")) for i in streamed["output"]
    ]
    assert whole_tally.header() == stream_tally.header() == expected.header
    for item in whole["output"]:
        if item["type"] == "function_call" and not reply.tool_calls:
            assert item["call_id"].startswith("call_") and item["id"].startswith("fc_")
        if item["type"] == "message":
            assert item["content"] and all(p["text"] for p in item["content"])
    # the events the stream sent and response.completed agree: one call per added item
    added = [e["item"]["type"] for e in out if e["type"] == "response.output_item.added"]
    assert added == [i["type"] for i in whole["output"]]
    assert [e["sequence_number"] for e in out] == list(range(len(out)))


def _cuts(text: str, points: list[int]) -> list[str]:
    bounds = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


_POINTS = st.lists(st.integers(min_value=0, max_value=10_000), max_size=30)


@given(key=st.sampled_from(sorted(CASES)), points=_POINTS)
def test_messages_streamed_equals_whole_over_chunkings(key: str, points: list[int]) -> None:
    reply, _ = CASES[key]
    whole_tally = Tally()
    whole = repair_message_body(message(reply), _registry("messages"), whole_tally)
    out, stream_tally = _stream("messages", message_events(reply, lambda text: _cuts(text, points)))
    streamed = anthropic_assembled(out)
    assert (streamed["content"], streamed["stop_reason"]) == (whole["content"], whole["stop_reason"])
    assert whole_tally == stream_tally


@given(key=st.sampled_from(sorted(CASES)), points=_POINTS)
def test_responses_streamed_equals_whole_over_chunkings(key: str, points: list[int]) -> None:
    reply, _ = CASES[key]
    whole_tally = Tally()
    whole = repair_response_body(response(reply), _registry("responses"), whole_tally)
    out, stream_tally = _stream("responses", response_events(reply, lambda text: _cuts(text, points)))
    streamed = openai_assembled(out)
    whole_seen = openai_assembled(_wire(response_events(Reply(), "whole")))  # the SDK's own defaults
    assert whole_seen["output"] == []
    assert streamed["output"] == json.loads(json.dumps(whole["output"]))
    assert whole_tally == stream_tally


# -- text around calls, and what passes ----------------------------------------------------------
_TEXT_AROUND = Reply(
    'Checking. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call> '
    'Then <tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'
)


def test_messages_calls_stand_where_they_were_written() -> None:
    body = repair_message_body(message(_TEXT_AROUND), _registry("messages"), Tally())
    assert [(b["type"], b.get("text"), b.get("name")) for b in body["content"]] == [
        ("text", "Checking. ", None),
        ("tool_use", None, "get_weather"),
        ("text", " Then ", None),
        ("tool_use", None, "web_search"),
    ]
    ids = [b["id"] for b in body["content"] if b["type"] == "tool_use"]
    assert len(set(ids)) == 2


def test_responses_calls_stand_where_they_were_written() -> None:
    body = repair_response_body(response(_TEXT_AROUND), _registry("responses"), Tally())
    assert [(i["type"], i["id"]) for i in body["output"]][::2] == [("message", "msg_1"), ("message", "msg_1_1")]
    assert [i["type"] for i in body["output"]] == ["message", "function_call", "message", "function_call"]


def test_text_after_a_native_call_is_not_salvaged() -> None:
    text_call = '<tool_call>{"name": "web_search", "arguments": {"query": "y"}}</tool_call>'
    body = {
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Rome"}},
            {"type": "text", "text": text_call},
        ],
    }
    tally = Tally()
    out = repair_message_body(body, _registry("messages"), tally)
    assert out == body and tally.salvaged == 0


@pytest.mark.parametrize(
    "body",
    [
        {"type": "message", "content": "a string"},
        {"type": "message", "content": [{"type": "text", "text": "x"}, "not a block"]},
        {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
    ],
)
def test_messages_bodies_that_are_not_replies_pass(body: dict[str, Any]) -> None:
    assert repair_message_body(body, _registry("messages"), Tally()) is body


@pytest.mark.parametrize("body", [{"id": "r"}, {"output": [1]}, {"output": "x"}])
def test_responses_bodies_that_are_not_replies_pass(body: dict[str, Any]) -> None:
    assert repair_response_body(body, _registry("responses"), Tally()) is body


def test_empty_text_block_is_dropped_and_other_blocks_pass() -> None:
    body = {
        "type": "message",
        "stop_reason": "end_turn",
        "content": [
            {"type": "text", "text": ""},
            {"type": "redacted_thinking", "data": "abc"},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        ],
    }
    out = repair_message_body(body, _registry("messages"), Tally())
    assert out["content"] == body["content"][1:] and out["stop_reason"] == "end_turn"


def test_hosted_salvages_nothing() -> None:
    reply = CASES["hermes"][0]
    tally = Tally()
    body = repair_message_body(message(reply), _registry("messages", "hosted"), tally)
    assert body["content"] == message(reply)["content"] and tally.salvaged == 0
    body = repair_response_body(response(reply), _registry("responses", "hosted"), tally)
    assert body["output"] == response(reply)["output"]


def test_stream_cut_short_ends_its_blocks() -> None:
    events = message_events(CASES["hermes"][0], "token")
    cut = [e for e in events if e["type"] != "message_stop"][:-1]  # no message_delta, no message_stop
    repair = MessagesStream(_registry("messages"), Tally())
    out = [e for event in cut for e in repair.feed(event)] + repair.close()
    assert not repair.finished
    starts = [e["index"] for e in out if e["type"] == "content_block_start"]
    stops = [e["index"] for e in out if e["type"] == "content_block_stop"]
    assert starts == stops == [0, 1]
    events = response_events(CASES["hermes"][0], "token")[:-1]  # no response.completed
    responses = ResponsesStream(_registry("responses"), Tally())
    out = [e for event in events[:-3] for e in responses.feed(event)] + responses.close()
    assert not responses.finished
    added = [e["output_index"] for e in out if e["type"] == "response.output_item.added"]
    done = [e["output_index"] for e in out if e["type"] == "response.output_item.done"]
    assert added == done


def test_unknown_events_and_blocks_pass_renumbered() -> None:
    repair = MessagesStream(_registry("messages"), Tally())
    events = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": "t"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": "not a block"},
        {"type": "something_new", "x": 1},
    ]
    out = [e for event in events for e in repair.feed(event)]
    assert [e.get("index") for e in out] == [None, 0, 0, 0, 2, None]
    responses = ResponsesStream(_registry("responses"), Tally())
    out = responses.feed({"type": "response.output_item.added", "output_index": 0, "item": "x"})
    out += responses.feed({"type": "response.web_search_call.searching", "output_index": 7})
    assert [e["type"] for e in out] == ["response.output_item.added", "response.web_search_call.searching"]


# -- the request's tools -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "names", "required"),
    [
        ({"tools": MESSAGE_TOOLS}, ["web_search", "get_weather"], False),
        ({"tools": MESSAGE_TOOLS, "tool_choice": {"type": "any"}}, ["web_search", "get_weather"], True),
        ({"tools": MESSAGE_TOOLS, "tool_choice": {"type": "tool", "name": "get_weather"}}, ["get_weather"], True),
        (
            {"tools": [*MESSAGE_TOOLS, {"type": "web_search_20250305", "name": "web_search_server"}]},
            ["web_search", "get_weather"],
            False,
        ),
        ({"tools": [{"name": "noschema"}]}, ["noschema"], False),
        ({"tools": MESSAGE_TOOLS, "tool_choice": {"type": "none"}}, None, False),
        ({}, None, False),
    ],
)
def test_message_tools(body: dict[str, Any], names: list[str] | None, required: bool) -> None:
    tools = message_tools(body, "local")
    assert (sorted(tools.registry.names) if tools.registry else None, tools.required) == (
        sorted(names) if names else None,
        required,
    )


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"tools": {}}, "tools"),
        ({"tools": ["x"]}, "tools[0]"),
        ({"tools": [{"name": ""}]}, "tools[0].name"),
        ({"tools": [{"name": "a", "input_schema": []}]}, "tools[0].input_schema"),
        ({"tools": MESSAGE_TOOLS, "tool_choice": {"type": "sometimes"}}, "tool_choice"),
        ({"tools": MESSAGE_TOOLS, "tool_choice": {"type": "tool"}}, "tool_choice"),
        ({"tools": MESSAGE_TOOLS, "tool_choice": "auto"}, "tool_choice"),
        ({"tools": MESSAGE_TOOLS, "tool_choice": {"type": "tool", "name": "nope"}}, "tool_choice"),
    ],
)
def test_message_tools_refused(body: dict[str, Any], param: str) -> None:
    with pytest.raises(ProxyError) as info:
        message_tools(body, "local")
    assert info.value.status == 400 and info.value.param == param


@pytest.mark.parametrize(
    ("body", "names", "required"),
    [
        ({"tools": RESPONSE_TOOLS}, ["get_weather", "web_search"], False),
        ({"tools": RESPONSE_TOOLS, "tool_choice": "required"}, ["get_weather", "web_search"], True),
        ({"tools": RESPONSE_TOOLS, "tool_choice": {"type": "function", "name": "web_search"}}, ["web_search"], True),
        ({"tools": [*RESPONSE_TOOLS, {"type": "web_search"}]}, ["get_weather", "web_search"], False),
        ({"tools": RESPONSE_TOOLS, "tool_choice": {"type": "web_search_preview"}}, None, False),
        ({"tools": RESPONSE_TOOLS, "tool_choice": "none"}, None, False),
        ({"tools": [{"type": "function", "name": "f"}]}, ["f"], False),
    ],
)
def test_response_tools(body: dict[str, Any], names: list[str] | None, required: bool) -> None:
    tools = response_tools(body, "local")
    assert (sorted(tools.registry.names) if tools.registry else None, tools.required) == (names, required)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"tools": "x"}, "tools"),
        ({"tools": [3]}, "tools[0]"),
        ({"tools": [{"type": "function"}]}, "tools[0].name"),
        ({"tools": [{"type": "function", "name": "f", "parameters": "x"}]}, "tools[0].parameters"),
        ({"tools": RESPONSE_TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
    ],
)
def test_response_tools_refused(body: dict[str, Any], param: str) -> None:
    with pytest.raises(ProxyError) as info:
        response_tools(body, "local")
    assert info.value.status == 400 and info.value.param == param


# -- asking again ----------------------------------------------------------------------------------
def test_corrective_messages() -> None:
    reply = {
        "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "send_email", "input": {}},
            {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "R"}},
        ]
    }
    notes = [Note("toolu_a", "send_email", "Tool 'send_email' not found."), Note(None, "x", "A text call.")]
    body = corrective_messages({"messages": [{"role": "user", "content": "hi"}]}, reply, notes, "Call one.")
    assistant, user = body["messages"][1:]
    assert assistant == {"role": "assistant", "content": reply["content"]}
    assert [(b["type"], b.get("tool_use_id"), b.get("is_error")) for b in user["content"]] == [
        ("tool_result", "toolu_a", True),
        ("tool_result", "toolu_b", True),
        ("text", None, None),
        ("text", None, None),
    ]
    assert user["content"][0]["content"] == "Tool 'send_email' not found."
    assert [b["text"] for b in user["content"][2:]] == ["A text call.", "Call one."]


def test_corrective_input() -> None:
    reply = {
        "output": [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "send_email",
                "arguments": "{}",
                "status": "completed",
            }
        ]
    }
    body = corrective_input({"input": "hi"}, reply, [Note("call_1", "send_email", "not found")], None)
    assert body["input"] == [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "send_email", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "not found"},
    ]
    body = corrective_input({"input": [{"role": "user", "content": "hi"}]}, {"output": []}, [], "Call one.")
    assert body["input"][-1] == {"role": "user", "content": "Call one."}


# -- the edges of the event streams ----------------------------------------------------------------
def test_a_tool_use_cut_short_is_sent_at_close() -> None:
    events = message_events(CASES["native_drift"][0], "token")
    stop = max(i for i, e in enumerate(events) if e["type"] == "content_block_stop")
    tally = Tally()
    repair = MessagesStream(_registry("messages"), tally)
    out = [e for event in events[:stop] for e in repair.feed(event)] + repair.close()
    assert [e["type"] for e in out[-3:]] == ["content_block_start", "content_block_delta", "content_block_stop"]
    assert json.loads(out[-2]["delta"]["partial_json"]) == {"query": "cats", "limit": 2}


def test_hosted_never_delivers_an_undecodable_streamed_input() -> None:
    # Hosted repairs nothing silently: the broken input is refused, and a refused call is never
    # delivered as a call (a client would run it with whatever it makes of the text).
    events = message_events(CASES["native_drift"][0], "token")
    out, tally = _stream("messages", events, profile="hosted")
    assert tally.refused == 1
    assert not [e for e in out if e.get("delta", {}).get("type") == "input_json_delta"]
    assert not [b for b in anthropic_assembled(out)["content"] if b["type"] == "tool_use"]


def test_a_citations_delta_stays_with_its_text_block() -> None:
    repair = MessagesStream(_registry("messages"), Tally())
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "citations_delta", "citation": {"type": "char_location", "cited_text": "x"}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
    ]
    out = [e for event in events for e in repair.feed(event)]
    assert [(e["type"], e.get("index")) for e in out] == [
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
    ]


def test_responses_refusal_parts_and_other_events_stay_in_their_message() -> None:
    repair = ResponsesStream(_registry("responses"), Tally())
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
    refusal = {"type": "refusal", "refusal": ""}
    events = [
        {"type": "response.output_item.added", "output_index": 3, "item": item},
        {"type": "response.output_text.annotation.added", "output_index": 3, "annotation": {}},
        {"type": "response.content_part.added", "output_index": 3, "content_index": 0, "part": refusal},
        {"type": "response.refusal.delta", "output_index": 3, "content_index": 0, "delta": "No."},
        {"type": "response.output_text.annotation.added", "output_index": 3, "annotation": {}},
        {"type": "response.content_part.done", "output_index": 3, "content_index": 0, "part": refusal},
        {"type": "response.output_item.done", "output_index": 3, "item": {**item, "status": "completed"}},
        {"type": "error", "code": "x", "message": "m"},
    ]
    out = [e for event in events for e in repair.feed(event)]
    assert [(e["type"], e.get("output_index")) for e in out] == [
        ("response.output_item.added", 0),
        ("response.content_part.added", 0),
        ("response.refusal.delta", 0),
        ("response.output_item.done", 0),
        ("error", None),
    ]
    assert repair.output == [{**item, "status": "completed", "content": [refusal]}]
    assert "sequence_number" not in out[-1]


def test_responses_whole_refusal_part_and_a_call_cut_short() -> None:
    body = {
        "output": [
            {
                "type": "message",
                "id": "m",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "refusal", "refusal": "No."}],
            }
        ]
    }
    assert repair_response_body(body, _registry("responses"), Tally()) == body
    events = response_events(CASES["native_drift"][0], "token")
    done = next(i for i, e in enumerate(events) if e["type"] == "response.output_item.done")
    repair = ResponsesStream(_registry("responses"), Tally())
    out = [e for event in events[:done] for e in repair.feed(event)] + repair.close()
    assert out[-1]["type"] == "response.output_item.done"
    assert json.loads(out[-1]["item"]["arguments"]) == {"query": "cats", "limit": 2}


@pytest.mark.parametrize("given", ["arguments_done", "deltas"])
def test_responses_call_arguments_from_its_events_when_the_done_item_has_none(given: str) -> None:
    repair = ResponsesStream(_registry("responses"), Tally())
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": ""}
    events = [{"type": "response.output_item.added", "output_index": 0, "item": item}]
    if given == "deltas":
        events += [
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": p}
            for p in ('{"city": ', '"Rome"}')
        ]
    else:
        events.append(
            {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": '{"city": "Rome"}'}
        )
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    out = [e for event in events for e in repair.feed(event)]
    assert out[-1]["item"]["arguments"] == '{"city": "Rome"}'


def test_response_tools_absent() -> None:
    assert response_tools({}, "local").registry is None


# -- reasoning read from the text ----------------------------------------------------------------
_CALLED = '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'

# (a text block's text, --reasoning) -> the blocks a client sees, whole and streamed alike:
# separate puts the reasoning in a thinking block where it stood, inline leaves it as written.
MESSAGE_REASONING = [
    (("<think>Plan.</think>Hi", "separate"), [("thinking", "Plan."), ("text", "Hi")]),
    (
        ("<think>a</think>Hi " + _CALLED + " bye <think>b</think>", "separate"),
        [("thinking", "a"), ("text", "Hi "), ("tool_use", "web_search"), ("text", " bye "), ("thinking", "b")],
    ),
    (("x</think>" + _CALLED, "separate"), [("thinking", "x"), ("tool_use", "web_search")]),
    (("<think>" + _CALLED + "</think>ok", "separate"), [("thinking", _CALLED), ("text", "ok")]),
    (
        ("<think>Plan.</think>Hi " + _CALLED, "inline"),
        [("text", "<think>Plan.</think>Hi "), ("tool_use", "web_search")],
    ),
    (("<think>Plan.</think>Hi " + _CALLED, "drop"), [("text", "Hi "), ("tool_use", "web_search")]),
]


def _blocks(content: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(b["type"], b.get("thinking", b.get("text", b.get("name")))) for b in content]


@pytest.mark.parametrize(("given", "expected"), MESSAGE_REASONING)
@pytest.mark.parametrize("chunking", ["whole", "char"])
def test_messages_reasoning_in_a_text_block(given: tuple[str, str], expected: list[Any], chunking: str) -> None:
    text, mode = given
    whole = repair_message_body(message(Reply(text)), _registry("messages"), Tally(), mode)  # type: ignore[arg-type]
    repair = MessagesStream(_registry("messages"), Tally(), mode)  # type: ignore[arg-type]
    out = [e for event in message_events(Reply(text), chunking) for e in repair.feed(event)] + repair.close()
    streamed = anthropic_assembled(_wire(out))
    assert _blocks(whole["content"]) == _blocks(streamed["content"]) == expected
    assert streamed["stop_reason"] == whole["stop_reason"]


# (output_text's text, --reasoning) -> the items a client sees, whole and streamed alike.
RESPONSE_REASONING = [
    (
        ("<think>Plan.</think>Hi " + _CALLED, "separate"),
        [("reasoning", "Plan."), ("message", "Hi "), ("function_call", "web_search")],
    ),
    (("Hi <think>a</think> there", "separate"), [("message", "Hi "), ("reasoning", "a"), ("message", " there")]),
    (("<think>a</think><think>b</think>", "separate"), [("reasoning", "a\n\nb")]),
    (
        ("<think>Plan.</think>Hi " + _CALLED, "inline"),
        [("message", "<think>Plan.</think>Hi "), ("function_call", "web_search")],
    ),
    (("<think>Plan.</think>Hi " + _CALLED, "drop"), [("message", "Hi "), ("function_call", "web_search")]),
]


def _items(output: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(i["type"], i.get("name") or "".join(p.get("text", "") for p in i.get("content") or ())) for i in output]


@pytest.mark.parametrize(("given", "expected"), RESPONSE_REASONING)
@pytest.mark.parametrize("chunking", ["whole", "char"])
def test_responses_reasoning_in_output_text(given: tuple[str, str], expected: list[Any], chunking: str) -> None:
    text, mode = given
    whole = repair_response_body(response(Reply(text)), _registry("responses"), Tally(), mode)  # type: ignore[arg-type]
    repair = ResponsesStream(_registry("responses"), Tally(), mode)  # type: ignore[arg-type]
    out = [e for event in response_events(Reply(text), chunking) for e in repair.feed(event)] + repair.close()
    streamed = openai_assembled(_wire(out))
    assert streamed["output"] == json.loads(json.dumps(whole["output"]))
    assert _items(whole["output"]) == expected
    ids = [i["id"] for i in whole["output"]]
    assert len(set(ids)) == len(ids)
