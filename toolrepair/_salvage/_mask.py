"""Masks: where a call is never a call. Markdown code, as CommonMark defines it, and reasoning.

``CodeMask`` reads a reply's block structure line by line, as CommonMark's parsing strategy
does, and answers one question: does offset ``s`` lie in masked code? Masked are

* a fenced code block: a line whose content (after its containers) starts, indented at most
  three spaces, with three or more backticks or tildes (a backtick fence's info string holds
  no backtick). It runs to a line of the same character, at least as long, indented at most
  three spaces and followed by spaces and tabs only (not NBSP, U+3000, VT, FF ...), or to the
  end of its container, or of the text;
* a code span: a backtick run and the next run of the same length in the same paragraph or
  heading (a backslash escapes an opening backtick, not a closing one).

Indented code blocks (four columns or more, tabs stopping every four, not a lazy paragraph
line) are read, so a fence line in one is no fence, but not masked: real replies indent
calls after a blank line (DeepSeek-V3.2's DSML in the conformance corpus), and masking them
lost those outputs. Containers are block quotes (``>``) and list items (``-``, ``+``, ``*``,
``1.``, ``1)``), nested, with CommonMark's continuation rules (a list item's content indent,
at most one leading blank line, lazy paragraph continuation; an ordered item interrupting a
paragraph at its own level starts with 1 and is not empty). Thematic breaks, ATX and setext
headings end paragraphs. HTML blocks (CommonMark's seven start conditions) are not code, but
the lines in them are HTML: a fence line inside ``<details>`` or a comment is no fence. Lines
end at LF, CR or CRLF. A marker inside an HTML block is not masked: `<think>` on a line of
its own starts one, and a reply's usual `<think>…</think>` then `<tool_call>` is one block.
An accepted call's own lines are Markdown like any others, as CommonMark reads the whole
text: a fence line in a JSON string with a raw newline, ``~~~`` in an XML parameter or a
backtick in a string opens code that covers what follows (a fence closed inside the
argument covers nothing after it). Each code region keeps the offsets of what opened it
(its *origins*), so ``in_call_code`` tells code an accepted call's text opened (the pass
refuses a later call there as ``in-code``) from code that was there anyway (text, silently).

Where the reference implementation (markdown-it-py) departs from the spec, the mask takes
its reading when that masks more: a quote continues after any indentation before ``>``; tabs
after a list marker inside quotes may leave a fence. Where a reading is uncertain the mask
fails closed (masking text that may be plain, never running a call that may be code):

* a tab in a line's container indentation, where the spec's tab stops and the reference's
  part, puts the text up to the next blank line in doubt: each paragraph there is code from
  its first pairing backtick run to its end, indented code there is masked, and everything
  from the first backtick on is code (the readings may part on the blocks too: a fence in
  one, indented code and a paragraph in the other). So does a lazy line indented four
  columns or more inside nested quotes that starts a block (markdown-it-py ends the quotes
  there; the spec continues the paragraph);
* raw inline HTML or an autolink holding a backtick, or left open by a line's end, makes
  its paragraph code from the first pairing run after it (one without a backtick changes no
  pairing); so does a link's destination and title (from its ``](``), and a paragraph that
  may open with a link reference definition, which hide backticks too;
* a line after a paragraph line that may be a link reference definition makes everything
  from that paragraph on code: whether the definition parses (its destination and title may go on
  over lines) decides the blocks after it (a ``2)`` item, a fence, an HTML block) for good.

Bounds, so that ``salvage_text`` and a stream agree and a stream holds no more than
``head`` (``max_call_chars``) past a marker: a line longer than ``head`` makes everything
from there code (fail closed); a code span whose pairing is decided more than ``head``
characters past ``s`` covers ``s``; more than ``MAX_CONTAINERS`` nested containers are read
as text. Work: each line is classified once in O(its length) (regex scans in C, Python loops
only over at most ``_CAP`` columns of indentation per container), each backtick run costs
O(1), and a query O(1) amortised: O((1 + containers)·n) over a text of length n. Runs of
plain paragraph lines, blank lines and fence bodies outside any container are read in one
regex match each (``_plain``), as they would be line by line; where nothing of the open
paragraph waits, the run also takes bullet items' first lines, ATX headings, whole fences at
column 0, code spans closed in their line, one-word tags and link tails, and goes on inside one
list item of width 2 (``_WIDE``); a line that opens at most a
bullet item and then a paragraph or heading, continuing no container, skips the container
and block walk (``_lead``), one match deciding that. Text with no backtick or tilde
before ``s`` holds no code there: that costs one regex search, once, and no line is read.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._lazy import lazy
from ._base import NEED_MORE, NeedMore

if TYPE_CHECKING:
    import regex  # imported when the first line that may hold inline HTML or a link is read

__all__ = [
    "ANSWER_OPEN",
    "CHANNEL_CLOSE",
    "CHANNEL_MARKUP",
    "CHANNEL_OPEN",
    "DEFAULT_REASONING",
    "MAX_CONTAINERS",
    "MAX_TAG_TAIL",
    "TAG_SPACES",
    "CodeMask",
    "first_trigger",
    "markup_role",
    "tag_name",
]

# (open, close) reasoning pairs every scan knows; dialects add their own. Each one has the
# same rules: text up to its close is masked, unclosed it masks to the end, and a close with
# nothing open masks everything before it.
DEFAULT_REASONING: tuple[tuple[str | None, str], ...] = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),  # Kimi: ◁think▷ … ◁/think▷
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("[think]", "[/think]"),  # Mistral's reasoning models (Magistral, Ministral-Reasoning)
    ("<seed:think>", "</seed:think>"),  # Seed-OSS
    ("<|channel>thought", "<channel|>"),  # Gemma 4's thought channel (its name is no reasoning)
)

# A tag-like pair (`<think>` … `</think>`) is also spelled with attributes or whitespace before
# its `>`: `<think type="plan">`, `<think\n>`, `</think >`. These are the characters that may
# follow the tag's name; the scan tables `<think` plus each, and the pass reads on to the `>`.
TAG_SPACES = (" ", "\t", "\n", "\r")
# At most this many characters between a spelled tag's name and its `>`.
MAX_TAG_TAIL = 256

# Chat-channel markup real replies carry around their content: taken out of the content (never
# a call, nothing inside). Harmony's message headers of the final and preamble channels and its
# terminators; Kimi K3's response and message blocks; Gemma 4's turn end.
CHANNEL_MARKUP: tuple[str, ...] = (
    "<|start|>assistant<|channel|>final<|message|>",
    "<|start|>assistant<|channel|>final <|message|>",
    "<|channel|>final<|message|>",
    "<|channel|>final <|message|>",
    "<|start|>assistant<|channel|>commentary<|message|>",
    "<|channel|>commentary<|message|>",
    "<|end|>",
    "<|return|>",
    "<|open|>response<|sep|>",
    "<|close|>response<|sep|>",
    "<|close|>message<|sep|>",
    "<turn|>",
)


# A content-only channel's header opens text that is never a source of calls (harmony's final
# answer and preamble: a call-shaped JSON object there is the answer's text); a message's end
# closes it. Calls come only from a header with a recipient (`commentary to=functions.x`).
CHANNEL_OPEN = "channel-open"
CHANNEL_CLOSE = "channel-close"
# Markup that opens the answer without making it content-only (Kimi K3's response block: its
# tool section follows it). Like a content channel's header, a reply whose template opened
# reasoning but that begins with one has skipped the reasoning (see `SalvagePass.advance`).
ANSWER_OPEN = "answer-open"


def markup_role(marker: str) -> str:
    """``CHANNEL_OPEN`` for a content channel's header, ``CHANNEL_CLOSE`` for a message end,
    ``ANSWER_OPEN`` for an answer block's opener, else ``""``."""
    if marker.endswith("<|message|>") and ("final" in marker or "commentary" in marker):
        return CHANNEL_OPEN
    if marker in ("<|end|>", "<|return|>"):
        return CHANNEL_CLOSE
    if marker == "<|open|>response<|sep|>":
        return ANSWER_OPEN
    return ""


def tag_name(marker: str) -> str | None:
    """``think`` of ``<think>`` (and of ``</think>`` with ``closing``): the name of a tag-like
    reasoning marker, which is also spelled with attributes or spaces; None for other markers."""
    m = re.fullmatch(r"</?([a-z][a-z0-9:_-]*)>", marker)
    return None if m is None else m.group(1)


MAX_CONTAINERS = 64
_BIG = 1 << 62

_EOL = re.compile(r"[\r\n]")
# HTML whose content is code: the elements that show or hide code, and comments. An opener
# starts a stretch of code that runs to its close tag (``_HTML_CODE_CLOSE``), across blocks.
# The trigger: every opener a line holds is one in the whole text (a line ending is whitespace).
_HTML_CODE_OPEN = re.compile(r"<(?:(?i:pre|code|script|style|textarea)(?=[\s/>])|!--)")
# A raw text's close tag the line's end leaves open (``</script`` then a line ending: the tag
# may go on) is matched too, and in doubt.
_HTML_CODE_CLOSE: Callable[[], dict[str | None, re.Pattern[str]]] = lazy(
    lambda: {
        **{name: re.compile(f"</(?i:{name})\\s*(?:>|$)") for name in ("script", "style", "textarea")},
        None: re.compile("-->"),
    }
)
_COMMENT_END = lazy(lambda: _HTML_CODE_CLOSE()[None])
# Outside raw text: an opener (group 1: its name, None for a comment) or a close tag of an
# element that nests (group 2).
_HTML_TAGS = lazy(
    lambda: re.compile(r"<(?:(?i:(pre|code|script|style|textarea))(?=[\s/>]|$)|!--)|</(?i:(pre|code))\s*>")
)
_NESTING = {"pre": 0, "code": 1}
_TAG_TAIL = len("<textarea")  # what a delta must keep for an opener cut by its end
_LINE_END = re.compile(r"\r\n?|\n")
_NONWS = re.compile(r"[^ \t]")
_BACKTICKS = lazy(lambda: re.compile(r"`+"))
_ORDERED = lazy(lambda: re.compile(r"[0-9]{1,9}[.)]"))
_SETEXT = lazy(lambda: re.compile(r"(?:=+|-+)[ \t]*"))
_BREAK = lazy(lambda: {c: re.compile(r"(?:" + re.escape(c) + r"[ \t]*){3,}") for c in "*-_"})
_ATX = lazy(lambda: re.compile(r"#{1,6}(?=[ \t]|$)"))
# A line's container prefix: a tab in it is where tab readings part (see ``_classify``).
_PREFIX = re.compile(r"[ \t>\-+*.)0-9]*")
_CAP = 32  # columns of indentation ever needed: list item widths stay below this

# Whitespace in a tag as the reference implementation reads it: Python's `re` ``\s``
# (``str.isspace``), which the `regex` module's ``\s`` is not (it leaves out U+001C-U+001F).
# The spec's is spaces, tabs and line endings only: a tag holding other whitespace (``_ODD_SPACE``)
# is a tag in one reading and text in the other, so in doubt.
_S = r"[\s\x1c-\x1f]"
_ODD_SPACE = lazy(lambda: re.compile(r"[^\S \t\r\n]"))
# HTML block start conditions, as the reference implementation spells them (kind, start, end
# or None for "a blank line"); kind 7 cannot interrupt a paragraph.
_ATTR = rf"""(?>{_S}+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:{_S}*={_S}*(?:[^"'=<>`\x00-\x20]+|'[^']*'|"[^"]*"))?)"""
_BLOCK_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
    "dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|"
    "head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|"
    "p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_HTML: Callable[[], tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...]] = lazy(
    lambda: (
        (
            re.compile(r"<(?a:script|pre|style|textarea)(?=\s|>|$)", re.I),
            re.compile(r"</(?a:script|pre|style|textarea)>", re.I),
        ),
        (re.compile(r"<!--"), re.compile(r"-->")),
        (re.compile(r"<\?"), re.compile(r"\?>")),
        (re.compile(r"<![A-Za-z]"), re.compile(r">")),
        (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
        (re.compile(r"</?(?a:" + _BLOCK_NAMES + r")(?=\s|/?>|$)", re.I), None),
        (re.compile(r"(?:<[A-Za-z][A-Za-z0-9\-]*" + _ATTR + r"*+\s*+/?>|</[A-Za-z][A-Za-z0-9\-]*\s*>)\s*$"), None),
    )
)

# Raw inline HTML and autolinks (CommonMark 0.31): where one may start, and the whole of one.
# Matched with `partial`, so a construct the line's end leaves open is told apart.
_INLINE_START = re.compile(r"<[A-Za-z/!?]|<[A-Za-z0-9.!#$%&'*+=?^_`{|}~-]+@")


@lazy
def _INLINE_HTML() -> regex.Pattern[str]:
    import regex

    return regex.compile(
        rf"<[A-Za-z][A-Za-z0-9-]*{_ATTR}*+{_S}*+/?>|</[A-Za-z][A-Za-z0-9-]*+{_S}*+>"
        r"|<!--(?:-?>|(?:[^-]|-[^-]|--[^>])*+-->)|<\?.*?\?>|<![A-Za-z][^>]*+>|<!\[CDATA\[.*?\]\]>"
        r"|<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\x00-\x20]*+>"
        r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]++@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*+>",
        regex.DOTALL,
    )


# A link's tail from its `(`: destination and title (CommonMark 0.31), matched with `partial`.
# Looser than the reference (any whitespace, any nesting of parentheses), so where this does
# not match, no link hides anything.
@lazy
def _LINK_TAIL() -> regex.Pattern[str]:
    import regex

    return regex.compile(
        r"""\(\s*+(?:<(?:[^<>\n\\]|\\.)*+>"""
        r"""|(?:[^\x00-\x20\x7f()\\]++|\\.|(\((?:[^\x00-\x20\x7f()\\]++|\\.|(?1))*+\)))*+)"""
        r"""(?:\s++(?:"(?:[^"\\]|\\.)*+"|'(?:[^'\\]|\\.)*+'|\((?:[^()\\]|\\.)*+\)))?\s*+\)""",
        regex.DOTALL,
    )


# Lines that can only open or go on with a paragraph when no container is open: at most three
# spaces, a first character that starts no block (container, fence, break, heading, HTML, list
# item, setext underline, reference definition) and brings no tab into the prefix, then no
# backtick, `<` or `](` (no code span, raw HTML or link tail), and a line ending that is not a
# CR the text may yet follow with LF; and blank lines, which end paragraphs. Group 1: the plain
# lines before the first blank one; group 2: the rest. A line is either plain or blank, so each
# is matched once and fails at most once: O(n).
_EOL_SURE = r"(?:\r\n|\r(?!$)|\n)"
_PLAIN_LINE = r" {0,3}[^ \t\r\n>`~*\-_+#<=0-9\[\].)][^`<\r\n\]]*+(?:\](?!\()[^`<\r\n\]]*+)*+" + _EOL_SURE
_BLANK_LINE = r"[ \t]*" + _EOL_SURE
_NOT_PLAIN = frozenset("\t>`~*-_+#<=0123456789[].)")
# A line that opens no container and no leaf block but a paragraph, a list item's first
# paragraph line or an ATX heading, read without the container and block walk (``_lead``):
# up to three spaces, then a bullet and one space (group 1) or an ATX opener and one space
# (group 2) or nothing, then a character that starts no block and brings no tab or container
# marker into the prefix (as ``_PLAIN_LINE``'s first). O(1): the match stops at that character.
_LEAD = re.compile(r" {0,3}(?:([-+*] )|(#{1,6} ))?[^ \t\r\n>`~*\-_+#<=0-9\[\].)]")
_PLAIN = lazy(lambda: re.compile(f"((?:{_PLAIN_LINE})*)((?:{_BLANK_LINE}(?:{_PLAIN_LINE}|{_BLANK_LINE})*)?)"))

# The same run, wider, where nothing of the open paragraph waits (no undecided backtick run,
# nothing in doubt) and at most one list item of width 2 is open: lines at column 0 only,
# whose inline content may hold what the line-by-line reading decides within the line and
# leaves no state for: code spans of one backtick whose content holds no backtick, `<` or
# `](` (each pairs with the next run, in its line), tags of one word that are no HTML code
# element (`<br>`, `</b>`: whole inline HTML holding no backtick, which ``_inline_html`` and
# ``_html_code`` pass over), and at most two link tails `](dest)` with no space, parenthesis,
# `<`, `>` or backtick in ``dest`` (whole, and within ``_links``' budget). Text between them is
# one character-class run (each unit costs the engine O(1) beyond its characters). A line is plain
# (``_WIDE_LINE``), a bullet item's first line (``_BULLET_LINE``: `- `, `+ ` or `* `, then the
# same; it ends the paragraph and opens an item of width 2, as ``_lead`` reads it), an ATX
# heading (``_HEADING_LINE``) or blank. Group 1: the plain lines before the first blank, bullet
# or heading line; group 2: the rest. Every
# alternative starts with a character the others cannot (deterministic, possessive): O(n).
_TEXT_RUN = r"[^`<\r\n\]\\]*+"  # what the line-by-line reading passes over: O(1) a character
_SPAN = r"`(?=[^`])" + _TEXT_RUN + r"(?:\](?!\()" + _TEXT_RUN + r")*+`(?!`)"
_TAG_NAME = r"(?!(?i:pre|code|script|style|textarea)[/>])[A-Za-z][A-Za-z0-9]*"
_UNITS = f"(?:(?:{_SPAN}|<{_TAG_NAME}/?>|</{_TAG_NAME}>|\\](?!\\())" + _TEXT_RUN + ")*+"
_LINK = r"\]\([^\x00-\x20\x7f()\\<>`]*\)" + _TEXT_RUN + _UNITS
_WIDE_CONTENT = r"[^ \t\r\n>`~*\-_+#<=0-9\[\].)\\]" + _TEXT_RUN + _UNITS + f"(?:{_LINK}(?:{_LINK})?)?"
_WIDE_LINE = _WIDE_CONTENT + _EOL_SURE
_BULLET_LINE = "[-+*] " + _WIDE_LINE
_HEADING_LINE = "#{1,6} " + _WIDE_LINE  # an ATX heading: ends the paragraph and every container
# A whole fence at column 0 (``_FENCE_BLOCK``): its opener, lines that cannot close it (none
# starts with a fence character after up to three spaces, and, so that no span is looked for in
# it, none holds a backtick; nor does the info string) and its closer, as long at least. It ends
# the paragraph and every item, as ``_leaf`` reads it; each of its lines is code (``_code``).
_FENCE_BODY_LINE = r"(?! {0,3}[`~])[^`\r\n]*" + _EOL_SURE


def _fence_block(look: str) -> str:
    """``_FENCE_BLOCK``, with ``look`` after its first character (each alternative starts with
    one literal, so a search scans for it in C)."""
    ends = (_EOL_SURE, f"(?:{_FENCE_BODY_LINE})*+")
    tick = "`" + look + r"(?P<tick>`{2,})[^`\r\n]*" + "".join(ends) + r" {0,3}`(?P=tick)`*[ \t]*" + _EOL_SURE
    tilde = "~" + look + r"(?P<tilde>~{2,})[^`\r\n]*" + "".join(ends) + r" {0,3}~(?P=tilde)~*[ \t]*" + _EOL_SURE
    return f"{tick}|{tilde}"


_FENCE_BLOCK = f"(?:{_fence_block('')})"

# Group 1: the plain lines before the first blank, bullet, heading or fence line; group 2: the
# rest, in which the last bullet, heading and fence are groups ``bullet``, ``heading``, ``fence``.
# Its repeat is greedy, not possessive: CPython's `re` misplaces groups captured inside a
# possessive repeat. Nothing follows it, so the first attempt that fails ends the match: each
# line (a fence: its lines) is tried at most once more, O(n).
_WIDE = lazy(
    lambda: re.compile(
        f"((?:{_WIDE_LINE})*+)((?:(?:{_BLANK_LINE}|(?P<bullet>{_BULLET_LINE})|(?P<heading>{_HEADING_LINE})"
        f"|(?P<fence>{_FENCE_BLOCK}))(?:{_WIDE_LINE})*+)*)"
    )
)
# After a run's last bullet line (or from its start, with a paragraph open): does the item
# stay open? Lazy lines then blank lines keep it; a line after a blank one closes it.
_ITEM_KEPT = lazy(lambda: re.compile(f"(?:{_WIDE_LINE})*+(?:{_BLANK_LINE})*+"))
_BLANKS = lazy(lambda: re.compile(f"(?:{_BLANK_LINE})*+"))
# The code a run holds, in order: its spans, and its fences (at a line's start, the character
# before the first not in the line).
_RUN_CODE = lazy(lambda: re.compile(_SPAN + "|" + _fence_block(r"(?<![^\r\n].)")))
_ITEM_2 = [2]  # the one open container a run may go on with: a list item of width 2

# Lines inside a fence (no container open) that cannot close it: not three spaces at most and
# then the fence's character. Any line ending but a CR the text may yet follow with LF.
_FENCE_BODY = lazy(
    lambda: {ch: re.compile(r"(?:(?! {0,3}" + re.escape(ch) + r")[^\r\n]*(?:\r\n|\r(?!$)|\n))+") for ch in "`~"}
)

# Leaf blocks that matter here.
_NONE, _PARA, _FENCE, _ICODE, _HTML_BLOCK = range(5)


def first_trigger(text: str, start: int = 0) -> int:
    """The first offset from ``start`` (>= 0) where code could begin, or ``len(text)``: every
    fence and code span starts with a backtick or a tilde, so without one before ``s``, ``s``
    is not in code. Two ``str.find`` calls, the second bounded by the first: O(n) at memchr
    speed, several times cheaper than a character-class search over the same text."""
    end = text.find("`", start)
    if end == -1:
        end = len(text)
    tilde = text.find("~", start, end)
    return end if tilde == -1 else tilde


def _fence_at(t: str, k: int, b: int) -> bool:
    """Does ``t[k:b]`` open a fence (its first non-space character at ``k``)? O(b - k)."""
    ch = t[k] if k < b else ""
    if ch not in ("`", "~"):
        return False
    e = k
    while e < b and t[e] == ch:
        e += 1
    return e - k >= 3 and (ch == "~" or t.find("`", e, b) == -1)


def _indent(t: str, i: int, b: int, col: int, part: int) -> tuple[int, int, int]:
    """(columns of indentation, index of the first other character, its column) from a point;
    the index is -1 past ``_CAP`` columns. O(_CAP)."""
    cols = part
    c = col + part
    j = i
    while j < b and cols < _CAP:
        ch = t[j]
        if ch == " ":
            c += 1
            cols += 1
        elif ch == "\t":
            w = 4 - c % 4
            c += w
            cols += w
        else:
            return cols, j, c
        j += 1
    if j < b and t[j] in " \t":
        return cols, -1, c
    return cols, j, c


def _column(t: str, i: int, j: int, c: int) -> int:
    """The column of ``t[j]``, whitespace from ``t[i]`` (at column ``c``) on. O(j - i)."""
    if t.find("\t", i, j) == -1:
        return c + j - i
    for k in range(i, j):
        c = c + 4 - c % 4 if t[k] == "\t" else c + 1
    return c


def _blank(t: str, i: int, j: int, b: int) -> bool:
    """Is ``t[i:b]`` all spaces and tabs, given ``_indent``'s ``j`` from ``i``?"""
    if j == -1:
        return _NONWS.search(t, i, b) is None
    return j >= b


def _splits_quotes(t: str, i: int, b: int, stack: list[int], matched: int) -> int:
    """Does a lazy paragraph line ``t[i:b]``, indented four columns or more, end the paragraph
    in the reference implementation? The spec continues the paragraph (nothing interrupts
    one from four columns in). markdown-it-py marks the line lazy for the outermost quote left
    open (indentation -1), so a quote nested in it no longer sees the indentation, reads the
    line as a block start that may end a quote (fence, break, list item, HTML block of kinds
    1-6, heading), and both quotes end there: 1. A list item left open measures the line from
    its own content column (``   - a`` then ``    ~~~``: one column in, a fence), so a block
    start there (a quote too) may end the item, and the line is read again as indented code;
    whether it does depends on more than the line: 2 (in doubt, the paragraph goes on). 0:
    the readings agree. O(MAX_CONTAINERS + line)."""
    unmatched = stack[matched:]
    quotes = unmatched.count(-1)  # O(MAX_CONTAINERS)
    items = len(unmatched) - quotes
    if quotes < 2 and not items:
        return 0
    split = 1 if quotes >= 2 else 2
    m = _NONWS.search(t, i, b)
    if m is None:
        return 0
    j = m.start()
    ch = t[j]
    if ch in "-+*" or ch.isdigit():
        o = _ORDERED().match(t, j, b) if ch.isdigit() else None
        end = j + 1 if o is None else o.end()
        if (o is not None or not ch.isdigit()) and (end == b or t[end] in " \t"):
            return split
    if ch == "<":
        starts = any(start.match(t, j, b) for start, _ in _HTML()[:6])
    elif ch == ">":
        starts = items > 0
    else:
        starts = _fence_at(t, j, b) or _is_break(t, j, b, ch) or (ch == "#" and _ATX().match(t, j, b) is not None)
    return split if starts else 0


def _marker_end(t: str, j: int, b: int, ch: str) -> int:
    """Where a list item's marker at ``j`` ends (then a space, a tab or the line's end), or -1."""
    if ch in "-+*":
        end = j + 1
    elif ch.isdigit() and (o := _ORDERED().match(t, j, b)) is not None:
        end = o.end()
    else:
        return -1
    return end if end == b or t[end] in " \t" else -1


def _is_break(t: str, j: int, b: int, ch: str) -> bool:
    """Is ``t[j:b]`` a thematic break (its first character ``ch``)? O(b - j)."""
    return ch in "*-_" and _BREAK()[ch].fullmatch(t, j, b) is not None


def _quote_continued(t: str, i: int, b: int, col: int, part: int) -> tuple[int, int, int] | None:
    """The point after a continued quote's ``>``, or None when the line has none. Any
    indentation may come before it, as the reference implementation reads it (the spec's 0-3
    would end the quote and start indented code or a lazy line: masking less, never more)."""
    _, j, jcol = _indent(t, i, b, col, part)
    if j == -1:
        m = _NONWS.search(t, i, b)
        j = b if m is None else m.start()
        jcol = -1
    if j >= b or t[j] != ">":
        return None
    if jcol == -1:
        jcol = _column(t, i, j, col + part)
    return _after_quote(t, j, jcol, b)


def _after_quote(t: str, j: int, jcol: int, b: int) -> tuple[int, int, int]:
    """The point after the ``>`` at ``j`` (column ``jcol``) and its one optional space."""
    i, col, part = j + 1, jcol + 1, 0
    if i < b and t[i] in " \t":
        return _consume(t, i, col, 0, 1)
    return i, col, part


def _closes_fence(t: str, b: int, point: tuple[int, int, int], fch: str, flen: int) -> bool:
    """Does the line's rest from ``point`` close a fence of ``flen`` × ``fch``: indented at
    most three, as long at least, then spaces and tabs only? O(b - i)."""
    i, col, part = point
    ind, j, _ = _indent(t, i, b, col, part)
    if not (0 <= j < b and ind <= 3 and t[j] == fch):
        return False
    k = j
    while k < b and t[k] == fch:
        k += 1
    return k - j >= flen and _NONWS.search(t, k, b) is None


def _maybe_definition(t: str, j: int, b: int) -> bool:
    """May a paragraph starting ``[`` at ``j`` be a link reference definition (whose label,
    destination and title hide backticks)? Its label ends ``]:``, here or on a later line."""
    k = t.find("]", j + 1, b)
    return k == -1 or t.find("]:", k, b) != -1


def _consume(t: str, i: int, col: int, part: int, k: int) -> tuple[int, int, int]:
    """The point ``k`` columns of whitespace further (a tab may be split). O(k)."""
    if part:
        take = min(part, k)
        part -= take
        col += take
        k -= take
    while k > 0:
        if t[i] == " ":
            col += 1
            k -= 1
        else:  # a tab
            w = 4 - col % 4
            if w > k:
                return i + 1, col + k, w - k
            col += w
            k -= w
        i += 1
    return i, col, part


class _Inline:
    """The raw inline HTML constructs (tags, comments, declarations, autolinks ...) of one
    paragraph line, found left to right as CommonMark's inline parser finds them: a code span
    decided in the line holds none, and a construct hides what lies in it. Asked at increasing
    offsets (``at``); each ``<`` is tried once, so O(line) over all questions."""

    __slots__ = ("b", "base", "end", "k", "link", "odd", "partial", "pos", "spans", "start", "t", "work", "x")

    def __init__(self, t: str, base: int, x: int, b: int, spans: list[tuple[int, int]]) -> None:
        self.t, self.base, self.x, self.b, self.spans = t, base, x, b, spans
        self.pos, self.start, self.end, self.partial, self.k, self.work = x, -1, -1, False, 0, 0
        self.odd = False  # the construct found is a tag holding whitespace the spec's grammar has not
        self.link = t.find("](", x, b)  # a link's destination and title, from here, may hide tags

    def at(self, p: int) -> int:
        """1: a whole construct starts at ``t[p]``; 0: no construct holds it (text); -1 in
        doubt: it lies in another construct (hidden in markdown-it-py's reading, maybe not in
        a browser's), after a link's ``](``, after a backslash, or its construct is left open by
        the line's end or is a tag only in the reference's reading (``_ODD_SPACE``)."""
        t = self.t
        if self.link != -1 and p > self.link:
            return -1
        e = p
        while e > self.x and t[e - 1] == "\\":  # O(backslashes), each run once per tag
            e -= 1
        if (p - e) % 2:
            return -1
        self._advance(p)
        if self.start > p:
            return 0
        return 1 if self.start == p and not self.partial and not self.odd else -1

    def left_open(self) -> bool:
        """Does a construct the line's end leaves open (it may go on, hiding what follows) end
        the line?"""
        self._advance(self.b)
        return self.partial and self.start < _BIG

    def _advance(self, p: int) -> None:
        """Find the constructs up to the first one that ends past ``p``."""
        t, spans, base = self.t, self.spans, self.base
        while self.end <= p:
            m = _INLINE_START.search(t, self.pos, self.b)
            if m is None:
                self.start = self.end = _BIG
                break
            q = m.start()
            while self.k < len(spans) and spans[self.k][1] <= base + q:
                self.k += 1
            if self.k < len(spans) and spans[self.k][0] <= base + q:
                self.pos = spans[self.k][1] - base  # in a code span: no HTML
                continue
            full = _INLINE_HTML().match(t, q, self.b, partial=True)
            if full is None:
                self.pos = q + 1
                continue
            self.work += full.end() - q
            self.start, self.partial = q, full.partial
            self.odd = t[q + 1] not in "!?" and _ODD_SPACE().search(t, q, full.end()) is not None
            self.end = self.pos = self.b + 1 if full.partial else full.end()


class CodeMask:
    """Markdown code regions of a text read so far; see the module docstring for the rules.

    Offsets are in the whole text. ``salvage_text`` hands in the whole text; a stream feeds
    its deltas (``feed``) and the mask keeps what it has not read. Queries come in
    increasing order.
    """

    __slots__ = (
        "buf",
        "buf_base",
        "closers",
        "cuts",
        "dead",
        "dead_by_limit",
        "definition",
        "dense",
        "doubt",
        "empty_item",
        "eol",
        "fch",
        "fed",
        "flen",
        "fog",
        "fog_at",
        "forigin",
        "hcount",
        "head",
        "hit",
        "hline",
        "hopen",
        "horigin",
        "hraw",
        "hsoft",
        "html_end",
        "leaf",
        "lf",
        "line",
        "looked",
        "nolf",
        "parts",
        "pos",
        "re_",
        "regions",
        "rn",
        "ro",
        "ro_len",
        "spans",
        "stack",
        "streaming",
        "tail",
        "trigger",
        "waiting",
        "walk",
        "work",
    )

    def __init__(self, head: int) -> None:
        self.head = max(1, head)
        self.pos = 0  # start of the next line to read
        self.lf = False  # the last line read ended in CR at the end of the window: skip one LF
        self.trigger = -1  # first offset where code could begin (-1: not found yet)
        self.looked = 0  # ... looked for up to here
        self.nolf = 0  # no line ending between the current line's start and here
        self.stack: list[int] = []  # open containers: -1 a block quote, W > 0 a list item's width
        self.empty_item = False  # the innermost item began with a blank line and has no content yet
        self.leaf = _NONE
        self.line: tuple[str, int, int, int, int] = ("", 0, 0, 0, 0)  # the line being classified
        self.fch, self.flen = "", 0
        self.html_end: re.Pattern[str] | None = None
        self.dead = -1  # from here on everything is code (a line longer than `head`, a definition)
        # Code, in order of start: (start, end, least origin, greatest origin), where an
        # origin is the offset of what opened it (a fence's opener, a span's first backtick).
        self.regions: deque[tuple[int, int, int, int]] = deque()
        self.cuts: deque[tuple[int, int]] = deque()  # accepted calls (see `in_call_code`)
        self.closers: dict[int, int] = {}  # a dialect's own fence opener -> its closing run's end
        self.hit = (0, 0)  # the origins of the code the last True answer found
        # The last True answer is a limit's, not the text's: a line longer than ``head``, or a
        # pairing undecided within it. Code then only because the mask fails closed, so a call
        # there is refused aloud (``too-large``), unlike an example shown in code.
        self.doubt = False
        self.dead_by_limit = False  # `dead` was set by a line longer than `head`
        self.forigin = 0  # the open fence's opener
        # HTML code (``_html_code``): the open raw text's close (a comment in HTML, <script>,
        # <style>, <textarea>), whether an inline comment is open in the paragraph, how many
        # <pre> and <code> are open, and the offset of the opener that began the stretch.
        self.hraw: re.Pattern[str] | None = None
        self.hsoft = False
        self.hopen = False  # an inline construct a paragraph line left open (it may hide tags after)
        self.hcount = [0, 0]
        self.horigin = 0
        self.hline = False  # the line being read went through `_html_code`
        self.spans: list[tuple[int, int]] = []  # the code spans the line being read decided
        self.tail = ""  # a stream's last few characters, while no trigger is found
        # The open paragraph's backtick runs: opener start, opener length (0: cannot open),
        # run end, closer index; openers waiting for a closer by length; the pairing walk.
        self.ro: list[int] = []
        self.ro_len: list[int] = []
        self.re_: list[int] = []
        self.rn: list[int] = []
        self.waiting: dict[int, list[int]] = {}
        self.walk = 0
        # Fail closed where readings part: from the first run at or after `fog_at` (-1: none)
        # the open paragraph is code to its end; `fog` puts every paragraph up to the next blank
        # line under it (tabs in container indentation).
        self.fog_at = -1
        self.fog = False
        # Where the open paragraph, which may be a link reference definition, starts (-1: none;
        # a line after it makes all code from there); text from a backtick in tab doubt to the
        # next blank line is code.
        self.definition = -1
        self.dense = False
        self.work = 0  # characters looked at, for linear-time tests
        # A stream's text (``feed``): joined from `buf_base` on, pieces not yet joined, whether
        # a line ending may wait in them, and all that was fed.
        self.streaming = False
        self.buf, self.buf_base = "", 0
        self.parts: list[str] = []
        self.eol = False
        self.fed = 0

    # -- queries ------------------------------------------------------------------------
    def covers(self, t: str, base: int, s: int, final: bool) -> bool | NeedMore:
        """Is offset ``s`` in code? NEED_MORE while that depends on text not yet seen. A
        stream's mask reads its own copy of the text (``feed``), not ``t``."""
        if self.streaming:
            t, base = self._view()
        self.doubt = False
        read = self._read_to(t, base, s, final)
        if read is not None:
            return read
        regions = self.regions
        while regions and regions[0][1] <= s:
            regions.popleft()
        if regions and regions[0][0] <= s:
            self.hit = regions[0][2:]
            return True
        return False

    def reaches(self, t: str, base: int, e: int, final: bool) -> bool | NeedMore:
        """After a True ``covers(s)``: is offset ``e > s`` in code too? Asked of a candidate
        whose marker is in code: its last character in text means the code ended inside the
        candidate's own text (a code span closed by a backtick in an argument), which a reader
        cannot show as an example. Unlike ``covers`` it forgets no region, so the queries
        after it may again be at offsets before ``e``, and it leaves ``hit`` alone. O(lines
        read + regions in the candidate)."""
        if self.streaming:
            t, base = self._view()
        hit = self.hit
        read = self._read_to(t, base, e, final)
        self.hit = hit
        if read is not None:
            return read
        for start, end, _, _ in self.regions:
            if start > e:
                break
            if end > e:
                return True
        return False

    def _read_to(self, t: str, base: int, s: int, final: bool) -> bool | NeedMore | None:
        """Read the lines that decide offset ``s``: True, False or NEED_MORE when that decides
        it (no code can start before ``s``, all is code from ``dead`` on, undecided), None when
        the regions do."""
        if self.trigger == -1 and not self.streaming and self.looked < base + len(t):
            self.see(t, base)  # the text not looked at yet (a stream's mask looks as it is fed)
        if self.trigger == -1 or self.trigger >= s:
            return False  # nothing before `s` can start code
        # The answer is a function of the text up to `head` past `s`, read as not final when
        # more follows: so a stream fed in any pieces and the whole text agree (a question
        # still open there leaves `s` in code, below). O(1) to set up.
        n = min(len(t), s + self.head - base)
        ended = final and base + n < s + self.head  # as `>= s + head` below reads it
        while self.pos <= s or (self.walk < len(self.ro) and self.ro[self.walk] < s):
            # Past `s` only to decide a pairing, which plain lines never do: read them all.
            if self._line(t, base, ended, s if self.pos <= s else base + n - 1, n):
                continue
            if self.dead != -1 or ended:
                break  # from `dead` on all is code; before it, what was read decides
            if base + len(t) >= s + self.head:
                self.doubt = True
                return True  # undecided within `head` past `s`: code (fail closed)
            return NEED_MORE
        if 0 <= self.dead <= s:
            self.hit = (self.dead, self.dead)
            self.doubt = self.dead_by_limit
            return True
        return None

    def see(self, t: str, base: int) -> None:
        """Look for the first trigger in the text not looked at yet."""
        if self.trigger != -1 or self.streaming:
            return
        start = max(0, self.looked - base)
        got = first_trigger(t, start)
        tag = _HTML_CODE_OPEN.search(t, start, got)
        if tag is not None:
            got = tag.start()
        self.work += len(t) - start
        self.looked = base + len(t)
        if got < len(t):
            self.trigger = got + base

    def catch_up(self, upto: int) -> None:
        """Read the complete lines of a stream's text that start at or before ``upto``. Not
        past it: a call accepted there makes its lines opaque, and ``salvage_text`` reads a
        line only when a marker asks, or one before it did."""
        if not self.streaming or (not self.eol and self.fed - self.pos <= self.head):
            return  # no complete line yet (nothing joined, nothing searched again)
        t, base = self._view()
        stopped = False
        while self.dead == -1:
            if self.pos > upto:
                stopped = True
                break
            if not self._line(t, base, False, upto):
                break
        self.eol = stopped
        cut = self.pos - self.buf_base
        if cut > 0 and 2 * cut >= len(self.buf):  # O(1) amortised per character
            self.buf = self.buf[cut:]
            self.buf_base = self.pos

    # -- a stream's own copy of its text from the current line on -----------------------
    def feed(self, more: str) -> None:
        """Append streamed text. The mask keeps what it has not read itself, so the stream's
        window need not; pieces are joined only when a line is complete. O(len(more))."""
        if not more:
            return
        self.streaming = True
        if self.trigger == -1:
            got = first_trigger(more)
            # An opening tag may be cut by the delta's end: look again from the last few
            # characters fed (O(_TAG_TAIL) more per delta).
            joined = self.tail + more
            tag = _HTML_CODE_OPEN.search(joined, 0, len(self.tail) + got)
            if tag is not None:
                got = tag.start() - len(self.tail)
            self.tail = joined[-_TAG_TAIL:]
            self.work += len(more)
            if got < len(more):
                self.trigger = self.fed + got
        if not self.eol and _EOL.search(more) is not None:
            self.eol = True
        self.parts.append(more)
        self.fed += len(more)

    def _view(self) -> tuple[str, int]:
        if self.parts:
            self.buf += "".join(self.parts)
            self.parts.clear()
        return self.buf, self.buf_base

    # -- lines ----------------------------------------------------------------------------
    def _line(self, t: str, base: int, final: bool, upto: int, n: int = -1) -> bool:
        """Read the next line if it is complete (or the text is), or a run of plain lines
        that end by ``upto``, in ``t[:n]`` (all of ``t`` by default). False when there is none."""
        if self.dead != -1:
            return False
        a = self.pos - base
        if n < 0:
            n = len(t)
        if self.lf and a < n:
            self.lf = False
            if t[a] == "\n":
                a += 1
                self.pos += 1
        if a >= n:
            if final:
                self._end_para(base + n)
            return False
        # Accepted calls' lines are read as any others: CommonMark reads the whole text, and
        # code a call's own text opens covers what follows it (see `in_call_code`).
        if self._plain(t, base, a, upto):
            return True
        end = self._end(t, base, a, final, n)
        if end is None:
            return False
        b, nxt = end
        self.work += nxt - a
        self._classify(t, base, a, b, base + min(b + 1, n))
        self.pos = base + nxt
        if b == n:  # the text ended: so does everything open
            self._end_para(base + n)
        return True

    def _end(self, t: str, base: int, c: int, final: bool, n: int) -> tuple[int, int] | None:
        """Where the line from ``c`` ends in ``t[:n]``, and where the next one starts; None
        while that is not known, or when the line is longer than ``head`` (then code from there
        on: fail closed). A line still being written is searched for its end once per character."""
        m = _EOL.search(t, max(c, self.nolf - base), min(n, c + self.head + 1))
        if m is None:
            self.nolf = base + n
            if n - c > self.head:
                self._end_para(base + c)
                self.dead = base + c
                self.dead_by_limit = True  # code from here for the limit, not for the text
                return None
            return (n, n) if final else None
        b = m.start()
        nxt = b + 1
        if t[b] == "\r":
            if b + 1 < n:
                if t[b + 1] == "\n":
                    nxt += 1
            elif not final:
                self.lf = True
        self.nolf = base + nxt
        return b, nxt

    def _plain(self, t: str, base: int, a: int, upto: int) -> bool:
        """Read, in one match, a run of plain paragraph lines (or of lines inside a fence that
        cannot close it) outside any container that end by ``upto`` and within ``head``: all
        the line-by-line reading would do with them is open or go on with the paragraph (or
        mark each line code). See ``_PLAIN`` and ``_FENCE_BODY``; where nothing of the open
        paragraph waits, ``_WIDE`` also takes bullet items' first lines, ATX headings, whole
        fences, code spans closed in their line, one-word tags and link tails, and goes on in a
        list item of width 2."""
        leaf = self.leaf
        if leaf > _FENCE or self.dense or self.definition != -1 or self.fog or self._in_html_code() or self.hsoft:
            return False  # (a comment the paragraph left open makes its next lines code: read each)
        wide = (
            leaf != _FENCE
            and (not self.stack or self.stack == _ITEM_2)
            and not self.empty_item
            and self.fog_at == -1
            and not (self.hsoft or self.hopen)
            and self.walk == len(self.ro)
            and not self.closers  # a dialect's own fence ends where its call says (`cut`)
        )
        if self.stack and not wide:
            return False
        if leaf != _FENCE and t[a] in _NOT_PLAIN and not (wide and t[a] in "-+*#`~"):
            return False  # the first line is not plain: no match to try
        stop = max(a, min(len(t), a + self.head, upto - base + 1))
        m = _WIDE().match(t, a, stop) if wide else None
        if m is None or m.end() == a:
            if self.stack:
                return False
            m = (_FENCE_BODY()[self.fch] if leaf == _FENCE else _PLAIN()).match(t, a, stop)
            wide = False
        if m is None or m.end() == a:
            return False
        e = m.end()
        self.work += e - a
        self.pos = self.nolf = base + e
        if leaf == _FENCE:
            for end in _LINE_END.finditer(t, a, e):  # each line code, as when read one by one
                self._code(base + a, base + end.start(), self.forigin)
                a = end.end()
        else:
            self._paragraphs(t, base, m, wide)
        return True

    def _paragraphs(self, t: str, base: int, m: re.Match[str], wide: bool) -> None:
        """What a run of plain, bullet and blank lines (``_PLAIN``'s or ``_WIDE``'s match ``m``)
        does to the state. O(run): a few searches over it in C, one ``_code`` per code span."""
        a, e = m.span()
        para = self.leaf == _PARA
        if m.end(1) > a:  # plain lines before any blank or bullet one
            self.leaf = _PARA
        if m.end(2) > m.start(2):  # a blank line or a bullet item ends the paragraph
            first = _EOL.search(t, m.start(2))
            assert first is not None  # every line of the run has its line ending
            self._end_para(base + first.start() + 1)
            last = e - (2 if t.startswith("\r\n", e - 2) else 1)  # where the last line's content ends
            start = max(a, t.rfind("\n", a, last) + 1, t.rfind("\r", a, last) + 1)
            blank = _NONWS.search(t, start, last) is None
            # A heading or a fence ends its paragraph; the walk leaves no leaf open after them.
            closed = wide and e in (m.end("heading"), m.end("fence"))
            self.leaf = _NONE if blank or closed else _PARA
        if not wide:
            return
        if t.find("`", a, e) != -1 or t.find("~", a, e) != -1:
            for code in _RUN_CODE().finditer(t, a, e):
                s, f = code.span()
                if not t.startswith(("``", "~"), s):
                    self._code(base + s, base + f)  # a span pairs in its line, as `_pair` pairs it
                    continue
                for end in _LINE_END.finditer(t, s, f):  # each of the fence's lines code
                    self._code(base + s, base + end.start(), base + code.start())
                    s = end.end()
        fence = m.start("fence")
        if fence != -1:  # the last fence's opener, as `_leaf` left it
            k = fence
            while t[k] == t[fence]:  # O(its run)
                k += 1
            self.fch, self.flen, self.forigin = t[fence], k - fence, base + fence
        bullet = m.start("bullet")
        if max(fence, m.start("heading")) > bullet:
            self.stack.clear()  # the last heading or fence closed every item; no bullet line follows
        elif bullet != -1 or self.stack:
            if bullet != -1:
                k, para = m.end("bullet"), True
            else:
                k = a
            kept = (_ITEM_KEPT() if para else _BLANKS()).fullmatch(t, k, e) is not None
            self.stack[:] = _ITEM_2 if kept else []

    def cut(self, s: int, e: int, fences: tuple[tuple[int, int], ...] = ()) -> None:
        """``[s, e)`` is an accepted call. Its lines are Markdown like any others; the span
        only tells code the call's own text opened from code that was there before it (see
        ``in_call_code``). ``fences`` are the dialect's own fences in it (opener, end of the
        closing run): such a fence ends at its closing run even with the call's end token
        after it on the line (```` ```<｜tool▁call▁end｜> ````), where CommonMark would go on.
        Cuts come in increasing order."""
        self.cuts.append((s, e))
        for opener, close in fences:
            self.closers[opener] = close

    def in_call_code(self) -> bool:
        """Was the code of the last ``covers`` answer that was True opened inside an accepted
        call's own text (a fence line, a code span's opener, ``<pre>``...)? Then the call the
        question was about would be code in a CommonMark reading of the whole text only
        because of an earlier call: the pass refuses it (``in-code``) rather than keep quiet.
        Cuts that end before any origin still open are dropped: O(1) amortised."""
        cuts = self.cuts
        floor = min(self.hit[0], self._open_floor())
        while cuts and cuts[0][1] <= floor:
            cuts.popleft()
        for origin in self.hit:
            i = bisect.bisect_right(cuts, (origin, _BIG)) - 1
            if i >= 0 and cuts[i][0] <= origin < cuts[i][1]:
                return True
        return False

    def _open_floor(self) -> int:
        """No region made from here on has an origin before this: the start of the open leaf
        block (a fence's opener, a paragraph's first run), the open HTML code element, the
        regions still held."""
        floor = self.pos
        if self.leaf == _FENCE:
            floor = min(floor, self.forigin)
        if self.ro:
            floor = min(floor, self.ro[0])
        if self.regions:
            floor = min(floor, self.regions[0][2])
        if self.dead != -1:
            floor = min(floor, self.dead)
        if self._in_html_code():
            floor = min(floor, self.horigin)
        return floor

    def _classify(self, t: str, base: int, a: int, b: int, r: int) -> None:
        """One line ``t[a:b]``; ``r`` is where its end was known (past its first line-ending
        character). O(line + containers)."""
        fresh, self.empty_item = self.empty_item, False
        self.line = (t, base, a, b, r)
        held = self._in_html_code()  # HTML code is open: the line is its code
        self.hline = False
        if not (held or self.dense or self.fog or self.definition != -1) and self.leaf <= _PARA and self._lead(t, a, b):
            return
        if (self.dense or self.definition != -1) and _NONWS.search(t, a, b) is not None:
            if self.definition != -1:
                # A second line after a paragraph that may be a link reference definition: the
                # reference reads on as a definition (its destination or title may be here) or
                # as a paragraph, and the blocks after part for good (a fence in one reading
                # only, an item only in the other; a span across the two lines in one). All from
                # the paragraph's start on is code (fail closed).
                self.dead = self.definition
                self._end_para(r)
                return
            self._code(base + a, base + b)  # in doubt: code to the next blank line
        matched, i, col, part = self._continued(t, a, b, fresh)
        self._tab_doubt(t, a, b, self._prefix_end(matched, (i, col, part)))
        if not (self.leaf >= _FENCE and self._leaf_goes_on((i, col, part), matched)):
            self._blocks(matched, (i, col, part))
        if self.fog and not self.dense:
            k = t.find("`", a, b)
            if k != -1:
                # Where tab readings part, the block structure may part too (a fence in one
                # reading, indented code and a paragraph in the other; a paragraph split in one
                # place or another): from the first backtick to the next blank line, code.
                self.dense = True
                self._code(base + k, base + b)
        if held and not self.hline:  # not raw HTML or text, where a close tag could end it
            self._code(base + a, base + b, self.horigin)

    def _lead(self, t: str, a: int, b: int) -> bool:
        """Read a line ``_LEAD`` matches, with no fence, indented code or HTML open and nothing in
        doubt, as the walk below would, without it: it continues no container (it starts with
        no ``>`` and is indented less than any list item's width, so ``_continued`` matches
        none: lines indented at all are left to the walk when a container is open), brings no
        tab into its prefix (no ``_tab_doubt``), and opens at most a bullet item (the walk's
        ``_item``) before its leaf block, whose first character opens nothing but a paragraph
        or a heading (``_leaf``). False, having read nothing, for any other line. O(1) plus
        ``_leaf``'s O(line)."""
        m = _LEAD.match(t, a, b)
        stack = self.stack
        if m is None or (stack and t[a] == " "):
            return False
        para = self.leaf == _PARA
        j = m.end() - 1
        if m.start(1) == -1:
            k = m.start(2)
            k = j if k == -1 else k  # the paragraph's first character, or a heading's `#`
            self._leaf(k, t[k], para, para and bool(stack), 0)
            return True
        if len(stack) >= MAX_CONTAINERS:
            return False  # the walk reads a container past the bound as code in doubt
        i = m.start(1)
        self._item(i, i - a, 0, para and not stack, 0)  # opens it: a bullet, one space, content at `j`
        self._leaf(j, t[j], False, False, 1)
        return True

    # -- containers -----------------------------------------------------------------------
    def _prefix_end(self, matched: int, point: tuple[int, int, int]) -> int:
        """Where the line's container prefix may end: past the continued containers'
        markers and the indentation after them when the open fence, HTML block or indented
        code takes the line (what follows is its content: a ``-`` or ``>`` there opens
        nothing), else the line's end (new containers may open: ``_PREFIX`` bounds it).
        O(containers + _CAP)."""
        t, _, _, b, _ = self.line
        leaf = self.leaf
        if leaf < _FENCE or matched < len(self.stack):
            return b
        i, col, part = point
        ind, j, _ = _indent(t, i, b, col, part)
        if leaf == _ICODE and not (_blank(t, i, j, b) or ind >= 4):
            return b  # the indented code ends: the line is read for blocks
        if j == -1:
            m = _NONWS.search(t, i, b)
            j = b if m is None else m.start()
        return j

    def _tab_doubt(self, t: str, a: int, b: int, end: int) -> None:
        """Tab stops in container indentation are counted one way by the spec and another by
        the reference implementation; where a tab is in a line's container prefix (in
        ``t[a:end]``) the readings may part, so paragraphs up to the next blank line fail
        closed. One rule for a line read alone and for one read in a run (``_plain``): a tab
        in a fence's or an HTML block's content is no container's. O(prefix)."""
        pre = _PREFIX.match(t, a, end)
        pend = a if pre is None else pre.end()
        if t.find("\t", a, pend) != -1 and (self.stack or _NONWS.search(t, a, pend) is not None):
            self.fog = True

    def _continued(self, t: str, a: int, b: int, fresh: bool) -> tuple[int, int, int, int]:
        """How many open containers the line continues, and the point after their markers
        (index, column, columns left of a split tab). O(containers · _CAP)."""
        stack = self.stack
        n = len(stack)
        i, col, part = a, 0, 0
        matched = 0
        while matched < n:
            width = stack[matched]
            if width < 0:
                point = _quote_continued(t, i, b, col, part)
                if point is None:
                    break
                i, col, part = point
            else:
                ind, j, _ = _indent(t, i, b, col, part)
                if _blank(t, i, j, b):
                    if fresh and matched == n - 1:
                        break  # an item may begin with one blank line, not two
                elif ind >= width:
                    i, col, part = _consume(t, i, col, part, width)
                else:
                    break
            matched += 1
        return matched, i, col, part

    # -- leaf blocks that go on over lines ------------------------------------------------
    def _leaf_goes_on(self, point: tuple[int, int, int], matched: int) -> bool:
        """Does the open fence, indented code or HTML block take the line? If not, it ends."""
        t, base, a, b, _ = self.line
        i, col, part = point
        every = matched == len(self.stack)
        leaf = self.leaf
        if leaf == _FENCE:
            close = self.closers.pop(self.forigin, -1) if self.closers else -1
            if every and base + a < close <= base + b:
                # A dialect's own fence (``cut``): code to its closing run, and the rest of
                # the line is a paragraph's (a span there still masks).
                self._code(base + a, close, self.forigin)
                self.leaf = _PARA
                self._runs(t, base, close - base, b, first=True)
                return True
            if close != -1:
                self.closers[self.forigin] = close
            if every:
                if _closes_fence(t, b, point, self.fch, self.flen):
                    self.leaf = _NONE
                self._code(base + a, base + b, self.forigin)
                if self.fog:
                    self._html_code(t, base, i, b, [])  # another tab reading may see a paragraph
                return True
        elif leaf == _ICODE:
            ind, j, _ = _indent(t, i, b, col, part)
            blank = _blank(t, i, j, b)
            if every and (blank or ind >= 4):
                if self.fog and not blank:
                    self._code(base + a, base + b)  # another tab reading may see a paragraph
                    self._html_code(t, base, i, b, [])
                return True
        elif every:  # an HTML block
            end = self.html_end
            if (_NONWS.search(t, i, b) is None) if end is None else (end.search(t, i, b) is not None):
                self.leaf = _NONE
            self._html_code(t, base, i, b, None)
            return True
        self.leaf = _NONE
        return False

    # -- what the rest of the line opens --------------------------------------------------
    def _blocks(self, matched: int, point: tuple[int, int, int]) -> None:
        """New containers, then the leaf block the line holds (or continues)."""
        t, base, _, b, r = self.line
        stack = self.stack
        para = self.leaf == _PARA
        i, col, part = point
        while True:
            ind, j, jcol = _indent(t, i, b, col, part)
            if j == -1:
                j = -1 if _NONWS.search(t, i, b) is not None else b
            if j == b:  # blank
                self.fog = self.dense = False
                del stack[matched:]
                self._end_para(r)
                self.leaf = _NONE
                return
            lazy = para and matched < len(stack)
            if j == -1 or ind >= 4:
                self._indented(i, matched, para, lazy)
                return
            ch = t[j]
            if len(stack) >= MAX_CONTAINERS and (ch == ">" or _marker_end(t, j, b, ch) != -1):
                # A container past the bound (or what may be one): its content is read by
                # nobody here. Everything from it on is code in doubt (fail closed, bounded).
                self._dead(base + j, base + j)
                return
            if len(stack) < MAX_CONTAINERS:
                if ch == ">":
                    self._open(matched, r, -1)
                    i, col, part = _after_quote(t, j, jcol, b)
                    para = False
                    matched += 1
                    continue
                if ch in "-+*0123456789" and not (ch != "+" and _is_break(t, j, b, ch)):
                    item = self._item(j, jcol, col, para and not lazy, matched)
                    if item is not None:
                        if item[0] == -1:
                            return  # an empty item: the line holds no more
                        i, col, part = item
                        para = False
                        matched += 1
                        continue
            self._leaf(j, ch, para, lazy, matched)
            return

    def _open(self, matched: int, r: int, width: int) -> None:
        """A new container after the ``matched`` continued ones (-1: a block quote)."""
        del self.stack[matched:]
        self._close_para(r)
        self.stack.append(width)

    def _indented(self, i: int, matched: int, para: bool, lazy: bool) -> None:
        """Four columns or more: a paragraph's continuation, or indented code."""
        t, base, a, b, r = self.line
        split = _splits_quotes(t, i, b, self.stack, matched) if para and lazy else 0
        if split == 1:
            # The reference's reading: the quotes end and the line is indented code; the spec
            # goes on with the paragraph, and the blocks after may part (a blank quote line in
            # one is a paragraph's line in the other). In doubt to the next blank line.
            self.fog = True
            self._close_para(r)
        elif para:
            if split == 2:
                # The reference may end the item here (and read the line as indented code), or
                # not: the spec's paragraph goes on, in doubt to the next blank line, which
                # covers both readings' paragraphs (code from their first pairing run on).
                self.fog = True
                self.fog_at = 0
            self._runs(t, base, i, b)  # a paragraph's continuation, lazy or not
            return
        del self.stack[matched:]
        self.leaf = _ICODE  # code, yet not masked: see the module docstring
        if self.fog:
            self._code(base + a, base + b)  # another tab reading may see a paragraph
            self._html_code(t, base, i, b, [])

    def _item(self, j: int, jcol: int, col: int, interrupts: bool, matched: int) -> tuple[int, int, int] | None:
        """A list item's marker at ``j``: opens the item and gives the point of its content
        ((-1, 0, 0) when it starts empty), or None when there is no item here. ``interrupts``:
        it would interrupt a paragraph (only ``1.`` and non-empty items may)."""
        t, _, _, b, r = self.line
        ch = t[j]
        mlen = 0
        if ch in "-+*":
            mlen = 1
        else:
            m = _ORDERED().match(t, j, b)
            if m is not None:
                mlen = m.end() - j
                if interrupts and int(t[j : m.end() - 1]) != 1:
                    mlen = 0
        if not mlen or (j + mlen < b and t[j + mlen] not in " \t"):
            return None
        mcol = jcol + mlen
        sp, k, _ = _indent(t, j + mlen, b, mcol, 0)
        empty = _blank(t, j + mlen, k, b)
        if empty and interrupts:
            return None  # an empty item cannot interrupt a paragraph
        if empty:
            self._open(matched, r, mcol - col + 1)
            self.empty_item = True
            self.leaf = _NONE
            return -1, 0, 0
        if k != -1 and sp <= 4:
            self._open(matched, r, mcol + sp - col)
            return k, mcol + sp, 0
        if k != -1 and t.find("\t", j + mlen, k) != -1 and _fence_at(t, k, b):
            # Tabs after a marker inside quotes are counted differently by the reference
            # implementation, which may find a fence here: take the fence, and the narrowest
            # item (masking more, never less).
            self._open(matched, r, mcol + 1 - col)
            return k, mcol + sp, 0
        self._open(matched, r, mcol + 1 - col)  # five or more: indented code after one column
        return _consume(t, j + mlen, mcol, 0, 1)

    def _leaf(self, j: int, ch: str, para: bool, lazy: bool, matched: int) -> None:
        """The leaf block starting at ``j`` (no container opens there)."""
        t, base, a, b, r = self.line
        stack = self.stack
        if ch in "`~" and _fence_at(t, j, b):
            k = j
            while k < b and t[k] == ch:
                k += 1
            del stack[matched:]
            self._close_para(r)
            self.leaf, self.fch, self.flen, self.forigin = _FENCE, ch, k - j, base + j
            self._code(base + a, base + b, base + j)
            if self.fog:
                self._html_code(t, base, j, b, [])  # another tab reading may see a paragraph
            return
        if ch in "=-" and para and not lazy and _SETEXT().fullmatch(t, j, b):
            self._close_para(r)  # a setext heading's underline
            self.leaf = _NONE
            return
        if _is_break(t, j, b, ch):
            del stack[matched:]
            self._close_para(r)
            self.leaf = _NONE
            return
        if ch == "#" and _ATX().match(t, j, b):
            del stack[matched:]
            self._close_para(r)
            self.leaf = _NONE
            self._runs(t, base, j, b)  # a heading's inline content: one line
            self._end_para(r)
            return
        if ch == "<" and self._html_starts(j, para, matched):
            return
        if not para:
            del stack[matched:]
            self.leaf = _PARA
        self._runs(t, base, j, b, first=not para)

    def _html_starts(self, j: int, para: bool, matched: int) -> bool:
        """Does an HTML block start at ``j`` (kind 7 cannot interrupt a paragraph)?"""
        t, _, _, b, r = self.line
        for kind, (start, end) in enumerate(_HTML()):
            if (kind < 6 or not para) and start.match(t, j, b):
                del self.stack[matched:]
                self._close_para(r)
                self.leaf, self.html_end = _HTML_BLOCK, end
                if end is not None and end.search(t, j, b):
                    self.leaf = _NONE
                self._html_code(t, self.line[1], j, b, None)
                return True
        return False

    def _code(self, s: int, e: int, origin: int = -1) -> None:
        """``[s, e)`` is code, opened at ``origin`` (default ``s``: a fence's lines give its
        opener). Regions stay disjoint and in order: one starting at or after ``s`` is taken in
        (each is taken in once: O(1) amortised); a region keeps the least and the greatest
        origin of those merged into it."""
        if origin < 0:
            origin = s
        lo = hi = origin
        regions = self.regions
        while regions and regions[-1][0] >= s:
            _, e0, lo0, hi0 = regions.pop()
            e, lo, hi = max(e, e0), min(lo, lo0), max(hi, hi0)
        if regions and regions[-1][1] >= s:
            s0, e0, lo0, hi0 = regions[-1]
            regions[-1] = (s0, max(e, e0), min(lo, lo0), max(hi, hi0))
        else:
            regions.append((s, e, lo, hi))

    # -- HTML code elements -----------------------------------------------------------------
    def _html_code(self, t: str, base: int, x: int, b: int, spans: list[tuple[int, int]] | None) -> None:
        """Raw HTML in ``t[x:b]``: an HTML block's line (``spans`` None), or a paragraph's or
        heading's, where only raw inline HTML counts: a tag outside the code spans decided in
        the line, whole by CommonMark's grammar or left open by the line's end; from the first
        undecided backtick run on, in doubt. ``<pre>`` and ``<code>`` (which nest: counted per
        name) and comments, ``<script>``, ``<style>`` and ``<textarea>`` (whose content is
        raw text: only their own close ends them) make code from their opener to their close
        tag, over lines and blocks. In doubt an opener opens and a close does not close (in a
        paragraph a tag is in doubt inside another construct, after a backslash or a link's
        ``](``, left open by the line's end or after a construct an earlier line left open, in
        the lines of a comment left open, and when it holds whitespace only the reference reads
        as such (``_S``); a close tag the line's end leaves open is in doubt anywhere; the tags
        in a comment in doubt are read on); raw text that may or may not open or close, or
        opens inside ``<pre>`` or ``<code>``, and a comment opening there in HTML, hide or show
        every later tag depending on the reading, so all from there is code (``_dead``); a
        comment's ``-->`` ends it only in HTML, or in the paragraph the comment opened in;
        counts past ``MAX_CONTAINERS`` make everything after code (fail closed, bounded). An
        element open when the line began covers it from its start. O(line): each search
        starts where the last one ended, and the spans are walked once."""
        a = self.line[2]
        self.hline = True
        undecided = self.ro[self.walk] if spans is not None and self.walk < len(self.ro) else _BIG
        if self.fog:
            undecided = -1  # the readings may part on the blocks here: every tag in doubt,
            spans = spans or []  # in a line either reading may take for HTML or text
        k = 0
        pos = x
        start = a if self._in_html_code() else -1
        inline = None if spans is None else _Inline(t, base, x, b, spans)
        soft = self.hsoft and spans is not None  # a comment the paragraph left open goes on here
        # A construct an earlier line left open may go on here, hiding tags: all in doubt.
        pending = self.hopen and spans is not None
        hidden = -1  # the end of an inline comment in doubt, whose tags are read on
        if soft:
            end = _COMMENT_END().search(t, x, b)
            self._code(base + a, base + (b if end is None else end.end()), self.horigin)
            self.hsoft = end is None
        while True:
            m = (_HTML_TAGS() if self.hraw is None else self.hraw).search(t, pos, b)
            if m is None:
                break
            h = base + m.start()
            pos = m.end()
            if spans is not None:
                while k < len(spans) and spans[k][1] <= h:
                    k += 1
                if k < len(spans) and spans[k][0] <= h:
                    continue  # inside a code span: no HTML
            # In a line of a comment the paragraph left open, a tag is hidden in one reading
            # (the comment closes later, or at a `-->` the readings place apart) and read in
            # the other: in doubt.
            doubt = h >= undecided or soft or (self.hsoft and spans is not None) or pending
            # In a paragraph a tag counts where a construct starts; one inside another (an
            # attribute, a declaration, a link's destination), escaped or left open is in doubt.
            real = 1 if inline is None else inline.at(m.start())
            if (
                real == 1
                and t[m.start() + 1] == "/"
                and (t[m.end() - 1] != ">" or _ODD_SPACE().search(t, m.start(), m.end()) is not None)
            ):
                real = -1  # left open by the line's end, or a close only in the reference's reading (`_S`)
            if self.hraw is not None:  # the raw text's own close
                if spans is not None and self.hraw is _COMMENT_END():
                    continue  # a comment's end in a paragraph is text: no end
                if doubt or real != 1:
                    # A close that may or may not end the raw text: the readings part on every
                    # tag after it (the text hides them in one). All from here on is code.
                    self._dead(base + start if start >= 0 else h, h)
                    return
                self.hraw = None
            else:
                name = m.group(1)
                if m.group(2) is not None:  # a close tag: of an open element, or nothing
                    i = _NESTING.get(m.group(2).lower(), -1)
                    if doubt or real != 1 or i < 0 or self.hcount[i] == 0:
                        continue
                    self.hcount[i] -= 1
                elif name is not None and not doubt and real == 0:
                    continue  # not a tag by CommonMark's grammar: text
                elif name is not None and name.lower() not in _NESTING and (doubt or real != 1 or any(self.hcount)):
                    # Raw text (<script>, <style>, <textarea>) hides every tag to its own close.
                    # Where it may or may not open (in doubt, hidden, left open), or opens inside
                    # <pre> or <code> (a browser reads it as raw text; markdown-it-py's tokens,
                    # one element open at a time, go on to the outer close and what follows),
                    # the readings part on every tag after it. All from here on is code.
                    self._dead(base + start if start >= 0 else h, h)
                    return
                elif name is None and (self.fog or (spans is None and any(self.hcount))):
                    # A comment where the readings part on the blocks: an HTML block's (to its
                    # `-->` in HTML, hiding the tags in it) in one, inline (read on) in the
                    # other. Or one in HTML inside <pre> or <code>: a browser's comment, hiding
                    # the tags in it; no tag in markdown-it-py's one-element reading, where a
                    # `</pre>` in it closes and a `<script>` opens. All from here on is code:
                    # fail closed, bounded.
                    self._dead(base + start if start >= 0 else h, h)
                    return
                elif spans is not None and name is None:
                    # An inline comment: code to its end. One the line leaves open is code to
                    # its `-->` in the paragraph (or the paragraph's end), but may be text if it
                    # never closes, so the tags in it are read on as well (fail closed). While
                    # one is left open, the line's rest is code already and a later opener is
                    # read as any tag in doubt, not matched again to the line's end (which made
                    # `<!-- ` repeated cost quadratic time): each character is scanned once.
                    # One in doubt (a code span may hold its start; it is escaped, or inside
                    # another construct) may be no comment, and the tags in it count: code to
                    # its end, and the tags in it read on, in doubt (an opener there lies in
                    # that code already: not matched again).
                    if self.hsoft or m.start() < hidden:
                        continue
                    full = _INLINE_HTML().match(t, m.start(), b, partial=True)
                    if full is not None and not full.partial:
                        self.work += full.end() - m.start()
                        self._code(h, base + full.end())
                        if doubt or real != 1:
                            hidden = full.end()
                        else:
                            pos = full.end()
                    else:
                        self.work += b - m.start()
                        self._code(h, base + b)
                        self.hsoft, self.horigin = True, h
                    continue
                else:
                    if start < 0:
                        start, self.horigin = m.start(), h
                    i = _NESTING.get((name or "").lower(), -1)
                    if i >= 0:
                        self.hcount[i] += 1
                        if self.hcount[i] > MAX_CONTAINERS:
                            self._dead(base + start, h)  # nesting past the bound: all code from here
                            return
                    else:
                        self.hraw = _HTML_CODE_CLOSE()[None if name is None else name.lower()]
            if start >= 0 and not self._in_html_code():
                self._code(base + start, base + pos, self.horigin)
                start = -1
        if start >= 0:
            self._code(base + start, base + b, self.horigin)
        if inline is not None:
            self.hopen = self.hopen or inline.left_open()
            self.work += inline.work

    def _dead(self, code: int, h: int) -> None:
        """Everything from ``h`` on is code (and ``[code, h)`` too): nothing more is read. The
        open paragraph does not end at ``h``: a backtick run before it still waiting for its
        pairing may pair with one after, so it is code from there (fail closed)."""
        ro, ro_len = self.ro, self.ro_len
        for w in range(self.walk, len(ro)):  # O(1) amortised: the runs are cleared below
            if ro_len[w] and ro[w] < h:
                self._code(ro[w], h)  # opened by the run
                break
        if code < h:
            self._code(code, h, self.horigin)
        self._end_para(h)
        self.dead = h

    def _in_html_code(self) -> bool:
        return self.hraw is not None or any(self.hcount)

    # -- code spans -----------------------------------------------------------------------
    def _runs(self, t: str, base: int, j: int, b: int, first: bool = False) -> None:
        """Record a paragraph line's backtick runs (``first``: the paragraph's first line).
        O(line) in C, O(1) per run."""
        self.leaf = _PARA if self.leaf == _NONE else self.leaf
        if first and t.startswith("[", j) and _maybe_definition(t, j, b):
            self.definition = base + j
            self.fog_at = base + j  # the paragraph's first line: nothing was in doubt yet
        if self.fog:
            self.fog_at = 0
        elif self.fog_at == -1:
            # Both look for a character first (a `](`, a `<`): found here in C, the calls are
            # left out where they would find nothing.
            if t.find("](", j, b) != -1:
                self._links(t, base, j, b)
            if t.find("<", j, b) != -1:
                self._inline_html(t, base, j, b)
        ro, ro_len, re_, rn, waiting = self.ro, self.ro_len, self.re_, self.rn, self.waiting
        lo = j
        for m in _BACKTICKS().finditer(t, j, b):
            p, q = m.span()
            k = p
            while k > lo and t[k - 1] == "\\":
                k -= 1
            lo = q
            escaped = (p - k) % 2
            index = len(ro)
            for w in waiting.pop(q - p, ()):
                rn[w] = index  # the first later run of its length closes it
            ro.append(base + p + escaped)
            ro_len.append(q - p - escaped)
            re_.append(base + q)
            rn.append(-1)
            if q - p - escaped:
                waiting.setdefault(q - p - escaped, []).append(index)
        self.spans.clear()
        if ro:  # with no run the walk has nothing to advance over
            self._pair(-1)
        if t.find("<", j, b) != -1 or self._in_html_code() or self.hsoft:
            # A comment an earlier line of the paragraph left open goes on here: code, with
            # or without a tag in the line.
            self._html_code(t, base, j, b, self.spans)

    def _links(self, t: str, base: int, j: int, b: int) -> None:
        """A link's destination and title hide their backticks (the link is read at its ``[``,
        before a run inside it). From a ``](`` whose tail may hold a backtick, or may go on
        past the line's end, the paragraph fails closed (``fog_at``), as for raw HTML. Each
        attempt reads at most to the next backtick; past twice the line's length in all, the
        paragraph fails closed too: O(line)."""
        budget = 2 * (b - j) + 64
        h = t.find("](", j, b)
        while h != -1:
            r = t.find("`", h, b)
            stop = b if r == -1 else r + 1
            budget -= stop - h
            self.work += stop - h
            tail = _LINK_TAIL().match(t, h + 1, stop, partial=True)
            if budget < 0 or (tail is not None and tail.partial):
                self.fog_at = base + h
                return
            h = t.find("](", h + 2, b)

    def _inline_html(self, t: str, base: int, j: int, b: int) -> None:
        """Raw HTML and autolinks bind as tightly as code spans (leftmost start wins) and hide
        the backticks in them. The mask does not pair them with runs: from one holding a
        backtick, or left open by the line's end, the paragraph fails closed (``fog_at``). One
        without a backtick changes no pairing. Each attempt stops at the first quote, ``>`` or
        terminator past its start, or at the line's end, which ends the search."""
        h = j
        while True:
            m = _INLINE_START.search(t, h, b)
            if m is None:
                return
            h = m.start()
            full = _INLINE_HTML().match(t, h, b, partial=True)
            if full is None:
                h += 1
                continue
            self.work += full.end() - h
            if full.partial or t.find("`", h, full.end()) != -1:
                if self.fog_at == -1 or base + h < self.fog_at:
                    self.fog_at = base + h
                return
            h = full.end()

    def _pair(self, ended: int) -> None:
        """Advance the pairing walk as far as is decided; ``ended`` (the offset where the
        paragraph's end was known) decides the openers left without a closer."""
        ro, ro_len, re_, rn = self.ro, self.ro_len, self.re_, self.rn
        w = self.walk
        fog = self.fog_at
        while w < len(ro):
            if fog != -1 and ro[w] >= fog and ro_len[w]:
                # Failing closed: from the first run that pairs, code to the paragraph's end
                # (once known); a run left without a pair is decided as below.
                if rn[w] >= 0 and ended >= 0:
                    self._code(ro[w], ended)
                    w = len(ro)
                elif rn[w] < 0 and ended >= 0:
                    if ended - self.head > ro[w]:
                        self._code(ro[w], ended - self.head)
                    w += 1
                else:
                    break
            elif ro_len[w] == 0:
                w += 1
            elif rn[w] >= 0:
                self._code(ro[w], re_[rn[w]])
                self.spans.append((ro[w], re_[rn[w]]))
                w = rn[w] + 1
            elif ended >= 0:
                if ended - self.head > ro[w]:
                    self._code(ro[w], ended - self.head)  # decided too late: fail closed
                w += 1
            else:
                break
        self.walk = w

    def _close_para(self, r: int) -> None:
        if self.leaf == _PARA:
            self._end_para(r)
            self.leaf = _NONE

    def _end_para(self, r: int) -> None:
        if self.ro:
            self._pair(r)
            self.ro.clear()
            self.ro_len.clear()
            self.re_.clear()
            self.rn.clear()
            self.waiting.clear()
            self.walk = 0
        self.fog_at = -1
        self.definition = -1
        self.hsoft = False  # a comment left open by its paragraph was text in CommonMark
        self.hopen = False
        if self.leaf == _PARA:
            self.leaf = _NONE
