"""What a dialect is: literal markers plus one small bounded reader, and the reader's results.

A reader is called at one marker occurrence and reads forward only as far as its payload
goes. It answers with a ``Found`` (a span and the calls in it, or the reason it is refused),
``None`` (not this dialect's payload: let the next dialect for this marker try), or, while
streaming (``ctx.final`` is False), ``NEED_MORE`` when the answer depends on text not yet
seen. Readers must be *prefix-stable*: a definite answer on a prefix is the answer on the
whole text. Every reader is linear in what it reads and never recurses with input depth.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from .._limits import DEFAULT_LIMITS
from .._names import NameTable
from .._types import RepairEvent, ToolCall

__all__ = [
    "ANY_TOOL",
    "LOOKBEHIND",
    "NEED_MORE",
    "AnyTool",
    "ContentBuilder",
    "Dialect",
    "Found",
    "Gate",
    "NeedMore",
    "RawCall",
    "ReadContext",
    "ReasoningBuilder",
    "build_content",
    "build_fields",
    "expect_literal",
    "found_calls",
    "named_refusal",
    "offered_name",
    "salvaged_call",
    "skip_ws",
    "skip_ws_match",
    "startswith_ci",
]


class AnyTool:
    """The type of ``ANY_TOOL``: accept every name (an explicit opt-out of the allowlist)."""

    _instance: AnyTool | None = None

    def __new__(cls) -> AnyTool:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ANY_TOOL"

    def __reduce__(self) -> str:
        return "ANY_TOOL"


ANY_TOOL: Final = AnyTool()


class NeedMore:
    """Streaming only: the reader cannot decide until more text arrives."""

    _instance: NeedMore | None = None

    def __new__(cls) -> NeedMore:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NEED_MORE"

    def __bool__(self) -> bool:
        return False


NEED_MORE: Final = NeedMore()


# A reader may look at most this many characters before its marker (e.g. "is this at the
# start of a line", "does `</think>` precede me"): a stream keeps that much text behind the
# markers still to read, and a reader may be handed a window of the text that begins there
# (then ``ReadContext.first_nonspace`` is relative to that window and may be negative).
LOOKBEHIND: Final = 512


@dataclass(frozen=True, slots=True)
class RawCall:
    """A call as the dialect wrote it, before the allowlist. ``error`` refuses this call alone;
    ``repairs`` are the payload repairs reading it took (``decode`` events), carried to the call.
    ``fence``: where the dialect's own syntax fences the payload (DeepSeek V3's ```` ```json ````
    … ```` ``` ````), the opener's offset and the end of its closing run. The mask ends that
    fence there: a dialect's syntax opens no code past its call, an argument's text may."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None
    error: str | None = None
    repairs: tuple[RepairEvent, ...] = ()
    fence: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Found:
    """A candidate spanning ``[start, end)``: its calls, or ``error`` refusing all of it (then
    ``calls`` may hold the refused call's name, for the ``Rejection``: never run).

    On an error, scanning resumes right after the marker (so a valid call nested in a broken
    one is still found) unless the reader says ``resume``. ``markup``, on an error: the region
    is the dialect's own markup (a section of special tokens that held no call), taken out of
    the content as a call's region is, and not read again.
    """

    end: int
    calls: tuple[RawCall, ...] = ()
    error: str | None = None
    resume: int | None = None
    markup: bool = False


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader may know besides the text: limits, whether the text is complete, and
    whether a model profile decided the dialect (``decided``).

    ``decided``: the user named the model (a ``ModelProfile``), so its grammar is known, and a
    call region that ends at its wrapper's own closing marker, after a structure that agrees
    (``</parameter>``, ``</function>``, ``</tool_call>`` in order), is final: nothing after it
    can reopen a value. Without a profile an XML-family reader also looks past the wrapper's
    closer for a later closing tag that would give a value more text (``_xml_text``), which
    needs text after the call; with one, the call is released the moment it closes.

    ``offered``: the allowlist's names (None under ``ANY_TOOL``, or for a reader called
    outside a pass). Most readers never look at it: the engine checks every name read. A
    dialect whose marker is the tool's own name (Cline's ``<read_file>``) reads only where
    the tag names an offered tool, so a tag of any other name is text, not a rejection, and
    under ``ANY_TOOL`` it reads nothing."""

    final: bool = True
    max_depth: int = DEFAULT_LIMITS.max_depth
    max_call_chars: int = DEFAULT_LIMITS.max_call_chars
    first_nonspace: int = 0
    max_name_chars: int = DEFAULT_LIMITS.max_name_chars
    decided: bool = False
    offered: NameTable | None = None


@dataclass(frozen=True, slots=True)
class Gate:
    """Where a dialect's reader can accept one of its markers at all, checked by the marker
    scan in C before any reader runs: an occurrence that fails the gate of every dialect of
    its marker is never handed to a reader.

    ``pattern``: a regex (``re`` syntax, case as written) that must match right after the
    marker; a fixed-width lookbehind may look at the marker and before it (``(?<=\\s\\{)``).
    ``lead``: a regex matched at the reply's first non-space character; the reader is called
    only for the occurrence starting where it ends (``""``: only the first non-space one),
    and then only if ``pattern`` (when given) matches too.

    A gate must be *sound*: where it fails, the reader would answer ``None`` or refuse with
    no effect beyond its own marker. And prefix-stable: wherever the text may end before the
    reader decides, the pattern must match (add ``\\Z`` alternatives), so a stream that
    has only part of a candidate does not skip it. Bounded quantifiers only: a gate runs at
    every occurrence and must not backtrack beyond a few characters.
    """

    pattern: str | None = None
    lead: str | None = None


@runtime_checkable
class Dialect(Protocol):
    """A text tool-call format: a name, literal opening markers, and a reader.

    Markers are matched case-insensitively (give them in lower case) and must contain a
    character that is not a letter or digit. ``reasoning`` lists extra (open, close) pairs of
    reasoning markers that join the mask (open may be None: a close alone masks what precedes);
    a third element ``False`` says a close with no opener is not forced-open reasoning (a close
    marker shared with other messages, like harmony's ``<|end|>``). ``gates`` (optional, a
    mapping from marker to ``Gate``) lets the scan skip occurrences the reader would refuse
    anyway; a marker with no gate is handed to the reader at every occurrence. ``closers``
    (optional, lower case) are the literal markers its calls end with (``</tool_call>``): a
    stream waiting on one of its candidates re-reads it at once where one was just fed; only
    timing depends on them, never an answer.
    """

    @property
    def name(self) -> str: ...

    @property
    def markers(self) -> Sequence[str]: ...

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        """Read the candidate whose marker spans ``[start, marker_end)``."""
        ...


_WS = re.compile(r"\s*")
# What ``str.splitlines`` breaks on: a whitespace run holding one ends a line.
_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# ``skip_ws`` without the Python frame, for hot readers: ``skip_ws_match(text, i).end()``.
skip_ws_match: Final[Callable[[str, int], re.Match[str]]] = _WS.match  # type: ignore[assignment]  # always matches


def skip_ws(text: str, i: int) -> int:
    """Index of the first non-whitespace character at or after ``i`` (O(whitespace run))."""
    return _WS.match(text, i).end()  # type: ignore[union-attr]  # `\s*` always matches


def startswith_ci(text: str, literal: str, i: int) -> bool:
    """``text[i:]`` starts with ``literal`` (given in lower case), ignoring case."""
    return text[i : i + len(literal)].lower() == literal


def expect_literal(text: str, i: int, literal: str, ctx: ReadContext) -> bool | NeedMore:
    """True when ``literal`` (lower case) is at ``i``; NEED_MORE when the text ends inside a
    prefix of it and more may come; False otherwise."""
    got = text[i : i + len(literal)].lower()
    if got == literal:
        return True
    if not ctx.final and len(got) < len(literal) and literal.startswith(got):
        return NEED_MORE
    return False


def named_refusal(found: Found | NeedMore | None, name: str) -> Found | NeedMore | None:
    """``found``, with a refusal of the whole candidate (``Found(end, error=...)``) given as one
    refused call of ``name``: for a dialect that reads the name before the payload, so the
    rejection names the tool, and the region is one rejection (its inner markers are not
    read again, as after any candidate of calls). O(1)."""
    if isinstance(found, Found) and found.error is not None and not found.calls:
        return Found(max(found.end, found.resume or 0), (RawCall(name, {}, None, found.error),))
    return found


def found_calls(end: int, calls: Sequence[RawCall]) -> Found | None:
    """The calls a reader has read, ending its candidate at ``end``; None when it read none
    (the text is not this dialect's)."""
    return Found(end, tuple(calls)) if calls else None


class ContentBuilder:
    """The content rule, fed in text order: the text between cuts, and the cuts (calls,
    reasoning regions, chat-channel markup). The one implementation of the rule, for the
    whole text (``build_fields``) and a stream (``_stream``) alike.

    A cut removes its own text and no more of the model's, except where the removal would
    leave a line or the content's edge ragged:

    - whitespace just before a cut goes when it holds a line break (the cut stood on its own
      line) or nothing was kept since the last cut (it would lead the content or stand between
      two cuts); a run within a line stays, as the engines leave it (``"Sure. "``);
    - whitespace just after a cut goes when nothing was kept before it or nothing follows it.

    With no cut the text comes back unchanged. ``text`` returns what is certain at once (all
    but a trailing whitespace run, which waits for what follows), ``cut`` the run it keeps,
    ``finish`` the rest. O(len(piece)) per piece.

    >>> b = ContentBuilder()
    >>> b.text("Sure. "), b.cut(), b.text("  "), b.finish()
    ('Sure.', ' ', '', '')
    >>> b = ContentBuilder()
    >>> b.text("Sure.\\n"), b.cut(), b.text(" Done."), b.finish()
    ('Sure.', '', ' Done.', '')
    """

    __slots__ = ("_any_cut", "_kept", "_kept_since_cut", "_ws")

    def __init__(self) -> None:
        self._ws: list[str] = []  # the whitespace run waiting for what follows it
        self._any_cut = False
        self._kept = False  # anything kept so far
        self._kept_since_cut = False

    def text(self, piece: str) -> str:
        if not piece:
            return ""
        ws = self._ws
        if self._kept:
            body = piece.rstrip()
            if not body:
                ws.append(piece)
                return ""
            trail = piece[len(body) :]
            if ws:
                body = "".join(ws) + body
                ws.clear()
            if trail:
                ws.append(trail)
            self._kept_since_cut = True
            return body
        body = piece.strip()
        if not body:
            ws.append(piece)
            return ""
        lead = len(piece) - len(piece.lstrip())
        out = ""
        if not self._any_cut:  # leading whitespace goes only after a cut, with nothing kept
            out = "".join(ws) + piece[:lead]
        ws.clear()
        trail = piece[lead + len(body) :]
        if trail:
            ws.append(trail)
        self._kept = self._kept_since_cut = True
        return out + body

    def cut(self) -> str:
        ws = self._ws
        out = "".join(ws) if ws and self._kept_since_cut else ""
        if out and _LINE_BREAK.search(out):
            out = ""
        ws.clear()
        self._any_cut = True
        self._kept_since_cut = False
        return out

    def finish(self) -> str:
        out = "".join(self._ws) if not self._any_cut or self._kept_since_cut else ""
        self._ws.clear()
        return out


class ReasoningBuilder:
    """The reasoning rule, fed in text order: each region's text (markers excluded) stripped
    of its leading and trailing whitespace, the regions that hold any text joined by a blank
    line. Like ``ContentBuilder``, ``text`` returns what is certain at once (a trailing
    whitespace run waits for the region to go on). Whitespace goes only beside a marker, as
    in the content: a region the reply ends inside (cut off, no marker after it) keeps its
    trailing whitespace (``cut_off``). O(len(piece)) per piece.

    >>> b = ReasoningBuilder()
    >>> b.text(" I only need "), b.cut_off()
    ('I only need', ' ')
    """

    __slots__ = ("_in_body", "_started", "_ws")

    SEPARATOR = "\n\n"

    def __init__(self) -> None:
        self._ws: list[str] = []  # the whitespace run waiting for the region to go on
        self._started = False  # some region held text
        self._in_body = False  # the current region has held text

    def text(self, piece: str) -> str:
        ws = self._ws
        if not self._in_body:
            piece = piece.lstrip()
            if not piece:
                return ""
            lead = self.SEPARATOR if self._started else ""
            self._started = self._in_body = True
        else:
            lead = ""
        body = piece.rstrip()
        if not body:
            ws.append(piece)
            return ""
        if ws:
            lead += "".join(ws)
            ws.clear()
        if len(body) < len(piece):
            ws.append(piece[len(body) :])
        return lead + body

    def close(self) -> None:
        """The current region ends: its trailing whitespace goes."""
        self._ws.clear()
        self._in_body = False

    def cut_off(self) -> str:
        """The reply ended inside the current region: its trailing whitespace, which no
        marker follows, is the region's text too."""
        out = "".join(self._ws)
        self.close()
        return out


def build_fields(text: str, cuts: Sequence[tuple[int, int, int, int]]) -> tuple[str, str]:
    """The content and the reasoning of ``text`` given its cuts (``_marks.Cut``s in text
    order): ``ContentBuilder`` over the text between them, ``ReasoningBuilder`` over the
    reasoning regions' insides. O(len(text))."""
    if not cuts:
        return text, ""
    content = ContentBuilder()
    reasoning = ReasoningBuilder()
    out: list[str] = []
    thought: list[str] = []
    prev = 0
    for s, e, inner_s, inner_e in cuts:
        out.append(content.text(text[prev:s]))
        out.append(content.cut())
        if inner_e > inner_s:
            thought.append(reasoning.text(text[inner_s:inner_e]))
            if inner_e == e == len(text):  # reasoning to the reply's end: no close marker
                thought.append(reasoning.cut_off())
            else:
                reasoning.close()
        prev = e
    out.append(content.text(text[prev:]))
    out.append(content.finish())
    return "".join(out), "".join(thought)


def build_content(text: str, cuts: Sequence[tuple[int, int]]) -> str:
    """The text with the cut spans removed, tidied where the cuts were (``ContentBuilder``'s
    rule). With no cut the text comes back unchanged."""
    return build_fields(text, [(s, e, s, s) for s, e in cuts])[0]


def salvaged_call(offered: str, raw: RawCall, dialect: str, span: tuple[int, int]) -> ToolCall:
    """The call a reader's ``raw`` call stands for under its ``offered`` name, carrying the
    repairs reading it took: the name as written when it drifted (or had a namespace), then
    the payload's repairs, each naming the tool. The registry budgets them when it runs it."""
    repairs = raw.repairs
    if repairs:
        repairs = tuple(
            RepairEvent(e.kind, e.message, offered, e.before, e.after, e.path) if e.tool is None else e for e in repairs
        )
    if offered != raw.name:
        message = f"Self-repaired tool name {raw.name!r} -> {offered!r}"
        repairs = (RepairEvent("name", message, offered, raw.name, offered), *repairs)
    return ToolCall(offered, raw.arguments, raw.id, dialect, span, repairs=repairs)


def offered_name(names: NameTable | None, name: str) -> str | None:
    """The offered name a call's written ``name`` stands for, or None (a ``not-offered``
    rejection). ``names`` is the allowlist's ``NameTable``, or None for ``ANY_TOOL`` (any
    name but the empty one). A name offered as written skips normalising: the common case."""
    if names is None:
        return name or None
    if name in names:
        return name
    return names.resolve(name)[0]
