"""Paths: only normalised paths under the upstream's base are forwarded (to a real upstream on
loopback that records the request targets it receives, exactly as sent)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrepair.proxy._config import ProxyConfig
from toolrepair.proxy._errors import ProxyError
from toolrepair.proxy._paths import forwarded_path, raw_request_path
from toolrepair.proxy._upstream import Upstream

from .servers import RawUpstream, raw_request

_TRAVERSALS = [
    "/v1/../api/delete",
    "/v1/./../api/delete",
    "/v1/models/../../api/delete",
    "/v1/%2e%2e/api/delete",
    "/v1/%2E%2E/api/delete",
    "/v1/.%2e/api/delete",
    "/v1/%2e./api/delete",
    "/v1/..%2fapi/delete",
    "/v1/..%2Fapi/delete",
    "/v1/%2e%2e%2fapi%2fdelete",
    "/v1/%252e%252e/api/delete",  # double-encoded
    "/v1/..%252fapi/delete",
    "/v1/%25252e%25252e/api/delete",  # triple
    "/v1/..\\api\\delete",
    "/v1/..%5capi/delete",
    "/v1/..%5Capi/delete",
    "/v1/..;/api/delete",  # a path parameter some servers drop
    "/v1/%2e%2e;x/api/delete",
    "/v1/%EF%BC%8E%EF%BC%8E/api/delete",  # fullwidth dots, folded by NFKC
    "/v1/%c0%ae%c0%ae/api/delete",  # overlong UTF-8: not UTF-8 at all
    "/v1/.",
    "/v1/..",
    "/v1%2f..%2fapi/delete",  # decoded, it matches /v1/{path}: the check reads what was sent
    "/v1/a%00b",
    "/v1/%2525252525252e",  # nested past the rounds the check decodes
]


@pytest.fixture
def recorded(start_proxy: Any) -> Iterator[tuple[str, RawUpstream]]:
    upstream = RawUpstream()
    try:
        yield start_proxy(upstream=f"{upstream.url}/v1"), upstream
    finally:
        upstream.close()


@pytest.mark.parametrize("path", _TRAVERSALS)
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_traversal_is_never_forwarded(recorded: tuple[str, RawUpstream], path: str, method: str) -> None:
    proxy, upstream = recorded
    status, _headers, body = raw_request(
        proxy, f"{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}".encode()
    )
    assert status in (400, 404), body
    error = httpx.Response(status, content=body).json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert upstream.requests == []


def test_paths_outside_v1_are_openai_shaped_404(recorded: tuple[str, RawUpstream]) -> None:
    proxy, upstream = recorded
    for path in ("/api/delete", "/", "/v2/models", "/api/../v1/models"):
        status, _, body = raw_request(proxy, f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
        assert status == 404
        assert "error" in httpx.Response(status, content=body).json()
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/v1/models", "/v1/models"),
        ("/v1/models?limit=2", "/v1/models?limit=2"),
        ("/v1/models/qwen3%3A8b", "/v1/models/qwen3%3A8b"),  # encoding kept as sent
        ("/v1/files/a.b..c", "/v1/files/a.b..c"),  # dots inside a segment are not dot segments
        ("/v1/x/...", "/v1/x/..."),
        ("/v1/a%20b", "/v1/a%20b"),
    ],
)
def test_normal_paths_reach_the_upstream_as_sent(recorded: tuple[str, RawUpstream], path: str, target: str) -> None:
    proxy, upstream = recorded
    status, _, _ = raw_request(proxy, f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
    assert status == 200
    assert [r["target"] for r in upstream.requests] == [target]


def test_the_base_keeps_its_own_path_and_query(start_proxy: Any) -> None:
    upstream = RawUpstream()
    try:
        proxy = start_proxy(upstream=f"{upstream.url}/openai/v1?api-version=2")
        assert httpx.get(f"{proxy}/v1/models?limit=1").status_code == 200
        assert raw_request(proxy, b"GET /v1/../x HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")[0] == 404
        assert [r["target"] for r in upstream.requests] == ["/openai/v1/models?api-version=2&limit=1"]
    finally:
        upstream.close()


# -- the rule itself, for any path ------------------------------------------------------------------
_PIECES = st.sampled_from(
    [
        "/",
        ".",
        "..",
        "%2e",
        "%2E",
        "%2f",
        "%2F",
        "%25",
        "%5c",
        "\\",
        ";",
        "a",
        "v1",
        "%",
        "2e",
        "%c0%ae",
        "%ef%bc%8e",
        "\x00",
        "?",
        "%3f",
    ]
)


def _fully_decoded(path: str) -> str:
    for _ in range(8):
        path = unquote(path)
    return path


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_whatever_is_forwarded_stays_under_the_base(tail: str) -> None:
    """For any path, what reaches the upstream is under its base, however the URL is normalised
    (httpx's dot-segment removal, any number of decodings, backslashes read as slashes)."""
    upstream = Upstream(ProxyConfig("http://127.0.0.1:9/base/v1"))
    for path in (tail, "/v1/" + tail, "/v1" + tail):
        try:
            url = upstream.url(path)
        except ProxyError as exc:
            assert exc.status == 404 and exc.body()["error"]["param"] == "path"
            continue
        assert httpx.URL(url).path.startswith("/base/v1")
        decoded = _fully_decoded(httpx.URL(url).raw_path.decode().split("?")[0]).replace("\\", "/")
        assert posixpath.normpath(decoded).startswith("/base/v1")


@pytest.mark.parametrize(("path", "rest"), [("/v1", ""), ("/v1/", "/"), ("/v1/a/b", "/a/b"), ("/v1/a.", "/a.")])
def test_forwarded_path(path: str, rest: str) -> None:
    assert forwarded_path(path) == rest


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/v10/models", "not under /v1/"),
        ("/v1/\u00e9", "not percent-encoded"),
        ("/v1/%ff", "not UTF-8"),
        ("/v1/%25252525252e", "nested too deep"),
        ("/v1/" + "x" * 300 + "/..", "…"),  # a long path is shown cut
    ],
)
def test_forwarded_path_refuses(path: str, why: str) -> None:
    with pytest.raises(ProxyError, match=why):
        forwarded_path(path)


@pytest.mark.parametrize(
    ("scope_path", "raw", "sent"),
    [
        ("/v1/../x", b"/v1/%2e%2e/x", "/v1/%2e%2e/x"),
        ("/v1/a b", None, "/v1/a%20b"),
        ("/v1/a", b"/v1/a?q=1", "/v1/a"),
    ],
)
def test_raw_request_path(scope_path: str, raw: bytes | None, sent: str) -> None:
    assert raw_request_path(scope_path, raw) == sent
