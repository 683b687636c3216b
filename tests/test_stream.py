"""StreamSalvager: the same result as salvage_text, released as early as it is certain."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._salvage import ReasoningDelta, StreamSalvager, TextDelta, ToolCallReady
from toolrepair._salvage._base import LOOKBEHIND

HERMES_ONLY = {"dialects": ["hermes"]}
SEED = ["hermes", "function_tag", "json"]


def hermes(name: str, args: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"


def stream(text: str, allowed: Any, cuts: Iterable[int], **kw: Any) -> tuple[str, tuple[tr.ToolCall, ...]]:
    salvager = StreamSalvager(allowed, **kw)
    events: list[Any] = []
    prev = 0
    for cut in [*cuts, len(text)]:
        events += salvager.feed(text[prev:cut])
        prev = cut
    events += salvager.close()
    assert all(e.text for e in events if isinstance(e, TextDelta))  # no empty text event
    text_out = "".join(e.text for e in events if isinstance(e, TextDelta))
    return text_out, tuple(e.call for e in events if isinstance(e, ToolCallReady))


def fields(text: str, allowed: Any, cuts: Iterable[int], **kw: Any) -> tuple[str, str, tuple[tr.ToolCall, ...]]:
    """Content, reasoning and calls of a stream cut at ``cuts``."""
    salvager = StreamSalvager(allowed, **kw)
    events: list[Any] = []
    prev = 0
    for cut in [*cuts, len(text)]:
        events += salvager.feed(text[prev:cut])
        prev = cut
    events += salvager.close()
    assert all(e.text for e in events if not isinstance(e, ToolCallReady))  # no empty text event
    return (
        "".join(e.text for e in events if isinstance(e, TextDelta)),
        "".join(e.text for e in events if isinstance(e, ReasoningDelta)),
        tuple(e.call for e in events if isinstance(e, ToolCallReady)),
    )


def assert_equivalent(text: str, allowed: Any, **kw: Any) -> None:
    expected = tr.salvage_text(text, allowed, **kw)
    want = (expected.content, expected.reasoning, expected.calls)
    assert fields(text, allowed, [], **kw) == want, "whole"
    assert fields(text, allowed, range(1, len(text)), **kw) == want, "one character at a time"
    assert fields(text, allowed, range(7, len(text), 7), **kw) == want, "7-character deltas"
    junk = text + "\n trailing junk <tool_"
    expected = tr.salvage_text(junk, allowed, **kw)
    assert stream(junk, allowed, range(3, len(junk), 3), **kw) == (expected.content, expected.calls), "junk"


CASES: list[tuple[str, Sequence[str] | tr.AnyTool]] = [
    ("", ["a"]),
    ("Just prose, no call.", ["a"]),
    ("   \n  ", ["a"]),
    ('Sure.<tool_call>{"name": "web_search", "arguments": {"q": "x"}}</tool_call>', ["web_search"]),
    ("  Hi  " + hermes("a", {}) + "  Done.  ", ["a"]),
    ("  " + hermes("a", {}) + "  Done.  ", ["a"]),
    (hermes("a", {}) + "   ", ["a"]),
    ("A " + hermes("a", {}) + " " + hermes("a", {"x": 1}) + " B", ["a"]),
    (hermes("b", {}), ["a"]),
    ('<tool_call>{"name": "a", "arguments": {"cmd": "echo \'</tool_call>\'"}}</tool_call>', ["a"]),
    ('<tool_call>{"name": "a", "arguments": {"x": ', ["a"]),
    ('<function=lookup>{"q": 1}</function> then', ["lookup"]),
    ('{"name": "a", "arguments": {"x": 1}}', ["a"]),
    ('Here: {"name": "Alice", "age": 30} and {"name": "a", "parameters": {}} end', ["a"]),
    ('{"name": "a", "parameters": {"q": 1}}; {"name": "a", "parameters": {}};  x', ["a"]),
    ("```\n" + hermes("a", {}) + "\n```\n" + hermes("a", {"x": 1}), ["a"]),
    ("text ``` inline ``` " + hermes("a", {}), ["a"]),
    ("~~~python\n" + hermes("a", {}) + "\n", ["a"]),
    ("````\n" + hermes("a", {}) + "\n```\n" + hermes("a", {}) + "\n````\n" + hermes("a", {"z": 1}), ["a"]),
    ("```py\nx\n```  trailing\n" + hermes("a", {}) + "\n```\n" + hermes("a", {"z": 1}), ["a"]),
    ("<think>maybe " + hermes("a", {}) + "</think>ok " + hermes("a", {"y": 2}), ["a"]),
    ("plan " + hermes("a", {}) + "</think>ok " + hermes("a", {"y": 2}) + " end", ["a"]),
    (hermes("a", {}) + " [BEGIN FINAL RESPONSE] answer", ["a"]),
    ("<tool_call><tool_call>" + hermes("a", {}), ["a"]),
    ('[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}]', ["a"]),
    (
        "<TOOL_CALL>\n" + json.dumps({"name": "WebSearch", "arguments": {"q": 1}}) + "\n</TOOL_CALL>\nDone",
        ["web_search"],
    ),
    ("<tool_", ["a"]),
    ("ends with a partial <functio", ["a"]),
    ("{" * 10 + " braces", ["a"]),
]


@pytest.mark.parametrize(("text", "allowed"), CASES)
@pytest.mark.parametrize(
    "kw", [{}, HERMES_ONLY, {"dialects": SEED, "mask_reasoning": False}, {"mask_fences": False}, {"max_call_chars": 40}]
)
def test_equivalent_to_salvage_text(text: str, allowed: Any, kw: dict[str, Any]) -> None:
    assert_equivalent(text, allowed, **kw)


def test_events_are_frozen_slotted_values() -> None:
    for event, field in ((TextDelta("x"), "text"), (ToolCallReady(tr.ToolCall("a", {})), "call")):
        assert not hasattr(event, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, field, "y")
    assert tr.TextDelta is TextDelta and tr.ToolCallReady is ToolCallReady and tr.StreamSalvager is StreamSalvager


def test_prose_is_released_at_once_and_whitespace_held_until_known() -> None:
    s = StreamSalvager(["a"], model="hermes")
    assert s.feed("Hello world ") == [TextDelta("Hello world")]
    assert s.feed("again") == [TextDelta(" again")]
    assert s.feed(" <tool_") == []  # a marker may be starting: hold it and the space before
    assert s.feed("ca") == []
    assert s.feed("t is here") == [TextDelta(" <tool_cat is here")]


def test_without_a_profile_everything_waits_while_reasoning_may_be_forced_open() -> None:
    # A later lone </think> would make all before it reasoning, even after a <think>…</think>
    # pair: without a profile nothing is certain before close().
    s = StreamSalvager(["a"], **HERMES_ONLY)
    assert s.feed("<think>x</think>Sure. ") == []
    assert s.feed('<tool_call>{"name": "a", "arguments": {}}') == []
    assert s.feed("</tool_call> next") == []
    call = ToolCallReady(tr.ToolCall("a", {}, None, "hermes", (22, 75)))
    assert s.close() == [ReasoningDelta("x"), TextDelta("Sure. "), call, TextDelta(" next")]
    # Without reasoning masks, or with the model's profile, each piece comes once certain.
    s = StreamSalvager(["a"], dialects=["hermes"], mask_reasoning=False)
    assert s.feed("<think>x</think>Sure. ") == [TextDelta("<think>x</think>Sure.")]
    events = s.feed('<tool_call>{"name": "a", "arguments": {}}</tool_call> next')
    assert events == [TextDelta(" "), call, TextDelta(" next")]
    s = StreamSalvager(["a"], model="qwen3")
    assert s.feed("<think>x</think>Sure. ") == [ReasoningDelta("x"), TextDelta("Sure.")]
    assert s.feed('<tool_call>{"name": "a", "arguments": {}}') == []
    assert s.feed("</tool_call> next") == [TextDelta(" "), call, TextDelta(" next")]


def test_a_lone_close_makes_the_held_reply_reasoning() -> None:
    text = "plan " + hermes("a", {}) + " more"
    s = StreamSalvager(["a"], **HERMES_ONLY)
    assert s.feed(text) == []  # a later </think> would make the call reasoning
    events = s.feed("</think>ok") + s.close()
    assert events == [ReasoningDelta("plan " + hermes("a", {}) + " more"), TextDelta("ok")]
    assert s.close() == []
    without = StreamSalvager(["a"], dialects=["hermes"], mask_reasoning=False)
    assert [type(e) for e in without.feed(text)] == [TextDelta, ToolCallReady, TextDelta]


def test_feed_after_close_is_an_error() -> None:
    s = StreamSalvager(["a"])
    s.close()
    with pytest.raises(RuntimeError, match="after close"):
        s.feed("x")
    with pytest.raises(TypeError):
        StreamSalvager(["a"]).feed(b"x")  # type: ignore[arg-type]


def test_async_generator_stream() -> None:
    reply = "Let me look. " + hermes("web_search", {"q": "cats"}) + " Done."

    async def model_stream() -> AsyncIterator[str]:
        for i in range(0, len(reply), 5):
            await asyncio.sleep(0)
            yield reply[i : i + 5]

    async def consume() -> list[Any]:
        salvager = StreamSalvager(["web_search"])
        events: list[Any] = []
        async for chunk in model_stream():
            events.extend(salvager.feed(chunk))
        events.extend(salvager.close())
        return events

    events = asyncio.run(consume())
    expected = tr.salvage_text(reply, ["web_search"])
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == expected.content == "Let me look.  Done."
    assert tuple(e.call for e in events if isinstance(e, ToolCallReady)) == expected.calls


def test_registry_stream() -> None:
    def web_search(query: str) -> str:
        return query

    reply = "ok " + hermes("web_search", {"query": "x"})
    local = tr.ToolRegistry([web_search]).stream()
    events = local.feed(reply) + local.close()
    assert [e.call.name for e in events if isinstance(e, ToolCallReady)] == ["web_search"]
    hosted = tr.ToolRegistry([web_search], profile="hosted").stream()
    assert hosted.feed(reply) + hosted.close() == [TextDelta(reply)]


def test_oversized_candidate_is_given_up_and_released() -> None:
    big = hermes("a", {"q": "y" * 5_000})
    text = "start " + big + " end"
    assert_equivalent(text, ["a"], max_call_chars=1_000)
    s = StreamSalvager(["a"], model="hermes", max_call_chars=1_000)
    released = []
    for i in range(0, len(text) - 10, 16):
        released += s.feed(text[i : i + 16])
        assert len(s._pass.scan.text) < 2_000 + 16  # the window stays bounded by the limit
    assert "".join(e.text for e in released if isinstance(e, TextDelta)).startswith("start <tool_call>")
    result = tr.salvage_text(text, ["a"], dialects=["hermes"], max_call_chars=1_000)
    assert result.calls == () and result.rejected[0].reason == "too-large"


@pytest.mark.parametrize("unit", ["<|tool_call_begin|>", "to=functions.a b c ", '<tool_call name="f" ', "[TOOL_CALLS]"])
def test_a_run_of_candidates_blocked_in_turn_releases_the_window(unit: str) -> None:
    # Each candidate waits for more text, then turns out to be none while the next one waits:
    # the window still moves on with them (it held the whole run before, re-joined per delta).
    text = unit * (8_000 // len(unit)) + hermes("a", {"x": 1})
    s = StreamSalvager(["a"])
    widest = 0
    for i in range(0, len(text), 16):
        s.feed(text[i : i + 16])
        widest = max(widest, len(s._pass.scan.text))
    s.close()
    assert widest <= 4 * LOOKBEHIND < len(text) // 3
    assert_equivalent(text, ["a"])


def work_for(text: str, delta: int = 16, **kw: Any) -> int:
    s = StreamSalvager(["a"], **kw)
    for i in range(0, len(text), delta):
        s.feed(text[i : i + delta])
    s.close()
    work = s.work
    # Not ``work.handed``: a reply read whole at close() (every event waited for it) is handed
    # to each marker's reader from the marker on, as on a whole-text pass: a bound on what a
    # reader may read, quadratic on runs of markers by construction, not what it reads.
    return work.total - work.handed


@pytest.mark.parametrize("kw", [{}, HERMES_ONLY])
def test_work_is_linear_for_one_large_candidate(kw: dict[str, Any]) -> None:
    def reply(n: int) -> str:
        return "Sure. " + hermes("a", {"q": "x" * n}) + " done"

    small, large = work_for(reply(100_000), **kw), work_for(reply(200_000), **kw)
    assert large / small < 2.5


@pytest.mark.parametrize("kw", [{}, {"dialects": SEED, "mask_reasoning": False}])
def test_work_is_linear_for_many_calls_and_prose(kw: dict[str, Any]) -> None:
    unit = "Some prose with {braces} and <tags> and ``` code. " * 4 + hermes("a", {"n": 1}) + "\n"
    small, large = work_for(unit * 200, **kw), work_for(unit * 400, **kw)
    assert large / small < 2.5
    # The window (LOOKBEHIND kept for readers, at most doubled before a trim) is re-joined
    # per delta: a constant factor of about 2 * LOOKBEHIND / delta, never a growing one.
    assert large < (4 * LOOKBEHIND // 16 + 20) * len(unit * 400)


@pytest.mark.parametrize(
    "head",
    ["~~~", "```", "> ```", "- ~~~", "```\r", "~~~ <tool_call>", "` <tool_call>", "~~~\r<tool_call>"],
)
def test_nothing_is_held_past_max_call_chars_on_an_unfinished_line(head: str) -> None:
    limit = 10_000
    # A profile with every dialect: no reasoning close can force all before it open later.
    every = tr.ModelProfile("every", dialects=tr.DIALECTS, reasoning=[("<think>", "</think>")])
    s = StreamSalvager(["a"], model=every, max_call_chars=limit)
    fed = released = 0
    chunk = "x" * 4096
    for piece in [head] + [chunk] * 100:  # 400 KB with no line ending
        out = s.feed(piece)
        fed += len(piece)
        released += sum(len(e.text) for e in out if isinstance(e, TextDelta))
        assert fed - released <= limit + 2 * len(chunk)  # held: at most the limit, plus a delta's worth
        assert len(s._pass.scan.text) <= 2 * limit + 4 * len(chunk)  # and so is the window
    text = head + chunk * 100
    rest = s.close()
    released += sum(len(e.text) for e in rest if isinstance(e, TextDelta))
    assert released == len(tr.salvage_text(text, ["a"], model=every, max_call_chars=limit).content)
