"""Gemma 4 and FunctionGemma: ``call:NAME{key:value,…}`` between their own tokens.

::

    <|tool_call>call:get_weather{location:<|"|>Paris<|"|>,days:3}<tool_call|>         Gemma 4
    <start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>   FunctionGemma
    <|tool_call>call:get_weather(city="Tokyo", unit: "celsius")                        Gemma 4, parenthesised

The parenthesised form (hosted Gemma 4 writes it, its closing token often missing) is read by
the pythonic keyword-arguments reader (``pythonic.read_keyword_arguments``): keys written
``k=v`` or ``k: v``, Python or JSON literals as values.

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
from .json_blocks import read_after_payload
from .pythonic import BARE_KEY, read_keyword_arguments
from .tag import read_json_block

__all__ = ["FUNCTIONGEMMA", "GEMMA4", "read_loose_object"]

# A bare key: words with single runs of spaces between them (`Basic LLM Chain:`), the one
# rule for both of Gemma's argument forms (the window bounds the match).
_BARE_KEY = re.compile(BARE_KEY)
_SCALAR = re.compile(r"[^\s,{}\[\]<]+")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
# A bare number or literal longer than this is not one (and bounds the scalar scan).
MAX_SCALAR_CHARS = 400

_KEY, _VALUE, _AFTER = 0, 1, 2
_STRINGS = json.JSONDecoder(strict=False)  # JSON "…" strings, for models that write them


def _short(ctx: ReadContext, n: int) -> JsonFailure | NeedMore:
    return NEED_MORE if not ctx.final else JsonFailure("truncated", n)


def _string(text: str, j: int, quote: str, ctx: ReadContext, limit: int) -> tuple[str, int] | JsonFailure | NeedMore:
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


def _key(text: str, j: int, quote: str, ctx: ReadContext, limit: int) -> tuple[str, int] | JsonFailure | NeedMore:
    """A key at ``j`` (quoted, or bare up to ``ctx.max_name_chars``) and the index after its
    colon."""
    n = len(text)
    if text[j] == '"' or text.startswith(quote, j):
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
    return key, j + 1


class _LooseObject:
    """One ``{key:value,…}`` being read: the open containers, each one's pending key, and
    what may come next (``_KEY``, ``_VALUE`` or ``_AFTER`` a value). Each step reads one
    token at ``j`` and answers the index after it, or the outcome of the whole read."""

    __slots__ = ("ctx", "keys", "limit", "quote", "stack", "state", "text")

    def __init__(self, text: str, ctx: ReadContext, quote: str, limit: int) -> None:
        self.text = text
        self.ctx = ctx
        self.quote = quote
        self.limit = limit
        self.stack: list[dict[str, Any] | list[Any]] = [{}]
        self.keys: list[str] = [""]
        self.state = _KEY

    def key(self, j: int, c: str) -> _Step:
        if c == "}":
            return self.close(j, c)
        got = _key(self.text, j, self.quote, self.ctx, self.limit)
        if not isinstance(got, tuple):
            return got
        self.keys[-1], j = got
        self.state = _VALUE
        return j

    def value(self, j: int, c: str) -> _Step:
        if c == "]":
            return self.close(j, c)
        if c in "{[":
            return self.open(j, c)
        text, quote = self.text, self.quote
        got = (
            _string(text, j, quote, self.ctx, self.limit)
            if c == '"' or text.startswith(quote, j)
            else _scalar(text, j, self.ctx)
        )
        if not isinstance(got, tuple):
            return got
        self.put(got[0])
        return got[1]

    def after(self, j: int, c: str) -> _Step:
        if c != ",":
            return self.close(j, c)
        self.state = _KEY if isinstance(self.stack[-1], dict) else _VALUE
        return j + 1

    def open(self, j: int, c: str) -> _Step:
        if len(self.stack) >= self.ctx.max_depth:
            return JsonFailure("too-deep", j)
        self.stack.append({} if c == "{" else [])
        self.keys.append("")
        self.state = _KEY if c == "{" else _VALUE
        return j + 1

    def close(self, j: int, c: str) -> _Step:
        top = self.stack[-1]
        if c != ("}" if isinstance(top, dict) else "]"):
            return JsonFailure("undecodable", j)
        self.stack.pop()
        self.keys.pop()
        if not self.stack:
            assert isinstance(top, dict)  # the root is the object the read began with
            return top, j + 1
        self.put(top)
        return j + 1

    def put(self, value: Any) -> None:
        top = self.stack[-1]
        if isinstance(top, dict):
            top[self.keys[-1]] = value
        else:
            top.append(value)
        self.state = _AFTER


# A step's answer: the index after its token, or the read's outcome.
_Step = int | tuple[dict[str, Any], int] | JsonFailure | NeedMore


def read_loose_object(
    text: str, i: int, ctx: ReadContext, quote: str
) -> tuple[dict[str, Any], int] | JsonFailure | NeedMore:
    """The ``{key:value,…}`` object at ``text[i] == "{"`` and the index after it.

    Iterative (explicit stack, depth at most ``ctx.max_depth``); O(length of the object). A
    trailing comma is tolerated; anything else out of place is ``undecodable``.
    """
    n = len(text)
    limit = min(n, i + ctx.max_call_chars)
    read = _LooseObject(text, ctx, quote, limit)
    steps = (read.key, read.value, read.after)  # indexed by state
    j = i + 1
    while True:
        j = skip_ws(text, j)
        if j >= limit:
            return JsonFailure("too-large", i) if limit < n else _short(ctx, n)
        if read.state != _AFTER and n - j < len(quote) and quote.startswith(text[j:]):
            return _short(ctx, n)  # the text ends inside what may be a quote token
        got = steps[read.state](j, text[j])
        if not isinstance(got, int):
            return got  # not an index: the read's outcome
        j = got


def _read_name(text: str, i: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """``call:NAME`` then ``{`` or ``(``: (NAME, index of the bracket); O(ctx.max_name_chars)."""
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
    if j == i or text[k] not in "{(":
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
            if not _follows(text, start, self.after):
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
        if text[k] == "(":  # `call:NAME(k=v, …)` or `(k: v, …)`: the pythonic arguments reader
            got: tuple[dict[str, Any], int] | Found | JsonFailure | NeedMore
            got = read_keyword_arguments(text, k, ctx, self.markers)
        else:
            got = read_loose_object(text, k, ctx, self.quote)
        if isinstance(got, JsonFailure):
            return Found(max(got.pos, k + 1), error=got.reason)
        if not isinstance(got, tuple):
            return got
        end = read_after_payload(text, got[1], self.close, ctx)
        return NEED_MORE if isinstance(end, NeedMore) else Found(end, (RawCall(name, got[0]),))


def _follows(text: str, i: int, token: str) -> bool:
    """``token`` ends right before ``text[i]``, but for up to 64 whitespace characters."""
    k = i
    while k > max(0, i - 64) and text[k - 1].isspace():
        k -= 1
    return text[max(0, k - len(token)) : k].lower() == token


GEMMA4 = _CallToken(
    "gemma4", "<|tool_call>", "<tool_call|>", '<|"|>', (("<|channel>", "<channel|>"),), after="<channel|>"
)
FUNCTIONGEMMA = _CallToken("functiongemma", "<start_function_call>", "<end_function_call>", "<escape>")
