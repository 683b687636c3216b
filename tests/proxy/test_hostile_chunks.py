"""Malformed upstream chunks end the stream with the error event and [DONE]; requests the proxy
cannot read are a 400 in the OpenAI shape (real servers on loopback; the pure parts as tables)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from toolrepair.proxy._errors import ProxyError
from toolrepair.proxy._report import Tally
from toolrepair.proxy._stream import MalformedChunk, StreamRepair
from toolrepair.proxy._tools import request_object, request_tools

from .replies import TOOLS
from .servers import RawUpstream, http_reply


def _sse(*chunks: Any) -> bytes:
    return b"".join(b"data: " + (c if isinstance(c, bytes) else json.dumps(c).encode()) + b"\n\n" for c in chunks)


def _choice(delta: Any, finish: Any = None, index: Any = 0) -> dict[str, Any]:
    return {"id": "x", "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


_HELLO = _choice({"content": "Hello"})
_MALFORMED = {
    "content-after-finish": [_HELLO, _choice({}, "stop"), _choice({"content": "more"})],
    "call-after-finish": [
        _HELLO,
        _choice({}, "stop"),
        _choice({"tool_calls": [{"index": 0, "function": {"name": "a"}}]}),
    ],
    "array-index": [_HELLO, _choice({"content": "x"}, index=[0])],
    "string-index": [_HELLO, _choice({"content": "x"}, index="0")],
    "bool-index": [_HELLO, _choice({"content": "x"}, index=True)],
    "negative-index": [_HELLO, _choice({"content": "x"}, index=-1)],
    "array-call-index": [_HELLO, _choice({"tool_calls": [{"index": [1], "function": {"name": "web_search"}}]})],
    "float-call-index": [_HELLO, _choice({"tool_calls": [{"index": 0.5, "function": {"name": "web_search"}}]})],
    "choice-not-object": [_HELLO, {"id": "x", "choices": ["odd"]}],
    "delta-not-object": [_HELLO, _choice([1, 2])],
    "content-not-string": [_HELLO, _choice({"content": {"text": "x"}})],
    "tool-calls-not-array": [_HELLO, _choice({"tool_calls": {"index": 0}})],
    "call-not-object": [_HELLO, _choice({"tool_calls": ["web_search"]})],
    "function-not-object": [_HELLO, _choice({"tool_calls": [{"index": 0, "function": "web_search"}]})],
    "name-not-string": [_HELLO, _choice({"tool_calls": [{"index": 0, "function": {"name": 7}}]})],
    "arguments-not-string": [_HELLO, _choice({"tool_calls": [{"index": 0, "function": {"arguments": {"q": 1}}}]})],
    "call-continued-after-a-later-one": [
        _HELLO,
        _choice({"tool_calls": [{"index": 0, "function": {"name": "web_search"}}]}),
        _choice({"tool_calls": [{"index": 1, "function": {"name": "get_weather"}}]}),
        _choice({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
    ],
    "not-an-object": [_HELLO, b"[1, 2, 3]"],
    "json-string": [_HELLO, b'"choices"'],
    "not-json": [_HELLO, b"{choices"],
}


@pytest.mark.parametrize("key", sorted(_MALFORMED))
def test_a_malformed_chunk_ends_with_the_error_event(start_proxy: Any, key: str) -> None:
    upstream = RawUpstream(lambda request: http_reply(_sse(*_MALFORMED[key]), content_type="text/event-stream"))
    try:
        proxy = start_proxy(upstream=f"{upstream.url}/v1")
        body = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
        with httpx.stream("POST", f"{proxy}/v1/chat/completions", json=body, timeout=60) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "data: [DONE]"
        events = [json.loads(line[len("data: ") :]) for line in lines[:-1]]
        errors = [e for e in events if "error" in e]
        assert len(errors) == 1 and errors[0]["error"]["type"] == "upstream_error"
        assert "malformed" in errors[0]["error"]["message"]
        assert errors[0] is events[-1]
        assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1]).startswith("Hello")
    finally:
        upstream.close()


@pytest.mark.parametrize("key", sorted(k for k in _MALFORMED if not isinstance(_MALFORMED[k][-1], bytes)))
def test_stream_repair_refuses_malformed_chunks(key: str) -> None:
    registry = request_tools({"tools": TOOLS}, "local").registry
    assert registry is not None
    repair = StreamRepair(registry, Tally())
    *good, bad = _MALFORMED[key]
    for chunk in good:
        repair.feed(chunk)
    with pytest.raises(MalformedChunk):
        repair.feed(bad)


@pytest.mark.parametrize(
    "chunks",
    [
        [_choice({"content": "a"}, index=None), _choice({}, "stop", index=None)],  # null index: choice 0
        [_choice({}, "stop"), _choice({"content": ""}), _choice({}, "stop")],  # empty content after the finish
        [_choice({"tool_calls": [{"index": 0, "function": None}]}), _choice({}, "stop")],
        [{"id": "x"}, {"id": "x", "choices": None}, _choice(None, "stop")],  # no choices, no delta
    ],
)
def test_stream_repair_takes_what_is_well_formed(chunks: list[dict[str, Any]]) -> None:
    registry = request_tools({"tools": TOOLS}, "local").registry
    assert registry is not None
    repair = StreamRepair(registry, Tally())
    for chunk in chunks:
        repair.feed(chunk)
    repair.close()


# -- requests the proxy cannot read ------------------------------------------------------------------
def _deep_tools(depth: int) -> bytes:
    """A request whose one tool's schema nests ``depth`` objects (written as text: json.dumps
    itself would overflow its stack)."""
    schema = '{"type": "object", "properties": {"a": ' * depth + '{"type": "string"}' + "}}" * depth
    return (
        '{"model": "m", "tools": [{"type": "function", "function": {"name": "f", "parameters": ' + schema + "}}]}"
    ).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [(_deep_tools(depth), "nested too deep") for depth in (150, 400, 2000)]
    + [
        (b'{"model": "m", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deep"),
        (b'{"model": "\xff"}', "not UTF-8"),
        (b"", "not a JSON object"),
        (b"null", "a JSON NoneType"),
        (b'"text"', "a JSON str"),
    ],
    ids=["schema-150", "schema-400", "schema-2000", "body-deep", "not-utf8", "empty", "null", "string"],
)
def test_requests_the_proxy_cannot_read_are_400(proxy: str, content: bytes, message: str) -> None:
    for _ in range(2):  # the same answer every time: no state left behind
        response = httpx.post(
            f"{proxy}/v1/chat/completions", content=content, headers={"content-type": "application/json"}, timeout=60
        )
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error" and message in error["message"]


def test_request_object() -> None:
    assert request_object(b'{"a": [1]}') == {"a": [1]}
    with pytest.raises(ProxyError, match="not a JSON object") as exc:
        request_object(b"[1]")
    assert exc.value.status == 400 and exc.value.param == "body"


@pytest.mark.parametrize("where", ["feed", "close"])
def test_a_fault_of_the_proxy_itself_still_ends_the_stream_properly(
    start_proxy: Any, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Defence in depth: whatever goes wrong while repairing, the client gets the error event and
    [DONE], never a cut connection (the fault injected where the repair runs)."""
    from toolrepair.proxy import _app

    def broken(*args: Any) -> Any:
        raise RuntimeError("injected")

    if where == "feed":
        monkeypatch.setattr(_app, "_repaired", broken)
    else:
        monkeypatch.setattr(StreamRepair, "close", broken)
    upstream = RawUpstream(
        lambda request: http_reply(_sse(_HELLO, _choice({}, "stop")), content_type="text/event-stream")
    )
    try:
        proxy = start_proxy(upstream=f"{upstream.url}/v1")
        body = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
        with httpx.stream("POST", f"{proxy}/v1/chat/completions", json=body, timeout=60) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "data: [DONE]"
        errors = [json.loads(line[6:])["error"] for line in lines[:-1] if '"error"' in line]
        assert [e["message"] for e in errors] == ["The proxy failed while repairing the stream."]
        assert "injected" not in "".join(lines)  # no internals in what the client reads
    finally:
        upstream.close()
