"""Hostile upstream replies, from real upstreams on loopback: compression bombs, over-long event
lines, encodings not asked for; and the bounded decoder they go through, as tables and a property."""

from __future__ import annotations

import gzip
import itertools
import json
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrepair.proxy._body import STEP, BodyDecoder
from toolrepair.proxy._errors import ProxyError
from toolrepair.proxy._sse import MalformedSSE, SSEReader

from .replies import CASES, TOOLS, completion
from .servers import RawUpstream, http_reply


def _chat(url: str, **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **extra}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60)


def _events(url: str) -> list[Any]:
    body = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
    out: list[Any] = []
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line[len("data: ") :]
                out.append(data if data == "[DONE]" else json.loads(data))
    return out


@pytest.fixture
def serve_reply(start_proxy: Any) -> Iterator[Any]:
    """``serve_reply(raw_http_bytes, **proxy_options)`` -> the URL of a proxy in front of an
    upstream that answers every request with those bytes."""
    upstreams: list[RawUpstream] = []

    def start(reply: bytes, **options: Any) -> str:
        upstream = RawUpstream(lambda request: reply)
        upstreams.append(upstream)
        return str(start_proxy(upstream=f"{upstream.url}/v1", **options))

    yield start
    for upstream in upstreams:
        upstream.close()


def _bomb(size: int) -> bytes:
    """A completion whose content is ``size`` bytes, gzip-compressed (about 1000:1)."""
    return gzip.compress(_BOMB_HEAD + b"a" * size + _BOMB_TAIL, compresslevel=9)


_BOMB_HEAD, _BOMB_TAIL = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "', b'"}}]}'


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/models"])
def test_a_compression_bomb_is_a_502_not_memory(serve_reply: Any, path: str) -> None:
    size = 16 * 1024 * 1024 if path == "/v1/models" else 64 * 1024 * 1024
    bomb = _bomb(size)
    assert len(bomb) < size // 500
    url = serve_reply(http_reply(bomb, headers=(("content-encoding", "gzip"),)), max_reply=1024 * 1024)
    if path == "/v1/models":  # relayed as it streams: delivered in bounded pieces, never held whole
        with httpx.stream("GET", f"{url}{path}", timeout=60) as response:
            sizes = [len(piece) for piece in response.iter_raw()]
        assert sum(sizes) == size + len(_BOMB_HEAD) + len(_BOMB_TAIL)
        return
    response = _chat(url)
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["type"] == "upstream_error" and "larger than 1048576 bytes" in error["message"]


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate"])
def test_a_compressed_reply_is_read_and_repaired(serve_reply: Any, encoding: str) -> None:
    body = json.dumps(completion(CASES["hermes"][0], "vllm")).encode()
    packed = zlib.compress(body) if encoding == "deflate" else gzip.compress(body)
    url = serve_reply(http_reply(packed, headers=(("content-encoding", encoding),)))
    response = _chat(url)
    assert response.status_code == 200
    assert response.headers["x-toolrepair"] == "repaired=1, salvaged=1, refused=0"
    assert "content-encoding" not in response.headers


@pytest.mark.parametrize("stream", [False, True])
def test_an_encoding_not_asked_for_is_a_502(serve_reply: Any, stream: bool) -> None:
    url = serve_reply(
        http_reply(
            b"\x00\x01",
            content_type="text/event-stream" if stream else "application/json",
            headers=(("content-encoding", "br"),),
        )
    )
    response = _chat(url, stream=stream)
    assert response.status_code == 502 and "content-encoding 'br'" in response.json()["error"]["message"]
    assert httpx.get(f"{url}/v1/models").status_code == 502


def test_a_corrupt_compressed_reply_is_a_502(serve_reply: Any) -> None:
    url = serve_reply(http_reply(b"\x1f\x8b\x08\x00garbage" * 10, headers=(("content-encoding", "gzip"),)))
    response = _chat(url)
    assert response.status_code == 502 and "could not be decoded" in response.json()["error"]["message"]


def _sse_reply(body: bytes, encoding: str | None = None) -> bytes:
    headers = (("content-encoding", encoding),) if encoding else ()
    return http_reply(body, content_type="text/event-stream", headers=headers)


def _chunk(content: str) -> bytes:
    data = {"id": "x", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        (_chunk("Hello") + b"data: " + b"x" * 300_000 + b"\n\n", None),  # one over-long line
        (_chunk("Hello") + b"data: " + b"x" * 300_000, None),  # never ended
        (_chunk("Hello") + b"data: a\n" * 40_000 + b"\n", None),  # short lines, one over-long event
        (gzip.compress(_chunk("Hello") + b"data: " + b"x" * 30_000_000 + b"\n\n"), "gzip"),  # and compressed
    ],
    ids=["long-line", "unended-line", "long-event", "gzip-line"],
)
def test_an_over_long_event_line_is_an_error_event(serve_reply: Any, body: bytes, encoding: str | None) -> None:
    url = serve_reply(_sse_reply(body, encoding), max_line=64 * 1024)
    events = _events(url)
    assert events[-1] == "[DONE]"
    errors = [e for e in events if isinstance(e, dict) and "error" in e]
    assert len(errors) == 1 and "longer than 65536 bytes" in errors[0]["error"]["message"]
    assert (
        "".join(
            e["choices"][0]["delta"].get("content") or "" for e in events if isinstance(e, dict) and e.get("choices")
        )
        == "Hello"
    )


def test_a_corrupt_compressed_stream_is_an_error_event(serve_reply: Any) -> None:
    packed = gzip.compress(_chunk("Hello") * 3)
    url = serve_reply(_sse_reply(packed[:20] + b"\xff" * 40 + packed[60:], "gzip"))
    events = _events(url)
    assert events[-1] == "[DONE]"
    assert [e["error"]["message"] for e in events if isinstance(e, dict) and "error" in e] == [
        "The upstream's stream could not be decoded (corrupt compressed body)."
    ]


# -- the decoder -------------------------------------------------------------------------------------
def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


_PLAIN = b'{"a": "' + b"xyz" * 50_000 + b'"}'


@pytest.mark.parametrize(
    ("encoding", "packed"),
    [
        (None, _PLAIN),
        ("identity", _PLAIN),
        ("gzip", gzip.compress(_PLAIN)),
        (" GZIP ", gzip.compress(_PLAIN)),
        ("x-gzip", gzip.compress(_PLAIN)),
        ("gzip", gzip.compress(_PLAIN[:1000]) + gzip.compress(_PLAIN[1000:])),  # two members
        ("deflate", zlib.compress(_PLAIN)),
        ("deflate", _raw_deflate(_PLAIN)),
    ],
    ids=["none", "identity", "gzip", "GZIP", "x-gzip", "gzip-members", "deflate-zlib", "deflate-raw"],
)
@pytest.mark.parametrize("read", [1, 7, 4096, 10**9])
def test_body_decoder(encoding: str | None, packed: bytes, read: int) -> None:
    decoder = BodyDecoder(encoding)
    pieces = [piece for i in range(0, len(packed), read) for piece in decoder.feed(packed[i : i + read])]
    assert b"".join(pieces) == _PLAIN
    assert all(0 < len(piece) <= STEP for piece in pieces)


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, br", "compress"])
def test_body_decoder_refuses_what_it_did_not_ask_for(encoding: str) -> None:
    with pytest.raises(ProxyError, match="did not ask for") as exc:
        BodyDecoder(encoding)
    assert exc.value.status == 502


def test_body_decoder_bounds_each_piece_of_a_bomb() -> None:
    bomb = gzip.compress(b"\x00" * (32 * 1024 * 1024), compresslevel=9)
    decoder = BodyDecoder("gzip")
    total = 0
    for piece in decoder.feed(bomb):  # one read holding the whole bomb
        assert len(piece) <= STEP
        total += len(piece)
    assert total == 32 * 1024 * 1024


def test_body_decoder_corrupt_raises() -> None:
    with pytest.raises(zlib.error):
        list(BodyDecoder("gzip").feed(b"\x1f\x8b\x08\x00" + b"\xff" * 64))
    assert list(BodyDecoder("deflate").feed(b"")) == []


@given(
    st.binary(max_size=3000),
    st.sampled_from(["gzip", "deflate", "identity"]),
    st.lists(st.integers(0, 4000), max_size=6),
)
def test_body_decoder_any_cut_gives_the_body(data: bytes, encoding: str, cuts: list[int]) -> None:
    packed = {"gzip": gzip.compress, "deflate": zlib.compress, "identity": bytes}[encoding](data)
    bounds = sorted({min(c, len(packed)) for c in cuts} | {0, len(packed)})
    decoder = BodyDecoder(encoding)
    assert b"".join(p for a, b in itertools.pairwise(bounds) for p in decoder.feed(packed[a:b])) == data


@pytest.mark.parametrize(
    "chunks",
    [
        [b"data: " + b"x" * 101],
        [b"data: ", b"x" * 60, b"x" * 41],
        [b"data: " + b"x" * 200 + b"\n\n"],
        [b"data: " + b"x" * 60 + b"\n", b"data: " + b"x" * 60 + b"\n"],  # one event of 120
    ],
)
def test_sse_reader_bounds_lines_and_events(chunks: list[bytes]) -> None:
    reader = SSEReader(max_line=100)
    with pytest.raises(MalformedSSE, match="longer than 100 bytes"):
        for chunk in chunks:
            list(reader.feed(chunk))


def test_sse_reader_takes_what_fits() -> None:
    reader = SSEReader(max_line=100)
    assert list(reader.feed(b"data: " + b"x" * 90 + b"\n\n" + b"data: " + b"y" * 90 + b"\n\n")) == ["x" * 90, "y" * 90]


# -- bytes that are not UTF-8: one rule, fail closed ------------------------------------------------
_NOT_UTF8 = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"]  # bad, surrogate, > U+10FFFF, cut


@pytest.mark.parametrize("bad", _NOT_UTF8)
def test_a_whole_reply_that_is_not_utf8_is_a_502(serve_reply: Any, bad: bytes) -> None:
    body = json.dumps(completion(CASES["hermes"][0], "vllm")).encode().replace(b"Let me", b"Let " + bad + b"me")
    response = _chat(serve_reply(http_reply(body)))
    assert response.status_code == 502 and "not valid UTF-8" in response.json()["error"]["message"]


@pytest.mark.parametrize("bad", _NOT_UTF8)
def test_a_stream_that_is_not_utf8_ends_with_the_error_event(serve_reply: Any, bad: bytes) -> None:
    body = _chunk("Hello") + _chunk("X").replace(b"X", bad) + _chunk("never")
    events = _events(serve_reply(_sse_reply(body)))
    assert events[-1] == "[DONE]"
    errors = [e["error"]["message"] for e in events if isinstance(e, dict) and "error" in e]
    assert len(errors) == 1 and "not UTF-8" in errors[0]
    text = "".join(
        e["choices"][0]["delta"].get("content") or "" for e in events if isinstance(e, dict) and e.get("choices")
    )
    assert text == "Hello"


@pytest.mark.parametrize("bad", _NOT_UTF8)
def test_sse_reader_refuses_bytes_that_are_not_utf8(bad: bytes) -> None:
    with pytest.raises(MalformedSSE, match="not UTF-8"):
        list(SSEReader().feed(b"data: " + bad + b"\n\n"))
    reader = SSEReader()
    list(reader.feed(b"data: " + bad))
    with pytest.raises(MalformedSSE, match="not UTF-8"):
        reader.close()


def test_a_corrupt_compressed_relayed_body_ends_where_it_breaks(serve_reply: Any) -> None:
    packed = gzip.compress(b'{"object": "list", "data": []}' * 1000)
    url = serve_reply(http_reply(packed[:30] + b"\xff" * 64 + packed[94:], headers=(("content-encoding", "gzip"),)))
    with httpx.stream("GET", f"{url}/v1/models", timeout=60) as response:
        assert response.status_code == 200  # already started: the body ends where it broke
        body = response.read()
    assert len(body) < 30 * 1000
