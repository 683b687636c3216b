"""`xlam`: Salesforce xLAM's JSON array of calls as the reply after the reasoning block.

xLAM writes ``[{"name": ..., "arguments": {...}}, ...]`` as its whole answer; the ``json``
dialect reads that array when it opens the reply. After ``<think>...</think>`` the answer
starts after the reasoning, so an array right after ``</think>`` is read here. (xLAM's other
wrappings are other dialects' markers: ``[TOOL_CALLS]`` and ``<tool_call>[...]</tool_call>``;
a ```` ```json ```` fence is never read, as every fence.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ._base import NEED_MORE, Found, Gate, NeedMore, ReadContext, skip_ws
from ._json import JsonFailure, calls_from_value, decode_at

__all__ = ["XLAM"]

REASONING_END = "</think>"
MAX_GAP_CHARS = 256


def _after_reasoning(text: str, start: int) -> bool:
    """Only whitespace (bounded) stands between ``</think>`` and ``start``. O(MAX_GAP_CHARS)."""
    i = start
    floor = max(0, start - MAX_GAP_CHARS)
    while i > floor and text[i - 1].isspace():
        i -= 1
    return text[max(0, i - len(REASONING_END)) : i].lower() == REASONING_END


@dataclass(frozen=True)
class _Xlam:
    name: str = "xlam"
    markers: tuple[str, ...] = ("[",)
    # After `</think>` and whitespace (_after_reasoning), then an object or the text's end.
    gates: ClassVar[Mapping[str, Gate]] = {"[": Gate(r"(?<=[>\s]\[)\s*+(?:\{|\Z)")}

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(MAX_GAP_CHARS) for a `[` anywhere else; O(the array) after `</think>`.
        if not _after_reasoning(text, start):
            return None
        k = skip_ws(text, marker_end)
        if k >= len(text):
            return NEED_MORE if not ctx.final else None
        if text[k] != "{":
            return None
        decoded = decode_at(text, start, ctx)
        if decoded is NEED_MORE:
            return NEED_MORE
        if isinstance(decoded, JsonFailure):
            # Broken JSON after reasoning is prose, skipped silently up to where it broke.
            return Found(start + 1, resume=max(decoded.pos, start + 1))
        assert isinstance(decoded, tuple)
        value, j = decoded
        calls = calls_from_value(value, require_arguments=True)
        if calls is None or any(c.error == "not-a-call" for c in calls):
            return Found(j, resume=j)  # data, not calls
        return Found(j, calls)


XLAM = _Xlam()
