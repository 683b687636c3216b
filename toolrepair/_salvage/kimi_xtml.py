"""Kimi K3 "XTML": tags built from three special tokens ``<|open|>``, ``<|close|>``, ``<|sep|>``::

    <|open|>tools<|sep|>
      <|open|>call tool="N" index="1"<|sep|>
        <|open|>argument key="k" type="number"<|sep|>1<|close|>argument<|sep|>
      <|close|>call<|sep|>
    <|close|>tools<|sep|>

Arguments are typed by their ``type`` attribute (``string`` is kept as written, any other type
is read as JSON when it is exactly one JSON value). A value ends at the next ``<|`` token (a
special token is never text), so each read is bounded by its own block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws
from ._xml_text import ValueSpec, any_at, call_at_end, read_attrs, unescape, value_or_refusal
from .invoke_xml import json_value

__all__ = ["KIMI_K3"]

_OPEN = "<|open|>"
_SEP = "<|sep|>"
_CALL = _OPEN + "call"
_ARG = _OPEN + "argument"
_END_ARG = "<|close|>argument" + _SEP
_END_CALL = "<|close|>call" + _SEP
_END_TOOLS = "<|close|>tools" + _SEP
_VALUES = ValueSpec(close=_END_ARG, successors=(_ARG, _END_CALL), own=(_OPEN + "tools" + _SEP,))


@dataclass(frozen=True)
class _KimiK3:
    name: str = "kimi_k3"
    markers: tuple[str, ...] = (_OPEN + "tools" + _SEP,)
    reasoning: tuple[tuple[str | None, str], ...] = ((_OPEN + "think" + _SEP, "<|close|>think" + _SEP),)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(block length): values stop at the next special token.
        n = len(text)
        calls: list[RawCall] = []
        j = marker_end
        while True:
            k = skip_ws(text, j)
            if k >= n:
                if not ctx.final:
                    return NEED_MORE
                return Found(j, tuple(calls)) if calls else Found(n, error="truncated")
            lit = any_at(text, k, (_END_TOOLS, _CALL), ctx)
            if isinstance(lit, NeedMore):
                return NEED_MORE
            if lit == _END_TOOLS:
                return Found(k + len(lit), tuple(calls))
            if lit is None:
                return Found(j, tuple(calls)) if calls else None
            call = self._call(text, k + len(lit), ctx)
            if not isinstance(call, tuple):
                return call
            calls.append(call[0])
            j = call[1]

    def _call(self, text: str, i: int, ctx: ReadContext) -> tuple[RawCall, int] | Found | NeedMore | None:
        n = len(text)
        head = self._sep_attrs(text, i, ctx)
        if not isinstance(head, tuple):
            return head if head is NEED_MORE else Found(i, error="undecodable")
        attrs, j = head
        name = attrs.get("tool")
        if not name:
            return Found(i, error="undecodable")
        arguments: dict[str, Any] = {}
        while True:
            k = skip_ws(text, j)
            if k >= n:
                return call_at_end(text, name, ctx)
            lit = any_at(text, k, (_END_CALL, _ARG), ctx)
            if isinstance(lit, NeedMore):
                return NEED_MORE
            if lit == _END_CALL:
                return RawCall(name, arguments), k + len(lit)
            if lit is None:
                return Found(k, error="undecodable")
            ah = self._sep_attrs(text, k + len(lit), ctx)
            if not isinstance(ah, tuple):
                return ah if ah is NEED_MORE else Found(k, error="undecodable")
            aattrs, v = ah
            if "key" not in aattrs:
                return Found(k, error="undecodable")
            # A value ends at the `<|close|>argument<|sep|>` that the next argument or the
            # call's end follows: one quoting the markup is text (the shared value rule).
            got = value_or_refusal(text, v, _VALUES, ctx, 0)
            if not isinstance(got, tuple):
                return got
            raw, j, _, _ = got
            if aattrs["key"] in arguments:  # two values for one key: which one is meant is unknowable
                return Found(k, error="undecodable-arguments")
            typ = aattrs.get("type", "string").lower()
            arguments[aattrs["key"]] = raw if typ == "string" else json_value(raw, ctx)

    def _sep_attrs(self, text: str, i: int, ctx: ReadContext) -> tuple[dict[str, str], int] | NeedMore | None:
        """Attributes from ``i`` up to ``<|sep|>``: (attributes, index after it)."""
        limit = min(len(text), i + 1024)
        sep = text.find(_SEP, i, limit)
        if sep == -1:
            return NEED_MORE if not ctx.final and limit == len(text) else None
        got = read_attrs(text[i:sep] + ">", 0, ctx)
        if not isinstance(got, tuple):
            return None
        return {k: unescape(v) for k, v in got[0].items()}, sep + len(_SEP)


KIMI_K3 = _KimiK3()
