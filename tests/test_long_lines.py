"""A line longer than ``max_call_chars`` (the code mask's look-ahead) holding a code trigger:
the mask cannot decide what is code there and fails closed, and every call on that line is
refused aloud (``too-large``), whole and streamed alike, never dropped in silence. A call with
no code trigger before it is read as ever; an example in real code stays silent."""

from __future__ import annotations

import pytest

import toolrepair as tr

CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
LIMIT = 2_000


def streamed(text: str, size: int) -> tuple[int, str]:
    """The calls a stream releases and the text it releases (the refused calls' text kept)."""
    s = tr.StreamSalvager(["f"], max_call_chars=LIMIT)
    events = [e for i in range(0, len(text), size) for e in s.feed(text[i : i + size])] + s.close()
    calls = sum(isinstance(e, tr.ToolCallReady) for e in events)
    return calls, "".join(e.text for e in events if isinstance(e, tr.TextDelta))


# (text, calls taken, reasons of the rejections, in order)
CASES = [
    # One unbroken line, far past the look-ahead, with code spans: every call refused aloud.
    (("`x` " + CALL + " ") * 100, 0, ["too-large"] * 100),
    (("a ``b` c " + CALL + " ") * 100, 0, ["too-large"] * 100),
    # The same line with no code trigger: every call taken.
    (("plain " + CALL + " ") * 100, 100, []),
    # Short lines with code spans: the mask decides, examples in code stay silent.
    (("`x` " + CALL + "\n") * 100, 100, []),
    (("`" + CALL + "`\n") * 100, 0, []),
    # A long line after a call: the call before it stands, those on it are refused.
    (CALL + "\n" + ("`x` " + CALL + " ") * 100, 1, ["too-large"] * 100),
]


@pytest.mark.parametrize(("text", "calls", "reasons"), CASES)
def test_a_call_on_a_line_too_long_to_decide_is_refused_aloud(text: str, calls: int, reasons: list[str]) -> None:
    got = tr.salvage_text(text, ["f"], max_call_chars=LIMIT)
    assert (len(got.calls), [r.reason for r in got.rejected]) == (calls, reasons)


@pytest.mark.parametrize(("text", "calls", "reasons"), CASES)
@pytest.mark.parametrize("size", [1, 7, 16, 4096])
def test_a_stream_refuses_the_same_calls(text: str, calls: int, reasons: list[str], size: int) -> None:
    whole = tr.salvage_text(text, ["f"], max_call_chars=LIMIT)
    assert streamed(text, size) == (calls, whole.content)
