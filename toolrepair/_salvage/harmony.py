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


def _read_header(
    text: str, i: int, ctx: ReadContext, first: str | None, head: _Header
) -> int | NeedMore | None:
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
            tok = token_at(text, j, _OPEN, _CLOSE, ctx)
            if not isinstance(tok, tuple):
                return tok
            word, i = tok
            if word == "message":
                head.body = i
                return i
            if word not in ("channel", "constrain"):
                return None
            slot = word
            continue
        if text[j] == "<" and j + 1 == n and not ctx.final:
            return NEED_MORE
        m = _WORD.match(text, j, limit)
        e = m.end() if m else j
        if e == n and not ctx.final:
            return NEED_MORE  # the word may go on
        if e == j:
            return None  # a `<` that opens no token
        if startswith_ci(text, "to=", j):
            # The recipient runs to the header's next token, so a name may hold spaces
            # (`to=functions.Web Search <|constrain|>json`): resolved later by normalising.
            # A trailing `json` there is the content type; no token before the limit or a
            # line break: the recipient is one word.
            d = text.find(_OPEN, e, limit)
            if d != -1 and text.find("\n", j, d) == -1:
                words = text[j + 3 : d].split()
                if len(words) > 1 and words[-1].lower() == "json":
                    words.pop()
                head.recipient = " ".join(words)
                i = d
                slot = None
                continue
            head.recipient = text[j + 3 : e]
        elif slot == "role":
            head.role = text[j:e]
        elif slot == "channel":
            head.channel = text[j:e]
        slot = None  # content types and stray words are not needed
        i = e
    return None


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
    k = skip_ws(text, j)
    if k >= n:
        return NEED_MORE if not ctx.final else Found(j, (call,))
    tok = token_at(text, k, _OPEN, _CLOSE, ctx)
    if tok is NEED_MORE:
        return NEED_MORE
    if isinstance(tok, tuple) and tok[0] in ("call", "end"):
        return Found(tok[1], (call,))
    return Found(j, (call,))


@dataclass(frozen=True)
class _Harmony:
    name: str = "harmony"
    # `<|end|>` ends every kind of message, so it closes the analysis mask but never means the
    # reply began inside reasoning (forced_open False); outside the mask it is read and skipped.
    markers: tuple[str, ...] = ("<|start|>", "<|channel|>", _RECIPIENT, _END)
    reasoning: tuple[tuple[str | None, str, bool], ...] = tuple(
        (f"<|channel|>{lead}analysis{sep}<|message|>", "<|end|>", False)
        for lead in ("", " ") for sep in ("", " ", "\n", "\r\n")
    )

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        """O(MAX_HEADER_CHARS + payload); a skipped non-call message costs its length."""
        if marker_end - start == len(_END) and startswith_ci(text, _END, start):
            return Found(marker_end, resume=marker_end)
        head = _Header()
        if text[start] == "<":
            first = "role" if startswith_ci(text, "<|start|>", start) else "channel"
            got = _read_header(text, marker_end, ctx, first, head)
        else:
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                return None  # `goto=functions.x` is prose
            got = _read_header(text, start, ctx, None, head)
        if got is None or got is NEED_MORE:
            return got
        recipient = head.recipient
        is_call = recipient is not None and recipient.lower().startswith("functions.") and len(recipient) > 10
        if head.body == -1 and is_call:  # no `<|message|>`: its tokens may have been detokenised away
            at = text[start : start + MAX_HEADER_CHARS].lower().find(_RECIPIENT)
            bare = _DETOKENISED.match(text, start + at + len(_RECIPIENT)) if at != -1 else None
            if bare is not None:
                return _read_call(text, bare.end(), bare.group(1), ctx)
        if head.body == -1:  # the reply ended inside the header
            return Found(len(text), error="truncated", resume=len(text)) if is_call else None
        if is_call:
            assert recipient is not None
            return _read_call(text, head.body, recipient[len("functions.") :], ctx)
        role = (head.role or "").lower()
        if _is_builtin(recipient) or _is_builtin(role) or role.startswith("functions."):
            return _skip_message(text, head.body, ctx)
        return None


HARMONY = _Harmony()
