"""The salvage engine: one pass over a reply, masks and dialect readers, in text order.

``SalvagePass`` holds the whole state of a pass, so ``salvage_text`` runs it once over a
complete text and ``StreamSalvager`` runs the same pass over a growing text. Work per pass:
the marker scan is O(A·n) (see ``_scan``); each marker is popped once; each reader is linear
in what it reads and readers never overlap except after a refusal (then the next candidate
starts after the refused marker, and refused spans are bounded by the reader's failure
position), so a complete pass is O(n) for a fixed set of dialects.

The constant is bounded too, on every hostile family (runs of markers, openers, fences,
quotes; ``tests/property/test_work_per_char.py``): at most 25 profile events (Python and C
calls) a character whole, 45 in a stream of 16-character deltas, and 450 a delta beyond the
whole reply's work (entering the pass for a delta holding a marker character; re-reading a
candidate a delta's end cut). An event is 500-750 instructions (``benchmarks/bench_work.py
--instructions``): the dearest families, runs of broken candidates, cost about 100 Python
calls a candidate, reader and decoder included.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Final

from .._args import check_nesting
from .._callshape import WRAPPER_DEPTH
from .._errors import ArgumentError
from .._limits import DEFAULT_LIMITS, Limits, limits_with
from .._names import NameTable
from .._safe_text import exact_str
from .._types import Rejection, RejectReason, SalvageResult, ToolCall
from ._base import (
    ANY_TOOL,
    LOOKBEHIND,
    NEED_MORE,
    AnyTool,
    Dialect,
    Found,
    NeedMore,
    ReadContext,
    build_content,
    build_fields,
    offered_name,
    salvaged_call,
    skip_ws_match,
)
from ._marks import Cut, Hit, InReasoning, Kind, Mode, Role, Work
from ._mask import (
    ANSWER_OPEN,
    CHANNEL_CLOSE,
    CHANNEL_MARKUP,
    CHANNEL_OPEN,
    DEFAULT_REASONING,
    MAX_TAG_TAIL,
    TAG_SPACES,
    CodeMask,
    markup_role,
    tag_name,
)
from ._profiles import ModelProfile, model_profile
from ._scan import MarkerFinder

# A reason's member by its value: a look-up in C (calling the enum runs two Python frames,
# `EnumType.__call__` and `__new__`, per rejection).
_REASONS: Final = {reason.value: reason for reason in RejectReason}

__all__ = [
    "DEFAULT_MAX_CALL_CHARS",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_INPUT_CHARS",
    "END_STABLE",
    "REJECTION_TEXT_CHARS",
    "SalvageConfig",
    "SalvagePass",
    "build_content",
    "config_for",
    "config_of",
    "run_whole",
    "salvage_reply",
    "salvage_text",
]

# The defaults, for readers of this module; `Limits` is their one source.
DEFAULT_MAX_INPUT_CHARS = DEFAULT_LIMITS.max_input_chars
DEFAULT_MAX_CALL_CHARS = DEFAULT_LIMITS.max_call_chars
DEFAULT_MAX_DEPTH = DEFAULT_LIMITS.max_depth
# A Rejection quotes at most this much of its candidate (its span gives the true extent).
REJECTION_TEXT_CHARS = 1_000
# First prefix probed for a candidate that may outgrow max_call_chars (see SalvagePass._read).
_PROBE_CHARS = 256


@dataclass(frozen=True, slots=True)
class SalvageConfig:
    """Dialects, masks and the marker table they compile to; built once and cached."""

    dialects: tuple[Dialect, ...]
    mask_fences: bool
    mask_reasoning: bool
    finder: MarkerFinder
    reasoning: tuple[tuple[str | None, str], ...]
    # Per pair: may a close with no opener mean the reply began inside reasoning? Not for a
    # close shared with other messages (harmony's `<|end|>` ends every message).
    forced_open: tuple[bool, ...] = ()
    # The pairs that cannot force-open: a pass counts them as seen from the start.
    unforced: frozenset[int] = frozenset()
    # A model profile's convention: its template opens pair 0, so the reply begins inside it.
    opened: bool = False
    # A call inside open reasoning: "refuse" (an `in-reasoning` rejection when the reasoning
    # never closes) or "take" (the call ends the reasoning there, as engines do).
    take: bool = False
    # A model profile named the dialects: a call closed by its wrapper's closer is final
    # (``ReadContext.decided``).
    decided: bool = False
    # Where a reasoning or channel marker may start (one C-level search over the table's
    # non-dialect markers, ``MarkerFinder.possible``): a region a reader calls markup ends
    # before one, so that no reader's reading hides it from the reasoning grammar.
    aside: Callable[[str, int, int], re.Match[str] | None] | None = None


def _resolve_dialects(dialects: Sequence[str | Dialect] | None) -> tuple[Dialect, ...]:
    from ._registry import BUILTIN, by_name  # the table of built-ins imports every family

    if dialects is None:
        return BUILTIN
    out: list[Dialect] = []
    for d in dialects:
        out.append(by_name(d) if isinstance(d, str) else d)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _config(
    dialects: tuple[Dialect, ...],
    mask_fences: bool,
    mask_reasoning: bool,
    gated: bool = True,
    *,
    profile: ModelProfile | None = None,
    take: bool = False,
) -> SalvageConfig:
    """``gated=False`` hands every marker occurrence to its readers, ignoring the dialects'
    ``Gate``s: the same answers by the gates' contract (tested), only slower. With a
    ``profile`` its reasoning pairs replace the defaults, and no close forces reasoning open
    (the profile says whether its template opens reasoning: ``opened``)."""
    entries: list[tuple[str, Role]] = []
    if mask_reasoning:
        # Markup first: where it starts with a dialect's marker (`<|end|>`), it is taken out.
        entries.extend((m, Role(Kind.MARKUP, tail=markup_role(m))) for m in CHANNEL_MARKUP)
    pairs: list[tuple[str | None, str]] = []
    forced: list[bool] = []
    if mask_reasoning:
        # A dialect's pair is (open, close) or (open, close, forced_open); see Dialect.
        base = DEFAULT_REASONING if profile is None else profile.reasoning
        for entry in (*base, *(p for d in dialects for p in getattr(d, "reasoning", ()))):
            pair = (entry[0], entry[1])
            if pair not in pairs:
                pairs.append(pair)
                forced.append(profile is None and (bool(entry[2]) if len(entry) > 2 else True))
        for i, (open_, close) in enumerate(pairs):
            if open_ is not None:
                entries.append((open_.lower(), Role(Kind.REASON_OPEN, pair=i)))
                name = tag_name(open_.lower())
                if name is not None and not open_.startswith("</"):
                    entries.extend((f"<{name}{c}", Role(Kind.REASON_OPEN, pair=i, tail="attrs")) for c in TAG_SPACES)
            entries.append((close.lower(), Role(Kind.REASON_CLOSE, pair=i)))
            name = tag_name(close.lower())
            if name is not None and close.startswith("</"):
                entries.extend((f"</{name}{c}", Role(Kind.REASON_CLOSE, pair=i, tail="space")) for c in TAG_SPACES)
    # Dialect markers last: a reasoning close that is also a dialect's marker (harmony's
    # `<|end|>`) closes the reasoning before the dialect reads it.
    by_marker: dict[str, list[Dialect]] = {}
    for d in dialects:
        for m in d.markers:
            by_marker.setdefault(m.lower(), []).append(d)
    entries.extend((m, Role(Kind.DIALECT, tuple(ds))) for m, ds in by_marker.items())
    unforced = frozenset(i for i, f in enumerate(forced) if not f)
    finder = MarkerFinder(entries, gated)
    asides = [e for e in entries if e[1].kind is not Kind.DIALECT]
    opened = bool(profile is not None and profile.opened and pairs)
    return SalvageConfig(
        dialects,
        mask_fences,
        mask_reasoning,
        finder,
        tuple(pairs),
        tuple(forced),
        unforced,
        opened,
        take,
        decided=profile is not None,
        aside=MarkerFinder(asides).possible if asides else None,
    )


def config_of(
    dialects: Sequence[str | Dialect] | None,
    mask_fences: bool = True,
    mask_reasoning: bool = True,
    model: ModelProfile | str | None = None,
    reasoning_calls: str = "refuse",
) -> SalvageConfig:
    """``config_for`` with a model profile (by name or value) and the ``reasoning_calls``
    choice: the profile's dialects unless ``dialects`` is given, and its reasoning convention."""
    if reasoning_calls not in ("refuse", "take"):
        raise ValueError(f"reasoning_calls must be 'refuse' or 'take', not {reasoning_calls!r}")
    if model is None and reasoning_calls == "refuse":
        return config_for(dialects, mask_fences, mask_reasoning)
    profile = model_profile(model) if isinstance(model, str) else model
    if profile is not None and not isinstance(profile, ModelProfile):
        raise TypeError(f"model must be a ModelProfile, a profile name or None, not {type(model).__name__}")
    chosen = dialects if dialects is not None or profile is None else profile.dialects
    return _config(
        _resolve_dialects(chosen),
        bool(mask_fences),
        bool(mask_reasoning),
        True,
        profile=profile,
        take=reasoning_calls == "take",
    )


_DEFAULT_CONFIGS: dict[tuple[bool, bool], SalvageConfig] = {}
_USUAL = (True, True)  # both masks: the key of the usual call, not built per call


def config_for(
    dialects: Sequence[str | Dialect] | None, mask_fences: bool = True, mask_reasoning: bool = True
) -> SalvageConfig:
    """The compiled configuration; the default (every built-in dialect) skips even the cache
    look-up's hashing of forty dialects."""
    if dialects is None:
        key = _USUAL if mask_fences is True and mask_reasoning is True else (bool(mask_fences), bool(mask_reasoning))
        config = _DEFAULT_CONFIGS.get(key)
        if config is None:
            config = _DEFAULT_CONFIGS[key] = _config(_resolve_dialects(None), *key)
        return config
    chosen = tuple(dialects)
    if all(type(d) is str for d in chosen):  # built-ins by name: hashing names is cheaper
        return _named_config(chosen, bool(mask_fences), bool(mask_reasoning))
    return _config(_resolve_dialects(chosen), bool(mask_fences), bool(mask_reasoning))


@functools.lru_cache(maxsize=64)
def _named_config(names: tuple[str, ...], mask_fences: bool, mask_reasoning: bool) -> SalvageConfig:
    return _config(_resolve_dialects(names), mask_fences, mask_reasoning)


@functools.lru_cache(maxsize=256)
def _name_table(names: tuple[str, ...]) -> NameTable:
    if not all(isinstance(n, str) for n in names):
        raise TypeError("allowed must be a collection of tool names (str) or ANY_TOOL")
    return NameTable(names)


def _within_depth(arguments: object, max_depth: int) -> bool:
    """Whether salvaged ``arguments`` nest at most ``max_depth`` levels: the depth limit of a
    native call's arguments (``check_nesting``, the one walk), whatever wrapped them in the
    reply. O(elements), iterative. Readers refuse non-finite numbers themselves."""
    try:
        check_nesting(arguments, max_depth, finite=False)
    except ArgumentError:
        return False
    return True


class InCallCode:
    """A blocked marker's pending state: the mask has said the marker lies in code that an
    earlier accepted call's own text opened, and the reader has yet to decide. A call there is
    refused (``in-code``), never passed as text, so the stream waits for the reader."""

    __slots__ = ()


IN_CALL_CODE: Final = InCallCode()

# What a blocked dialect marker's try left for the next (``SalvagePass._marker``): the reader's
# settled answer waiting for the mask, NEED_MORE (both undecided), IN_CALL_CODE (the mask
# decided, the reader not), or nothing.
Pending = tuple[Dialect, Found] | NeedMore | InCallCode | None


def _allowlist(allowed: Collection[str] | AnyTool | NameTable) -> NameTable | None:
    if type(allowed) is not list:  # a list, the usual allowlist, goes straight to the table
        if isinstance(allowed, AnyTool):
            return None
        if isinstance(allowed, NameTable):
            return allowed
        if isinstance(allowed, str):  # one name, not a collection of its letters
            return _name_table((allowed,))
    try:
        return _name_table(tuple(allowed))  # the same offered names are normalised once, not per reply
    except TypeError:  # not iterable, an unhashable item, or not all str
        raise TypeError("allowed must be a collection of tool names (str) or ANY_TOOL") from None


class SalvagePass:
    """The state of one pass over a (possibly growing) text. See module docstring for cost.

    Streaming (``_stream``) feeds it with ``extend`` and ``advance(final=False)``; positions
    are always offsets in the whole text, while the scan may hold only a window of it
    (``scan.base`` on). Readers and mask checks are handed the window and rebased offsets.
    """

    __slots__ = (
        "_ctx_at",
        "_ctx_cache",
        "_pending",
        "_retry",
        "blocked",
        "calls",
        "channel_text",
        "config",
        "cuts",
        "floor",
        "handed",
        "hold_from",
        "inside",
        "inside_calls",
        "limits",
        "markers",
        "mask",
        "mode",
        "names",
        "pos",
        "reads",
        "rejected",
        "resets",
        "scan",
        "seen",
        "settling",
        "skip_until",
        "unread",
    )

    def __init__(
        self,
        config: SalvageConfig,
        allowed: Collection[str] | AnyTool | NameTable,
        text: str = "",
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_call_chars: int = DEFAULT_MAX_CALL_CHARS,
        max_name_chars: int = DEFAULT_LIMITS.max_name_chars,
    ) -> None:
        self.config = config
        self.names = _allowlist(allowed)
        self.scan = config.finder.scan(text)
        self.limits = (max_depth, max_call_chars, max_name_chars)
        self.pos = 0
        self.mode: Mode = None
        # Markdown code (``_mask``): read only when a marker needs its answer.
        self.mask = CodeMask(max_call_chars) if config.mask_fences else None
        # What the content leaves out, in text order: calls, reasoning regions, markup.
        self.cuts: list[Cut] = []
        self.calls: list[ToolCall] = []
        self.rejected: list[Rejection] = []
        # Rejections of candidates inside the open reasoning: reported if it never closes.
        self.inside: list[Rejection] = []
        # Under "take": the candidates inside the open reasoning that would be calls, and the
        # first one's start (a stream holds from there: they are taken if it never closes).
        self.inside_calls: list[tuple[Dialect, int, int, Found]] = []
        self.hold_from: int | None = None
        # Reasoning pairs seen so far; a pair that cannot force-open counts as seen from the start.
        self.seen: set[int] = set(config.unforced)
        if config.opened:  # the template opened the profile's first pair: the reply begins inside
            self.mode = InReasoning(0, 0, 0)
        self.floor = 0
        # Dialect markers before this were read by a refused candidate: not candidates again
        # (that keeps refusals linear), but mask markers there still count (see `_take`).
        self.skip_until = 0
        # Inside a content-only chat channel (harmony's final or preamble message): its text is
        # the answer, never a source of calls, until the message ends (``<|end|>``, ``<|return|>``).
        self.channel_text = False
        self._ctx_cache: ReadContext | None = None
        self._ctx_at: int | None = None  # the cached context's first_nonspace, once known
        self.blocked: int | None = None  # start of a marker waiting for more text
        self._retry: Hit | None = None
        self._pending: Pending = None  # see `_marker`
        # Per marker role, the last marker read as no call since the last outcome (see `_cut_off`).
        self.unread: dict[int, Hit] = {}
        self.settling = False  # blocked on a decided candidate that reaches the text's end
        self.resets = 0  # forced-open reasoning closes taken (each cleared calls and cuts)
        # Cost counters for linear-time tests (see ``work``): plain ints, one add each.
        self.markers = 0
        self.reads = 0
        self.handed = 0

    @property
    def work(self) -> Work:
        """The work counted so far: markers handled, reader calls, characters handed to
        readers, characters copied into the window."""
        return Work(self.markers, self.reads, self.handed, self.scan.copied, 0 if self.mask is None else self.mask.work)

    @property
    def text(self) -> str:
        self.scan.sync()
        return self.scan.text

    def extend(self, more: str) -> None:
        self.scan.extend(more)

    def _ctx(self, final: bool, offset: int) -> ReadContext:
        """The readers' context for a window starting at ``offset``: one object per pass in
        practice (it changes only with ``final``, the window, or the first non-space)."""
        first = self.scan.first_nonspace
        ctx = self._ctx_cache
        if ctx is not None and ctx.final is final and first != -1 and self._ctx_at == first - offset:
            return ctx
        if first == -1:  # all whitespace so far
            first = self.scan.base + len(self.scan.text)
        self._ctx_at = first - offset if self.scan.first_nonspace != -1 else None
        # Payloads are read to the depth limit plus a wrapper's levels (a safety bound); the
        # arguments themselves are held to the limit exactly in `_take`.
        ctx = self._ctx_cache = ReadContext(
            final,
            self.limits[0] + WRAPPER_DEPTH,
            self.limits[1],
            first - offset,
            self.limits[2],
            self.config.decided,
            self.names,
        )
        return ctx

    def advance(self, final: bool) -> None:
        """Handle markers until the text ends or one needs more text (``blocked``).

        The code mask is asked about a dialect marker only when the reader's answer depends
        on it (``_marker``): most markers in ordinary Markdown are read and found to be no
        call, and classifying every line before them would cost more than all the reads.
        Inside open reasoning dialect markers are read too, but what they hold is no call
        (``_take``): it is reported if the reasoning never closes, or ends the reasoning
        under ``reasoning_calls="take"``."""
        self.blocked = None
        self.settling = False
        scan = self.scan
        scan.sync()
        while True:
            item = self._retry
            pending = self._pending
            retried = item is not None
            self._retry = self._pending = None
            if item is None:
                item = scan.pop(self.pos, final, self.skip_until)
                if item is None:
                    if final and self.unread:
                        self._cut_off()
                    if final and self.mode is not None:
                        self._unterminated()
                    return
            self.markers += 1
            s, marker, role = item
            kind = role.kind
            mode = self.mode
            if mode is not None:
                if kind is Kind.REASON_CLOSE and role.pair == mode.pair:
                    end = self._tail_end(s, marker, role, final)
                    if isinstance(end, NeedMore):
                        self._block(item, None)
                        return
                    if end is not None:
                        self._end_region(mode, s, end)
                elif (
                    kind is Kind.REASON_OPEN
                    and role.pair == mode.pair
                    and mode.inner == 0
                    and s == self.scan.first_nonspace
                ):
                    # The template opened reasoning and the reply opens it again first thing:
                    # one opener, its marker no reasoning.
                    end = self._tail_end(s, marker, role, final)
                    if isinstance(end, NeedMore):
                        self._block(item, None)
                        return
                    if end is not None:
                        self.mode = InReasoning(mode.pair, 0, end)
                        self.pos = max(self.pos, end)
                elif (
                    kind is Kind.MARKUP
                    and role.tail in (CHANNEL_OPEN, ANSWER_OPEN)
                    and mode.inner == 0
                    and s == self.scan.first_nonspace
                ):
                    # The template opened reasoning and the reply opens its answer first thing
                    # (Kimi K3's response block, a harmony final message): it skipped the
                    # reasoning, which ends empty here. The markup is handled as markup.
                    self._end_region(mode, s, s)
                    self._retry = item
                elif (
                    kind is Kind.DIALECT
                    and s >= self.skip_until
                    and s >= mode.inner
                    and not self._marker(item, final, retried, pending)
                ):
                    return
                continue
            if kind is Kind.DIALECT:
                if s < self.skip_until or self.channel_text:
                    continue
                if not self._marker(item, final, retried, pending):
                    return
                continue
            # A reasoning or markup marker asks the mask first: one in code is no marker.
            code = self._covers(s, final)
            if code is NEED_MORE:
                self._block(item, None)
                return
            if code and not self._in_call_code():
                self.pos = max(self.pos, s + 1)
                continue
            # Not code, or code only because an earlier call's own text opened it: then the
            # marker counts (it masks more: fail closed, as a dialect marker there is refused).
            if kind is Kind.MARKUP:
                self.cuts.append(Cut(s, s + len(marker), s, s))
                self.pos = s + len(marker)
                if role.tail == CHANNEL_OPEN:
                    self.channel_text = True
                elif role.tail == CHANNEL_CLOSE:
                    self.channel_text = False
                continue
            end = self._tail_end(s, marker, role, final)
            if isinstance(end, NeedMore):
                self._block(item, None)
                return
            if end is None:  # `<think` then no `>`: text
                self.pos = max(self.pos, s + 1)
                continue
            self.seen.add(role.pair)
            if kind is Kind.REASON_OPEN:
                self.mode, self.pos = InReasoning(role.pair, s, end), end
                continue
            if role.pair not in self.config.unforced:
                # A close with nothing open: the reply began inside reasoning, whatever
                # pairs came before (a quoted `<think>…</think>` is no reason to trust it).
                self.cuts.clear()
                self.calls.clear()
                self.rejected.clear()
                self.channel_text = False
                self.cuts.append(Cut(0, end, 0, s))
                self.floor = end
                self.resets += 1
            else:  # a close that cannot mean that (a profile's, harmony's `<|end|>`): markup
                self.cuts.append(Cut(s, end, s, s))
            self.pos = max(self.pos, end)

    def _tail_end(self, s: int, marker: str, role: Role, final: bool) -> int | NeedMore | None:
        """Where a reasoning marker at ``s`` ends: after the marker as tabled, or for a spelled
        tag (``<think type="plan">``, ``</think >``) after its ``>``; None when there is no
        ``>`` where one must be (the tag is text). O(MAX_TAG_TAIL)."""
        end = s + len(marker)
        tail = role.tail
        if not tail:
            return end
        scan = self.scan
        text, base = scan.text, scan.base
        i = end - base
        stop = min(len(text), i + MAX_TAG_TAIL)
        if tail == "space":
            j = skip_ws_match(text, i).end()
            j = min(j, stop)
        else:
            j = i
            while j < stop and text[j] not in "<>":
                j += 1
        if j < len(text) and j < stop:
            return base + j + 1 if text[j] == ">" else None
        if j >= i + MAX_TAG_TAIL or final:
            return None
        return NEED_MORE

    def _end_region(self, mode: InReasoning, s: int, end: int) -> None:
        """The open reasoning closes at ``s`` (its close marker ends at ``end``): one region;
        what was read inside it stays reasoning, unreported."""
        self.cuts.append(Cut(mode.start, end, mode.inner, s))
        self.inside.clear()
        self.inside_calls.clear()
        self.hold_from = None
        self.mode = None
        self.pos = max(self.pos, end)

    def _unterminated(self) -> None:
        """The text ended inside reasoning: it is reasoning to the end, and every candidate
        read inside it is reported (``in-reasoning`` for a call). Under "take" the reasoning
        ends at the first call instead, and the calls read from there are taken (markers
        other than calls after it stay text). O(candidates)."""
        mode = self.mode
        assert mode is not None
        end = self.scan.base + len(self.scan.text)
        taken, self.inside_calls = self.inside_calls, []
        self.hold_from = None
        self.mode = None
        stop = taken[0][1] if taken else end
        self.cuts.append(Cut(mode.start, stop, mode.inner, stop))
        self.rejected.extend(self.inside)
        self.inside.clear()
        for dialect, s, marker_end, found in taken:
            self._take(dialect, s, marker_end, found)
        self.pos = end

    def _covers(self, s: int, final: bool) -> bool | NeedMore:
        """Does offset ``s`` lie in Markdown code? Asked in increasing ``s`` (the mask's rule)."""
        mask = self.mask
        if mask is None:
            return False
        scan = self.scan
        return mask.covers(scan.text, scan.base, s, final)

    def _in_call_code(self) -> bool:
        """After a True ``_covers``: was that code opened inside an accepted call's text?"""
        return self.mask is not None and self.mask.in_call_code()

    def _refuse_in_code(
        self, s: int, marker_end: int, answer: tuple[Dialect, Found] | None, final: bool
    ) -> bool | NeedMore:
        """A call in code stays text: silently when it is an example shown in code. Refused
        as ``in-code`` instead (one rejection, as for any refused candidate: the dialect
        markers it spans are not read again) when it is no clean example:

        * the code was opened inside an earlier accepted call's own text (a fence line in a
          JSON string, ``~~~`` in a parameter): the call would run only where calls are read
          as opaque; the earlier call stands. O(1) amortised (``CodeMask.in_call_code``);
        * the code ends inside the call's own text, its last character in text (a backtick
          in an argument closing a code span that prose opened): the call straddles code and
          text, and keeping quiet would lose it with no word. O(its lines) (``reaches``).

        True when refused; NEED_MORE when the second depends on text not yet seen."""
        if answer is None or not answer[1].calls:
            return False
        dialect, found = answer
        end = max(found.end, marker_end)
        mask = self.mask
        assert mask is not None  # `_covers` said code
        if mask.doubt:  # code only because a limit was reached: say so
            self._reject(s, end, dialect, "too-large", found.calls[0].name or None)
            self._refused(marker_end, max(end, found.resume or 0))
            return True
        if not self._in_call_code():
            scan = self.scan
            inside = mask.reaches(scan.text, scan.base, end - 1, final)
            if inside is NEED_MORE:
                return NEED_MORE
            if inside:
                return False
        self._reject_in_code(s, marker_end, dialect, found)
        return True

    def _reject_in_code(self, s: int, marker_end: int, dialect: Dialect, found: Found) -> None:
        """The candidate of calls ``found`` at ``s`` refused as ``in-code``: one rejection, its
        dialect markers not read again."""
        end = max(found.end, marker_end)
        self._reject(s, end, dialect, "in-code", found.calls[0].name or None)
        self._refused(marker_end, max(end, found.resume or 0))

    def _marker(self, item: Hit, final: bool, retried: bool, pending: Pending) -> bool:
        """Read dialect marker ``item``; False when it needs more text (``blocked``).

        The reader reads first and the mask is asked only when the answer is a call, a
        rejection or a wait: a call in code is never taken (safety), a rejection in code is
        not reported, and a wait in code is no wait (the stream releases code as text). An
        answer of None needs no mask, and neither does a silent skip: it moves ``skip_until``
        whether its marker was in code or not (asking would classify every line before every
        data brace). The one difference from asking first is recall in a contrived text: a
        value read as data from inside code on into the text hides the markers it spans, as
        it already does when it starts in text; no call is ever taken from code.
        ``pending`` is what a stream's previous try left when the mask could not yet say: the
        reader's settled answer, kept so that only the mask is asked again (a long candidate
        is not re-read per delta), or ``NEED_MORE`` when the reader was undecided too."""
        s, marker, role = item
        marker_end = s + len(marker)
        checked = False  # the mask has said `s` is text
        in_call = pending is IN_CALL_CODE  # the mask has said: code an earlier call opened
        if pending is not None and not in_call:
            code = self._covers(s, final)
            if code is NEED_MORE:
                self._block(item, pending)
                return False
            if code and pending is NEED_MORE and self._in_call_code():
                in_call = True  # the reader was undecided too: read again, below
            elif code:
                refused = self._refuse_in_code(s, marker_end, pending if isinstance(pending, tuple) else None, final)
                if refused is NEED_MORE:
                    self._block(item, pending)
                    return False
                if not refused:
                    self.pos = max(self.pos, s + 1)
                return True
            checked = True
            if isinstance(pending, tuple):
                self._take(pending[0], s, marker_end, pending[1])
                return True
        for dialect in role.dialects:
            found = self._read(dialect, s, marker_end, final, retried)
            if found is None:
                continue
            if in_call:
                return self._in_call_code_answer(item, dialect, found)
            # The answer depends on the mask when it is a wait, a call or a rejection.
            if not checked and (not isinstance(found, Found) or found.calls or found.error is not None):
                code = self._covers(s, final)
                if code is NEED_MORE:
                    self.settling = False  # the mask waits for a line's end, not a character
                    self._block(item, (dialect, found) if isinstance(found, Found) else NEED_MORE)
                    return False
                if code and found is NEED_MORE and self._in_call_code():
                    # Code an earlier call's own text opened: a call here is refused, never
                    # passed as text, so a stream cut inside it waits for the reader (and gives
                    # the whole text's rejection). The mask is not asked again.
                    self.settling = False
                    self._block(item, IN_CALL_CODE)
                    return False
                if code:  # text, as a refused marker is: the scan goes on past its start
                    self.settling = False
                    answer = (dialect, found) if isinstance(found, Found) else None
                    refused = self._refuse_in_code(s, marker_end, answer, final)
                    if refused is NEED_MORE:
                        self._block(item, answer or NEED_MORE)
                        return False
                    if not refused:
                        self.pos = max(self.pos, s + 1)
                    return True
            if found is NEED_MORE:
                self._block(item, None)
                return False
            assert isinstance(found, Found)
            self._take(dialect, s, marker_end, found)
            return True
        if final:
            self.unread[id(role)] = item
        return True

    def _cut_off(self) -> None:
        """The reply ended inside a call: of the markers read as no call since the last outcome
        (the last of each marker role), the first, in text order, that a reader of its, told
        more text may come, would wait for (a stream held it) opened a call the reply was cut
        off in. Its region, to the reply's end, is one ``truncated`` rejection (unless it lies
        in code or in a region an earlier rejection reported), never text in silence; a marker
        no reader waits on (prose, a message's end) stays text. A reader waits only where it
        reads to the text's end, so this costs at most one more read per marker role, each
        bounded by ``max_call_chars``, and the mask's answer at the start found."""
        items = sorted(self.unread.values(), key=lambda hit: hit[0])
        self.unread.clear()
        scan = self.scan
        text, base = scan.text, scan.base
        end = base + len(text)
        told = self.rejected if self.mode is None else self.inside
        ctx = self._ctx(False, base)
        for s, marker, role in items:
            marker_end = s + len(marker)
            if (told and told[-1].span[1] >= marker_end) or s < base or end - s > self.limits[1]:
                continue  # reported already; or past what is kept, or the size limit (`_read`)
            for dialect in role.dialects:
                self.reads += 1
                self.handed += end - s
                if dialect.read(text, s - base, marker_end - base, ctx) is NEED_MORE:
                    if self._covers(s, True) is True:
                        break  # in code: no call, nor a rejection; a later marker may be one
                    self._take(dialect, s, marker_end, Found(end, error="truncated"))
                    return

    def _read(self, dialect: Dialect, s: int, marker_end: int, final: bool, retried: bool) -> Found | NeedMore | None:
        """The dialect's answer at marker ``s``, within the size limit, in whole-text offsets.

        A candidate is given up (``too-large``) when the text runs past ``max_call_chars``
        from its marker and the reader cannot decide on those first ``max_call_chars``
        characters: the answer is a function of that prefix alone, so ``salvage_text`` and a
        stream cut anywhere agree, and a stream never holds more than the limit for one
        candidate. Prefix-stable readers give that answer on any shorter prefix that decides,
        so it is probed on prefixes growing eightfold: O(what the reader needs) per marker.
        """
        scan = self.scan
        text, base = scan.text, scan.base
        span = base + len(text) - s
        if span <= self.limits[1] or span <= marker_end - s:
            self.reads += 1
            self.handed += span
            found = dialect.read(text, s - base, marker_end - base, self._ctx(final, base))
            if final:
                return _rebased(found, base) if base else found
            settled = found if dialect in _end_stable() else _settled(found, text)
            self.settling = settled is not found
            return _rebased(settled, base) if base else settled
        limit = max(self.limits[1], marker_end - s)
        lo = max(base, s - LOOKBEHIND)
        ctx = self._ctx(False, lo)
        # A stream retrying a candidate that just outgrew the limit knows the shorter
        # prefixes were undecided: one probe, at the limit, suffices.
        size = limit if retried else min(_PROBE_CHARS, limit)
        while True:
            view = text[lo - base : s - base + size]
            self.reads += 1
            self.handed += len(view)
            found = _settled(dialect.read(view, s - lo, marker_end - lo, ctx), view)
            if found is not NEED_MORE:
                return _rebased(found, lo)
            if size >= limit:
                # Given up: the first `limit` characters are released as text and not read
                # again (nested markers of a huge broken candidate would cost O(limit) each).
                return Found(s + limit, error="too-large", resume=s + limit)
            size = min(8 * size, limit)

    def _in_call_code_answer(self, item: Hit, dialect: Dialect, found: Found | NeedMore) -> bool:
        """The reader's answer at a marker in code an earlier call's own text opened (what
        ``_refuse_in_code`` does with the mask's answer known): a call is refused
        (``in-code``), a rejection is not reported (the marker is text), a silent skip moves
        on as anywhere; NEED_MORE waits (False)."""
        s, marker, _ = item
        marker_end = s + len(marker)
        if isinstance(found, NeedMore):
            self._block(item, IN_CALL_CODE)
            return False
        if found.calls:
            self._reject_in_code(s, marker_end, dialect, found)
        elif found.error is not None:
            self.pos = max(self.pos, s + 1)
        else:
            self._take(dialect, s, marker_end, found)
        return True

    def waiting_closers(self) -> tuple[str, ...] | None:
        """While a dialect's candidate waits on its reader: the literal closers its calls end
        with (``Dialect.closers``, lower case), so a stream knows where re-reading it is worth
        it; None when one of the marker's dialects names none, or what waits is not a reader
        (a reasoning marker, or the mask with the reader's answer kept). O(dialects)."""
        item = self._retry
        if item is None or item.role.kind is not Kind.DIALECT or isinstance(self._pending, tuple):
            return None
        out: tuple[str, ...] = ()
        for dialect in item.role.dialects:
            closers: tuple[str, ...] = getattr(dialect, "closers", ())
            if not closers:
                return None
            out += tuple(closers)
        return out

    def _block(self, item: Hit, pending: Pending) -> None:
        self.blocked = item.start
        self._retry = item
        self._pending = pending

    def _take(self, dialect: Dialect, s: int, marker_end: int, found: Found) -> None:
        if self.unread:
            self.unread.clear()  # an outcome: no marker before it opened a call cut off at the end
        end = max(found.end, marker_end)
        if found.error is not None:
            markup = found.markup and self.mode is None
            if markup:  # the dialect's markup, out of the content up to a reasoning marker
                # in it (``<|tool_calls_section_begin|><think>``): that marker is handled as
                # anywhere, so a call after it is no call. O(end - marker_end), one search.
                aside, base = self.config.aside, self.scan.base
                hit = None if aside is None else aside(self.scan.text, marker_end - base, end - base)
                if hit is not None:
                    end = max(marker_end, hit.start() + base)
            # A refusal may name the call it refused (its text was cut short): never run.
            named = (found.calls[0].name or None) if found.calls else None
            self._reject(s, end, dialect, found.error, named)
            if markup:
                self._cut(s, end, ())
            else:
                self._refused(marker_end, found.resume)
            return
        if self.mode is not None and found.calls:
            # Inside open reasoning: no call. If the reasoning never closes, each is reported
            # (``in-reasoning``), or under "take" the first call that would be accepted ends
            # the reasoning and they are taken (``_unterminated``): what engines read.
            if self.config.take and any(
                raw.error is None and offered_name(self.names, raw.name) is not None for raw in found.calls
            ):
                if self.hold_from is None:
                    self.hold_from = s
                self.inside_calls.append((dialect, s, marker_end, found))
            else:
                for raw in found.calls:
                    self._reject(s, end, dialect, raw.error or "in-reasoning", raw.name or None)
            self._refused(marker_end, end)
            return
        if not found.calls:  # a silent skip: data or a broken payload, text either way
            self._refused(s + 1, max(found.resume or found.end, s + 1))
            return
        accepted: list[ToolCall] = []
        names = self.names
        # Nesting d levels takes 2d characters of the candidate in every dialect, so a short
        # candidate needs no walk (the common case: a call costs nothing more).
        depth_free = 2 * self.limits[0]
        span = (s, end)
        for raw in found.calls:
            if raw.error is not None:
                self._reject(s, end, dialect, raw.error, raw.name or None)
                continue
            name = raw.name
            offered = offered_name(names, name)
            if offered is None:
                self._reject(s, end, dialect, "not-offered", name)
                continue
            if end - s > depth_free and not _within_depth(raw.arguments, self.limits[0]):
                self._reject(s, end, dialect, "too-deep", name)
                continue
            accepted.append(salvaged_call(offered, raw, dialect.name, span))
        if accepted:
            self._cut(s, end, tuple(raw.fence for raw in found.calls if raw.fence is not None))
            self.calls.extend(accepted)
        else:
            self._refused(marker_end, end)  # no call: the candidate stays text

    def _cut(self, s: int, end: int, fences: tuple[tuple[int, int], ...]) -> None:
        """``[s, end)`` out of the content: what is inside is the candidate's, masks included."""
        self.cuts.append(Cut(s, end, s, s))
        if self.mask is not None:
            self.mask.cut(s, end, fences)
        self.pos = end

    def _reject(self, s: int, end: int, dialect: Dialect, reason: str, name: str | None) -> None:
        scan = self.scan
        quoted = scan.text[s - scan.base : min(end, s + REJECTION_TEXT_CHARS) - scan.base]
        # Inside open reasoning a rejection waits: reported only if the reasoning never closes.
        (self.rejected if self.mode is None else self.inside).append(
            Rejection(quoted, (s, end), dialect.name, _REASONS[reason], name)
        )

    def _refused(self, after: int, resume: int | None) -> None:
        """Scanning goes on right after a candidate that gave no call: what it read stays text,
        so a fence or reasoning marker in it opens a mask as anywhere else (a call must never
        be taken from inside one, whatever a reader read across it). Dialect markers up to
        ``resume`` are not read again: that keeps refusals linear."""
        self.pos = after
        if resume is not None and resume > self.skip_until:
            self.skip_until = resume

    def result(self, answered: bool = False) -> SalvageResult:
        """The pass's result. ``answered``: the content leaves out each rejected candidate
        too, by its span in the text (``Rejection.text`` is a bounded excerpt, and the same
        words may stand elsewhere in the reply), for a caller that answers each as a refused
        call; the reasoning is the same either way. O(n + cuts·log cuts)."""
        text = self.text
        content, reasoning = build_fields(text, self.cuts)
        if answered and self.rejected:
            spans = [(c.start, c.end) for c in self.cuts] + [r.span for r in self.rejected]
            content = build_content(text, _joined(spans))
        return SalvageResult(tuple(self.calls), content, tuple(self.rejected), reasoning)


# Built-in dialects whose readers are prefix-stable to their candidate's very end: a call they
# have read never takes in the text after it, so it needs no settling character (a property
# test checks each on every corpus call, with and without a profile's ``decided``). The
# markerless JSON readers are not: `json` takes a `;` and the whitespace after it.
END_STABLE = (
    "hermes",
    "qwen3_coder",
    "harmony",
    "mistral",
    "python_tag",
    "llama4_pythonic",
    "pythonic",
    "deepseek_v3",
    "deepseek_v31",
    "dsml",
    "kimi_k2",
    "kimi_k3",
    "gemma4",
    "glm",
    "seed_oss",
    "minimax_m2",
    "minimax_m3",
)


@functools.cache
def _end_stable() -> frozenset[Dialect]:
    from ._registry import by_name

    return frozenset(by_name(n) for n in END_STABLE)


def _joined(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` in text order with overlapping ones joined (a cut inside a rejected
    candidate's span is part of it). O(k log k)."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _settled(found: Found | NeedMore | None, text: str) -> Found | NeedMore | None:
    """Before the text is complete, a candidate whose span reaches the end of the text may
    yet take in more of it (``json`` takes a `;` and the whitespace after it): wait for one
    more character. This keeps a stream equal to ``salvage_text`` even for a reader that is
    not quite prefix-stable at its very end; ``salvage_text`` (final) never gets here."""
    if isinstance(found, Found) and max(found.end, found.resume or 0) >= len(text):
        return NEED_MORE
    return found


def _rebased(found: Found | NeedMore | None, offset: int) -> Found | NeedMore | None:
    """A reader's answer on a window starting at ``offset``, in whole-text offsets."""
    if offset == 0 or not isinstance(found, Found):
        return found
    resume = None if found.resume is None else found.resume + offset
    calls = found.calls
    if any(raw.fence is not None for raw in calls):  # DeepSeek V3 only: O(calls)
        calls = tuple(
            raw if raw.fence is None else replace(raw, fence=(raw.fence[0] + offset, raw.fence[1] + offset))
            for raw in calls
        )
    return Found(found.end + offset, calls, found.error, resume, found.markup)


def salvage_text(
    text: str,
    allowed: Collection[str] | AnyTool,
    *,
    dialects: Sequence[str | Dialect] | None = None,
    mask_fences: bool = True,
    mask_reasoning: bool = True,
    model: ModelProfile | str | None = None,
    reasoning_calls: str = "refuse",
    max_input_chars: int | None = None,
    max_call_chars: int | None = None,
    max_depth: int | None = None,
    limits: Limits | None = None,
) -> SalvageResult:
    """Tool calls written as text in a model's reply, in text order, the reply without them
    (``content``) and its reasoning (``reasoning``).

    ``allowed`` is required: the names offered to the model (``ANY_TOOL`` to opt out). A call
    inside a Markdown fence or a reasoning block, or naming a tool not offered, is never a
    call; it is listed in ``rejected`` (not-offered) or left as text (masked). A call inside
    reasoning that never closes is an ``in-reasoning`` rejection; ``reasoning_calls="take"``
    takes it instead, ending the reasoning at the call (what engines do: a call implies the
    close). ``model`` (a ``ModelProfile`` or its name, see ``MODEL_PROFILES``) names the
    model's dialects (unless ``dialects`` is given) and its reasoning convention. The bounds are
    ``limits`` (default ``Limits()``); ``max_input_chars=``, ``max_call_chars=`` and
    ``max_depth=``, when given, override its fields. It returns a result for any ``str``: text
    beyond ``max_input_chars`` is one ``input-too-large`` Rejection.

    >>> r = salvage_text('Sure.<tool_call>{"name": "web_search", "arguments": {"q": "x"}}</tool_call>',
    ...                  ["web_search"])
    >>> r.calls[0].name, r.content
    ('web_search', 'Sure.')
    """
    if not isinstance(text, str):
        raise TypeError(f"salvage_text takes a str, not {type(text).__name__}")
    bounds = limits_with(limits, max_input_chars=max_input_chars, max_call_chars=max_call_chars, max_depth=max_depth)
    config = config_of(dialects, mask_fences, mask_reasoning, model, reasoning_calls)
    return salvage_reply(text, allowed, config, bounds)


def salvage_reply(
    text: str,
    allowed: Collection[str] | AnyTool | NameTable,
    config: SalvageConfig,
    bounds: Limits,
    *,
    answered: bool = False,
) -> SalvageResult:
    """``salvage_text`` with its configuration and bounds resolved. ``answered``: the content
    leaves out the rejected candidates too (``SalvagePass.result``), for a caller that
    answers each as a refused call; a reply refused whole (``input-too-large``) stays the
    content either way."""
    text = exact_str(text)  # a str subclass's own methods never run on the reply
    if len(text) > bounds.max_input_chars:
        return SalvageResult((), text, (Rejection("", (0, len(text)), "", RejectReason.INPUT_TOO_LARGE, None),))
    return run_whole(
        text,
        config,
        allowed,
        bounds.max_depth,
        bounds.max_call_chars,
        max_name_chars=bounds.max_name_chars,
        answered=answered,
    )


def markerless(text: str, config: SalvageConfig) -> bool:
    """Whether ``text``, a whole reply, can hold no marker of ``config``: no anchor character
    of any enabled marker, and a reply that does not begin in reasoning. Its content is then
    the text as it is. O(A·n) at memchr speed (see ``run_whole``)."""
    return not config.opened and not any(map(text.__contains__, config.finder.anchors))  # no frame per anchor


def run_whole(
    text: str,
    config: SalvageConfig,
    allowed: Collection[str] | AnyTool | NameTable,
    max_depth: int,
    max_call_chars: int,
    *,
    max_name_chars: int = DEFAULT_LIMITS.max_name_chars,
    answered: bool = False,
) -> SalvageResult:
    """One whole-text pass: ``SalvagePass`` run once, final, over the complete text
    (``answered``: see ``SalvagePass.result``).

    A text holding no anchor character of any enabled marker (most prose) has no marker, so
    the pass would find nothing: one ``in`` per anchor answers it, O(A·n) at memchr speed
    (a character-class regex search looks at every character in Python's regex engine: ~40x
    slower on 1 MB of prose, measured); ``allowed`` is still checked, so a bad allowlist fails
    the same way on any text."""
    names = _allowlist(allowed)
    if markerless(text, config):
        return SalvageResult((), text, ())
    run = SalvagePass(
        config,
        ANY_TOOL if names is None else names,
        text,
        max_depth=max_depth,
        max_call_chars=max_call_chars,
        max_name_chars=max_name_chars,
    )
    run.advance(final=True)
    return run.result(answered)


_ = ANY_TOOL  # re-exported through the package
