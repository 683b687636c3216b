"""Gemma 4 and FunctionGemma: ``call:NAME{key:value,…}`` between their own tokens.

::

    <|tool_call>call:get_weather{location:<|"|>Paris<|"|>,days:3}<tool_call|>         Gemma 4
    <start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>   FunctionGemma

The arguments are a JavaScript-like object: unquoted keys, strings between a quote *token*
(``<|"|>`` or ``<escape>``) taken raw (a ``"`` or a backslash inside is just a character),
bare numbers, ``true``/``false``/``null``, nested ``{}`` and ``[]``. ``read_loose_object``
parses it with an explicit stack: linear, and bounded by the depth and size limits. A JSON
call object after the opening token is read as Hermes reads it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._args import FINITE_SCAN
from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._json import JsonFailure
from .tag import read_json_block

__all__ = ["FUNCTIONGEMMA", "GEMMA4", "read_loose_object"]

_BARE_KEY = re.compile(r"[^\s:,{}\[\]<>\"']+")
_SCALAR = re.compile(r"[^\s,{}\[\]<]+")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
# A bare number or literal longer than this is not one (and bounds the scalar scan).
MAX_SCALAR_CHARS = 400

_KEY, _VALUE, _AFTER = 0, 1, 2
_STRINGS = json.JSONDecoder(strict=False)  # JSON "…" strings, for models that write them


def _short(ctx: ReadContext, n: int) -> JsonFailure | NeedMore:
    return NEED_MORE if not ctx.final else JsonFailure("truncated", n)


def _string(
    text: str, j: int, quote: str, ctx: ReadContext, limit: int
) -> tuple[str, int] | JsonFailure | NeedMore:
    """A string opening at ``j``: quote-token delimited (raw) or a JSON ``"…"`` string."""
    n = len(text)
    if text.startswith(quote, j):
        e = text.find(quote, j + len(quote), limit)
        if e == -1:
            return JsonFailure("too-large", j) if limit < n else _short(ctx, n)
        return text[j + len(quote) : e], e + len(quote)
    try:
        value, e = _STRINGS.raw_decode(text, j)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string"):
            return _short(ctx, n)
        return JsonFailure("undecodable", exc.pos)
    return value, e


def _scalar(text: str, j: int, ctx: ReadContext) -> tuple[Any, int] | JsonFailure | NeedMore:
    """A bare number or ``true``/``false``/``null`` at ``j``; O(MAX_SCALAR_CHARS)."""
    n = len(text)
    m = _SCALAR.match(text, j, min(n, j + MAX_SCALAR_CHARS + 1))
    if m is None:
        return JsonFailure("undecodable", j)
    e = m.end()
    if e == n:
        return _short(ctx, n)  # more digits or letters may follow
    word = m.group()
    if word in _LITERALS:
        return _LITERALS[word], e
    if len(word) <= MAX_SCALAR_CHARS and _NUMBER.fullmatch(word):
        try:  # the decoder's own number reading: non-finite refused, the spelling kept
            number, _ = FINITE_SCAN(word, 0)
        except ValueError:  # not finite, or past Python's integer digit limit
            return JsonFailure("undecodable", j)
        return number, e
    return JsonFailure("undecodable", j)


def read_loose_object(
    text: str, i: int, ctx: ReadContext, quote: str
) -> tuple[dict[str, Any], int] | JsonFailure | NeedMore:
    """The ``{key:value,…}`` object at ``text[i] == "{"`` and the index after it.

    Iterative (explicit stack, depth at most ``ctx.max_depth``); O(length of the object). A
    trailing comma is tolerated; anything else out of place is ``undecodable``.
    """
    n = len(text)
    limit = min(n, i + ctx.max_call_chars)
    root: dict[str, Any] = {}
    stack: list[dict[str, Any] | list[Any]] = [root]
    keys: list[str] = [""]  # the pending key of each open object
    state = _KEY
    j = i + 1
    while True:
        j = skip_ws(text, j)
        if j >= limit:
            return JsonFailure("too-large", i) if limit < n else _short(ctx, n)
        c = text[j]
        if n - j < len(quote) and quote.startswith(text[j:]) and state != _AFTER:
            return _short(ctx, n)  # the text ends inside what may be a quote token
        top = stack[-1]
        value: Any
        if state == _AFTER or (c == "}" and state == _KEY) or (c == "]" and state == _VALUE):
            if c == "," and state == _AFTER:
                state = _KEY if isinstance(top, dict) else _VALUE
                j += 1
                continue
            if (c == "}" and isinstance(top, dict)) or (c == "]" and isinstance(top, list)):
                j += 1
                value = stack.pop()
                keys.pop()
                if not stack:
                    return root, j
                top = stack[-1]
            else:
                return JsonFailure("undecodable", j)
        elif state == _KEY:
            if c == '"' or text.startswith(quote, j):
                got = _string(text, j, quote, ctx, limit)
                if not isinstance(got, tuple):
                    return got
                key, j = got
            else:
                m = _BARE_KEY.match(text, j, min(n, j + ctx.max_name_chars + 1))
                if m is None or m.end() - j > ctx.max_name_chars:
                    return JsonFailure("undecodable", j)
                key, j = m.group(), m.end()
            j = skip_ws(text, j)
            if j >= n:
                return _short(ctx, n)
            if text[j] != ":":
                return JsonFailure("undecodable", j)
            keys[-1] = key
            state = _VALUE
            j += 1
            continue
        elif c in "{[":
            if len(stack) >= ctx.max_depth:
                return JsonFailure("too-deep", j)
            stack.append({} if c == "{" else [])
            keys.append("")
            state = _KEY if c == "{" else _VALUE
            j += 1
            continue
        else:
            got2 = _string(text, j, quote, ctx, limit) if c == '"' or text.startswith(quote, j) else _scalar(
                text, j, ctx)
            if not isinstance(got2, tuple):
                return got2
            value, j = got2
        if isinstance(top, dict):
            top[keys[-1]] = value
        else:
            top.append(value)
        state = _AFTER


def _read_name(text: str, i: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """``call:NAME`` then ``{``: (NAME, index of the brace); O(ctx.max_name_chars)."""
    n = len(text)
    ok = expect_literal(text, i, "call:", ctx)
    if not ok:
        return None if ok is False else NEED_MORE
    i += len("call:")
    j = i
    limit = min(n, i + ctx.max_name_chars)
    while j < limit and (text[j].isalnum() or text[j] in "_-.:"):
        j += 1
    k = skip_ws(text, j)
    if k >= n:
        return NEED_MORE if not ctx.final else None
    if j == i or text[k] != "{":
        return None
    return text[i:j], k


_BARE = "call:"


@dataclass(frozen=True)
class _CallToken:
    """``after``: a token after which ``call:NAME{...}`` is read without the opening token
    (Gemma 4 right after its channel close, when the ``<|tool_call>`` that follows was eaten)."""

    name: str
    open: str
    close: str
    quote: str
    reasoning: tuple[tuple[str | None, str], ...] = ()
    after: str | None = None

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.open, _BARE) if self.after else (self.open,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        """O(ctx.max_name_chars + arguments)."""
        n = len(text)
        if self.after is not None and text[start : start + len(_BARE)].lower() == _BARE:
            k = start
            while k > max(0, start - 64) and text[k - 1].isspace():
                k -= 1
            if text[max(0, k - len(self.after)) : k].lower() != self.after:
                return None  # `call:` in prose
            marker_end = start  # `call:` is the payload's own start
        i = skip_ws(text, marker_end)
        if i >= n:
            return NEED_MORE if not ctx.final else None
        if text[i] in "{[":
            return read_json_block(text, start, i, self.close, ctx)
        head = _read_name(text, i, ctx)
        if not isinstance(head, tuple):
            return head
        name, k = head
        got = read_loose_object(text, k, ctx, self.quote)
        if got is NEED_MORE:
            return NEED_MORE
        if isinstance(got, JsonFailure):
            return Found(max(got.pos, k + 1), error=got.reason)
        assert isinstance(got, tuple)
        arguments, j = got
        e = skip_ws(text, j)
        if e >= n and not ctx.final:
            return NEED_MORE
        closed = expect_literal(text, e, self.close, ctx)
        if closed is NEED_MORE:
            return NEED_MORE
        return Found(e + len(self.close) if closed else j, (RawCall(name, arguments),))


GEMMA4 = _CallToken("gemma4", "<|tool_call>", "<tool_call|>", '<|"|>', (("<|channel>", "<channel|>"),),
                    after="<channel|>")
FUNCTIONGEMMA = _CallToken("functiongemma", "<start_function_call>", "<end_function_call>", "<escape>")
