"""Hostile edges of the proxy: hop-by-hop headers, credentials in the upstream URL, the API key's
sources (real servers on loopback where a socket is involved)."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from toolrepair.proxy._redact import redact_url, scrub
from toolrepair.proxy._upstream import forwarded_headers, returned_headers

from .replies import TOOLS
from .servers import RawUpstream, http_reply, raw_request

# -- hop-by-hop headers, in both directions ----------------------------------------------------------
_HOPS = (
    "connection: keep-alive, X-Hop-One , x-hop-two\r\nx-hop-one: 1\r\nX-Hop-Two: 2\r\nkeep-alive: timeout=5\r\n"
    "te: trailers\r\nproxy-connection: keep-alive\r\nupgrade: h2c\r\nx-kept: yes\r\n"
)


@pytest.mark.parametrize("path", ["/v1/models", "/v1/chat/completions"])
def test_headers_the_client_nominates_are_not_forwarded(start_proxy: Any, path: str) -> None:
    upstream = RawUpstream(
        lambda request: http_reply(
            b'{"choices": []}',
            headers=(
                ("connection", "close, X-Up-Hop"),
                ("x-up-hop", "secret"),
                ("keep-alive", "timeout=1"),
                ("x-up-kept", "yes"),
            ),
        )
    )
    try:
        proxy = start_proxy(upstream=f"{upstream.url}/v1")
        body = json.dumps({"model": "m", "messages": [], "tools": TOOLS}).encode()
        status, headers, _ = raw_request(
            proxy, f"POST {path} HTTP/1.1\r\nhost: x\r\n{_HOPS}content-length: {len(body)}\r\n\r\n".encode() + body
        )
        assert status == 200
        sent = {k.lower() for k, _ in upstream.requests[0]["headers"]}
        assert "x-kept" in sent
        assert not sent & {"x-hop-one", "x-hop-two", "keep-alive", "te", "proxy-connection", "upgrade"}
        assert headers.get("x-up-kept") == "yes"
        assert "x-up-hop" not in headers and "keep-alive" not in headers
    finally:
        upstream.close()


@pytest.mark.parametrize(
    ("headers", "kept"),
    [
        ([("Connection", "foo"), ("foo", "1"), ("bar", "2")], ["bar"]),
        ([("connection", "FOO, ,bar"), ("Foo", "1"), ("bar", "2"), ("baz", "3")], ["baz"]),
        ([("connection", "close"), ("connection", "x-a"), ("x-a", "1"), ("x-b", "2")], ["x-b"]),  # two Connection lines
        ([("te", "trailers"), ("trailer", "x"), ("transfer-encoding", "chunked"), ("x", "1")], ["x"]),
    ],
)
def test_hop_by_hop_tables(headers: list[tuple[str, str]], kept: list[str]) -> None:
    assert [k for k, _ in forwarded_headers(headers, drop_auth=False)] == [*kept, "accept-encoding"]
    assert list(returned_headers(headers)) == kept


# -- credentials in the upstream URL ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
        ("http://me:pw@127.0.0.1:8080/v1", "http://***@127.0.0.1:8080/v1"),
        ("https://me@host/v1", "https://***@host/v1"),
        ("http://a:b@c@host/v1", "http://***@host/v1"),  # the last @ ends the userinfo
        ("http://host/v1?api-key=s3cret&x=1", "http://host/v1?***"),
        ("http://host/v1#frag", "http://host/v1#***"),
        ("http://u:p@host?k=v", "http://***@host?***"),
        ("u:p@host/v1", "***@host/v1"),  # no scheme: still hidden
        ("localhost:11434", "localhost:11434"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_scrub_hides_each_secret_part() -> None:
    url = "http://me:p%40ss@h/v1?key=s3cret"
    text = f"failed {url} as me:p@ss, me:p%40ss, p@ss, key=s3cret"
    out = scrub(text, url)
    assert "s3cret" not in out and "p@ss" not in out and "p%40ss" not in out
    assert "http://***@h/v1?***" in out
    assert scrub("plain", "http://h/v1") == "plain"


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_health_and_errors_never_show_credentials(start_proxy: Any) -> None:
    port = _unused_port()
    proxy = start_proxy(upstream=f"http://admin:hunter2@127.0.0.1:{port}/v1?token=t0ps3cret")
    bodies = [
        httpx.get(f"{proxy}/health").text,
        httpx.get(f"{proxy}/v1/models").text,
        httpx.post(f"{proxy}/v1/chat/completions", json={"model": "m", "messages": [], "tools": TOOLS}).text,
        httpx.post(
            f"{proxy}/v1/chat/completions", json={"model": "m", "messages": [], "tools": TOOLS, "stream": True}
        ).text,
    ]
    for body in bodies:
        assert "hunter2" not in body and "admin" not in body and "t0ps3cret" not in body
    assert json.loads(bodies[0])["upstream"] == f"http://***@127.0.0.1:{port}/v1?***"
    assert f"http://***@127.0.0.1:{port}/v1?***" in json.loads(bodies[1])["error"]["message"]
