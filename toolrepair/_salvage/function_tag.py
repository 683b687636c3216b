"""`function_tag`: ``<function=NAME>{json arguments}</function>`` (Llama 3.1 / Functionary v3.1)."""

from __future__ import annotations

from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._json import JsonFailure, arguments_payload

__all__ = ["FUNCTION_TAG", "read_tag_name"]



def read_tag_name(text: str, i: int, ctx: ReadContext, stop: str = ">") -> tuple[str, int] | NeedMore | None:
    """An identifier-like name from ``i`` up to ``stop``: (name, index after stop).

    Any Unicode letters, digits and ``_ - . :`` are allowed; quotes, spaces inside and
    brackets are not. O(ctx.max_name_chars).
    """
    n = len(text)
    limit = min(n, i + ctx.max_name_chars + 1)
    j = text.find(stop, i, limit)
    if j == -1:
        return NEED_MORE if not ctx.final and limit == n else None
    name = text[i:j].strip().strip("\"'")
    if not name or not all(c.isalnum() or c in "_-.:" for c in name):
        return None
    return name, j + len(stop)


@dataclass(frozen=True)
class _FunctionTag:
    name: str = "function_tag"
    markers: tuple[str, ...] = ("<function=",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        head = read_tag_name(text, marker_end, ctx)
        if head is None or head is NEED_MORE:
            return head
        assert isinstance(head, tuple)
        name, body = head
        i = skip_ws(text, body)
        if i >= len(text):
            return NEED_MORE if not ctx.final else None
        if text[i] != "{":
            return None  # `<parameter=...>` bodies belong to the Qwen3-Coder reader
        decoded = arguments_payload(text, i, ctx, "<function=")
        if decoded is NEED_MORE:
            return NEED_MORE
        if isinstance(decoded, JsonFailure):
            return Found(max(decoded.pos, i + 1), error=decoded.reason)
        assert isinstance(decoded, tuple)
        value, j, repairs = decoded
        if value is None:
            return Found(j, error="undecodable-arguments")
        k = skip_ws(text, j)
        if k >= len(text) and not ctx.final:
            return NEED_MORE
        closed = expect_literal(text, k, "</function>", ctx)
        if closed is NEED_MORE:
            return NEED_MORE
        return Found(k + len("</function>") if closed else j, (RawCall(name, value, None, None, repairs),))


FUNCTION_TAG = _FunctionTag()
