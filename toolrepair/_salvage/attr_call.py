"""Attributes as arguments: a call written as one self-closing tag inside a wrapper::

    <tool_call>exec command="ls -la" /></tool_call>
    <tool_call>exec tool="exec" command="ls -la" />
    <tool_call><exec command="echo &quot;hi&quot; &amp;&amp; ls"/></tool_call>

The tag's name is the tool's; each attribute is an argument, its value the text between its
quotes (which may hold ``>``, unlike a tag head's) with XML's entities and character references
decoded once (``_xml_text.unescape``). A ``tool`` or ``name`` attribute restating the tag's
name is the name, not an argument; one naming another tool is ``ambiguous``.

A payload reader, never a dialect of its own: a wrapper allows it (``tag.AttributeTagDialect``,
after its JSON reader), so a tag in prose is never a call, and, as for every reader, the
engine takes the call only for an offered name. A body that does not start as such a tag is
another reader's (None): Qwen3-Coder's ``<function=``, GLM's ``NAME<arg_key>``.
"""

from __future__ import annotations

import re
from typing import Any

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws
from ._xml_text import unescape

__all__ = ["read_attribute_call"]

# A tag or attribute name: bounded, one class, so a match is O(64) or O(max_name_chars).
_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
_KEY = re.compile(r"[A-Za-z_][\w.:-]{0,63}")
# Attributes that restate the tool's name.
_NAME_KEYS = ("tool", "name")


def read_attribute_call(text: str, i: int, ctx: ReadContext) -> tuple[RawCall, int] | Found | NeedMore | None:
    """The tag ``[<]NAME k="v" … />`` at ``i`` (after whitespace): (call, index after ``/>``),
    a refusal once an attribute has been read, NEED_MORE, or None when the body is no such
    tag. O(the tag's length), within ``ctx.max_call_chars``."""
    n = len(text)
    j = skip_ws(text, i)
    if j < n and text[j] == "<":
        j += 1
    m = _NAME.match(text, j, min(n, j + ctx.max_name_chars + 1))
    if m is None or m.end() - j > ctx.max_name_chars:
        return NEED_MORE if not ctx.final and j >= n else None
    name, j = m.group(), m.end()
    if j >= n:
        return NEED_MORE if not ctx.final else None
    if not text[j].isspace() and not text.startswith("/>", j):
        return None if text[j] != "/" or j + 1 < n or ctx.final else NEED_MORE
    limit = min(n, i + ctx.max_call_chars)
    arguments: dict[str, Any] = {}
    while True:
        k = skip_ws(text, j)
        if k >= limit:
            return _ran_out(text, limit, ctx, bool(arguments))
        if text.startswith("/>", k):
            return _named(name, arguments, k + 2)
        if k + 1 == n and text[k] == "/" and not ctx.final:
            return NEED_MORE  # the `/>` may be cut
        got = _attribute(text, k, limit)
        if not isinstance(got, tuple):
            if got is None:
                return Found(k, error="undecodable") if arguments else None
            return _ran_out(text, limit, ctx, bool(arguments) or got is _IN_VALUE)
        key, value, j = got
        if key in arguments:  # two values for one key: which one is meant is unknowable
            return Found(j, error="undecodable-arguments")
        arguments[key] = value


class _InValue:
    """The text ends inside a quoted value: the tag was begun, whatever else comes."""


_IN_VALUE = _InValue()


def _attribute(text: str, k: int, limit: int) -> tuple[str, str, int] | NeedMore | _InValue | None:
    """``key="value"`` (or single quotes) at ``k``: (key, decoded value, index after it);
    NEED_MORE (or ``_IN_VALUE``) where the text ends first."""
    m = _KEY.match(text, k, limit)
    if m is None:
        return None
    j = skip_ws(text, m.end())
    if j >= limit:
        return NEED_MORE
    if text[j] != "=":
        return None
    q = skip_ws(text, j + 1)
    if q >= limit:
        return NEED_MORE
    if text[q] not in "\"'":
        return None  # a bare value: not this form (HTML's, or prose)
    e = text.find(text[q], q + 1, limit)
    if e == -1:
        return _IN_VALUE
    return m.group(), unescape(text[q + 1 : e]), e + 1


def _ran_out(text: str, limit: int, ctx: ReadContext, begun: bool) -> Found | NeedMore | None:
    """The tag reaches the end of the text or the size limit before its ``/>``; ``begun``
    once an argument has begun (before that, the body may be another reader's)."""
    if limit < len(text):
        return Found(limit, error="too-large", resume=limit) if begun else None
    if not ctx.final:
        return NEED_MORE
    return Found(len(text), error="truncated") if begun else None


def _named(name: str, arguments: dict[str, Any], end: int) -> tuple[RawCall, int] | Found:
    """The call, once attributes restating its name are taken out of its arguments."""
    for key in _NAME_KEYS:
        said = arguments.get(key)
        if said is None:
            continue
        if not isinstance(said, str) or said.strip().casefold() != name.casefold():
            return Found(end, error="ambiguous")  # the tag and the attribute name two tools
        del arguments[key]
    return RawCall(name, arguments), end
