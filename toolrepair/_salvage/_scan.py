"""One left-to-right pass that finds every literal marker in text order.

Each marker is found through its *anchor*: its rarest character (``<``, ``[``, ``{``, a fence
character ...), located with ``str.find`` (memchr speed), then verified in place ignoring
case by one match of a literal trie regex (each branch decided by one character: no
backtracking). Prose with no anchor character costs one ``find`` per distinct anchor and
returns. Total cost over a text of length n with A distinct anchors: O(A·n) character
comparisons in C plus O(1) Python work per anchor occurrence.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence

from ._base import Dialect, Gate, skip_ws_match
from ._marks import Hit, Kind, Role

__all__ = ["MarkerFinder", "MarkerScan", "anchor_of"]

# Characters by how rarely they occur in prose: the earlier, the better an anchor.
_RARE = "｜▁<[{`~|>=]}\\@#$%^*_:;()/\"'!?+,.-"
_UNSEEN = len(_RARE)


def _rank(ch: str) -> int:
    i = _RARE.find(ch)
    if i >= 0:
        return i
    if ch.isspace():
        return _UNSEEN + 3
    if ch.isalnum():
        return _UNSEEN + 2
    if not ch.isascii():
        return -1  # a symbol from outside ASCII (`◁`): rarer in prose than any ASCII punctuation
    return _UNSEEN + 1


def anchor_of(marker: str) -> int:
    """Offset of the character a marker is found by: its rarest one (first on ties)."""
    best = 0
    for i, ch in enumerate(marker):
        if _rank(ch) < _rank(marker[best]):
            best = i
    return best


# Past this many markers in one subgroup, a plain longest-first alternation replaces the trie,
# whose construction recurses once per branching level (at most one level per marker).
_TRIE_MAX_MARKERS = 64


def _longest_first(words: set[str]) -> str:
    """A regex matching the longest of ``words`` at a position. The markers' trie, factored
    by common prefix (runs without a branch kept as one literal), so each branch is decided
    by its first character; a marker that is a prefix of others is the last, empty,
    alternative. Literals only: no backtracking beyond one character per branch."""
    if len(words) > _TRIE_MAX_MARKERS:
        # Grouped: it is concatenated after the anchor (an ungrouped `|` would split the pattern).
        return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"
    return _trie(words)


def _trie(words: set[str]) -> str:
    by_first: dict[str, set[str]] = {}
    for w in words:
        if w:
            by_first.setdefault(w[0], set()).add(w[1:])
    if not by_first:
        return ""
    alternatives = []
    for c, rest in sorted(by_first.items()):
        if len(rest) == 1 and "" not in rest:  # one marker goes on alone: one literal
            (only,) = rest
            alternatives.append(re.escape(c + only))
        else:
            alternatives.append(re.escape(c) + _trie(rest))
    if "" in words:
        alternatives.append("")
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


class _Subgroup:
    """The markers sharing one anchor character at one offset (and, for a gated marker, that
    marker alone), and how to find them at a start."""

    __slots__ = (
        "_match",
        "_plain",
        "_roles",
        "_search",
        "admits",
        "anchor",
        "blind",
        "dialect_only",
        "entries",
        "free",
        "leads",
        "offset",
        "search_pattern",
        "table",
    )

    def __init__(self, offset: int, entries: list[tuple[int, str, int, Role]], gates: Sequence[Gate] = ()) -> None:
        self.offset = offset
        self.entries = [(m, order, role) for _, m, order, role in entries]
        # Marker -> every entry matching wherever it does: its own and its prefixes'.
        self.table = {m: [e for e in self.entries if m.startswith(e[0])] for m, _, _ in self.entries}
        markers = {m for m, _, _ in self.entries}
        self._match = re.compile(_longest_first(markers), re.IGNORECASE).match
        self.anchor = next(iter(markers))[offset]
        # The next possible start, in C: ``str.find`` of the anchor (memchr speed: a text
        # without it costs one call), then from there one regex search for the anchor with what
        # every marker here holds before it (a fixed-width lookbehind) and after it, so a
        # `:` that is not in `call:` or a backtick that does not start "```" costs no Python.
        # A superset of the markers (prefixes and suffixes of different markers may pair up):
        # ``markers_at`` verifies. Literal alternatives and bounded gates: no backtracking
        # beyond a marker's length and a gate's bound per anchor occurrence.
        before = {m[:offset] for m in markers}
        after = _longest_first({m[offset + 1 :] for m in markers})
        look = "(?<=" + _longest_first(before) + re.escape(self.anchor) + ")" if offset else ""
        pattern = re.escape(self.anchor) + look + after
        # Gates (one marker alone here): the pattern gates go into the search; a lead gate's
        # one position per scan is checked by the scan (``MarkerScan._lead``).
        follows = [g.pattern or "" for g in gates if g.lead is None]
        self.leads = tuple(
            (g.lead, None if g.pattern is None else re.compile(g.pattern).match) for g in gates if g.lead is not None
        )
        self._plain = re.compile(pattern, re.IGNORECASE).search
        # A dialect marker's occurrences before a refused candidate's end are not wanted
        # (``MarkerScan.pop``'s ``skip``): a subgroup of dialect markers alone may search past them.
        self.dialect_only = all(role.kind is Kind.DIALECT for _, _, role in self.entries)
        # A gated marker (one, shared by its dialects) hands each occurrence only to the dialects
        # whose own gate passes there (the search passed the union): per dialect, its lead's
        # regex (or None) and its pattern's match (or None); ``_roles`` caches the narrowed roles.
        self.admits = tuple((g.lead, None if g.pattern is None else re.compile(g.pattern).match) for g in gates)
        self._roles: dict[tuple[int, ...], Role] = {}
        # The dialects without a lead: all that may pass away from every lead's one position.
        self.free = tuple((j, pattern) for j, (lead, pattern) in enumerate(self.admits) if lead is None)
        # A lead-gated marker whose anchor is not its first character may start at the lead's
        # one position before its anchor arrives: searched on every new text.
        self.blind = bool(self.leads) and offset != 0
        if gates:
            pattern += "(?:" + "|".join(f"(?-i:{f})" for f in follows) + ")" if follows else "(?!)"
        self.search_pattern = pattern
        self._search = re.compile(pattern, re.IGNORECASE).search

    def admitted(self, role: Role, text: str, i: int, lead_at: Callable[[str], int | None], away: bool) -> Role | None:
        """``role`` narrowed to the dialects whose gate passes at window offset ``i``, or None
        when none does; ``lead_at(lead)`` is where a lead regex ends (window offset; -1
        nowhere; None not yet known: it may end here); ``away``: ``i`` is known to be no
        lead's end (the usual case: only the lead-free dialects are tried). O(dialects)
        C-level matches."""
        end = i + len(self.entries[0][0])
        keep = []
        if away:
            for j, pattern in self.free:
                if pattern is None or pattern(text, end) is not None:
                    keep.append(j)
        else:
            for j, (lead, pattern) in enumerate(self.admits):
                if lead is not None:
                    at = lead_at(lead)
                    if at is not None and at != i:
                        continue
                if pattern is not None and pattern(text, end) is None:
                    continue
                keep.append(j)
        if len(keep) == len(self.admits):
            return role
        if not keep:
            return None
        key = tuple(keep)
        narrowed = self._roles.get(key)
        if narrowed is None:
            narrowed = self._roles[key] = Role(role.kind, tuple(role.dialects[j] for j in keep), role.pair)
        return narrowed

    def marker_end(self, start: int) -> int:
        """Where a gated subgroup's one marker ends if it starts at ``start``."""
        return start + len(self.entries[0][0])

    def next_start(self, text: str, i: int, gated: bool = True) -> int:
        """The first ``s >= i`` where one of these markers may start and pass its pattern
        gates (``gated``; ``markers_at`` checks the marker), or -1; lead gates' positions are
        the scan's to add. O(n) over a text in C: the search only moves forward."""
        offset = self.offset
        q = text.find(self.anchor, i + offset)
        if q == -1:
            return -1
        m = (self._search if gated else self._plain)(text, q)
        return -1 if m is None else m.start() - offset

    def markers_at(self, text: str, i: int) -> list[tuple[str, int, Role]]:
        """The entries whose marker starts at ``text[i]``, ignoring case exactly as
        ``text[i:i+len(m)].lower() == m`` does. One regex match; the regex's case folding is a
        superset of ``lower()`` (checked in the tests), and the longest match is verified."""
        m = self._match(text, i)
        if m is None:
            return []
        found = self.table.get(m.group().lower())
        if found is not None:
            return found
        # A letter that folds but does not lower to the marker's (rare): compare one by one.
        return [e for e in self.entries if text[i : i + len(e[0])].lower() == e[0]]


def _gates_of(marker: str, role: Role) -> tuple[Gate, ...] | None:
    """The gates of a dialect marker when every dialect reading it has one, else None."""
    if role.kind is not Kind.DIALECT:
        return None
    gates: list[Gate] = []
    for d in role.dialects:
        gate = _dialect_gates(d).get(marker)
        if gate is None:
            return None
        gates.append(gate)
    return tuple(gates)


def _dialect_gates(dialect: Dialect) -> dict[str, Gate]:
    given = getattr(dialect, "gates", None) or {}
    return {m.lower(): g for m, g in given.items()}


class MarkerFinder:
    """The compiled table of markers: built once per configuration, shared by every scan."""

    __slots__ = (
        "anchor_re",
        "anchor_set",
        "anchors",
        "at",
        "firsts",
        "groups",
        "lead_re",
        "leads",
        "max_len",
        "max_offset",
        "possible",
        "prefixes",
        "subgroups",
    )

    def __init__(self, entries: Sequence[tuple[str, Role]], gated: bool = True) -> None:
        groups: dict[str, list[tuple[int, str, int, Role]]] = {}
        for order, (given, role) in enumerate(entries):
            if not given:
                raise ValueError("a marker cannot be empty")
            marker = given.lower()
            k = anchor_of(marker)
            groups.setdefault(marker[k], []).append((k, marker, order, role))
        self.groups = groups
        # anchor -> its markers by the anchor's offset in them, each set compiled to one search
        # and one trie regex matched at the marker's would-be start: the work per marker found
        # is one C-level match of O(marker length), however many markers share an anchor
        # (dozens share `<`). A marker every one of whose dialects gates it (``Gate``) is a
        # subgroup of its own, searched with its gates.
        self.at: dict[str, list[_Subgroup]] = {}
        for c, g in groups.items():
            subs = self.at[c] = []
            for k in sorted({e[0] for e in g}):
                plain = []
                for e in g:
                    if e[0] != k:
                        continue
                    gates = _gates_of(e[1], e[3]) if gated else None
                    if gates is None:
                        plain.append(e)
                    else:
                        subs.append(_Subgroup(k, [e], gates))
                if plain:
                    subs.append(_Subgroup(k, plain))
        # Every lead gate's regex, matched once per scan at the reply's first non-space.
        self.leads = {
            lead: j
            for j, lead in enumerate({lead: None for subs in self.at.values() for sub in subs for lead, _ in sub.leads})
        }
        self.lead_re = tuple(re.compile(lead).match for lead in self.leads)
        self.anchors = tuple(groups)
        self.subgroups = tuple(sub for subs in self.at.values() for sub in subs)
        self.max_offset = max((k for g in groups.values() for k, *_ in g), default=0)
        self.max_len = max((len(m) for g in groups.values() for _, m, *_ in g), default=0)
        # Proper prefixes of every marker: a text ending in one may yet end in a marker.
        self.prefixes = frozenset(m[:i] for g in groups.values() for _, m, *_ in g for i in range(1, len(m)))
        self.firsts = frozenset(p[0] for p in self.prefixes)
        self.anchor_set = frozenset(self.anchors)
        # Every subgroup's gated search in one: where in a text any marker may start, as the
        # scan's own searches would find it once the leads are known (``MarkerScan.leads_known``;
        # a lead's one position is not in it). Lookbehinds reach back at most ``max_len``.
        # One C-level search: text it does not match holds no marker the scan would return.
        alternatives = "|".join(f"(?:{sub.search_pattern})" for sub in self.subgroups)
        self.possible = re.compile(alternatives or "(?!)", re.IGNORECASE).search
        # Any anchor character: text without one cannot complete a marker.
        self.anchor_re = re.compile("[" + "".join(re.escape(c) for c in self.anchors) + "]" if self.anchors else "(?!)")

    def scan(self, text: str) -> MarkerScan:
        return MarkerScan(self, text)

    def partial_start(self, text: str, lo: int) -> int:
        """The first ``i >= lo`` where ``text[i:]`` is a proper prefix of a marker (ignoring
        case), else ``len(text)``: where a marker cut by the end of a chunk may begin.
        O(max_len) slices of at most max_len characters."""
        n = len(text)
        start = max(lo, n - self.max_len + 1)
        tail = text[start:].lower()
        if len(tail) != n - start:  # a letter that lowers to two: compare in place instead
            return next((i for i in range(start, n) if text[i:].lower() in self.prefixes), n)
        firsts, prefixes = self.firsts, self.prefixes
        for i, ch in enumerate(tail):
            if ch in firsts and tail[i:] in prefixes:
                return start + i
        return n


class MarkerScan:
    """The markers of one text, popped in order as ``Hit``s.

    Ties at one start come longest marker first, then in table order. ``pop(pos)`` never
    returns a marker starting before ``pos``; ``pos`` must not decrease between calls.

    Streaming: ``extend`` appends text in O(1) (the pieces are joined by ``sync``, which the
    pass calls only when it is about to look, so a candidate waiting for more text is not
    re-copied per delta); ``pop(pos, final=False)`` stops at an anchor whose marker may be
    cut by the end of the text (``stall``) instead of passing it, so a marker split across
    two deltas is still found; ``trim`` drops a prefix nobody will look at again. Positions
    are offsets in the whole text: ``text`` holds the text from ``base`` on.
    """

    __slots__ = (
        "_finder",
        "_heap",
        "_idle",
        "_lead_at",
        "_lead_ends",
        "_next",
        "_parts",
        "_pending",
        "_seq",
        "base",
        "copied",
        "first_nonspace",
        "stall",
        "text",
    )

    def __init__(self, finder: MarkerFinder, text: str) -> None:
        self._finder = finder
        self.text = text
        self.base = 0
        self._parts: list[str] = []
        self._pending = 0
        # Next possible start of each subgroup (``_Subgroup.next_start``), as a heap (O(log S)
        # to find the earliest); subgroups with none in the text so far wait in `_idle` until
        # `sync` brings more text.
        self._next: list[tuple[int, int]] = []
        self._idle: list[int] = []
        lead = skip_ws_match(text, 0).end()
        self.first_nonspace = lead if lead < len(text) else -1
        # Where each lead gate's regex ends (whole-text offset), -1 nowhere, None not yet known.
        self._lead_at: list[int | None] = [None] * len(finder.leads)
        self._lead_ends: frozenset[int] | None = None  # every lead's end, once all are known
        absent = {a for a in finder.anchors if a not in text}  # one memchr per anchor, not per subgroup
        for k, sub in enumerate(finder.subgroups):
            # Without its anchor a subgroup has no start, lead or not, when the anchor begins its
            # marker: a lead's one position holds it or is past the text (``_start``).
            if sub.anchor in absent and (not sub.leads or sub.offset == 0):
                q = -1
            elif sub.leads:
                q = self._start(k, text, 0)
            else:
                q = sub.next_start(text, 0)
            if q == -1:
                self._idle.append(k)
            else:
                self._next.append((q, k))
        heapq.heapify(self._next)
        self._heap: list[tuple[int, int, int, int, str, Role]] = []
        self._seq = 0
        self.copied = len(text)  # characters copied into the window: a cost counter
        self.stall = -1  # where a marker cut by the text's end may start (non-final pops), or -1

    def _lead(self, j: int) -> int | None:
        """Where lead gate ``j``'s regex ends, matched at the first non-space character: -1
        when it does not match, None while that is not yet known (it reaches the text's end,
        or no non-space has come). One C-level match per scan."""
        got = self._lead_at[j]
        if got is not None:
            return got
        first, base, text = self.first_nonspace, self.base, self.text
        if first == -1 or first < base:
            return None
        m = self._finder.lead_re[j](text, first - base)
        if m is None:
            got = -1
        elif m.end() < len(text):
            got = m.end() + base
        else:
            return None  # may go on: decided when more text comes
        self._lead_at[j] = got
        return got

    def leads_behind(self, pos: int) -> bool:
        """Whether every lead gate's one position is known (matched at the first non-space, or
        known to match nowhere) and lies before whole-text offset ``pos``: from ``pos`` on, the
        subgroups' gated searches alone find every marker (``MarkerFinder.possible``). O(leads)."""
        if self._lead_ends is None:
            self._away_from_leads(-1)
        ends = self._lead_ends
        return ends is not None and all(end < pos for end in ends)

    def _away_from_leads(self, s: int) -> bool:
        """Whether whole-text offset ``s`` is known to be no lead regex's end."""
        ends = self._lead_ends
        if ends is None:
            got = [self._lead(j) for j in range(len(self._lead_at))]
            if any(g is None for g in got):
                return False
            ends = self._lead_ends = frozenset(g for g in got if g is not None and g != -1)
        return s not in ends

    def _lead_in_window(self, lead: str) -> int | None:
        """Where lead regex ``lead`` ends as a window offset (-1: nowhere; None: not known)."""
        end = self._lead(self._finder.leads[lead])
        return end if end is None or end == -1 else end - self.base

    def _start(self, k: int, text: str, i: int) -> int:
        """Subgroup ``k``'s next possible start at or after window offset ``i``, with its lead
        gates' one position each. O(1) Python work per call beyond the subgroup's search.
        Only for a subgroup with lead gates: the others' start is ``next_start`` alone, which
        the callers call directly (one Python frame per search, not two: most searches of a
        reply are of lead-free subgroups)."""
        sub = self._finder.subgroups[k]
        q = sub.next_start(text, i)
        leads, base, known = self._finder.leads, self.base, self._lead_at
        for lead, pattern in sub.leads:
            j = leads[lead]
            end = known[j]  # once known it stays: no call per search of a lead-gated subgroup
            if end is None:
                end = self._lead(j)
            if end is None:  # not known yet: every occurrence may be the one
                return sub.next_start(text, i, gated=False)
            w = end - base
            a = w + sub.offset  # the lead's one position holds no marker without its anchor
            if (
                w >= i
                and (q == -1 or w < q)
                and (a >= len(text) or text[a] == sub.anchor)
                and (pattern is None or pattern(text, sub.marker_end(w)))
            ):
                q = w
        return q

    @property
    def end(self) -> int:
        """Length of the whole text so far, including pieces not yet joined."""
        return self.base + len(self.text) + self._pending

    def extend(self, more: str) -> None:
        """Append text. O(1): joined on the next ``sync``."""
        if more:
            self._parts.append(more)
            self._pending += len(more)

    def extend_plain(self, more: str) -> None:
        """Append text holding no anchor character, with no marker pending in the window (the
        stream's plain path): no marker can end in it, so there is nothing to search now; a
        marker it begins is found by the next ``sync``, which searches from ``max_len`` before
        the end. O(window + len(more)) in C."""
        if self.first_nonspace == -1 and more.strip():
            self.first_nonspace = self.end + len(more) - len(more.lstrip())
        self.text += more
        self.copied += len(self.text)

    def sync(self) -> None:
        """Join the pending pieces into the window. O(window + pending); the caller bounds
        how often a large window is re-joined (see ``_stream``)."""
        if not self._parts:
            return
        old = len(self.text)
        more = "".join(self._parts)
        self._parts.clear()
        self._pending = 0
        if self.first_nonspace == -1:
            stripped = more.lstrip()
            if stripped:
                self.first_nonspace = self.base + old + len(more) - len(stripped)
        self.text += more
        self.copied += len(self.text)
        base, text = self.base, self.text
        # A marker cut by the old end may be completed by the new text: look from its start.
        lo = max(0, old - self._finder.max_len)
        idle = self._idle
        if not idle:
            return
        finder = self._finder
        subgroups = finder.subgroups
        # Only the idle subgroups whose anchor the new text holds can start in it (as
        # `__init__` decides absence): the anchors present are found in one C-level pass over
        # the new text, so a delta costs no search, and no Python frame, per idle subgroup.
        present = finder.anchor_set.intersection(text[lo:])
        woken = [k for k in idle if subgroups[k].anchor in present or subgroups[k].blind]
        if not woken:
            return
        self._idle = [k for k in idle if not (subgroups[k].anchor in present or subgroups[k].blind)]
        for k in woken:
            sub = subgroups[k]
            q = self._start(k, text, lo) if sub.leads else sub.next_start(text, lo)
            if q == -1:
                self._idle.append(k)
            else:
                heapq.heappush(self._next, (q + base, k))

    def trim(self, keep: int) -> None:
        """Forget the text before offset ``keep`` (which no marker or reader will look at
        again). Copies only when at least half the window goes: O(1) amortised per character."""
        cut = keep - self.base
        if cut > 0 and 2 * cut >= len(self.text):
            self.text = self.text[cut:]
            self.base = keep
            self.copied += len(self.text)

    def frontier(self, pos: int) -> int:
        """No marker at or after ``pos`` that ``pop`` has yet to return starts before this
        offset (after a pop that returned None). O(max_len²) at the end of the window."""
        text, base = self.text, self.base
        low = base + len(text)
        if self._heap:
            low = min(low, self._heap[0][0])
        if self.stall != -1:
            low = min(low, self.stall)
        return min(low, base + self._finder.partial_start(text, max(0, pos - base)))

    def pop(self, pos: int, final: bool = True, skip: int = 0) -> Hit | None:
        """The next marker starting at or after ``pos``, or None. Non-final, None also where a
        marker may be cut by the text's end (``stall``), so that it is not passed. Python work
        per possible start that ``next_start`` finds, not per anchor character. Dialect
        markers before ``skip`` are not wanted: a subgroup holding only such markers searches
        on from there (the data inside a refused candidate costs no pop); others may still be
        returned, the caller tells them apart."""
        text, base, finder, heap, nxt = self.text, self.base, self._finder, self._heap, self._next
        subgroups = finder.subgroups
        n = base + len(text)
        self.stall = -1
        far = max(pos, skip)
        while True:
            while heap and heap[0][0] < pos:
                heapq.heappop(heap)
            # Bring the earliest subgroup's next start up to `pos` (stale ones are re-found there).
            while nxt:
                q, k = nxt[0]
                sub = subgroups[k]
                at = far if sub.dialect_only else pos
                if q >= at:
                    break
                q = self._start(k, text, at - base) if sub.leads else sub.next_start(text, at - base)
                if q == -1:
                    heapq.heappop(nxt)
                    self._idle.append(k)
                else:
                    heapq.heapreplace(nxt, (q + base, k))
            best = nxt[0][0] if nxt else -1
            # Markers found at a start before every subgroup's next start come first, in order.
            if heap and (best == -1 or heap[0][0] < best):
                s, _, _, _, marker, role = heapq.heappop(heap)
                return Hit(s, marker, role)
            if not final and (best == -1 or best + finder.max_len > n):
                # The searches find whole markers only: one cut by the end stalls the scan
                # there, so the text completing it (which may hold no anchor) is searched.
                cut = base + finder.partial_start(text, max(0, pos - base))
                if cut < n and (best == -1 or cut <= best):
                    self.stall = cut  # a marker may start there: come back when the text is longer
                    return None
            if best == -1:
                return None
            k = nxt[0][1]
            sub = subgroups[k]
            found = sub.markers_at(text, best - base)
            q = self._start(k, text, best - base + 1) if sub.leads else sub.next_start(text, best - base + 1)
            if q == -1:
                heapq.heappop(nxt)
                self._idle.append(k)
            else:
                heapq.heapreplace(nxt, (q + base, k))
            if sub.admits and found:
                # A gated marker: only to the dialects whose own gate passes here.
                marker, order, role = found[0]
                narrowed = sub.admitted(role, text, best - base, self._lead_in_window, self._away_from_leads(best))
                if narrowed is None:
                    continue
                found = [(marker, order, narrowed)]
            if len(found) == 1 and not heap and (not nxt or nxt[0][0] > best):
                # The usual case, one marker alone at its start: no ordering to do.
                marker, _, role = found[0]
                return Hit(best, marker, role)
            for marker, order, role in found:
                self._seq += 1
                heapq.heappush(heap, (best, -len(marker), order, self._seq, marker, role))
