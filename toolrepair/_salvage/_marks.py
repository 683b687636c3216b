"""The engine's protocol: what a marker found in the text means to the pass, and its modes.

The marker table (``_scan.MarkerFinder``) maps each literal marker to a ``Role``; the scan
hands the pass ``Hit``s in text order; the pass is outside any mask (``mode`` None) or inside
a reasoning block (``InReasoning``). Markdown code is no marker: ``_mask.CodeMask`` answers
for it. What the pass takes out of the content (calls, reasoning regions, chat-channel markup)
it records as ``Cut``s, in text order.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from ._base import Dialect

__all__ = ["Cut", "Hit", "InReasoning", "Kind", "Mode", "Role", "Work"]


class Kind(enum.Enum):
    DIALECT = "dialect"  # an opening marker of one or more dialects
    REASON_OPEN = "reason-open"
    REASON_CLOSE = "reason-close"
    MARKUP = "markup"  # chat-channel markup: taken out of the content, nothing inside


@dataclass(frozen=True, slots=True)
class Role:
    """What one marker means: a dialect marker (its readers in precedence order), or the
    opening or closing marker of reasoning pair ``pair``, or chat-channel markup.

    ``tail``: a reasoning marker spelled with more before its ``>`` (``<think type="plan">``,
    ``</think >``): ``"attrs"`` runs to the next ``>`` (no ``<`` before it), ``"space"`` to a
    ``>`` after whitespace only; ``""`` is the marker as tabled."""

    kind: Kind
    dialects: tuple[Dialect, ...] = ()
    pair: int = -1
    tail: str = ""


class Hit(NamedTuple):
    """One marker occurrence: where it starts (whole-text offset), as tabled, and its role."""

    start: int
    marker: str
    role: Role


class InReasoning(NamedTuple):
    """Inside a block of reasoning pair ``pair``, opened by the marker at ``start`` (its text
    from ``inner`` on)."""

    pair: int
    start: int = 0
    inner: int = 0


class Cut(NamedTuple):
    """A span ``[start, end)`` taken out of the content: a call (its calls share its span), a
    reasoning region (its reasoning is ``[inner_start, inner_end)``, markers excluded) or
    chat-channel markup (``inner_start == inner_end``: no reasoning)."""

    start: int
    end: int
    inner_start: int
    inner_end: int


Mode = InReasoning | None


@dataclass(frozen=True, slots=True)
class Work:
    """Work a pass has done, counted (never timed), for linear-time tests.

    ``markers``: marker occurrences handled; ``reads``: reader calls; ``handed``: characters
    handed to readers (from each marker to the end of the text or window: what a reader *may*
    look at, so on a whole text a run of n markers is handed O(n^2) by construction, while a
    stream hands only its window); ``copied``: characters copied into a stream's window;
    ``masked``: characters the code mask (``_mask``) looked at.
    """

    markers: int = 0
    reads: int = 0
    handed: int = 0
    copied: int = 0
    masked: int = 0

    @property
    def total(self) -> int:
        return self.markers + self.reads + self.handed + self.copied + self.masked
