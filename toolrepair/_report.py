"""AuditReport: what an audit or a fix counted, as a mergeable value; Tally, its accumulator.

A report is a plain frozen value, so a job split over processes or machines (HF datasets,
Ray Data) maps records to reports and reduces them with ``merge``, which is associative with
``AuditReport()`` as its identity. Counters are tuples of ``(key, count)`` sorted by key: a
report compares, hashes and pickles as a value.

>>> a = AuditReport(records=2, by_dialect=(("hermes", 1),))
>>> a.merge(AuditReport(records=1, by_dialect=(("hermes", 2), ("llama", 1)))).by_dialect
(('hermes', 3), ('llama', 1))
>>> a.merge(AuditReport()) == a
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ._repeats import DEFAULT_MAX_REPEATS

__all__ = ["AuditReport", "Tally", "format_report"]

#: The refused-name counter is pruned to ``NAME_COUNTER_KEEP`` entries when it passes
#: ``NAME_COUNTER_LIMIT``: names are model-generated, so their number is unbounded.
NAME_COUNTER_LIMIT = 100_000
NAME_COUNTER_KEEP = 10_000
#: A refused name is counted by its first characters only (a model can emit megabyte "names").
MAX_NAME_CHARS = 100

REPAIR_KINDS = ("name", "decode", "coerce", "rename")

Pairs = tuple[tuple[str, int], ...]

_INTS = (
    "records",
    "bad_records",
    "records_changed",
    "replies",
    "replies_with_native",
    "replies_salvaged",
    "empty_replies",
    "native_calls",
    "clean_calls",
    "repaired_calls",
    "unrepairable_calls",
    "salvaged_calls",
    "salvaged_left_as_text",
    "results_linked",
    "rejected",
    "repeated_calls",
)
_COUNTERS = ("by_repair", "unrepairable", "by_dialect", "by_rejection_reason", "rejected_names", "bad_record_reasons")


def _pairs(counter: Mapping[str, int]) -> Pairs:
    return tuple(sorted((k, v) for k, v in counter.items() if v))


def _pruned(counter: Counter[str]) -> Counter[str] | None:
    """The counter cut to its most common names, or None when it is within the limit."""
    if len(counter) <= NAME_COUNTER_LIMIT:
        return None
    # Ties are cut by name so that the result does not depend on the order names arrived in.
    kept = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:NAME_COUNTER_KEEP]
    return Counter(dict(kept))


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Counts over records: replies, native calls and their repairs, calls salvaged from text.

    ``records`` are the non-blank lines (or the objects) read; ``bad_records`` of them could
    not be read and were left as they were. ``records_changed`` is how many ``fix`` rewrites
    (an audit counts what a fix would change). Once more than ``NAME_COUNTER_LIMIT`` distinct
    refused names were seen the counter is pruned and ``names_pruned`` is set: from there on
    the name counts, and merge's associativity for them, are approximate.
    """

    records: int = 0
    bad_records: int = 0
    records_changed: int = 0
    replies: int = 0
    replies_with_native: int = 0
    replies_salvaged: int = 0
    empty_replies: int = 0
    native_calls: int = 0
    clean_calls: int = 0
    repaired_calls: int = 0
    unrepairable_calls: int = 0
    salvaged_calls: int = 0
    #: Salvaged calls of a shape with no field for native calls (``{"text"}``, a bare string,
    #: a Responses object): counted, left as text by ``fix``.
    salvaged_left_as_text: int = 0
    #: Tool results without an id linked to the id of the call they answer.
    results_linked: int = 0
    rejected: int = 0
    #: Calls (native or salvaged) made again with the same name and canonical arguments after
    #: ``DEFAULT_MAX_REPEATS`` such calls in one record: what ``max_repeats`` would answer.
    repeated_calls: int = 0
    by_repair: Pairs = ()
    unrepairable: Pairs = ()
    by_dialect: Pairs = ()
    by_rejection_reason: Pairs = ()
    rejected_names: Pairs = ()
    names_pruned: bool = False
    #: Why the bad records could not be read: ``not-json``, ``not-utf8``, ``nested-too-deeply``,
    #: ``too-large`` (longer than ``Limits.max_input_chars``), ``not-a-record``, ``bad-tools``,
    #: ``failed`` (the walk itself failed on the record; it is copied as it was all the same).
    bad_record_reasons: Pairs = ()

    def merge(self, other: AuditReport) -> AuditReport:
        """The report of both inputs together: associative, ``AuditReport()`` is the identity."""
        tally = Tally()
        tally.add(self)
        tally.add(other)
        return tally.freeze()

    @classmethod
    def combine(cls, reports: Iterable[AuditReport]) -> AuditReport:
        """All ``reports`` merged, in one pass (``functools.reduce(AuditReport.merge, ...)``, faster)."""
        tally = Tally()
        for report in reports:
            tally.add(report)
        return tally.freeze()

    def to_dict(self) -> dict[str, Any]:
        """Every field, losslessly, as JSON-ready values (``from_dict`` reads it back)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _INTS}
        for name in _COUNTERS:
            out[name] = dict(getattr(self, name))
        out["names_pruned"] = self.names_pruned
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditReport:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"not AuditReport fields: {unknown}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name in _COUNTERS:
                values[name] = _pairs(dict(value))
            elif name == "names_pruned":
                values[name] = bool(value)
            else:
                values[name] = int(value)
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """The summary the command prints with ``--json``: counters most common first, top 5 names."""
        repairs = dict(self.by_repair)
        return {
            "records": self.records,
            "bad_records": self.bad_records,
            "bad_record_reasons": dict(_most_common(self.bad_record_reasons)),
            "records_changed": self.records_changed,
            "replies": self.replies,
            "replies_with_native_calls": self.replies_with_native,
            "replies_salvaged": self.replies_salvaged,
            "empty_replies": self.empty_replies,
            "native_calls": self.native_calls,
            "clean_calls": self.clean_calls,
            "repaired_calls": self.repaired_calls,
            "unrepairable_calls": self.unrepairable_calls,
            "salvaged_calls": self.salvaged_calls,
            "salvaged_left_as_text": self.salvaged_left_as_text,
            "results_linked": self.results_linked,
            "rejected": self.rejected,
            "by_repair": {k: repairs[k] for k in _ordered(repairs, REPAIR_KINDS)},
            "unrepairable": dict(_most_common(self.unrepairable)),
            "by_dialect": dict(_most_common(self.by_dialect)),
            "by_rejection_reason": dict(_most_common(self.by_rejection_reason)),
            "top_rejected_names": [[n, c] for n, c in _most_common(self.rejected_names)[:5]],
            "rejected_names_approximate": self.names_pruned,
        }


class Tally:
    """The mutable twin of ``AuditReport`` that a job counts into, one record at a time.

    Adding is O(1) per count; ``freeze`` is O(distinct keys).
    """

    __slots__ = (*_INTS, *_COUNTERS, "names_pruned")

    def __init__(self) -> None:
        for name in _INTS:
            setattr(self, name, 0)
        for name in _COUNTERS:
            setattr(self, name, Counter())
        self.names_pruned = False

    # The attributes, for mypy (set in __init__ through the names above).
    records: int
    bad_records: int
    records_changed: int
    replies: int
    replies_with_native: int
    replies_salvaged: int
    empty_replies: int
    native_calls: int
    clean_calls: int
    repaired_calls: int
    unrepairable_calls: int
    salvaged_calls: int
    salvaged_left_as_text: int
    results_linked: int
    rejected: int
    repeated_calls: int
    by_repair: Counter[str]
    unrepairable: Counter[str]
    by_dialect: Counter[str]
    by_rejection_reason: Counter[str]
    rejected_names: Counter[str]
    bad_record_reasons: Counter[str]
    names_pruned: bool

    def refuse_name(self, name: str | None) -> None:
        if not name:
            return
        self.rejected_names[name[:MAX_NAME_CHARS]] += 1
        self._prune()

    def _prune(self) -> None:
        pruned = _pruned(self.rejected_names)
        if pruned is not None:
            self.rejected_names = pruned
            self.names_pruned = True

    def add(self, report: AuditReport) -> None:
        for name in _INTS:
            setattr(self, name, getattr(self, name) + getattr(report, name))
        for name in _COUNTERS:
            counter: Counter[str] = getattr(self, name)
            for key, count in getattr(report, name):
                counter[key] += count
        self.names_pruned = self.names_pruned or report.names_pruned
        self._prune()

    def freeze(self) -> AuditReport:
        values: dict[str, Any] = {name: getattr(self, name) for name in _INTS}
        for name in _COUNTERS:
            values[name] = _pairs(getattr(self, name))
        return AuditReport(**values, names_pruned=self.names_pruned)


def _ordered(counter: Mapping[str, int], first: Sequence[str]) -> list[str]:
    return [k for k in first if k in counter] + sorted(k for k in counter if k not in first)


def _most_common(pairs: Pairs) -> list[tuple[str, int]]:
    return sorted(pairs, key=lambda kv: (-kv[1], kv[0]))


# -- the table -----------------------------------------------------------------------------
def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:5.1f}%" if whole else "     -"


def format_report(report: AuditReport, title: str) -> str:
    """The human-readable summary: counts, and percentages of the enclosing total."""
    out: list[str] = [title, ""]

    def line(label: str, n: int, whole: int | None = None, indent: int = 0) -> None:
        pct = _pct(n, whole) if whole is not None else ""
        out.append(f"{'  ' * indent}{label:<{36 - 2 * indent}} {n:>10,}  {pct}".rstrip())

    r = report
    repairs = dict(r.by_repair)
    line("records", r.records)
    line("bad records (left as they were)", r.bad_records, r.records, 1)
    for reason, n in _most_common(r.bad_record_reasons):
        line(reason, n, r.records, 2)
    line("records fix changes", r.records_changed, r.records, 1)
    line("replies", r.replies)
    line("with native calls", r.replies_with_native, r.replies, 1)
    line("with calls salvaged from text", r.replies_salvaged, r.replies, 1)
    line("with no call", r.empty_replies, r.replies, 1)
    out.append("")
    line("native calls", r.native_calls)
    line("valid as sent", r.clean_calls, r.native_calls, 1)
    line("repaired", r.repaired_calls, r.native_calls, 1)
    for kind in _ordered(repairs, REPAIR_KINDS):
        line(kind, repairs[kind], r.native_calls, 2)
    line("cannot be repaired", r.unrepairable_calls, r.native_calls, 1)
    for kind, n in _most_common(r.unrepairable):
        line(kind, n, r.native_calls, 2)
    out.append("")
    line("calls salvaged from text", r.salvaged_calls)
    for dialect, n in _most_common(r.by_dialect):
        line(dialect, n, r.salvaged_calls, 1)
    line("left as text (no field for calls)", r.salvaged_left_as_text, r.salvaged_calls, 1)
    line("tool results linked to new ids", r.results_linked)
    if r.repeated_calls:
        line(f"calls repeated past {DEFAULT_MAX_REPEATS} in a record", r.repeated_calls)
    line("candidates rejected", r.rejected)
    for reason, n in _most_common(r.by_rejection_reason):
        line(reason, n, r.rejected, 1)
    if r.rejected_names:
        out.append("")
        approx = " (approximate)" if r.names_pruned else ""
        out.append(f"most common refused names{approx}")
        for name, n in _most_common(r.rejected_names)[:5]:
            line(repr(name), n, None, 1)
    return "\n".join(out) + "\n"
