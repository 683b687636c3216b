"""StreamSalvager: ``salvage_text`` over a reply that arrives in pieces, with the same result.

The stream runs the one salvage pass (``_engine.SalvagePass``) over a growing text. Readers
are prefix-stable, so whatever the pass has decided on a prefix stands; the stream's work is
to hand text on as soon as nothing later can change it, and to bound the cost of asking.

What is held back, and why (everything else is released at once):

* a marker cut by the end of the text (``<tool_`` may become ``<tool_call>``), and a marker
  the pass is waiting on: a candidate still being written, or a fence line whose kind
  depends on text not yet seen. Text before them is released.
* a run of whitespace, until what follows it is known: ``build_content`` drops whitespace
  before a cut, after a cut when nothing was kept before it, and at the end after a cut.
* forced-open reasoning: a reasoning close with no opener (``</think>``, or a close-only
  marker such as ``[BEGIN FINAL RESPONSE]``) clears every call before it. While some enabled
  reasoning pair has not been seen yet, that can still happen, so the first accepted call
  and everything after it are held until every pair has been seen (then nothing can clear
  them) or the reply ends; if the clear happens, the held calls become text. This is the
  least holding that stays equivalent: a call released earlier could be taken back. With
  several dialects' reasoning markers enabled (the default), calls therefore usually come
  at ``close()``; pass ``mask_reasoning=False`` or fewer ``dialects`` to get them sooner.

Cost, for a reply of n characters in d deltas (the bounds tests count): O(n + d) overall.
The unreleased window is kept, not the reply: released text and text the pass is done with
are dropped (keeping ``LOOKBEHIND`` characters for readers), and a delta is appended in O(1)
and joined into the window only when the pass next looks. A candidate waiting for more text
is re-read only once it has grown by a quarter since the last try (or outgrew
``max_call_chars``), so its reads and joins cost at most 5x its final length, and it is
released at most a quarter of its length late; a candidate past ``max_call_chars`` is given
up (a ``too-large`` rejection, its text released), exactly as ``salvage_text`` gives it up.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Union

from .._limits import Limits, limits_with
from .._types import ToolCall
from ._base import LOOKBEHIND, AnyTool, Dialect
from ._engine import SalvagePass, config_for
from ._marks import Work

__all__ = ["Event", "StreamSalvager", "TextDelta", "ToolCallReady"]

# Re-read a waiting candidate once it has grown by 1/_GROWTH of its length since the last try.
_GROWTH = 4


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Visible text, safe to show: it will not be taken back or become part of a call."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A complete call, accepted against the allowlist, that will not be taken back."""

    call: ToolCall


Event = Union[TextDelta, ToolCallReady]  # noqa: UP007 (a runtime alias on Python 3.10)

class _HeldCut(NamedTuple):
    """A cut held back (see the module docstring): its span, its text, its calls."""

    span: tuple[int, int]
    text: str
    calls: list[ToolCall]


# A held segment: text, or a cut.
_Held = Union[str, _HeldCut]  # noqa: UP007


class StreamSalvager:
    """Salvage over a streamed reply: ``feed`` each delta, then ``close``.

    The concatenated ``TextDelta`` texts equal ``salvage_text(reply, allowed).content`` and
    the ``ToolCallReady`` calls equal its ``calls``, in order, for every way of cutting the
    reply (same masks, allowlist, dialects and limits; spans are offsets in the whole reply).
    There is no ``max_input_chars``: memory is bounded by ``max_call_chars`` per candidate
    (plus what the rules above must hold), so equality is for replies within
    ``salvage_text``'s input limit. ``feed`` after ``close`` raises ``RuntimeError``.

    >>> s = StreamSalvager(["web_search"], dialects=["hermes"], mask_reasoning=False)
    >>> events = s.feed('Sure. <tool_call>{"name": "web_search", ')
    >>> events += s.feed('"arguments": {"q": "x"}}</tool_call>') + s.close()
    >>> [type(e).__name__ for e in events], events[0].text
    (['TextDelta', 'ToolCallReady'], 'Sure.')

    With an async model stream::

        async for chunk in model_stream:
            for event in salvager.feed(chunk):
                ...
        for event in salvager.close():
            ...
    """

    __slots__ = ("_any_cut", "_call_i", "_closed", "_cut_i", "_fed", "_held", "_kept", "_kept_since_cut",
                 "_max_input", "_may_reset", "_over", "_pass", "_rel", "_resets", "_tried", "_ws")

    def __init__(
        self,
        allowed: Collection[str] | AnyTool,
        *,
        dialects: Sequence[str | Dialect] | None = None,
        mask_fences: bool = True,
        mask_reasoning: bool = True,
        max_call_chars: int | None = None,
        max_depth: int | None = None,
        max_input_chars: int | None = None,
        limits: Limits | None = None,
    ) -> None:
        bounds = limits_with(limits, max_input_chars=max_input_chars, max_call_chars=max_call_chars,
                             max_depth=max_depth)
        config = config_for(dialects, mask_fences, mask_reasoning)
        # Past `max_input_chars` in all, salvage stops: what was not yet released, and all
        # that follows, passes through as text (calls already released stand).
        self._max_input = bounds.max_input_chars
        self._fed = 0
        self._over = False
        self._pass = SalvagePass(config, allowed, max_depth=bounds.max_depth, max_call_chars=bounds.max_call_chars,
                                 max_name_chars=bounds.max_name_chars)
        # Can a reasoning close with nothing open still clear the calls so far?
        self._may_reset = len(config.unforced) < len(config.reasoning)
        self._rel = 0  # the text before this offset has been handed on (released or held)
        self._cut_i = 0  # cuts (and calls) of the pass handed on
        self._call_i = 0
        self._resets = 0
        self._tried = 0  # the text's length when the pass last looked
        self._held: list[_Held] | None = None  # from the first call that may yet be cleared
        self._closed = False
        # build_content's whitespace rules, incrementally: the pending whitespace run, whether
        # a cut has been passed, whether anything is kept, and since the last cut.
        self._ws: list[str] = []
        self._any_cut = False
        self._kept = False
        self._kept_since_cut = False

    @property
    def work(self) -> Work:
        """Work counted so far (markers handled, reader calls, characters handed to readers
        and copied into the window): what linear-time tests assert on, never a clock."""
        return self._pass.work

    def feed(self, delta: str) -> list[Event]:
        """The events that ``delta`` makes certain. O(len(delta)) amortised."""
        if self._closed:
            raise RuntimeError("StreamSalvager.feed() after close()")
        if not isinstance(delta, str):
            raise TypeError(f"feed takes a str, not {type(delta).__name__}")
        if self._over:
            return [TextDelta(delta)] if delta else []
        self._fed += len(delta)
        if self._fed > self._max_input:
            return self._overflow(delta)
        run = self._pass
        scan = run.scan
        if run.mask is not None:
            run.mask.feed(delta)
        if run.blocked is None and scan.idle and not run.config.finder.anchor_re.search(delta):
            # Prose: no marker can complete in it and none is pending, so the pass has
            # nothing to do; only the end of the text (a marker prefix?) needs a look.
            scan.extend_plain(delta)
            return self._step(final=False, look=False)
        run.extend(delta)
        if run.blocked is not None and not (run.settling and delta):
            waited = self._tried - run.blocked
            if _GROWTH * (scan.end - self._tried) < waited and scan.end - run.blocked <= run.limits[1]:
                return []  # not worth re-reading yet: see the module docstring
        return self._step(final=False)

    def close(self) -> list[Event]:
        """The remaining events: the reply is complete. Idempotent after the first call."""
        if self._closed:
            return []
        self._closed = True
        if self._over:
            return []
        return self._step(final=True)

    def _overflow(self, delta: str) -> list[Event]:
        """The input outgrew ``max_input_chars``: release everything held as text, stop salvaging."""
        self._over = True
        scan = self._pass.scan
        scan.sync()
        out: list[str] = []
        for item in self._held or ():
            out.append(item if isinstance(item, str) else item.text)
        self._held = None
        out.extend(self._ws)
        self._ws.clear()
        out.append(scan.text[self._rel - scan.base :])
        out.append(delta)
        text = "".join(out)
        return [TextDelta(text)] if text else []

    def _step(self, final: bool, look: bool = True) -> list[Event]:
        run = self._pass
        scan = run.scan
        if look:
            run.advance(final)
        self._tried = scan.end
        if final:
            limit = scan.end
        elif run.blocked is not None:
            limit = run.blocked
            # Every marker before the blocked one has been handled (the scan pops in order),
            # so the pass may move on to it and the scan forget what lies LOOKBEHIND before:
            # else a run of candidates each blocked in turn holds the window open, and every
            # join copies all of it (quadratic on `<|tool_call_begin|>` * n).
            run.pos = max(run.pos, limit)
        else:
            limit = scan.frontier(run.pos)
            # No marker still to come starts before `limit`: the pass may move on to it, and
            # the scan can forget what lies more than LOOKBEHIND before.
            run.pos = max(run.pos, limit)
        events: list[Event] = []
        out: list[str] = []
        if run.resets != self._resets:  # forced-open reasoning cleared the calls so far
            self._resets = run.resets
            self._cut_i = self._call_i = 0
            held, self._held = self._held, None
            for item in held or ():
                self._text(item if isinstance(item, str) else item.text, out)
        text, base = scan.text, scan.base
        cuts = run.cuts
        while self._cut_i < len(cuts) and cuts[self._cut_i][0] < limit:
            s, e = cuts[self._cut_i]
            self._cut_i += 1
            self._hand_on(text[self._rel - base : s - base], out, events)
            calls: list[ToolCall] = []
            while self._call_i < len(run.calls) and run.calls[self._call_i].span == (s, e):
                calls.append(run.calls[self._call_i])
                self._call_i += 1
            if self._held is None and not final and self._may_reset:
                self._held = []  # this call may yet be cleared: hold it and all after it
            if self._held is not None:
                self._held.append(_HeldCut((s, e), text[s - base : e - base], calls))
            else:
                self._cut(calls, out, events)
            self._rel = e
        if limit > self._rel:
            self._hand_on(text[self._rel - base : limit - base], out, events)
            self._rel = limit
        if self._held is not None and (final or not self._may_reset):
            held, self._held = self._held, None  # nothing can clear these calls any more
            for item in held:
                if isinstance(item, str):
                    self._text(item, out)
                else:
                    self._cut(item.calls, out, events)
        if final:
            if self._ws and (not self._any_cut or self._kept_since_cut):
                out.extend(self._ws)
            self._ws.clear()
        else:
            if run.mask is not None:  # the code mask reads (and then forgets) complete lines
                run.mask.catch_up(run.pos if run.blocked is None else run.blocked)
            scan.trim(min(self._rel, run.pos - LOOKBEHIND))
        _flush(out, events)
        return events

    def _hand_on(self, piece: str, out: list[str], events: list[Event]) -> None:
        if not piece:
            return
        if self._held is not None:
            self._held.append(piece)
        else:
            self._text(piece, out)

    def _text(self, piece: str, out: list[str]) -> None:
        """Release text, holding its trailing whitespace until what follows is known."""
        body = piece.strip()
        if not body:
            self._ws.append(piece)
            return
        lead = len(piece) - len(piece.lstrip())
        if not (self._any_cut and not self._kept):  # else: leading whitespace after a cut
            out.extend(self._ws)
            out.append(piece[:lead])
        self._ws.clear()
        out.append(body)
        trail = piece[lead + len(body) :]
        if trail:
            self._ws.append(trail)
        self._kept = self._kept_since_cut = True

    def _cut(self, calls: list[ToolCall], out: list[str], events: list[Event]) -> None:
        self._ws.clear()  # whitespace before a cut goes
        self._any_cut = True
        self._kept_since_cut = False
        _flush(out, events)
        events.extend(ToolCallReady(c) for c in calls)


def _flush(out: list[str], events: list[Event]) -> None:
    text = "".join(out)
    out.clear()
    if text:
        events.append(TextDelta(text))
