"""ReAct (opt-in): the text protocol of LangChain, CrewAI and LlamaIndex agents::

    Thought: I need the weather.
    Action: get_weather
    Action Input: {"city": "Paris"}
    Observation: ...

Opt-in (``dialects=["react"]``), never in the default set: it is an agent framework's own
text protocol, which a reply in prose can imitate. ``Action:`` must start a line (spaces,
tabs and Markdown bold's ``*`` may stand before it); the name is the rest of that line (its
backticks, quotes, brackets and ``*`` dropped: ``Action: [Search]``); ``Action Input:`` follows
on a later line (blank lines between are allowed; spacing and case vary: ``Action input :``).

The input is one JSON object, read by the one argument decoder (``_json.arguments_payload``:
Python dicts with single quotes are repaired, as every dialect's payload is), on the same line
or the next, bare or in a ```` ```json ```` fence. Only the end of the line or an
``Observation:`` may follow it: anything else on its line would make the framework's input
a different string, and the call is refused. A bare string (``Action Input: Paris``, or a
JSON string) is refused as ``undecodable-arguments``: which parameter it fills is the tool's
schema's to say, not the text's. ``Thought:`` lines stay content; an ``Action:`` with no
``Action Input:`` (``Action: None``) is text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, named_refusal, skip_ws, startswith_ci
from ._json import JsonFailure, arguments_payload
from .json_blocks import read_after_payload

__all__ = ["REACT"]

_MARKER = "action:"
# `Action Input:`, `Action input :`, `Action_Input:`; bounded runs.
_INPUT = re.compile(r"action[ \t_]{0,8}input[ \t]{0,8}:", re.IGNORECASE)
# A text ending inside what may yet be `Action Input:`.
_INPUT_PREFIX = re.compile(
    r"a(?:c(?:t(?:i(?:o(?:n(?:[ \t_]{0,8}(?:i(?:n(?:p(?:u(?:t[ \t]{0,8})?)?)?)?)?)?)?)?)?)?)?\Z", re.IGNORECASE
)
_HSPACE = re.compile(r"[ \t]*")
_NAME_STRIP = " \t\r*`'\"[]"
_LEAD = " \t*"  # what may stand before `Action:` on its line
_LEAD_MAX = 16
_OBSERVATION = "observation"
_BOUND = "Action:"  # the lenient reading of a broken payload stops at the next action


def _starts_line(text: str, start: int, ctx: ReadContext) -> bool:
    """Whether only ``_LEAD`` characters stand between the line's start and ``start``.
    O(_LEAD_MAX)."""
    j = start
    floor = max(0, start - _LEAD_MAX)
    while j > floor and text[j - 1] in _LEAD:
        j -= 1
    if j > 0:
        return text[j - 1] in "\n\r"
    # The window's start: the line starts there only if the text before it is whitespace.
    return ctx.first_nonspace >= 0


def _name(text: str, i: int, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """The action's name: the rest of the line from ``i``; (name, index of the line's end).
    O(ctx.max_name_chars)."""
    n = len(text)
    limit = min(n, i + ctx.max_name_chars + _LEAD_MAX)
    nl = text.find("\n", i, limit)
    if nl == -1:
        # No line end yet: the name may go on (streaming); a last line has no input (final).
        return NEED_MORE if not ctx.final and limit == n else None
    name = text[i:nl].strip(_NAME_STRIP)
    if not name or len(name) > ctx.max_name_chars:
        return None
    return name, nl


def _input_marker(text: str, i: int, ctx: ReadContext) -> int | NeedMore | None:
    """Index after the ``Action Input:`` that starts the next non-blank line from ``i``."""
    k = skip_ws(text, i)
    if k >= len(text):
        return NEED_MORE if not ctx.final else None
    m = _INPUT.match(text, k)
    if m is not None:
        return m.end()
    if not ctx.final and _INPUT_PREFIX.match(text, k) is not None:
        return NEED_MORE
    return None


def _line_end(text: str, i: int, ctx: ReadContext) -> int | NeedMore:
    """Index of the end of the line holding ``i`` (NEED_MORE while it may go on)."""
    nl = text.find("\n", i)
    if nl != -1:
        return nl
    return NEED_MORE if not ctx.final else len(text)


def _refused(text: str, i: int, ctx: ReadContext, reason: str) -> Found | NeedMore:
    """The candidate refused up to the end of the line holding ``i``."""
    end = _line_end(text, i, ctx)
    return NEED_MORE if isinstance(end, NeedMore) else Found(max(end, i + 1), error=reason)


def _after_object(text: str, j: int, ctx: ReadContext) -> bool | NeedMore:
    """Whether the object ending at ``j`` ends its input: only spaces, then the line's end or
    an ``Observation:``, follow it on its line."""
    r = _HSPACE.match(text, j).end()  # type: ignore[union-attr]  # `[ \t]*` always matches
    if r >= len(text):
        return NEED_MORE if not ctx.final else True
    if text[r] in "\r\n" or startswith_ci(text, _OBSERVATION, r):
        return True
    rest = text[r : r + len(_OBSERVATION)].lower()
    if not ctx.final and len(rest) < len(_OBSERVATION) and _OBSERVATION.startswith(rest):
        return NEED_MORE
    return False


def _arguments(text: str, name: str, p: int, ctx: ReadContext) -> Found | NeedMore:
    """The input from ``p`` (just after ``Action Input:``) and the call it makes. O(input)."""
    n = len(text)
    q = _HSPACE.match(text, p).end()  # type: ignore[union-attr]
    if q < n and text[q] in "\r\n":  # the input on the next line
        q = skip_ws(text, q)
    if q >= n:
        return NEED_MORE if not ctx.final else Found(n, error="truncated")
    fence = -1
    i = q
    if text.startswith("```", q):
        fence = q
        i = q + 3
        while i < n and text[i].isalpha():  # the info string: `json`
            i += 1
        i = skip_ws(text, i)
        if i >= n:
            return NEED_MORE if not ctx.final else Found(n, error="truncated")
    elif n - q < 3 and not ctx.final and "```".startswith(text[q:]):
        return NEED_MORE
    if text[i] not in '{["':
        return _refused(text, i, ctx, "undecodable-arguments")  # bare text: no parameter named
    decoded = arguments_payload(text, i, ctx, _BOUND)
    if isinstance(decoded, NeedMore):
        return NEED_MORE
    if isinstance(decoded, JsonFailure):
        return Found(max(decoded.pos, i + 1), error=decoded.reason)
    arguments, j, repairs = decoded
    if fence >= 0:
        end = read_after_payload(text, j, "```", ctx)
        if isinstance(end, NeedMore):
            return NEED_MORE
        span = (fence, end) if end != j else None
    else:
        ends = _after_object(text, j, ctx)
        if isinstance(ends, NeedMore):
            return NEED_MORE
        if not ends:
            return _refused(text, j, ctx, "undecodable-arguments")
        end, span = j, None
    if arguments is None:  # JSON, but not an object: a string or an array names no parameter
        return Found(end, error="undecodable-arguments")
    return Found(end, (RawCall(name, arguments, None, None, repairs, span),))


@dataclass(frozen=True)
class _ReAct:
    name: str = "react"
    markers: tuple[str, ...] = (_MARKER,)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(name line + input): every scan stops at the line's end or the payload's.
        if not _starts_line(text, start, ctx):
            return None
        head = _name(text, marker_end, ctx)
        if not isinstance(head, tuple):
            return head
        name, nl = head
        p = _input_marker(text, nl, ctx)
        if not isinstance(p, int):
            return p
        return named_refusal(_arguments(text, name, p, ctx), name)


REACT = _ReAct()
