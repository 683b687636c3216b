"""One left-to-right pass that finds every literal marker in text order.

Each marker is found through its *anchor*: its rarest character (``<``, ``[``, ``{``, a fence
character ...), located with ``str.find`` (memchr speed), then verified in place ignoring
case. Prose with no anchor character costs one ``find`` per distinct anchor and returns.
Total cost over a text of length n with A distinct anchors: O(A·n) character comparisons in
C plus O(1) Python work per anchor occurrence; no regex, no backtracking.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

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


class MarkerFinder:
    """The compiled table of markers: built once per configuration, shared by every scan."""

    __slots__ = ("anchors", "groups", "max_len", "max_offset")

    def __init__(self, entries: Sequence[tuple[str, Any]]) -> None:
        # anchor char -> char after the anchor ("" when the marker ends there) -> markers.
        # The second level keeps the work per anchor occurrence to a handful of comparisons
        # however many dialects share an anchor (dozens share `<`).
        groups: dict[str, dict[str, list[tuple[int, str, int, Any]]]] = {}
        offsets: list[int] = []
        lengths: list[int] = []
        for order, (marker, payload) in enumerate(entries):
            if not marker:
                raise ValueError("a marker cannot be empty")
            marker = marker.lower()
            k = anchor_of(marker)
            follow = marker[k + 1] if k + 1 < len(marker) else ""
            groups.setdefault(marker[k], {}).setdefault(follow, []).append((k, marker, order, payload))
            offsets.append(k)
            lengths.append(len(marker))
        self.groups = groups
        self.anchors = tuple(groups)
        self.max_offset = max(offsets, default=0)
        self.max_len = max(lengths, default=0)

    def scan(self, text: str) -> MarkerScan:
        return MarkerScan(self, text)


class MarkerScan:
    """The markers of one text, popped in order: (start, marker, payload).

    Ties at one start come longest marker first, then in table order. ``pop(pos)`` never
    returns a marker starting before ``pos``; ``pos`` must not decrease between calls.
    ``extend`` appends text (streaming): only the new text is searched.

    Cost: every anchor occurrence at or after the positions asked for is visited once, at
    O(log A) for the anchor heap plus a few slice comparisons; skipped text is crossed by
    ``str.find`` alone.
    """

    __slots__ = ("_anchors", "_finder", "_heap", "_idle", "_seq", "text")

    def __init__(self, finder: MarkerFinder, text: str) -> None:
        self._finder = finder
        self.text = text
        # Next unprocessed occurrence of each anchor, as a heap; anchors with none left idle.
        self._anchors: list[tuple[int, str]] = []
        self._idle: list[str] = []
        for c in finder.anchors:
            p = text.find(c)
            if p == -1:
                self._idle.append(c)
            else:
                self._anchors.append((p, c))
        heapq.heapify(self._anchors)
        self._heap: list[tuple[int, int, int, int, str, Any]] = []
        self._seq = 0

    def extend(self, more: str) -> None:
        old = len(self.text)
        self.text += more
        idle = self._idle
        self._idle = []
        for c in idle:
            p = self.text.find(c, old)
            if p == -1:
                self._idle.append(c)
            else:
                heapq.heappush(self._anchors, (p, c))

    def pop(self, pos: int) -> tuple[int, str, Any] | None:
        text, finder, heap, anchors = self.text, self._finder, self._heap, self._anchors
        while True:
            while heap and heap[0][0] < pos:
                heapq.heappop(heap)
            # Bring the earliest anchor occurrence up to `pos` (stale ones are re-found there).
            while anchors and anchors[0][0] < pos:
                _, c = anchors[0]
                p = text.find(c, pos)
                if p == -1:
                    heapq.heappop(anchors)
                    self._idle.append(c)
                else:
                    heapq.heapreplace(anchors, (p, c))
            best_p = anchors[0][0] if anchors else -1
            # A later anchor can only produce a start >= best_p - max_offset.
            if heap and (best_p == -1 or heap[0][0] < best_p - finder.max_offset):
                s, _, _, _, marker, payload = heapq.heappop(heap)
                return s, marker, payload
            if best_p == -1:
                return None
            best_c = anchors[0][1]
            group = finder.groups[best_c]
            follow = text[best_p + 1 : best_p + 2].lower()
            for key in (follow, "") if follow else ("",):
                for k, marker, order, payload in group.get(key, ()):
                    s = best_p - k
                    if s >= pos and text[s : s + len(marker)].lower() == marker:
                        self._seq += 1
                        heapq.heappush(heap, (s, -len(marker), order, self._seq, marker, payload))
            p = text.find(best_c, best_p + 1)
            if p == -1:
                heapq.heappop(anchors)
                self._idle.append(best_c)
            else:
                heapq.heapreplace(anchors, (p, best_c))
