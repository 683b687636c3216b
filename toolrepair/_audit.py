r"""``audit_records`` and ``fix_record``: pure, picklable functions over records of model replies.

A record is a decoded JSON value, or one JSON Lines line (``str`` or ``bytes``, its line
ending kept): a line comes back as a line, byte for byte when nothing changes, so that any
engine (a loop, ``datasets.Dataset.map``, Ray Data) writes exactly what ``toolrepair fix`` writes.
Memory is O(one record) plus the report's counters, however many records go through.

>>> line = '{"role": "assistant", "content": "<tool_call>{\\"name\\": \\"f\\", \\"arguments\\": {}}</tool_call>"}'
>>> fixed, report = fix_record(line, tools=["f"])
>>> json.loads(fixed)["tool_calls"][0]["function"]["name"], report.salvaged_calls
('f', 1)
>>> fix_record('{"text": "no call"}', tools=["f"])[0]
'{"text": "no call"}'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from ._limits import Limits
from ._logio import Line, LongLine, char_count
from ._records import BadRecord, RecordFixer
from ._report import AuditReport, Tally
from ._salvage import ANY_TOOL
from ._splice import splice

__all__ = ["LineError", "audit_records", "fix_line", "fix_record", "fixer_for", "process_lines"]

R = TypeVar("R")

#: Fixers kept by ``fixer_for`` (one per distinct ``tools`` argument seen).
FIXER_CACHE_SIZE = 32
_fixers: dict[str, RecordFixer] = {}


@dataclass(frozen=True, slots=True)
class LineError:
    """Why a line is not a record: ``column`` (1-based, as json.loads counts) when JSON says where;
    ``kind`` is the key it is counted under in ``AuditReport.bad_record_reasons``."""

    reason: str
    column: int | None = None
    kind: str = "not-json"


def _bad(tally: Tally, error: LineError) -> LineError:
    tally.bad_records += 1
    tally.bad_record_reasons[error.kind] += 1
    return error


def _too_large(limits: Limits) -> LineError:
    return LineError(f"longer than Limits.max_input_chars ({limits.max_input_chars:,} characters)", kind="too-large")


def fixer_for(tools: Any) -> RecordFixer:
    """The fixer for ``tools``, built once per distinct JSON-able ``tools`` (tables are costly)."""
    if tools is None or tools is ANY_TOOL:
        key = "none" if tools is None else "any"
    else:
        try:
            key = "json:" + json.dumps(tools, sort_keys=True)
        except (TypeError, ValueError):  # callables or ToolSpecs: not cached
            return RecordFixer(tools)
    fixer = _fixers.get(key)
    if fixer is None:
        fixer = RecordFixer(tools)
        if len(_fixers) >= FIXER_CACHE_SIZE:
            _fixers.clear()
        _fixers[key] = fixer
    return fixer


def _json_error(exc: ValueError | RecursionError) -> LineError:
    if isinstance(exc, json.JSONDecodeError):
        # json's messages end with a preposition that its own format completes ("... at: line").
        msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
        return LineError(f"not valid JSON: {msg}", exc.colno)
    if isinstance(exc, UnicodeDecodeError):
        return LineError(f"not valid UTF-8 (byte {exc.object[exc.start]:#04x} at offset {exc.start})", kind="not-utf8")
    return LineError("not valid JSON: nested too deeply", kind="nested-too-deeply")


def fix_line(fixer: RecordFixer, line: R, tally: Tally, *, write: bool = True) -> tuple[R | None, LineError | None]:
    """(the fixed line, or None when it stays as it is; why it is not a record, or None).

    ``line`` is ``str`` or ``bytes`` with or without its line ending, which a fixed line keeps.
    A blank line is not a record and is not counted.
    """
    text: Any = line
    binary = isinstance(text, bytes)
    body, ending = text, ""
    if text[-1:] == (b"\n" if binary else "\n"):
        body, ending = text[:-1], "\n"
        if body[-1:] == (b"\r" if binary else "\r"):
            body, ending = body[:-1], "\r\n"
    if not body or body.isspace():  # isspace stops at the first other character: O(1) on a record
        return None, None
    tally.records += 1
    limit = fixer.limits.max_input_chars
    if len(body) > limit and char_count(body) > limit:
        return None, _bad(tally, _too_large(fixer.limits))
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        return None, _bad(tally, _json_error(exc))
    try:
        changed = fixer.run(obj, tally, write=write)
    except BadRecord as exc:
        return None, _bad(tally, LineError(str(exc)[:200], kind=exc.kind))
    except Exception as exc:  # whatever a record makes the walk do, the run goes on
        return None, _bad(tally, _failed(exc))
    if not changed or not write:
        return None, None
    try:
        out: Any = _spliced(body, obj, binary)
    except Exception as exc:  # pragma: no cover - a text the splice cannot place: copied as it was
        tally.records_changed -= 1
        return None, _bad(tally, _failed(exc))
    fixed: Any = out + (ending.encode("ascii") if binary else ending)
    return fixed, None


def _spliced(body: str | bytes, fixed: Any, binary: bool) -> str | bytes:
    """The line's text with only what the fix changed rewritten (``_splice``): every other byte,
    a number's spelling, a duplicate key, spacing and escapes, stays as it was. The line is
    decoded a second time for the value it held (only for a record that changed)."""
    if not binary:
        assert isinstance(body, str)
        return splice(body, json.loads(body), fixed)
    assert isinstance(body, bytes)
    encoding = json.detect_encoding(body)
    text = body.decode(encoding, "surrogatepass")  # as json.loads reads bytes; round-trips exactly
    return splice(text, json.loads(text), fixed).encode(encoding, "surrogatepass")


def _failed(exc: Exception) -> LineError:
    """A record the walk could not finish (a RecursionError deep in a validator, say): it is
    bad, not fatal. Counts the walk made before failing stay in the tally."""
    return LineError(f"cannot be audited ({type(exc).__name__}: {str(exc)[:160]})".replace(": )", ")"), kind="failed")


def process_lines(
    lines: Iterable[Line],
    fixer: RecordFixer,
    *,
    write: Callable[[bytes | str], Any] | None = None,
    on_bad_line: Callable[[int, LineError], None] | None = None,
) -> Tally:
    """Audit JSON Lines (``write`` None) or fix them, passing each output line to ``write``:
    the input line itself when nothing changes. O(1) memory in the number of lines."""
    tally = Tally()
    fixing = write is not None
    for number, line in enumerate(lines, 1):
        if isinstance(line, LongLine):
            # Never held whole: counted, and copied through piece by piece (O(chunk) memory).
            tally.records += 1
            too_large = _bad(tally, _too_large(fixer.limits))
            if on_bad_line is not None:
                on_bad_line(number, too_large)
            if write is not None:
                for piece in line.chunks():
                    write(piece)
            continue
        fixed, error = fix_line(fixer, line, tally, write=fixing)
        if error is not None and on_bad_line is not None:
            on_bad_line(number, error)
        if write is not None:
            write(line if fixed is None else fixed)
    return tally


def audit_records(records: Iterable[Any], *, tools: Any = None) -> AuditReport:
    """Count what ``fix`` would repair, salvage and refuse in ``records`` (lines or decoded values).

    ``tools`` are offered where a record declares none (its ``tools`` field wins): OpenAI-style
    definitions, names or tools; ``ANY_TOOL`` accepts any name; None offers nothing.

    >>> audit_records(['{"text": "no call here"}', {"role": "assistant", "tool_calls": []}]).replies
    2
    """
    fixer = fixer_for(tools)
    tally = Tally()
    for record in records:
        if isinstance(record, (str, bytes)):
            fix_line(fixer, record, tally, write=False)
        else:
            _count_object(fixer, record, tally, write=False)
    return tally.freeze()


def _count_object(fixer: RecordFixer, record: Any, tally: Tally, *, write: bool) -> Any | None:
    tally.records += 1
    try:
        if not write:
            fixer.run(record, tally, write=False)
            return None
        return fixer.fix(record, tally, owned=False)
    except BadRecord as exc:
        _bad(tally, LineError(str(exc), kind=exc.kind))
        return None
    except Exception as exc:  # see fix_line
        _bad(tally, _failed(exc))
        return None


def fix_record(record: Any, *, tools: Any = None) -> tuple[Any, AuditReport]:
    """(the record fixed, its report). Text calls of each assistant turn become native calls
    with ids derived from the record, names and arguments are repaired against ``tools`` (see
    ``audit_records``), content is cleaned, tool results without ids are linked to the new ids.
    A record with nothing to fix, or that cannot be read, comes back as it was (the same
    object); ``record`` itself is never mutated.
    """
    fixer = fixer_for(tools)
    tally = Tally()
    if isinstance(record, (str, bytes)):
        fixed, _ = fix_line(fixer, record, tally)
    else:
        fixed = _count_object(fixer, record, tally, write=True)
    return (record if fixed is None else fixed), tally.freeze()
