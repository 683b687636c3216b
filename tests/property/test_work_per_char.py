"""A bound on work per character, whole and streamed, on every hostile family (issue 31).

Linear is not enough: a constant of tens of thousands of instructions a character makes a
hostile reply of the default ``max_input_chars`` cost hours. So the work per character itself
is bounded, in counted work (``sys.setprofile`` events: Python and C calls and returns, the
same on any machine however busy; one event is about 500-750 CPU instructions, as
``benchmarks/bench_work.py --instructions`` shows per family):

* ``salvage_text``: at most ``WHOLE`` events a character;
* a stream in 16-character deltas: at most ``STREAM`` events a character, and no more than
  ``PER_DELTA`` events a delta beyond the whole reply's own work (entering the pass for a
  delta that holds a marker character, and re-reading a candidate cut by a delta's end).

The bounds are the engine's stated ones (``_salvage/_engine.py``); the figures they stand at
and the 5,000-instructions target the issue set are in ``benchmarks/bench_work.py``'s table.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair.testing import _count_calls

from .test_hostile import FAMILIES

WHOLE = 25
STREAM = 45
PER_DELTA = 450
DELTA = 16
CHARS = 4_000

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
EXTRA: dict[str, Callable[[int], str]] = {
    "pythonic_f_open": lambda n: "f(" * n,
    "open_braces": lambda n: "{" * n,
    "nested_quotes_then_call": lambda n: ("> " * 64 + "line\n") * max(1, n // 64) + CALL,
    "many_small_calls": lambda n: (CALL + "\n") * max(1, n // 4),
    "one_line_calls_code_spans": lambda n: ("`x` " + CALL + " ") * max(1, n // 4),
}
ALL = {**FAMILIES, **EXTRA}
# Every kind of code and reasoning the mask reads, so that none is first met inside a count.
WARM = f"`x` {CALL}\n> - ```\n{CALL}\n```\n<pre>{CALL}</pre> <!-- {CALL} -->\n    {CALL}\n<think>{CALL}</think>\n[l](u `d`) <b>`c`</b> {CALL}"
# What one call of an entry point costs whatever its text (setting up the pass, the result).
FIXED_WHOLE, FIXED_STREAM = 2_000, 3_000


def whole(text: str) -> object:
    return tr.salvage_text(text, tr.ANY_TOOL)


def stream(text: str) -> object:
    s = tr.StreamSalvager(tr.ANY_TOOL)
    return [s.feed(text[i : i + DELTA]) for i in range(0, len(text), DELTA)] + [s.close()]


def text_of(make: Callable[[int], str], chars: int = CHARS) -> str:
    unit = max(1.0, len(make(10)) / 10)
    return make(max(1, int(chars / unit)))


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Compiled configurations and patterns (the mask's among them) out of the counts."""
    for text in (CALL * 3, WARM):
        whole(text)
        stream(text)


def check(text: str) -> None:
    n = len(text)
    deltas = -(-n // DELTA)
    w = _count_calls(lambda: whole(text))
    s = _count_calls(lambda: stream(text))
    assert w <= WHOLE * n + FIXED_WHOLE, f"whole: {w / n:.1f} events a character"
    assert s <= STREAM * n + FIXED_STREAM, f"stream: {s / n:.1f} events a character"
    beyond = s - w - FIXED_STREAM
    assert beyond <= PER_DELTA * deltas, f"stream: {beyond / deltas:.0f} events a delta beyond the whole reply's"


@pytest.mark.parametrize("family", list(ALL))
def test_work_per_character_is_bounded(family: str) -> None:
    check(text_of(ALL[family]))


# Texts mixing the families' units: the bound is no artefact of one repeated shape.
UNITS = sorted({make(1) for make in ALL.values()} | {CALL, "plain words ", "\n", "`", "```\n", "> "})


@given(st.lists(st.sampled_from(UNITS), min_size=1, max_size=400))
def test_work_per_character_is_bounded_on_mixed_texts(units: list[str]) -> None:
    check("".join(units))
