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

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws, startswith_ci

__all__ = [
    "MAX_CROSSINGS",
    "ValueSpec",
    "any_at",
    "call_at_end",
    "dangling",
    "opening_tag",
    "read_attrs",
    "read_value",
    "refused_if_dangling",
    "unescape",
    "value_or_refusal",
]

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
    # Any opening tag `<word>` may follow a real closing tag too: the tag-per-parameter
    # formats (Cline's `<path>`), whose next key's name is not known in advance.
    open_tag: bool = False
    # The call's closer and the wrapper's, which follow the value's closing tag in order: a
    # closing tag followed by the wrapper's, the call's skipped, ends the value only as a stop
    # tag would (``read_value``), with a model profile or without. None: no wrapper closer.
    tail: tuple[str, str] | None = None
    # What may follow the call's closer inside the wrapper: the next call's opener
    # (`<function=`). Set where the two closers are the whole closing structure (Qwen3-Coder,
    # Seed-OSS): the call's closer followed by anything else is partial too.
    reopen: tuple[str, ...] = ()


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

    Two readings of a value can meet. Its own closing tag, where what the format puts after
    one follows (``</parameter>`` then ``<parameter=``, ``</function>``, ...), ends it
    (closed). A stop tag (the next key's tag, or the enclosing call's or block's closing tag)
    ends it where its own closing tag is missing (``closed`` False). A value with a stop tag in
    it is read on to see whether its own closing tag still comes: if it does, the stop tag
    was text when the structure after it disagrees (a closing tag not followed, in order, by
    the rest of the closers and then the end of the text or a new call), and otherwise the
    two readings give different values and the call is refused (``ambiguous``); if it does
    not, the stop tag ends the value. So a value is never returned shortened: it comes back
    as written or not at all. Its own closing tag followed by the wrapper's closer with the
    call's skipped (``</parameter>`` then ``</tool_call>``, no ``</function>``; ``spec.tail``)
    is such a stop too, with a model profile or without: a value ends at once only where the
    call's whole closing structure follows, as a profile's stream release assumes. Such a
    partial structure that agrees with a call's end replaces an earlier stop that did not.

    ``crossings`` counts own markers quoted in values across one read (pass back the count
    from the previous value of the same read: the budget is per read, not per value). A
    string is the reason the value cannot be read. O(value length + the read-on, which stops
    at ``MAX_CROSSINGS`` own markers or ``ctx.max_call_chars``).
    """
    n = len(text)
    limit = min(n, i + ctx.max_call_chars)
    pieces: list[str] = []
    seg = j = i
    watch = (spec.close, *spec.stops, *spec.own) + ((_CDATA_OPEN,) if spec.cdata else ())
    stop_at = -1  # the first stop tag met: where the value ends if its own tag never comes
    stop_end = -1  # where the text after that value goes on (past a closing tag, at a stop tag)
    stop_agrees = False
    while True:
        p = text.find("<", j, limit)
        if p == -1:
            if stop_at != -1 and (ctx.final or limit < n):
                return _stopped(text, seg, (stop_at, stop_end), pieces, crossings)
            return _out_of_room(text, limit, ctx)
        hit = any_at(text, p, watch, ctx)
        if isinstance(hit, NeedMore):
            return NEED_MORE
        if hit == spec.close:
            ends = _closes_value(text, p + len(hit), spec, ctx)
            if ends is NEED_MORE:
                return NEED_MORE
            partial = _partial_close(text, p + len(hit), spec, ctx) if ends else None
            if isinstance(partial, NeedMore):
                return NEED_MORE
            if partial is not None:  # a partial closing structure: a stop
                # A closing structure that agrees with a call's end after a stop that did not
                # (`v</function>` then `</parameter></tool_call>`): that stop was text.
                if stop_at == -1 or (partial and not stop_agrees):
                    stop_at, stop_end, stop_agrees = p, p + len(hit), partial
            elif ends:
                if stop_at != -1 and stop_agrees:
                    return "ambiguous"
                pieces.append(text[seg:p])
                return "".join(pieces), p + len(hit), True, crossings
        elif hit in spec.stops:
            if stop_at == -1:
                agrees = _stop_agrees(text, p, hit, spec, ctx)
                if isinstance(agrees, NeedMore):
                    return NEED_MORE
                stop_at, stop_end, stop_agrees = p, p, agrees
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
                if stop_at != -1:
                    return _stopped(text, seg, (stop_at, stop_end), pieces, crossings)
                return "too-large"
        j = p + 1  # markup inside the value, not its end


def _stopped(
    text: str, seg: int, stop: tuple[int, int], pieces: list[str], crossings: int
) -> tuple[str, int, bool, int]:
    """The value a stop ended (a closing tag that ends it where the structure after it agrees
    never came): ``stop`` is (where the value ends, where the text after it goes on); closed
    where the stop was the value's own closing tag with part of the structure after it
    skipped."""
    at, end = stop
    pieces.append(text[seg:at])
    return "".join(pieces), end, end != at, crossings


def _partial_close(text: str, k: int, spec: ValueSpec, ctx: ReadContext) -> bool | NeedMore | None:
    """After the value's closing tag ending at ``k``: None when what follows ends it at once
    (neither closer of ``spec.tail``: the next key, the end of the text; or both in order, or
    the call's then the next call's opener, ``spec.reopen``). Else the closing structure is
    partial, the call's closer skipped (``</parameter></tool_call>``) or followed by other
    text (``</parameter></function>x``, only where ``reopen`` is set): such a closing tag is a
    stop, ending the value only if no whole one comes after it, and the answer is whether that
    reading agrees with a call's end. Followed by text, it does (the call closed; its wrapper
    holds other text), so a whole closing structure later makes the value read two ways:
    ``ambiguous``. Skipped, what follows the wrapper's closer decides (``_after_closers``).
    One rule with a model profile and without. O(len of the closers)."""
    tail = spec.tail
    if tail is None:
        return None
    k = skip_ws(text, k)
    got = any_at(text, k, tail, ctx)
    if got is None or isinstance(got, NeedMore):
        return got
    if got == tail[1]:  # the call's closer skipped
        return _after_closers(text, k + len(got), (), spec, ctx)
    if not spec.reopen:  # a dialect whose calls may be followed by more markup (a token
        return None  # wrapper's own closers): only a skipped closer is read as partial
    k = skip_ws(text, k + len(got))
    after = any_at(text, k, (tail[1], *spec.reopen), ctx)
    return after if isinstance(after, NeedMore) else (None if after is not None else True)


def _stop_agrees(text: str, p: int, stop: str, spec: ValueSpec, ctx: ReadContext) -> bool | NeedMore:
    """Whether the structure after the stop tag at ``p`` is what a missing closing tag would
    leave: an opening stop (the next key) always is; a closing one must be followed, in
    order, by the closing stops after it and then the end of the text or a new call.
    O(len of the closers)."""
    if not stop.startswith("</"):
        return True
    closers = [s for s in spec.stops if s.startswith("</")]
    return _after_closers(text, p + len(stop), tuple(closers[closers.index(stop) + 1 :]), spec, ctx)


def _after_closers(text: str, k: int, later: tuple[str, ...], spec: ValueSpec, ctx: ReadContext) -> bool | NeedMore:
    """From ``k``, past each of ``later`` that comes in order: whether the end of the text or
    one of our own markers (a new call) follows. O(len of the closers)."""
    for close in later:
        k = skip_ws(text, k)
        got = any_at(text, k, (close,), ctx)
        if isinstance(got, NeedMore):
            return NEED_MORE
        if got is not None:
            k += len(got)
    k = skip_ws(text, k)
    if k >= len(text):
        return NEED_MORE if not ctx.final else True
    got = any_at(text, k, spec.own, ctx) if spec.own else None
    if isinstance(got, NeedMore):
        return NEED_MORE
    return got is not None


def _closes_value(text: str, k: int, spec: ValueSpec, ctx: ReadContext) -> bool | NeedMore:
    """Whether the closing tag ending at ``k`` ends the value: what the format puts after
    one follows it (after whitespace), or the text ends there."""
    k = skip_ws(text, k)
    if k >= len(text):
        return NEED_MORE if not ctx.final else True
    after = any_at(text, k, spec.successors, ctx)
    if isinstance(after, NeedMore):
        return NEED_MORE
    if after is None and spec.open_tag:
        tag = opening_tag(text, k, ctx)
        return tag if isinstance(tag, NeedMore) else tag is not None
    return after is not None


# An opening tag with no attributes, `<path>`: a name from a bounded run, then `>`.
_OPENING_TAG = re.compile(r"<([A-Za-z_][\w.:-]{0,127})>")
_TAG_NAME_RUN = re.compile(r"<(?:[A-Za-z_][\w.:-]{0,127})?\Z")


def opening_tag(text: str, k: int, ctx: ReadContext) -> str | NeedMore | None:
    """The name of the opening tag ``<word>`` (no attributes) at ``k``, None when there is
    none, NEED_MORE while a stream ends inside what may be one. O(the tag's length, at most
    130 characters)."""
    m = _OPENING_TAG.match(text, k)
    if m is not None:
        return m.group(1)
    if not ctx.final and (k == len(text) or _TAG_NAME_RUN.match(text, k) is not None):
        return NEED_MORE
    return None


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
        # An ambiguous value refuses its whole candidate to the end of its region: the other
        # reading's calls inside it must not be taken either.
        if got == "ambiguous":
            region = _region_end(text, i, spec, ctx)
            return Found(region, error=got, resume=region)
        return Found(len(text) if got == "truncated" else i if tag is None else tag, error=got)
    return got


def _region_end(text: str, i: int, spec: ValueSpec, ctx: ReadContext) -> int:
    """Where the region of an ambiguous value ends: after the last closing tag of the format
    (the value's own, or a stop) within ``ctx.max_call_chars``. O(that window)."""
    limit = min(len(text), i + ctx.max_call_chars)
    window = text[i:limit].lower()
    ends = [window.rfind(t) + len(t) for t in (spec.close, *spec.stops) if t.startswith("</") and t in window]
    return i + max(ends, default=0)


def dangling(
    text: str, end: int, closers: tuple[str, ...], ctx: ReadContext, own: tuple[str, ...] = ()
) -> int | NeedMore | None:
    """After a call region read to ``end``: where a run of the format's closing tags (and
    ``own`` opening markers) right after it ends, or None when no closing tag follows. A
    closing tag there means a value took the closers as its end too early (it held them: code
    writing the format), and another reading gives the value more text; the caller refuses the
    region up to the returned index. O(the run)."""
    j = end
    stray = False
    tags = closers + own
    while True:
        k = skip_ws(text, j)
        if k >= len(text):
            if not ctx.final:
                return NEED_MORE
            break
        got = any_at(text, k, tags, ctx)
        if isinstance(got, NeedMore):
            return NEED_MORE
        if got is None:
            break
        stray = stray or got in closers
        j = k + len(got)
    return j if stray else None


def value_close_after(text: str, end: int, spec: ValueSpec, ctx: ReadContext) -> int | NeedMore | None:
    """After a call region read to ``end``: the end of a value closing tag that still comes
    where one would end a value (``read_value``'s own test), before any of ``spec.stops``
    opens the next key and within ``MAX_CROSSINGS`` own markers; None when none does. Such a
    tag means the value could have run on to it: the region is ambiguous. O(what it passes,
    bounded by ``ctx.max_call_chars``)."""
    limit = min(len(text), end + ctx.max_call_chars)
    openers = tuple(t for t in spec.stops if not t.startswith("</"))
    watch = (spec.close, *openers, *spec.own)
    crossings = 0
    j = end
    while True:
        p = text.find("<", j, limit)
        if p == -1:
            return NEED_MORE if not ctx.final and limit == len(text) else None
        hit = any_at(text, p, watch, ctx)
        if isinstance(hit, NeedMore):
            return NEED_MORE
        if hit == spec.close:
            closes = _closes_value(text, p + len(hit), spec, ctx)
            if closes is NEED_MORE:
                return NEED_MORE
            if closes:
                return p + len(hit)
        elif hit in openers:
            return None
        elif hit is not None:
            crossings += 1
            if crossings > MAX_CROSSINGS:
                return None
        j = p + 1


def refused_if_dangling(
    found: Found,
    text: str,
    closers: tuple[str, ...],
    ctx: ReadContext,
    *,
    own: tuple[str, ...] = (),
    spec: ValueSpec | None = None,
    wrapper: str | None = None,
) -> Found | NeedMore:
    """``found`` (calls read to its end), or the whole region refused as ``ambiguous`` when
    the format's closing tags follow it (see ``dangling``), or a value's closing tag still
    comes after it (see ``value_close_after``, given the values' ``spec``).

    With the dialect decided by a model profile (``ctx.decided``), a region that ends at its
    ``wrapper``'s closing marker (lower case) is final as read: its values ended where the
    structure after each agreed, up to and including that closer, which is how the model's
    own template ends a call; what follows is the next text, so a stream releases the call
    the moment it closes. Without a profile, or for a region the reply's end or a missing
    closer ended, what follows is still looked at."""
    if not found.calls:
        return found
    if ctx.decided and wrapper is not None:
        at = found.end - len(wrapper)
        if at >= 0 and startswith_ci(text, wrapper, at):
            return found
    after = dangling(text, found.end, closers, ctx, own)
    if after is None and spec is not None:
        after = value_close_after(text, found.end, spec, ctx)
    if isinstance(after, NeedMore):
        return NEED_MORE
    return found if after is None else Found(after, error="ambiguous", resume=after)


def call_at_end(text: str, name: str, ctx: ReadContext) -> Found | NeedMore:
    """The call whose text ends after a complete value, its own closing tag never written:
    refused as ``truncated``. Two readings part there: the reply was cut short (``max_tokens``;
    more arguments could have followed) or a stop token ate the closing tags; one runs a call
    that may lack arguments, so the one that runs nothing is taken (fail closed; the engines'
    parsers refuse it too). A call whose own closer came (``</function>``, ``</invoke>``) is
    whole, whatever follows; a JSON body is whole when its object closes. The refusal names
    the call (``Found.calls``: its name only, never run)."""
    if not ctx.final:
        return NEED_MORE
    return Found(len(text), (RawCall(name, {}),), error="truncated")


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


# Attribute values escaped as XML does (`key="q&amp;a"`): its five entities and character
# references, decoded in one pass (so `&amp;quot;` stays `&quot;`). Nothing else.
_ENTITY = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def _entity(m: re.Match[str]) -> str:
    if m.group(1):
        return _NAMED[m.group(1)]
    code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)


def unescape(value: str) -> str:
    """``value`` with XML's five entities and its character references decoded, once. O(len)."""
    return _ENTITY.sub(_entity, value) if "&" in value else value
