"""One rule on both paths: a text call before native calls stays text (salvage runs only on replies
without native calls); a refused call is never delivered; ``length`` never becomes
``tool_calls``. Pure: ``StreamRepair`` against ``repair_completion`` over arbitrary chunkings."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrepair.proxy._calls import finish_reason
from toolrepair.proxy._complete import repair_completion
from toolrepair.proxy._report import Tally
from toolrepair.proxy._stream import StreamRepair
from toolrepair.proxy._tools import request_tools

from .replies import TOOLS, assemble


def _registry(profile: str = "local") -> Any:
    registry = request_tools({"tools": TOOLS}, profile).registry  # type: ignore[arg-type]
    assert registry is not None
    return registry


def _cuts(text: str, points: list[int]) -> list[str]:
    bounds = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _chunks(content: str | None, native: list[dict[str, Any]], finish: str, points: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for piece in _cuts(content or "", points):
        if piece:
            out.append({"id": "x", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    for i, call in enumerate(native):
        args = call["function"]["arguments"]
        head = {"index": i, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        out.append({"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]})
        for piece in _cuts(args, points):
            out.append(
                {
                    "id": "x",
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": i, "function": {"arguments": piece}}]},
                            "finish_reason": None,
                        }
                    ],
                }
            )
    out.append({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return out


def _both(
    content: str | None, native: list[dict[str, Any]], finish: str, points: list[int], profile: str = "local"
) -> tuple[dict[str, Any], dict[str, Any], Tally, Tally]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if native:
        message["tool_calls"] = native
    whole_tally, stream_tally = Tally(), Tally()
    whole = repair_completion(
        {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}, _registry(profile), whole_tally
    )["choices"][0]
    repair = StreamRepair(_registry(profile), stream_tally)
    out = [c for chunk in _chunks(content, native, finish, points) for c in repair.feed(chunk)] + repair.close()
    return whole, assemble(out), whole_tally, stream_tally


def _call(ident: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


_TEXT_CALLS = [
    'Let me look. <tool_call>{"name": "web_search", "arguments": {"query": "cats"}}</tool_call>',
    '<tool_call>{"name": "web_search", "arguments": {"query": "cats"}}</tool_call> and then',
    'A <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call> B '
    '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>',
    '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
]
_NATIVE = [_call("n1", "get_weather", '{"city": "Rome"}')]


@given(st.sampled_from(_TEXT_CALLS), st.lists(st.integers(0, 400), max_size=20))
def test_a_text_call_before_native_calls_stays_text_on_both_paths(text: str, points: list[int]) -> None:
    whole, streamed, whole_tally, stream_tally = _both(text, _NATIVE, "tool_calls", points)
    assert whole["message"]["content"] == streamed["content"] == text
    assert [tc["function"]["name"] for tc in whole["message"]["tool_calls"]] == ["get_weather"]
    assert streamed["tool_calls"] == whole["message"]["tool_calls"]
    assert whole["finish_reason"] == streamed["finish_reason"] == "tool_calls"
    assert whole_tally == stream_tally and whole_tally.salvaged == 0


@pytest.mark.parametrize("text", _TEXT_CALLS)
def test_without_native_calls_the_text_calls_are_salvaged_on_both_paths(text: str) -> None:
    whole, streamed, whole_tally, stream_tally = _both(text, [], "stop", [3, 7, 11, 40])
    assert whole["message"]["tool_calls"] == streamed["tool_calls"]
    assert whole["message"]["content"] == streamed["content"]
    assert whole_tally == stream_tally and whole_tally.salvaged >= 1


_REFUSED = [
    # (native calls, upstream finish, names delivered, finish the client sees)
    ([_call("c1", "web_search", '{"query": "ca')], "length", [], "length"),  # cut by the token limit
    (
        [_call("c1", "web_search", '{"query": "cats"}'), _call("c2", "web_search", '{"query": "do')],
        "length",
        ["web_search"],
        "length",
    ),
    ([_call("c1", "web_search", '{"query": "cats"')], "tool_calls", [], "stop"),  # truncated, finish claims calls
    ([_call("c1", "send_email", '{"to": "x"}')], "tool_calls", [], "stop"),  # not offered
    ([_call("c1", "web_search", '{"limit": 2}')], "tool_calls", [], "stop"),  # the schema refuses it
    ([_call("c1", "web_search", "{}")], "tool_calls", [], "stop"),
    (
        [_call("c1", "web_search", '{"query": "a"}'), _call("c2", "nope", "{}")],
        "tool_calls",
        ["web_search"],
        "tool_calls",
    ),
]


@pytest.mark.parametrize(("native", "finish", "names", "seen_finish"), _REFUSED)
@pytest.mark.parametrize("points", [[], [1, 2, 3, 5, 8], list(range(0, 60, 2))])
def test_a_refused_call_is_never_delivered(
    native: list[dict[str, Any]], finish: str, names: list[str], seen_finish: str, points: list[int]
) -> None:
    whole, streamed, whole_tally, stream_tally = _both(None, native, finish, points)
    assert [tc["function"]["name"] for tc in whole["message"].get("tool_calls") or ()] == names
    assert [tc["function"]["name"] for tc in streamed["tool_calls"] or ()] == names
    assert whole["finish_reason"] == streamed["finish_reason"] == seen_finish
    assert whole_tally == stream_tally and whole_tally.refused == len(native) - len(names)


@pytest.mark.parametrize("profile", ["local", "hosted"])
def test_a_refused_text_call_is_never_delivered(profile: str) -> None:
    text = '<tool_call>{"name": "web_search", "arguments": {"limit": 3}}</tool_call>'  # no query
    whole, streamed, whole_tally, stream_tally = _both(text, [], "stop", [5, 9], profile)
    assert not whole["message"].get("tool_calls") and not streamed["tool_calls"]
    assert whole["finish_reason"] == streamed["finish_reason"] == "stop"
    assert whole_tally == stream_tally


@pytest.mark.parametrize(
    ("upstream", "calls", "seen"),
    [
        ("length", 0, "length"),
        ("length", 2, "length"),
        ("stop", 1, "tool_calls"),
        ("stop", 0, "stop"),
        ("tool_calls", 0, "stop"),
        ("tool_calls", 1, "tool_calls"),
        (None, 0, None),
        (None, 1, "tool_calls"),
        ("content_filter", 0, "content_filter"),
    ],
)
def test_finish_reason(upstream: Any, calls: int, seen: Any) -> None:
    assert finish_reason(upstream, calls) == seen
