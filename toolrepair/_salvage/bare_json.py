"""`json`: call-shaped JSON with no marker: the whole reply, or an object inside prose.

Call-shaped means a ``name`` (or ``tool``) string plus an ``arguments`` (or ``parameters``)
object or JSON string; ``{"name": "Alice", "age": 30}`` is not a call. Llama 3.x separates
parallel calls with ``;``: the separator goes with the call before it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from ._base import NEED_MORE, Found, Gate, NeedMore, RawCall, ReadContext, skip_ws
from ._json import _PARTIAL_TAIL, JsonFailure, calls_from_value, decode_at

__all__ = ["BARE_JSON", "nested_run"]


# Hostile nesting (`{"a":{"a":...`, `[[[[`) is refused after a bounded look: a run of
# more than `max_depth` openers with only keys between them. Each alternative consumes at least
# one character and strings are matched by a deterministic loop: linear, no backtracking blow-up.
_OPENER = r'\s*[\[{]\s*(?:"(?:[^"\\]|\\.){0,256}"\s*:)?'


def nested_run(max_depth: int) -> re.Pattern[str]:
    """The run of ``max_depth + 1`` openers (keys of up to 256 characters between them)."""
    return _runs(max_depth)[0]


@functools.lru_cache(maxsize=16)
def _runs(max_depth: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``nested_run`` and a run of at most ``max_depth`` openers (its bounded prefix)."""
    return re.compile(f"(?:{_OPENER}){{{max_depth + 1}}}"), re.compile(f"(?:{_OPENER}){{1,{max_depth}}}")


# JSON's own whitespace (``\s`` is wider), as the decoder skips it. Always matches.
_JSON_WS: Final[Callable[[str, int], re.Match[str]]] = re.compile(r"[ \t\n\r]*").match  # type: ignore[assignment]


@dataclass(frozen=True)
class _BareJson:
    name: str = "json"
    markers: tuple[str, ...] = ("{", "[")
    # Sound gates (see Gate): a `{` whose next token is not a key, `}` or an opener is refused
    # at that token (``nested_run`` needs an opener or a key there too); `[` only opens the reply.
    gates: ClassVar[Mapping[str, Gate]] = {"{": Gate(r'\s*+(?:["}\[{]|\Z)'), "[": Gate(lead="")}

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        if text[start] == "[" and start != ctx.first_nonspace:
            return None  # a bare array is a call list only as the whole reply
        deep_run, short_run = _runs(ctx.max_depth)
        deep = deep_run.match(text, start)
        if deep is not None:
            return Found(deep.end(), resume=deep.end())  # silent: prose braces are not rejections
        if not ctx.final and short_run.match(text, start).end() >= len(text):  # type: ignore[union-attr]
            # A run of openers cut by the end of a stream's text may yet be a deep run, which
            # is skipped whole: wait, as for any payload, rather than skip one brace a read
            # (a stream of `{` would cost one read per brace where the whole text costs one
            # per `max_depth` braces). O(max_depth) openers matched.
            return NEED_MORE
        prose = _prose_brace(text, start, ctx)
        if prose is not None:
            return prose
        decoded = decode_at(text, start, ctx)
        if not isinstance(decoded, tuple):
            return _undecoded(text, start, decoded)
        value, end = decoded
        calls = calls_from_value(value, require_arguments=True)
        if calls is None or any(c.error == "not-a-call" for c in calls):
            return Found(end, resume=end)  # JSON that is data, not a call: skip it whole
        return _with_separator(text, end, calls, ctx)


def _prose_brace(text: str, start: int, ctx: ReadContext) -> Found | None:
    """Prose braces (``{x}``, ``{1, 2}``): a JSON object's next token is a key or ``}``. Told
    here in O(whitespace), the answer decode_at's failure at that token would give, without
    building a JSONDecodeError (it counts the window's lines): 20 µs a brace."""
    if text[start] != "{":
        return None
    i = _JSON_WS(text, start + 1).end()
    if i < len(text) and text[i] not in '"}' and (ctx.final or len(text) - i > _PARTIAL_TAIL):
        return Found(start + 1, resume=i)
    return None


def _undecoded(text: str, start: int, failure: JsonFailure | NeedMore) -> Found | NeedMore:
    """JSON at ``start`` that does not decode: a silent skip (prose brackets are not rejections)
    to where decoding failed, or into a broken reply-wide array, which may still hold a whole
    call object."""
    if isinstance(failure, NeedMore):
        return NEED_MORE
    return Found(start + 1, resume=start + 1 if text[start] == "[" else max(failure.pos, start + 1))


def _with_separator(text: str, end: int, calls: tuple[RawCall, ...], ctx: ReadContext) -> Found | NeedMore:
    """The calls ending at ``end``, spanning the ``;`` (and whitespace) Llama 3.x puts after
    a call when one follows."""
    k = skip_ws(text, end)
    if k < len(text) and text[k] == ";":
        end = skip_ws(text, k + 1)
        if end >= len(text) and not ctx.final:
            return NEED_MORE  # the whitespace run after `;` may go on
    elif k >= len(text) and not ctx.final:
        return NEED_MORE  # a `;` may follow
    return Found(end, calls)


BARE_JSON = _BareJson()
