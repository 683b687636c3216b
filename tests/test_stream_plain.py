"""StreamSalvager's plain-text path: a delta with no anchor character passes the pass by.

Its edges, each against ``salvage_text`` with the reply cut at every offset: a marker whose
prefix holds no anchor (``call`` of ``call:``, ``functools`` of ``functools[``, ``t`` of
``to=functions.``) left at the end of plain text, fences, reasoning and CR/CRLF line endings
split across deltas (the code mask then reads a batch, not each delta), letters that lower
to a marker's (the Kelvin sign) or to two characters (``İ``); and its cost, counted: a plain
delta makes a fixed number of calls, whatever came before, and enters the pass never.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

# The reply fed in pieces (and that no text event is empty), as the stream's own tests read it.
from test_stream import hermes
from test_stream import stream as streamed

import toolrepair as tr
from toolrepair._salvage import StreamSalvager, TextDelta, ToolCallReady
from toolrepair._salvage._base import LOOKBEHIND
from toolrepair._salvage._stream import _BATCH, _Plain, _plain_table
from toolrepair.testing import _count_calls


def assert_split_everywhere(text: str, allowed: Any, **kw: Any) -> None:
    """Equal to ``salvage_text`` cut once at every offset, and cut at every offset with the
    rest in 5-character deltas (so plain deltas come before and after the cut)."""
    result = tr.salvage_text(text, allowed, **kw)
    want = (result.content, result.calls)
    for i in range(len(text) + 1):
        assert streamed(text, allowed, [i], **kw) == want, i
        cuts = sorted({*range(0, i, 5), i, *range(i + 1, len(text), 5)})
        assert streamed(text, allowed, cuts, **kw) == want, i


TEMPLATE = "Here is the plan, which we act upon. {call} That was the call"
ALLOWED = ["get_weather", "a"]
REPLIES = [
    # markers with a prefix that holds no anchor, after prose ending in that prefix
    "Here's a tool call: [get_weather(location='New York', unit='celsius')] done",
    "We use functools" + ' functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}] ok',
    'I act. Action:\n```json\n[{"tool_name": "get_weather", "parameters": {"city": 1}}]\n```\nfun',
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location":"SF"}<|call|> then to',
    'Go <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city":"S"}\n```'
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜> and cal",
    TEMPLATE.format(call=hermes("get_weather", {"city": "Paris"})),
    "that " + hermes("a", {}) + "  \n  " + hermes("a", {"x": 1}) + "   t",
    # fences split: the mask reads the plain text around them in batches
    "```\n" + hermes("a", {}) + "\n```\nthen " + hermes("a", {"x": 1}) + " act",
    "text ~~~~ more\n~~~~\n" + hermes("a", {}) + "\n~~~\n~~~~\n" + hermes("a", {"y": 2}),
    "- item\n  ```py\n  " + hermes("a", {}) + "\n  ```\n- " + hermes("a", {"z": 3}),
    "`code " + hermes("a", {}) + "` and " + hermes("a", {"z": 3}),
    # reasoning split
    "<think>plan to " + hermes("a", {}) + " act</think> done " + hermes("a", {"y": 2}) + " fun",
    "plan to act" + hermes("a", {}) + "</think>ok " + hermes("a", {"y": 2}),
    "<thinking>long thought</thinking>" + hermes("a", {}),
    # CR and CRLF line endings split
    "```\r\n" + hermes("a", {}) + "\r\n```\r\n" + hermes("a", {"x": 1}) + "\r\nact\r",
    "~~~\r" + hermes("a", {}) + "\r~~~\r" + hermes("a", {"x": 1}) + "\r",
    "line\r\n\r\n    " + hermes("a", {}) + "\r\n" + hermes("a", {"x": 2}),
    # whitespace around cuts, and nothing but prose
    "   \n  " + hermes("a", {}) + "  \n  ",
    "Just prose that ends in a prefix of call",
    "",
]


@pytest.mark.parametrize("text", REPLIES)
@pytest.mark.parametrize("kw", [{}, {"mask_reasoning": False}, {"mask_fences": False}])
def test_split_at_every_offset_gives_salvage_text(text: str, kw: dict[str, Any]) -> None:
    assert_split_everywhere(text, ALLOWED, **kw)


def test_a_marker_prefix_at_the_end_of_plain_text_is_held() -> None:
    s = StreamSalvager(["get_weather"], mask_reasoning=False)
    assert s.feed("Here is a tool ") == [TextDelta("Here is a tool")]
    assert s.feed("cal") == []  # may become `call:`
    assert s.feed("l") == []
    assert s.feed("ed it. Fun") == [TextDelta(" called it.")]  # `Fun` may become `functools[`
    assert s.feed("ny") == [TextDelta(" Funny")]
    assert s.entries == 0  # all of it passed the pass by


def test_a_held_prefix_completed_by_an_anchor_enters_the_pass() -> None:
    s = StreamSalvager(["get_weather"], mask_reasoning=False)
    assert s.feed("Here's a tool cal") == [TextDelta("Here's a tool")]
    events = s.feed("l: [get_weather(city='x')]")
    assert s.entries == 1
    events += s.close()
    result = tr.salvage_text("Here's a tool call: [get_weather(city='x')]", ["get_weather"], mask_reasoning=False)
    assert [e.call for e in events if isinstance(e, ToolCallReady)] == list(result.calls) != []
    assert "Here's a tool" + "".join(e.text for e in events if isinstance(e, TextDelta)) == result.content


def custom(open_: str) -> tr.TagDialect:
    return tr.TagDialect("custom", open=open_, close="</c>")


@pytest.mark.parametrize(
    ("open_", "text", "found"),
    [
        # `tak:` is found by its `:`; the Kelvin sign lowers to `k`, so `taK` may begin it
        ("tak:", 'so ta\u212a:{"name": "a", "arguments": {}}</c> ta\u212a', True),
        ("tak:", 'so TAK:{"name": "a", "arguments": {}}</c> and ta', True),
        # `İ` lowers to two characters: such a marker is compared in place (the scan finds
        # `i̇x:` only as it is tabled: the stream agrees either way)
        ("\u0130x:", 'so i\u0307x:{"name": "a", "arguments": {}}</c> i\u0307', True),
        ("\u0130x:", 'so \u0130x:{"name": "a", "arguments": {}}</c> \u0130', False),
    ],
)
def test_letters_that_lower_unusually(open_: str, text: str, found: bool) -> None:
    dialect = custom(open_)
    assert_split_everywhere(text, ["a"], dialects=[dialect], mask_reasoning=False)
    assert bool(tr.salvage_text(text, ["a"], dialects=[dialect]).calls) is found


def test_the_table_of_anchor_free_prefixes() -> None:
    table = _plain_table(tr.StreamSalvager(["a"])._pass.config.finder)
    assert table.ends is not None
    assert "call" in table.ends["l"] and "functools" in table.ends["s"] and "t" in table.ends["t"]
    assert "<" not in table.ends  # `<` is an anchor
    assert table.longest == len("functools")
    # A prefix holding a character that lowers to two (`İ`) would be compared in place. The
    # scan anchors such markers by that character today (non-ASCII symbols rank first), so a
    # stand-in table shows the guard.

    class Finder:
        anchors = ("\uff5c",)
        prefixes = frozenset({"i", "i\u0307"})
        anchor_re = re.compile("\uff5c")
        possible = re.compile("\uff5c").search
        max_len = 2

    odd = _plain_table(Finder())  # type: ignore[arg-type]
    assert odd.ends is None


@pytest.mark.parametrize("text", REPLIES)
def test_the_exact_fallback_agrees(text: str) -> None:
    # With `ends` None every plain delta asks `partial_start` itself: the same releases.
    def run(exact: bool) -> list[Any]:
        s = StreamSalvager(ALLOWED, mask_reasoning=False)
        if exact:
            real = s._table
            s._table = _Plain(real.anchor, None, 0, real.possible, real.reach, real.context)
        return [e for i in range(0, len(text), 3) for e in s.feed(text[i : i + 3])] + s.close()

    assert run(exact=True) == run(exact=False)


PREFIXES = st.sampled_from(["t", "to", "ca", "cal", "call", "act", "actio", "fun", "functools", "]", "T", "CALL"])
PLAIN = st.text(alphabet="abcdefilnostu \n\r\t`~-", max_size=10)
CALLS = st.sampled_from([*REPLIES[:6], hermes("a", {"q": "x"}), "call:", "<tool_", "[TOOL_CALLS]", "```\n", "<think>"])
PIECES = st.lists(PLAIN | PREFIXES | CALLS, max_size=12).map("".join)


@given(PIECES, st.lists(st.integers(0, 300), max_size=20), st.sampled_from([{}, {"mask_reasoning": False}]))
def test_plain_heavy_replies_cut_anywhere_give_salvage_text(text: str, cuts: list[int], kw: dict[str, Any]) -> None:
    result = tr.salvage_text(text, ALLOWED, **kw)
    assert streamed(text, ALLOWED, sorted(c for c in cuts if c <= len(text)), **kw) == (result.content, result.calls)


def prose(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = ("the", "model", "writes", "some", "prose", "about", "tools,", "results", "and", "act.", "call", "to")
    out: list[str] = []
    size = 0
    while size < n:
        word = rng.choice(words)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n]


def feed_all(s: StreamSalvager, text: str, delta: int = 16) -> list[Any]:
    events: list[Any] = []
    for i in range(0, len(text), delta):
        events += s.feed(text[i : i + delta])
    return events


@pytest.mark.parametrize("kw", [{}, {"mask_reasoning": False}, {"mask_fences": False}])
@pytest.mark.parametrize("before", ["", hermes("a", {}) + "\n"])  # after a call, text is held (reasoning)
def test_plain_deltas_never_enter_the_pass_and_look_at_each_character_a_bounded_number_of_times(
    kw: dict[str, Any], before: str
) -> None:
    s = StreamSalvager(["a"], **kw)
    feed_all(s, before)
    entries = s.entries
    n = 64_000
    feed_all(s, prose(n))
    # The pass is not entered for plain text (but once, to settle a call the text before
    # ended with: it waits for one more character).
    assert s.entries <= entries + (1 if before else 0)
    deltas = n // 16
    s.close()
    longest = _plain_table(s._pass.config.finder).longest
    assert s.looked <= n + 2 * longest * deltas + len(before)
    # The pass's window and the code mask take the text once per batch, not per delta.
    assert s.work.copied <= 2 * n + 4 * (LOOKBEHIND + _BATCH) + len(before)
    assert s.work.masked <= 2 * n + len(before)


def test_a_plain_delta_costs_the_same_calls_however_long_the_reply_so_far() -> None:
    # Counted, not timed: the Python and C calls one plain delta makes are a small constant,
    # the same after 1 KB and after 256 KB of prose (the work of handing a batch to the pass
    # spread over the batch's deltas).
    def calls_for_next(history: int) -> float:
        s = StreamSalvager(["a"], mask_reasoning=False)
        feed_all(s, prose(history, seed=2))
        more = prose(64 * _BATCH // 16, seed=3)
        return _count_calls(lambda: feed_all(s, more)) / (len(more) / 16)

    short, long = calls_for_next(1_024), calls_for_next(256_000)
    # Entering the pass per delta made about 100; the one release path (`_release`) makes ~39.
    assert short <= 40 and long <= 40
    assert abs(long - short) <= 1


def test_memory_stays_bounded_on_a_long_plain_reply() -> None:
    s = StreamSalvager(["a"])
    text = prose(400_000)
    for i in range(0, len(text), 16):
        s.feed(text[i : i + 16])
        assert len(s._pass.scan.text) <= 2 * LOOKBEHIND + _BATCH + 32  # the pass's window
        assert sum(map(len, s._batch)) <= _BATCH  # and the deltas it has yet to take
    assert s.entries == 0


@pytest.mark.parametrize("reasoning", [True, False])
def test_past_max_input_chars_plain_text_passes_through(reasoning: bool) -> None:
    # Plain deltas, a held prefix (`cal`) and a call before the limit; past it, all is text
    # (a call still held, as calls are while a reasoning close may clear them, is text too).
    call = hermes("a", {})
    head = "Some text " + call + " then cal"
    s = StreamSalvager(["a"], max_input_chars=len(head) + 20, mask_reasoning=reasoning)
    events = feed_all(s, head, delta=4)
    events += s.feed("l: [a()] and more text past the limit") + s.feed(" <tool_call>") + s.close()
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    calls = [e.call.name for e in events if isinstance(e, ToolCallReady)]
    rest = " then call: [a()] and more text past the limit <tool_call>"
    if reasoning:
        assert (calls, text) == ([], "Some text " + call + rest)
    else:
        assert (calls, text) == (["a"], "Some text " + rest)
    assert s.close() == []


def _held_run(text: str, cuts: list[int], **kw: Any) -> tuple[StreamSalvager, int]:
    """The salvager after ``text`` fed cut at ``cuts`` and closed; the pass's entries before
    ``close()``."""
    s = StreamSalvager(ALLOWED, **kw)
    prev = 0
    for cut in [*cuts, len(text)]:
        assert s.feed(text[prev:cut]) == []  # everything waits for a lone reasoning close
        prev = cut
    before = s.entries
    s.close()
    return s, before


@pytest.mark.parametrize("text", REPLIES)
@pytest.mark.parametrize("delta", [1, 7, 16])
def test_a_held_reply_is_read_once_at_close_whatever_its_cutting(text: str, delta: int) -> None:
    # Without a model profile every event waits for the end: the deltas are kept and the pass
    # reads them then, so the work is that of one feed of the reply, however it was cut.
    one, entered_one = _held_run(text, [])
    cut, entered = _held_run(text, list(range(delta, len(text), delta)))
    assert entered == entered_one == 0
    assert (cut.entries, cut.work) == (one.entries, one.work)


@given(st.lists(st.integers(0, 12_000), max_size=40))
def test_a_long_held_reply_is_read_once_however_it_is_cut(cuts: list[int]) -> None:
    text = ("prose {x} `y` " + hermes("a", {"n": 1}) + "\n") * 200  # longer than a batch
    cuts = sorted(c for c in set(cuts) if c < len(text))
    s, entered = _held_run(text, cuts)
    assert entered == 0
    assert s.entries == 1  # close(): one final step over the whole reply, never one per delta
    whole = tr.salvage_text(text, ALLOWED)
    assert streamed(text, ALLOWED, cuts) == (whole.content, whole.calls)


@pytest.mark.parametrize(
    ("options", "early"),
    [({"model": "qwen3"}, True), ({"mask_reasoning": False}, True), ({"max_input_chars": 60}, True), ({}, False)],
)
def test_deltas_are_kept_only_while_every_event_waits(options: dict[str, Any], early: bool) -> None:
    # Kept only while nothing could come out before close(): with a profile, without the
    # reasoning masks, or past the input bound, the call is released before close().
    text = "Sure. " + hermes("a", {"x": 1}) + " and then some more text after it"
    s = StreamSalvager(ALLOWED, **options)
    released = [e for i in range(0, len(text), 4) for e in s.feed(text[i : i + 4])]
    assert any(isinstance(e, ToolCallReady | TextDelta) for e in released) is early
    assert s.quiet_room == (0 if early else s._max_input - len(text))
