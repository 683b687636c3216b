"""The code mask against a CommonMark implementation nobody here wrote (markdown-it-py).

Shared by ``test_mask_oracle.py`` (a bounded sample, through the test profile) and
``fuzz/mask_differential.py`` (a long run). A text is generated line by line from pieces that
make CommonMark's constructs (containers, fences, HTML blocks, code spans, indented code,
headings, links and reference definitions, every line ending, Unicode whitespace), with Hermes
calls planted among them: plain ones, and ones whose string argument holds Markdown from the same
pieces, its line endings escaped (one line) or raw (the argument's lines are the text's lines,
so a fence, a code span or ``<pre>`` it opens may cover what follows, as CommonMark reads it).

The referee's answer per planted marker: markdown-it-py's block tokens carry ``map`` line
ranges (line numbers count LF, CR and CRLF, as it normalises them), so a marker's line tells
whether it lies in a ``fence``, ``code_block`` or ``html_block``. Code spans carry no
positions; but inline parsing keeps text order, and the marker holds no backtick, space or
line ending, so it is never split or changed: counting the marker in an inline token's
children, in order (``code_inline`` contents apart from the rest), gives each marker of that
paragraph or heading a flag, matched in order with the markers found in its lines. Where the
counts differ the marker is left unjudged (counted as such).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import toolrepair as tr

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
MARKER = "<tool_call>"

CONTAINERS = ["> ", ">", "- ", "* ", "+ ", "1. ", "2) ", "1.", "  ", "   ", "    ", "\t", " > ", "-   "]
UNICODE_WS = ["\u00a0", "\u2003", "\u3000", "\x0b", "\x0c", "\x1c", "\x85", "\u2028"]
PIECES = [
    "```",
    "````",
    "~~~",
    "~~~~",
    "``` js",
    "```x`",
    "`",
    "``",
    "`code`",
    "``a`b``",
    "\\`",
    "\\\\`",
    "<div>",
    "</div>",
    "<details>",
    "</details>",
    "<pre>",
    "</pre>",
    "<!--",
    "-->",
    "<?x",
    "?>",
    "<!X",
    "<![CDATA[",
    "]]>",
    "<span>",
    '<a href="x">',
    "<script>",
    "</script>",
    "<think >",
    "<code>",
    "</code>",
    "<CODE class=x>",
    "</Code >",
    "<style>",
    "</style>",
    "<textarea>",
    "</textarea>",
    "<Pre",
    "<!-- ` -->",
    "# h",
    "## ",
    "---",
    "***",
    "===",
    "- - -",
    "text",
    "para",
    "x",
    "",
    " ",
    "\t",
    "   ",
    "[a](x`y)",
    "[a](<x`y>)",
    '[a](x "t`")',
    "[a](x)",
    "[a]",
    "[a]: /u`v",
    "[a]:",
    "](",
    "(x`",
    '"t`")',
    "![i](`)",
    *UNICODE_WS,
]
ENDINGS = ["\n", "\r", "\r\n"]
# HTML code where readings part (a browser's, markdown-it-py's, the spec's): comments inside
# <pre> and inside other tags, tags holding whitespace only the reference reads as such, close
# tags the line's end leaves open, a link's destination beside them.
HTML_PIECES = [
    *(p for p in PIECES if "<" in p or "`" in p),
    "<pre\x1c>",
    "</pre\xa0>",
    "<code\u3000>",
    "</code\x1f>",
    '<a title="<!--">',
    '<a \x1cb="`">',
    "\\<!--",
    "</script",
    "</style",
    "</pre",
    ">",
    "x",
    "",
    *UNICODE_WS,
]


def markdown_call(
    pick: Callable[[Sequence[Any]], Any], count: Callable[[int, int], int], prefix: str, pieces: Sequence[str] = PIECES
) -> str:
    """A call whose string argument holds Markdown: lines of pieces, each JSON-escaped, joined
    by an escaped line ending (``\\n``: one line of text) or a raw one (invalid JSON the
    salvage repairs; CommonMark sees the argument's lines), a raw one maybe followed by the
    line's container prefix, as a model writing inside a quote or a list does."""
    raw = count(0, 1) == 1
    parts = []
    for _ in range(count(1, 4)):
        line = " ".join(pick(pieces) for _ in range(count(1, 3)))
        parts.append(json.dumps(line, ensure_ascii=False)[1:-1])
    ending = pick(ENDINGS)
    joiner = ending + pick(["", prefix]) if raw else json.dumps(ending)[1:-1]
    return '<tool_call>{"name": "f", "arguments": {"text": "' + joiner.join(parts) + '"}}</tool_call>'


def markdown(
    pick: Callable[[Sequence[Any]], Any], count: Callable[[int, int], int], pieces: Sequence[str] = PIECES
) -> str:
    """A generated text: ``pick`` chooses one of a sequence, ``count`` an int in a range; the
    lines are made of ``pieces`` (and containers and calls)."""
    lines = []
    for _ in range(count(1, 9)):
        prefix = "".join(pick(CONTAINERS) for _ in range(count(0, 3)))
        body = []
        for _ in range(count(1, 3)):
            planted = count(0, 6)
            if planted <= 1:
                body.append(CALL)
            elif planted == 2:
                body.append(markdown_call(pick, count, prefix, pieces))
            else:
                body.append(pick(pieces))
        joiner = pick([" ", "", " "])
        lines.append(prefix + joiner.join(body))
    ending = pick(ENDINGS) if count(0, 1) else None
    out = []
    for line in lines:
        out.append(line)
        out.append(ending or pick(ENDINGS))
    if count(0, 2) == 0:
        out.pop()  # no line ending at the end
    return "".join(out)


_LINE = re.compile(r"\r\n?|\n")


@dataclass
class Verdicts:
    """Per planted marker offset: the referee's kind of region, or None when unjudged."""

    kinds: dict[int, str | None]


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


class RefereeError(Exception):
    """markdown-it-py raised on a text (its own bug): no verdict."""


def referee(text: str) -> Verdicts:
    try:
        tokens = _parser().parse(text)
    except Exception as exc:  # the referee's bug, not ours
        raise RefereeError(repr(exc)) from exc
    starts = [0] + [m.end() for m in _LINE.finditer(text)]
    markers = [m.start() for m in re.finditer(re.escape(MARKER), text)]

    def line_of(pos: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo

    kinds: dict[int, str | None] = dict.fromkeys(markers)
    element = _Element()
    for token in tokens:
        if token.map is None:
            continue
        first, last = token.map
        inside = [m for m in markers if first <= line_of(m) < last]
        if token.type in ("fence", "code_block"):
            for m in inside:
                kinds[m] = token.type
        elif token.type == "html_block":
            got = element.read(token.content, "html_block")
            if len(got) == len(inside):
                kinds.update(zip(inside, got, strict=True))
        elif token.type == "inline":
            found: list[str] = []
            plain: list[str] = []
            # Raw inline HTML (`<!X … >` may run through a marker) binds as tightly as code
            # spans, and the mask does not read it: text beside it is left unjudged.
            html = any(child.type == "html_inline" for child in token.children or ())
            text = "html_inline" if html else "text"

            def flush(kind: str) -> None:
                found.extend([kind] * "".join(plain).count(MARKER))
                plain.clear()

            for child in token.children or ():
                if child.type == "code_inline":
                    flush("html_code" if element.open else text)
                    found.extend(["code_inline"] * child.content.count(MARKER))
                elif child.type == "html_inline":
                    flush("html_code" if element.open else text)
                    found.extend(element.inline(child.content))
                else:
                    plain.append(child.content if child.type != "softbreak" else "\n")
            flush("html_code" if element.open else text)
            if len(found) == len(inside):
                kinds.update(zip(inside, found, strict=True))
    return Verdicts(kinds)


_RAW = re.compile(
    r"<(pre|code|script|style|textarea)(?=[\s/>]|\Z)|(<!--)|</(pre|code|script|style|textarea)\s*>|(-->)|"
    + re.escape(MARKER),
    re.I,
)


class _Element:
    """The HTML element whose content is code (``<pre>``, ``<code>``, ``<script>``, ``<style>``,
    ``<textarea>``, a comment) open at a point of the document, read from raw HTML alone (HTML
    blocks and inline HTML, in document order), as a browser reads the rendered page."""

    def __init__(self) -> None:
        self.open: str | None = None

    def inline(self, raw: str) -> list[str]:
        """One inline HTML construct (a tag, a comment, a declaration...): only its own start
        opens or closes; a marker in it is code inside an element or a comment, and unjudged
        in any other construct (inside a tag's attributes, a declaration)."""
        n = raw.count(MARKER)
        head = _RAW.match(raw)
        if self.open is not None:
            if head is not None and (head.group(3) or "").lower() == self.open:
                self.open = None
            return ["html_code"] * n
        if raw.startswith("<!--"):
            return ["html_code"] * n  # a whole comment
        if head is not None and head.group(1):
            self.open = head.group(1).lower()
        return ["html_inline"] * n

    def read(self, raw: str, outside: str) -> list[str]:
        """The kinds of the markers in ``raw``, in order; tags in it open and close elements."""
        kinds = []
        for m in _RAW.finditer(raw):
            opener, comment, closer, comment_end = m.group(1), m.group(2), m.group(3), m.group(4)
            if self.open is None:
                if opener or comment:
                    self.open = (opener or "--").lower()
                elif not (closer or comment_end):
                    kinds.append(outside)
            elif (closer or "").lower() == self.open or (comment_end and self.open == "--"):
                self.open = None
            elif not (opener or comment or closer or comment_end):
                kinds.append("html_code")
        return kinds


# Regions the mask must cover. Indented code is not masked (see toolrepair._salvage._mask)
# and HTML blocks are not code.
MASKED = ("fence", "code_inline", "html_code")


_INDENTED_LINE = re.compile(r"(?:^|[\r\n])[ \t]{4,}[^ \t\r\n]")


def fail_closed_class(text: str) -> str | None:
    """The first of the mask's fail-closed rules that may apply to ``text`` (where a call lost
    from plain text is by design; see ``toolrepair._salvage._mask``), or None: a tab (container
    indentation), raw HTML, a link or reference definition, a lazy line indented four in
    quotes, Markdown in an earlier call's argument."""
    plain = text.replace(CALL, "")
    bare = plain.replace(MARKER, "").replace("</tool_call>", "")
    if "\t" in text:
        return "tab"
    if "<" in bare:
        return "html"
    if "[" in text or "](" in text:
        return "link"
    if ">" in text and _INDENTED_LINE.search(text) is not None:
        return "lazy-indented"
    if MARKER in plain:
        return "markdown-call"
    return None


@dataclass
class Disagreement:
    text: str
    marker: int
    kind: str | None
    salvaged: bool


def check(text: str, chunks: Sequence[int] = ()) -> list[Disagreement]:
    """Disagreements between salvage and the referee; also asserts stream == whole."""
    return judge(text, chunks)[1]


def judge(text: str, chunks: Sequence[int] = ()) -> tuple[int, list[Disagreement]]:
    """The calls salvage takes from ``text``, and its disagreements with the referee (see
    ``check``)."""
    result = tr.salvage_text(text, ["f"], dialects=["hermes"])
    taken = {c.span[0] for c in result.calls if c.span is not None}
    if chunks:
        s = tr.StreamSalvager(["f"], dialects=["hermes"])
        events: list[Any] = []
        at = 0
        for size in chunks:
            events += s.feed(text[at : at + size])
            at += size
        events += s.feed(text[at:])
        events += s.close()
        calls = tuple(e.call for e in events if isinstance(e, tr.ToolCallReady))
        content = "".join(e.text for e in events if isinstance(e, tr.TextDelta))
        assert (calls, content) == (result.calls, result.content), text
    verdicts = referee(text)
    out = []
    for m, kind in verdicts.kinds.items():
        salvaged = m in taken
        if salvaged and kind in MASKED:
            out.append(Disagreement(text, m, kind, salvaged))  # a call from code
        elif kind == "text" and not salvaged and text.startswith(CALL, m):
            out.append(Disagreement(text, m, kind, salvaged))  # a call in plain text, lost
    return len(result.calls), out
