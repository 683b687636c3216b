"""Cline / Roo Code tag-per-tool XML (opt-in): the tool's name is the tag, each child tag a
parameter::

    <read_file>
    <path>src/a.py</path>
    </read_file>

Opt-in (``dialects=["cline"]``), never in the default set: it is an agent framework's own
text protocol, and a reply in prose or HTML can look like it. A tag is read only where its
name is an offered tool (``ReadContext.offered``): ``<div>``, ``<file>`` or any other tag is
text, never a rejection, and under ``ANY_TOOL`` nothing is read (there is no any-name reading
for a format whose every tag could be a call).

Values are raw text read by the shared value reader (``_xml_text``): a value ends at its own
closing tag where the call's closing tag or another parameter's opening tag follows it, so a
file's content quoting ``</content>`` survives, and a value with two readings is refused
(``ambiguous``). One newline on each side of a value is the template's and goes; a one-line
value is stripped (Cline trims its parameters); a file's lines keep their indentation.
Entities are kept as written (``2&gt;/dev/null`` stays so, as the framework reads it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .._args._decode import tag_text
from ._base import NEED_MORE, Found, Gate, NeedMore, RawCall, ReadContext, named_refusal, offered_name, skip_ws
from ._xml_text import ValueSpec, any_at, call_at_end, opening_tag, refused_if_dangling, value_or_refusal
from .qwen_xml import trim_newlines

__all__ = ["CLINE"]


def _value_text(raw: str) -> str:
    """A parameter's value as the framework reads it: the template's newlines go, and a value
    of one line is stripped (``<path> a.py </path>``); a block keeps its indentation."""
    value = trim_newlines(raw)
    return value.strip() if "\n" not in value else value


@dataclass(frozen=True)
class _Cline:
    name: str = "cline"
    markers: tuple[str, ...] = ("<",)
    # Only a tag name may follow (or the text's end, while streaming): `<=`, `</`, `< ` never read.
    gates: ClassVar[Mapping[str, Gate]] = {"<": Gate(r"(?:[A-Za-z_]|\Z)")}

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(call length); values crossing more than MAX_CROSSINGS of the tool's tag are refused.
        if ctx.offered is None:
            return None  # ANY_TOOL: no tool is offered by name, so no tag names one
        tag = opening_tag(text, start, ctx)
        if not isinstance(tag, str):
            return tag
        body = marker_end + len(tag) + 1
        if offered_name(ctx.offered, tag) is None:
            # A tag that names no offered tool is text, never a call or a rejection. Where it
            # has the shape of a call (`<get_weather><web_search></web_search></get_weather>`),
            # the tags inside it may be its parameters: they are not read as calls either
            # (fail closed: of the two readings, the one that runs nothing).
            shape = _call(text, tag, body, ctx, closed=True)
            if isinstance(shape, Found):
                end = max(shape.end, shape.resume or 0)
                return Found(end, resume=end)
            return shape
        # A refusal is this region's, under the tool's name: its tags are not read again.
        return named_refusal(_call(text, tag, body, ctx), tag)


def _call(text: str, tool: str, j: int, ctx: ReadContext, *, closed: bool = False) -> Found | NeedMore | None:
    """The parameters of ``<tool>`` from ``j`` up to ``</tool>``. None when no parameter tag
    opens the body (prose naming the tag: "use <read_file> to ..."). ``closed``: only the
    shape of a call that ``</tool>`` closes, or None (a tag that names no tool, which the
    reply's end may not close for it, and whose values are not looked past). O(call length)."""
    n = len(text)
    low = tool.lower()
    open_tool, close_tool = f"<{low}>", f"</{low}>"
    arguments: dict[str, Any] = {}
    crossings = 0
    last = ""
    while True:
        k = skip_ws(text, j)
        if k >= n:
            if closed:
                return NEED_MORE if not ctx.final else None
            return call_at_end(text, tool, ctx)
        at_close = any_at(text, k, (close_tool,), ctx)
        if isinstance(at_close, NeedMore):
            return NEED_MORE
        if at_close is not None:
            end = k + len(close_tool)
            break
        key = opening_tag(text, k, ctx)
        if isinstance(key, NeedMore):
            return NEED_MORE
        if key is None:
            # Text where a parameter or the closing tag belongs: a broken call after a
            # parameter; before any, prose naming the tag, or a value with no parameter tag.
            return _bare(text, k, close_tool, ctx) if not arguments else Found(k, error="undecodable")
        spec = ValueSpec(
            close=f"</{key.lower()}>", successors=(close_tool,), stops=(close_tool,), own=(open_tool,), open_tag=True
        )
        got = value_or_refusal(text, k + len(key) + 2, spec, ctx, crossings, tag=k)
        if not isinstance(got, tuple):
            return got
        raw, j, closed_value, crossings = got
        if key in arguments:  # two values for one key: which one is meant is unknowable
            return Found(k, error="undecodable-arguments")
        arguments[key] = tag_text(_value_text(raw if closed_value else raw.rstrip()))
        last = key.lower()
    call = Found(end, (RawCall(tool, arguments),))
    if closed:
        return call
    closers = (*(f"</{key.lower()}>" for key in arguments), close_tool)
    # Past the call: a closing tag of its last value that the call's closing tag follows means
    # the value could run on to it (ambiguous); the tool's next call ends that look.
    after = ValueSpec(f"</{last}>", (close_tool,), (open_tool,), (open_tool,)) if last else None
    return refused_if_dangling(call, text, closers, ctx, own=(open_tool,), spec=after, wrapper=close_tool)


def _bare(text: str, k: int, close_tool: str, ctx: ReadContext) -> Found | NeedMore | None:
    """A body of text from ``k`` with no parameter tag: refused (``undecodable-arguments``)
    where the tool's closing tag ends it before any other tag (``<read_file> a.py
    </read_file>``: which parameter the text fills is the schema's to say), else None (prose
    naming the tag: "use <read_file> to read"). O(the distance to the next ``<``)."""
    n = len(text)
    limit = min(n, k + ctx.max_call_chars)
    p = text.find("<", k, limit)
    if p == -1:
        return NEED_MORE if not ctx.final and limit == n else None
    closed = any_at(text, p, (close_tool,), ctx)
    if isinstance(closed, NeedMore):
        return NEED_MORE
    return None if closed is None else Found(p + len(close_tool), error="undecodable-arguments")


CLINE = _Cline()
