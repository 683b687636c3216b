"""Hostile input: every public entry point stays linear, shallow and bounded.

Each family below is a shape that has made a real tool-call parser quadratic, recursive or
unbounded (a marker run, a bracket run, the pythonic pattern behind a published ReDoS advisory
in an inference server, ...). Linear time is checked three ways, none of them an absolute
wall-clock bound:

* counted work: the Python-level calls (``sys.setprofile`` events, which include calls into C
  such as ``str.find`` and ``re.match``) made on inputs of size N and 2N; linear code makes at
  most about twice as many, quadratic code four times as many. Deterministic, so it holds on a
  busy machine. Reader invocations (markers handled) are counted the same way.
* counted characters: what the text's own methods look at (``toolrepair.testing``'s counting
  text), which catches work hidden inside one C call (a ``find`` that rescans the rest of the
  text per marker) that call counts cannot see, and the engine's own counters on a stream.
  (Timings, t(2N)/t(N), are in benchmarks/bench_doubling.py.)
* the recursion limit lowered to a little above the caller's depth: recursion that grows with
  the input fails there, however large the default limit is.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._args import decode_arguments
from toolrepair._salvage import BUILTIN
from toolrepair.testing import _not_linear

# -- the families ---------------------------------------------------------------------------
# Each maps a repeat count n to a text; the text grows linearly in n.
FAMILIES: dict[str, Callable[[int], str]] = {
    "tool_call_open": lambda n: "<tool_call>{" * n,
    "open_brackets": lambda n: "[" * n,
    "open_keys": lambda n: '{"a":' * n,
    "deep_valid_call": lambda n: (
        '<tool_call>{"name": "sink", "arguments": {"a": ' + "[" * n + "]" * n + "}}</tool_call>"
    ),
    "pythonic_redos": lambda n: "[f(" + "a=, " * n,
    "fence_toggles": lambda n: "```\n" * n,
    # CR-only line endings (once quadratic: each fence check looked for an LF to the end).
    "fence_toggles_cr": lambda n: "```\r" * n + '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
    "fenced_calls_cr": lambda n: '```\r<tool_call>{"name": "f", "arguments": {}}</tool_call>\r' * n,
    # A fence opener whose line never ends, then a marker on it.
    "unfinished_fence_line": lambda n: "~~~" + "x" * (64 * n) + '<tool_call>{"name": "f", "arguments": {}}',
    # Backtick runs of many lengths, a marker after each: code-span pairing looks ahead.
    "backtick_runs": lambda n: "".join("`" * (k % 7 + 1) + " <tool_call>" for k in range(n)),
    "quote_list_fences": lambda n: "> - ```\r>   <tool_call>{}\r" * n,
    "think_open": lambda n: "<think>" * n,
    "think_close": lambda n: "</think>" * n,
    "deepseek_sep": lambda n: "<｜tool▁sep｜>" * n,
    "deepseek_begin": lambda n: "<｜tool▁call▁begin｜>" * n,
    "spaces_in_tag": lambda n: "<tool_call>" + " " * (64 * n),
    # Lenient payloads, damaged markers and attribute tags (issue 19): each candidate's repair
    # attempt is bounded by the next candidate, so runs of broken ones stay linear.
    "lenient_comment_runs": lambda n: "<tool_call>{/* " * n,
    "lenient_single_quotes": lambda n: "<tool_call>{'a': 1 " * n,
    "headless_names": lambda n: 'web_search{"q": 1}\n' * n,
    "headless_broken": lambda n: 'web_search{"q": \n' * n,
    "harmony_detokenised": lambda n: "commentary to=functions.f json{" * n,
    "harmony_spaced_names": lambda n: "to=functions.a b c " * n + "<|message|>",
    "attribute_tags": lambda n: '<tool_call name="f" ' * n,
    "gemma_bare_calls": lambda n: "<channel|>call:f{" * n,
    "stray_close": lambda n: "</tool_call>" * n,
    "function_tag_open": lambda n: "<function=x>{" * n,
    "kimi_begin": lambda n: "<|tool_call_begin|>" * n,
    "mistral_marker": lambda n: "[TOOL_CALLS]" * n,
    "surrogates_nuls": lambda n: '\ud800\x00<tool_call>{"name": "\udfff\x00' * n,
    "prose": lambda n: "The quick brown fox jumps over the lazy dog; it was not a tool call. " * n,
}

# Argument strings: the shapes above plus the ones the lenient JSON decoder has to survive.
ARG_FAMILIES: dict[str, Callable[[int], str]] = {
    **FAMILIES,
    "deep_truncated": lambda n: '{"a": ' + "[" * n,
    "deep_valid": lambda n: '{"a": ' + "[" * n + "]" * n + "}",
    "single_quoted_keys": lambda n: "{'a': " * n,
    "trailing_commas": lambda n: '{"a": [' + "1, " * n,
    "backslash_run": lambda n: '{"a": "' + "\\" * n,
    "double_encoded": lambda n: '"' + '{\\"a\\": ' * n + '"',
    "code_fences": lambda n: "```json\n" * n,
    "python_literals": lambda n: "{" + "'a': True, " * n + "}",
    "raw_newlines": lambda n: '{"a": "' + "\n" * n + '"}',
    "comma_runs": lambda n: '{"a": "x"' + ",," * n + "}",
    "surrogate_string": lambda n: '{"a": "' + "\ud800\x00" * n + '"}',
}


def sink(a: Any = None, b: str = "") -> str:
    """The only tool: every hostile argument string is aimed at it."""
    return "ok"


ALLOWED = ["sink", "f", "x", "web_search"]
REGISTRY = tr.ToolRegistry([sink])


# -- the entry points -----------------------------------------------------------------------
def via_salvage_any(text: str) -> object:
    return tr.salvage_text(text, tr.ANY_TOOL)


def via_salvage_allowed(text: str) -> object:
    return tr.salvage_text(text, ALLOWED)


def via_registry_salvage(text: str) -> object:
    return tr.ToolRegistry([sink]).salvage(text)


def via_stream(text: str, step: int = 7) -> object:
    # Small deltas: a stream that rescans its buffer per delta is quadratic in the reply.
    stream = tr.StreamSalvager(tr.ANY_TOOL)
    events: list[object] = []
    for i in range(0, len(text), step):
        events.extend(stream.feed(text[i : i + step]))
    events.extend(stream.close())
    return events


def via_decode(text: str) -> object:
    return decode_arguments(text)


def via_execute(text: str) -> object:
    return REGISTRY.execute("sink", text)


def via_repair_call(text: str) -> object:
    return tr.repair_call({"name": "Sink", "arguments": text}, [sink])


def via_run(text: str) -> object:
    return REGISTRY.run({"name": "sink", "arguments": text})


def via_serialize(text: str) -> object:
    return tr.serialize_result({"error": text, "more": [text]}, max_chars=1000)


TEXT_ENTRY_POINTS = {
    "salvage_text(ANY_TOOL)": via_salvage_any,
    "salvage_text(allowed)": via_salvage_allowed,
    "ToolRegistry.salvage": via_registry_salvage,
    "StreamSalvager": via_stream,
}
ARG_ENTRY_POINTS = {
    "decode_arguments": via_decode,
    "ToolRegistry.execute": via_execute,
    "repair_call": via_repair_call,
    "ToolRegistry.run": via_run,
    "serialize_result": via_serialize,
}


def outcome(fn: Callable[[str], object], text: str) -> object:
    """Call ``fn``; a documented error is a fine answer, anything else escapes the test."""
    try:
        return fn(text)
    except tr.ToolRepairError as exc:
        return exc


# Linear work doubles; quadratic work quadruples. The margin absorbs fixed costs.
MAX_COUNT_RATIO = 2.5
# Repeat counts for counted work: texts of a few thousand characters keep profiling cheap.
N_COUNTED = 200

CASES = [(ep, fam) for ep in TEXT_ENTRY_POINTS for fam in FAMILIES] + [
    (ep, fam) for ep in ARG_ENTRY_POINTS for fam in ARG_FAMILIES
]
ALL_ENTRY_POINTS = {**TEXT_ENTRY_POINTS, **ARG_ENTRY_POINTS}
FAMILY_OF = {**FAMILIES, **ARG_FAMILIES}


# Every family through some entry point and every entry point on some family (the whole
# product under ci-deep): each family's whole-text pass and stream are counted again below.
@pytest.mark.covering("entry", "family")
@pytest.mark.parametrize(("entry", "family"), CASES, ids=[f"{e}-{f}" for e, f in CASES])
def test_counted_work_is_linear(entry: str, family: str, assert_linear_work: Any) -> None:
    # Function calls counted (conftest.count_calls); the doubling *times* are in benchmarks/.
    fn, make = ALL_ENTRY_POINTS[entry], FAMILY_OF[family]
    assert_linear_work(lambda k: partial(outcome, fn, make(k)), N_COUNTED)


class CountingDialect:
    """A built-in dialect whose reader invocations are counted (a tracing wrapper)."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self._inner, self._counter = inner, counter
        self.name, self.markers = inner.name, inner.markers
        self.reasoning = getattr(inner, "reasoning", ())

    def read(self, text: str, start: int, marker_end: int, ctx: Any) -> Any:
        self._counter[0] += 1
        return self._inner.read(text, start, marker_end, ctx)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_markers_handled_are_linear(family: str) -> None:
    # Reader invocations: a marker re-read once per later marker shows up here as N^2.
    # (``SalvagePass.work`` also adds the characters *handed* to each reader, the rest of the
    # text on a whole-text pass: an upper bound on reading, quadratic on marker runs by
    # construction, so it is not the measure used here.)
    def readers_called(text: str) -> int:
        counter = [0]
        dialects = [CountingDialect(d, counter) for d in BUILTIN]
        tr.salvage_text(text, tr.ANY_TOOL, dialects=dialects)
        return counter[0]

    make = FAMILIES[family]
    small, mid, large = (readers_called(make(k * N_COUNTED)) for k in (1, 2, 4))
    # Growth, not totals: a fixed offset (a reader's depth bound swallowing the first markers,
    # the depth limit plus a wrapper's levels) cancels out; quadratic growth still quadruples.
    assert large - mid <= 2 * (mid - small) + 200, f"{family}: {small} -> {mid} -> {large} reader calls"


@pytest.mark.parametrize("family", list(FAMILIES))
def test_salvage_memory_is_linear(family: str) -> None:
    def peak(text: str) -> int:
        tracemalloc.start()
        try:
            tr.salvage_text(text, tr.ANY_TOOL)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    make = FAMILIES[family]
    small, large = peak(make(N_COUNTED)), peak(make(2 * N_COUNTED))
    assert large <= MAX_COUNT_RATIO * small + 64_000, f"{family}: peak {small} -> {large} bytes"


def _repeats(make: Callable[[int], str]) -> int:
    """A repeat count whose text is past the readers' bounded look-ahead windows."""
    return max(N_COUNTED, 16_000 // max(1, len(make(1))))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_salvage_counted_work_doubles(family: str) -> None:
    # Markers handled, reader calls, calls made and characters looked at by the whole-text
    # pass (``toolrepair.testing``'s counted work), never a clock: the t(2N)/t(N) table of
    # these families is benchmarks/bench_doubling.py.
    make = FAMILIES[family]
    assert _not_linear(make, _repeats(make), None) is None


def stream_work(text: str, step: int = 16) -> int:
    stream = tr.StreamSalvager(tr.ANY_TOOL)
    for i in range(0, len(text), step):
        stream.feed(text[i : i + step])
    stream.close()
    work = stream.work
    # Not ``work.handed``: a window held open (a kimi section) is handed whole to each marker's
    # reader, a bound on what it may read that grows with the window, not what it reads.
    return work.markers + work.reads + work.copied


@pytest.mark.parametrize("family", list(FAMILIES))
def test_stream_counted_work_doubles(family: str) -> None:
    # The engine's own counters on a stream fed 16 characters at a time: markers handled,
    # reader calls, characters copied into the window (a stream that re-joins or rescans its
    # buffer per delta shows up here), never a clock.
    make = FAMILIES[family]
    n = _repeats(make)
    small, large = stream_work(make(n)), stream_work(make(2 * n))
    assert large <= MAX_COUNT_RATIO * small + 4096, f"{family}: {small} -> {large}"


# -- recursion ----------------------------------------------------------------------------------
@pytest.fixture
def shallow_stack() -> Iterator[None]:
    """Allow only 150 frames above the test: any recursion that grows with the input (10^5
    brackets here) fails, whatever the interpreter's default limit."""
    depth = 0
    frame: Any = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(200, depth + 150))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


# The sizes the issue names: 10^5 brackets, 10^6 spaces in a tag, 10 MB of prose; marker runs
# of tens of thousands.
BIG_N: dict[str, int] = {
    "tool_call_open": 5000,
    "open_brackets": 100_000,
    "open_keys": 100_000,
    "deep_valid_call": 100_000,
    "pythonic_redos": 100_000,
    "fence_toggles": 20_000,
    "think_open": 20_000,
    "think_close": 20_000,
    "deepseek_sep": 20_000,
    "deepseek_begin": 10_000,
    "spaces_in_tag": 1_000_000 // 64,
    "stray_close": 20_000,
    "function_tag_open": 5000,
    "kimi_begin": 10_000,
    "mistral_marker": 20_000,
    "surrogates_nuls": 5000,
    "prose": 10_000_000 // 70,
    # 512 KB of "```\r" (the quadratic case) and 2 MB on one unfinished fence line.
    "fence_toggles_cr": 512 * 1024 // 4,
    "fenced_calls_cr": 10_000,
    "unfinished_fence_line": 2_000_000 // 64,
    "backtick_runs": 20_000,
    "quote_list_fences": 20_000,
    # Depth families at 10^5; the rest at sizes the pure-Python lenient decoder (about 1 us per
    # character, linear: see the doubling test) reads in a fraction of a second.
    "deep_truncated": 100_000,
    "deep_valid": 100_000,
    "single_quoted_keys": 100_000,
    "trailing_commas": 10_000,
    "backslash_run": 100_000,
    "double_encoded": 100_000,
    "code_fences": 100_000,
    "python_literals": 5000,
    "raw_newlines": 100_000,
    "comma_runs": 100_000,
    "surrogate_string": 100_000,
    "lenient_comment_runs": 5000,
    "lenient_single_quotes": 5000,
    "headless_names": 5000,
    "headless_broken": 5000,
    "harmony_detokenised": 5000,
    "harmony_spaced_names": 5000,
    "attribute_tags": 5000,
    "gemma_bare_calls": 5000,
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_big_inputs_salvage_on_a_shallow_stack(shallow_stack: None, family: str) -> None:
    text = FAMILIES[family](BIG_N[family])
    result = tr.salvage_text(text, ALLOWED)
    assert isinstance(result, tr.SalvageResult)
    # Nothing invented: content and reasoning are the reply's own text, calls and markup cut out.
    assert len(result.content) + len(result.reasoning) <= len(text)
    if not result.calls and not result.rejected and not result.reasoning:
        assert result.content == text or "<think>" in text or "<|" in text


@pytest.mark.parametrize("family", list(ARG_FAMILIES))
def test_big_arguments_on_a_shallow_stack(shallow_stack: None, family: str) -> None:
    text = ARG_FAMILIES[family](BIG_N[family])
    for fn in ARG_ENTRY_POINTS.values():
        outcome(fn, text)


def test_big_stream_on_a_shallow_stack(shallow_stack: None) -> None:
    text = FAMILIES["deep_valid_call"](100_000) + FAMILIES["tool_call_open"](2000)
    events = via_stream(text, step=4096)
    assert isinstance(events, list)


def test_deep_results_serialize_on_a_shallow_stack(shallow_stack: None) -> None:
    nested: Any = []
    for _ in range(100_000):
        nested = [nested]
    mapping: Any = {}
    for _ in range(100_000):
        mapping = {"a": mapping}
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    for value in (nested, mapping, {"error": nested}, cyclic, [{"error": mapping}]):
        assert isinstance(tr.serialize_result(value), str)


def test_the_valid_deep_call_is_refused_not_crashed() -> None:
    result = tr.salvage_text(FAMILIES["deep_valid_call"](100_000), ["sink"])
    assert result.calls == ()
    assert result.rejected and result.rejected[0].reason in {"too-deep", "undecodable", "too-large"}


# -- documented size limits ---------------------------------------------------------------------
def test_salvage_text_refuses_input_beyond_max_input_chars() -> None:
    text = '<tool_call>{"name": "sink", "arguments": {}}</tool_call>'
    assert tr.salvage_text(text, ["sink"], max_input_chars=len(text)).calls
    result = tr.salvage_text(text + " ", ["sink"], max_input_chars=len(text))
    assert result.calls == () and result.content == text + " "
    assert [(r.reason, r.span) for r in result.rejected] == [("input-too-large", (0, len(text) + 1))]


def test_registry_passes_max_input_chars_to_salvage() -> None:
    text = '<tool_call>{"name": "sink", "arguments": {}}</tool_call>'
    assert tr.ToolRegistry([sink], max_input_chars=len(text)).salvage(text).calls
    refused = tr.ToolRegistry([sink], max_input_chars=len(text) - 1).salvage(text)
    assert refused.calls == () and refused.content == text
    assert [r.reason for r in refused.rejected] == ["input-too-large"]
    assert tr.ToolRegistry([sink], max_input_chars=len(text) - 1).calls(text) == []
    with pytest.raises(ValueError, match="max_input_chars"):
        tr.ToolRegistry([sink], max_input_chars=-1)


def test_arguments_beyond_max_chars_are_refused() -> None:
    with pytest.raises(tr.ArgumentError) as info:
        decode_arguments('{"a": "' + "x" * 100 + '"}', max_chars=50)
    assert info.value.reason == "too-large"
    huge = '{"a": "' + "x" * 10_000_001 + '"}'  # past the default limit of 10^7 characters
    outcome_ = REGISTRY.run({"name": "sink", "arguments": huge})
    assert not outcome_.ok and outcome_.error is not None and outcome_.error.kind == "arguments"


def test_stream_salvager_has_a_documented_size_limit() -> None:
    stream = tr.StreamSalvager(tr.ANY_TOOL, max_input_chars=100)
    call = '<tool_call>{"name": "sink", "arguments": {}}</tool_call>'
    events = stream.feed("x" * 100) + stream.feed(call) + stream.close()
    assert not [e for e in events if isinstance(e, tr.ToolCallReady)]
    assert "".join(e.text for e in events if isinstance(e, tr.TextDelta)) == "x" * 100 + call
