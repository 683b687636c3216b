"""The code mask's runs (``CodeMask._plain``: ``_PLAIN``, ``_WIDE``, ``_FENCE_BODY``) read many
lines in one match; reading the same text one line at a time (``_classify`` for every line) must
give the same reading: the same code regions, the same open blocks and containers after it, the
same answers to every later question. Generated Markdown mixes the lines the runs take with
those they must leave to the walk (tabs, indentation, lazy lines, items interrupting paragraphs,
ordered items, quotes, runs of differing lengths, escapes, fences (whole, unclosed, in items and quotes), HTML
blocks and inline HTML, link tails, headings, setext underlines, every line ending)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrepair._salvage._mask import CodeMask

PREFIXES = ["", "", "", "- ", "- ", "* ", "+ ", " ", "  ", "   ", "    ", "\t", "1. ", "2) ", "> ", "-\t", "  - ", "-"]
BODIES = [
    "x",
    "word and more",
    "a `b` c",
    "`a` `b`",
    "``a`` b",
    "`a",
    "a`",
    "a `b`c`",
    "\\`a` b",
    "<br>",
    "x<br> y",
    "</b> z",
    "<pre>",
    "</pre>",
    "<code>x",
    "<!-- x",
    "-->",
    "x <!-- y --> z",
    "[l](u)",
    "[a](b) [c](d) [e](f)",
    "[l](u v)",
    "a ](b",
    "[x]: y",
    "[1] {x} **y**",
    "```",
    "```js",
    "~~~",
    "# h",
    "## h `c`",
    "---",
    "===",
    "***",
    "<div>",
    "</div>",
    "x<y",
    "a\tb",
    "<t>`x`</t>",
    "- - -",
    "",
]
ENDINGS = ["\n", "\n", "\r\n", "\r"]


def markdown() -> st.SearchStrategy[str]:
    line = st.tuples(st.sampled_from(PREFIXES), st.sampled_from(BODIES), st.sampled_from(ENDINGS))
    return st.lists(line, min_size=1, max_size=14).map(lambda ls: "".join(p + b + e for p, b, e in ls))


class _OneByOne(CodeMask):
    """The reading without runs: every line through ``_classify``."""

    __slots__ = ()

    def _plain(self, t: str, base: int, a: int, upto: int) -> bool:
        return False


def state(mask: CodeMask) -> tuple[Any, ...]:
    """What decides every later answer (``ro`` before the walk is decided for good, and the
    runs take no decided run into it)."""
    return (
        list(mask.regions),
        list(mask.stack),
        mask.leaf,
        mask.fch,
        mask.flen,
        mask.forigin,
        mask.html_end,
        mask.dead,
        mask.pos,
        mask.empty_item,
        mask.ro[mask.walk :],
        mask.ro_len[mask.walk :],
        mask.fog_at,
        mask.fog,
        mask.definition,
        mask.dense,
        mask.hraw,
        mask.hsoft,
        mask.hopen,
        list(mask.hcount),
    )


@given(markdown(), st.lists(st.integers(0, 400), max_size=4), st.sampled_from([1_000_000, 12]))
def test_runs_read_as_lines_one_by_one(text: str, asks: list[int], head: int) -> None:
    fast, slow = CodeMask(head), _OneByOne(head)
    for s in [*sorted({a % (len(text) + 1) for a in asks}), len(text)]:
        assert fast.covers(text, 0, s, True) == slow.covers(text, 0, s, True), s
        assert state(fast) == state(slow), s


@given(markdown())
def test_runs_answer_every_offset_as_lines_one_by_one(text: str) -> None:
    fast, slow = CodeMask(1_000_000), _OneByOne(1_000_000)
    assert [fast.covers(text, 0, s, True) for s in range(len(text))] == [
        slow.covers(text, 0, s, True) for s in range(len(text))
    ]


# Each kind of line ``_WIDE`` takes, and its neighbours that it must not: the text, then the
# code regions (start, end) after reading all of it with a question at its end.
WIDE_ROWS = [
    ("- a `b` c\n- d\n\nx `y`\n", [(4, 7), (17, 20)]),  # bullets, a blank line, the item closed
    ("- a\nlazy `b`\n\n  `c`\n", [(9, 12), (16, 19)]),  # a lazy line; then the item goes on (walk)
    ("p\n- a `b`\n", [(6, 9)]),  # a bullet item interrupts a paragraph
    ("p `a\n- b` c\n", []),  # ... and ends it: the runs do not pair across it
    ("p `a\nb` c\n", [(2, 7)]),  # a span over two lines: the walk pairs it
    ("a `b` ``c`` `d`\n", [(2, 5), (6, 11), (12, 15)]),  # runs of differing lengths
    ("a `x<br>` b\n", [(2, 9)]),  # `<` in a span: the walk reads it
    ("a<br> `b` [c](d) `e`\n", [(6, 9), (17, 20)]),  # a tag and a link tail beside spans
    ("a <pre>`b`</pre>\n", [(2, 16)]),  # an HTML code element is no one-word tag
    ("- a\n\t`b`\n", [(5, 9)]),  # a tab: left to the walk, in doubt to the paragraph's end
    ("- ```\n  `a`\n  ```\n`b`\n", [(0, 5), (6, 11), (12, 17), (18, 21)]),  # a fence in an item
    ("> ```\n> a\n`b`\n", [(0, 5), (6, 9), (10, 13)]),  # a fence in a quote, to the quote's end
    ("<div>\n`a`\n\n`b`\n", [(11, 14)]),  # an HTML block's line is no paragraph's
    ("a `b`\r\n- c `d`\r\n\r\ne\r\n", [(2, 5), (11, 14)]),  # CRLF
    ("a `b`\r- c `d`\r\re\r", [(2, 5), (10, 13)]),  # CR
    ("- a `b\n`\n", [(4, 8)]),  # an opener left open: the walk pairs it
    ("- a\n-\n  `b`\n", [(8, 11)]),  # an empty item of width 2, then its content
    ("- a\n# h `c`\nx `y`\n", [(8, 11), (14, 17)]),  # a heading ends the item, its spans pair in it
    ("p `a\n# b` c\n", []),  # ... and ends the paragraph: no pairing across it
    ("# h\n- a\nlazy\n\n`b`\n", [(14, 17)]),  # a heading, an item, a lazy line, then the item closed
    ("- a\n```js\n- b\n```\nx\n", [(4, 9), (10, 13), (14, 17)]),  # a fence ends the item; `- b` in it is code
    (
        "a\n````\nb\n```\nc\n````\n`d`\n",
        [(2, 6), (7, 8), (9, 12), (13, 14), (15, 19), (20, 23)],
    ),  # a shorter run closes nothing
    ("```\na `b`\n```\n`c`\n", [(0, 3), (4, 9), (10, 13), (14, 17)]),  # a backtick in the body: the walk reads it
    ("~~~ `x`\na\n~~~\n`b`\n", [(0, 7), (8, 9), (10, 13), (14, 17)]),  # ... or in a tilde fence's info string
    ("```\na\n   ```  \n`b`\n", [(0, 3), (4, 5), (6, 14), (15, 18)]),  # a closer indented three, spaces after it
    ("```\na\n``` x\n`b`\n", [(0, 3), (4, 5), (6, 11), (12, 15)]),  # text after a run: no closer, code to the end
    ("- a\n~~~\nb\n~~~~\n- c\n", [(4, 7), (8, 9), (10, 14)]),  # a tilde fence, a longer closer, a new item
]


@pytest.mark.parametrize(("text", "regions"), WIDE_ROWS)
def test_wide_run_rows(text: str, regions: list[tuple[int, int]]) -> None:
    for mask in (CodeMask(1_000_000), _OneByOne(1_000_000)):
        mask._read_to(text, 0, len(text), True)
        assert [(s, e) for s, e, _, _ in mask.regions] == regions, type(mask).__name__
