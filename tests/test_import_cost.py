"""`import toolrepair` stays cheap: jsonschema, asyncio, the log tools and the command line are
imported when first used, never by the import itself (counted in modules, not timed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import toolrepair as tr

#: Imported on first use only. Each is a large share of import time when imported eagerly.
LAZY = (
    "jsonschema",
    "referencing",
    "asyncio",
    "toolrepair._audit",
    "toolrepair._records",
    "toolrepair._logio",
    "toolrepair._splice",
    "toolrepair.cli",
    "toolrepair.proxy",
    "argparse",
    "gzip",
)

PROBE = """
import json, sys
before = set(sys.modules)
{statement}
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def imported_by(statement: str) -> list[str]:
    """The modules ``statement`` imports in a fresh interpreter (the interpreter's own start-up aside)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(statement=statement)], capture_output=True, text=True, check=True
    )
    modules: list[str] = json.loads(out.stdout)
    return modules


def lazy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == lazy or m.startswith(lazy + ".") for lazy in LAZY)]


def test_import_toolrepair_imports_none_of_the_lazy_modules() -> None:
    modules = imported_by("import toolrepair")
    assert "toolrepair._salvage" in modules  # the probe sees what the import brings in
    assert lazy_in(modules) == []


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("import toolrepair; toolrepair.ToolRegistry([lambda query: query])", ["jsonschema"]),
        ("from toolrepair import fix_record", ["toolrepair._audit"]),
        ("import toolrepair.cli", ["toolrepair.cli", "argparse"]),
    ],
)
def test_each_is_imported_when_first_used(statement: str, expected: list[str]) -> None:
    modules = imported_by(statement)
    assert all(m in modules for m in expected), (expected, lazy_in(modules))


def test_the_lazy_names_are_the_functions() -> None:
    from toolrepair import _audit

    assert tr.audit_records is _audit.audit_records and tr.fix_record is _audit.fix_record
    assert {"audit_records", "fix_record"} <= set(tr.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        getattr(tr, "nope")
