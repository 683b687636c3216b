"""StreamSalvager: ``salvage_text`` over a reply that arrives in pieces, with the same result.

The stream runs the one salvage pass (``_engine.SalvagePass``) over a growing text. Readers
are prefix-stable, so whatever the pass has decided on a prefix stands; the stream's work is
to hand text on as soon as nothing later can change it, and to bound the cost of asking.

What is held back, and why (everything else is released at once):

* a marker cut by the end of the text (``<tool_`` may become ``<tool_call>``), and a marker
  the pass is waiting on: a candidate still being written, or a fence line whose kind
  depends on text not yet seen. Text before them is released.
* a run of whitespace, until what follows it is known: ``ContentBuilder`` (the one content
  rule, ``_base``) drops whitespace before a cut unless it lies within a line after kept
  text (then it comes out at the cut), after a cut when nothing was kept before it, and at
  the end after a cut; ``ReasoningBuilder`` strips each reasoning region's ends.
* forced-open reasoning, without a model profile: a reasoning close with no opener
  (``</think>``, or a close-only marker such as ``[BEGIN FINAL RESPONSE]``) makes everything
  before it reasoning and clears every call before it, whatever pairs came before. While
  such a close is enabled (``mask_reasoning=True`` and any pair that can force-open, as the
  defaults can), that can happen until the reply ends, so everything is held, in order, and
  released at ``close()``; if the clear happens, the held text and calls become reasoning.
  This is the least holding that stays equivalent: a piece released earlier could be taken
  back. Since nothing can come out before ``close()`` then (or before the input bound is
  near), the deltas are only kept (O(1) each) and the pass reads them when something is
  next asked of it, in pieces of ``_BATCH`` characters: about the work of ``salvage_text``
  on the same text, however the reply was cut. With a ``ModelProfile`` no close forces
  reasoning open (the profile says whether its template opened it), so nothing is held for
  this: each call is released the moment it closes.
* under ``reasoning_calls="take"``, from the first call written inside open reasoning: it is
  taken if the reasoning never closes, and the reasoning ends there; a close makes it
  reasoning. Held until the close or ``close()``.

Text inside open reasoning is released as ``ReasoningDelta`` as it comes (markers excluded).

Plain text passes the pass by (``feed``): while the pass waits on nothing and the text not
yet released holds no anchor character, a delta without one can neither hold a marker nor
complete one, so the stream releases it itself, all but a trailing prefix of a marker that
holds no anchor (``call`` of ``call:``), exactly what the pass would release. That is one
C search of the delta and a look at its last few characters; the pass's window and the code
mask take such deltas once per ``_BATCH`` characters. Any other delta enters the pass.

Cost, for a reply of n characters in d deltas (the bounds tests count): O(n + d) overall,
and O(len(delta)) for a plain delta (``entries``, ``looked``). The unreleased window is kept,
not the reply: released text and text the pass is done with are dropped (keeping
``LOOKBEHIND`` characters for readers, plus at most ``_BATCH`` of plain deltas the pass has
yet to take), and a delta is appended in O(1)
and joined into the window only when the pass next looks. A candidate waiting for more text
is re-read once it has grown by a quarter since the last try (or outgrew
``max_call_chars``), and at once when a delta holds a character a call may end with (``>``
``}`` ``)`` ``]``, or the first non-space after one) while those re-reads have cost at most
4x its length plus ``_END_BUDGET``: so its reads and joins cost O(its final length), and a
call is released the moment it closes. A dialect that names its ``closers`` (the literal
markers its calls end with: ``</tool_call>``) is also re-read at once where one of them, or
the first non-space after one, was just fed, on a budget of its own of the same size, so the
``>`` and ``}`` a long call's values hold never spend the re-reads its closer needs. Readers
of the built-in dialects in ``END_STABLE``
never take in text after a call they have read, so their call needs no settling character
(others wait for one: ``json`` takes a ``;`` after its object). The XML-family readers
(Qwen3-Coder, Seed-OSS, GLM, MiniMax-M2, DSML) answer at their wrapper's closer only with a
model profile (``ReadContext.decided``); without one they look past it for a closing tag that
would give a value more text, so their call waits for what follows. A candidate past
``max_call_chars`` is given up (a ``too-large`` rejection, its text released), exactly as
``salvage_text`` gives it up.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .._limits import Limits, limits_with
from .._types import ToolCall
from ._base import LOOKBEHIND, AnyTool, ContentBuilder, Dialect, ReasoningBuilder
from ._engine import SalvagePass, config_of, markerless
from ._marks import Work
from ._profiles import ModelProfile
from ._scan import MarkerFinder

__all__ = ["Event", "ReasoningDelta", "StreamSalvager", "TextDelta", "ToolCallReady"]

# Re-read a waiting candidate once it has grown by 1/_GROWTH of its length since the last try.
_GROWTH = 4
# Or at once when a delta holds a character a candidate may end with (a closing tag's `>`, a
# JSON body's `}`, a pythonic list's `]`), while what its re-reads cost stays within _GROWTH
# times its length: so a call is released the moment it closes, in linear time.
_ENDS = re.compile(r"[>})\]]")


# What end-triggered re-reads of one candidate may cost beyond _GROWTH times its length.
_END_BUDGET = 4 * LOOKBEHIND


def _may_end(delta: str) -> bool:
    return _ENDS.search(delta) is not None


# A closer (``Dialect.closers``) split across deltas is found in this much of the text before
# the delta plus the delta: the longest built-in closer is 27 characters.
_CLOSER_TAIL = 48


def _closer_in(tail: str, delta: str, closers: tuple[str, ...]) -> bool:
    """Does ``delta`` complete one of the waiting candidate's closers (lower case), with the
    end of the text before it (``tail``)? A closer completed here ends in ``delta``, so one
    whose last character is not in it is skipped in C. O(len(delta) · len(closers))."""
    low = None
    for closer in closers:
        last = closer[-1]
        if last in delta or last.upper() in delta:
            if low is None:
                low = (tail + delta).lower()
            if closer in low:
                return True
    return False


def _ends_after(delta: str, before: bool) -> bool:
    """Is the last non-space character fed so far one a candidate may end with? (A reader may
    wait for the next non-space character after it: `;` goes on with a list of calls.)"""
    body = delta.rstrip()
    return before if not body else body[-1] in ">})]"


# Plain text (see ``StreamSalvager.feed``) is handed to the pass in batches of about this many
# characters: the pass's per-entry cost is paid once per batch, not once per delta, and the
# batch is all the stream keeps beyond the pass's window.
_BATCH = 8 * LOOKBEHIND


class _Plain(NamedTuple):
    """What the stream needs to pass plain text by the pass: a search for any anchor character
    (text without one holds no marker and completes none), and the proper prefixes of markers
    that hold no anchor character (``call`` of ``call:``), the only ones that can end such text,
    by their last character, longest first (``ends`` None: ask ``partial_start`` instead)."""

    anchor: Callable[..., re.Match[str] | None]  # a pattern's search: (text[, pos])
    ends: dict[str, tuple[str, ...]] | None
    longest: int
    # Once the leads are known and behind (``MarkerScan.leads_behind``), text may hold anchor
    # characters and still be plain: where no marker may start (``MarkerFinder.possible``,
    # searched with ``context`` characters before it for the lookbehinds).
    possible: Callable[[str, int], re.Match[str] | None]
    reach: int  # the longest marker
    context: int  # kept before a delta: its reach and the lookbehinds before that


@functools.lru_cache(maxsize=64)
def _plain_table(finder: MarkerFinder) -> _Plain:
    anchors = set(finder.anchors)
    free = sorted((p for p in finder.prefixes if not anchors.intersection(p)), key=len, reverse=True)
    by_last: dict[str, tuple[str, ...]] = {}
    for p in free:
        by_last[p[-1]] = (*by_last.get(p[-1], ()), p)
    reach, context = finder.max_len, 2 * finder.max_len
    if any("\u0307" in p for p in free):  # `İ` lowers to two characters: compare in place
        return _Plain(finder.anchor_re.search, None, 0, finder.possible, reach, context)
    # A non-ASCII last character (the Kelvin sign lowers to `k`) is compared by `_hold`.
    longest = max(map(len, free), default=0)
    return _Plain(finder.anchor_re.search, by_last, longest, finder.possible, reach, context)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Visible text, safe to show: it will not be taken back or become part of a call."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Reasoning text (a reasoning block's inside), safe to show as the model's thinking: it
    will not be taken back."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A complete call, accepted against the allowlist, that will not be taken back."""

    call: ToolCall


Event = TextDelta | ReasoningDelta | ToolCallReady


class _Held(NamedTuple):
    """A piece handed on (see the module docstring), held or released: ``kind`` says what it
    is to the builders (``text``: content; ``reason``: a reasoning region's text; ``cut``: a
    call's, region's or markup's start, with the calls; ``end``: a cut's rest, ending a
    region; ``cut-off``: the end of a region the reply ends inside); ``raw`` is the reply's
    text it covers, for a reset that makes it all reasoning."""

    kind: str
    raw: str
    calls: tuple[ToolCall, ...] = ()


class StreamSalvager:
    """Salvage over a streamed reply: ``feed`` each delta, then ``close``.

    The concatenated ``TextDelta`` texts equal ``salvage_text(reply, allowed).content``, the
    concatenated ``ReasoningDelta`` texts its ``reasoning``, and the ``ToolCallReady`` calls
    its ``calls``, in order, for every way of cutting the reply (same masks, allowlist,
    dialects, model, reasoning_calls and limits; spans are offsets in the whole reply).

    When events come: with ``model=`` (a ``ModelProfile`` or its name) each call the moment
    it closes and the code mask can no longer change its verdict, text and reasoning as soon
    as they are certain. Without a profile, while a reasoning close that can force reasoning
    open is enabled (the default: ``mask_reasoning=True``), a lone ``</think>`` later would
    make everything before it reasoning, so every event waits for ``close()``; with
    ``mask_reasoning=False`` (or only pairs that cannot force-open) events come as certain.
    There is no ``max_input_chars``: memory is bounded by ``max_call_chars`` per candidate
    (plus what the rules above must hold), so equality is for replies within
    ``salvage_text``'s input limit. ``feed`` after ``close`` raises ``RuntimeError``.

    >>> s = StreamSalvager(["web_search"], model="qwen3")
    >>> events = s.feed('<think>Search.</think>Sure. <tool_call>{"name": "web_search", ')
    >>> events += s.feed('"arguments": {"q": "x"}}</tool_call>')
    >>> [type(e).__name__ for e in events], events[0].text
    (['ReasoningDelta', 'TextDelta', 'TextDelta', 'ToolCallReady'], 'Search.')

    With an async model stream::

        async for chunk in model_stream:
            for event in salvager.feed(chunk):
                ...
        for event in salvager.close():
            ...
    """

    __slots__ = (
        "_after_closer",
        "_after_end",
        "_anchor",
        "_batch",
        "_call_i",
        "_calm",
        "_closed",
        "_closers",
        "_content",
        "_cut_i",
        "_deferred",
        "_deferred_len",
        "_entries",
        "_fed",
        "_gated",
        "_held",
        "_looked",
        "_max_input",
        "_may_reset",
        "_over",
        "_pass",
        "_plain",
        "_prefix",
        "_recent",
        "_rel",
        "_resets",
        "_spent",
        "_spent_closing",
        "_table",
        "_tail",
        "_thought",
        "_tried",
        "_until",
        "_wait_at",
    )

    def __init__(
        self,
        allowed: Collection[str] | AnyTool,
        *,
        dialects: Sequence[str | Dialect] | None = None,
        mask_fences: bool = True,
        mask_reasoning: bool = True,
        model: ModelProfile | str | None = None,
        reasoning_calls: str = "refuse",
        max_call_chars: int | None = None,
        max_depth: int | None = None,
        max_input_chars: int | None = None,
        limits: Limits | None = None,
    ) -> None:
        bounds = limits_with(
            limits, max_input_chars=max_input_chars, max_call_chars=max_call_chars, max_depth=max_depth
        )
        config = config_of(dialects, mask_fences, mask_reasoning, model, reasoning_calls)
        # Past `max_input_chars` in all, salvage stops: what was not yet released, and all
        # that follows, passes through as text (calls already released stand).
        self._max_input = bounds.max_input_chars
        self._fed = 0
        self._over = False
        self._pass = SalvagePass(
            config,
            allowed,
            max_depth=bounds.max_depth,
            max_call_chars=bounds.max_call_chars,
            max_name_chars=bounds.max_name_chars,
        )
        # Can a reasoning close with nothing open still make all before it reasoning? Then
        # everything is held from the start (see the class docstring).
        self._may_reset = len(config.unforced) < len(config.reasoning)
        self._rel = 0  # the text before this offset has been handed on (released or held)
        self._cut_i = 0  # cuts (and calls) of the pass handed on
        self._call_i = 0
        self._resets = 0
        self._tried = 0  # the text's length when the pass last looked
        self._wait_at = -1  # the waiting candidate's start, and what its re-reads cost so far
        self._spent = 0
        self._after_end = False
        # Re-reads at the waiting candidate's own closers (``Dialect.closers``): a budget of
        # their own, so `>` and `}` in its values never delay the read at its closer; the
        # text's last characters (a closer may be split across deltas); and whether the last
        # non-space delta held a closer (a reader may want the next non-space after it).
        self._spent_closing = 0
        self._tail = ""
        self._after_closer = False
        self._closers: tuple[str, ...] | None = None
        self._held: list[_Held] | None = [] if self._may_reset else None
        # While everything is held, the deltas themselves (none fed to the pass yet): see the
        # module docstring. None once they were handed on, or when nothing is held.
        self._deferred: list[str] | None = [] if self._may_reset else None
        self._deferred_len = 0
        self._closed = False
        # The one content rule and the one reasoning rule (``_base``), fed as the text is decided.
        self._content = ContentBuilder()
        self._thought = ReasoningBuilder()
        # Plain text (see `feed`): may the next delta pass the pass by, the text after `_rel`
        # (anchor-free, unreleased: a marker may start there), the deltas not yet handed to
        # the pass and how much was handed so far.
        self._table = table = _plain_table(config.finder)
        self._anchor = table.anchor  # read per delta
        # Whether the leads are known and behind, so that a delta holding anchor characters
        # may still be plain (``_quiet``), and the last characters fed (the searches'
        # lookbehinds reach into them).
        self._gated = False
        self._recent = ""
        # The unreleased text (`_prefix` and the batch) holds no anchor character: then an
        # anchor-free delta is plain at a glance (one C search of it, as ever).
        self._calm = True
        self._plain = not config.opened  # a reply that begins in reasoning is no plain text
        self._prefix = ""
        self._batch: list[str] = []
        self._until = min(self._max_input, _BATCH)  # plain text passes by up to here in all
        self._entries = 0
        self._looked = 0

    @property
    def work(self) -> Work:
        """Work counted so far (markers handled, reader calls, characters handed to readers
        and copied into the window): what linear-time tests assert on, never a clock."""
        return self._pass.work

    @property
    def settled(self) -> int:
        """How much of the reply, in characters from its start, is decided for good: every
        call that starts before this offset has been released as ``ToolCallReady``, and no
        call released later starts before it. What lets a caller pass the text it was fed on
        as written (less the calls) as soon as it is certain. 0 while events are held for a
        lone reasoning close (see the class docstring); the whole reply after ``close()``.
        O(1)."""
        if self._closed or self._over:
            return self._fed
        if self._held is not None:
            return 0
        # Plain text passed by is released up to a marker's possible start (`_prefix`); after
        # the pass, everything before `_rel` has been handed on, and nothing is held.
        return self._fed - len(self._prefix) if self._plain else self._rel

    @property
    def quiet_room(self) -> int:
        """How many more characters ``feed`` will take and answer with no event, whatever they
        are: while every event is held for a lone reasoning close (see the class docstring),
        the room left before ``max_input_chars`` (past it, the held text is released); 0 when
        events come as they are certain, and after ``close()``. Lets a caller that has nothing
        to do before the reply ends feed it once instead of once per delta. O(1)."""
        if self._held is None or self._closed or self._over:
            return 0
        return max(0, self._max_input - self._fed - self._deferred_len)

    @property
    def entries(self) -> int:
        """How many times ``feed`` and ``close`` entered the pass (plain text does not)."""
        return self._entries

    @property
    def looked(self) -> int:
        """Characters the stream itself looked at to let plain text pass the pass by."""
        return self._looked

    def feed(self, delta: str) -> list[Event]:
        """The events that ``delta`` makes certain. O(len(delta)) amortised.

        Plain text, the common delta, passes the pass by: when the pass waits on nothing and
        the unreleased text holds no anchor character (``_step`` decides), a delta without one
        can hold no marker nor complete one, so what the pass would release is known at once:
        all of it but a trailing prefix of a marker (``call`` of ``call:``). That costs one
        search of the delta in C, a look at its last ``_Plain.longest`` characters and a
        ``TextDelta``; the deltas are handed to the pass (window, code mask) once per
        ``_BATCH`` characters, never re-read by it. Any other delta enters the pass.

        While every event is held for a lone reasoning close (the class docstring), a delta
        is only kept, O(1), until ``close()`` or the input bound: the pass then reads the
        kept text (``_undefer``).
        """
        deferred = self._deferred
        if deferred is not None and type(delta) is str:
            if self._fed + self._deferred_len + len(delta) <= self._max_input:
                deferred.append(delta)
                self._deferred_len += len(delta)
                return []
            return self._undefer() + StreamSalvager.feed(self, delta)  # past the bound: `_overflow`
        if type(delta) is str:  # the last characters fed, for `_quiet`'s lookbehinds
            self._recent = self._recent[-self._table.context :] + delta
        if self._plain and type(delta) is str:
            fed = self._fed + len(delta)
            if fed > self._until:  # a batch's worth: hand it to the pass first
                self._give()
                if fed > self._until:
                    return self._feed(delta)
            if (self._calm and self._anchor(delta) is None) or self._quiet(delta):
                if not delta:
                    return []
                self._tail = ""  # no candidate waits: no closer of one to find across deltas
                self._fed = fed
                self._batch.append(delta)
                if self._held is not None:  # released to the held text per batch (`_give`)
                    return []
                return self._release(self._prefix + delta)
        return self._feed(delta)

    def _undefer(self) -> list[Event]:
        """The kept deltas, fed in pieces of about ``_BATCH`` characters (the pass's window
        stays as small as for any stream); from here on deltas are fed as they come.
        O(their length): each character joined once, one feed per piece. The base class's
        ``feed``: a subclass has seen each delta already."""
        deferred, self._deferred = self._deferred, None
        if not deferred:
            return []
        self._deferred_len = 0
        events: list[Event] = []
        piece: list[str] = []
        size = 0
        for delta in deferred:
            piece.append(delta)
            size += len(delta)
            if size >= _BATCH:
                events += StreamSalvager.feed(self, "".join(piece))
                piece, size = [], 0
        if piece:
            events += StreamSalvager.feed(self, "".join(piece))
        return events

    def _quiet(self, delta: str) -> bool:
        """Can ``delta`` pass the pass by? A marker it holds or completes starts at most
        ``max_len`` characters before it, and not before the text the pass left undecided, so
        the search covers those and ``delta`` (with the
        characters before them for the lookbehinds: ``_recent``): plain when they hold no
        anchor character, or, the leads known and behind (``_gated``), no place where a
        marker may start, as the scan's own searches would find it. Its end is then held as
        far as a marker may begin there (``_hold``). One or two C searches: O(len(delta) +
        context)."""
        recent = self._recent
        # Not before the text the pass left undecided (`_rel`): what lies before it is handled.
        handled = self._rel - (self._fed + len(delta) - len(recent))
        start = max(0, len(recent) - len(delta) - self._table.reach, handled)
        if self._anchor(recent, start) is None:
            return True
        quiet = self._gated and self._table.possible(recent, start) is None
        self._calm = self._calm and not quiet  # unreleased text with an anchor now, if quiet
        return quiet

    def _feed(self, delta: str) -> list[Event]:
        if self._closed:
            raise RuntimeError("StreamSalvager.feed() after close()")
        if not isinstance(delta, str):
            raise TypeError(f"feed takes a str, not {type(delta).__name__}")

        if self._over:
            self._fed += len(delta)  # `settled` is all that was fed: a caller passes it all on
            return [TextDelta(delta)] if delta else []
        self._give()  # the plain text before it first: the pass reads the text in order
        self._plain = False
        self._fed += len(delta)
        if self._fed > self._max_input:
            return self._overflow(delta)
        run = self._pass
        scan = run.scan
        if run.mask is not None:
            run.mask.feed(delta)
        run.extend(delta)
        self._until = min(self._max_input, self._fed + _BATCH)
        tail = self._tail
        self._tail = (tail + delta)[-_CLOSER_TAIL:] if len(delta) < _CLOSER_TAIL else delta[-_CLOSER_TAIL:]
        if run.blocked is not None and not (run.settling and delta):
            if run.blocked != self._wait_at:  # a new candidate waits: its own budgets
                self._wait_at, self._spent, self._spent_closing = run.blocked, 0, 0
                self._after_closer = False
                self._closers = run.waiting_closers()
            waited = self._tried - run.blocked
            span = scan.end - run.blocked
            after_end, self._after_end = self._after_end, _ends_after(delta, self._after_end)
            bound = _GROWTH * span + _END_BUDGET
            at_closer = False
            if self._closers is not None:
                closing = _closer_in(tail, delta, self._closers)
                blank = not delta.strip()
                at_closer = (closing or (self._after_closer and not blank)) and self._spent_closing <= bound
                self._after_closer = closing or (self._after_closer and blank)
            if (
                _GROWTH * (scan.end - self._tried) < waited
                and span <= run.limits[1]
                and not at_closer
                and not (self._spent <= bound and (after_end or _may_end(delta)))
            ):
                return []  # not worth re-reading yet: see the module docstring
            if at_closer:
                self._spent_closing += span
            else:
                self._spent += span
        return self._step(final=False)

    def close(self) -> list[Event]:
        """The remaining events: the reply is complete. Idempotent after the first call."""
        if self._closed:
            return []
        if self._deferred is not None:  # nothing was handed to the pass: the reply is whole
            return self._close_whole()
        self._closed = True
        self._plain = False
        if self._over:
            return []
        self._give()
        return self._step(final=True)

    def _close_whole(self) -> list[Event]:
        """``close()`` of a reply every delta of which was kept: the pass reads it once, as
        ``salvage_text`` does (one final step, the code mask asked only where a marker is;
        text that can hold no marker is its own content at once). O(what ``salvage_text``
        costs on it)."""
        text = "".join(self._deferred or ())
        self._deferred, self._deferred_len = None, 0
        self._closed = True
        self._plain = False
        self._fed = len(text)
        if markerless(text, self._pass.config):
            self._held = None
            return [TextDelta(text)] if text else []
        run = self._pass
        if run.mask is not None:
            run.mask.feed(text)
        run.extend(text)
        return self._step(final=True)

    def _hold(self, text: str) -> int:
        """How many characters at the end of anchor-free ``text`` may begin a marker: what
        ``partial_start`` answers, from the few prefixes that hold no anchor. O(longest)."""
        ends = self._table.ends
        if ends is None or self._anchor(text, max(0, len(text) - self._table.context)) is not None:
            # A prefix holding an anchor may end the text too (plain text with anchors).
            return len(text) - self._pass.config.finder.partial_start(text, 0)
        ending = ends.get(text[-1:].lower())
        if ending is not None:
            for prefix in ending:
                if text[-len(prefix) :].lower() == prefix:
                    return len(prefix)
        return 0

    def _release(self, text: str) -> list[Event]:
        """Release plain ``text`` (the tail and a delta) as the pass would (see ``feed``):
        O(len(text))."""
        hold = self._hold(text)
        if hold:
            text, self._prefix = text[:-hold], text[-hold:]
        else:
            self._prefix = ""
        if not text:
            return []
        out = self._content.text(text)
        return [TextDelta(out)] if out else []

    def _give(self) -> None:
        """Hand the plain deltas passed by to the pass, as one piece: the window and the code
        mask take them (no marker is in them to look for), and the pass moves on to the text
        it has released. O(len(batch) + window)."""
        if not self._batch:
            return
        more = "".join(self._batch)
        # Looked at per delta: each of its characters once (the anchor search), its tail and
        # last `longest` characters once more at most.
        self._looked += len(more) + 2 * self._table.longest * len(self._batch)
        self._batch.clear()
        if self._held is not None:  # held text: split once per batch, not per delta
            text = self._prefix + more
            hold = self._hold(text)
            if len(text) > hold:
                self._held.append(_Held("text", text[: len(text) - hold]))
            self._prefix = text[len(text) - hold :]
        self._calm = self._anchor(self._prefix) is None
        run = self._pass
        scan = run.scan
        if run.mask is not None:
            run.mask.feed(more)
        scan.extend_plain(more)
        self._until = min(self._max_input, self._fed + _BATCH)
        self._tried = scan.end
        self._rel = scan.end - len(self._prefix)
        run.pos = max(run.pos, self._rel)
        if run.mask is not None:
            run.mask.catch_up(run.pos)
        scan.trim(min(self._rel, run.pos - LOOKBEHIND))

    def _overflow(self, delta: str) -> list[Event]:
        """The input outgrew ``max_input_chars``: release everything held as text, stop salvaging."""
        self._over = True
        scan = self._pass.scan
        scan.sync()
        out = [self._content.finish()]  # whitespace waiting from before the held text, if any
        out.extend(item.raw for item in self._held or ())
        self._held = None
        out.append(scan.text[self._rel - scan.base :])
        out.append(delta)
        text = "".join(out)
        return [TextDelta(text)] if text else []

    def _step(self, final: bool) -> list[Event]:
        run = self._pass
        scan = run.scan
        self._entries += 1
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
        if run.hold_from is not None:  # calls inside open reasoning, taken if it never closes
            limit = min(limit, run.hold_from)
        events: list[Event] = []
        text, base = scan.text, scan.base
        cuts = run.cuts
        if run.resets != self._resets:
            # A reasoning close with nothing open: all before it is reasoning (the pass's
            # first cut now), and the calls before it are no calls. Nothing was released.
            self._resets = run.resets
            held = self._held or []
            first = cuts[0]
            before = "".join(item.raw for item in held) + text[self._rel - base : first.inner_end - base]
            self._held = [
                _Held("cut", ""),
                _Held("reason", before),
                _Held("end", text[first.inner_end - base : first.end - base]),
            ]
            self._content, self._thought = ContentBuilder(), ReasoningBuilder()
            self._rel, self._cut_i, self._call_i = first.end, 1, 0
        while self._cut_i < len(cuts) and cuts[self._cut_i].start < limit:
            s, e, inner_s, inner_e = cuts[self._cut_i]
            self._cut_i += 1
            rel = self._rel
            if rel <= s:  # else: an open region handed on in part (below), now closed
                self._hand_on(_Held("text", text[rel - base : s - base]), events)
                calls: list[ToolCall] = []
                while self._call_i < len(run.calls) and run.calls[self._call_i].span == (s, e):
                    calls.append(run.calls[self._call_i])
                    self._call_i += 1
                self._hand_on(_Held("cut", text[s - base : inner_s - base], tuple(calls)), events)
                rel = inner_s
            self._hand_on(_Held("reason", text[rel - base : inner_e - base]), events)
            # A region the reply ends inside (no close marker) keeps its trailing whitespace.
            cut_off = final and inner_e == e == scan.end and inner_e > inner_s
            self._hand_on(_Held("cut-off" if cut_off else "end", text[max(rel, inner_e) - base : e - base]), events)
            self._rel = e
        mode = run.mode
        if limit > self._rel:
            rel = self._rel
            if mode is not None:  # open reasoning: its text so far is reasoning
                start, inner = min(mode.start, limit), min(mode.inner, limit)
                if rel <= start:  # the region's start is handed on once, as a cut
                    self._hand_on(_Held("text", text[rel - base : start - base]), events)
                    self._hand_on(_Held("cut", text[start - base : inner - base]), events)
                elif rel < inner:
                    self._hand_on(_Held("cut", text[rel - base : inner - base]), events)
                self._hand_on(_Held("reason", text[max(rel, inner) - base : limit - base]), events)
            else:
                self._hand_on(_Held("text", text[rel - base : limit - base]), events)
            self._rel = limit
        if self._held is not None and final:
            held, self._held = self._held, None  # nothing can clear these calls any more
            for item in held:
                self._emit(item, events)
        if final:
            _text_event(self._content.finish(), events)
        else:
            if run.mask is not None:  # the code mask reads (and then forgets) complete lines
                run.mask.catch_up(run.pos if run.blocked is None else run.blocked)
            scan.trim(
                min(self._rel, run.pos) - LOOKBEHIND
                if run.hold_from is not None
                else min(self._rel, run.pos - LOOKBEHIND)
            )
            # Plain text may pass the pass by (see `feed`) while nothing waits, no reasoning
            # is open and the text not released holds no anchor: then no marker is pending in
            # it (each holds its anchor, and the scan returns every one before what is
            # released), so only a prefix of one without its anchor can be there. O(max_len).
            rest = scan.text[self._rel - scan.base :]
            self._gated = scan.leads_behind(self._rel)
            self._calm = self._table.anchor(rest) is None
            self._plain = (
                run.blocked is None
                and mode is None
                and (self._calm or (self._gated and self._table.possible(scan.text, self._rel - scan.base) is None))
            )
            self._prefix = rest
        return _merged(events)

    def _hand_on(self, item: _Held, events: list[Event]) -> None:
        if not item.raw and item.kind in ("text", "reason"):
            return
        if self._held is not None:
            self._held.append(item)
        else:
            self._emit(item, events)

    def _emit(self, item: _Held, events: list[Event]) -> None:
        """Release one piece through the builders: O(len(item.raw))."""
        kind = item.kind
        if kind == "text":
            _text_event(self._content.text(item.raw), events)
        elif kind == "reason":
            out = self._thought.text(item.raw)
            if out:
                events.append(ReasoningDelta(out))
        elif kind == "cut":
            _text_event(self._content.cut(), events)
            events.extend(ToolCallReady(c) for c in item.calls)
        elif kind == "cut-off":
            out = self._thought.cut_off()
            if out:
                events.append(ReasoningDelta(out))
        else:
            self._thought.close()


def _text_event(text: str, events: list[Event]) -> None:
    if text:
        events.append(TextDelta(text))


def _merged(events: list[Event]) -> list[Event]:
    """Adjacent text events of one kind as one event. O(len(events) + their text)."""
    if len(events) < 2:
        return events
    out: list[Event] = []
    i, n = 0, len(events)
    while i < n:
        ev = events[i]
        j = i + 1
        if isinstance(ev, TextDelta | ReasoningDelta):
            kind = type(ev)
            while j < n and type(events[j]) is kind:
                j += 1
            if j > i + 1:
                ev = kind("".join(e.text for e in events[i:j] if not isinstance(e, ToolCallReady)))
        out.append(ev)
        i = j
    return out
