"""Run the lenient argument decoder over JSONTestSuite's ``test_parsing`` files.

JSONTestSuite (github.com/nst/JSONTestSuite) is not vendored: pass the path of its
``test_parsing`` directory::

    python fuzz/json_test_suite.py path/to/JSONTestSuite/test_parsing [--verbose]

Each file is read as bytes, decoded as UTF-8 (the decoder's own rule for bytes), and decoded
with ``decode_json_value`` (``decode_arguments`` without its demand for an object):

* ``y_`` (valid JSON): must decode, equal to ``json.loads``, with no repair.
* ``n_`` (invalid JSON): must be refused (an ``ArgumentError``), or be one of the documented
  unambiguous repairs below, each reported as a ``RepairEvent``; the one repair made without an
  event is ``strict=False``'s, control characters inside strings, and then the value must be
  what ``json.loads(..., strict=False)`` gives.
* ``i_`` (implementation-defined): must not raise anything but an ``ArgumentError``.

Prints the counts and every accepted ``n_`` file with the repair that accepted it; exits 1 on
any violation.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolrepair import ArgumentError
from toolrepair._args._decode import decode_json_value

# The repairs of DESIGN.md "Arguments", by the start of their event message, and why each is
# unambiguous. An accepted n_ file whose events are not all here is a violation.
DOCUMENTED: dict[str, str] = {
    "Removed trailing comma": "a comma before a closing bracket separates nothing",
    "Replaced single quotes with double quotes": "a Python/JS string literal; its content is unchanged",
    "Replaced smart quotes with double quotes": "typographic quotes around a string",
    "Quoted bare key": "a key is always a string; a bare word in key position can only be one",
    "Removed comment": "JS comments carry no value",
    "Replaced Python literal": "True/False/None are Python's spellings of true/false/null",
    "Kept invalid escape as literal text": "JSON has no such escape; the backslash is kept as text "
    "(a Windows path), never dropped or guessed",
    "Replaced invalid escape of a quote with the quote": "an escaped quote of the other kind",
    "Kept unescaped quote as string content": "a quote followed by more text before the closing quote",
    "Inserted missing comma": "between object members, where the next key and ':' follow",
    "Collapsed doubled braces": "template leakage: {{ and }} throughout",
    "Removed Markdown code fence": "a fence around the whole text",
    "Removed byte-order mark": "a BOM before the text",
    "Removed whitespace JSON does not allow": "Unicode whitespace (NBSP, form feed, ...) around the whole text",
}
SILENT = "control characters inside strings (strict=False): models write raw newlines and tabs"


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=dict)
    accepted_n: list[tuple[str, str]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1


def _reference(raw: bytes, *, strict: bool = True) -> tuple[bool, Any]:
    try:
        return True, json.loads(raw.decode("utf-8"), strict=strict)
    except (ValueError, RecursionError):
        return False, None


def check_file(path: Path, tally: Tally) -> None:
    kind = path.name[:2]
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        outcome: tuple[str, Any, tuple[Any, ...]] = ("refused", "not UTF-8", ())
    else:
        try:
            value, events = decode_json_value(text)
        except ArgumentError as error:
            outcome = ("refused", error.reason, ())
        except Exception as error:  # any other exception is a crash, whatever the file
            tally.violations.append(f"{path.name}: crashed with {type(error).__name__}: {error}")
            tally.count(f"{kind}crash")
            return
        else:
            outcome = ("accepted", value, events)
    verdict, value, events = outcome
    tally.count(f"{kind}{verdict}")
    if kind == "y_":
        ok, expected = _reference(raw)
        if verdict != "accepted" or not ok or value != expected or events:
            tally.violations.append(f"{path.name}: valid JSON gave {verdict} {value!r:.80} {events!r:.120}")
    elif kind == "n_" and verdict == "accepted":
        messages = [event.message for event in events]
        if not messages:
            ok, expected = _reference(raw, strict=False)
            if not ok or value != expected:
                tally.violations.append(f"{path.name}: accepted without a repair: {raw[:60]!r}")
            tally.accepted_n.append((path.name, SILENT))
            return
        unknown = [m for m in messages if not any(m.startswith(prefix) for prefix in DOCUMENTED)]
        if unknown:
            tally.violations.append(f"{path.name}: undocumented repair {unknown}")
        why = "; ".join(sorted({p for m in messages for p in DOCUMENTED if m.startswith(p)}))
        tally.accepted_n.append((path.name, why))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="JSONTestSuite's test_parsing directory")
    parser.add_argument("--verbose", action="store_true", help="print every accepted n_ file")
    args = parser.parse_args(argv)
    files = sorted(p for p in args.directory.iterdir() if p.name[:2] in ("y_", "n_", "i_") and p.suffix == ".json")
    if not files:
        print(f"no y_/n_/i_ files in {args.directory}", file=sys.stderr)
        return 2
    tally = Tally()
    for path in files:
        check_file(path, tally)
    for kind in ("y_", "n_", "i_"):
        total = sum(n for key, n in tally.counts.items() if key.startswith(kind))
        parts = ", ".join(f"{key[2:]} {n}" for key, n in sorted(tally.counts.items()) if key.startswith(kind))
        print(f"{kind}: {total} files: {parts}")
    by_reason: dict[str, list[str]] = {}
    for name, why in tally.accepted_n:
        by_reason.setdefault(why, []).append(name)
    print(f"n_ accepted as documented repairs: {len(tally.accepted_n)}")
    for why, names in sorted(by_reason.items()):
        print(f"  {len(names):3d}  {why}" + (":\n       " + "\n       ".join(names) if args.verbose else ""))
    for violation in tally.violations:
        print("VIOLATION", violation)
    print(f"violations: {len(tally.violations)}")
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
