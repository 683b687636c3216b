"""Code that ends inside a call's own text: the call straddles code and text.

A code span that prose opened can be closed by a backtick in a later call's argument; the
call's marker is then in code and its end in text. It is no example shown in code (an
example ends inside its code), so it is refused as ``in-code`` with a Rejection, never
dropped with no word; a call shown whole inside code stays text, silently. Every complete
call on a line of calls, backticks and code spans is then taken or rejected, whole and
streamed alike.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_stream import stream

import toolrepair as tr

OFFERED = ["f"]


def call(value: str) -> str:
    return '<tool_call>{"name": "f", "arguments": {"a": "' + value + '"}}</tool_call>'


# (reply, calls taken, rejections as (reason, start)).
TABLE = [
    # The span "` " + call(...) is opened in prose and closed by the argument's backtick.
    (call("x`y") + " `code` " + call("x`y"), 1, [("in-code", 71)]),
    # The span opened by the first call's backtick covers the second call's marker.
    (call("x`y") + " " + call("x`y"), 1, [("in-code", 64)]),
    # Shown whole in code: an example, silently text.
    ("```\n" + call("xy") + "\n```", 0, []),
    ("```\n<tool_call>\n" + '{"name": "f", "arguments": {}}' + "\n</tool_call>\n```", 0, []),
    ("see `" + call("xy") + "` here", 0, []),
    ("``" + call("x`y") + "``", 0, []),
    # A fence that a JSON string closes: the call ends in text.
    ("```\n" + call("a\\n```\\nb").replace("\\n", "\n") + "\nafter", 0, [("in-code", 4)]),
    # No code at all: both calls run.
    (call("xy") + " " + call("xy"), 2, []),
]


@pytest.mark.parametrize(("text", "taken", "rejected"), TABLE)
def test_a_call_that_code_ends_inside_is_refused_not_dropped(text: str, taken: int, rejected: list) -> None:
    result = tr.salvage_text(text, allowed=OFFERED)
    assert (len(result.calls), [(r.reason, r.span[0]) for r in result.rejected]) == (taken, rejected)
    for step in (1, 7):
        assert stream(text, OFFERED, range(step, len(text), step))[1] == result.calls


def test_a_long_line_of_calls_and_code_spans_loses_none_silently() -> None:
    text = (call("x`y") + " `code` ") * 934
    result = tr.salvage_text(text, allowed=OFFERED)
    assert len(result.calls) + len(result.rejected) == 934
    assert {r.reason for r in result.rejected} == {"in-code"}


PIECES = [call("xy"), call("x`y"), " `code` ", "`", " ", "\n", "```\n", "prose "]


def _shown_in_code(text: str) -> int:
    """How many calls markdown-it-py shows inside code (a code span, a fence, its info
    string, or an indented block): the referee, not the mask under test."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    shown = 0
    for token in md.parse(text):
        if token.type in ("fence", "code_block"):
            shown += (token.info + token.content).count("<tool_call>")
        for child in token.children or ():
            if child.type == "code_inline":
                shown += child.content.count("<tool_call>")
    return shown


@given(st.lists(st.sampled_from(PIECES), max_size=12), st.integers(1, 40))
def test_every_call_is_taken_rejected_or_shown_in_code(pieces: list[str], step: int) -> None:
    # Every call written is taken or rejected, unless markdown-it-py shows it in code (a code
    # span's or a fence's content holds its marker): none is lost between code and text.
    # The stream agrees with the whole text.
    pytest.importorskip("markdown_it")
    text = "".join(pieces)
    result = tr.salvage_text(text, allowed=OFFERED)
    written = sum(p.startswith("<tool_call>") for p in pieces)
    outcomes = {c.span[0] for c in result.calls} | {r.span[0] for r in result.rejected}
    assert len(result.calls) + len(result.rejected) == len(outcomes) <= written
    assert len(outcomes) >= written - _shown_in_code(text)
    assert stream(text, OFFERED, range(step, len(text), step))[1] == result.calls
