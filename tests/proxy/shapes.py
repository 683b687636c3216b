"""The scripted replies of ``replies.CASES`` as Anthropic Messages and OpenAI Responses servers
send them, whole and streamed, and an upstream on loopback that serves both routes.

A reply's reasoning becomes a ``thinking`` block / a ``reasoning`` item, its content a ``text``
block / an ``output_text`` part, its native calls ``tool_use`` blocks / ``function_call`` items
(arguments the model broke stay broken: a ``tool_use`` input that is not JSON is sent as the
string the model wrote, as bridging servers do). The Messages rendering says
``stop_reason: "end_turn"`` beside native calls, the bug local servers show.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .replies import CASES, Reply, _pieces
from .servers import Running

MESSAGE_TOOLS = [
    {
        "name": "web_search",
        "description": "Search the web.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    },
    {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
]
RESPONSE_TOOLS = [
    {"type": "function", "name": t["name"], "description": t.get("description", ""), "parameters": t["input_schema"]}
    for t in MESSAGE_TOOLS
]

Split = Callable[[str], list[str]]


def _split(chunking: str | Split) -> Split:
    return chunking if callable(chunking) else (lambda text: _pieces(text, chunking))


def _input(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


# -- Anthropic Messages ------------------------------------------------------------------------
def message(reply: Reply, model: str = "m") -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "sig"})
    if reply.content is not None:
        content.append({"type": "text", "text": reply.content})
    for call in reply.tool_calls or ():
        content.append(
            {
                "type": "tool_use",
                "id": call["id"].replace("call_", "toolu_"),
                "name": call["function"]["name"],
                "input": _input(call["function"]["arguments"]),
            }
        )
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    }


def message_events(reply: Reply, chunking: str | Split, model: str = "m") -> list[dict[str, Any]]:
    split = _split(chunking)
    whole = message(reply, model)
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {**whole, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}},
        },
        {"type": "ping"},
    ]
    for i, block in enumerate(whole["content"]):
        if block["type"] == "thinking":
            events.append(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
            events += [
                {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": p}}
                for p in split(block["thinking"])
            ]
            events.append(
                {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": "sig"}}
            )
        elif block["type"] == "text":
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            events += [
                {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": p}}
                for p in split(block["text"])
            ]
        else:
            raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            events.append({"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}})
            events += [
                {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}}
                for p in split(raw)
            ]
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
    )
    events.append({"type": "message_stop"})
    return events


# -- OpenAI Responses --------------------------------------------------------------------------
def response(reply: Reply, model: str = "m") -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        output.append(
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": reply.reasoning}],
            }
        )
    if reply.content is not None:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.content, "annotations": []}],
            }
        )
    for i, call in enumerate(reply.tool_calls or ()):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{i}",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "status": "completed",
            }
        )
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "model": model,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "total_tokens": 30,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def response_events(reply: Reply, chunking: str | Split, model: str = "m") -> list[dict[str, Any]]:
    split = _split(chunking)
    whole = response(reply, model)
    start = {**whole, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for i, item in enumerate(whole["output"]):
        if item["type"] == "reasoning":
            text = item["content"][0]["text"]
            events.append({"type": "response.output_item.added", "output_index": i, "item": {**item, "content": []}})
            events += [
                {
                    "type": "response.reasoning_text.delta",
                    "item_id": item["id"],
                    "output_index": i,
                    "content_index": 0,
                    "delta": p,
                }
                for p in split(text)
            ]
            events.append(
                {
                    "type": "response.reasoning_text.done",
                    "item_id": item["id"],
                    "output_index": i,
                    "content_index": 0,
                    "text": text,
                }
            )
        elif item["type"] == "message":
            part = item["content"][0]
            ids = {"item_id": item["id"], "output_index": i, "content_index": 0}
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": i,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            events.append({"type": "response.content_part.added", **ids, "part": {**part, "text": ""}})
            events += [
                {"type": "response.output_text.delta", **ids, "delta": p, "logprobs": []} for p in split(part["text"])
            ]
            events.append({"type": "response.output_text.done", **ids, "text": part["text"], "logprobs": []})
            events.append({"type": "response.content_part.done", **ids, "part": part})
        else:
            ids = {"item_id": item["id"], "output_index": i}
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": i,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                }
            )
            events += [
                {"type": "response.function_call_arguments.delta", **ids, "delta": p} for p in split(item["arguments"])
            ]
            events.append({"type": "response.function_call_arguments.done", **ids, "arguments": item["arguments"]})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": whole})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


def sse(events: list[dict[str, Any]]) -> list[bytes]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


# -- the upstream --------------------------------------------------------------------------------
class ShapedUpstream:
    """Serves ``/v1/messages`` and ``/v1/responses`` (and ``/v1/models``) from ``CASES``: the
    request's ``model`` is ``<chunking>/<case>``, ``fault/<kind>`` misbehaves, and
    ``script/<name>`` answers by the conversation so far (``SCRIPTS``). Records what it received."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/v1/responses", self.responses, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
            ]
        )

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "m", "object": "model"}]})

    async def messages(self, request: Request) -> Response:
        return await self._answer(request, message, message_events)

    async def responses(self, request: Request) -> Response:
        return await self._answer(request, response, response_events)

    async def _answer(
        self, request: Request, whole: Callable[..., dict[str, Any]], streamed: Callable[..., list[dict[str, Any]]]
    ) -> Response:
        body = await request.json()
        self.seen.append(body)
        model: str = body["model"]
        head, _, key = model.partition("/")
        if head == "fault":
            return _fault(key, streamed)
        if head == "script":
            reply, chunking = SCRIPTS[key](body), "token"
        else:
            reply, chunking = CASES[key][0], head
        if body.get("stream"):
            events = sse(streamed(reply, chunking, model))

            async def gen() -> AsyncIterator[bytes]:
                for event in events:
                    yield event

            return StreamingResponse(gen(), media_type="text/event-stream")
        return JSONResponse(whole(reply, model))


def _fault(kind: str, streamed: Callable[..., list[dict[str, Any]]]) -> Response:
    if kind == "500":
        return JSONResponse(
            {"type": "error", "error": {"type": "api_error", "message": "model exploded"}}, status_code=500
        )
    events = sse(streamed(CASES["hermes"][0], "char"))
    head = events[: len(events) // 2]

    async def gen() -> AsyncIterator[bytes]:
        for event in head:
            yield event
        if kind == "cut":
            raise RuntimeError("connection lost")
        if kind == "malformed":
            yield b"this is not an event\n\n"

    return StreamingResponse(gen(), media_type="text/event-stream")


def _last_is_result(body: dict[str, Any]) -> bool:
    """Whether the conversation ends with a tool's answer (either API's shape)."""
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str) or not items:
        return False
    last = items[-1]
    if last.get("type") == "function_call_output":
        return True
    content = last.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _agent(body: dict[str, Any]) -> Reply:
    # An agent's turn: first a call written as text (with an argument as a string), then,
    # once the tool answered, the final answer.
    if _last_is_result(body):
        return Reply("It is sunny in Paris.")
    return Reply('<tool_call>{"name": "GetWeather", "arguments": {"city": "Paris"}}</tool_call>')


def _reprompt(body: dict[str, Any]) -> Reply:
    # A call to a tool not offered; once corrected, the call that needs no repair.
    if _last_is_result(body):
        return Reply('<tool_call>{"name": "web_search", "arguments": {"query": "fixed"}}</tool_call>')
    return Reply(
        None, [{"id": "call_x", "type": "function", "function": {"name": "send_email", "arguments": '{"to": "x"}'}}]
    )


SCRIPTS: dict[str, Callable[[dict[str, Any]], Reply]] = {"agent": _agent, "reprompt": _reprompt}


def serve_shaped() -> Iterator[ShapedUpstream]:
    """The shaped upstream on loopback (``.url``): a test module's fixture,
    ``shaped = pytest.fixture(scope="module", name="shaped")(serve_shaped)``."""
    up = ShapedUpstream()
    with Running(up.app) as running:
        up.url = running.url  # type: ignore[attr-defined]
        yield up
