"""gpt-oss harmony: a message whose header names a ``functions.`` recipient.

::

    <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{json}<|call|>

The header's parts come in either order (``<|start|>assistant to=functions.NAME<|channel|>…``),
may be spaced out (LLM-jp), and the reply may begin inside one (the prompt ended with
``<|start|>assistant``), so a call is found from ``<|start|>``, from ``<|channel|>`` or from
the recipient itself, whichever comes first; the header is consumed into the call's span.
``<|call|>`` (or ``<|end|>``) may be missing at the end. Built-in recipients (``to=python``,
``to=browser.search``, ``to=container.exec``) and tool-result messages are not calls: they
are skipped whole so that their bodies (code, tool output) are never read as calls. The
analysis channel is reasoning; the final channel is text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, skip_ws, startswith_ci
from ._json import JsonFailure, arguments_payload
from .token_block import token_at

__all__ = ["HARMONY"]

_OPEN, _CLOSE = "<|", "|>"
_RECIPIENT = "to=functions."
_END = "<|end|>"
# A header is short: a role, a channel, a recipient, a content type.
MAX_HEADER_CHARS = 512
_BUILTIN = ("python", "browser", "container")
_TERMINATORS = frozenset({"call", "end", "return"})


@dataclass(slots=True)
class _Header:
    role: str | None = None
    channel: str | None = None
    recipient: str | None = None
    body: int = -1  # index after <|message|>; -1 while unread


_WORD = re.compile(r"[^\s<]*")
# Harmony with its special tokens detokenised away (`commentary to=functions.NAME json{...}`):
# the name, an optional content type, then the JSON body. Bounded class runs: linear.
_DETOKENISED = re.compile(r"([\w.\-]{1,256})[ \t]*(?:json)?[ \t]*(?=\{)", re.IGNORECASE)
# A header has a role, a channel, a recipient, a content type and their tokens: a few more
# parts than that and it is not a header (this bounds the work on token-dense junk).
MAX_HEADER_PARTS = 10


def _read_header(text: str, i: int, ctx: ReadContext, first: str | None, head: _Header) -> int | NeedMore | None:
    """Fill ``head`` from ``i`` to ``<|message|>``; the first bare word goes to slot ``first``.

    Returns the body index, NEED_MORE, or None when this is not a message header (a token that
    may not appear in one, or no ``<|message|>`` within MAX_HEADER_CHARS or MAX_HEADER_PARTS);
    ``head.body`` stays -1 when the reply ends inside the header. O(MAX_HEADER_CHARS).
    """
    n = len(text)
    limit = min(n, i + MAX_HEADER_CHARS)
    slot = first
    for _ in range(MAX_HEADER_PARTS):
        j = skip_ws(text, i)
        if j >= n:
            return NEED_MORE if not ctx.final else n
        if j >= limit:
            return None
        if text.startswith(_OPEN, j):
            part = _header_token(text, j, ctx, head)
        else:
            part = _header_word(text, j, limit, ctx, head, slot=slot)
        if not isinstance(part, tuple):
            return part
        slot, i = part
    return None


# A header part read: (the slot the next bare word fills, the index after the part).
_Part = tuple[str | None, int]


def _header_token(text: str, j: int, ctx: ReadContext, head: _Header) -> _Part | int | NeedMore | None:
    """The token at ``j``: ``<|message|>`` ends the header (its body index), ``<|channel|>``
    and ``<|constrain|>`` name the next word's slot, any other is not a header's."""
    tok = token_at(text, j, _OPEN, _CLOSE, ctx)
    if not isinstance(tok, tuple):
        return tok
    word, i = tok
    if word == "message":
        head.body = i
        return i
    return (word, i) if word in ("channel", "constrain") else None


def _header_word(
    text: str, j: int, limit: int, ctx: ReadContext, head: _Header, *, slot: str | None
) -> _Part | NeedMore | None:
    """The bare word at ``j``: the recipient (``to=...``), or the value of ``slot``."""
    n = len(text)
    if text[j] == "<" and j + 1 == n and not ctx.final:
        return NEED_MORE
    m = _WORD.match(text, j, limit)
    e = m.end() if m else j
    if e == n and not ctx.final:
        return NEED_MORE  # the word may go on
    if e == j:
        return None  # a `<` that opens no token
    if startswith_ci(text, "to=", j):
        return None, _recipient(text, j, e, limit, head)
    _fill(head, slot, text[j:e])
    return None, e


def _fill(head: _Header, slot: str | None, word: str) -> None:
    """``word`` as the header's role or channel; content types and stray words are not needed."""
    if slot == "role":
        head.role = word
    elif slot == "channel":
        head.channel = word


def _recipient(text: str, j: int, e: int, limit: int, head: _Header) -> int:
    """The ``to=`` word at ``j`` (ending at ``e``) into ``head``; the index after it.

    The recipient runs to the header's next token, so a name may hold spaces
    (``to=functions.Web Search <|constrain|>json``): resolved later by normalising. A trailing
    ``json`` there is the content type; no token before the limit or a line break: the
    recipient is one word.
    """
    d = text.find(_OPEN, e, limit)
    if d == -1 or text.find("\n", j, d) != -1:
        head.recipient = text[j + 3 : e]
        return e
    words = text[j + 3 : d].split()
    if len(words) > 1 and words[-1].lower() == "json":
        words.pop()
    head.recipient = " ".join(words)
    return d


def _is_builtin(name: str | None) -> bool:
    return name is not None and name.lower().split(".")[0] in _BUILTIN


def _skip_message(text: str, body: int, ctx: ReadContext) -> Found | NeedMore:
    """A silent skip over a message body to its terminator, or to the next ``<|start|>``."""
    q = body
    while True:
        q = text.find(_OPEN, q)
        if q == -1:
            return NEED_MORE if not ctx.final else Found(len(text), resume=len(text))
        tok = token_at(text, q, _OPEN, _CLOSE, ctx)
        if tok is NEED_MORE:
            return NEED_MORE
        if isinstance(tok, tuple):
            if tok[0] in _TERMINATORS:
                return Found(tok[1], resume=tok[1])
            if tok[0] == "start":
                return Found(q, resume=q)
        q += len(_OPEN)


def _read_call(text: str, body: int, name: str, ctx: ReadContext) -> Found | NeedMore:
    """The JSON object body of a call and its optional ``<|call|>``/``<|end|>``. O(payload)."""
    n = len(text)
    i = skip_ws(text, body)
    if i >= n:
        return NEED_MORE if not ctx.final else Found(n, error="truncated", resume=n)
    if text[i] not in '{["':
        return Found(i + 1, error="undecodable-arguments", resume=body)
    decoded = arguments_payload(text, i, ctx, _RECIPIENT)
    if decoded is NEED_MORE:
        return NEED_MORE
    if isinstance(decoded, JsonFailure):
        return Found(max(decoded.pos, i + 1), error=decoded.reason, resume=body)
    assert isinstance(decoded, tuple)
    value, j, repairs = decoded
    refused = None if value is not None else "undecodable-arguments"
    call = RawCall(name, value if value is not None else {}, None, refused, repairs)
    return _call_end(text, j, call, ctx)


def _call_end(text: str, j: int, call: RawCall, ctx: ReadContext) -> Found | NeedMore:
    """The call whose body ends at ``j``, spanning a ``<|call|>`` or ``<|end|>`` after it."""
    n = len(text)
    k = skip_ws(text, j)
    if k >= n:
        return NEED_MORE if not ctx.final else Found(j, (call,))
    tok = token_at(text, k, _OPEN, _CLOSE, ctx)
    if tok is NEED_MORE:
        return NEED_MORE
    return Found(tok[1] if isinstance(tok, tuple) and tok[0] in ("call", "end") else j, (call,))


@dataclass(frozen=True)
class _Harmony:
    name: str = "harmony"
    # `<|end|>` ends every kind of message, so it closes the analysis mask but never means the
    # reply began inside reasoning (forced_open False); outside the mask it is read and skipped.
    markers: tuple[str, ...] = ("<|start|>", "<|channel|>", _RECIPIENT, _END)
    # The final channel is the reply's content: masked like reasoning, so nothing in it is a
    # call (a call-shaped JSON object there is the answer's text), but a content-only channel
    # (the fourth element): its text stays content. A final message with a recipient header
    # (`<|channel|>final to=functions.x`) is not matched by these literals and is read as a call.
    reasoning: tuple[tuple[str | None, str, bool] | tuple[str | None, str, bool, str], ...] = tuple(
        (f"<|channel|>{lead}{channel}{sep}<|message|>", "<|end|>", False, *kind)
        for channel, kind in (("analysis", ()),)
        for lead in ("", " ")
        for sep in ("", " ", "\n", "\r\n")
    )

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        """O(MAX_HEADER_CHARS + payload); a skipped non-call message costs its length."""
        if marker_end - start == len(_END) and startswith_ci(text, _END, start):
            return Found(marker_end, resume=marker_end)
        head = _Header()
        got = _header_from(text, start, marker_end, ctx, head)
        if got is None or got is NEED_MORE:
            return got
        recipient = head.recipient
        if recipient is not None and recipient.lower().startswith("functions.") and len(recipient) > 10:
            return _call_after(text, start, head, recipient, ctx)
        return _other_message(text, head, ctx)


def _other_message(text: str, head: _Header, ctx: ReadContext) -> Found | NeedMore | None:
    """A message that is no function call: a built-in's call or a tool's result is skipped
    whole (its body is code or tool output, never calls); any other is text."""
    if head.body == -1:  # the reply ended inside the header
        return None
    role = (head.role or "").lower()
    if _is_builtin(head.recipient) or _is_builtin(role) or role.startswith("functions."):
        return _skip_message(text, head.body, ctx)
    return None


def _header_from(text: str, start: int, marker_end: int, ctx: ReadContext, head: _Header) -> int | NeedMore | None:
    """``_read_header`` from a token marker (its header slot next) or from the recipient."""
    if text[start] == "<":
        first = "role" if startswith_ci(text, "<|start|>", start) else "channel"
        return _read_header(text, marker_end, ctx, first, head)
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return None  # `goto=functions.x` is prose
    return _read_header(text, start, ctx, None, head)


def _call_after(text: str, start: int, head: _Header, recipient: str, ctx: ReadContext) -> Found | NeedMore:
    """The call a header naming ``functions.`` NAME opens: its body after ``<|message|>``, or,
    with no ``<|message|>``, after the recipient when the tokens were detokenised away."""
    if head.body != -1:
        return _read_call(text, head.body, recipient[len("functions.") :], ctx)
    at = text[start : start + MAX_HEADER_CHARS].lower().find(_RECIPIENT)
    bare = _DETOKENISED.match(text, start + at + len(_RECIPIENT)) if at != -1 else None
    if bare is not None:
        return _read_call(text, bare.end(), bare.group(1), ctx)
    return Found(len(text), error="truncated", resume=len(text))  # the reply ended inside the header


HARMONY = _Harmony()
