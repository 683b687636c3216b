"""`tool_calls`: ``<tool_calls>`` ... ``</tool_calls>`` with a JSON body; the body decides.

A JSON array (Hunyuan-A13B, AI21 Jamba, ServiceNow Apriel) or consecutive JSON objects
(MiniMax-M1: one per line, or pretty-printed over several lines). In the objects form a value
that does not decode, or is not call-shaped, is refused alone and reading resumes at the next
line, as MiniMax's own line-based parser does. Apriel ends its reasoning with
``[BEGIN FINAL RESPONSE]`` (no opening marker): everything before it is reasoning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._json import JsonFailure, call_from_object, decode_at
from .json_blocks import JsonBlock

__all__ = ["TOOL_CALLS"]

CLOSE = "</tool_calls>"
# After a broken value, the next line or the next tag: a `<` stops the skip, so a run of
# opening tokens never makes one read scan past the next one.
_LINE_OR_TAG = re.compile(r"[\n<]")

_ARRAY = JsonBlock("tool_calls", ("<tool_calls>",), close=CLOSE, shape="array")


def _objects(text: str, i: int, ctx: ReadContext) -> Found | NeedMore:
    """Consecutive JSON objects from ``i`` up to ``</tool_calls>`` (optional at the end).

    O(what it reads): every value is decoded once and every skipped line is scanned once.
    """
    n = len(text)
    calls: list[RawCall] = []
    while True:
        decoded = decode_at(text, i, ctx)
        if decoded is NEED_MORE:
            return NEED_MORE
        if isinstance(decoded, JsonFailure):
            calls.append(RawCall("", {}, None, decoded.reason))
            if decoded.reason == "truncated":  # final: the reply ends inside it
                return Found(n, tuple(calls))
            m = _LINE_OR_TAG.search(text, max(decoded.pos, i + 1))
            if m is None:
                if not ctx.final:
                    return NEED_MORE  # the next line may hold another call
                return Found(n, tuple(calls))
            j = m.start() + 1 if m.group() == "\n" else m.start()
        else:
            assert isinstance(decoded, tuple)
            value, j = decoded
            call = call_from_object(value, require_arguments=True)
            calls.append(call if call is not None else RawCall("", {}, None, "not-a-call"))
        k = skip_ws(text, j)
        if k >= n:
            if not ctx.final:
                return NEED_MORE
            return Found(j, tuple(calls))
        closed = expect_literal(text, k, CLOSE, ctx)
        if closed is NEED_MORE:
            return NEED_MORE
        if closed:
            return Found(k + len(CLOSE), tuple(calls))
        if text[k] != "{":
            return Found(j, tuple(calls))  # text after the calls stays content
        i = k


@dataclass(frozen=True)
class _ToolCalls:
    name: str = "tool_calls"
    markers: tuple[str, ...] = ("<tool_calls>",)
    reasoning: tuple[tuple[str | None, str], ...] = ((None, "[begin final response]"),)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        i = skip_ws(text, marker_end)
        if i >= len(text):
            return NEED_MORE if not ctx.final else None
        if text[i] == "{":
            return _objects(text, i, ctx)
        return _ARRAY.read(text, start, marker_end, ctx)


TOOL_CALLS = _ToolCalls()
