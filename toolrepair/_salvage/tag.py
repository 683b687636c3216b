"""`TagDialect`: the common "opening marker + JSON + closing marker" shape (Hermes and kin)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .._lazy import lazy
from ._base import NEED_MORE, Found, NeedMore, ReadContext, skip_ws_match
from ._json import JsonFailure, calls_from_value, decode_payload, with_repairs

# json_blocks and attr_call (with _xml_text) are imported where a read first reaches them: the
# built-in dialects import them on the first salvage anyway, and `import toolrepair` need not.

__all__ = ["AttributeTagDialect", "TagDialect", "read_json_block"]


def read_json_block(
    text: str,
    s: int,
    body: int,
    close: str | None,
    ctx: ReadContext,
    *,
    require_arguments: bool = False,
    bound: str | None = None,
) -> Found | NeedMore | None:
    """A call object (or array of them) at ``body`` (after whitespace), then ``close``.

    The closing marker may be missing when the payload is complete (the end-of-sequence
    token ate it); a payload that is not JSON at all is not this dialect's (None). A payload
    that is not valid JSON gets argument decoding's unambiguous repairs (``decode_payload``,
    bounded by ``bound``, by default the opening marker ``text[s:body]``), carried by its
    calls. O(payload length).
    """
    n = len(text)
    i = skip_ws_match(text, body).end()
    if i >= n:
        return NEED_MORE if not ctx.final else None
    if text[i] not in "{[":
        return None
    decoded = decode_payload(text, i, ctx, text[s:body] if bound is None else bound)
    if type(decoded) is not tuple:
        if decoded is NEED_MORE:
            return NEED_MORE
        assert isinstance(decoded, JsonFailure)
        return Found(max(decoded.pos, i + 1), error=decoded.reason)
    value, j, repairs = decoded
    calls = calls_from_value(value, require_arguments=require_arguments)
    if calls is None:
        return Found(j, error="not-a-call")
    from .json_blocks import read_after_payload

    end = read_after_payload(text, j, close, ctx)
    return NEED_MORE if isinstance(end, NeedMore) else Found(end, with_repairs(calls, repairs))


@dataclass(frozen=True)
class TagDialect:
    """A custom dialect of the shape ``OPEN {"name": ..., "arguments": {...}} CLOSE``.

    Tags match case-insensitively; the closing tag may be missing at the end of the reply.

    >>> from toolrepair import salvage_text
    >>> d = TagDialect("mine", open="<<call>>", close="<</call>>")
    >>> salvage_text('<<call>>{"name": "f", "arguments": {}}<</call>>', ["f"], dialects=[d]).calls[0].name
    'f'
    """

    name: str
    open: str = field(kw_only=True)
    close: str = field(kw_only=True)

    def __post_init__(self) -> None:
        if not self.open or not self.close:
            raise ValueError("a TagDialect needs non-empty open and close markers")
        if all(c.isalnum() for c in self.open):
            raise ValueError("an opening marker needs a character that is not a letter or digit")

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.open.lower(),)

    @property
    def closers(self) -> tuple[str, ...]:
        return (self.close.lower(),)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        return read_json_block(text, start, marker_end, self.close.lower(), ctx)


# `name="..."` / `id='...'`: a word, `=`, a quoted value without brackets; bounded runs.
_ATTRIBUTE = lazy(lambda: re.compile(r"""\s*([A-Za-z_][\w-]{0,63})\s*=\s*(?:"([^"<>]{0,256})"|'([^'<>]{0,256})')"""))
_ATTRIBUTES_MAX = 8
_TAG_MAX = _ATTRIBUTES_MAX * 340  # the longest tag the attributes can spell


@dataclass(frozen=True)
class AttributeTagDialect(TagDialect):
    """A ``TagDialect`` whose opening tag may also carry the call's name as an attribute:
    ``<tool_call name="get_weather" id="c1">{arguments}</tool_call>`` (the body is then the
    arguments alone). The attribute spelling is the opening tag without its ``>``, then a space.
    A body that is not JSON may be one self-closing tag whose attributes are the arguments
    (``<tool_call>exec command="ls" /></tool_call>``, ``attr_call``): the wrapper's second reader.
    """

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.open.lower(), self.open.lower()[:-1] + " ")

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # Each import where its branch needs it: an import statement costs Python frames per
        # run even once the module is loaded, and a refused JSON block needs none.
        if text[marker_end - 1] != " ":
            close = self.close.lower()
            found = read_json_block(text, start, marker_end, close, ctx)
            if found is not None:
                return found
            from .attr_call import read_attribute_call
            from .json_blocks import read_after_payload

            got = read_attribute_call(text, marker_end, ctx)
            if not isinstance(got, tuple):
                return got
            end = read_after_payload(text, got[1], close, ctx)
            return NEED_MORE if isinstance(end, NeedMore) else Found(end, (got[0],))
        closes = _tag_may_close(text, marker_end, ctx)
        if closes is not True:
            return closes
        head = _call_tag(text, marker_end - 1, ctx)
        if not isinstance(head, tuple):
            return head
        name, ident, i = head
        from .json_blocks import arguments_at, read_after_payload

        got = arguments_at(text, name, i, ctx, ident, bound=self.open.lower()[:-1])
        if not isinstance(got, Found) or got.error is not None:
            return got
        end = read_after_payload(text, got.end, self.close.lower(), ctx)
        return NEED_MORE if isinstance(end, NeedMore) else Found(end, got.calls)


def _tag_may_close(text: str, i: int, ctx: ReadContext) -> Literal[True] | NeedMore | None:
    """Whether the tag from ``i`` may end at a ``>``: None when it cannot, NEED_MORE while
    the text ends before it does.

    No attribute can hold a ``<``, so a ``<`` before any ``>`` says "not a call tag" at once,
    whatever follows (a run of ``<tool_call name="f" `` does not wait _TAG_MAX characters per
    tag). O(distance to the first ``<`` or ``>``).
    """
    limit = i + _TAG_MAX
    lt = text.find("<", i, limit)
    if text.find(">", i, limit if lt == -1 else lt) != -1:
        return True
    if lt != -1:
        return None
    # The tag is not closed yet: an attribute may be cut.
    return NEED_MORE if not ctx.final and limit > len(text) else True


def _call_tag(text: str, i: int, ctx: ReadContext) -> tuple[str, str | None, int] | NeedMore | None:
    """The rest of a call tag from ``i``: (the ``name`` attribute, the ``id`` attribute, index
    of the ``{`` opening the arguments after its ``>``); None when it is no call tag (prose, or
    an attribute spelling not read here)."""
    attributes, k = _attributes(text, i)
    if k >= len(text):
        return NEED_MORE if not ctx.final else None
    name = attributes.get("name")
    if text[k] != ">" or not name:
        return None
    j = skip_ws_match(text, k + 1).end()
    if j >= len(text):
        return NEED_MORE if not ctx.final else None
    return (name, attributes.get("id"), j) if text[j] == "{" else None


def _attributes(text: str, i: int) -> tuple[dict[str, str], int]:
    """Up to _ATTRIBUTES_MAX attributes from ``i``; the index of the first non-space after them."""
    attributes: dict[str, str] = {}
    for _ in range(_ATTRIBUTES_MAX):
        m = _ATTRIBUTE().match(text, i)
        if m is None:
            break
        attributes[m.group(1).lower()] = m.group(2) if m.group(2) is not None else m.group(3)
        i = m.end()
    return attributes, skip_ws_match(text, i).end()
