"""Qwen3-Coder XML (also Qwen3.5/3.6, Nemotron 3 Nano, StepFun 3.5) and Seed-OSS::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

Values are raw text (the schema types them later); Qwen templates put one newline on each side
of a value, which is stripped; Seed-OSS values are kept as written. The first call may omit
``<tool_call>`` (the reply starts at ``<function=``); closing tags the end of the reply ate are
not required once the last value is complete. The `<tool_call>` marker is shared with Hermes
(JSON body) and GLM (``NAME<arg_key>``): this reader takes only ``<function=`` bodies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._xml_text import ValueSpec, any_at, read_value
from .function_tag import read_tag_name

__all__ = ["QWEN3_CODER", "SEED_OSS"]

_FUNCTION = "<function="
_PARAMETER = "<parameter="
_END_PARAMETER = "</parameter>"
_END_FUNCTION = "</function>"


def _trim_newlines(value: str) -> str:
    """One template newline on each side, no more: the value's own blank lines stay."""
    if value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    return value


def read_function(
    text: str, i: int, ctx: ReadContext, block_close: str, *, own: tuple[str, ...], trim: bool, budget: list[int]
) -> tuple[RawCall, int] | Found | NeedMore | None:
    """``<function=NAME>`` at ``i``, its parameters and ``</function>``: (call, end).

    A missing ``</function>`` (at the block's close or the end of the reply) is tolerated.
    ``budget[0]`` carries our markers crossed in values across the whole read.
    None when the body is not parameters (a JSON body is ``function_tag``'s). O(call length).
    """
    n = len(text)
    head = read_tag_name(text, i + len(_FUNCTION), ctx)
    if head is None or head is NEED_MORE:
        return head
    assert isinstance(head, tuple)
    name, j = head
    spec = ValueSpec(
        close=_END_PARAMETER,
        successors=(_PARAMETER, _END_FUNCTION, block_close),
        stops=(_PARAMETER, _END_FUNCTION, block_close),
        own=own,
    )
    arguments: dict[str, Any] = {}
    while True:
        k = skip_ws(text, j)
        if k >= n:
            if not ctx.final:
                return NEED_MORE
            if not arguments:  # cut short before a value, or a call without arguments?
                return Found(n, error="truncated")
            return RawCall(name, arguments), j  # the end of the reply ate the closing tags
        lit = any_at(text, k, (_PARAMETER, _END_FUNCTION, block_close), ctx)
        if isinstance(lit, NeedMore):
            return NEED_MORE
        if lit == _END_FUNCTION:
            return RawCall(name, arguments), k + len(lit)
        if lit == block_close:
            return RawCall(name, arguments), k
        if lit is None:
            return None if not arguments else Found(k, error="undecodable")
        key_head = read_tag_name(text, k + len(_PARAMETER), ctx)
        if isinstance(key_head, NeedMore):
            return NEED_MORE
        if key_head is None:
            return Found(k + 1, error="undecodable")
        assert isinstance(key_head, tuple)
        key, v = key_head
        got = read_value(text, v, spec, ctx, budget[0])
        if isinstance(got, NeedMore):
            return NEED_MORE
        if isinstance(got, str):
            return Found(n if got == "truncated" else v, error=got)
        assert isinstance(got, tuple)
        value, j, closed, budget[0] = got
        if not closed:
            value = value.rstrip()  # the layout before the next tag, not the value
        arguments[key] = _trim_newlines(value) if trim else value


@dataclass(frozen=True)
class _QwenXml:
    name: str
    open: str
    close: str
    trim: bool
    bare_function: bool  # `<function=` alone also opens a call (Qwen3-Coder's first call)
    reasoning: tuple[tuple[str | None, str], ...] = ()

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.open, _FUNCTION) if self.bare_function else (self.open,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(block length); values crossing more than MAX_CROSSINGS of our markers are refused.
        n = len(text)
        own = self.markers
        if text[start:marker_end].lower() == _FUNCTION:
            first: int = start
        else:
            first = skip_ws(text, marker_end)
            if first >= n:
                return NEED_MORE if not ctx.final else None
            opened = expect_literal(text, first, _FUNCTION, ctx)
            if isinstance(opened, NeedMore):
                return NEED_MORE
            if not opened:
                return None  # a JSON body (Hermes) or `NAME<arg_key>` (GLM)
        calls: list[RawCall] = []
        budget = [0]
        j = first
        while True:
            got = read_function(text, j, ctx, self.close, own=own, trim=self.trim, budget=budget)
            if got is None and calls:
                return Found(j, error="undecodable")
            if not isinstance(got, tuple):
                return got
            call, end = got
            calls.append(call)
            k = skip_ws(text, end)
            if k >= n:
                return NEED_MORE if not ctx.final else Found(end, tuple(calls))
            closed = expect_literal(text, k, self.close, ctx)
            if isinstance(closed, NeedMore):
                return NEED_MORE
            if closed:
                return Found(k + len(self.close), tuple(calls))
            # One call per `<tool_call>` block (a following `<function=` is its own candidate,
            # which keeps every read within its own block); Seed-OSS blocks may hold several.
            if self.bare_function:
                return Found(end, tuple(calls))
            more = expect_literal(text, k, _FUNCTION, ctx)
            if isinstance(more, NeedMore):
                return NEED_MORE
            if not more:
                return Found(end, tuple(calls))
            j = k


QWEN3_CODER = _QwenXml("qwen3_coder", "<tool_call>", "</tool_call>", trim=True, bare_function=True)
SEED_OSS = _QwenXml(
    "seed_oss", "<seed:tool_call>", "</seed:tool_call>", trim=False, bare_function=False,
    reasoning=(("<seed:think>", "</seed:think>"),),
)
