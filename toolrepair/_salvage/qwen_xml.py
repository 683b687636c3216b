"""Qwen3-Coder XML (also Qwen3.5/3.6, Nemotron 3 Nano, StepFun 3.5) and Seed-OSS::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

Values are raw text (the schema types them later: the text ``null`` is None where the
parameter's schema allows null, ``_args._decode.NullText``); Qwen templates put one newline on each side
of a value, which is stripped; Seed-OSS values are kept as written. The first call may omit
``<tool_call>`` (the reply starts at ``<function=``); closing tags the end of the reply ate are
not required once the last value is complete. The `<tool_call>` marker is shared with Hermes
(JSON body) and GLM (``NAME<arg_key>``): this reader takes only ``<function=`` bodies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._args._decode import tag_text
from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._xml_text import ValueSpec, any_at, call_at_end, refused_if_dangling, value_or_refusal
from .function_tag import read_tag_name

__all__ = ["QWEN3_CODER", "SEED_OSS", "trim_newlines"]

_FUNCTION = "<function="
_PARAMETER = "<parameter="
_END_PARAMETER = "</parameter>"
_END_FUNCTION = "</function>"


def trim_newlines(value: str) -> str:
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
    if not isinstance(head, tuple):
        return head
    name, j = head
    ends = (_PARAMETER, _END_FUNCTION, block_close)
    spec = ValueSpec(
        close=_END_PARAMETER,
        successors=ends,
        stops=ends,
        own=own,
        tail=(_END_FUNCTION, block_close),
        reopen=(_FUNCTION,),
    )
    arguments: dict[str, Any] = {}
    while True:
        k = skip_ws(text, j)
        if k >= n:
            return call_at_end(text, name, ctx)
        lit = any_at(text, k, ends, ctx)
        if isinstance(lit, NeedMore):
            return NEED_MORE
        if lit is None:
            return None if not arguments else Found(k, error="undecodable")
        if lit != _PARAMETER:  # the function's end, or the block's (which stays to be read)
            return RawCall(name, arguments), k + len(lit) if lit == _END_FUNCTION else k
        got = _parameter(text, k, ctx, spec, budget)
        if not isinstance(got, tuple):
            return got
        key, value, j = got
        if key in arguments:  # two values for one key: which one is meant is unknowable
            return Found(k, error="undecodable-arguments")
        arguments[key] = tag_text(trim_newlines(value) if trim else value)


def _parameter(
    text: str, k: int, ctx: ReadContext, spec: ValueSpec, budget: list[int]
) -> tuple[str, str, int] | Found | NeedMore:
    """The ``<parameter=KEY>`` at ``k`` and its raw value: (key, value, end)."""
    key_head = read_tag_name(text, k + len(_PARAMETER), ctx)
    if isinstance(key_head, NeedMore):
        return NEED_MORE
    if key_head is None:
        return Found(k + 1, error="undecodable")
    key, v = key_head
    got = value_or_refusal(text, v, spec, ctx, budget[0])
    if not isinstance(got, tuple):
        return got
    value, j, closed, budget[0] = got
    # A value a stop tag ended keeps the layout before that tag out.
    return key, value if closed else value.rstrip(), j


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

    @property
    def closers(self) -> tuple[str, ...]:
        return (self.close, _END_FUNCTION) if self.bare_function else (self.close,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(block length); values crossing more than MAX_CROSSINGS of our markers are refused.
        j = self._first(text, start, marker_end, ctx)
        if not isinstance(j, int):
            return j
        calls: list[RawCall] = []
        budget = [0]
        while True:
            got = read_function(text, j, ctx, self.close, own=self.markers, trim=self.trim, budget=budget)
            if got is None and calls:
                return Found(j, error="undecodable", resume=j)
            if isinstance(got, Found) and got.error is not None and got.resume is None:
                # The `<function=` a refusal read is this region's: not read again as a call
                # of its own (one region, one rejection).
                return Found(got.end, got.calls, error=got.error, resume=max(got.end, j + 1))
            if not isinstance(got, tuple):
                return got
            call, end = got
            calls.append(call)
            after = self._after_call(text, end, ctx)
            if not isinstance(after, tuple):
                return after
            j, more = after
            if not more:
                closers = (_END_PARAMETER, _END_FUNCTION, self.close, _PARAMETER)
                spec = ValueSpec(
                    close=_END_PARAMETER, successors=(*closers[1:3], _PARAMETER), stops=(_PARAMETER,), own=self.markers
                )
                return refused_if_dangling(
                    Found(j, tuple(calls)), text, closers, ctx, own=self.markers, spec=spec, wrapper=self.close
                )

    def _first(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> int | NeedMore | None:
        """Index of the first ``<function=``: the marker itself, or after ``<tool_call>``."""
        if text[start:marker_end].lower() == _FUNCTION:
            return start
        first = skip_ws(text, marker_end)
        if first >= len(text):
            return NEED_MORE if not ctx.final else None
        opened = expect_literal(text, first, _FUNCTION, ctx)
        if isinstance(opened, NeedMore):
            return NEED_MORE
        return first if opened else None  # else a JSON body (Hermes) or `NAME<arg_key>` (GLM)

    def _after_call(self, text: str, end: int, ctx: ReadContext) -> tuple[int, bool] | NeedMore:
        """After a call ending at ``end``: (index of the block's next ``<function=``, True),
        or (where the block ends, False)."""
        k = skip_ws(text, end)
        if k >= len(text):
            return NEED_MORE if not ctx.final else (end, False)
        closed = expect_literal(text, k, self.close, ctx)
        if isinstance(closed, NeedMore):
            return NEED_MORE
        if closed:
            return k + len(self.close), False
        # One call per `<tool_call>` block (a following `<function=` is its own candidate,
        # which keeps every read within its own block); Seed-OSS blocks may hold several.
        if self.bare_function:
            return end, False
        more = expect_literal(text, k, _FUNCTION, ctx)
        if isinstance(more, NeedMore):
            return NEED_MORE
        return (k, True) if more else (end, False)


QWEN3_CODER = _QwenXml("qwen3_coder", "<tool_call>", "</tool_call>", trim=True, bare_function=True)
SEED_OSS = _QwenXml(
    "seed_oss",
    "<seed:tool_call>",
    "</seed:tool_call>",
    trim=False,
    bare_function=False,
    reasoning=(("<seed:think>", "</seed:think>"),),
)
