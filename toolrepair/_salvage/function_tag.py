"""`function_tag`: ``<function=NAME>{json arguments}</function>`` (Llama 3.1 / Functionary v3.1).

Two damaged spellings are read too, each with its remaining marker as the evidence:
``<function=NAME={json}</function>`` (Llama 3.x on Groq writes ``=`` for ``>``), and
``NAME{json}</function>`` at the start of a line, whose opening ``<function=`` was lost (the
intact ``</function>`` must follow the arguments; without it the text is prose).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ._base import LOOKBEHIND, NEED_MORE, Found, Gate, NeedMore, RawCall, ReadContext, expect_literal, skip_ws
from ._json import JsonFailure, arguments_payload

__all__ = ["FUNCTION_TAG", "read_tag_name"]

_CLOSE = "</function>"
# A name run: letters, digits and `_ - . :` (one class, matched up to ctx.max_name_chars).
_NAME_RUN = re.compile(r"[\w.:-]+")


def read_tag_name(text: str, i: int, ctx: ReadContext, stop: str = ">") -> tuple[str, int] | NeedMore | None:
    """An identifier-like name from ``i`` up to ``stop``: (name, index after stop).

    Any Unicode letters, digits and ``_ - . :`` are allowed; quotes, spaces inside and
    brackets are not. O(ctx.max_name_chars).
    """
    n = len(text)
    limit = min(n, i + ctx.max_name_chars + 1)
    j = text.find(stop, i, limit)
    if j == -1:
        return NEED_MORE if not ctx.final and limit == n else None
    name = text[i:j].strip().strip("\"'")
    if not name or not all(c.isalnum() or c in "_-.:" for c in name):
        return None
    return name, j + len(stop)


@dataclass(frozen=True)
class _FunctionTag:
    name: str = "function_tag"
    markers: tuple[str, ...] = ("<function=", "{")
    # A headless `{` follows its name directly (see _headless).
    gates: ClassVar[Mapping[str, Gate]] = {"{": Gate(r"(?<=[\w.:\-]\{)")}

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        if text[start] == "{":
            return _headless(text, start, ctx)
        run = _NAME_RUN.match(text, marker_end, marker_end + ctx.max_name_chars)
        if run is not None and text.startswith("={", run.end()):  # Groq's `<function=NAME={`
            name, body = run.group(), run.end() + 1
        else:
            head = read_tag_name(text, marker_end, ctx)
            if head is None or head is NEED_MORE:
                return head
            assert isinstance(head, tuple)
            name, body = head
        return _arguments_then_close(text, name, body, ctx, required=False)


def _headless(text: str, start: int, ctx: ReadContext) -> Found | NeedMore | None:
    """``NAME{json}</function>`` with ``NAME`` starting a line just before the brace: the call
    whose ``<function=`` was lost. O(ctx.max_name_chars) for a brace that is not one."""
    j = start
    floor = max(0, start - min(ctx.max_name_chars, LOOKBEHIND - 1))
    while j > floor and (text[j - 1].isalnum() or text[j - 1] in "_-.:"):
        j -= 1
    at_line_start = j == ctx.first_nonspace or (j > 0 and text[j - 1] in "\n\r")
    if j == start or not at_line_start or not (text[j].isalpha() or text[j] == "_"):
        return None
    return _arguments_then_close(text, text[j:start], start, ctx, required=True)


def _arguments_then_close(
    text: str, name: str, body: int, ctx: ReadContext, *, required: bool
) -> Found | NeedMore | None:
    """The JSON arguments at ``body`` then ``</function>`` (``required``: else None)."""
    i = skip_ws(text, body)
    if i >= len(text):
        return NEED_MORE if not ctx.final else None
    if text[i] != "{":
        return None  # `<parameter=...>` bodies belong to the Qwen3-Coder reader
    # Lenient only after the intact opening marker: a headless candidate is any brace after a
    # name, and its lenient reading could run to the end of the reply for every such line.
    decoded = arguments_payload(text, i, ctx, None if required else "<function=")
    if decoded is NEED_MORE:
        return NEED_MORE
    if isinstance(decoded, JsonFailure):
        return None if required else Found(max(decoded.pos, i + 1), error=decoded.reason)
    assert isinstance(decoded, tuple)
    value, j, repairs = decoded
    assert value is not None  # a payload opening with `{` is an object
    k = skip_ws(text, j)
    if k >= len(text) and not ctx.final:
        return NEED_MORE
    closed = expect_literal(text, k, _CLOSE, ctx)
    if closed is NEED_MORE:
        return NEED_MORE
    if required and not closed:
        return None  # no intact closing marker: a name before a brace is prose
    return Found(k + len(_CLOSE) if closed else j, (RawCall(name, value, None, None, repairs),))


FUNCTION_TAG = _FunctionTag()
