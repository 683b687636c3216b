"""`TagDialect`: the common "opening marker + JSON + closing marker" shape (Hermes and kin)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .._args import FINITE_SCAN
from ._base import NEED_MORE, Found, NeedMore, ReadContext, expect_literal, skip_ws_match
from ._json import JsonFailure, calls_from_value, common_call, decode_at

__all__ = ["TagDialect", "fast_reader", "read_json_block", "read_json_block_fast"]


def read_json_block(
    text: str, s: int, body: int, close: str | None, ctx: ReadContext, *, require_arguments: bool = False
) -> Found | NeedMore | None:
    """A call object (or array of them) at ``body`` (after whitespace), then ``close``.

    The closing marker may be missing when the payload is complete (the end-of-sequence
    token ate it); a payload that is not JSON at all is not this dialect's (None).
    O(payload length).
    """
    n = len(text)
    i = skip_ws_match(text, body).end()
    if i >= n:
        return NEED_MORE if not ctx.final else None
    if text[i] not in "{[":
        return None
    decoded = decode_at(text, i, ctx)
    if type(decoded) is not tuple:
        if decoded is NEED_MORE:
            return NEED_MORE
        assert isinstance(decoded, JsonFailure)
        return Found(max(decoded.pos, i + 1), error=decoded.reason)
    value, j = decoded
    calls = calls_from_value(value, require_arguments=require_arguments)
    if calls is None:
        return Found(j, error="not-a-call")
    if close is None:
        return Found(j, calls)
    k = skip_ws_match(text, j).end()
    if k >= n and not ctx.final:
        return NEED_MORE
    closed = expect_literal(text, k, close, ctx)
    if closed is NEED_MORE:
        return NEED_MORE
    return Found(k + len(close) if closed else j, calls)


def read_json_block_fast(
    close: str, text: str, body: int, max_depth: int, max_call_chars: int
) -> tuple[int, str, dict[str, Any], str | None] | None:
    """``read_json_block`` on a whole text (final), for its common answer only: one call
    object ``{"name": str, "arguments": {...}}`` (``parameters`` for ``arguments``, a string
    ``id`` kept), then ``close`` or the end of the JSON. Returns (end, name, arguments, id)
    exactly when ``read_json_block`` would return ``Found(end, (RawCall(name, arguments,
    id),))``; None for any other answer, which the caller then asks ``read_json_block`` for.

    The value is scanned in place rather than in ``decode_at``'s windows: a value that decodes
    is the same value either way (the scanner reads no further than its end), and one that
    does not is handed back at once, so the O(offset) price of a failure in place (the
    decoder's line and column count) is paid at most once per reply by the fast lane, which
    stops there. O(payload length).
    """
    i = skip_ws_match(text, body).end()
    if text[i : i + 1] != "{":
        return None
    try:
        value, j = FINITE_SCAN(text, i)
    except (StopIteration, ValueError, RecursionError):
        return None
    if j - i > max_call_chars or (
        j - i > 2 * max_depth and text.count("{", i, j) + text.count("[", i, j) > max_depth
    ):
        return None  # a limit to check: ``decode_at`` does
    common = common_call(value)  # the first test of call_from_object, so the same answer
    if common is None:
        return None
    k = skip_ws_match(text, j).end()
    end = k + len(close) if text.startswith(close, k) or text[k : k + len(close)].lower() == close else j
    return (end, *common)


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


Shortcut = Callable[[str, int, int, int], "tuple[int, str, dict[str, Any], str | None] | None"]


def fast_reader(dialect: object) -> Shortcut | None:
    """The whole-text shortcut of a dialect's reader, for the fast lane: ``fast(text,
    marker_end, max_depth, max_call_chars)`` (see ``read_json_block_fast``), or None. Only a
    ``TagDialect`` whose ``read`` is ours has one: a subclass that reads otherwise is asked."""
    if isinstance(dialect, TagDialect) and type(dialect).read is TagDialect.read:
        return partial(read_json_block_fast, dialect.close.lower())
    return None
