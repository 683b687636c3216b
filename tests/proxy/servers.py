"""Real HTTP servers on loopback for the proxy's tests: a scripted upstream, and uvicorn runners.

The upstream picks its reply from the request's ``model``: ``"<flavor>/<chunking>/<case>"``
replays ``replies.CASES[case]`` as that server would send it (streamed when asked), and
``"fault/<kind>"`` misbehaves on purpose. It records what it received (``seen``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .replies import CASES, Reply, chunks, completion, sse


class Running:
    """An ASGI app served by uvicorn in a thread, on 127.0.0.1 and a free port."""

    def __init__(self, app: Any, **options: Any) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="critical", access_log=False, lifespan="on", ws="none", **options
        )
        self.server = uvicorn.Server(config)
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)

        async def main() -> None:
            serving = asyncio.ensure_future(self.server.serve())
            while not self.server.started and not serving.done():
                await asyncio.sleep(0)
            self._ready.set()
            await serving

        try:
            loop.run_until_complete(main())
        finally:
            self._ready.set()
            loop.close()

    def __enter__(self) -> Running:
        self._thread.start()
        self._ready.wait(30)
        assert self.server.started, "server did not start"
        return self

    @property
    def port(self) -> int:
        port: int = self.server.servers[0].sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(30)
        assert not self._thread.is_alive()


class Upstream:
    """The scripted model server."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()  # lets "slow" and "hang" replies go at teardown
        self.cancelled = threading.Event()  # set when a client went away mid-stream
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/completions", self.completions, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/v1/embeddings", self.embeddings, methods=["POST"]),
            ]
        )

    async def _wait_release(self) -> None:
        while not self.release.is_set():
            await asyncio.sleep(0.01)

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        self.seen.append({"headers": dict(request.headers), "body": body})
        model: str = body["model"]
        if model.startswith("fault/"):
            return await self._fault(model[len("fault/") :], body, request)
        if model.startswith("reprompt/"):
            return self._reprompt(model, body)
        flavor, chunking, key = model.split("/")
        reply = CASES[key][0]
        return self._send(reply, flavor, chunking, body)

    def _send(self, reply: Reply, flavor: str, chunking: str, body: dict[str, Any]) -> Response:
        if body.get("stream"):
            events = sse(chunks(reply, flavor, chunking, body["model"]))

            async def gen() -> AsyncIterator[bytes]:
                for event in events:
                    yield event

            return StreamingResponse(gen(), media_type="text/event-stream")
        return JSONResponse(completion(reply, flavor, body["model"]))

    def _reprompt(self, model: str, body: dict[str, Any]) -> Response:
        # First answer the case named in the model; once corrected (a tool message or a user
        # message from the proxy is last), answer with a call that needs no repair.
        _, first = model.split("/", 1)
        last = body["messages"][-1] if body["messages"] else {}
        fixed = Reply('<tool_call>{"name": "web_search", "arguments": {"query": "fixed"}}</tool_call>')
        corrected = last.get("role") == "tool" or (len(body["messages"]) > 1 and last.get("role") == "user")
        if first == "never":
            return self._send(CASES["prose"][0], "vllm", "whole", body)
        return self._send(fixed if corrected else CASES[first][0], "vllm", "whole", body)

    async def _fault(self, kind: str, body: dict[str, Any], request: Request) -> Response:
        if kind == "500":
            return JSONResponse({"error": {"message": "model exploded", "type": "server_error"}}, status_code=500)
        if kind == "404":
            return JSONResponse({"error": {"message": "model 'x' not found"}}, status_code=404)
        if kind == "slow":
            await self._wait_release()
            return JSONResponse(completion(CASES["prose"][0], "vllm"))
        if kind == "nochoices":
            return JSONResponse({"id": "x", "object": "chat.completion"})
        if kind == "nodone":  # every chunk, the last without its blank line, and no [DONE]
            events = sse(chunks(CASES["hermes"][0], "vllm", "token"), done=False)
            events[-1] = events[-1].rstrip(b"\n")

            async def whole() -> AsyncIterator[bytes]:
                for event in events:
                    yield event

            return StreamingResponse(whole(), media_type="text/event-stream")
        if kind == "notjson":
            return Response(b"<html>gateway</html>", status_code=200, media_type="text/html")
        good = sse(chunks(CASES["hermes"][0], "vllm", "char"), done=False)
        head = good[: len(good) // 3]  # "Let me look." and part of the call

        async def gen() -> AsyncIterator[bytes]:
            for event in head:
                yield event
            if kind == "malformed":
                yield b"this is not an event\n\n"
                await self._wait_release()
            elif kind == "badjson":
                yield b"data: {not json\n\n"
                await self._wait_release()
            elif kind == "hang":  # a model thinking: nothing to write, so only a listener notices
                try:
                    while not self.release.is_set():
                        if await request.is_disconnected():
                            self.cancelled.set()
                            return
                        await asyncio.sleep(0.01)
                except asyncio.CancelledError:  # the server noticed the disconnect for us
                    self.cancelled.set()
                    raise
            elif kind == "cut":
                raise RuntimeError("connection lost")  # uvicorn drops the connection mid-body
            elif kind == "eof":
                return  # a clean end, but the reply never finished
            elif kind == "stall":
                await self._wait_release()

        return StreamingResponse(gen(), media_type="text/event-stream")

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        if body.get("stream"):

            async def gen() -> AsyncIterator[bytes]:
                for word in ("Hello", " world"):
                    yield b"data: " + json.dumps({"choices": [{"text": word, "index": 0}]}).encode() + b"\n\n"
                if body.get("model") == "cut":
                    raise RuntimeError("connection lost")
                yield b"data: [DONE]\n\n"

            return StreamingResponse(gen(), media_type="text/event-stream")
        return JSONResponse({"choices": [{"text": "Hello world", "index": 0}]})

    async def models(self, request: Request) -> Response:
        self.seen.append({"headers": dict(request.headers), "query": request.url.query})
        return JSONResponse({"object": "list", "data": [{"id": "m", "object": "model"}]}, headers={"x-upstream": "yes"})

    async def embeddings(self, request: Request) -> Response:
        body = await request.json()
        return JSONResponse(
            {"object": "list", "data": [{"embedding": [0.5] * 3, "index": 0}], "model": body.get("model")}
        )


class RawUpstream:
    """An upstream on a raw socket: it records each request exactly as received (the request
    target undecoded, the headers as sent) and answers with ``answer(request)``, raw HTTP bytes
    (one request per connection). For what a framework would normalise before a test could see it."""

    def __init__(self, answer: Any = None) -> None:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.requests: list[dict[str, Any]] = []
        self.answer = answer or (lambda request: http_reply(b'{"object": "list", "data": []}'))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    got = conn.recv(65536)
                    if not got:
                        break
                    data += got
                head, _, body = data.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:]]
                length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
                while len(body) < length:
                    body += conn.recv(65536)
                request = {"method": method, "target": target, "headers": headers, "body": body}
                self.requests.append(request)
                with contextlib.suppress(OSError):
                    conn.sendall(self.answer(request))

    def close(self) -> None:
        self.sock.close()


def http_reply(
    body: bytes,
    *,
    status: str = "200 OK",
    content_type: str = "application/json",
    headers: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """One whole HTTP/1.1 response, closing the connection."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers)
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
        f"connection: close\r\n{extra}\r\n"
    ).encode() + body


def raw_request(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` (raw bytes, exactly as written) to the server at ``url``; its status,
    headers (last of each name) and body. One request, then the connection closes."""
    import socket

    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:  # timeout: a safety net only
        sock.sendall(request)
        data = b""
        while True:
            got = sock.recv(65536)
            if not got:
                break
            data += got
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        body = _dechunk(body)
    return int(lines[0].split(" ")[1]), headers, body


def _dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, body = out + body[:size], body[size + 2 :]
    return out
