"""The upstream pool (``_pool.StackPool``) against a real HTTP/1.1 server on loopback.

The server is a plain socket server, so a test decides exactly when a connection is closed:
``/keep`` answers and keeps the connection, ``/close`` answers and then closes it (without
saying so, as a server whose keep-alive ran out does), ``/cut`` closes it in the middle of the
body. ``.../chat/completions`` streams a chat reply in chunked encoding and ends the body after
``[DONE]``; under ``/open/`` it sends ``[DONE]`` and never ends the body. What is asserted is
counted: connections the server accepted, connections in the pool.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpcore
import httpx
import pytest

from toolrepair.proxy import _pool, create_app
from toolrepair.proxy._pool import StackPool, transport

from .servers import Running


class _Server:
    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.accepted = 0
        self.paths: list[tuple[int, str]] = []  # (connection number, path) per request
        self.hang_up = threading.Event()  # `/close` closes its connection once this is set
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                number = self.accepted
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        data = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                path = head.split(b" ")[1].decode()
                length = next(
                    (int(line[15:]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")), 0
                )
                while len(data) < length:  # a request's body: read past, so the next request starts clean
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                data = data[length:]
                with self._lock:
                    self.paths.append((number, path))
                if path.endswith("/chat/completions"):
                    conn.sendall(_STREAM_HEAD + b"".join(_chunk(event) for event in _EVENTS))
                    if path.startswith("/open/"):  # [DONE] sent, the body never ended
                        self.hang_up.wait(30)
                        return
                    conn.sendall(b"0\r\n\r\n")
                    continue
                if path == "/cut":
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nhello")
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                if path == "/close":
                    self.hang_up.wait(30)
                    return

    def close(self) -> None:
        self.hang_up.set()
        self.sock.close()


_STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
_EVENTS = [
    b'data: {"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}]}\n\n',
    b'data: {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n',
    b"data: [DONE]\n\n",
]


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@pytest.fixture
def server() -> Iterator[_Server]:
    running = _Server()
    yield running
    running.close()


def _pool_of(client: httpx.AsyncClient) -> StackPool:
    pool = client._transport._pool  # type: ignore[attr-defined]
    assert isinstance(pool, StackPool)
    return pool


def _run(server: _Server, body: Callable[[httpx.AsyncClient, StackPool], Awaitable[Any]], max_idle: int = 8) -> Any:
    async def main() -> Any:
        async with httpx.AsyncClient(
            base_url=server.url,
            timeout=10,
            trust_env=False,
            transport=transport(max_idle=max_idle, keepalive_expiry=60),
        ) as client:
            return await body(client, _pool_of(client))

    return asyncio.run(main())


async def _until_expired(connection: httpcore.AsyncHTTPConnection) -> None:
    """Wait (a bounded number of loop turns, no clock read) for the server's close to arrive."""
    for _ in range(500):
        if connection.has_expired():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server's close never arrived")


def test_sequential_requests_reuse_one_connection(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        for _ in range(5):
            assert (await client.get("/keep")).text == "ok"
        assert len(pool._idle) == 1 and not pool._busy

    _run(server, body)
    assert server.accepted == 1
    assert [n for n, _ in server.paths] == [1] * 5


def test_concurrent_requests_open_one_connection_each_then_reuse_them(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        for _ in range(3):
            replies = await asyncio.gather(*(client.get("/keep") for _ in range(6)))
            assert [r.text for r in replies] == ["ok"] * 6
        assert len(pool._idle) == 6

    _run(server, body)
    assert server.accepted == 6
    assert len(server.paths) == 18


def test_idle_connections_beyond_max_idle_are_closed(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        await asyncio.gather(*(client.get("/keep") for _ in range(5)))
        assert len(pool._idle) == 2
        await asyncio.gather(*(client.get("/keep") for _ in range(2)))  # the two kept are reused

    _run(server, body, max_idle=2)
    assert server.accepted == 5


def test_a_connection_the_server_closed_while_idle_is_not_reused(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        assert (await client.get("/close")).text == "ok"
        (closed,) = pool._idle
        server.hang_up.set()
        await _until_expired(closed)
        assert (await client.get("/keep")).text == "ok"
        assert closed.is_closed() and closed not in pool._idle

    _run(server, body)
    assert server.paths == [(1, "/close"), (2, "/keep")]


def test_expired_connections_at_the_bottom_are_swept_when_one_comes_back(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        first = await client.send(client.build_request("GET", "/close"), stream=True)
        second = await client.send(client.build_request("GET", "/keep"), stream=True)
        assert len(pool._busy) == 2 and not pool._idle
        await first.aread()
        await first.aclose()
        (oldest,) = pool._idle
        server.hang_up.set()
        await _until_expired(oldest)
        await second.aread()
        await second.aclose()  # back on top; the expired one below it is closed
        assert len(pool._idle) == 1 and pool._idle[0] is not oldest and oldest.is_closed()

    _run(server, body)
    assert server.accepted == 2


def test_a_body_cut_short_raises_and_its_connection_is_dropped(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get("/cut")
        assert not pool._idle and not pool._busy
        assert (await client.get("/keep")).text == "ok"

    _run(server, body)
    assert server.accepted == 2


def test_an_unreachable_server_raises_connect_error_and_leaves_nothing_behind() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused

        async def main() -> None:
            async with httpx.AsyncClient(
                transport=transport(max_idle=8, keepalive_expiry=60), trust_env=False
            ) as client:
                with pytest.raises(httpx.ConnectError):
                    await client.get(f"http://127.0.0.1:{port}/keep")
                pool = _pool_of(client)
                assert not pool._idle and not pool._busy

        asyncio.run(main())


def test_closing_the_pool_closes_idle_and_busy_connections(server: _Server) -> None:
    async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
        done = await client.send(client.build_request("GET", "/keep"), stream=True)
        streaming = await client.send(client.build_request("GET", "/keep"), stream=True)
        await done.aread()
        await done.aclose()
        connections = [*pool._idle, *pool._busy]
        assert len(connections) == 2 and connections[0] is not connections[1]
        await pool.aclose()
        assert all(c.is_closed() for c in connections) and not pool._idle and not pool._busy
        await streaming.aclose()

    _run(server, body)


def test_a_different_origin_is_not_sent_on_an_idle_connection(server: _Server) -> None:
    other = _Server()
    try:

        async def body(client: httpx.AsyncClient, pool: StackPool) -> None:
            await client.get("/keep")
            assert (await client.get(f"{other.url}/keep")).text == "ok"

        _run(server, body)
        assert server.accepted == 1 and other.accepted == 1
    finally:
        other.close()


def test_httpx_own_pool_stays_when_its_layout_is_not_the_known_one(monkeypatch: pytest.MonkeyPatch) -> None:
    class Renamed(httpx.AsyncHTTPTransport):  # a future httpx keeping its pool elsewhere
        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            self.pool = self._pool
            del self._pool

    monkeypatch.setattr(_pool.httpx, "AsyncHTTPTransport", Renamed)
    base = transport(max_idle=8, keepalive_expiry=60)
    assert isinstance(base, Renamed) and isinstance(base.pool, httpcore.AsyncConnectionPool)
    assert not hasattr(base, "_pool")


def _streams(server: _Server, base: str, n: int) -> list[str]:
    """``n`` streamed chat requests through the proxy, one after another, each read to its end."""
    app = create_app(upstream=f"{server.url}{base}/v1", timeout=10)  # type: ignore[attr-defined]
    request = {"model": "m", "stream": True, "messages": [], "tools": [{"type": "function", "function": {"name": "f"}}]}
    with Running(app) as running, httpx.Client(base_url=running.url, timeout=10, trust_env=False) as client:
        return [client.post("/v1/chat/completions", json=request).text for _ in range(n)]


def test_a_chat_stream_read_to_done_gives_its_connection_back() -> None:
    # The proxy stops reading at [DONE]; the rest of the body (the chunked encoding's last
    # chunk) is read after the client has its reply, so the next stream reuses the connection.
    server = _Server()
    try:
        replies = _streams(server, "", 3)
    finally:
        server.close()
    assert all(reply.endswith("data: [DONE]\n\n") and '"hi"' in reply for reply in replies)
    assert server.accepted == 1 and [n for n, _ in server.paths] == [1, 1, 1]


def test_a_body_left_open_after_done_still_ends_the_clients_stream_and_is_not_reused() -> None:
    server = _Server()
    try:
        replies = _streams(server, "/open", 2)
    finally:
        server.close()
    assert all(reply.endswith("data: [DONE]\n\n") and '"hi"' in reply for reply in replies)
    assert server.accepted == 2 and [n for n, _ in server.paths] == [1, 2]
