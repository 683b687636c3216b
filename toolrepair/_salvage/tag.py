"""`TagDialect`: the common "opening marker + JSON + closing marker" shape (Hermes and kin)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._base import NEED_MORE, Found, NeedMore, ReadContext, expect_literal, skip_ws_match
from ._json import JsonFailure, calls_from_value, decode_payload, with_repairs

__all__ = ["TagDialect", "read_json_block"]


def read_json_block(
    text: str, s: int, body: int, close: str | None, ctx: ReadContext, *, require_arguments: bool = False,
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
    calls = with_repairs(calls, repairs)
    if close is None:
        return Found(j, calls)
    k = skip_ws_match(text, j).end()
    if k >= n and not ctx.final:
        return NEED_MORE
    closed = expect_literal(text, k, close, ctx)
    if closed is NEED_MORE:
        return NEED_MORE
    return Found(k + len(close) if closed else j, calls)


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

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        return read_json_block(text, start, marker_end, self.close.lower(), ctx)
