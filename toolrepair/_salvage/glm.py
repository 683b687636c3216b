"""GLM-4.5/4.6 (and Ling 3.0), GLM-4.7 and Spark2.5: a name, then key/value tag pairs::

    <tool_call>NAME
    <arg_key>city</arg_key>
    <arg_value>Beijing</arg_value>
    </tool_call>

GLM-4.7 writes the same tags with no newlines, and a call without arguments as
``<tool_call>NAME</tool_call>``. Values are raw text (the schema types them later). The
``<tool_call>`` marker is shared with Hermes (JSON body) and Qwen3-Coder (``<function=``
body): a body starting with ``{``, ``[`` or ``<`` is not this reader's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._xml_text import ValueSpec, any_at, call_at_end, refused_if_dangling, value_or_refusal

__all__ = ["GLM"]

_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"
_KEY = "<arg_key>"
_END_KEY = "</arg_key>"
_VALUE = "<arg_value>"
# What can never follow a call: its own inner tags (a value held them and ended too early).
_CLOSERS = ("</arg_value>", _END_KEY, _CLOSE, _KEY, _VALUE)
_NAME_END = re.compile(r"[<\n]")
# A value whose `</arg_value>` is missing ends at the next key or the call's end, the one rule
# every XML-style reader follows (``read_value``).
_SPEC = ValueSpec(close="</arg_value>", successors=(_KEY, _CLOSE), stops=(_KEY, _CLOSE), own=(_OPEN,))


def _name_ok(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "_-.:" for c in name)


@dataclass(frozen=True)
class _Glm:
    name: str = "glm"
    markers: tuple[str, ...] = (_OPEN,)
    closers: tuple[str, ...] = (_CLOSE,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(block length); values crossing more than MAX_CROSSINGS `<tool_call>`s are refused.
        head = _head(text, marker_end, ctx)
        if not isinstance(head, tuple):
            return head
        got = _pairs(text, head[1], head[0], ctx)
        if not isinstance(got, tuple):
            return got
        return refused_if_dangling(
            Found(got[1], (got[0],)), text, _CLOSERS, ctx, own=self.markers, spec=_SPEC, wrapper=_CLOSE
        )


def _head(text: str, i: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """The call's name after the marker and where it ends; None for a body that is not ours
    (a JSON body, ``<function=``). O(ctx.max_name_chars)."""
    n = len(text)
    i = skip_ws(text, i)
    if i >= n:
        return NEED_MORE if not ctx.final else None
    if text[i] in "{[<":
        return None
    limit = min(n, i + ctx.max_name_chars + 1)
    m = _NAME_END.search(text, i, limit)
    if m is None:
        return NEED_MORE if not ctx.final and limit == n else None
    name = text[i : m.start()].strip()
    return (name, m.start()) if _name_ok(name) else None


def _pairs(text: str, j: int, name: str, ctx: ReadContext) -> tuple[RawCall, int] | Found | NeedMore | None:
    """The key/value pairs from ``j`` up to ``</tool_call>``: (call, end). O(block length)."""
    n = len(text)
    arguments: dict[str, Any] = {}
    crossings = 0
    while True:
        k = skip_ws(text, j)
        if k >= n:
            return call_at_end(text, name, ctx)
        lit = any_at(text, k, (_KEY, _CLOSE), ctx)
        if isinstance(lit, NeedMore):
            return NEED_MORE
        if lit == _CLOSE:
            return RawCall(name, arguments), k + len(_CLOSE)
        if lit is None:
            return None if not arguments else Found(k, error="undecodable")
        key = _key(text, k, ctx)
        if not isinstance(key, tuple):
            return key
        got = value_or_refusal(text, key[1] + len(_VALUE), _SPEC, ctx, crossings, tag=key[1])
        if not isinstance(got, tuple):
            return got
        if key[0] in arguments:  # two values for one key: which one is meant is unknowable
            return Found(k, error="undecodable-arguments")
        arguments[key[0]], j, _, crossings = got


def _key(text: str, k: int, ctx: ReadContext) -> tuple[str, int] | Found | NeedMore:
    """The key of the ``<arg_key>`` at ``k`` and the index of the ``<arg_value>`` after it."""
    n = len(text)
    key_start = k + len(_KEY)
    key_limit = min(n, key_start + ctx.max_name_chars + len(_END_KEY))
    key_end = _find_ci(text, _END_KEY, key_start, key_limit)
    if key_end == -1:
        if not ctx.final and key_limit == n:
            return NEED_MORE
        return Found(k + 1, error="truncated" if key_limit == n else "undecodable")
    v = skip_ws(text, key_end + len(_END_KEY))
    if v >= n:
        return NEED_MORE if not ctx.final else Found(n, error="truncated")
    opened = expect_literal(text, v, _VALUE, ctx)
    if isinstance(opened, NeedMore):
        return NEED_MORE
    if not opened:
        return Found(v, error="undecodable")
    return text[key_start:key_end].strip(), v


def _find_ci(text: str, literal: str, i: int, limit: int) -> int:
    """``text.find(literal)`` ignoring case, for a short window. O(limit - i)."""
    at = text[i:limit].lower().find(literal)
    return at + i if at != -1 else -1


GLM = _Glm()
