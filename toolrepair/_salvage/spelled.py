"""One dialect written several ways: the spelling variants real replies show of one set of
markers (an inner space, a doubled full-width bar), each a full form of the dialect, chosen
by the marker the scan found. A variant is a line of data: the form's markers and tag names.

The scan stays literal (every variant's markers are literals); the form that owns a marker
reads it, so a reply mixing spellings inside one block is read by the opener's form only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._base import Dialect, Found, Gate, NeedMore, ReadContext

__all__ = ["Spelled", "bar_variants"]


def bar_variants(prefix: str, bar: str = "｜") -> tuple[str, ...]:
    """``prefix`` (lower case, holding ``bar`` around a word) as written, with a space after
    its last bar, with every bar doubled, and with both: ``<｜dsml｜`` -> ``<｜dsml｜``,
    ``<｜dsml｜ ``, ``<｜｜dsml｜｜``, ``<｜｜dsml｜｜ ``."""
    doubled = prefix.replace(bar, bar * 2)
    return tuple(dict.fromkeys((prefix, prefix + " ", doubled, doubled + " ")))


@dataclass(frozen=True)
class Spelled:
    """A dialect whose forms are spellings of one format; every form shares ``name``."""

    name: str
    forms: tuple[Dialect, ...]
    _owner: Mapping[str, Dialect] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        owner: dict[str, Dialect] = {}
        for form in self.forms:
            for marker in form.markers:
                owner.setdefault(marker, form)
        object.__setattr__(self, "_owner", owner)

    @property
    def markers(self) -> tuple[str, ...]:
        return tuple(self._owner)

    @property
    def closers(self) -> tuple[str, ...]:
        """Every form's closers, or none when one form names none."""
        each = [tuple(getattr(f, "closers", ())) for f in self.forms]
        return () if not all(each) else tuple(dict.fromkeys(c for cs in each for c in cs))

    @property
    def reasoning(self) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(p for f in self.forms for p in getattr(f, "reasoning", ())))

    @property
    def gates(self) -> dict[str, Gate]:
        out: dict[str, Gate] = {}
        for marker, form in self._owner.items():
            gate = (getattr(form, "gates", None) or {}).get(marker)
            if gate is not None:
                out[marker] = gate
        return out

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        # O(1) dispatch, then the form's own bound.
        return self._owner[text[start:marker_end].lower()].read(text, start, marker_end, ctx)
