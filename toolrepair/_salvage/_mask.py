"""Masks: Markdown fences and reasoning blocks, where a call is never a call.

Fences follow CommonMark: a run of three or more backticks or tildes opening a line indented
at most three spaces (a backtick fence's info string holds no backtick); closed only by a line
of the same character, at least as long, indented at most three spaces, with nothing but
whitespace after it; unclosed, it masks to the end of the text. All checks here look at one
line: O(line length).
"""

from __future__ import annotations

from ._base import NEED_MORE, NeedMore

__all__ = ["DEFAULT_REASONING", "fence_closer_at", "fence_opener_at", "line_start_indent_ok"]

# (open, close) reasoning pairs every scan knows; dialects add their own.
DEFAULT_REASONING: tuple[tuple[str | None, str], ...] = (("<think>", "</think>"),)


def line_start_indent_ok(text: str, s: int) -> bool:
    """Only up to three spaces stand between the start of the line and ``s``."""
    i = s
    for _ in range(4):
        if i == 0 or text[i - 1] in "\n\r":
            return True
        if text[i - 1] != " ":
            return False
        i -= 1
    return False


def _run(text: str, s: int) -> int:
    ch = text[s]
    e = s
    n = len(text)
    while e < n and text[e] == ch:
        e += 1
    return e - s


def fence_opener_at(text: str, s: int, final: bool) -> tuple[str, int] | NeedMore | None:
    """(fence char, run length) when a fence opens at ``s``; None when it does not; NEED_MORE
    when the line is not complete yet and the answer depends on it (streaming only)."""
    if not line_start_indent_ok(text, s):
        return None
    length = _run(text, s)
    if length < 3:
        return None
    ch = text[s]
    nl = text.find("\n", s + length)
    if nl == -1:
        if not final:
            if s + length < len(text) and ch == "`" and "`" in text[s + length :]:
                return None  # decided already: a stream need not wait for the line's end
            return NEED_MORE
        nl = len(text)
    if ch == "`" and "`" in text[s + length : nl]:
        return None  # ``` inline code ``` on one line is not a fence
    return ch, length


def fence_closer_at(text: str, s: int, ch: str, length: int, final: bool) -> int | NeedMore | None:
    """End of the closing fence line starting its run at ``s`` (past its newline), None when
    this run does not close the fence, False when undecidable until the line completes."""
    if text[s] != ch or not line_start_indent_ok(text, s):
        return None
    run = _run(text, s)
    if run < length:
        # A run cut by the end of a streamed text may yet grow long enough.
        return NEED_MORE if not final and s + run == len(text) else None
    nl = text.find("\n", s + run)
    if nl == -1:
        if not final:
            # Decided already when something other than whitespace follows the run.
            return None if text[s + run :].strip() else NEED_MORE
        nl = len(text)
    if text[s + run : nl].strip():
        return None
    return min(nl + 1, len(text))
