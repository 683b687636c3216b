"""The ASGI app: routes, authentication, body limits, the repair of chat completions, logging."""

from __future__ import annotations

import hmac
import json
import logging
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .._history import pair_history
from .._registry import ToolRegistry
from ._body import iter_body, read_body
from ._complete import repair_completion
from ._config import ProxyConfig, Reasoning
from ._errors import ProxyError, error_body
from ._metrics import METRICS_CONTENT_TYPE, Metrics, route_of, time_upstream, upstream_seconds
from ._model import profile_for
from ._offload import Offload
from ._paths import raw_request_path
from ._ready import readiness
from ._report import Tally
from ._reprompt import corrective_turn, missing_call
from ._routes import MESSAGES, RESPONSES, ShapedRoute, fault_kind
from ._sse import MalformedSSE, SSEReader
from ._stream import MalformedChunk, StreamRepair
from ._tools import RequestTools, request_object, request_tools
from ._upstream import Upstream, forwarded_headers, json_object, returned_headers, timeout_error

__all__ = ["build_app"]

logger = logging.getLogger("toolrepair.proxy")

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
_DONE = b"data: [DONE]\n\n"


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _event(value: Any) -> bytes:
    """One server-sent event (compact JSON has no newline: one data line)."""
    return b"data: " + _dumps(value) + b"\n\n"


class _Body(Response):
    """A streamed body that stops when the client goes away, and then closes the upstream.

    Starlette's StreamingResponse, under ASGI 2.4 servers, notices a disconnect only when a
    write fails; a model that holds a token back would keep the upstream generating. Here a
    listener cancels the stream as soon as the client disconnects, and ``on_close`` runs
    whatever ended it (the upstream response is closed there, and the line logged).
    """

    def __init__(
        self,
        chunks: AsyncIterator[bytes],
        status_code: int,
        headers: dict[str, str],
        on_close: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(None, status_code, headers)
        del self.headers["content-length"]
        self._chunks = chunks
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def listen() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(listen)
                try:
                    await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
                    async for chunk in self._chunks:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                except OSError:  # the client went away between two writes (inside the group, or
                    pass  # the task group would wrap it in an exception group)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._on_close()


_Handler = Callable[[Request, float], Awaitable[Response]]


class _Proxy:
    __slots__ = ("config", "metrics", "offload", "upstream")

    def __init__(self, config: ProxyConfig, transport: httpx.AsyncBaseTransport | None) -> None:
        self.config = config
        self.upstream = Upstream(config, transport)
        self.offload = Offload(config.workers)
        self.metrics = Metrics() if config.metrics else None

    # -- the edges ----------------------------------------------------------------------
    def _log(self, request: Request, status: int, tally: Tally | None, start: float) -> None:
        # One line; never a body, never a header (Authorization stays out of every log). A
        # stream that broke off says so by its fault's kind (never the upstream's bytes).
        total = time.perf_counter() - start
        fault = getattr(request.state, "fault", None)
        logger.info(
            "%s %s %d %s%s %.1fms",
            request.method,
            request.url.path,
            status,
            tally.header() if tally is not None else "-",
            f" fault={fault}" if fault else "",
            total * 1000,
        )
        if self.metrics is not None:
            self.metrics.observe(
                route=route_of(request.url.path),
                stream=getattr(request.state, "stream", False),
                status=status,
                fault=fault,
                tally=tally,
                total=total,
                upstream=upstream_seconds(request),
            )

    def _authorize(self, request: Request) -> None:
        key = self.config.api_key
        if key is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), key.encode()):
            raise ProxyError(
                401,
                "Missing or wrong API key: send 'Authorization: Bearer <key>' with the key "
                "toolrepair serve was started with (--api-key-file, TOOLREPAIR_API_KEY or --api-key).",
                kind="invalid_api_key",
            )

    async def _read_body(self, request: Request) -> bytes:
        limit = self.config.max_body
        declared = request.headers.get("content-length")
        too_large = ProxyError(
            413, f"Request body is larger than {limit} bytes (--max-body).", kind="request_too_large"
        )
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise too_large
        parts: list[bytes] = []
        size = 0
        async for part in request.stream():
            size += len(part)
            if size > limit:
                raise too_large
            parts.append(part)
        return b"".join(parts)

    def _headers(self, request: Request) -> list[tuple[str, str]]:
        return forwarded_headers(request.headers.items(), drop_auth=self.config.api_key is not None)

    def endpoint(self, handler: _Handler) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            start = time.perf_counter()
            try:
                self._authorize(request)
                response = await handler(request, start)
            except ProxyError as exc:
                response = JSONResponse(exc.body(), status_code=exc.status)
            except ClientDisconnect:
                response = Response(status_code=499)
            if not isinstance(response, _Body):  # a streamed body logs when it ends
                self._log(request, response.status_code, getattr(request.state, "tally", None), start)
            return response

        return run

    async def health(self, request: Request) -> Response:
        # Unauthenticated: the upstream as shown everywhere, userinfo and query hidden.
        return JSONResponse({"status": "ok", "upstream": self.upstream.shown})

    async def ready(self, request: Request) -> Response:
        status, body = await readiness(self.upstream)
        return JSONResponse(body, status_code=status)

    async def exposition(self, request: Request, start: float) -> Response:
        assert self.metrics is not None
        return Response(self.metrics.exposition(), 200, media_type=METRICS_CONTENT_TYPE)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        """An unknown local path: an OpenAI-shaped 404 that names the base URL, logged."""
        base = f"{request.url.scheme}://{request.url.netloc}/v1"
        self._log(request, 404, None, time.perf_counter())
        return JSONResponse(
            error_body(
                f"Unknown path {request.url.path!r}: toolrepair serve answers under "
                f"{base} (point the client's base URL there).",
                "not_found",
            ),
            404,
        )

    # -- forwarding ---------------------------------------------------------------------
    async def _open(self, request: Request, content: bytes) -> httpx.Response:
        try:
            with anyio.fail_after(self.config.timeout):
                return await time_upstream(
                    request,
                    self.upstream.open(
                        request.method,
                        sent_path(request),
                        headers=self._headers(request),
                        content=content,
                        query=request.url.query,
                    ),
                    self.metrics,
                )
        except TimeoutError:
            raise timeout_error(self.config.timeout) from None

    async def _relay(
        self,
        request: Request,
        reply: httpx.Response,
        start: float,
        tally: Tally | None,
        extra: dict[str, str] | None = None,
    ) -> _Body:
        try:
            body = iter_body(reply)
        except ProxyError:  # an encoding not asked for: said before any response starts
            await reply.aclose()
            raise

        async def chunks() -> AsyncIterator[bytes]:
            try:
                async for part in body:
                    yield part
            except (httpx.HTTPError, zlib.error):
                return  # the upstream went away or garbled its body: what came is delivered, the body ends

        async def close() -> None:
            await reply.aclose()
            self._log(request, reply.status_code, tally, start)

        return _Body(chunks(), reply.status_code, {**returned_headers(reply.headers.items()), **(extra or {})}, close)

    async def forward(self, request: Request, start: float) -> Response:
        """Any other /v1/ path: sent on unchanged, the answer streamed back unchanged."""
        content = await self._read_body(request)
        return await self._relay(request, await self._open(request, content), start, None)

    # -- chat completions ---------------------------------------------------------------
    async def chat(self, request: Request, start: float) -> Response:
        content = await self._read_body(request)
        # A long history (megabytes of JSON) is parsed off the loop, and its tools compiled there.
        body = await self.offload.run(request_object, content, size=len(content))
        if self.config.repair_history:
            content = await self.offload.run(_paired_history, body, content, size=len(content))
        model = profile_for(self.config.model_profile, body.get("model"))
        tools = await self.offload.run(request_tools, body, self.config.profile, model, size=len(content))
        if tools.registry is None:  # nothing to repair against: the request is forwarded as is
            request.state.tally = Tally()
            return await self._relay(
                request,
                await self._open(request, content),
                start,
                request.state.tally,
                {"x-toolrepair": request.state.tally.header()},
            )
        if body.get("stream") is True:
            return await self._stream(request, content, tools, start)
        return await self._complete(request, content, body, tools)

    async def _whole(self, request: Request, content: bytes) -> tuple[httpx.Response, bytes]:
        try:
            with anyio.fail_after(self.config.timeout):
                reply = await time_upstream(
                    request,
                    self.upstream.open(
                        "POST",
                        sent_path(request),
                        headers=self._headers(request),
                        content=content,
                        query=request.url.query,
                    ),
                    self.metrics,
                )
                try:
                    data = await read_body(reply, self.config.max_reply)
                finally:
                    await reply.aclose()
        except (TimeoutError, httpx.TimeoutException):  # whichever of the two clocks ran out first
            raise timeout_error(self.config.timeout) from None
        except httpx.HTTPError as exc:
            raise ProxyError(
                502, f"The upstream failed while answering: {type(exc).__name__}.", kind="upstream_error"
            ) from None
        return reply, data

    async def _complete(self, request: Request, content: bytes, body: dict[str, Any], tools: RequestTools) -> Response:
        # The client's own bytes go upstream (no re-encoding of a long history); a reprompt
        # sends the history with the corrective turn appended.
        assert tools.registry is not None
        reprompts = 0
        while True:
            reply, data = await self._whole(request, content)
            tally = Tally(reprompts=reprompts)
            # Parsing and repairing are linear, but a reply can be megabytes: off the loop.
            whole = (
                await self.offload.run(repair_whole, data, tools.registry, tally, self.config.reasoning, size=len(data))
                if reply.status_code == 200
                else None
            )
            if whole is None:  # an upstream error, or not a completion: passed through
                return Response(data, reply.status_code, returned_headers(reply.headers.items()))
            request.state.tally = tally
            completion, repaired = whole.completion, whole.repaired
            message = _first_message(repaired)
            missing = None
            if tools.required and message is not None and not message.get("tool_calls"):
                missing = missing_call(tools.registry.names)
            if message is None or not (tally.notes or missing) or reprompts >= self.config.max_reprompts:
                tally.tool_choice_unmet = missing is not None
                break
            reprompts += 1
            messages = body.get("messages")
            history = list(messages) if isinstance(messages, list) else []
            body = {**body, "messages": history + corrective_turn(message, tally.notes, missing_call=missing)}
            content = _dumps(body)
        if self.config.annotate:
            repaired["toolrepair"] = tally.annotation()
        headers = returned_headers(reply.headers.items())
        headers["x-toolrepair"] = tally.header()
        return Response(await self.offload.run(_encoded, data, completion, repaired, size=len(data)), 200, headers)

    async def _stream(self, request: Request, content: bytes, tools: RequestTools, start: float) -> Response:
        assert tools.registry is not None
        reply = await self._open(request, content)
        tally = request.state.tally = Tally()
        if reply.status_code != 200 or not reply.headers.get("content-type", "").startswith("text/event-stream"):
            return await self._relay(request, reply, start, tally, {"x-toolrepair": tally.header()})
        try:
            body = iter_body(reply)
        except ProxyError:
            await reply.aclose()
            raise
        repair = StreamRepair(tools.registry, tally, self.config.reasoning)
        request.state.stream = True
        headers = {**returned_headers(reply.headers.items()), **_SSE_HEADERS, "x-toolrepair": "streamed"}

        async def close() -> None:
            await reply.aclose()
            self._log(request, 200, tally, start)

        return _Body(self._events(body, repair, tools.required, request), 200, headers, close)

    async def _events(
        self, body: AsyncIterator[bytes], repair: StreamRepair, required: bool, request: Request
    ) -> AsyncIterator[bytes]:
        # What one read of the upstream yields goes out as one write (not one per event): no
        # event waits for a later read, and a burst of small events costs one send, not many.
        reader = SSEReader(self.config.max_line)
        out: list[bytes] = []
        fault: str | None = None
        done = False  # [DONE] was read
        try:
            async for part in body:
                # A large read (one huge chunk) is repaired off the loop; token-sized ones inline.
                if await self.offload.run(_relay_events, reader.feed(part), repair, out, size=len(part)):
                    done = True
                    break
                if out:
                    yield b"".join(out)
                    out.clear()
            else:
                data = reader.close()
                if data is not None and data.strip() != "[DONE]":
                    out.extend(_repaired(data, repair))
                if not repair.finished:
                    fault = "The upstream closed the stream before it ended."
        except MalformedSSE as exc:
            fault = f"The upstream sent a malformed event stream ({exc})."
        except MalformedChunk as exc:
            fault = f"The upstream sent a malformed chunk ({exc})."
        except httpx.TimeoutException:
            fault = f"The upstream stopped sending for {self.config.timeout:g} s (--timeout)."
        except httpx.HTTPError as exc:
            fault = f"The upstream stream broke off: {type(exc).__name__}."
        except zlib.error:
            fault = "The upstream's stream could not be decoded (corrupt compressed body)."
        except Exception:  # the proxy's own fault: said in the stream, never a cut connection
            logger.exception("repairing a stream failed")
            fault = "The proxy failed while repairing the stream."
        try:
            out.extend(_event(held) for held in repair.close())
        except Exception:
            logger.exception("repairing a stream failed")
            fault = fault or "The proxy failed while repairing the stream."
        # Too late to ask again once the reply has been streamed: said, not repaired.
        repair.tally.tool_choice_unmet = required and not repair.calls
        if fault is not None:
            request.state.fault = fault_kind(fault)
            out.append(_event(error_body(fault, "upstream_error")))
        if self.config.annotate:
            out.append(_event(repair.report_chunk()))
        out.append(b": x-toolrepair " + repair.tally.header().encode() + b"\n\n")
        out.append(_DONE)
        yield b"".join(out)
        if done:  # the client has every event; its response ends once the upstream's has
            await _drain(body)


# What may follow ``[DONE]`` before the upstream's body ends: normally nothing but the chunked
# encoding's last chunk. A body that goes on, or does not end soon, has its connection closed.
_DRAIN_BYTES = 64 * 1024
_DRAIN_SECONDS = 1.0


async def _drain(body: AsyncIterator[bytes]) -> None:
    """Read the rest of a stream's upstream body after its ``[DONE]``, within the bounds above.

    The stream stops at ``[DONE]`` so that the client never waits on an upstream that keeps
    its body open; but a body closed before its end closes its connection, and every streamed
    chat request then opened a new one (a TCP handshake and httpcore's set-up per request).
    Read to its end, the connection is idle and goes back to the pool (httpx gives it back as
    the body ends, before the client's response ends: the client's next request finds it). It
    runs once the client has every event, so only the end of the client's response waits on
    it, for at most ``_DRAIN_SECONDS``.
    """
    size = 0
    with anyio.move_on_after(_DRAIN_SECONDS):
        try:
            async for part in body:
                size += len(part)
                if size > _DRAIN_BYTES:
                    return
        except (httpx.HTTPError, zlib.error):  # the connection is closed by the caller's aclose
            return


@dataclass(frozen=True, slots=True)
class WholeRepair:
    """A whole reply as the upstream sent it (parsed) and as repaired."""

    completion: dict[str, Any]
    repaired: dict[str, Any]


def repair_whole(
    data: bytes, registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate"
) -> WholeRepair | None:
    """The upstream's reply bytes parsed and repaired (None when they are not a JSON object; a
    502 ProxyError when they are not UTF-8): the whole reply's CPU work, run on a worker thread.
    O(len(data))."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # One rule with streams: a reply that is not UTF-8 is an upstream fault, never read with
        # replacement characters nor passed on unrepaired.
        raise ProxyError(502, "The upstream's reply is not valid UTF-8.", kind="upstream_error") from None
    completion = json_object(text)
    if completion is None:
        return None
    return WholeRepair(completion, repair_completion(completion, registry, tally, reasoning))


def _encoded(data: bytes, completion: dict[str, Any], repaired: dict[str, Any]) -> bytes:
    # Nothing changed: the upstream's own bytes go back (no re-encoding, numbers as written).
    return data if repaired == completion else _dumps(repaired)


def _relay_events(events: Iterator[str], repair: StreamRepair, out: list[bytes]) -> bool:
    """Append the repaired form of each event to ``out`` (kept there if a later one raises);
    True at ``[DONE]``."""
    for data in events:
        if data.strip() == "[DONE]":
            return True
        out.extend(_repaired(data, repair))
    return False


def _repaired(data: str, repair: StreamRepair) -> list[bytes]:
    chunk = json_object(data)
    if chunk is None:
        raise MalformedSSE(f"data is not a JSON object: {data[:80]!r}")
    return [_event(out) for out in repair.feed(chunk)]


def sent_path(request: Request) -> str:
    """The request's path as the client sent it, percent-encoding kept: what ``Upstream.open``
    checks and forwards (a decoded path would hide ``%2e%2e`` and ``%2f`` from the check)."""
    raw = request.scope.get("raw_path")
    return raw_request_path(request.scope["path"], raw if isinstance(raw, bytes) else None)


async def not_found(request: Request, exc: Exception) -> Response:
    """Starlette's 404 and 405, in the OpenAI error shape clients parse."""
    status = getattr(exc, "status_code", 404)
    message = "Method not allowed." if status == 405 else f"No such path: {request.url.path[:200]!r}."
    return JSONResponse(error_body(message, "invalid_request_error"), status_code=status)


def _paired_history(body: dict[str, Any], content: bytes) -> bytes:
    """The request with its history's calls and results paired by ``repair_history``'s rules, in
    place on the parsed body (the proxy's own object); the client's bytes when nothing changes."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(type(m) is dict for m in messages):
        return content  # not a history the rules read: the upstream answers it
    changes: list[Any] = []
    body["messages"] = pair_history(messages, "openai", changes=changes)
    if not changes:
        return content
    logger.debug("request history repaired: %s", ", ".join(f"{c.kind.value} at {c.index}" for c in changes))
    return _dumps(body)


def _first_message(completion: dict[str, Any]) -> dict[str, Any] | None:
    choices = completion.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return message
    return None


def build_app(config: ProxyConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
    proxy = _Proxy(config, transport)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await proxy.upstream.aclose()

    routes = [
        Route("/health", proxy.health, methods=["GET"]),
        Route("/ready", proxy.ready, methods=["GET"]),
        *([Route("/metrics", proxy.endpoint(proxy.exposition), methods=["GET"])] if proxy.metrics else []),
        Route("/v1/chat/completions", proxy.endpoint(proxy.chat), methods=["POST"]),
        Route("/v1/messages", proxy.endpoint(ShapedRoute(proxy, MESSAGES)), methods=["POST"]),
        Route("/v1/responses", proxy.endpoint(ShapedRoute(proxy, RESPONSES)), methods=["POST"]),
        Route(
            "/v1/{path:path}",
            proxy.endpoint(proxy.forward),
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
        ),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: proxy.not_found, 405: not_found})
    app.state.config = config
    app.state.shown_upstream = proxy.upstream.shown
    return app
