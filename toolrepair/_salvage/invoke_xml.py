"""The invoke/parameter family: one reader, parametrised by tag names::

    <BLOCK><INVOKE name="N"><PARAM name="k">v</PARAM></INVOKE></BLOCK>

MiniMax-M2 (``minimax:tool_call`` / ``invoke`` / ``parameter``), DeepSeek V3.2 and V4 DSML
(``｜DSML｜`` tags; ``string="false"`` values are JSON), Step-3 (``steptml:`` tags inside
DeepSeek-style fullwidth tokens), Muse Glimmer (``atem:`` tags) and MiniCPM5 (no block,
``function`` / ``param``, ``<![CDATA[...]]>`` values), and Anthropic-style invokes with no
namespace, in ``<function_calls>`` or bare (a bare invoke is a call once ``</invoke>`` closes
it). Values are raw text, kept as written; an invoke may instead hold one JSON object of
arguments (SGLang accepts it for DSML).

A block's ``<invoke name=`` is also the bare form's marker, so a refused block reaches to its
end (``refused_block``): one region, one rejection, never a second reading of its invokes.

MiniMax-M3 (every tag behind a ``]<]minimax[>[`` token, the parameter name as the tag) has its
own small reader below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, found_calls, skip_ws, startswith_ci
from ._json import JsonFailure, decode_at
from ._xml_text import ValueSpec, any_at, call_at_end, read_attrs, refused_if_dangling, value_or_refusal
from .spelled import Spelled, bar_variants

__all__ = [
    "ANTHROPIC_XML",
    "DSML",
    "GLIMMER",
    "MINICPM5",
    "MINIMAX_M2",
    "MINIMAX_M3",
    "STEP3",
    "InvokeDialect",
    "json_value",
]


def json_value(raw: str, ctx: ReadContext) -> Any:
    """``raw`` as JSON when it is exactly one JSON value, else ``raw`` itself."""
    s = raw.strip()
    if not s:
        return raw
    got = decode_at(s, 0, ReadContext(True, ctx.max_depth, ctx.max_call_chars))
    if isinstance(got, tuple) and got[1] == len(s):
        return got[0]
    return raw


def block_end(text: str, k: int, close: str, ctx: ReadContext, opens: tuple[str, ...] = ()) -> int | NeedMore:
    """How far a block reaches from ``k``: past its first ``close``, or up to the start of the
    first of ``opens`` met before it (a new block: a stray opener does not swallow the call
    written after it), or to the end of the window (``max_call_chars`` from ``k``) or of the
    reply. NEED_MORE while a stream may still bring either. O(the distance)."""
    limit = min(len(text), k + ctx.max_call_chars)
    m = _literals_ci((close, *opens)).search(text, k, limit)
    if m is None:
        return NEED_MORE if not ctx.final and limit == len(text) else limit
    return m.end() if m.group().lower() == close else m.start()


def refused_block(
    found: Found, text: str, marker_end: int, close: str, ctx: ReadContext, *, opens: tuple[str, ...]
) -> Found | NeedMore:
    """``found``, a block's refusal, reaching to the block's end: one region, one rejection
    (the invokes in it are not read again, where a bare invoke's reader would refuse or take
    them a second time); a new block opened inside it is read again."""
    end = block_end(text, marker_end, close, ctx, opens)
    if isinstance(end, NeedMore):
        return NEED_MORE
    return Found(found.end, found.calls, error=found.error, resume=max(end, found.resume or 0))


@lru_cache(maxsize=64)
def _literals_ci(literals: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, literals)), re.IGNORECASE)


@dataclass(frozen=True)
class InvokeDialect:
    """Invoke/parameter tags inside an optional block; all tag names lower case."""

    name: str
    blocks: tuple[tuple[str, str], ...]  # (opening marker, closing tag); () = bare invokes
    invoke: str
    param: str
    typed: bool = False  # `string="false"` marks a JSON value (DSML)
    cdata: bool = False
    fillers: tuple[str, ...] = ()  # tokens between invokes (Step-3)
    prelude: str | None = None  # `function<｜tool_sep｜>NAME` before an invoke (Step-3)
    reasoning: tuple[tuple[str | None, str], ...] = field(default=())
    # A bare invoke (no block) is a call only once its closing tag is read: with no block to
    # bound it, an invoke that stops elsewhere is refused (the end of the reply: truncated).
    closed: bool = False

    @property
    def markers(self) -> tuple[str, ...]:
        if self.blocks:
            return tuple(open_ for open_, _ in self.blocks)
        return (f"<{self.invoke} name=",)

    @property
    def closers(self) -> tuple[str, ...]:
        if self.blocks:
            return tuple(close for _, close in self.blocks)
        return (f"</{self.invoke}>",)

    def _spec(self, block_close: str | None) -> ValueSpec:
        closes = (block_close,) if block_close else ()
        return ValueSpec(
            close=f"</{self.param}>",
            successors=(f"<{self.param} ", f"</{self.invoke}>", *closes),
            own=self.markers,
            cdata=self.cdata,
            tail=(f"</{self.invoke}>", block_close) if block_close else None,
        )

    @property
    def _tokens(self) -> tuple[str, ...]:
        return self.fillers + ((self.prelude,) if self.prelude else ())

    def _invoke(
        self, text: str, i: int, ctx: ReadContext, spec: ValueSpec, budget: list[int]
    ) -> tuple[RawCall, int] | Found | NeedMore | None:
        """The invoke whose `<` is at ``i``: (call, end); None when no invoke opens there.
        ``budget[0]`` carries the markers crossed in values across the whole read.
        O(invoke length)."""
        p = i + 1 + len(self.invoke)
        if p >= len(text):
            return NEED_MORE if not ctx.final else None
        if not text[p].isspace():
            return None
        head = read_attrs(text, p, ctx)
        if head is None or head is NEED_MORE:
            return head
        assert isinstance(head, tuple)
        attrs, j = head
        name = attrs.get("name")
        if not name:
            return None
        k = skip_ws(text, j)
        if k < len(text) and text[k] == "{":
            return self._json_invoke(text, k, name, ctx)
        return self._params(text, j, name, ctx, spec=spec, budget=budget)

    def _json_invoke(self, text: str, k: int, name: str, ctx: ReadContext) -> tuple[RawCall, int] | Found | NeedMore:
        """An invoke holding one JSON object of arguments at ``k``."""
        got = decode_at(text, k, ctx)
        if isinstance(got, NeedMore):
            return NEED_MORE
        if isinstance(got, JsonFailure):
            return Found(max(got.pos, k + 1), error=got.reason)
        arguments, j = got
        if not isinstance(arguments, dict):
            return Found(j, error="undecodable-arguments")
        k = skip_ws(text, j)
        if k >= len(text):
            return NEED_MORE if not ctx.final else (RawCall(name, arguments), j)
        end_invoke = f"</{self.invoke}>"
        closed = any_at(text, k, (end_invoke,), ctx)
        if isinstance(closed, NeedMore):
            return NEED_MORE
        return RawCall(name, arguments), k + len(end_invoke) if closed else j

    def _params(
        self, text: str, j: int, name: str, ctx: ReadContext, *, spec: ValueSpec, budget: list[int]
    ) -> tuple[RawCall, int] | Found | NeedMore:
        """The parameters from ``j`` up to the invoke's closing tag (or whatever else ends them)."""
        n = len(text)
        end_invoke = f"</{self.invoke}>"
        literals = (end_invoke, f"<{self.param}")
        arguments: dict[str, Any] = {}
        while True:
            k = skip_ws(text, j)
            if k >= n:
                return call_at_end(text, name, ctx)
            lit = any_at(text, k, literals, ctx)
            if isinstance(lit, NeedMore):
                return NEED_MORE
            if lit is None:
                return RawCall(name, arguments), j  # the block's end, or junk: stop here
            if lit == end_invoke:
                return RawCall(name, arguments), k + len(lit)
            got = self._param(text, k, k + len(lit), ctx, spec=spec, budget=budget)
            if not isinstance(got, tuple):
                return got
            if got[0] in arguments:  # two values for one key: which one is meant is unknowable
                return Found(k, error="undecodable-arguments")
            key, arguments[key], j = got

    def _param(
        self, text: str, k: int, p: int, ctx: ReadContext, *, spec: ValueSpec, budget: list[int]
    ) -> tuple[str, Any, int] | Found | NeedMore:
        """The parameter whose tag opens at ``k`` (its name ending at ``p``): (key, value, end)."""
        n = len(text)
        if p >= n:
            return NEED_MORE if not ctx.final else Found(n, error="truncated")
        if not text[p].isspace():
            return Found(k, error="undecodable")
        head = read_attrs(text, p, ctx)
        if isinstance(head, NeedMore):
            return NEED_MORE
        if head is None and text.find(">", p) == -1:
            return Found(n, error="truncated")  # the reply ends inside the tag (final here)
        if head is None or "name" not in head[0]:
            return Found(k + 1, error="undecodable")
        attrs, v = head
        got = value_or_refusal(text, v, spec, ctx, budget[0])
        if not isinstance(got, tuple):
            return got
        value, j, _, budget[0] = got
        return attrs["name"], self._typed(value, attrs, ctx), j

    def _typed(self, value: str, attrs: dict[str, str], ctx: ReadContext) -> Any:
        """A DSML ``string="false"`` value is JSON; every other value is the raw text."""
        if self.typed and attrs.get("string", "true").lower() == "false":
            return json_value(value, ctx)
        return value

    def _skip_fillers(self, text: str, j: int, ctx: ReadContext) -> int | NeedMore:
        """Past whitespace, filler tokens and a prelude. O(what is skipped)."""
        tokens = self._tokens
        if not tokens:
            return skip_ws(text, j)
        n = len(text)
        while True:
            k = skip_ws(text, j)
            if k >= n:
                return k
            lit = any_at(text, k, tokens, ctx)
            if isinstance(lit, NeedMore):
                return NEED_MORE
            if lit is None:
                return k
            j = k + len(lit)
            if lit == self.prelude:  # a name up to the invoke tag
                limit = min(n, j + ctx.max_name_chars)
                lt = text.find("<", j, limit)
                if lt == -1:
                    return NEED_MORE if not ctx.final and limit == n else k
                j = lt

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(block length); values crossing more than MAX_CROSSINGS of our markers are refused.
        if not self.blocks:
            got = self._invoke(text, start, ctx, self._spec(None), [0])
            if not isinstance(got, tuple):
                return got
            if self.closed and not text.endswith(f"</{self.invoke}>", 0, got[1]):
                return Found(got[1], error="truncated" if skip_ws(text, got[1]) >= len(text) else "undecodable")
            return refused_if_dangling(
                Found(got[1], (got[0],)), text, self._closers(()), ctx, own=self.markers, spec=self._after_spec(None)
            )
        marker = text[start:marker_end].lower()
        close = next(c for o, c in self.blocks if o == marker)
        found = self._block(text, marker_end, close, ctx)
        if not isinstance(found, Found):
            return found
        if found.error is not None and found.resume is None:
            return refused_block(found, text, marker_end, close, ctx, opens=self.markers)
        return refused_if_dangling(
            found, text, self._closers((close,)), ctx, own=self.markers, spec=self._after_spec(close), wrapper=close
        )

    def _after_spec(self, block_close: str | None) -> ValueSpec:
        """The value spec with the next parameter's tag as the stop that ends a look past a call."""
        spec = self._spec(block_close)
        return ValueSpec(spec.close, spec.successors, (f"<{self.param} ",), spec.own, spec.cdata)

    def _closers(self, block: tuple[str, ...]) -> tuple[str, ...]:
        """What can never follow an invoke outside one: its inner tags and closers."""
        return (f"</{self.param}>", f"</{self.invoke}>", *block, f"<{self.param} ")

    def _block(self, text: str, j: int, close: str, ctx: ReadContext) -> Found | NeedMore | None:
        """The invokes from ``j`` up to the block's ``close``. O(block length)."""
        n = len(text)
        literals = (close, f"<{self.invoke}")
        spec = self._spec(close)
        calls: list[RawCall] = []
        budget = [0]
        while True:
            k = self._skip_fillers(text, j, ctx)
            if isinstance(k, NeedMore):
                return NEED_MORE
            if k >= n:
                return NEED_MORE if not ctx.final else found_calls(j, calls) or Found(n, error="truncated")
            lit = any_at(text, k, literals, ctx)
            if isinstance(lit, NeedMore):
                return NEED_MORE
            if lit == close:
                return Found(k + len(close), tuple(calls))  # no calls: a silent skip
            if lit is None and calls:
                # Text inside the block after an invoke: if the invoke's own tags come in it, a
                # value held them and ended too early. O(the rest of the block), once.
                end = block_end(text, k, close, ctx)
                if isinstance(end, NeedMore):
                    return NEED_MORE
                rest = text[k:end].lower()
                if any(t in rest for t in self._closers(())):
                    return Found(end, error="ambiguous", resume=end)
            got = None if lit is None else self._invoke(text, k, ctx, spec, budget)
            if isinstance(got, Found) and got.error is not None and calls:
                # The complete calls before a broken one stand; the broken one is refused alone.
                named = got.calls[0].name if got.calls else ""  # a refusal may name its call
                return Found(got.end, (*calls, RawCall(named, {}, error=got.error)))
            if not isinstance(got, tuple):
                return found_calls(j, calls) if got is None else got
            calls.append(got[0])
            j = got[1]


MINIMAX_M2 = InvokeDialect("minimax_m2", (("<minimax:tool_call>", "</minimax:tool_call>"),), "invoke", "parameter")
# DeepSeek V3.2 `function_calls`, V4 `tool_calls`, V4.1 `calls` (written `<｜DSML｜ calls>`, a
# space after the bar); agent UIs show the bar doubled. One form per spelling of the prefix.
DSML = Spelled(
    "dsml",
    tuple(
        InvokeDialect(
            "dsml",
            tuple((f"<{p}{block}>", f"</{p}{block}>") for block in ("function_calls", "tool_calls", "calls")),
            f"{p}invoke",
            f"{p}parameter",
            typed=True,
        )
        for p in bar_variants("｜dsml｜")
    ),
)
STEP3 = InvokeDialect(
    "step3",
    (("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),),
    "steptml:invoke",
    "steptml:parameter",
    fillers=("<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"),
    prelude="function<｜tool_sep｜>",
)
GLIMMER = InvokeDialect(
    "glimmer", (("<atem:function_calls>", "</atem:function_calls>"),), "atem:invoke", "atem:parameter"
)
MINICPM5 = InvokeDialect("minicpm5", (), "function", "param", cdata=True)
# Anthropic-style function calls written as text without a namespace prefix, in their
# `<function_calls>` block or bare (Claude Code shows a bare `<invoke>` in its replies): a bare
# invoke is a call once `</invoke>` closes it.
ANTHROPIC_XML = Spelled(
    "anthropic_xml",
    (
        InvokeDialect("anthropic_xml", (("<function_calls>", "</function_calls>"),), "invoke", "parameter"),
        InvokeDialect("anthropic_xml", (), "invoke", "parameter", closed=True),
    ),
)


# --- MiniMax-M3 -----------------------------------------------------------------------------

_NS = "]<]minimax[>["


@dataclass(frozen=True)
class _MinimaxM3:
    """``NS<tool_call> NS<invoke name="N"> NS<KEY>value NS</KEY> NS</invoke> NS</tool_call>``.

    Every tag follows the namespace token NS, which never occurs inside a value, so a value
    ends at the next NS: each read is bounded by its block. Nested (object) values are refused.
    """

    name: str = "minimax_m3"
    markers: tuple[str, ...] = (_NS + "<tool_call>",)
    closers: tuple[str, ...] = (_NS + "</tool_call>",)
    reasoning: tuple[tuple[str | None, str], ...] = (("<mm:think>", "</mm:think>"),)

    def _tag(self, text: str, j: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
        """The tag after the NS token at ``j`` (``<invoke name="N">`` -> 'invoke name="N"')."""
        k = skip_ws(text, j)
        if not startswith_ci(text, _NS + "<", k):
            rest = text[k : k + len(_NS) + 1].lower()
            return NEED_MORE if not ctx.final and (_NS + "<").startswith(rest) else None
        s = k + len(_NS) + 1
        limit = min(len(text), s + ctx.max_name_chars * 2)
        gt = text.find(">", s, limit)
        if gt == -1:
            return NEED_MORE if not ctx.final and limit == len(text) else None
        return text[s:gt], gt + 1

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(block length): every scan stops at the next NS token.
        found, invoked = self._read(text, marker_end, ctx)
        if not isinstance(found, Found) or found.error is None or not invoked:
            return found
        # Its `NS<invoke name=` heads are bare invokes' markers too: not read again.
        return refused_block(found, text, marker_end, _NS + "</tool_call>", ctx, opens=self.markers)

    def _read(self, text: str, marker_end: int, ctx: ReadContext) -> tuple[Found | NeedMore, bool]:
        """The block's answer, and whether it read an invoke's head."""
        calls: list[RawCall] = []
        j = marker_end
        name: str | None = None
        invoked = False
        arguments: dict[str, Any] = {}
        while True:
            tag = self._tag(text, j, ctx)
            if isinstance(tag, NeedMore):
                return NEED_MORE, invoked
            if tag is None:
                return _m3_stopped(text, j, marker_end, ctx, calls if name is None else []), invoked
            body, after = tag
            low = body.strip().lower()
            if name is None:  # between invokes: the block's end, or an invoke's head
                if low == "/tool_call":
                    return Found(after, tuple(calls)), invoked
                name = _m3_invoke_name(body, low, ctx)
                if name is None:
                    return Found(after, error="undecodable"), invoked
                arguments, j, invoked = {}, after, True
            elif low == "/invoke":
                calls.append(RawCall(name, arguments))
                name, j = None, after
            else:
                got = self._value(text, body, after, ctx)
                if not isinstance(got, tuple):
                    return got, invoked
                key, arguments[key], j = got

    def _value(self, text: str, body: str, after: int, ctx: ReadContext) -> tuple[str, str, int] | Found | NeedMore:
        """The value of the parameter tag ``body`` ending at ``after``: (key, value, end)."""
        if not body or body.startswith("/"):
            return Found(after, error="undecodable")
        key = body.strip()
        v_end = text.find(_NS, after)
        if v_end == -1:
            return NEED_MORE if not ctx.final else Found(len(text), error="truncated")
        closing = self._tag(text, v_end, ctx)
        if isinstance(closing, NeedMore):
            return NEED_MORE
        if closing is None or closing[0].strip() != "/" + key:
            return Found(v_end, error="undecodable")  # nested values: not supported
        return key, text[after:v_end], closing[1]


def _m3_invoke_name(body: str, low: str, ctx: ReadContext) -> str | None:
    """The name in an ``invoke name="N"`` tag body, or None when the tag is not one."""
    if not low.startswith("invoke"):
        return None
    head = read_attrs(body + ">", len("invoke"), ctx)
    return head[0].get("name") or None if isinstance(head, tuple) else None


def _m3_stopped(text: str, j: int, marker_end: int, ctx: ReadContext, calls: list[RawCall]) -> Found:
    """Where no tag follows ``j``: the complete calls when the reply ended between invokes."""
    ended = skip_ws(text, j) >= len(text)
    if ended and ctx.final and calls:
        return Found(j, tuple(calls))
    return Found(max(j, marker_end), error="truncated" if ended else "undecodable")


MINIMAX_M3 = _MinimaxM3()
