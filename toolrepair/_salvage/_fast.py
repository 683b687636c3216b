"""The fast lane of ``salvage_text``: the common reply, read without the general pass's machinery.

Most replies are prose around a few well-formed calls: every marker in them starts a call
that is taken whole, and no mask, refusal or rejection occurs. For those, the general pass
(``_engine.SalvagePass``) spends most of its time on what the rare cases need: the heap that
orders markers from different anchors, the state of masks and refusals, the size probes of a
stream. The fast lane walks the same markers in the same order with one position per anchor
and hands each candidate to the same dialect readers (or to the first reader's whole-text
shortcut, ``tag.fast_reader``, which answers only when its answer is the reader's), so its
result is the pass's result. After a call, a *run* takes the next occurrence of the same
marker, spelled the same, when no anchor character lies between (``MarkerFinder.run_checks``
says what else to check, once per marker). At the first thing it does not handle (a mask
marker, two markers at one start, a marker whose order depends on another anchor's, a
candidate past the size limit, a refusal, a rejection), it stops *before* that marker and
hands its state (position, calls, cuts) to the general pass, which goes on from there as if
it had run from the start: only the candidate where the lane stopped is read twice.

Cost: O(A·n) for A anchors, like the scan, plus the pass it may hand over to. Every search
goes forward: an anchor is searched for again only once the position has passed its last
occurrence found, a run's search stops at the next occurrence of its marker's first anchor,
and the gap a run checks is bounded by the marker it found. Each anchor occurrence is visited
once, and each reader reads what the pass's reader would.
``tests/property/test_fast_lane.py`` holds the lane to the pass's result on generated replies
and on the conformance corpus, and counts the characters its searches look at.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from .._names import NameTable
from .._types import SalvageResult, ToolCall
from ._base import Found, ReadContext, build_content, offered_name, skip_ws_match

__all__ = ["Handover", "fast_lane"]

_ABSENT = -1  # str.find's answer for no occurrence

# The state handed to the general pass: (position, calls, cuts).
Handover = tuple[int, list[ToolCall], list[tuple[int, int]]]


def fast_lane(
    text: str, config: Any, names: NameTable | None, max_depth: int, max_call_chars: int
) -> SalvageResult | Handover:
    """The result for ``text``, or the state at the first marker the lane does not handle."""
    finder = config.finder
    find = text.find
    at = list(map(find, finder.anchors))
    if max(at) == -1:  # no anchor character, so no marker: the common prose case
        return SalvageResult((), text, ())
    # The anchors present, their lanes and next occurrences; an anchor leaves these lists when
    # it has no occurrence left (positions only grow, so it never comes back). Reaching: the
    # anchors whose markers may start before their occurrence, the only ones that can order a
    # marker found at another anchor's occurrence (see the check below).
    lanes, chars, reaching = finder.present(bytes(map(_ABSENT.__ne__, at)))
    at = list(filter(_ABSENT.__ne__, at))
    calls: list[ToolCall] = []
    cuts: list[tuple[int, int]] = []
    pos = 0
    ctx: ReadContext | None = None
    n = len(text)
    last_start = n - max_call_chars - 1  # a candidate starting at or before this may not fit
    # A run: after a call taken at a marker, the next occurrence of that marker spelled the same
    # is the next marker when no anchor character lies between and no marker starts just before
    # it through an anchor inside it (``run_checks``): found in O(1) C calls, not marker by marker.
    run: str | None = None
    back: tuple[tuple[int, Any, Any, Any], ...] = ()
    while True:
        if run is not None:
            # Looked for by its anchor, its first character, not as a string: a spelling that
            # does not come again must not cost a search to the end of the text per call
            # (O(n^2) on calls each spelled differently); this search stops where the pass's would.
            s = find(run[0], pos)
            if s >= pos and text.startswith(run, s) and (
                s == pos or max(map(find, chars, repeat(pos), repeat(s))) == -1
            ):
                for rel, firsts, other, _ in back:
                    b = s + rel
                    if b >= pos and (firsts is None or text[b] in firsts) and other(text, b) is not None:
                        run = None
                        break
            else:
                run = None
        if run is None:
            # The earliest anchor occurrence at or after `pos`: after a cut, the anchors left
            # behind are found again from there. Only those: an occurrence still ahead is not
            # searched for again, so each anchor's searches only go forward (O(n) each).
            # (-1: an anchor just found no more, which leaves the lists here.)
            best = min(at)
            if best < pos:
                for k, p in enumerate(at):
                    if 0 <= p < pos:
                        at[k] = find(chars[k], pos)
                if -1 in at:
                    if max(at) == -1:
                        break  # no anchor left: the usual end of a reply
                    lanes, chars, at, reaching = _without_exhausted(lanes, at)
                best = min(at)
            j = at.index(best)
            anchor, match, table, others, reach = lanes[j]
            # The anchor's markers that start with it (one match), then those that start
            # before it (a first-character test, then a match).
            hit: Any = None
            if match is not None:
                m = match(text, best)
                if m is not None:
                    hit = table.get(m.group().lower())
                    if hit is None or len(hit) > 1:
                        # A letter folding to a marker's but not lowering to it, or two
                        # markers at one place: the pass sorts those out.
                        return pos, calls, cuts
                    hit = hit[0]
                    s = best
            for offset, firsts, other_match, other_table in others:
                start = best - offset
                if start < pos or (firsts is not None and text[start] not in firsts):
                    continue
                m = other_match(text, start)
                if m is None:
                    continue
                entries = other_table.get(m.group().lower())
                if entries is None or hit is not None or len(entries) > 1:
                    return pos, calls, cuts
                hit = entries[0]
                s = start
            if hit is None:
                at[j] = find(anchor, best + 1)
                continue
            marker, _, payload = hit
            # The pass takes a marker once no anchor occurrence after it can start a marker at
            # or before it (an anchor reaching r characters back, found at q, starts markers
            # from q - r on). Here that must hold at once, or the order is left to the pass.
            if s + reach > best and find(anchor, best + 1, s + reach + 1) != -1:
                return pos, calls, cuts
            for k in reaching:
                if at[k] - lanes[k][4] <= s and k != j:
                    return pos, calls, cuts
            if payload[0] != "d":  # a fence or reasoning marker: masks are the pass's
                return pos, calls, cuts
        marker_end = s + len(marker)
        if s <= last_start and n > marker_end:
            # More than max(max_call_chars, the marker) to the end: the pass probes prefixes.
            return pos, calls, cuts
        dialects, fast = payload[1], payload[2]
        quick = fast(text, marker_end, max_depth, max_call_chars) if fast is not None else None
        if quick is not None:
            end, name, arguments, ident = quick
            # (Offered as written, the common case, without the call: offered_name's first answer.)
            offered = name if names is not None and name in names else offered_name(names, name)
            if offered is None:
                return pos, calls, cuts  # a rejection: the pass records it
            span = (s, end)
            calls.append(ToolCall(offered, arguments, ident, dialects[0].name, span))
            cuts.append(span)
            pos = end
            if run is None:
                checks = finder.run_checks(marker)
                if checks is not None:
                    run, back = text[s:marker_end], checks
            continue
        if run is not None:  # the readers' own answer: found as the pass finds it
            run = None
            continue
        if ctx is None:
            ctx = ReadContext(True, max_depth, max_call_chars, skip_ws_match(text, 0).end())
        found: Any = None
        for dialect in dialects:
            found = dialect.read(text, s, marker_end, ctx)
            if found is not None:
                break
        if found is None:  # no dialect's candidate: the marker is text, as in the pass
            at[j] = find(anchor, best + 1)
            continue
        if type(found) is not Found or found.error is not None or not found.calls:
            return pos, calls, cuts
        span = (s, max(found.end, marker_end))
        taken = []
        for raw in found.calls:
            offered = None if raw.error is not None else offered_name(names, raw.name)
            if offered is None:
                return pos, calls, cuts
            taken.append(ToolCall(offered, raw.arguments, raw.id, dialect.name, span))
        calls.extend(taken)
        cuts.append(span)
        pos = span[1]
    if not cuts:
        return SalvageResult((), text, ())
    return SalvageResult(tuple(calls), build_content(text, cuts), ())


def _without_exhausted(lanes: list[Any], at: list[int]) -> tuple[list[Any], list[str], list[int], list[int]]:
    """The lane lists without the anchors found no more (``-1`` in ``at``)."""
    lanes = [lane for lane, p in zip(lanes, at, strict=True) if p != -1]
    return (lanes, [lane[0] for lane in lanes], [p for p in at if p != -1],
            [j for j, lane in enumerate(lanes) if lane[4]])
