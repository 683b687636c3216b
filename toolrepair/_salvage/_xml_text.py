"""Raw-text values between XML-style tags, and tag attributes, read in one bounded pass.

Shared by the XML-style dialects (Qwen3-Coder, GLM, the invoke/parameter family). A value is
raw text up to its closing tag; a closing tag that is *not* followed by what the format puts
after it (``</parameter>`` then ``<parameter=`` or ``</function>`` ...) is part of the value,
so values quoting the markup survive. A value scan visits each ``<`` once.

Linear overall: a scan gives up after crossing ``MAX_CROSSINGS`` of its own reader's opening
markers inside values, so however many markers a hostile text repeats, each character is
scanned by at most ``MAX_CROSSINGS + 2`` reads of one reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws, startswith_ci

__all__ = ["MAX_CROSSINGS", "ValueSpec", "any_at", "call_at_end", "read_attrs", "read_value", "value_or_refusal"]

MAX_CROSSINGS = 8
MAX_HEAD_CHARS = 1024
_CDATA_OPEN = "<![cdata["

# One attribute: name = "value" | 'value' | bare. Bounded repeats: linear per head.
_ATTR = re.compile(r"""\s*([\w:.-]{1,64})\s*=\s*(?:"([^"]{0,512})"|'([^']{0,512})'|([^\s"'>/]{1,512}))""")
_HEAD_END = re.compile(r"\s*/?>")


@dataclass(frozen=True, slots=True)
class ValueSpec:
    """How one format's values end (all literals lower case)."""

    close: str  # the value's closing tag
    successors: tuple[str, ...]  # what may follow a real closing tag (after whitespace)
    stops: tuple[str, ...] = ()  # tags that end a value whose closing tag is missing
    own: tuple[str, ...] = ()  # the reader's opening markers: crossings are counted
    cdata: bool = False  # `<![CDATA[...]]>` sections hold text verbatim


_LONGEST: dict[tuple[str, ...], int] = {}


def any_at(text: str, i: int, literals: tuple[str, ...], ctx: ReadContext) -> str | NeedMore | None:
    """The literal at ``i`` (NEED_MORE when the text ends inside one of them)."""
    longest = _LONGEST.get(literals)
    if longest is None:
        longest = _LONGEST.setdefault(literals, max((len(x) for x in literals), default=0))
    got = text[i : i + longest].lower()
    partial = False
    for lit in literals:
        if got.startswith(lit):
            return lit
        if not ctx.final and len(got) < len(lit) and lit.startswith(got):
            partial = True
    return NEED_MORE if partial else None


def read_value(
    text: str, i: int, spec: ValueSpec, ctx: ReadContext, crossings: int = 0
) -> tuple[str, int, bool, int] | NeedMore | str:
    """The raw value from ``i``: (value, index after it, closed, crossings so far).

    ``closed`` is False when a stop tag ended the value. ``crossings`` counts own markers
    quoted in values across one read (pass back the count from the previous value of the same
    read: the budget is per read, not per value). A string is the reason the value cannot be
    read. O(value length).
    """
    n = len(text)
    limit = min(n, i + ctx.max_call_chars)
    pieces: list[str] = []
    seg = j = i
    watch = (spec.close, *spec.stops, *spec.own) + ((_CDATA_OPEN,) if spec.cdata else ())
    while True:
        p = text.find("<", j, limit)
        if p == -1:
            return _out_of_room(text, limit, ctx)
        hit = any_at(text, p, watch, ctx)
        if isinstance(hit, NeedMore):
            return NEED_MORE
        if hit == spec.close:
            ends = _closes_value(text, p + len(hit), spec, ctx)
            if ends is NEED_MORE:
                return NEED_MORE
            if ends:
                pieces.append(text[seg:p])
                return "".join(pieces), p + len(hit), True, crossings
        elif hit in spec.stops:
            pieces.append(text[seg:p])
            return "".join(pieces), p, False, crossings
        elif hit == _CDATA_OPEN:
            got = _cdata_end(text, p + len(hit), limit, spec, ctx, crossings=crossings)
            if not isinstance(got, tuple):
                return got
            e, crossings = got
            pieces.append(text[seg:p])
            pieces.append(text[p + len(hit) : e])
            seg = j = e + 3
            continue
        elif hit is not None:  # one of our own opening markers, quoted in a value
            crossings += 1
            if crossings > MAX_CROSSINGS:
                return "too-large"
        j = p + 1  # markup inside the value, not its end


def _closes_value(text: str, k: int, spec: ValueSpec, ctx: ReadContext) -> bool | NeedMore:
    """Whether the closing tag ending at ``k`` ends the value: what the format puts after
    one follows it (after whitespace), or the text ends there."""
    k = skip_ws(text, k)
    if k >= len(text):
        return NEED_MORE if not ctx.final else True
    after = any_at(text, k, spec.successors, ctx)
    if isinstance(after, NeedMore):
        return NEED_MORE
    return after is not None


def _out_of_room(text: str, limit: int, ctx: ReadContext) -> NeedMore | str:
    """No ``<`` before ``limit``: the value is too large, or the text ends inside it."""
    if limit < len(text):
        return "too-large"
    return NEED_MORE if not ctx.final else "truncated"


def value_or_refusal(
    text: str, i: int, spec: ValueSpec, ctx: ReadContext, crossings: int, *, tag: int | None = None
) -> tuple[str, int, bool, int] | Found | NeedMore:
    """``read_value``, with a value that cannot be read refused as its candidate: up to the
    end of the text when it is truncated, else up to ``tag`` (the value's opening tag;
    default ``i``). O(value length)."""
    got = read_value(text, i, spec, ctx, crossings)
    if isinstance(got, str):
        return Found(len(text) if got == "truncated" else i if tag is None else tag, error=got)
    return got


def call_at_end(text: str, name: str, arguments: dict[str, Any], j: int, ctx: ReadContext
                ) -> tuple[RawCall, int] | Found | NeedMore:
    """The call whose text ends after its arguments (the last ending at ``j``): the end of
    the reply ate the closing tags after a complete value; with no value yet, the call may
    have been cut short."""
    if not ctx.final:
        return NEED_MORE
    if not arguments:
        return Found(len(text), error="truncated")
    return RawCall(name, arguments), j


def _cdata_end(
    text: str, i: int, limit: int, spec: ValueSpec, ctx: ReadContext, *, crossings: int
) -> tuple[int, int] | NeedMore | str:
    """Index of the `]]>` closing a CDATA section, and the own markers crossed so far."""
    j = i
    while True:
        p = text.find("<", j, limit)
        e = text.find("]]>", j, limit if p == -1 else p)  # `]]>` holds no `<`
        if e != -1:
            return e, crossings
        if p == -1:
            return _out_of_room(text, limit, ctx)
        if any(startswith_ci(text, m, p) for m in spec.own):
            crossings += 1
            if crossings > MAX_CROSSINGS:
                return "too-large"
        j = p + 1


def read_attrs(text: str, i: int, ctx: ReadContext) -> tuple[dict[str, str], int] | NeedMore | None:
    """Attributes from ``i`` up to the tag's `>`: (attributes, index after `>`).

    None when the head is not attributes. O(MAX_HEAD_CHARS).
    """
    n = len(text)
    limit = min(n, i + MAX_HEAD_CHARS)
    gt = text.find(">", i, limit)
    if gt == -1:
        return NEED_MORE if not ctx.final and limit == n else None
    attrs: dict[str, str] = {}
    j = i
    while True:
        m = _ATTR.match(text, j, gt)
        if m is None:
            break
        value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
        attrs[m.group(1).lower()] = value
        j = m.end()
    end = _HEAD_END.match(text, j, gt + 1)
    if end is None or end.end() != gt + 1:
        return None
    return attrs, gt + 1
