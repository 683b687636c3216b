"""The code mask against markdown-it-py, a CommonMark implementation nobody here wrote.

A bounded sample here (the test profile decides how many); ``fuzz/mask_differential.py``
runs the same check for as long as asked. The grammar and the referee's mapping of
markdown-it-py's tokens to offsets are in ``mask_oracle``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from .mask_oracle import CALL, HTML_PIECES, RefereeError, check, fail_closed_class, markdown, referee

pytest.importorskip("markdown_it")


@st.composite
def texts(draw: st.DrawFn, pieces: Sequence[str] | None = None) -> str:
    def pick(options: Sequence[Any]) -> Any:
        return draw(st.sampled_from(options))

    def count(lo: int, hi: int) -> int:
        return draw(st.integers(lo, hi))

    return markdown(pick, count) if pieces is None else markdown(pick, count, pieces)


@settings(deadline=None)
@given(texts(), st.lists(st.integers(1, 9), max_size=6))
def test_no_call_from_code_and_none_lost_from_text(text: str, chunks: list[int]) -> None:
    try:
        found = check(text, chunks)
    except RefereeError:
        reject()  # markdown-it-py raised on this text: no verdict to compare with
    # Safety, always: no call is salvaged from what markdown-it-py calls code.
    assert [d for d in found if d.salvaged] == []
    # Recall, where the mask reads as the spec does: it fails closed (masks more than code) on
    # tabs in container indentation, raw inline HTML, links and reference definitions, and a
    # lazy line indented four or more in nested quotes, so a call lost there is by design.
    if fail_closed_class(text) is None:
        assert found == []


@settings(deadline=None)
@given(texts(HTML_PIECES))
def test_no_call_from_html_code_where_readings_part(text: str) -> None:
    # HTML code alone, where a browser's, markdown-it-py's and the spec's readings part (a
    # comment in <pre> or in an attribute, whitespace only the reference reads as such, a close
    # tag left open by the line's end): whatever markdown-it-py calls code, no call is taken.
    try:
        found = check(text)
    except RefereeError:
        reject()
    assert [d for d in found if d.salvaged] == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"> ```\n> {CALL}\n", "fence"),
        (f"- a\n\n      {CALL}\n", "code_block"),
        (f"<div>\n{CALL}\n", "html_block"),
        (f"a `{CALL}` b\n", "code_inline"),
        (f"a `` ` {CALL}\n", "text"),
        (f"```\r{CALL}\r```\r", "fence"),
        (f"# `x` {CALL}", "text"),
    ],
)
def test_the_referee_maps_tokens_to_markers(text: str, kind: str) -> None:
    # The mapping itself, on texts whose answer is known.
    assert list(referee(text).kinds.values()) == [kind]
