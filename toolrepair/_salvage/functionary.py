"""`functionary`: MeetKai Functionary v3.2 recipient lines.

Every message after the first starts with ``>>>RECIPIENT\\n``; the first one omits the
``>>>``, so a reply may start ``get_weather\\n{"city": "Paris"}``. The recipient ``all`` is
text for the user; ``python`` is raw code, read as ``{"code": ...}``; any other recipient is a
tool called with the JSON object that follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ._base import NEED_MORE, Found, Gate, NeedMore, RawCall, ReadContext, skip_ws
from ._json import calls_from_value
from .function_tag import read_tag_name
from .json_blocks import arguments_at

__all__ = ["FUNCTIONARY"]

TEXT_RECIPIENT = "all"
CODE_RECIPIENT = "python"
PREFIX = ">>>"


def _json_arguments(text: str, name: str, body: int, ctx: ReadContext) -> Found | NeedMore | None:
    """The JSON object of a call to ``name`` at ``body`` (after whitespace). O(payload)."""
    i = skip_ws(text, body)
    if i >= len(text):
        return NEED_MORE if not ctx.final else Found(i, error="truncated")
    if text[i] != "{":
        return None
    return arguments_at(text, name, i, ctx)


def _first_call(text: str, start: int, ctx: ReadContext) -> Found | NeedMore | None:
    """The first message's recipient has no ``>>>``: ``NAME\\n{json}`` opening the reply.

    Read from the ``{``; the recipient line before it must be all the reply before it. The
    engine cuts a candidate from its marker, so the recipient line stays in the content.
    O(1) except for the one ``{`` right after an opening recipient line: O(that object).
    """
    first = ctx.first_nonspace
    if not first < start <= first + ctx.max_name_chars + 2:
        return None
    head = text[first:start]
    name = head.rstrip()
    if "\n" not in head[len(name) :]:
        return None
    if not name or not all(c.isalnum() or c in "_-." for c in name) or name.lower() == TEXT_RECIPIENT:
        return None
    found = _json_arguments(text, name, start, ctx)
    if not isinstance(found, Found) or found.error is not None:
        return found if found is NEED_MORE else None  # broken JSON is the json dialect's to skip
    call = found.calls[0]
    if call.error is None and calls_from_value(call.arguments, require_arguments=True) is not None:
        return None  # a call-shaped object after a one-word line ("Sure\n{...}") is the json dialect's
    return found


@dataclass(frozen=True)
class _Functionary:
    name: str = "functionary"
    markers: tuple[str, ...] = (PREFIX, "{")
    # The first call's `{` opens the line after a recipient name opening the reply (_first_call).
    gates: ClassVar[Mapping[str, Gate]] = {"{": Gate(lead=r"[\w.\-]+(?:\s*\n\s*|\s*\Z)")}

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(ctx.max_name_chars + payload); python code runs to the next `>>>`, which the next
        # marker read starts from, so code blocks are not rescanned.
        if text[start] == "{":
            return _first_call(text, start, ctx)
        head = read_tag_name(text, marker_end, ctx, stop="\n")
        if head is None or head is NEED_MORE:
            return head
        assert isinstance(head, tuple)
        name, body = head
        if name.lower() == TEXT_RECIPIENT:
            return None
        if name.lower() == CODE_RECIPIENT:
            e = text.find(PREFIX, body)
            if e == -1:
                if not ctx.final:
                    return NEED_MORE
                e = len(text)
            code = text[body:e].strip("\n")
            if not code.strip():
                return None
            return Found(e, (RawCall(name, {"code": code}),))
        return _json_arguments(text, name, body, ctx)


FUNCTIONARY = _Functionary()
