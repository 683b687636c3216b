"""Special-token blocks: ``BLOCK_BEGIN CALL… BLOCK_END`` where every delimiter is one token.

DeepSeek (``<｜tool▁calls▁begin｜>``) and Kimi-K2 (``<|tool_calls_section_begin|>``) share this
shape: a section token, then calls each opened by a call token and closed by an end token,
then a section end token; any end token may be missing at the end of the reply. Tokens are
read whole (``token_at``) and their words normalised, so the spellings tokenizers produce for
one token (``▁``, ``_``, a space, ``\\_``) are the same token.

Two entry points with different refusal rules, because their extents differ:

* at a section token, the section is one candidate: a payload that cannot be decoded refuses
  the whole section up to its end token (its later calls cannot be delimited with confidence
  once one payload is unreadable), and scanning resumes after that token;
* at a call token (no section seen), the call alone is the candidate (plus a trailing section
  end token, which belongs to it).

A dialect whose section token is its own alone (``claims_sections``: no other dialect reads
that token) also owns a section that holds none of its calls: a call object written as JSON
inside it is read (the JSON reader inside this wrapper), anything else refuses the section
whole, as markup taken out of the content (the section token never leaks into it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._base import NEED_MORE, Found, NeedMore, RawCall, ReadContext, found_calls, skip_ws
from .tag import read_json_block

# Characters that begin a reasoning, code or tag marker: noise holding one is never read past.
_MARKUP_CHARS = frozenset("<[`~\u25c1")

__all__ = ["MAX_TOKEN_CHARS", "BodyFailure", "BodyReader", "TokenBlock", "token_at"]

# Longest token word we look for (`tool_call_argument_begin` is 24 characters).
MAX_TOKEN_CHARS = 40
_SEPARATORS = (("\\_", "_"), ("▁", "_"), (" ", "_"))


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_▁ \\"


# The separators ``_word_char`` allows beside letters and digits, deleted by ``str.translate``.
_SEPARATOR_CHARS = str.maketrans("", "", "_▁ \\")


def token_at(text: str, i: int, opener: str, closer: str, ctx: ReadContext) -> tuple[str, int] | NeedMore | None:
    """The token ``opener WORDS closer`` at ``i``: (normalised lower-case words, index after).

    ``<｜tool▁call▁end｜>`` and ``<｜tool_call_end｜>`` both read as ``tool_call_end``. NEED_MORE
    when the text ends inside what may still become a token. O(MAX_TOKEN_CHARS).
    """
    n = len(text)
    if not text.startswith(opener, i):
        cut = not ctx.final and n - i < len(opener) and opener.startswith(text[i:])
        return NEED_MORE if cut else None
    w = i + len(opener)
    limit = min(n, w + MAX_TOKEN_CHARS + len(closer))
    j = text.find(closer, w, limit)
    if j == -1:
        making = not ctx.final and limit >= n and _in_the_making(text[w:], closer)
        return NEED_MORE if making else None
    word = _normalised(text[w:j])
    return None if word is None else (word, j + len(closer))


def _normalised(raw: str) -> str | None:
    """A token's words in lower case, every separator spelling as ``_``; None when it holds
    anything else."""
    word = raw.lower()
    for old, new in _SEPARATORS:
        word = word.replace(old, new)
    # Word characters and `_` only: one C-level test, not a Python step per character.
    letters = word.replace("_", "")
    if not word or (letters and not letters.isalnum()):
        return None
    return word


def _in_the_making(tail: str, closer: str) -> bool:
    """Still a token in the making: every character so far is a word character, possibly
    followed by the start of the closer. O(len(tail))."""
    k = len(tail)
    while k > 0 and not _word_char(tail[k - 1]) and closer.startswith(tail[k - 1 :]):
        k -= 1
    words = tail[:k].translate(_SEPARATOR_CHARS)
    return (not words or words.isalnum()) and closer.startswith(tail[k:])


@dataclass(frozen=True, slots=True)
class BodyFailure:
    """A payload that cannot be decoded (``reason``), found at ``pos``."""

    reason: str
    pos: int


# Reads one call's payload after its call token: (call, index after payload), a failure,
# NEED_MORE, or None when the payload is not this dialect's.
BodyReader = Callable[[str, int, ReadContext], "tuple[RawCall, int] | BodyFailure | NeedMore | None"]


@dataclass(frozen=True, slots=True)
class TokenBlock:
    """The token words of one dialect's blocks (normalised, see ``token_at``)."""

    opener: str
    closer: str
    block_begin: frozenset[str]
    block_end: frozenset[str]
    call_begin: frozenset[str]
    call_end: frozenset[str]
    claims_sections: bool = False

    def read(
        self, text: str, start: int, marker_end: int, ctx: ReadContext, body: BodyReader
    ) -> Found | NeedMore | None:
        """The block or lone call at ``start``. O(what it reads): each token and payload is
        read once; a refused section adds one forward search for its end token."""
        tok = token_at(text, start, self.opener, self.closer, ctx)
        if not isinstance(tok, tuple):
            return None
        if tok[0] in self.call_begin:
            return self._lone_call(text, tok[1], ctx, body)
        got = self._section(text, tok[1], ctx, body)
        if got is None and self.claims_sections:
            return self._unread_section(text, start, tok[1], ctx, body)
        return got

    def _unread_section(self, text: str, start: int, i: int, ctx: ReadContext, body: BodyReader) -> Found | NeedMore:
        """A section from ``i`` that holds none of our calls where one should start: a JSON
        call object in it, its calls after text that is no token (noise between the tokens,
        cut out with them), or the section refused whole (``not-a-call``; ``undecodable`` at
        a call token whose body does not read; ``truncated`` when the reply ends with nothing
        in it). O(the section)."""
        k = skip_ws(text, i)
        if k >= len(text):
            return NEED_MORE if not ctx.final else Found(len(text), error="truncated", markup=True)
        if text[k] in "{[":
            got = read_json_block(text, start, k, None, ctx)
            if isinstance(got, NeedMore):
                return NEED_MORE
            if isinstance(got, Found) and got.calls:
                end = self._after_call(text, got.end, ctx, self.block_end)
                return NEED_MORE if isinstance(end, NeedMore) else Found(end, got.calls)
        nxt = self._next_token(text, k, ctx)
        if isinstance(nxt, NeedMore):
            return NEED_MORE
        if nxt is not None and nxt[1] in self.call_begin:
            # Noise that may hold a marker of another kind (`<think>` opens reasoning, a fence or
            # tag opens code) is not read past: the section is refused and the scan reads it.
            noise = text[k : nxt[0]]
            plain = nxt[0] > k and not any(c in noise for c in _MARKUP_CHARS)
            calls = self._section(text, nxt[0], ctx, body) if plain else None
            if calls is not None:
                return calls
            reason = "undecodable"
        else:
            reason = "not-a-call"
        # No payload of ours was read: a new section token ends this one (a stray opener does
        # not swallow the section written after it).
        return self._refuse_section(text, BodyFailure(reason, k), ctx, new_section_ends=True)

    def _next_token(self, text: str, q: int, ctx: ReadContext) -> tuple[int, str] | NeedMore | None:
        """The first token from ``q``: (its start, its word); None when none comes."""
        while True:
            q = text.find(self.opener, q)
            if q == -1:
                return NEED_MORE if not ctx.final else None
            tok = token_at(text, q, self.opener, self.closer, ctx)
            if isinstance(tok, NeedMore):
                return NEED_MORE
            if tok is not None:
                return q, tok[0]
            q += len(self.opener)

    def _after_call(self, text: str, j: int, ctx: ReadContext, ends: frozenset[str]) -> int | NeedMore:
        """Index after the optional end token (one of ``ends``) that may follow a payload."""
        k = skip_ws(text, j)
        if k >= len(text):
            return NEED_MORE if not ctx.final else j
        tok = token_at(text, k, self.opener, self.closer, ctx)
        if tok is NEED_MORE:
            return NEED_MORE
        if isinstance(tok, tuple) and tok[0] in ends:
            return tok[1]
        return j

    def _lone_call(self, text: str, i: int, ctx: ReadContext, body: BodyReader) -> Found | NeedMore | None:
        got = body(text, i, ctx)
        if got is None or got is NEED_MORE:
            return got
        if isinstance(got, BodyFailure):
            return Found(max(got.pos, i), error=got.reason)
        assert isinstance(got, tuple)
        call, j = got
        end = self._after_call(text, j, ctx, self.call_end)
        if end is NEED_MORE:
            return NEED_MORE
        assert isinstance(end, int)
        end2 = self._after_call(text, end, ctx, self.block_end)
        if end2 is NEED_MORE:
            return NEED_MORE
        assert isinstance(end2, int)
        return Found(end2, (call,))

    def _section(self, text: str, i: int, ctx: ReadContext, body: BodyReader) -> Found | NeedMore | None:
        # A section token with no call of ours after it is not our payload (found_calls: None).
        n = len(text)
        calls: list[RawCall] = []
        end = i
        while True:
            k = skip_ws(text, end)
            if k >= n:
                return NEED_MORE if not ctx.final else found_calls(end, calls)
            tok = token_at(text, k, self.opener, self.closer, ctx)
            if not isinstance(tok, tuple):
                return NEED_MORE if tok is NEED_MORE else found_calls(end, calls)
            word, after = tok
            if word in self.block_end:
                return found_calls(after, calls)
            got = self._section_call(text, after, ctx, body) if word in self.call_begin else None
            if not isinstance(got, tuple):
                return found_calls(end, calls) if got is None else got  # None: not this dialect's call
            calls.append(got[0])
            end = got[1]

    def _section_call(
        self, text: str, i: int, ctx: ReadContext, body: BodyReader
    ) -> tuple[RawCall, int] | Found | NeedMore | None:
        """The call whose payload starts at ``i`` in a section, through its end token."""
        got = body(text, i, ctx)
        if isinstance(got, BodyFailure):
            return self._refuse_section(text, got, ctx)
        if not isinstance(got, tuple):
            return got
        call, j = got
        e = self._after_call(text, j, ctx, self.call_end)
        return NEED_MORE if isinstance(e, NeedMore) else (call, e)

    def _refuse_section(
        self, text: str, failure: BodyFailure, ctx: ReadContext, *, new_section_ends: bool = False
    ) -> Found | NeedMore:
        """Refuse the section through its end token (or the end of the reply); with
        ``new_section_ends``, up to a section token that opens another one first."""
        q = failure.pos
        while True:
            q = text.find(self.opener, q)
            if q == -1:
                if not ctx.final:
                    return NEED_MORE
                return Found(len(text), error=failure.reason, resume=len(text), markup=self.claims_sections)
            tok = token_at(text, q, self.opener, self.closer, ctx)
            if tok is NEED_MORE:
                return NEED_MORE
            if isinstance(tok, tuple) and tok[0] in self.block_end:
                return Found(tok[1], error=failure.reason, resume=tok[1], markup=self.claims_sections)
            if new_section_ends and isinstance(tok, tuple) and tok[0] in self.block_begin:
                return Found(q, error=failure.reason, markup=self.claims_sections)
            q += len(self.opener)
