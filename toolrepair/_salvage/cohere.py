"""Cohere: Command R7B / Command A action blocks, and Command R+ ``Action:`` fenced JSON.

``cohere``: ``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}]
<|END_ACTION|>``, reasoning in ``<|START_THINKING|>...<|END_THINKING|>``.

``command_r_plus``: a line ``Action:`` then a Markdown ```` ```json ```` fence holding the array.
The fence is this format's own syntax, read from the ``Action:`` marker that precedes it (the
engine masks only fences it reaches first), so a fence without ``Action:`` stays masked.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, ReadContext, expect_literal, skip_ws
from ._json import calls_from_value
from .json_blocks import JsonBlock, payload_at

__all__ = ["COHERE", "COMMAND_R_PLUS"]

COHERE = JsonBlock(
    "cohere",
    ("<|start_action|>",),
    close="<|end_action|>",
    shape="array",
    reasoning=(("<|start_thinking|>", "<|end_thinking|>"),),
)

FENCE = "```"
MAX_INFO_CHARS = 16
# Whitespace between `Action:` and its fence: a blank line or two, not a page.
MAX_GAP_CHARS = 64


def _fence_open(text: str, i: int, ctx: ReadContext) -> int | NeedMore | None:
    """Index after the opening fence line (```` ``` ```` or ```` ```json ````). O(MAX_INFO_CHARS)."""
    got = expect_literal(text, i, FENCE, ctx)
    if not got:
        return got if got is NEED_MORE else None
    j = i + len(FENCE)
    limit = min(len(text), j + MAX_INFO_CHARS + 1)
    nl = text.find("\n", j, limit)
    if nl == -1:
        return NEED_MORE if not ctx.final and limit == len(text) else None
    if text[j:nl].strip().lower() not in ("", "json"):
        return None
    return nl + 1


@dataclass(frozen=True)
class _CommandRPlus:
    name: str = "command_r_plus"
    markers: tuple[str, ...] = ("action:",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(MAX_GAP_CHARS + MAX_INFO_CHARS + payload).
        n = len(text)
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return None  # `Transaction:` is not `Action:`
        i = skip_ws(text, marker_end)
        if i - marker_end > MAX_GAP_CHARS:
            return None
        if i >= n:
            return NEED_MORE if not ctx.final else None
        body = _fence_open(text, i, ctx)
        if body is None or body is NEED_MORE:
            return body
        assert isinstance(body, int)
        k = skip_ws(text, body)
        if k >= n:
            return NEED_MORE if not ctx.final else None
        if text[k] not in "[{":
            return None
        decoded = payload_at(text, k, ctx)
        if not isinstance(decoded, tuple):
            return decoded
        value, j, _ = decoded
        calls = calls_from_value(value, require_arguments=False)
        if calls is None:
            return None  # a fenced JSON example after "Action:" in prose: the fence masks it
        m = skip_ws(text, j)
        if m >= n:
            return NEED_MORE if not ctx.final else Found(j, calls)
        closed = expect_literal(text, m, FENCE, ctx)
        if closed is NEED_MORE:
            return NEED_MORE
        if not closed:
            return Found(j, error="undecodable")  # text inside the fence after the JSON
        return Found(m + len(FENCE), calls)


COMMAND_R_PLUS = _CommandRPlus()
