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
from collections.abc import Sequence

from ._base import skip_ws_match
from ._marks import Hit, Role

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
        return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
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
    """The markers sharing one anchor character at one offset, and how to find them at a start."""

    __slots__ = ("_match", "entries", "offset", "table")

    def __init__(self, offset: int, entries: list[tuple[int, str, int, Role]]) -> None:
        self.offset = offset
        self.entries = [(m, order, role) for _, m, order, role in entries]
        # Marker -> every entry matching wherever it does: its own and its prefixes'.
        self.table = {
            m: [e for e in self.entries if m.startswith(e[0])] for m, _, _ in self.entries
        }
        self._match = re.compile(_longest_first({m for m, _, _ in self.entries}), re.IGNORECASE).match

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


class MarkerFinder:
    """The compiled table of markers: built once per configuration, shared by every scan."""

    __slots__ = ("anchor_re", "anchors", "at", "firsts", "groups", "max_len", "max_offset", "prefixes")

    def __init__(self, entries: Sequence[tuple[str, Role]]) -> None:
        groups: dict[str, list[tuple[int, str, int, Role]]] = {}
        for order, (given, role) in enumerate(entries):
            if not given:
                raise ValueError("a marker cannot be empty")
            marker = given.lower()
            k = anchor_of(marker)
            groups.setdefault(marker[k], []).append((k, marker, order, role))
        self.groups = groups
        # anchor -> its markers by the anchor's offset in them, each set compiled to a trie
        # regex matched at the marker's would-be start: the work per anchor occurrence is one
        # C-level match of O(marker length), however many markers share an anchor (dozens
        # share `<`).
        self.at = {c: [_Subgroup(k, [e for e in g if e[0] == k]) for k in sorted({e[0] for e in g})]
                   for c, g in groups.items()}
        self.anchors = tuple(groups)
        self.max_offset = max((k for g in groups.values() for k, *_ in g), default=0)
        self.max_len = max((len(m) for g in groups.values() for _, m, *_ in g), default=0)
        # Proper prefixes of every marker: a text ending in one may yet end in a marker.
        self.prefixes = frozenset(m[:i] for g in groups.values() for _, m, *_ in g for i in range(1, len(m)))
        self.firsts = frozenset(p[0] for p in self.prefixes)
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

    __slots__ = ("_anchors", "_finder", "_heap", "_idle", "_parts", "_pending", "_seq", "base", "copied",
                 "first_nonspace", "stall", "text")

    def __init__(self, finder: MarkerFinder, text: str) -> None:
        self._finder = finder
        self.text = text
        self.base = 0
        self._parts: list[str] = []
        self._pending = 0
        # Next unprocessed occurrence of each anchor, as a heap (O(log A) to find the earliest);
        # anchors with none in the text so far wait in `_idle` until `sync` brings more text.
        self._anchors: list[tuple[int, str]] = []
        self._idle: list[str] = []
        for c in finder.anchors:
            p = text.find(c)
            if p == -1:
                self._idle.append(c)
            else:
                self._anchors.append((p, c))
        heapq.heapify(self._anchors)
        self._heap: list[tuple[int, int, int, int, str, Role]] = []
        self._seq = 0
        self.copied = len(text)  # characters copied into the window: a cost counter
        self.stall = -1  # the anchor a non-final pop stopped at, or -1
        lead = skip_ws_match(text, 0).end()
        self.first_nonspace = lead if lead < len(text) else -1

    @property
    def end(self) -> int:
        """Length of the whole text so far, including pieces not yet joined."""
        return self.base + len(self.text) + self._pending

    def extend(self, more: str) -> None:
        """Append text. O(1): joined on the next ``sync``."""
        if more:
            self._parts.append(more)
            self._pending += len(more)

    @property
    def idle(self) -> bool:
        """Every marker in the text has been popped and none may be cut by its end."""
        return not self._heap and self.stall == -1 and not self._parts

    def extend_plain(self, more: str) -> None:
        """Append text holding no anchor character to an ``idle`` scan: no marker can end in
        it, so there is nothing to search. O(window + len(more)) in C."""
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
        idle, self._idle = self._idle, []
        for c in idle:
            q = text.find(c, old)
            if q == -1:
                self._idle.append(c)
            else:
                heapq.heappush(self._anchors, (q + base, c))

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
            low = min(low, self.stall - self._finder.max_offset)
        return min(low, base + self._finder.partial_start(text, max(0, pos - base)))

    def pop(self, pos: int, final: bool = True) -> Hit | None:
        text, base, finder, heap, anchors = self.text, self.base, self._finder, self._heap, self._anchors
        n = base + len(text)
        self.stall = -1
        while True:
            while heap and heap[0][0] < pos:
                heapq.heappop(heap)
            # Bring the earliest anchor occurrence up to `pos` (stale ones are re-found there).
            while anchors and anchors[0][0] < pos:
                c = anchors[0][1]
                q = text.find(c, pos - base)
                if q == -1:
                    heapq.heappop(anchors)
                    self._idle.append(c)
                else:
                    heapq.heapreplace(anchors, (q + base, c))
            best_p = anchors[0][0] if anchors else -1
            # A later anchor can only produce a start >= best_p - max_offset.
            if heap and (best_p == -1 or heap[0][0] < best_p - finder.max_offset):
                s, _, _, _, marker, role = heapq.heappop(heap)
                return Hit(s, marker, role)
            if best_p == -1:
                return None
            best_c = anchors[0][1]
            if not final and best_p + finder.max_len > n:
                for k, marker, _, _ in finder.groups[best_c]:
                    s = best_p - k
                    if s >= pos and s + len(marker) > n and marker.startswith(text[s - base :].lower()):
                        self.stall = best_p  # come back when the text is longer
                        return None
            for sub in finder.at[best_c]:
                s = best_p - sub.offset
                if s < pos:
                    continue
                for marker, order, role in sub.markers_at(text, s - base):
                    self._seq += 1
                    heapq.heappush(heap, (s, -len(marker), order, self._seq, marker, role))
            q = text.find(best_c, best_p + 1 - base)
            if q == -1:
                heapq.heappop(anchors)
                self._idle.append(best_c)
            else:
                heapq.heapreplace(anchors, (q + base, best_c))
