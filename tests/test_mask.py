"""The masks, class by class: where CommonMark says code, or a model says reasoning.

Each row is checked on the whole text and streamed one character at a time (the stream must
give the same calls and text). The differential suite against markdown-it-py is in
``tests/property/test_mask_oracle.py``.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_stream import stream

import toolrepair as tr
from toolrepair._salvage._base import NEED_MORE
from toolrepair._salvage._mask import CodeMask, first_trigger

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
    *[
        (f"```\n{CALL}\n```{ws}\n{CALL}\n", 0)
        for ws in ("\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\x1c", "\x85", "\u2028")
    ],
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
    (f">> > \t{CALL}\r`{CALL}\n2) `", 1),  # the readings part on the blocks: from the backtick, code
    (f"1.  \t```\n   `\n{CALL}`", 0),  # a fence in one reading, indented code then a span in the other
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
    # After a possible definition the blocks depend on whether it parses: a `2)` item (with a
    # fence in it) after one that does, a fence after one whose destination is the next line.
    (f"[a]: /u`v\r2) ```{CALL}", 0),
    (f"[a]: /u\n2) ```\n\n   {CALL}", 0),
    (f"[a]:\n<span>\n```\n\n\n{CALL}", 0),
    (f"[a]:\n2) x\n\n   ```\n\n{CALL}", 0),
    (f"[`{CALL}\r`", 0),  # a span across a possible definition's lines: from its start, code
    (f"[a]: /u\n\n{CALL}", 1),
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
    (f">>x\n    <details\n`\n    >\r{CALL}`", 0),  # the quotes ended: `    >` is no blank quote line
    (f"> > > x\n```x`\n    {CALL}\n(x`", 0),  # an HTML block of kind 7 ends nothing: one paragraph
]

INDENTED = [
    # Indented code blocks are code in CommonMark but are not masked: real replies indent
    # calls (see the module docstring of toolrepair._salvage._mask).
    (f"\n    {CALL}\n", 1),
    (f"para\n    {CALL}\n", 1),
    ("    ```\n" + CALL, 1),  # indented four: not a fence
]

REASONING = [
    *[
        (f"{o}{CALL}{c}{CALL}", 1)
        for o, c in [
            ("<think>", "</think>"),
            ("<thinking>", "</thinking>"),
            ("<reasoning>", "</reasoning>"),
            ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
            ("<|begin_of_thought|>", "<|end_of_thought|>"),
            ("<THINK>", "</Think>"),
        ]
    ],
    *[
        (f"{o}{CALL}", 0) for o in ("<think>", "<thinking>", "<reasoning>", "\u25c1think\u25b7", "<|begin_of_thought|>")
    ],  # unclosed: to the end
    *[
        (f"{CALL}{c}{CALL}", 1)
        for c in ("</think>", "</thinking>", "</reasoning>", "\u25c1/think\u25b7", "<|end_of_thought|>")
    ],  # lone close: all before it
    (f'He wrote "<think>x</think>". {CALL} </think> {CALL}', 1),  # an earlier pair changes nothing
    (f"```\n</think>\n```\n{CALL}", 1),  # a close inside code is text
]


HTML_CODE = [
    # <pre>, <code>, <script>, <style>, <textarea> and comments hide or show code: masked,
    # block and inline, any case, to their close tag (over lines and blocks).
    (f"<pre>\n{CALL}\n</pre>\n", 0),
    (f"<PRE class='x'>\n{CALL}\n</Pre>\n{CALL}", 1),
    (f"x <code>{CALL}</code> y", 0),
    (f"x <code>a</code> {CALL}", 1),
    (f"<script>\n{CALL}\n</script>", 0),
    (f"<Style>{CALL}</style>", 0),
    (f"<textarea>\n\n{CALL}\n\n</textarea>\n\n{CALL}", 1),
    (f"<!-- {CALL} -->", 0),
    (f"<!--\n{CALL}\n-->\n{CALL}", 1),
    (f"a <!-- b\n{CALL} -->", 0),  # an inline comment over two lines
    (f"<div>\n<pre>\n{CALL}\n</pre>\n</div>", 0),  # inside another HTML block
    (f"<pre>\n\n```\n{CALL}\n```\n\n</pre>{CALL}", 1),
    (f"<code>\n\n{CALL}", 0),  # left open: to the end
    (f"para <pre\n{CALL}", 0),  # a tag the line's end leaves open: fails closed
    (f"<pre><pre></pre>{CALL}</pre> {CALL}", 1),  # <pre> nests
    (f"<pre>\n```\n</pre>\n```\n{CALL}", 0),  # a close in a fence is text: still open
    (f"<!--\n-->{CALL}", 1),
    # Not HTML code: in a code span, in a fence, not a tag.
    (f"Use the `<pre>` tag. {CALL}", 1),
    (f"`<code>` {CALL} `x`", 1),
    (f"```\n<pre>\n```\n{CALL}", 1),
    (f"x <scripts> {CALL}", 1),
    (f"x <Pre <!-- y {CALL}", 0),  # `<Pre` is no tag; the comment, left open, fails closed
    (f"<pre>{CALL}</pre> {CALL}", 1),
    # A close tag in the lines of a comment the paragraph left open: hidden if the comment
    # closes later (or where a reading ends it), read if not. In doubt: it closes nothing.
    (f"x <code>a\nb <!-- c\nd </code> -->\n\n{CALL}", 0),
    (f"x <code>a\nb <!-- c\n</code> -->\n\n{CALL}", 0),
    (f"x <code>a\nb <!-- c\nd </code> e\n\n{CALL}", 0),
    (f"x <code>a <!-- c --> </code>\n\n{CALL}", 1),  # closed before it: the close is read
    (f"a <!-- b <!-- c\n-->\n\n{CALL}", 1),  # openers in an open comment: one comment
    # A tag inside another inline construct (a declaration, an attribute, a link's destination),
    # escaped, or left open by the line's end is hidden in markdown-it-py's reading and may not
    # be in a browser's: a close there closes nothing (found by fuzz/mask_differential.py).
    (f"<CODE><!X</Code>{CALL}", 0),
    (f"x<pre><!X</pre>{CALL}", 0),
    (f"<CODE><!X\n</Code>{CALL}", 0),  # a declaration over two lines
    (f"<code>[a](</code>) {CALL}", 0),
    (f"<code>\\</code> {CALL}", 0),
    (f"<pre><code>x</code></pre> {CALL}", 1),
    (f"x <!X </pre> y> {CALL}", 1),  # nothing open: nothing to close
    # Raw text (<script>, <style>, <textarea>) that may or may not open or close, or opens inside
    # <pre> or <code> (raw text to a browser, one more tag to markdown-it-py's one-element reading):
    # the readings part on every tag after it, so all from there is code.
    (f"n<!X<textarea><script></textarea>{CALL}", 0),
    (f"<textarea/\n<pre\n</textarea>{CALL}", 0),
    (f"`<style\r<!--</style>{CALL}", 0),
    (f".<style><!X\n</style>{CALL}", 0),
    (f"<code><script></Code><style></script></code>{CALL}", 0),
    (f'"<script>`</script><textarea>\n></script>{CALL}', 0),
    (f"<script>x</script> {CALL}", 1),
    # Where all after a point is code, a backtick run before it still waiting for its pair is
    # code from there (it may pair after the point).
    ('`\r\t.<tool_call>{"name": "f", "arguments": {"t": "<!--\n"}}</tool_call>`', 0),
    (f"1. `\n\t{CALL}<!--\n`", 0),
    # A comment opened inside <pre> or <code> in HTML: a browser's comment, hiding the tags in
    # it; no tag at all in markdown-it-py's one-element reading, where `</pre>` closes and
    # `<script>` opens. The readings part on every tag after it: all from there is code.
    (f"<pre><!--</pre><script>--></pre>{CALL}", 0),
    (f"<pre>\n<!--</pre><script>-->\n</pre>\n\n{CALL}", 0),
    (f"<code>\n<!--</code><script>--></code>\n\n{CALL}", 0),
    (f"<div>\n<pre><!--</pre><textarea>--></pre>\n</div>\n\n{CALL}", 0),
    (f"<!--<pre>-->\n\n{CALL}", 1),  # <pre> in a comment: nothing opens
    (f"<pre></pre><!--</pre><script>-->\n\n{CALL}", 1),  # after <pre> closed: a comment
    # An inline comment in doubt (a code span may hold its start; escaped; inside another
    # construct) may be no comment, and the tags in it count: they are read on, in doubt.
    (f"``x`<!--[a](<x`y>)<script>-->{CALL}", 0),
    (f'x <a title="<!--"> <script> --> {CALL}', 0),
    (f"x \\<!-- <script> --> {CALL}", 0),
    (f"x <!-- <script> --> {CALL}", 1),  # a comment in both readings hides its tags
    (f"x `<!-- <code> -->` {CALL}", 1),
    # A tag holding whitespace only the reference reads as such (its `\\s`: U+001C-U+001F, NBSP,
    # U+3000 ...) is a tag in markdown-it-py and text to the spec: in doubt (an opener opens,
    # a close closes nothing, a backtick in it may be hidden).
    (f"x <Pre \x1c> {CALL}", 0),
    (f'x <a \x1cb="`"> `y {CALL}`', 0),
    (f".<Pre \x1c\n\t   >{CALL}", 0),
    (f"x <code>a</code\xa0> {CALL}", 0),
    (f"<pre>\n</pre\u3000>\n{CALL}", 0),
    (f"x <code>a</code > {CALL}", 1),
    (f"x <a\xa0b> {CALL}", 1),  # no HTML code either way
    # A raw text's close tag left open by the line's end (`</script` then a line ending: the tag
    # may go on, as in markdown-it-py's HTML block, or not): in doubt, all from there is code.
    (f"<script></script\n><!--</script>{CALL}", 0),
    (f"<script>\n</script>\n\n{CALL}", 1),
]

LAZY_IN_ITEMS = [
    # A lazy line indented four after a list item (`   - a`): the spec goes on with the
    # paragraph, markdown-it-py may end the item and read indented code there. In doubt: the
    # paragraphs to the next blank line are code from their first pairing run.
    (f"   - a `\n    - b\n`{CALL}`", 0),
    (f"   - a `\n    ```\n`{CALL}`", 0),
    (f"-    - a `\n    # h\n`{CALL}`", 0),
    (f"   - a `\n    > q\n`{CALL}`", 0),
    (f"   - a `\n    x\n`{CALL}`", 1),  # no block start: one paragraph in both, the span ends first
    (f"   - a\n    - b\n\n{CALL}", 1),  # a blank line ends the doubt
]

DEEP = [
    # Past MAX_CONTAINERS nested containers nothing reads the content: code in doubt from there.
    (">" * 70 + f" ```\n{'>' * 70} {CALL}", 0),
    ("- " * 70 + f"```\n{'  ' * 70}{CALL}", 0),
    ("1. " * 70 + f"{CALL}", 1),  # no backtick, tilde or HTML code anywhere: nothing can be code
    (">" * 63 + f" {CALL}", 1),  # within the bound: read as any quote
    (">" * 70 + f" `x\n\n{CALL}", 0),  # what is deeper may go on anywhere: all after it
]


@pytest.mark.parametrize(("text", "n"), HTML_CODE + LAZY_IN_ITEMS + DEEP)
def test_html_code_lazy_items_and_depth(text: str, n: int) -> None:
    assert calls(text) == n


MISTRAL = '[TOOL_CALLS][{"name": "f", "arguments": {}}]'
# A comment an earlier line of a paragraph left open makes its next lines code, with or without
# a tag in them: a Mistral call holds no `<` (it was read as plain text there, and taken).
IN_AN_OPEN_COMMENT = [
    (f"a <!-- b\n{MISTRAL}\nc -->\n", 0),
    (f"a <!-- b\nmore\n{MISTRAL}\nc -->\n", 0),
    (f"- a <!-- b\n  {MISTRAL}\n  c -->\n", 0),  # in a list item
    (f"a <!-- b -->\n{MISTRAL}\n", 1),  # closed before it
    (f"a <!-- b\n\n{MISTRAL}\n", 1),  # the paragraph ended: the comment was text
]


@pytest.mark.parametrize(("text", "n"), IN_AN_OPEN_COMMENT)
def test_a_comment_left_open_masks_the_lines_after_it(text: str, n: int) -> None:
    whole = tr.salvage_text(text, ONE, dialects=["mistral"])
    s = tr.StreamSalvager(ONE, dialects=["mistral"], model="mistral")
    events = [e for ch in text for e in s.feed(ch)] + s.close()
    assert tuple(e.call for e in events if isinstance(e, tr.ToolCallReady)) == whole.calls
    assert len(whole.calls) == n


@pytest.mark.parametrize(
    ("text", "n"),
    CONTAINERS
    + LINE_ENDINGS
    + WHITESPACE
    + HTML
    + SPANS
    + TABS_IN_QUOTES
    + INLINE_HTML
    + LINKS
    + NESTED_QUOTE_LAZY
    + INDENTED
    + REASONING,
)
def test_mask_table(text: str, n: int) -> None:
    assert calls(text) == n


# A tab in the content of a fence, an HTML block or indented code is in no container's
# prefix: it puts nothing in doubt, whether the line is read alone (a marker inside it asks)
# or in a run of lines (``_plain``). Every dialect, so `[` (pythonic, Mistral) asks in the fence.
TAB_IN_LEAF_CONTENT = [
    (f"```\n-\t[x](y)\n```\n{CALL}", 1),
    (f"```\n1.\t[\n```\n{CALL}", 1),
    (f"```\n>\t[\n```\n{CALL}\n", 1),
    (f"~~~\r\n-\t[x](y)\r\n~~~\r\n{CALL}", 1),
    (f"<div>\n-\t[x](y)\n</div>\n\n{CALL}", 1),
    (f"    a\n\t-\t[x](y)\n\n{CALL}", 1),
    (f"> ```\n>\t-\t[x](y)\n> ```\n{CALL}", 0),  # the quote's tab is a container's: in doubt
    (f"> ```\n>\t-\t[x](y)\n> ```\n\n{CALL}", 1),  # ... to the next blank line
    (f"-\t[x](y) `\n{CALL}`", 0),  # a marker's tab, no fence: the paragraph in doubt
]

SIDES = st.sampled_from(["-", "1.", ">", "2)", "*", "\t", " ", "  ", "    "])
BODIES = st.sampled_from(["[x](y)", "[", "```", "~~~", "`", "x", "", CALL, "[f()]"])


@pytest.mark.parametrize(("text", "n"), TAB_IN_LEAF_CONTENT)
def test_a_tab_in_leaf_content_is_no_container_prefix(text: str, n: int) -> None:
    whole = tr.salvage_text(text, ONE).calls
    assert len(whole) == n
    assert stream(text, ONE, range(1, len(text)))[1] == whole


@given(
    st.lists(st.tuples(st.lists(SIDES, max_size=3), st.lists(BODIES, min_size=1, max_size=2)), min_size=1, max_size=5),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.lists(st.integers(0, 400), max_size=6),
)
def test_tab_and_space_container_prefixes_stream_as_whole(
    lines: list[tuple[list[str], list[str]]], ending: str, cuts: list[int]
) -> None:
    text = ending.join("".join(side) + " ".join(body) for side, body in lines) + ending + CALL
    whole = tr.salvage_text(text, ONE)
    assert stream(text, ONE, sorted({c % (len(text) + 1) for c in cuts})) == (whole.content, whole.calls)


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


@pytest.mark.parametrize(
    "unit",
    [
        "```\r",
        "```\r\n",
        "~~~ x\r",
        "> - ```\r",
        "`` ` ",
        "- a\n  ",
        "<a b='` <!-- ",  # a comment left open, then more openers: each scanned once
        "` <!-- ",
        "x <code a='",
        '<a b="x"<!-',
        ">\t-\t` ",
        "\\<!-- <!-- x --> ",  # comments in doubt, whose tags are read on: each scanned once
        "` <!-- <!-- </code> --> ",
        '<a \x1cb="<!--"> x ',
    ],
)
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


def masked(text: str, head: int = 1_000_000) -> list[tuple[int, int]]:
    """The offsets ``CodeMask`` covers, asked one by one in order, as maximal ranges."""
    mask = CodeMask(head)
    out: list[tuple[int, int]] = []
    for s in range(len(text)):
        if mask.covers(text, 0, s, True) is True:
            out[-1:] = [(out[-1][0], s + 1)] if out and out[-1][1] == s else [*out[-1:], (s, s + 1)]
    return out


# (text, head, masked ranges). An offset is covered when code began before it (so a span's
# opening backtick, when it is the text's first, is not: no marker starts with one there).
# Each was read by hand against CommonMark and, for code spans, markdown-it-py.
RANGES = [
    ("-\t\tx `a` b", 1_000_000, [(6, 10)]),  # tab after a marker, five columns: indented code, in doubt
    (" " * 40 + "`a` x", 1_000_000, []),  # indentation past what is counted: indented code
    ("para\n" + " " * 40 + "`a` x", 1_000_000, [(46, 48)]),  # ... or a paragraph's continuation
    ("> a\n" + "\t" * 10 + "> `b` c", 1_000_000, [(17, 21)]),  # a quote goes on after any indentation
    ("> a\n" + " " * 40 + "> `b` c", 1_000_000, [(47, 49)]),
    ("- a\n" + " " * 40 + "\n  `b` c", 1_000_000, [(48, 50)]),  # a long blank line keeps the item
    ("`" + "x" * 30, 10, [(1, 31)]),  # a line longer than `head`: code from its start
    # The run's pairing is known only past the long line, more than `head` past `a`: `a` is
    # code too (a stream holding `head` could not tell either; whole text and stream agree).
    ("`a\n" + "b" * 30, 10, [(1, 33)]),
    ("a\n  \n`b` c\n", 1_000_000, [(6, 8)]),  # plain lines, a blank one, then a span
    ("```\nline `x`\nline\n```\nafter `y`", 1_000_000, [(1, 3), (4, 12), (13, 17), (18, 21), (28, 31)]),
    (
        ">\tx\n```\n```\nplain\n`a` b\n\n`c` d",
        1_000_000,
        [(5, 7), (8, 11), (12, 17), (18, 28)],
    ),  # in doubt: to the blank line
    ("[a]: /u\n2) ```\n\n   x `y`", 1_000_000, [(12, 24)]),  # a line after a possible definition: all code
    ("[a]: /u\n[b]\n\nc `d` e", 1_000_000, [(16, 20)]),
    ("[a]: /u\n\nc `d` e", 1_000_000, [(12, 14)]),  # a blank line first: the readings agree again
    ("-\n\n  `x`", 1_000_000, [(6, 8)]),  # an item may begin with one blank line, not two
    ("-\n  `x` y", 1_000_000, [(5, 7)]),  # an item begun with a blank line
    (">\tx\n```\n```\n    a\n    b\n", 1_000_000, [(5, 7), (8, 11), (12, 17), (18, 23)]),  # indented code, in doubt
    (">" * 70 + " `a` b", 1_000_000, [(72, 76)]),  # past MAX_CONTAINERS: code in doubt from there
    ("1x `a` b", 1_000_000, [(4, 6)]),  # a digit, no ordered marker
    ("para\n*\n`a` b", 1_000_000, [(8, 10)]),  # an empty item cannot interrupt a paragraph
    ("para\n===\n`a` b", 1_000_000, [(10, 12)]),  # a setext underline
    ("`a\n***\nb`", 1_000_000, []),  # a thematic break ends the paragraph: no span
    ("<!-- a -->\n`a` b", 1_000_000, [(1, 10), (11, 14)]),  # a comment (code), an HTML block ended on its first line
    ("- x\n>\t`a` b\n```\n", 1_000_000, [(7, 16)]),  # in doubt, to the fence that ends the paragraph
    ("[a](x`y) <!-- ` --> ` b `", 1_000_000, [(6, 25)]),  # a link before raw HTML: from the link
    ("`a\n" + "b\n" * 30 + "\nc", 20, [(1, 44)]),  # an opener decided past `head`: code to `head` before
    ("-\t\t```\n  `a`\n", 1_000_000, [(4, 6), (7, 12)]),  # tabs after a marker, then a fence: take it
    (">\tx\n```\n```\n    a\n\n    b\n", 1_000_000, [(5, 7), (8, 11), (12, 17), (19, 24)]),  # a blank line in it
]


@pytest.mark.parametrize(("text", "head", "ranges"), RANGES)
def test_masked_ranges(text: str, head: int, ranges: list[tuple[int, int]]) -> None:
    assert masked(text, head) == ranges


@pytest.mark.parametrize(
    "text", [t for t, _, _ in RANGES] + ["x `y`\n```\na\r\nb\rc\n```\nz `w`\n\n  \np `q` r", "a\nb\n\nc `d\n`e` f"]
)
def test_answers_do_not_depend_on_how_far_the_mask_has_read(text: str) -> None:
    # Runs of plain lines (and fence bodies) are read in one match once a query lies past them;
    # every later answer is the one that reading line by line gives.
    one = CodeMask(1_000_000)
    each = [one.covers(text, 0, s, True) for s in range(len(text))]
    for k in range(len(text)):
        jump = CodeMask(1_000_000)
        assert [jump.covers(text, 0, s, True) for s in range(k, len(text))] == each[k:], k


def test_a_stream_undecided_within_head_fails_closed() -> None:
    text = "`a\n" + "b" * 9  # the opener's pairing waits on an unfinished line
    assert CodeMask(20).covers(text, 0, 1, False) is NEED_MORE
    assert CodeMask(10).covers(text, 0, 1, False) is True  # `head` past it: code


def test_a_stream_past_a_long_line_reads_no_more() -> None:
    mask = CodeMask(10)
    mask.feed("")
    mask.feed("`" + "x" * 20)
    mask.catch_up(0)
    mask.feed("\n`a` b\n")
    mask.catch_up(25)
    assert mask.covers("", 0, 25, True) is True


def test_an_accepted_calls_lines_are_markdown_and_the_code_they_open_is_told_apart() -> None:
    text = "a <c>\n```\n</c>\nb `x` y\n"
    mask = CodeMask(1_000_000)
    assert mask.covers(text, 0, 2, True) is False
    mask.cut(2, 15)  # the call's own fence opener opens a fence, as CommonMark reads it
    assert mask.covers(text, 0, text.index("y"), True) is True
    assert mask.in_call_code()
    # The same text with no call there: code as well, but not opened inside a call.
    plain = CodeMask(1_000_000)
    assert plain.covers(text, 0, text.index("y"), True) is True
    assert not plain.in_call_code()


def test_a_call_after_a_heading_leaves_no_paragraph_open() -> None:
    text = "# h <c>\nx `\n</c>\nb `x` y\n"
    mask = CodeMask(1_000_000)
    assert mask.covers(text, 0, 4, True) is False
    mask.cut(4, 16)  # the call's backtick (10) pairs with the next run (19): a span [10, 20)
    got = [(mask.covers(text, 0, s, True), mask.in_call_code()) for s in range(16, 21)]
    assert got == [(True, True)] * 4 + [(False, True)]  # `in_call_code` tells of the last True


@pytest.mark.parametrize(
    ("text", "start", "expected"),
    [
        ("", 0, 0),
        ("plain", 0, 5),
        ("a`b~c", 0, 1),
        ("a~b`c", 0, 1),
        ("a`b~c", 2, 3),
        ("~~~", 1, 1),
        ("``", 5, 2),  # past the end: nothing there
        ("x" * 50 + "~" + "`", 0, 50),
    ],
)
def test_first_trigger_table(text: str, start: int, expected: int) -> None:
    assert first_trigger(text, start) == expected


@given(st.text(alphabet="ab`~\n ", max_size=40), st.integers(min_value=0, max_value=45))
def test_first_trigger_is_the_first_backtick_or_tilde(text: str, start: int) -> None:
    # Oracle: the regex search the function replaced.
    m = re.compile(r"[`~]").search(text, start)
    assert first_trigger(text, start) == (len(text) if m is None else m.start())


# A backtick run after a call, left unpaired only at the reply's end, more than `head` past
# later markers: the whole text and a stream in one piece or many agree (found by the deep
# property sweep: the whole text read the last line past `head` and took a call the one-piece
# stream refused).
_HEAD_EDGE = (
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>```\n'
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call><tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call><tool_call>\n'
    '{"name": "rm", "arguments": {}}</tool_call><tool_call>{"name": "get_weather", "arguments": '
    '"{\\"a\\": 1}"} </tool_call>{x}'
)


@pytest.mark.parametrize("piece", [len(_HEAD_EDGE), 1, 7, 16, 100])
def test_a_pairing_decided_past_head_is_read_alike_whole_and_streamed(piece: int) -> None:
    whole = tr.salvage_text(_HEAD_EDGE, tr.ANY_TOOL, max_call_chars=120)
    assert [(c.name, c.span) for c in whole.calls] == [("get_weather", (0, 78)), ("get_weather", (294, 368))]
    _, calls = stream(_HEAD_EDGE, tr.ANY_TOOL, range(piece, len(_HEAD_EDGE), piece), max_call_chars=120)
    assert calls == whole.calls
