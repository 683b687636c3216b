"""``check_dialect`` judges "in code" by the mask's own rules: it never flags a correct dialect.

Prose before a wrapper can undo it: ``<toolcall>`` alone on the line before a fence starts an
HTML block (CommonMark's seventh kind), so the fence is no fence and the call is rightly taken;
a backtick can put a ``<think>`` in a code span. The masks property asks only where the
wrapper really masks the call (the code mask and markdown-it-py agree).
"""

from __future__ import annotations

import json

import pytest

import toolrepair as tr
from toolrepair.testing import _wrapped_in_code, check_dialect

TOOLCALL = tr.TagDialect("toolcall", open="<toolcall>", close="</toolcall>")
CALL = '<toolcall>{"name": "f", "arguments": {}}</toolcall>'


def _render(call: tr.ToolCall) -> str:
    return "<toolcall>" + json.dumps({"name": call.name, "arguments": call.arguments}) + "</toolcall>"


# (before, wrapper open, wrapper close, fence?, masked by the rules)
CASES = [
    ("", "\n```\n", "\n```\n", True, True),
    ("ok", "\n~~~~\n", "\n~~~~\n", True, True),
    ("<toolcall>", "\n```\n", "\n```\n", True, False),  # an HTML block: the fence is no fence
    ("<toolcall> x", "\n```\n", "\n```\n", True, True),  # not alone on its line: no HTML block
    ("<div>", "\n```json\n", "\n```\n", True, False),
    ("<!-- x", "\n```\n", "", True, False),  # code, but by a comment: no fence to judge
    ("", "<think>", "</think>", False, True),
    ("` ", "<think>", "</think>", False, True),  # the backtick pairs with nothing: not code
    ("` x `y", "<think>", "</think>`", False, True),
]


@pytest.mark.parametrize(("before", "open_", "close", "fence", "masked"), CASES)
def test_the_kit_judges_code_by_the_masks_rules(before: str, open_: str, close: str, fence: bool, masked: bool) -> None:
    text = before + open_ + CALL + close
    at = len(before) + len(open_)
    assert _wrapped_in_code(text, at, len(before) + len(open_) - len(open_.lstrip()), fence) is masked
    got = tr.salvage_text(text, ["f"], dialects=[TOOLCALL])
    if masked:  # where the kit asserts, salvage agrees
        assert not got.calls
    elif before.startswith(("<toolcall>", "<div>")):  # rightly taken: the dialect is correct
        assert len(got.calls) == 1


def test_a_reasoning_opener_in_a_code_span_is_no_wrapper() -> None:
    text = "`<think>" + CALL + "</think>` and"
    assert _wrapped_in_code(text, 8, 1, False) is False


def test_check_dialect_passes_a_correct_dialect_whose_marker_starts_an_html_block() -> None:
    # The dialect of the report: its own marker, alone on a line before a fence, is prose the
    # masks property draws; the exact shape is a row of the table above, so a short run suffices.
    check_dialect(TOOLCALL, _render, max_examples=30)  # the failing shape itself is a table row above
