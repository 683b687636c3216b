"""Streamed and whole replies repair to the same thing, for every way of cutting the reply.

Sans-I/O: ``StreamRepair`` and ``repair_completion`` are pure, so the property runs over many
chunkings in milliseconds; the servers' tests run the same code behind real sockets.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair.proxy._complete import repair_completion
from toolrepair.proxy._config import REASONING_MODES
from toolrepair.proxy._report import Tally
from toolrepair.proxy._stream import StreamRepair
from toolrepair.proxy._tools import request_tools

from .replies import CASES, CHUNKINGS, FLAVORS, TOOLS, assemble, chunks, completion, seen


def _registry(profile: str = "local", model: str | None = None):
    picked = tr.model_profile(model) if model else None
    registry = request_tools({"tools": TOOLS}, profile, picked).registry  # type: ignore[arg-type]
    assert registry is not None
    return registry


def _stream(events, profile: str = "local", reasoning: str = "separate", model: str | None = None):
    tally = Tally()
    repair = StreamRepair(_registry(profile, model), tally, reasoning)  # type: ignore[arg-type]
    out = [c for event in events for c in repair.feed(event)]
    out += repair.close()
    return out, tally


def _whole(body, profile: str = "local", reasoning: str = "separate", model: str | None = None):
    tally = Tally()
    repaired = repair_completion(body, _registry(profile, model), tally, reasoning)  # type: ignore[arg-type]
    return repaired["choices"][0], tally


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("key", sorted(CASES))
def test_each_shape_gives_what_the_client_must_see(key: str, flavor: str, chunking: str) -> None:
    reply, expected = CASES[key]
    choice, whole_tally = _whole(completion(reply, flavor))
    out, stream_tally = _stream(chunks(reply, flavor, chunking))
    streamed = assemble(out)
    assert seen(choice["message"]) == (expected.content, expected.calls)
    assert seen(streamed) == (expected.content, expected.calls)
    assert choice["finish_reason"] == streamed["finish_reason"] == expected.finish
    assert [tc["id"] for tc in choice["message"].get("tool_calls") or ()] == [
        tc["id"] for tc in streamed["tool_calls"] or ()
    ]
    assert whole_tally.header() == stream_tally.header() == expected.header
    # reasoning passes through untouched, and its text calls are never salvaged
    assert streamed["reasoning"] == reply.reasoning


def _cuts(text: str, points: list[int]) -> list[str]:
    bounds = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(
    key=st.sampled_from(sorted(CASES)),
    flavor=st.sampled_from(FLAVORS),
    points=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    reasoning=st.sampled_from(REASONING_MODES),
    model=st.sampled_from([None, "qwen3", "gpt-oss"]),
)
def test_streamed_equals_whole_over_chunkings(
    key: str, flavor: str, points: list[int], reasoning: str, model: str | None
) -> None:
    reply, _ = CASES[key]
    choice, whole_tally = _whole(completion(reply, flavor), reasoning=reasoning, model=model)
    out, stream_tally = _stream(
        chunks(reply, flavor, lambda text: _cuts(text, points)), reasoning=reasoning, model=model
    )
    streamed = assemble(out)
    message = choice["message"]
    assert (streamed["content"], streamed["tool_calls"], streamed["finish_reason"]) == (
        message.get("content"),
        message.get("tool_calls"),
        choice["finish_reason"],
    )
    assert whole_tally == stream_tally


@pytest.mark.parametrize("key", ["hermes", "qwen3_xml", "mistral", "native_drift"])
def test_hosted_repairs_nothing_silently(key: str) -> None:
    reply, _ = CASES[key]
    choice, tally = _whole(completion(reply, "vllm"), "hosted")
    out, stream_tally = _stream(chunks(reply, "vllm", "token"), "hosted")
    assert choice["message"].get("content") == reply.content  # nothing salvaged
    # drift is not repaired silently: refused, noted, and never delivered as a call
    assert choice["message"].get("tool_calls") is None and assemble(out)["tool_calls"] is None
    assert assemble(out)["content"] == reply.content
    assert tally.repaired == stream_tally.repaired == tally.salvaged == 0
    assert tally.refused == stream_tally.refused == (1 if reply.tool_calls else 0)


_CALL = '<tool_call>{"name": "web_search", "arguments": {"query": "q"}}</tool_call>'
_IN = "<think>" + _CALL + "</think>"  # a call inside reasoning: never a call, in any mode

# (content the upstream wrote, its own reasoning_content, --reasoning) -> (content,
# reasoning_content, calls) the client sees, whole and streamed alike. separate: reasoning read
# from the content goes apart, after the upstream's own, a blank line between; inline: it stays
# in the content as written, less the calls; drop: it goes. The upstream's own always passes.
REASONING_IN_CONTENT = [
    (("<think>a</think>Hi", None, "separate"), ("Hi", "a", [])),
    (("<think>a</think>Hi", "UP", "separate"), ("Hi", "UP\n\na", [])),
    (("x</think>Hi " + _CALL, None, "separate"), ("Hi ", "x", ["web_search"])),
    (("<think>a</think>" + _CALL + " after", "UP", "separate"), ("after", "UP\n\na", ["web_search"])),
    (("Plain text.", None, "separate"), ("Plain text.", None, [])),
    (("<think>a</think>Hi", None, "inline"), ("<think>a</think>Hi", None, [])),
    (("<think>a</think>Hi", "UP", "inline"), ("<think>a</think>Hi", "UP", [])),
    (("x</think>Hi " + _CALL, None, "inline"), ("x</think>Hi ", None, ["web_search"])),
    (("<think>a</think>" + _CALL + " after", "UP", "inline"), ("<think>a</think> after", "UP", ["web_search"])),
    ((_IN + " ok", None, "inline"), (_IN + " ok", None, [])),
    (("<think>a</think>Hi", "UP", "drop"), ("Hi", "UP", [])),
    (("x</think>Hi " + _CALL, None, "drop"), ("Hi ", None, ["web_search"])),
    ((_IN + " ok", None, "drop"), ("ok", None, [])),
]


def _events(text: str, upstream: str | None) -> list[dict]:
    events = [{"choices": [{"index": 0, "delta": {"reasoning_content": upstream}}]}] if upstream else []
    events += [{"choices": [{"index": 0, "delta": {"content": ch}}]} for ch in text]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return events


@pytest.mark.parametrize(("given", "expected"), REASONING_IN_CONTENT)
def test_reasoning_in_the_content_goes_apart_whole_and_streamed(given, expected) -> None:
    text, upstream, mode = given
    message = {"role": "assistant", "content": text}
    if upstream:
        message["reasoning_content"] = upstream
    choice, _ = _whole({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}, reasoning=mode)
    whole = choice["message"]
    deltas = [c["choices"][0]["delta"] for c in _stream(_events(text, upstream), reasoning=mode)[0] if c.get("choices")]
    streamed_reasoning = "".join(d.get("reasoning_content") or "" for d in deltas) or None
    assert (
        whole.get("content"),
        whole.get("reasoning_content"),
        [tc["function"]["name"] for tc in whole.get("tool_calls") or ()],
    ) == expected
    assert (
        "".join(d.get("content") or "" for d in deltas),
        streamed_reasoning,
        [tc["function"]["name"] for d in deltas for tc in d.get("tool_calls") or ()],
    ) == expected


_TEXT = "Sure. " + _CALL + " More text after the call."


# (model profile) -> the upstream event (one character each) whose feed sends the call: with a
# profile the call's own last character; without one, the finish (a later lone </think> could
# still have made it reasoning).
RELEASE = [
    ("qwen3", len("Sure. " + _CALL) - 1),
    ("hermes", len("Sure. " + _CALL) - 1),
    (None, len(_TEXT)),
]


@pytest.mark.parametrize(("model", "at"), RELEASE)
@pytest.mark.parametrize("mode", REASONING_MODES)
def test_with_a_profile_a_streamed_call_goes_out_as_it_closes(model: str | None, at: int, mode: str) -> None:
    repair = StreamRepair(_registry(model=model), Tally(), mode)  # type: ignore[arg-type]
    sent = [
        i
        for i, event in enumerate(_events(_TEXT, None))
        for chunk in repair.feed(event)
        if chunk["choices"][0]["delta"].get("tool_calls")
    ]
    assert sent == [at]


def test_with_a_profile_native_calls_after_a_sent_text_call_are_refused() -> None:
    # The text call went out as it closed; a native call after it would make a second source of
    # calls in one reply (whole, the native call alone is taken): refused and noted, never sent.
    native = {"index": 0, "id": "call_n", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    events = _events(_TEXT, None)
    events.insert(-1, {"choices": [{"index": 0, "delta": {"tool_calls": [native]}}]})
    out, tally = _stream(events, model="qwen3")
    streamed = assemble(out)
    assert [tc["function"]["name"] for tc in streamed["tool_calls"]] == ["web_search"]
    assert [(n.name, n.reason) for n in tally.notes] == [("get_weather", "mixed-calls")]
    assert streamed["finish_reason"] == "tool_calls"
