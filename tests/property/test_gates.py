"""Marker gates (``Dialect.gates``) are sound: skipping what they rule out changes no answer.

The scan skips a marker occurrence that fails the gate of every dialect reading it, before any
reader runs. By the gates' contract such an occurrence is one its readers would refuse anyway,
so a pass with gates and the same pass with gates disabled give the same result on any text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._engine import SalvagePass, _config, _resolve_dialects, run_whole

# Fragments near every gate's edge: braces and brackets before keys, names, calls, `</think>`,
# recipient lines, non-JSON whitespace, runs of openers, the text's end.
PIECES = [
    "{",
    "}",
    "[",
    "]",
    '"',
    ":",
    ",",
    " ",
    "\n",
    "\t",
    "\u00a0",
    "\r",
    "x",
    "get_weather",
    "f",
    "all",
    ".",
    "-",
    "(",
    ")",
    "=",
    "</think>",
    "</THINK>",
    "<function=get_weather>",
    "</function>",
    '"name"',
    '"get_weather"',
    '"arguments"',
    '"city"',
    '"Paris"',
    "{}",
    "[]",
    "{{",
    "[[",
    '{"a":',
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '{"tool_calls": [{"name": "get_weather", "arguments": {}}]}',
    '{"tool_call": {"name": "get_weather", "arguments": {}}}',
    '[get_weather(city="Paris")]',
    "[f()]",
    "get_weather(city='x')",
    ">>>",
    "```",
    "<tool_call>",
    ";",
    "[1](https://example.com)",
    "`code`",
    "{x}",
    "<br>",
    "[x](y)",
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)
DIALECT_SETS = st.sampled_from(
    [
        None,
        ("json",),
        ("json", "pythonic", "xlam"),
        ("function_tag", "json"),
        ("functionary", "generic_json", "json"),
        ("pythonic",),
        ("xlam",),
    ]
)
ALLOWED = st.sampled_from([tr.ANY_TOOL, ["get_weather"], ["f"]])


def _both(text: str, dialects: Any, depth: int, allowed: Any) -> tuple[tr.SalvageResult, tr.SalvageResult]:
    chosen = _resolve_dialects(dialects)
    gated, plain = _config(chosen, True, True, True), _config(chosen, True, True, False)
    return (run_whole(text, gated, allowed, depth, 1_000_000), run_whole(text, plain, allowed, depth, 1_000_000))


@given(TEXTS, DIALECT_SETS, st.sampled_from([64, 2]), ALLOWED)
def test_gates_change_no_answer(text: str, dialects: Any, depth: int, allowed: Any) -> None:
    with_gates, without = _both(text, dialects, depth, allowed)
    assert with_gates == without


@given(TEXTS, st.sampled_from([None, ("json", "pythonic", "xlam")]), st.lists(st.integers(1, 60), max_size=4))
def test_gated_stream_equals_whole(text: str, dialects: Any, cuts: list[int]) -> None:
    """Gates decided on part of a candidate (the text ends inside it) do not skip it."""
    whole = tr.salvage_text(text, ["get_weather", "f"], dialects=dialects)
    stream = tr.StreamSalvager(["get_weather", "f"], dialects=dialects)
    events: list[Any] = []
    prev = 0
    for cut in [*sorted(c for c in cuts if c <= len(text)), len(text)]:
        events += stream.feed(text[prev:cut])
        prev = cut
    events += stream.close()
    assert tuple(e.call for e in events if isinstance(e, tr.ToolCallReady)) == whole.calls


def _markers_handled(text: str, gated: bool) -> int:
    run = SalvagePass(_config(_resolve_dialects(None), True, True, gated), tr.ANY_TOOL, text)
    run.advance(final=True)
    return run.work.markers


# (text, marker occurrences the pass handles with gates, and without): counted work, no clock.
@pytest.mark.parametrize(
    ("text", "gated", "plain"),
    [
        ("See [the docs](https://example.com) and [1].", 0, 2),  # links and citations: no reader
        ("Use {name} or {x, y} here.", 0, 2),  # prose braces
        ("key: value\nnote: ok {a} [b]", 0, 2),
        ('Reply {"name": "f"} here', 1, 1),  # a key after `{`: the json reader decides
        ("[f(a=1)] then [x]", 1, 2),  # the pythonic list; `[x]` ruled out
        # `</think>` and xlam's `[` after it; `{x`, `[y]` ruled out (ungated, the `{x` inside the
        # refused `[` is searched past, not popped)
        ("</think>\n[{x and [y]", 2, 3),
        ("get_weather{x}", 1, 1),  # function_tag's headless name right before a brace
        ("get_weather\n{x} {y}", 1, 2),  # functionary: the one brace after a recipient line
        ("[x]", 1, 1),  # json's `[` opening the reply
        ("{", 1, 1),  # the end of the text: undecided, so not skipped
    ],
)
def test_gates_rule_out_table(text: str, gated: int, plain: int) -> None:
    assert (_markers_handled(text, gated=True), _markers_handled(text, gated=False)) == (gated, plain)


@dataclass(frozen=True)
class _Braces:
    """A custom dialect with no ``gates``: every `{` reaches its reader."""

    name: str = "braces"
    markers: tuple[str, ...] = ("{",)

    def read(self, text: str, start: int, marker_end: int, ctx: tr.ReadContext) -> tr.Found | tr.NeedMore | None:
        end = text.find("}", start)
        if end == -1:
            return None
        return tr.Found(end + 1, (tr.RawCall(text[marker_end:end].strip(), {}),))


def test_dialects_without_gates_read_every_marker() -> None:
    # With the built-ins (whose `{` gates would rule out `{ f }`), a custom dialect sharing the
    # marker but declaring no gate keeps every occurrence its reader's.
    got = tr.salvage_text("a { f } b {g}", ["f", "g"], dialects=[_Braces(), *tr.DIALECTS])
    assert [c.name for c in got.calls] == ["f", "g"]
    tag = tr.TagDialect("mine", open="<<call>>", close="<</call>>")
    got = tr.salvage_text('x <<call>>{"name": "f", "arguments": {}}<</call>>', ["f"], dialects=[tag])
    assert [c.name for c in got.calls] == ["f"]


@dataclass(frozen=True)
class _Letters(_Braces):
    gates: ClassVar[Mapping[str, tr.Gate]] = {"{": tr.Gate(r"(?=[a-z])")}  # `{` right before a letter


@dataclass(frozen=True)
class _First(_Braces):
    gates: ClassVar[Mapping[str, tr.Gate]] = {"{": tr.Gate(lead="")}  # the reply's first non-space


def test_custom_gates_skip_what_they_rule_out() -> None:
    assert [c.name for c in tr.salvage_text("{ f } {g}", ["f", "g"], dialects=[_Letters()]).calls] == ["g"]
    assert [c.name for c in tr.salvage_text("  {f} {g}", ["f", "g"], dialects=[_First()]).calls] == ["f"]


@dataclass(frozen=True)
class _FirstLetter(_Braces):
    # Both: the reply's first non-space `{`, and only right before a letter.
    gates: ClassVar[Mapping[str, tr.Gate]] = {"{": tr.Gate(r"(?=[a-z])", lead="")}


def test_lead_and_pattern_both_hold() -> None:
    def names(text: str) -> list[str]:
        return [c.name for c in tr.salvage_text(text, ["f", "g"], dialects=[_FirstLetter()]).calls]

    assert (names("{f} {g}"), names("{ f} {g}")) == (["f"], [])


@pytest.mark.parametrize("cut", [1, 5, 11, 12, 13, 20])
def test_lead_decided_only_once_its_text_has_come(cut: int) -> None:
    """functionary's recipient line may still be growing when a delta ends: not decided then."""
    text = 'get_weather\n{"city": "Paris"}'
    stream = tr.StreamSalvager(["get_weather"], dialects=("functionary",))
    events = [*stream.feed(text[:cut]), *stream.feed(text[cut:]), *stream.close()]
    calls = [e.call for e in events if isinstance(e, tr.ToolCallReady)]
    assert calls == list(tr.salvage_text(text, ["get_weather"], dialects=("functionary",)).calls)
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]


@dataclass(frozen=True)
class _AfterPreamble(_Braces):
    gates: ClassVar[Mapping[str, tr.Gate]] = {"{": tr.Gate(lead=r"[^{]*")}  # the first `{` only


def test_lead_reaching_the_text_end_waits() -> None:
    # `<` (a reasoning tag's anchor) makes the stream look while the lead still reaches the end.
    stream = tr.StreamSalvager(["f", "g"], dialects=[_AfterPreamble()])
    events = [*stream.feed("ab<"), *stream.feed("{f} {g}"), *stream.close()]
    assert [e.call.name for e in events if isinstance(e, tr.ToolCallReady)] == ["f"]
    assert [c.name for c in tr.salvage_text("ab<{f} {g}", ["f", "g"], dialects=[_AfterPreamble()]).calls] == ["f"]
