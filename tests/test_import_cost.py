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
    # The salvage engine: on the first reply salvaged or streamed, or the first of its names
    # looked up (a registry that repairs native calls only never imports it).
    "toolrepair._salvage",
    "toolrepair._trusted_stream",
    # Once it is imported, the table of built-in dialects, which imports every dialect
    # module, still waits for the first salvage.
    "toolrepair._salvage._registry",
    "toolrepair._salvage.xml_family",
    "toolrepair._salvage.token_family",
    "toolrepair._salvage.json_family",
    # Readers the built-in tag dialect reaches only from a read (the dialect families import
    # them on the first salvage): the JSON block's tail, attribute calls and XML text values.
    "toolrepair._salvage.json_blocks",
    "toolrepair._salvage.attr_call",
    "toolrepair._salvage._xml_text",
    # The third-party pattern module (``\p{...}`` classes): on the first name normalised or
    # argument name matched, and on the first line of a reply that may hold inline HTML or a link.
    "regex",
    # A history's repair and the log tools' counts: on first use.
    "toolrepair._history",
    "toolrepair._report",
    # Standard modules only some calls need: results, schemas from hints, ids, suggestions, logs.
    "logging",
    "datetime",
    "decimal",
    "uuid",
    "hashlib",
    "secrets",
    "difflib",
    "base64",
)

#: A registry with one tool, as the probes build it.
REGISTRY = "import toolrepair\ndef web_search(query: str) -> str: return query\nregistry = toolrepair.ToolRegistry([web_search])"

PROBE = """
import json, sys
before = set(sys.modules)
{statement}
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def imported_by(statement: str) -> list[str]:
    """The modules ``statement`` imports in a fresh interpreter. ``-S`` (this interpreter's path
    put back by hand): a site start-up that imports logging or pathlib itself would hide them."""
    code = f"import sys; sys.path[:0] = {sys.path!r}\n" + PROBE.format(statement=statement)
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True)
    modules: list[str] = json.loads(out.stdout)
    return modules


def lazy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == lazy or m.startswith(lazy + ".") for lazy in LAZY)]


def test_import_toolrepair_imports_none_of_the_lazy_modules() -> None:
    modules = imported_by("import toolrepair")
    assert "toolrepair._registry" in modules  # the probe sees what the import brings in
    assert lazy_in(modules) == []


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("import toolrepair; toolrepair.ToolRegistry([lambda query: query])", ["jsonschema"]),
        ("from toolrepair import fix_record", ["toolrepair._audit"]),
        ("import toolrepair.cli", ["toolrepair.cli", "argparse"]),
        (
            "import toolrepair; toolrepair.salvage_text('<tool_call>', allowed={'f'})",
            ["toolrepair._salvage.xml_family"],
        ),
        ("import toolrepair; toolrepair.DIALECTS", ["toolrepair._salvage._registry"]),
        (
            'import toolrepair; toolrepair.salvage_text(\'<<c>>{"name": "f", "arguments": {}}<</c>>\', [\'f\'],'
            " dialects=[toolrepair.TagDialect('mine', open='<<c>>', close='<</c>>')])",
            ["toolrepair._salvage.json_blocks"],
        ),
        ("import toolrepair; toolrepair.serialize_result(object())", ["datetime", "decimal", "uuid"]),
        ("import toolrepair; toolrepair.serialize_result(bytes([255]))", ["base64"]),
        ("import toolrepair; toolrepair.normalize_name('Web-Search')", ["regex"]),
        ("import toolrepair; toolrepair.model_profile('qwen3')", ["regex"]),
        ("import toolrepair; toolrepair.repair_history([])", ["toolrepair._history"]),
        ("from toolrepair import HistoryReport", ["toolrepair._history"]),
        ("from toolrepair import AuditReport", ["toolrepair._report"]),
        ("from toolrepair import StreamSalvager", ["toolrepair._salvage._stream"]),
        ("import toolrepair; toolrepair.ToolRegistry([], model='qwen3')", ["toolrepair._salvage._profiles"]),
        (f"{REGISTRY}; registry.salvage('Sure.')", ["toolrepair._salvage._engine"]),
        (f"{REGISTRY}; registry.stream()", ["toolrepair._trusted_stream"]),
    ],
)
def test_each_is_imported_when_first_used(statement: str, expected: list[str]) -> None:
    modules = imported_by(statement)
    assert all(m in modules for m in expected), (expected, lazy_in(modules))


def test_a_registry_that_repairs_native_calls_never_imports_the_salvage_engine() -> None:
    # Name drift and a misnamed key, repaired and run (the probe fails if the outcome differs).
    run = REGISTRY + "\noutcome = registry.run({'name': 'WebSearch', 'arguments': '{\"Query\": \"x\"}'})"
    modules = imported_by(run + "\nassert outcome.ok and outcome.content == 'x', outcome")
    assert "jsonschema" in modules  # the arguments were checked against the tool's schema
    assert [m for m in modules if m.startswith("toolrepair._salvage")] == []


def test_the_lazy_names_are_the_functions() -> None:
    from toolrepair import _audit, _history, _report, _salvage

    assert tr.audit_records is _audit.audit_records and tr.fix_record is _audit.fix_record
    assert tr.repair_history is _history.repair_history and tr.HistoryReport is _history.HistoryReport
    assert tr.AuditReport is _report.AuditReport
    assert tr.salvage_text is _salvage.salvage_text and tr.StreamSalvager is _salvage.StreamSalvager
    assert all(getattr(tr, name) is not None for name in tr.__all__)
    assert set(tr.__all__) <= set(dir(tr))
    assert {"audit_records", "fix_record", "repair_history", "HistoryReport", "AuditReport"} <= set(tr.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        getattr(tr, "nope")


def test_every_public_name_is_bound_at_import_or_in_the_lazy_table() -> None:
    # The package names each lazy export three times (for type checkers, the table, `__all__`):
    # in a fresh interpreter, what `import toolrepair` leaves unbound is exactly the table.
    unbound = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path[:0] = {sys.path!r}\n"
                "import json, toolrepair as t; print(json.dumps(sorted(set(t.__all__) - set(vars(t)))))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert unbound == sorted(tr._LAZY)


def test_the_built_in_profiles_name_built_in_dialects() -> None:
    # The table is taken as written at import (checking it would import every dialect), so the
    # check is here: each built-in profile is the one the checking constructor builds.
    for name, profile in tr.MODEL_PROFILES.items():
        built = tr.ModelProfile(name, dialects=profile.dialects, reasoning=profile.reasoning, opened=profile.opened)
        assert built == profile and all(d in tr.DIALECTS for d in profile.dialects)


# Patterns only some inputs reach are compiled on first use (``toolrepair._lazy.lazy``), so the
# import compiles none of them: a pattern of each such table, unbuilt after the import.
LAZY_PATTERNS = (
    "toolrepair._salvage._mask:_INLINE_HTML",
    "toolrepair._salvage._mask:_LINK_TAIL",
    "toolrepair._salvage._mask:_HTML",
    "toolrepair._salvage._mask:_FENCE_BODY",
    "toolrepair._salvage._mask:_WIDE",
    "toolrepair._salvage._mask:_RUN_CODE",
    "toolrepair._salvage._mask:_PLAIN",
    "toolrepair._salvage._mask:_ITEM_KEPT",
    "toolrepair._salvage._mask:_BLANKS",
    "toolrepair._args._decode:_CHAR_NAME",
    "toolrepair._args._schema:_KEY_NOISE",
    "toolrepair._names:_WORDS",
    "toolrepair._names:_DROP",
    "toolrepair._salvage._profiles:_BY_KEY",
    "toolrepair._salvage.tag:_ATTRIBUTE",
)


def test_import_toolrepair_compiles_none_of_the_lazy_patterns() -> None:
    probe = "; ".join(
        f"import {module}; print({module}.{name}.cache_info().currsize)"
        for module, name in (entry.split(":") for entry in LAZY_PATTERNS)
    )
    code = f"import sys; sys.path[:0] = {sys.path!r}; import toolrepair; {probe}"
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0"] * len(LAZY_PATTERNS)


@pytest.mark.parametrize(
    ("text", "built"),
    [
        ("[a](b `c`) <b>`d`</b>\n", ["_LINK_TAIL", "_INLINE_HTML"]),
        ("```\ncode\n```\n", ["_FENCE_BODY"]),
        ("<div>\n`html`\n</div>\n", ["_HTML"]),
        ("a\nb\n`c`\n", ["_PLAIN", "_WIDE"]),
        ("- a\n- b\n\n`c`\n", ["_ITEM_KEPT"]),
    ],
)
def test_a_lazy_pattern_is_built_once_its_input_comes(text: str, built: list[str]) -> None:
    from toolrepair._salvage import _mask

    for name in built:  # unbuilt first, whatever this process read before (else it proves nothing)
        getattr(_mask, name).cache_clear()
    assert all(getattr(_mask, name).cache_info().currsize == 0 for name in built)
    mask = _mask.CodeMask(1_000_000)
    for s in range(len(text)):  # asked at each offset (the text holds code: the mask reads it)
        mask.covers(text, 0, s, True)
    assert all(getattr(_mask, name).cache_info().currsize == 1 for name in built)
