"""`JsonBlock`: an opening token, one JSON payload of a fixed shape, an optional closing token.

Most JSON-bodied formats differ only in their tokens and in whether the payload is an object
or an array: Granite 3.0 ``<|tool_call|>[...]``, granite-20b ``<function_call> {...}``,
InternLM2 ``<|action_start|><|plugin|>{...}<|action_end|>``, Nemotron ``<TOOLCALL>[...]``,
Cohere ``<|START_ACTION|>[...]<|END_ACTION|>``, Apertus ``<|tools_prefix|>[{"NAME": {...}}]``,
Phi-4-mini ``functools[...]``, GigaChat 3 and the JSON form of LFM2. One reader serves them
all; each is a frozen value of this class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .._types import RepairEvent
from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, expect_literal, skip_ws, skip_ws_match
from ._json import JsonFailure, arguments_payload, call_from_object, calls_from_value, decode_payload, with_repairs

__all__ = ["JsonBlock", "arguments_at", "payload_at", "read_after_payload", "read_lead", "refused"]

Shape = Literal["object", "array", "any"]

# `json` reports a failure with its line and column, counted from the start of the document:
# decoding in place at offset i costs O(i) per failure, so n broken payloads cost O(n^2).
# Decoding a window that starts at the payload keeps a failure O(what was read).
# A failure this close to a window's end may be the window's doing (a cut escape, literal or
# number): the window grows and the value is decoded again.


def read_lead(text: str, i: int, lead: tuple[str, ...], ctx: ReadContext) -> int | NeedMore | None:
    """Index after the literals ``lead`` (lower case; whitespace allowed before each), None
    when they are not there. O(sum of their lengths + whitespace)."""
    n = len(text)
    for literal in lead:
        i = skip_ws(text, i)
        if i >= n:
            return NEED_MORE if not ctx.final else None
        got = expect_literal(text, i, literal, ctx)
        if got is NEED_MORE:
            return NEED_MORE
        if not got:
            return None
        i += len(literal)
    return i


def refused(failure: JsonFailure, i: int) -> Found:
    """A payload at ``i`` that does not decode, refused whole. Scanning resumes where decoding
    failed: the brackets before it were read as this payload's, so the markerless ``json``
    dialect does not decode them again (a marker there is still found)."""
    end = max(failure.pos, i + 1)
    return Found(end, error=failure.reason, resume=end)


def payload_at(
    text: str, i: int, ctx: ReadContext, bound: str | None = None
) -> tuple[Any, int, tuple[RepairEvent, ...]] | Found | NeedMore:
    """The JSON value at ``text[i]``, the index after it and the repairs reading it took
    (``decode_payload``; ``bound`` None: valid JSON only), or its refusal (``refused``)."""
    decoded = decode_payload(text, i, ctx, bound)
    if isinstance(decoded, JsonFailure):
        return refused(decoded, i)
    return decoded


def arguments_at(
    text: str, name: str, i: int, ctx: ReadContext, ident: str | None = None, *, bound: str | None = None
) -> Found | NeedMore:
    """The arguments of a call to ``name`` starting at ``text[i]`` (``{``, or ``"`` for a JSON
    string holding them), for the formats that write the name outside the JSON; repairs as
    ``arguments_payload`` makes them. O(payload)."""
    decoded = arguments_payload(text, i, ctx, bound)
    if isinstance(decoded, JsonFailure):
        return refused(decoded, i)
    if not isinstance(decoded, tuple):
        return decoded
    value, end, repairs = decoded
    if value is None:
        return Found(end, (RawCall(name, {}, ident, "undecodable-arguments"),))
    return Found(end, (RawCall(name, value, ident, None, repairs),))


def read_after_payload(text: str, j: int, close: str | None, ctx: ReadContext) -> int | NeedMore:
    """End of a candidate whose payload ends at ``j``: past ``close`` when it follows (after
    whitespace), else ``j`` (a missing closing token at the end of the reply: EOS ate it).
    NEED_MORE while the text ends where the closing token could still arrive. O(len(close))."""
    if close is None:
        return j
    k = skip_ws_match(text, j).end()
    if k >= len(text) and not ctx.final:
        return NEED_MORE
    closed = expect_literal(text, k, close, ctx)
    if closed is NEED_MORE:
        return NEED_MORE
    return k + len(close) if closed else j


def _name_as_key(item: Any) -> RawCall | None:
    """Apertus writes a call as ``{"NAME": {arguments}}``; a normal call object also reads."""
    if isinstance(item, dict) and len(item) == 1:
        ((name, arguments),) = item.items()
        if isinstance(arguments, dict) and name not in ("name", "function", "tool"):
            return RawCall(name, arguments)
    return call_from_object(item, require_arguments=False)


@dataclass(frozen=True)
class JsonBlock:
    """``MARKER [lead...] PAYLOAD [close]`` where PAYLOAD is one JSON value of ``shape``.

    ``other_shape``: what a payload of the other shape means: ``"refuse"`` (a malformed call
    of this dialect, refused whole so the markerless ``json`` dialect does not reread it), or
    ``"none"`` (another dialect on the same marker may own it). A marker ending in ``[`` or
    ``{`` holds the payload's first character. O(payload length + lead + close).
    """

    name: str
    markers: tuple[str, ...]
    close: str | None = None
    shape: Shape = "any"
    other_shape: Literal["refuse", "none"] = "refuse"
    lead: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (marker, literals after it)
    require_arguments: bool = False
    name_as_key: bool = False
    objects_only: bool = False  # an array payload must open with an object: `[{`
    reasoning: tuple[tuple[str | None, str], ...] = ()

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        i = self._payload_start(text, start, marker_end, ctx)
        if not isinstance(i, int):
            return i
        wrong = _OTHER_OPENER.get(self.shape) == text[i]
        if wrong and self.other_shape == "none":
            return None
        decoded = payload_at(text, i, ctx, text[start:marker_end])
        if not isinstance(decoded, tuple):
            return decoded
        value, j, repairs = decoded
        calls = None if wrong else self._calls(value)
        if calls is None:
            return Found(j, error="not-a-call", resume=j)
        end = read_after_payload(text, j, self.close, ctx)
        if isinstance(end, NeedMore):
            return NEED_MORE
        return Found(end, with_repairs(calls, repairs))

    def _payload_start(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> int | NeedMore | None:
        """Index of the payload's opening bracket: in the marker, or after the lead and
        whitespace. None when no payload of ours opens there."""
        if text[marker_end - 1] in "[{":
            return marker_end - 1
        body = self._after_lead(text, start, marker_end, ctx)
        if not isinstance(body, int):
            return body
        i = skip_ws(text, body)
        if i >= len(text):
            return NEED_MORE if not ctx.final else None
        if text[i] not in "[{":
            return None  # prose or another format after the token
        if self.objects_only and text[i] == "[":
            return _object_array(text, i, ctx)
        return i

    def _after_lead(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> int | NeedMore | None:
        """Index after the literals this marker's lead wants (``read_lead``)."""
        if not self.lead:
            return marker_end
        marker = text[start:marker_end].lower()
        return read_lead(text, marker_end, next((lit for m, lit in self.lead if m == marker), ()), ctx)

    def _calls(self, value: Any) -> tuple[RawCall, ...] | None:
        """The calls a decoded payload holds, None when it holds none."""
        if not self.name_as_key:
            return calls_from_value(value, require_arguments=self.require_arguments)
        items = value if isinstance(value, list) else [value]
        found = [_name_as_key(item) or RawCall("", {}, None, "not-a-call") for item in items]
        return tuple(found) if any(c.error != "not-a-call" for c in found) else None


# The opener of a payload that is not of the dialect's shape.
_OTHER_OPENER: dict[str, str] = {"object": "[", "array": "{"}


def _object_array(text: str, i: int, ctx: ReadContext) -> int | NeedMore | None:
    """``i`` when the array at ``text[i]`` opens with an object (``[{``), else None."""
    k = skip_ws(text, i + 1)
    if k >= len(text):
        return NEED_MORE if not ctx.final else None
    return i if text[k] == "{" else None  # `[f(x=1)]`: a pythonic list, not ours
