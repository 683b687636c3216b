"""DeepSeek V3/R1 and V3.1: calls between full-width special tokens.

V3 / R1::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1 drops the type word and the fence: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``.
``｜`` is U+FF5C and ``▁`` U+2581; the spellings llama.cpp accepts for the section token
(``<｜tool_calls_begin｜>``, ``<｜tool calls begin｜>``, ``<｜tool\\_calls\\_begin｜>``,
``<｜tool▁calls｜>``) read the same. The fence is the dialect's own syntax inside its tokens,
so the reader consumes it. Step-3 writes the same tokens around ``<steptml:invoke>`` bodies:
those are not ours (None), so the next dialect for the marker reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws
from ._json import JsonFailure, decode_at
from .json_blocks import read_after_payload
from .token_block import BodyFailure, TokenBlock, token_at

__all__ = ["DEEPSEEK_V3", "DEEPSEEK_V31"]

_OPEN, _CLOSE = "<｜", "｜>"
_SEP = "tool_sep"
BLOCK = TokenBlock(
    _OPEN,
    _CLOSE,
    block_begin=frozenset({"tool_calls_begin", "tool_calls"}),
    block_end=frozenset({"tool_calls_end"}),
    call_begin=frozenset({"tool_call_begin"}),
    call_end=frozenset({"tool_call_end"}),
)
# Every spelling of the section and call tokens: U+2581, `_`, a space, or an escaped `\\_`.
MARKERS: tuple[str, ...] = (
    *(f"<｜tool{s}calls{s}begin｜>" for s in ("▁", "_", " ", "\\_")),
    "<｜tool▁calls｜>",
    *(f"<｜tool{s}call{s}begin｜>" for s in ("▁", "_", " ", "\\_")),
)


def _name_char(c: str) -> bool:
    return c.isalnum() or c in "_-.:"


def _read_name(text: str, i: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """A function name at ``i`` and the index after it; O(ctx.max_name_chars)."""
    n = len(text)
    j = i
    limit = min(n, i + ctx.max_name_chars)
    while j < limit and _name_char(text[j]):
        j += 1
    if j == n and not ctx.final:
        return NEED_MORE
    if j == i or (j == limit and limit < n):
        return None
    return text[i:j], j


def _read_arguments(
    text: str, i: int, ctx: ReadContext, name: str
) -> tuple[RawCall, int] | BodyFailure | NeedMore | None:
    """An optionally fenced JSON object at ``i`` (after whitespace); O(payload)."""
    n = len(text)
    opened = _open_fence(text, i, ctx)
    if not isinstance(opened, tuple):
        return opened
    i, fence = opened
    fenced = fence >= 0
    if i >= n:
        return NEED_MORE if not ctx.final else BodyFailure("truncated", n)
    if text[i] not in "{[":
        return None
    decoded = decode_at(text, i, ctx)
    if isinstance(decoded, JsonFailure):
        return BodyFailure(decoded.reason, max(decoded.pos, i + 1))
    if not isinstance(decoded, tuple):
        return decoded
    value, j = decoded
    end = read_after_payload(text, j, "```", ctx) if fenced else j
    if isinstance(end, NeedMore):
        return NEED_MORE
    if not isinstance(value, dict):
        return RawCall(name, {}, None, "undecodable-arguments"), end
    return RawCall(name, value, fence=(fence, end) if fenced and end != j else None), end


def _open_fence(text: str, i: int, ctx: ReadContext) -> tuple[int, int] | NeedMore:
    """Past whitespace and an opening fence with its info string (``json``) at ``i``: (index
    of the payload, index of the fence or -1). NEED_MORE while the text ends inside what may
    be a fence."""
    n = len(text)
    i = skip_ws(text, i)
    if not text.startswith("```", i):
        if n - i < 3 and not ctx.final and "```".startswith(text[i:]):
            return NEED_MORE
        return i, -1
    fence = i
    i += 3
    while i < n and text[i].isalpha():  # the info string: `json`
        i += 1
    return skip_ws(text, i), fence


def _read_head(text: str, i: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """``WORD<｜tool▁sep｜>``: the word before the separator and the index after it."""
    head = _read_name(text, skip_ws(text, i), ctx)
    if not isinstance(head, tuple):
        return head
    word, j = head
    tok = token_at(text, skip_ws(text, j), _OPEN, _CLOSE, ctx)
    if not isinstance(tok, tuple):
        return tok
    return (word, tok[1]) if tok[0] == _SEP else None


def _v3_body(text: str, i: int, ctx: ReadContext) -> tuple[RawCall, int] | BodyFailure | NeedMore | None:
    """``function<｜tool▁sep｜>NAME\\n```json\\n{…}\\n```"``; O(payload)."""
    head = _read_head(text, i, ctx)
    if not isinstance(head, tuple):
        return head
    word, j = head
    if word.lower() != "function":
        return None
    k = skip_ws(text, j)
    if k >= len(text):
        return NEED_MORE if not ctx.final else BodyFailure("truncated", k)
    if text[k] in "{[":
        return None  # V3.1 calling a tool named `function`
    named = _read_name(text, k, ctx)
    if not isinstance(named, tuple):
        return named
    name, k = named
    return _read_arguments(text, k, ctx, name)


def _v31_body(text: str, i: int, ctx: ReadContext) -> tuple[RawCall, int] | BodyFailure | NeedMore | None:
    """``NAME<｜tool▁sep｜>{…}``; O(payload)."""
    head = _read_head(text, i, ctx)
    if not isinstance(head, tuple):
        return head
    name, j = head
    k = skip_ws(text, j)
    if k >= len(text):
        return NEED_MORE if not ctx.final else BodyFailure("truncated", k)
    if name.lower() == "function" and text[k] not in "{[`":
        return None  # the V3 form
    return _read_arguments(text, k, ctx, name)


@dataclass(frozen=True)
class _DeepSeek:
    name: str
    v31: bool
    markers: tuple[str, ...] = MARKERS

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        return BLOCK.read(text, start, marker_end, ctx, _v31_body if self.v31 else _v3_body)


DEEPSEEK_V3 = _DeepSeek("deepseek_v3", v31=False)
DEEPSEEK_V31 = _DeepSeek("deepseek_v31", v31=True)
