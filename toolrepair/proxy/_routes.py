"""The Messages and Responses routes: one handler, told the reply's shape.

Each request goes as a chat completion does (``_app``): the body read within ``--max-body``,
the tools read from it, no tools forwarded untouched, a whole reply repaired (and, with
``--max-reprompts``, asked again), a stream repaired event by event through the upstream pool.
Only what differs between the two APIs is in ``Shape``.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import httpx
from starlette.requests import Request
from starlette.responses import Response

from .._registry import ToolRegistry
from .._salvage import ModelProfile
from ._body import iter_body
from ._config import Reasoning
from ._errors import ProxyError
from ._messages import MessagesStream, corrective_messages, message_tools, repair_message_body
from ._model import profile_for
from ._report import Note, Tally
from ._reprompt import missing_call
from ._responses import ResponsesStream, corrective_input, repair_response_body, response_tools
from ._sse import MalformedSSE, SSEReader
from ._tools import RequestTools, request_object
from ._upstream import json_object, returned_headers

if TYPE_CHECKING:
    from ._app import _Proxy

__all__ = ["MESSAGES", "RESPONSES", "Shape", "ShapedRoute", "fault_kind"]


class EventRepair(Protocol):
    calls: int
    finished: bool

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]: ...

    def close(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Shape:
    """What one API's route needs to know of its shape."""

    route: str  # the label in logs and metrics
    tools: Callable[[Mapping[str, Any], Literal["local", "hosted"], ModelProfile | None], RequestTools]
    whole: Callable[[dict[str, Any], ToolRegistry, Tally, Reasoning], dict[str, Any]]
    stream: Callable[[ToolRegistry, Tally, Reasoning], EventRepair]
    calls: Callable[[dict[str, Any]], int]  # the calls a repaired whole reply carries
    again: Callable[[dict[str, Any], dict[str, Any], list[Note], str | None], dict[str, Any]]
    error: Callable[[str], dict[str, Any]]  # the stream event that reports a fault


def _count(items: Any, kind: str) -> int:
    return sum(1 for item in items or () if isinstance(item, dict) and item.get("type") == kind)


MESSAGES = Shape(
    "messages",
    message_tools,
    repair_message_body,
    MessagesStream,
    lambda reply: _count(reply.get("content"), "tool_use"),
    corrective_messages,
    lambda message: {"type": "error", "error": {"type": "api_error", "message": message}},
)
RESPONSES = Shape(
    "responses",
    response_tools,
    repair_response_body,
    ResponsesStream,
    lambda reply: _count(reply.get("output"), "function_call"),
    corrective_input,
    # `error` as the Responses API sends it, and the nested object the OpenAI SDK raises on
    lambda message: {
        "type": "error",
        "code": "upstream_error",
        "message": message,
        "param": None,
        "error": {"message": message, "type": "upstream_error", "code": "upstream_error"},
    },
)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def encode_event(data: dict[str, Any]) -> bytes:
    """One server-sent event named after its data's ``type`` (both APIs' clients read the name)."""
    kind = data.get("type")
    head = b"event: " + kind.encode() + b"\n" if isinstance(kind, str) and kind.isprintable() else b""
    return head + b"data: " + _dumps(data) + b"\n\n"


class ShapedRoute:
    """``POST /v1/messages`` or ``POST /v1/responses`` behind the proxy's edges."""

    __slots__ = ("proxy", "shape")

    def __init__(self, proxy: _Proxy, shape: Shape) -> None:
        self.proxy = proxy
        self.shape = shape

    async def __call__(self, request: Request, start: float) -> Response:
        proxy = self.proxy
        request.state.route = self.shape.route
        content = await proxy._read_body(request)
        # Read off the loop, as chat's: a body the proxy cannot read is a 400, never a 500.
        body = await proxy.offload.run(request_object, content, size=len(content))
        tools = self.shape.tools(body, proxy.config.profile, profile_for(proxy.config.model_profile, body.get("model")))
        if tools.registry is None:  # nothing to repair against: the request is forwarded as is
            request.state.tally = Tally()
            return await proxy._relay(
                request,
                await proxy._open(request, content),
                start,
                request.state.tally,
                {"x-toolrepair": request.state.tally.header()},
            )
        if body.get("stream") is True:
            request.state.stream = True
            return await self._stream(request, content, tools, start)
        return await self._whole(request, content, body, tools)

    async def _whole(self, request: Request, content: bytes, body: dict[str, Any], tools: RequestTools) -> Response:
        registry = tools.registry
        assert registry is not None
        max_reprompts = self.proxy.config.max_reprompts
        reprompts = 0
        while True:
            reply, data = await self.proxy._whole(request, content)
            parsed = json_object(data) if reply.status_code == 200 else None
            if parsed is None:  # an upstream error, or not a reply: passed through
                return Response(data, reply.status_code, returned_headers(reply.headers.items()))
            tally = request.state.tally = Tally(reprompts=reprompts)
            repaired = self.shape.whole(parsed, registry, tally, self.proxy.config.reasoning)
            missing = missing_call(registry.names) if tools.required and not self.shape.calls(repaired) else None
            if not (tally.notes or missing) or reprompts >= max_reprompts:
                tally.tool_choice_unmet = missing is not None
                break
            reprompts += 1
            body = self.shape.again(body, repaired, tally.notes, missing)
            content = _dumps(body)
        if self.proxy.config.annotate:
            repaired["toolrepair"] = tally.annotation()
        headers = returned_headers(reply.headers.items())
        headers["x-toolrepair"] = tally.header()
        # Nothing changed: the upstream's own bytes go back (numbers as written).
        return Response(data if repaired == parsed else _dumps(repaired), 200, headers)

    async def _stream(self, request: Request, content: bytes, tools: RequestTools, start: float) -> Response:
        from ._app import _SSE_HEADERS, _Body

        registry = tools.registry
        assert registry is not None
        proxy = self.proxy
        reply = await proxy._open(request, content)
        tally = request.state.tally = Tally()
        if reply.status_code != 200 or not reply.headers.get("content-type", "").startswith("text/event-stream"):
            return await proxy._relay(request, reply, start, tally, {"x-toolrepair": tally.header()})
        repair = self.shape.stream(registry, tally, proxy.config.reasoning)
        headers = {**returned_headers(reply.headers.items()), **_SSE_HEADERS, "x-toolrepair": "streamed"}

        async def close() -> None:
            await reply.aclose()
            proxy._log(request, 200, tally, start)

        return _Body(self._events(request, reply, repair, tally, tools.required), 200, headers, close)

    async def _events(
        self, request: Request, reply: httpx.Response, repair: EventRepair, tally: Tally, required: bool
    ) -> AsyncIterator[bytes]:
        # One write per upstream read, as for chat completions; read under the same bounds
        # (decoded size, line length), large reads repaired off the loop.
        reader = SSEReader(self.proxy.config.max_line)
        out: list[bytes] = []
        fault: str | None = None
        try:
            async for part in iter_body(reply):
                await self.proxy.offload.run(_relay, reader.feed(part), repair, out, size=len(part))
                if out:
                    yield b"".join(out)
                    out.clear()
            data = reader.close()
            if data is not None:
                _relay(iter((data,)), repair, out)
            if not repair.finished:
                fault = "The upstream closed the stream before it ended."
        except MalformedSSE as exc:
            fault = f"The upstream sent a malformed event stream ({exc})."
        except httpx.TimeoutException:
            fault = f"The upstream stopped sending for {self.proxy.config.timeout:g} s (--timeout)."
        except httpx.HTTPError as exc:
            fault = f"The upstream stream broke off: {type(exc).__name__}."
        except (ProxyError, zlib.error):
            fault = "The upstream's stream could not be read within the proxy's bounds."
        except Exception:  # the proxy's own fault: said in the stream, never a cut connection
            logger.exception("repairing a stream failed")
            fault = "The proxy failed while repairing the stream."
        out.extend(encode_event(held) for held in repair.close())
        tally.tool_choice_unmet = required and not repair.calls
        if fault is not None:
            request.state.fault = fault_kind(fault)
            out.append(encode_event(self.shape.error(fault)))
        out.append(b": x-toolrepair " + tally.header().encode() + b"\n\n")
        yield b"".join(out)


logger = logging.getLogger("toolrepair.proxy")


def _relay(events: Iterator[str], repair: EventRepair, out: list[bytes]) -> None:
    """Append the repaired form of each event to ``out`` (kept there if a later one raises)."""
    for data in events:
        if data.strip() == "[DONE]":  # some servers end these streams as they end chat ones
            continue
        event = json_object(data)
        if event is None:
            raise MalformedSSE(f"data is not a JSON object: {data[:80]!r}")
        out.extend(encode_event(e) for e in repair.feed(event))


_FAULT_KINDS = (("closed the stream", "incomplete"), ("malformed", "malformed"), ("stopped sending", "timeout"))


def fault_kind(message: str) -> str:
    """A stream fault's kind for the log line and metrics (its message may quote the upstream's
    bytes, which are never logged)."""
    return next((kind for phrase, kind in _FAULT_KINDS if phrase in message), "broken")
