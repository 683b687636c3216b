"""JSON payloads in text: decode one value in place, and read call-shaped objects.

Decoding is the C JSON scanner from the opening bracket, so a valid payload costs what
``json.loads`` costs and its end is exact (markers inside strings are data). Numbers and depth
are held to the same rules as argument decoding (``_args``: its scanner refuses inf and NaN,
its walk the nesting limit). Failures are classified without guessing: ``truncated`` when
the text ends inside the value, ``undecodable`` otherwise, ``too-deep`` and ``too-large``
past the named limits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._args import FINITE_SCAN, check_nesting, decode_arguments, decode_value_at
from .._callshape import read_call_shape
from .._errors import ArgumentError
from .._types import RepairEvent
from ._base import NEED_MORE, NeedMore, RawCall, ReadContext

__all__ = [
    "JsonFailure",
    "arguments_payload",
    "call_from_object",
    "calls_from_value",
    "decode_at",
    "decode_payload",
    "may_nest_deeper",
    "with_repairs",
]


# Partial literals and numbers a streaming text may end inside: `tru`, `-`, `1.`, `1e+`.
_PARTIAL_TAIL = 6
_LITERALS = ("true", "false", "null")


class JsonFailure:
    """Why a JSON value at a position could not be read; ``pos`` is where it went wrong."""

    __slots__ = ("pos", "reason")

    def __init__(self, reason: str, pos: int) -> None:
        self.reason = reason
        self.pos = pos

    def __repr__(self) -> str:
        return f"JsonFailure({self.reason!r}, {self.pos})"


def _is_partial_tail(rest: str) -> bool:
    """The text ends inside a literal or a number: more text could complete it."""
    rest = rest.strip()
    if not rest:
        return True
    if len(rest) > _PARTIAL_TAIL:  # longer than any literal or number cut short (most failures)
        return False
    if any(lit.startswith(rest) for lit in _LITERALS):
        return True
    return all(c in "0123456789+-.eE" for c in rest)


# The decoder sees a window of the text that grows fourfold while the value may run past it.
# Why: `json.JSONDecodeError` computes a line and column by counting newlines from the start
# of the string it was given, so decoding in place would make each failure cost O(offset) and
# a reply of n broken payloads O(n^2). With windows, a decode costs O(what it reads).
_FIRST_WINDOW = 1024
# A failure this close to a window's end may be the window's fault, not the text's.
_WINDOW_MARGIN = 16


def may_nest_deeper(text: str, i: int, j: int, max_depth: int) -> bool:
    """Whether the JSON value ``text[i:j]`` may nest deeper than ``max_depth``: nesting needs
    two characters per level, and an opening bracket per level (those in strings only add to
    the count), so below either bound no walk is needed. O(j - i) in C."""
    return j - i > 2 * max_depth and text.count("{", i, j) + text.count("[", i, j) > max_depth


def _decode_window(chunk: str, final: bool, ctx: ReadContext) -> tuple[Any, int] | JsonFailure | NeedMore:
    """Decode the value at ``chunk[0]``; ``final`` says whether the chunk ends the text."""
    try:
        value, end = FINITE_SCAN(chunk, 0)
    except StopIteration as stop:  # no value starts here (raw_decode's "Expecting value")
        exc = json.JSONDecodeError("Expecting value", chunk, stop.value)
    except json.JSONDecodeError as error:
        exc = error
    except RecursionError:
        return JsonFailure("too-deep", 0)
    except ValueError:  # inf, NaN/Infinity, or an integer past Python's digit limit
        return JsonFailure("undecodable", 0)
    else:
        if end > ctx.max_call_chars:
            return JsonFailure("too-large", 0)
        if may_nest_deeper(chunk, 0, end, ctx.max_depth):
            try:
                check_nesting(value, ctx.max_depth)
            except ArgumentError:
                return JsonFailure("too-deep", 0)
        return value, end
    rest = chunk[exc.pos :]
    if not final and (len(rest) <= _PARTIAL_TAIL or exc.msg.startswith("Unterminated string")):
        return NEED_MORE  # a literal, number, escape or string may be cut at the end
    truncated = exc.msg.startswith("Unterminated string") or _is_partial_tail(rest)
    return JsonFailure("truncated" if truncated else "undecodable", exc.pos)


def decode_at(text: str, i: int, ctx: ReadContext) -> tuple[Any, int] | JsonFailure | NeedMore:
    """The JSON value starting at ``text[i]`` and the index after it (positions in ``text``).

    Valid JSON only (``strict=False``: raw control characters in strings are accepted);
    failures are ``truncated`` (the text ends inside the value; NEED_MORE while streaming),
    ``undecodable``, ``too-deep`` (also for the C decoder's RecursionError) or ``too-large``.
    O(length read): windows grow fourfold, so the copies add up to at most 4/3 of the last.
    """
    n = len(text)
    width = _FIRST_WINDOW
    while True:
        stop = min(n, i + width)
        whole = stop == n
        got = _decode_window(text[i:stop], whole and ctx.final, ctx)
        if isinstance(got, tuple):
            value, j = got
            # A value that ends exactly at a window's edge may be a cut number or literal.
            if whole or j < stop - i or isinstance(value, (dict, list, str)):
                return value, i + j
        elif isinstance(got, JsonFailure):
            cut_here = not whole and got.pos >= stop - i - _WINDOW_MARGIN
            if got.reason == "too-large" or not cut_here:
                return JsonFailure(got.reason, i + got.pos)
        elif whole:
            return NEED_MORE
        if width > ctx.max_call_chars:
            return JsonFailure("too-large", i)
        width *= 4


def decode_payload(
    text: str, i: int, ctx: ReadContext, bound: str | None
) -> tuple[Any, int, tuple[RepairEvent, ...]] | JsonFailure | NeedMore:
    """``decode_at``, then, for a payload that is not valid JSON, the lenient reading of
    argument decoding (``decode_value_at``: trailing commas, Python literals, single quotes
    ...): the value, the index after it and the repairs made. Only unambiguous repairs; a
    payload the lenient reading refuses too is refused at the strict failure's position as
    ``undecodable``, or ``truncated`` when the lenient reading ran out of payload.

    ``bound`` is the dialect's opening marker as written (None: no lenient reading): the
    lenient reading stops before its next occurrence, so a broken payload costs O(text up to
    the next candidate) and a call after it is still read (a payload holding its own opening
    marker in a string is then refused, never misread).
    """
    decoded = decode_at(text, i, ctx)
    if isinstance(decoded, tuple):
        return decoded[0], decoded[1], ()
    if bound is None or not isinstance(decoded, JsonFailure) or decoded.reason != "undecodable":
        return decoded
    n = len(text)
    stop = text.find(bound, i + 1)
    stop = min(n if stop < 0 else stop, i + ctx.max_call_chars)
    if decoded.pos == stop < n and text.count("{", i, stop) + text.count("[", i, stop) <= ctx.max_depth:
        # The strict scanner read all the text before the next candidate and failed on its
        # first character: a JSON prefix, ending where a token may start (in a string or a
        # number the scanner reads on), and too few brackets in it to pass the depth limit
        # (a prefix needs one per level). The lenient reading accepts all JSON and reads it
        # alike, so it would run out there too: `truncated`, without reading it again (what a
        # run of openers, `<tool_call>{<tool_call>{...`, costs per candidate). O(stop - i) in C.
        return JsonFailure("truncated", decoded.pos)
    try:
        value, end, events = decode_value_at(text[i:stop], max_depth=ctx.max_depth)
    except ArgumentError as exc:
        if exc.reason == "truncated" and stop == n and not ctx.final:
            return NEED_MORE  # more text may complete it
        # Truncation is the truer reason (the lenient reading got to the payload's end); any
        # other refusal stays the strict one: the JSON is broken where the C scanner says.
        kept = exc.reason in ("truncated", "too-deep")  # past the depth limit: say so, as the strict reading does
        return JsonFailure(exc.reason if kept else decoded.reason, decoded.pos)
    return value, i + end, events  # a bracketed value: complete where it closes


def arguments_payload(
    text: str, i: int, ctx: ReadContext, bound: str | None
) -> tuple[dict[str, Any] | None, int, tuple[RepairEvent, ...]] | JsonFailure | NeedMore:
    """The argument object of a call whose name is written outside its JSON, at ``text[i]``
    (``{``, or ``"`` for a payload written as a JSON string holding the object: Kimi-K2's
    argument section, Mistral's ``[ARGS]"{...}"``): the object (None when the payload is JSON
    but not an object), the index after it and the repairs reading it took. O(payload)."""
    decoded = decode_payload(text, i, ctx, bound)
    if type(decoded) is not tuple:
        return decoded
    value, end, repairs = decoded
    arguments = _arguments(value)
    if arguments is None:
        return None, end, repairs
    return arguments[0], end, (*repairs, *arguments[1])


def with_repairs(calls: tuple[RawCall, ...], repairs: tuple[RepairEvent, ...]) -> tuple[RawCall, ...]:
    """The calls read from one payload, carrying the repairs that reading it took."""
    if not repairs:
        return calls
    return tuple(RawCall(c.name, c.arguments, c.id, c.error, (*repairs, *c.repairs)) for c in calls)


def _arguments(raw: Any) -> tuple[dict[str, Any], tuple[RepairEvent, ...]] | None:
    """Arguments as an object, or as a JSON string holding one (Granite 4); else None.

    A string is the double encoding ``decode_arguments`` repairs: it is given the string's
    JSON text, so the call carries that repair and any others the string's content needed
    (trailing commas, Python literals ...); truncated or ambiguous text stays refused.
    """
    if isinstance(raw, dict):
        return raw, ()
    if isinstance(raw, str):
        try:
            # No bounds of its own: the string was read from a payload within the caller's
            # Limits.max_call_chars, and the engine holds salvaged arguments to the caller's
            # depth limit, as for a native call. Depth cannot pass the text's length.
            text = json.dumps(raw, ensure_ascii=False)
            return decode_arguments(text, max_chars=len(text), max_depth=len(text))
        except ArgumentError:
            return None
    return None


def call_from_object(obj: Any, *, require_arguments: bool) -> RawCall | None:
    """A call from a call-shaped object, a refused RawCall, or None when not call-shaped.

    Call-shaped, by ``_callshape.CALL_KEYS``: a string ``name`` (or ``tool`` ...) and, when
    ``require_arguments``, an ``arguments`` (or ``parameters`` ...) object or JSON string
    holding one. OpenAI's ``{"type": "function", "function": {...}}`` is unwrapped.
    ``{"name": "Alice", "age": 30}`` is not a call.
    """
    if type(obj) is not dict and not isinstance(obj, Mapping):  # dict first: ABC checks are slow
        return None
    shape = read_call_shape(obj)
    name, ident = shape.name, shape.id
    if name is None:
        return None
    required = require_arguments and not shape.wrapped  # OpenAI's wrapper already says "a call"
    if shape.arguments_key is None:
        return None if required else RawCall(name, {}, ident)
    arguments = _arguments(shape.arguments)
    if arguments is None:
        if shape.arguments is None and not required:
            return RawCall(name, {}, ident)
        return RawCall(name, {}, ident, "undecodable-arguments")
    return RawCall(name, arguments[0], ident, None, arguments[1])


def calls_from_value(value: Any, *, require_arguments: bool) -> tuple[RawCall, ...] | None:
    """Calls from an object or an array of objects; None when nothing in it is call-shaped."""
    if not isinstance(value, list):  # one object: the common case, without the list machinery
        call = call_from_object(value, require_arguments=require_arguments)
        return None if call is None else (call,)
    calls: list[RawCall] = []
    for item in value:
        call = call_from_object(item, require_arguments=require_arguments)
        calls.append(call if call is not None else RawCall("", {}, None, "not-a-call"))
    if not calls or all(c.error == "not-a-call" for c in calls):
        return None
    return tuple(calls)
