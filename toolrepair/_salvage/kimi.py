"""Kimi-K2: ``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>``.

Calls sit in a section (``<|tool_calls_section_begin|>`` … ``<|tool_calls_section_end|>``;
the singular ``<|tool_call_section_begin|>`` too), tokens may be separated by spaces or
newlines, and the section and end tokens may be missing (the reply was cut, or a hosted API
stripped them). The id ``functions.NAME:IDX`` is the call id; the name is ``NAME`` (the
``functions.`` namespace is optional). An id without ``:IDX`` is refused, siblings survive.
A section that holds no readable call is one rejection, taken out of the content with its
tokens (``TokenBlock.claims_sections``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws
from ._json import JsonFailure, arguments_payload
from .token_block import BodyFailure, TokenBlock, token_at

__all__ = ["KIMI_K2"]

_OPEN, _CLOSE = "<|", "|>"
BLOCK = TokenBlock(
    _OPEN,
    _CLOSE,
    block_begin=frozenset({"tool_calls_section_begin", "tool_call_section_begin"}),
    block_end=frozenset({"tool_calls_section_end", "tool_call_section_end"}),
    call_begin=frozenset({"tool_call_begin"}),
    call_end=frozenset({"tool_call_end"}),
    claims_sections=True,  # no other dialect reads Kimi's section tokens
)
# Bounded: the id is at most ctx.max_name_chars long and the pattern has no nested repeats.
_ID = re.compile(r"(?:functions\.)?([\w.\-]+):\d+")


def _body(text: str, i: int, ctx: ReadContext) -> tuple[RawCall, int] | BodyFailure | NeedMore | None:
    """``ID<|tool_call_argument_begin|>{json}``; O(ctx.max_name_chars + payload)."""
    n = len(text)
    i = skip_ws(text, i)
    limit = min(n, i + ctx.max_name_chars)
    j = text.find(_OPEN, i, limit + len(_OPEN))
    if j == -1:
        return NEED_MORE if not ctx.final and limit == n else None
    tok = token_at(text, j, _OPEN, _CLOSE, ctx)
    if not isinstance(tok, tuple):
        return tok
    if tok[0] != "tool_call_argument_begin":
        return None
    ident = text[i:j].strip()
    k = skip_ws(text, tok[1])
    if k >= n:
        return NEED_MORE if not ctx.final else BodyFailure("truncated", n)
    if text[k] not in '{["':  # `"`: the argument section written as a JSON string
        return BodyFailure("undecodable-arguments", k)
    decoded = arguments_payload(text, k, ctx, _OPEN + "tool_call_begin|>")
    if decoded is NEED_MORE:
        return NEED_MORE
    if isinstance(decoded, JsonFailure):
        return BodyFailure(decoded.reason, max(decoded.pos, k + 1))
    assert isinstance(decoded, tuple)
    value, end, repairs = decoded
    m = _ID.fullmatch(ident)
    if m is None:
        return RawCall(ident, {}, ident or None, "malformed-id"), end
    if value is None:
        return RawCall(m.group(1), {}, ident, "undecodable-arguments"), end
    return RawCall(m.group(1), value, ident, None, repairs), end


@dataclass(frozen=True)
class _KimiK2:
    name: str = "kimi_k2"
    markers: tuple[str, ...] = (
        "<|tool_calls_section_begin|>",
        "<|tool_call_section_begin|>",
        "<|tool_call_begin|>",
    )

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        return BLOCK.read(text, start, marker_end, ctx, _body)


KIMI_K2 = _KimiK2()
