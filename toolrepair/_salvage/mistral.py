"""`mistral`: ``[TOOL_CALLS]`` in both tokenizer generations.

Pre-v11 (Mistral 7B v0.3, Nemo; also xLAM): ``[TOOL_CALLS] [{"name": ..., "arguments": ...}]``.
v11+ (Mistral Small 3.x, Magistral, Devstral, Ministral): ``[TOOL_CALLS]NAME{json}``, as HF
tokenizers render it ``[TOOL_CALLS]NAME[ARGS]{json}``, or ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}``;
the token repeats per call. No closing token: text after the payload stays content. Magistral
reasons inside ``[THINK]...[/THINK]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, ReadContext, expect_literal, skip_ws
from ._json import calls_from_value, with_repairs
from .json_blocks import arguments_at, payload_at

__all__ = ["MISTRAL"]

MAX_ID_CHARS = 64
# vLLM tolerates a little junk between the token and the array (`[TOOL_CALLS]  junk [{...}]`):
# looked for on the same line within this window only, so prose after a stray token stays prose.
JUNK_WINDOW = 256
_TOKEN = "[tool_calls]"


def _is_name_char(c: str) -> bool:
    return c.isalnum() or c in "_-.:"


def _array_after_junk(text: str, i: int, ctx: ReadContext) -> int | NeedMore | None:
    """Index of a ``[`` opening an array of objects (``[{``, whitespace allowed) within the
    junk window on this line, before any other ``[TOOL_CALLS]`` (a token starts a call of its
    own, as engines split on it: junk never spans one). O(JUNK_WINDOW)."""
    n = len(text)
    limit = min(n, i + JUNK_WINDOW)
    nl = text.find("\n", i, limit)
    line_ends = nl != -1
    if line_ends:
        limit = nl
    k = text.find("[", i, limit)
    while k != -1:
        token = expect_literal(text, k, _TOKEN, ctx)
        if token is NEED_MORE:
            return NEED_MORE
        if token:
            return None
        m = skip_ws(text, k + 1)
        if m >= n:
            return NEED_MORE if not ctx.final else None
        if text[m] == "{":
            return k
        k = text.find("[", k + 1, limit)
    return NEED_MORE if limit == n and not ctx.final else None


def _json_payload(text: str, i: int, ctx: ReadContext, bound: str) -> Found | NeedMore:
    """Pre-v11: an array (or a single object) of call objects at ``i``; a lenient reading stops
    before the next ``bound`` (the token as written). O(payload)."""
    decoded = payload_at(text, i, ctx, bound)
    if not isinstance(decoded, tuple):
        return decoded
    value, j, repairs = decoded
    calls = calls_from_value(value, require_arguments=False)
    if calls is None:
        return Found(j, error="not-a-call", resume=j)
    return Found(j, with_repairs(calls, repairs))


def _v11_call(text: str, name: str, j: int, ctx: ReadContext, bound: str) -> Found | NeedMore | None:
    """After ``NAME`` at ``j``: optional ``[CALL_ID]ID``, optional ``[ARGS]``, then the JSON
    object. None when what follows the name is not this shape. O(ID + payload)."""
    n = len(text)
    head = _call_id(text, j, ctx)
    if not isinstance(head, tuple):
        return head
    ident, j = head
    got = expect_literal(text, j, "[args]", ctx)
    if got is NEED_MORE:
        return NEED_MORE
    if got:
        j = skip_ws(text, j + len("[args]"))
        if j >= n:
            return NEED_MORE if not ctx.final else Found(j, error="truncated")
    if text[j] != "{" and not (got and text[j] == '"'):
        return None  # after [ARGS] the payload may be a JSON string holding the object
    return arguments_at(text, name, j, ctx, ident, bound=bound)


def _call_id(text: str, j: int, ctx: ReadContext) -> tuple[str | None, int] | NeedMore | None:
    """An optional ``[CALL_ID]ID`` at ``j``: (the id or None, the index after it)."""
    got = expect_literal(text, j, "[call_id]", ctx)
    if got is NEED_MORE:
        return NEED_MORE
    if not got:
        return None, j
    k = j + len("[call_id]")
    limit = min(len(text), k + MAX_ID_CHARS + 1)
    e = text.find("[", k, limit)
    if e == -1:
        return NEED_MORE if not ctx.final and limit == len(text) else None
    return text[k:e].strip() or None, e


@dataclass(frozen=True)
class _Mistral:
    name: str = "mistral"
    markers: tuple[str, ...] = (_TOKEN,)
    reasoning: tuple[tuple[str | None, str], ...] = (("[think]", "[/think]"),)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(JUNK_WINDOW + ctx.max_name_chars + payload). The lenient reading of a payload stops
        # before the next token *as written* (the lower-case table form never occurs in
        # `[TOOL_CALLS]` text, and a bound that is never found reads to max_call_chars per
        # marker: quadratic on a run of tokens).
        bound = text[start:marker_end]
        i = skip_ws(text, marker_end)
        if i >= len(text):
            return NEED_MORE if not ctx.final else Found(marker_end, error="truncated")
        if text[i] in "[{":
            return _pre_v11(text, i, ctx, bound)
        return _v11_or_junk(text, i, marker_end, ctx, bound)


def _pre_v11(text: str, i: int, ctx: ReadContext, bound: str) -> Found | NeedMore:
    """The pre-v11 payload right after the token."""
    payload = _json_payload(text, i, ctx, bound)
    if isinstance(payload, Found) and payload.error is not None and payload.resume is not None:
        # A refused array must not swallow what follows it: another `[TOOL_CALLS]` may
        # start right here (`[TOOL_CALLS] [TOOL_CALLS]name{...}`).
        return Found(payload.end, error=payload.error, resume=i)
    return payload


def _v11_or_junk(text: str, i: int, marker_end: int, ctx: ReadContext, bound: str) -> Found | NeedMore:
    """v11: a name, then ``{``, ``[ARGS]`` or ``[CALL_ID]``; anything else may be junk before
    a pre-v11 array."""
    n = len(text)
    limit = min(n, i + ctx.max_name_chars)
    j = i
    while j < limit and _is_name_char(text[j]):
        j += 1
    if j >= n:
        return NEED_MORE if not ctx.final else Found(j, error="truncated")
    if i < j < limit:
        found = _v11_call(text, text[i:j], j, ctx, bound)
        if found is not None:
            return found
    k = _array_after_junk(text, i, ctx)
    if k is None:
        return Found(marker_end, error="not-a-call")
    if isinstance(k, NeedMore):
        return NEED_MORE
    return _json_payload(text, k, ctx, bound)


MISTRAL = _Mistral()
