"""The fast lane of ``salvage_text``: the common reply, read without the general pass's machinery.

Most replies are prose around a few well-formed calls: every marker in them starts a call
that is taken whole, and no mask, refusal or rejection occurs. For those, the general pass
(``_engine.SalvagePass``) spends most of its time on what the rare cases need: the heap that
orders markers from different anchors, the state of masks and refusals, the size probes of a
stream. The fast lane walks the same markers in the same order with one position per anchor
and hands each candidate to the same dialect readers, so its result is the pass's result.

*Express markers* (``express_table``: a ``TagDialect``'s opening marker, Hermes's
``<tool_call>`` among the built-ins) are read by ``_express``: the JSON block's common
answer in place, then the next occurrence of the marker's anchor, spelled as the same marker,
as the next call, when no anchor character lies between (a *run*). A reply that opens on an
express marker is read that way from the start, and its gaps are checked for anchors once, on
the kept text, at the end; elsewhere the lane checks each gap as the run goes.

At the first thing it does not handle (a mask marker, two markers at one start, a marker
whose order depends on another anchor's, a candidate past the size limit, a refusal, a
rejection), the lane stops *before* that marker and hands its state (position, calls, cuts)
to the general pass, which goes on from there as if it had run from the start: only the
candidate where the lane stopped is read twice.

Cost: O(A·n) for A anchors, like the scan, plus the pass it may hand over to. Every search
goes forward: an anchor is searched for again only once the position has passed its last
occurrence found, a run's search stops at the next occurrence of its anchor, and the gaps a
run checks are the text between its calls. Each anchor occurrence is visited once, each
reader reads what the pass's reader would, and a run read from the start whose check fails
is read again at most once, by the lane, from the last call the check kept.
``tests/property/test_fast_lane.py`` holds the lane to the pass's result on generated replies
and on the conformance corpus, and counts the characters its searches look at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import repeat
from types import MappingProxyType
from typing import Any

from .._args import FINITE_SCAN
from .._names import NameTable
from .._types import SalvageResult, ToolCall, slot_setters
from ._base import Found, ReadContext, build_content, offered_name, skip_ws_match, startswith_ci
from ._json import common_call, may_nest_deeper
from .tag import json_block_close

__all__ = ["Express", "Handover", "express_table", "fast_lane"]

_ABSENT = -1  # str.find's answer for no occurrence
# An express run makes its ToolCalls through the slot setters ToolCall.__init__ uses, without
# the class call around them: the type's call and init slots are 0.08 µs of the 0.37 µs a
# ToolCall costs, about 3 % of a short reply's salvage. (A field added to ToolCall breaks the
# unpacking in ``_express`` at once, so the two cannot drift apart unseen.)
_NEW = object.__new__
_TOOL_CALL_SLOTS = slot_setters(ToolCall)

# The state handed to the general pass: (position, calls, cuts).
Handover = tuple[int, list[ToolCall], list[tuple[int, int]]]
# An express marker's reading: (closing marker, its match after whitespace, dialect name, a
# match of the marker, whitespace and the `{` that opens the call object, and the usual
# spellings of both ends, one newline inside: a `startswith` answers those without a match).
Block = tuple[str, Any, str, Any, str, str]
# A configuration's express markers (``express_table``): (index of their anchor or -1, marker
# -> its Block, the other anchors).
Express = tuple[int, Mapping[str, Block], tuple[str, ...]]


def fast_lane(
    text: str, config: Any, names: NameTable | None, max_depth: int, max_call_chars: int
) -> SalvageResult | Handover:
    """The result for ``text``, or the state at the first marker the lane does not handle."""
    finder = config.finder
    find = text.find
    calls: list[ToolCall] = []
    cuts: list[tuple[int, int]] = []
    pos = 0
    k, express, rest = config.express
    if k == _ABSENT:
        at = list(map(find, finder.anchors))
    else:
        # The express anchor first: a reply that opens on an express marker is read from there
        # by ``_express``, which needs no other anchor's position (it checks the kept text for
        # them at the end). Otherwise the other anchors' positions join it, each found once.
        s = find(finder.anchors[k])
        if s != _ABSENT:
            for marker, block in express.items():
                if text.startswith(marker, s):
                    got = _express(text, s, marker, block, rest, names=names, max_depth=max_depth,
                                   max_call_chars=max_call_chars, calls=calls, cuts=cuts, opening=True)
                    if isinstance(got, SalvageResult):
                        return got
                    pos = got
                    break
        at = list(map(find, rest))
        at.insert(k, s)
    if max(at) == _ABSENT:  # no anchor character, so no marker: the common prose case
        return SalvageResult((), text, ())
    # The anchors present, their lanes and next occurrences; an anchor leaves these lists when
    # it has no occurrence left (positions only grow, so it never comes back). Reaching: the
    # anchors whose markers may start before their occurrence, the only ones that can order a
    # marker found at another anchor's occurrence (see the check below).
    lanes, chars, reaching = finder.present(bytes(map(_ABSENT.__ne__, at)))
    at = list(filter(_ABSENT.__ne__, at))
    ctx: ReadContext | None = None
    n = len(text)
    last_start = n - max_call_chars - 1  # a candidate starting at or before this may not fit
    while True:
        # The earliest anchor occurrence at or after `pos`: after a cut, the anchors left
        # behind are found again from there. Only those: an occurrence still ahead is not
        # searched for again, so each anchor's searches only go forward (O(n) each).
        # (-1: an anchor just found no more, which leaves the lists here.)
        best = min(at)
        if best < pos:
            for j, p in enumerate(at):
                if 0 <= p < pos:
                    at[j] = find(chars[j], pos)
            if _ABSENT in at:
                if max(at) == _ABSENT:
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
        if s + reach > best and find(anchor, best + 1, s + reach + 1) != _ABSENT:
            return pos, calls, cuts
        for i in reaching:
            if at[i] - lanes[i][4] <= s and i != j:
                return pos, calls, cuts
        if payload[0] != "d":  # a fence or reasoning marker: masks are the pass's
            return pos, calls, cuts
        marker_end = s + len(marker)
        if s <= last_start and n > marker_end:
            # More than max(max_call_chars, the marker) to the end: the pass probes prefixes.
            return pos, calls, cuts
        block = express.get(marker)
        if block is not None and text.startswith(marker, s):
            got = _express(text, s, marker, block, rest, names=names, max_depth=max_depth,
                           max_call_chars=max_call_chars, calls=calls, cuts=cuts, opening=False)
            if isinstance(got, SalvageResult):
                return got
            if got != pos:  # calls taken; else the marker's readers are asked below
                pos = got
                continue
        if ctx is None:
            ctx = ReadContext(True, max_depth, max_call_chars, skip_ws_match(text, 0).end())
        found: Any = None
        for dialect in payload[1]:
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


def express_table(finder: Any) -> Express:
    """The express markers of a marker table and their anchor (see ``_express``): markers that
    start with their anchor, whose first dialect reads a JSON block (``json_block_close``),
    that match alone where they are written (no other marker of their subgroup is a prefix of
    one, none is longer) and that can follow one another as a run with nothing else to check
    (``run_checks`` is empty). All share the anchor of the first one found. There are none
    when an anchor is whitespace: a run read from the start checks the kept text for anchors,
    and whitespace next to a cut is not kept. O(markers) once per configuration."""
    anchors = finder.anchors
    found: dict[str, Block] = {}
    anchor = ""
    if not any(c.isspace() for c in anchors):
        for subgroups in finder.at.values():
            for sub in subgroups:
                for marker, _, payload in sub.entries:
                    closing = json_block_close(payload[1][0]) if payload[0] == "d" else None
                    if (closing is None or sub.offset != 0 or len(sub.table[marker]) != 1
                            or finder.run_checks(marker) != () or anchor not in ("", marker[0])):
                        continue
                    anchor = marker[0]
                    head = re.compile(re.escape(marker) + r"\s*\{").match
                    found[marker] = (*closing, payload[1][0].name, head, marker + "\n{", "\n" + closing[0])
    if not found:
        return (_ABSENT, MappingProxyType({}), anchors)
    k = anchors.index(anchor)
    return (k, MappingProxyType(found), anchors[:k] + anchors[k + 1 :])


def _express(text: str, s: int, marker: str, block: Block, others: tuple[str, ...], *, names: NameTable | None,
             max_depth: int, max_call_chars: int, calls: list[ToolCall], cuts: list[tuple[int, int]],
             opening: bool) -> SalvageResult | int:
    """A run of the express marker ``marker`` at ``s``, the next marker: calls appended to
    ``calls`` and ``cuts``. Each is read as ``read_json_block`` reads its common answer (one
    call object, ``common_call``, then the closing marker), and the next occurrence of the
    marker's anchor is the next marker when it is the same marker, spelled the same, and no
    other anchor lies between (``run_checks`` is empty: nothing else can start before it).

    ``opening``: ``s`` is the first occurrence of the anchor and nothing was taken before. The
    other anchors are then looked for once, in the kept text, when the run reaches the end
    (one ``find`` each instead of one per gap); if one is there, the calls before the first
    gap holding one are kept, the rest undone. Otherwise (the lane checked the text before
    ``s``) each gap is checked as the run goes.

    Returns the result when the run ends the reply, else the position after the last call
    kept (the lane goes on from there; unchanged when none was taken). O(what it reads): each
    search goes forward, each payload is read once."""
    close, close_match, dialect, head, usual_head, usual_close = block
    find = text.find
    exact = names.exact if names is not None else None
    n = len(text)
    last_start = n - max_call_chars - 1
    size = len(marker)
    anchor = marker[0]
    first = len(cuts)
    set_name, set_arguments, set_id, set_dialect, set_span = _TOOL_CALL_SLOTS
    while True:
        if s <= last_start and n > s + size:
            break  # past the size limit: the pass probes prefixes
        if text.startswith(usual_head, s):  # what ``head`` matches, spelled the usual way
            i = s + size + 1
        else:
            opened = head(text, s)  # the marker as written, whitespace, `{`: one match
            if opened is None:
                break  # another marker at the anchor, or no object after it
            i = opened.end() - 1
        try:
            value, j = FINITE_SCAN(text, i)
        except (StopIteration, ValueError, RecursionError):
            break  # not a call object that decodes: read_json_block's to answer
        if j - i > max_call_chars or may_nest_deeper(text, i, j, max_depth):
            break  # a limit to check: ``decode_at`` does
        if (len(value) == 2 and type(name := value.get("name")) is str
                and type(arguments := value.get("arguments")) is dict):
            ident = None  # a name and arguments, nothing else: ``common_call``'s answer
        else:
            common = common_call(value)  # the first test of call_from_object, so the same answer
            if common is None:
                break
            name, arguments, ident = common
        end: int
        if text.startswith(usual_close, j):  # what ``close_match`` matches, spelled the usual way
            end = j + len(usual_close)
        elif (closed := close_match(text, j)) is not None:
            end = closed.end()
        else:  # the closing marker spelled otherwise, or missing: read_json_block's answer
            k = skip_ws_match(text, j).end()
            end = k + len(close) if startswith_ci(text, close, k) else j
        offered = name if exact is not None and name in exact else offered_name(names, name)
        if offered is None:
            break  # a rejection: the pass records it
        span = (s, end)
        call = _NEW(ToolCall)
        set_name(call, offered)
        set_arguments(call, arguments)
        set_id(call, ident)
        set_dialect(call, dialect)
        set_span(call, span)
        calls.append(call)
        cuts.append(span)
        s = find(anchor, end)
        if s == _ABSENT:
            if opening:
                content = build_content(text, cuts)
                if max(map(content.find, others), default=_ABSENT) == _ABSENT:
                    return SalvageResult(tuple(calls), content, ())
                break
            if max(map(find, others, repeat(end)), default=_ABSENT) == _ABSENT:
                return SalvageResult(tuple(calls), build_content(text, cuts), ())
            return end
        if not opening and max(map(find, others, repeat(end), repeat(s)), default=_ABSENT) != _ABSENT:
            return end
    if opening:
        # Every call up to the first gap with an anchor in it is the lane's: before that gap,
        # the run's next marker was the lane's next marker.
        prev = 0
        for taken in range(first, len(cuts)):
            start, end = cuts[taken]
            if max(map(find, others, repeat(prev), repeat(start)), default=_ABSENT) != _ABSENT:
                del calls[taken:], cuts[taken:]
                return prev
            prev = end
    return cuts[-1][1] if cuts else 0  # the lane's position: it moves with its cuts only


def _without_exhausted(lanes: list[Any], at: list[int]) -> tuple[list[Any], list[str], list[int], list[int]]:
    """The lane lists without the anchors found no more (``-1`` in ``at``)."""
    lanes = [lane for lane, p in zip(lanes, at, strict=True) if p != -1]
    return (lanes, [lane[0] for lane in lanes], [p for p in at if p != -1],
            [j for j, lane in enumerate(lanes) if lane[4]])
