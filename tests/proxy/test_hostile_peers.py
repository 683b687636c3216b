"""Slow and idle peers (slowloris) against the proxy served as `toolrepair serve` serves it (its
guarded protocol, on loopback): a bounded number of raw sockets that never finish their headers
cannot stop a new request. Socket timeouts below are safety nets; nothing asserts a time."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from toolrepair.proxy import create_app
from toolrepair.proxy._server import MAX_HEADER_BYTES, server_options

from .servers import Running


@pytest.fixture
def serve(upstream: Any) -> Iterator[Any]:
    """``serve(**options)`` -> (host, port) of a proxy run with `toolrepair serve`'s server options."""
    running: list[Running] = []

    def start(**options: Any) -> tuple[str, int]:
        app = create_app(upstream=f"{upstream.url}/v1", **options)  # type: ignore[attr-defined]
        server = Running(app, **server_options(app.state.config)).__enter__()
        running.append(server)
        return "127.0.0.1", server.port

    yield start
    for server in running:
        server.__exit__(None, None, None)


def _partial(address: tuple[str, int], head: bytes) -> socket.socket:
    sock = socket.create_connection(address, timeout=60)
    if head:
        sock.sendall(head)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """True once the server closes ``sock`` (reads until EOF; what it sent before is skipped)."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


_HEADS = [
    b"",  # connected, never a byte
    b"GET /health HTTP/1.1\r\n",
    b"GET /health HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n",  # every header but the blank line
    b"POST /v1/chat/completions HTT",
]


@pytest.mark.parametrize("head", _HEADS)
def test_new_requests_get_through_while_connections_hang(serve: Any, head: bytes) -> None:
    address = serve(max_connections=8, header_timeout=600)  # the clock never decides here
    hanging = [_partial(address, head) for _ in range(8)]
    try:
        for _ in range(3):  # each new request makes room by closing the longest waiting
            response = httpx.get(f"http://{address[0]}:{address[1]}/health", timeout=60)
            assert response.status_code == 200
        assert _closed_by_server(hanging[0])
    finally:
        for sock in hanging:
            sock.close()


@pytest.mark.parametrize("head", _HEADS)
def test_unfinished_headers_are_closed_after_the_header_timeout(serve: Any, head: bytes) -> None:
    address = serve(header_timeout=0.05)
    with _partial(address, head) as sock:
        assert _closed_by_server(sock)


def test_a_kept_alive_connection_gets_a_fresh_header_bound(serve: Any) -> None:
    address = serve(header_timeout=0.05)
    with _partial(address, b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n") as sock:
        data = b""
        while b'"ok"' not in data:
            data += sock.recv(65536)
        sock.sendall(b"GET /health HTTP/1.1\r\n")  # the next request, never finished
        assert _closed_by_server(sock)


def test_headers_over_the_bound_get_431(serve: Any) -> None:
    address = serve()
    with _partial(address, b"GET /health HTTP/1.1\r\nx-pad: " + b"a" * (MAX_HEADER_BYTES + 10)) as sock:
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    assert data.startswith(b"HTTP/1.1 431"), data[:40]
    assert httpx.get(f"http://{address[0]}:{address[1]}/health", timeout=60).status_code == 200


def test_a_request_with_a_body_is_not_mistaken_for_slow_headers(serve: Any) -> None:
    address = serve(max_connections=4, header_timeout=600)
    body = b'{"model": "m", "messages": []}' + b" " * (MAX_HEADER_BYTES * 2)
    response = httpx.post(
        f"http://{address[0]}:{address[1]}/v1/embeddings",
        content=body,
        timeout=60,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 200


def test_with_every_slot_working_a_new_connection_is_closed(serve: Any) -> None:
    address = serve(max_connections=1, header_timeout=600)
    with _partial(address, b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n") as working:
        data = b""
        while b'"ok"' not in data:  # answered and kept alive: working, not waiting
            data += working.recv(65536)
        with _partial(address, b"") as extra:
            assert _closed_by_server(extra)
