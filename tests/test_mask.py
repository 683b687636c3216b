"""The masks, class by class: where CommonMark says code, or a model says reasoning.

Each row is checked on the whole text and streamed one character at a time (the stream must
give the same calls and text). The differential suite against markdown-it-py is in
``tests/property/test_mask_oracle.py``.
"""

from __future__ import annotations

import pytest

import toolrepair as tr
from toolrepair._salvage._mask import CodeMask

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
ONE = ["f"]


def calls(text: str) -> int:
    whole = tr.salvage_text(text, ONE, dialects=["hermes"])
    s = tr.StreamSalvager(ONE, dialects=["hermes"])
    events = [e for ch in text for e in s.feed(ch)] + s.close()
    streamed = tuple(e.call for e in events if isinstance(e, tr.ToolCallReady))
    assert streamed == whole.calls
    assert "".join(e.text for e in events if isinstance(e, tr.TextDelta)) == whole.content
    return len(whole.calls)


CONTAINERS = [
    (f"> ```\n> {CALL}\n> ```\n", 0),
    (f">```\n>{CALL}\n", 0),  # no space after `>`, unclosed
    (f"> > ~~~\n> > {CALL}\n", 0),  # nested quotes
    (f"- ```\n  {CALL}\n  ```\n", 0),
    (f"* ```\n  {CALL}\n", 0),
    (f"+ ```\n  {CALL}\n", 0),
    (f"1. ```\n   {CALL}\n", 0),
    (f"1) ```\n   {CALL}\n", 0),
    (f"- a\n\n  ```\n  {CALL}\n  ```\n", 0),  # a fence in the item's body
    (f"- a\n    ```\n    {CALL}\n", 0),  # indented inside the item: still a fence
    (f"> - ```\n>   {CALL}\n", 0),  # a list in a quote
    (f"- > ```\n  > {CALL}\n", 0),  # a quote in a list
    (f"-\t```\n\t{CALL}\n", 0),  # tabs stop every four columns: the item's width is 4
    (f"- ```\n{CALL}\n", 1),  # the item ended: so did its fence
    (f"> ```\n{CALL}\n", 1),  # no laziness for fences
    (f"1) ~~~\n{CALL}\n", 1),
    (f"para\n2. ```\n{CALL}\n```", 1),  # `2.` cannot interrupt a paragraph: the fences are text
]

LINE_ENDINGS = [
    (f"```\r{CALL}\r```\r{CALL}\r", 1),  # CR only: the closing fence is found
    (f"```\r\n{CALL}\r\n```\r\n{CALL}\r\n", 1),
    (f"```\n{CALL}\r```\n{CALL}", 1),  # mixed
    (f"> ```\r> {CALL}\r> ```\r{CALL}", 1),
    (f"```js\r{CALL}", 0),  # the info string ends at the CR
]

WHITESPACE = [
    (f"```\n{CALL}\n``` \t\n{CALL}\n", 1),  # spaces and tabs after a closer
    *[(f"```\n{CALL}\n```{ws}\n{CALL}\n", 0) for ws in
      ("\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\x1c", "\x85", "\u2028")],
]

HTML = [
    (f"<div>\n```\n</div>\n\n{CALL}\n", 1),  # the fence line is HTML: parity does not flip
    (f"<details>\n```\n</details>\n\n{CALL}\n", 1),
    (f"<!--\n```\n-->\n{CALL}\n", 1),
    (f"<pre>\n```\n</pre>\n{CALL}\n", 1),
    (f"<think>\nplan\n</think>\n{CALL}\n", 1),  # one HTML block: not code
    (f"para\n<span>\n```\n{CALL}\n", 0),  # kind 7 cannot interrupt a paragraph; the fence can
]

SPANS = [
    (f"Use `{CALL}` here", 0),
    (f"Use ``a ` {CALL} `` here", 0),  # runs of equal length pair
    (f"Use ` then {CALL}", 1),  # an unmatched run is text
    (f"Use ` then\n\n{CALL} `", 1),  # a code span stays in its paragraph
    (f"Use \\` then {CALL} `", 1),  # an escaped backtick opens nothing
    (f"# `{CALL}`", 0),  # in a heading too
    (f"`x` {CALL} `y`", 1),
    (f"```js ``` {CALL}", 1),  # inline, not a fence: the span closed before the call
    (f"```js {CALL} ```", 0),
]

TABS_IN_QUOTES = [
    # Tabs in container indentation: the spec's tab stops and markdown-it-py's may part, so
    # the paragraphs there fail closed (found by fuzz/mask_differential.py).
    (f">\t> > \t`{CALL}`", 0),  # markdown-it-py: a code span; the spec: indented code
    (f">>\t-\t `\n`{CALL}`{CALL}", 0),  # one in a code span; the other lost, failing closed
    (f"> -\t```\n>\t {CALL}\n", 0),  # a fence in markdown-it-py's reading
    (f"-   \t```x`\n`` ```{CALL}``", 0),  # `\t` then a backtick info string: indented code, no fence
    (f"> -\tplain\n\n{CALL} `x`", 1),  # a blank line ends the doubt
    (f"-   \tplain {CALL}", 1),  # no quote, and the spec's indented code (not masked)
    (f"> -\ta `x` b\n\n{CALL}", 1),
]

INLINE_HTML = [
    # Raw inline HTML and autolinks hide their backticks (leftmost start wins over a code span).
    (f'<a title="`">` {CALL} `', 0),
    (f"x <!-- ` --> ` {CALL} `", 0),
    (f"x <!-- a\n` --> ` {CALL} `", 0),  # a comment over two lines
    (f"x <?a ` ?> ` {CALL} `", 0),
    (f"x <!X ` > ` {CALL} `", 0),
    (f"x <![CDATA[ ` ]]> ` {CALL} `", 0),
    (f"x </a\n> ` {CALL} `", 0),  # a closing tag over two lines
    (f"<http://x`y> ` {CALL} `", 0),  # an autolink
    (f"<a`b@c.d> ` {CALL} `", 0),  # an email autolink
    (f'`<a title="`">{CALL}', 1),  # the code span starts first: no HTML, the call is text
    (f"x <!-- a --> ` {CALL} `", 0),  # HTML without a backtick changes nothing
    (f"<span>x</span> {CALL}", 1),
    (f"<tool_call>a</tool_call> `x` {CALL}", 1),  # `_` makes no tag name
    (f"x <?a ` ` {CALL} `", 0),  # left open by the paragraph's end: fails closed
]

LINKS = [
    # A link's destination and title, and a reference definition, hide their backticks
    # (markdown-it-py: code spans after them; found by fuzz/mask_differential.py). The mask
    # does not pair through them: it fails closed from the first pairing run after one.
    (f"[a](x`y) `{CALL}`", 0),
    (f"[a](<x`y>) `{CALL}`", 0),
    (f'[a](x "t`") `{CALL}`', 0),
    (f'[a](x "t\n`") `{CALL}`', 0),  # a title over two lines
    (f"![i](x`y) `{CALL}`", 0),  # an image
    (f"[a](x\n`{CALL}`", 0),  # left open by the line's end
    (f"[a]: /u`v\n`{CALL}`", 0),  # a reference definition
    (f"[a]: <x`y> 't`'\n`{CALL}`", 0),
    (f"[a](x) {CALL} `y`", 1),  # no backtick in the tail: pairing unchanged
    (f"see [docs](http://x.y/z) and use `foo`:\n{CALL}", 1),
    (f"`[a](x`) {CALL}", 1),  # the code span starts first: no link
    (f"[a] (x`y) ` {CALL}", 1),  # `] (` is no link: the runs pair as usual
    (f"[1] see `x` {CALL}", 1),  # no `]:`: no definition
]

NESTED_QUOTE_LAZY = [
    # A lazy line indented four or more inside nested quotes: the spec continues the paragraph;
    # markdown-it-py ends both quotes there when the line starts a block (the outer quote marks
    # it lazy, the inner one no longer sees its indentation), and re-reads it as indented code.
    # The paragraphs up to the next blank line fail closed (found by fuzz/mask_differential.py).
    (f">>``\r    - `\n`{CALL}`", 0),
    (f"> > \f\r\n    </div> `x\n`{CALL}`", 0),  # a line of a form feed is a paragraph
    (f"> - > a `\n     # b\n`{CALL}`", 0),  # a list between the quotes
    (f"> > a `\n     2. x\n`{CALL}`", 0),
    (f"> > a `\n    -\n`{CALL}`", 0),
    (f"> > a `\n    x\n`{CALL}`", 1),  # no block start: one paragraph in both readings
    (f"> a `\n    - b\n`{CALL}`", 1),  # one quote: the spec's reading
    (f"> > a `\n    - b\n\n`{CALL}`", 0),  # a span on its own after the blank line
    (f"> > a `\n    - b\n\n{CALL}", 1),
]

INDENTED = [
    # Indented code blocks are code in CommonMark but are not masked: real replies indent
    # calls (see the module docstring of toolrepair._salvage._mask).
    (f"\n    {CALL}\n", 1),
    (f"para\n    {CALL}\n", 1),
    ("    ```\n" + CALL, 1),  # indented four: not a fence
]

REASONING = [
    *[(f"{o}{CALL}{c}{CALL}", 1) for o, c in [
        ("<think>", "</think>"), ("<thinking>", "</thinking>"), ("<reasoning>", "</reasoning>"),
        ("\u25c1think\u25b7", "\u25c1/think\u25b7"), ("<|begin_of_thought|>", "<|end_of_thought|>"),
        ("<THINK>", "</Think>")]],
    *[(f"{o}{CALL}", 0) for o in ("<think>", "<thinking>", "<reasoning>", "\u25c1think\u25b7",
                                  "<|begin_of_thought|>")],  # unclosed: to the end
    *[(f"{CALL}{c}{CALL}", 1) for c in ("</think>", "</thinking>", "</reasoning>", "\u25c1/think\u25b7",
                                         "<|end_of_thought|>")],  # lone close: all before it
    (f'He wrote "<think>x</think>". {CALL} </think> {CALL}', 1),  # an earlier pair changes nothing
    (f"```\n</think>\n```\n{CALL}", 1),  # a close inside code is text
]


@pytest.mark.parametrize(("text", "n"), CONTAINERS + LINE_ENDINGS + WHITESPACE + HTML + SPANS + TABS_IN_QUOTES + INLINE_HTML + LINKS
                         + NESTED_QUOTE_LAZY + INDENTED
                         + REASONING)
def test_mask_table(text: str, n: int) -> None:
    assert calls(text) == n


HARMONY_CALL = "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>"


@pytest.mark.parametrize("sep", [" ", "\n", "\r\n", ""])
def test_harmony_analysis_with_a_space_or_newline_before_message(sep: str) -> None:
    text = f"<|channel|>analysis{sep}<|message|>{HARMONY_CALL}<|end|>"
    assert tr.salvage_text(text, ONE, dialects=["harmony"]).calls == ()
    assert len(tr.salvage_text(text + HARMONY_CALL, ONE, dialects=["harmony"]).calls) == 1


def mask_work(text: str) -> int:
    mask = CodeMask(1_000_000)
    assert mask.covers(text, 0, len(text) - 1, True) is not None
    return mask.work


@pytest.mark.parametrize("unit", ["```\r", "```\r\n", "~~~ x\r", "> - ```\r", "`` ` ", "- a\n  ", "<a b='` <!-- ",
                                  "<a b=\"x\"<!-", ">\t-\t` "])
def test_mask_work_is_linear(unit: str) -> None:
    # Characters looked at, for N and 2N (no clocks): linear code doubles, quadratic quadruples.
    small, big = mask_work(unit * 20_000 + "x"), mask_work(unit * 40_000 + "x")
    assert big <= 2.1 * small


def test_an_unfinished_fence_line_is_read_once() -> None:
    text = "~~~" + "x" * 200_000 + CALL
    assert mask_work(text) <= 2 * len(text)


@pytest.mark.parametrize(("s", "covered"), [(5, False), (7, True), (49, True), (50, False)])
def test_an_unpaired_run_after_open_html_is_decided_as_any_other(s: int, covered: bool) -> None:
    # `<!X` left open fails the paragraph closed from its first run on; that run never pairs,
    # so, as for any opener left alone, only what was decided more than `head` late is code.
    text = "x <!X ` \n" + "y\n" * 30 + "\nrest"  # the paragraph ends at 70, 20 being `head`
    assert CodeMask(20).covers(text, 0, s, True) is covered
