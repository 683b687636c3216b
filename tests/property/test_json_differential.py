"""The lenient decoder against ``json.loads`` (issue 18, Done when): on valid JSON it agrees
exactly and repairs nothing; on mutated JSON it refuses, or repairs only as documented (the
table in ``fuzz/json_test_suite.py``, which also runs JSONTestSuite), and a truncated text is
never completed."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolrepair import ArgumentError
from toolrepair._args import decode_arguments
from toolrepair._args._decode import decode_json_value
from toolrepair._salvage._base import ReadContext
from toolrepair._salvage._json import JsonFailure, decode_payload

_SPEC = importlib.util.spec_from_file_location(
    "json_test_suite", Path(__file__).resolve().parents[2] / "fuzz" / "json_test_suite.py"
)
assert _SPEC is not None and _SPEC.loader is not None
SUITE = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = SUITE  # its dataclass looks itself up there
_SPEC.loader.exec_module(SUITE)
DOCUMENTED: dict[str, str] = SUITE.DOCUMENTED

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

LEAF = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
)
VALUES = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=16,
)
FORMATS = st.fixed_dictionaries(
    {
        "indent": st.none() | st.integers(0, 3) | st.just("\t"),
        "ensure_ascii": st.booleans(),
        "sort_keys": st.booleans(),
        "separators": st.none() | st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]),
    }
)


def finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(finite, value.values()))
    if isinstance(value, list):
        return all(map(finite, value))
    return True


def reference(text: str, *, strict: bool = True) -> tuple[bool, Any]:
    """json.loads's verdict, with what the decoder refuses by design: NaN/Infinity and floats
    that overflow (not JSON numbers a tool can use)."""

    def refuse(_: str) -> Any:
        raise ValueError("non-finite")

    try:
        value = json.loads(text, strict=strict, parse_constant=refuse)
    except (ValueError, RecursionError):
        return False, None
    return finite(value), value


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same JSON types (True is not 1)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same, a, b))
    kinds = (bool, int, float, str, type(None))
    return next(k for k in kinds if isinstance(a, k)) is next(k for k in kinds if isinstance(b, k)) and a == b


@SETTINGS
@given(VALUES, FORMATS)
def test_json_from_values_decodes_exactly_with_no_repair(value: Any, fmt: dict[str, Any]) -> None:
    text = json.dumps(value, **fmt)
    decoded, events = decode_json_value(text)
    assert same(decoded, json.loads(text)) and events == ()
    if isinstance(value, dict):
        assert decode_arguments(text) == (json.loads(text), ())


MUTATION_CHARS = st.sampled_from([*",\"'}]{[: /\\\nx0.e-tn", "//", "/*", "*/", "True", "None", "\u00a0"])


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str, str]:
    """(original, mutated, mutation) from the JSON text of a generated value."""
    original = json.dumps(draw(VALUES), **draw(FORMATS))
    mutation = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "twice"]))
    text = original
    for _ in range(2 if mutation == "twice" else 1):
        i = draw(st.integers(0, len(text)))
        if mutation == "truncate":
            text = text[:i]
        elif mutation in ("delete", "twice") and i < len(text) and draw(st.booleans()):
            text = text[:i] + text[i + 1 :]
        elif mutation == "replace" and i < len(text):
            text = text[:i] + draw(MUTATION_CHARS) + text[i + 1 :]
        else:
            text = text[:i] + draw(MUTATION_CHARS) + text[i:]
    return original, text, mutation


@SETTINGS
@given(mutated())
def test_mutated_json_agrees_refuses_or_repairs_as_documented(case: tuple[str, str, str]) -> None:
    original, text, mutation = case
    valid, expected = reference(text)
    try:
        decoded, events = decode_json_value(text)
    except ArgumentError as error:
        assert not valid, (text, error)  # valid JSON is never refused
        return
    if valid:
        assert same(decoded, expected) and events == (), text
        return
    # Invalid JSON accepted: never by completing a truncated text...
    assert not (
        mutation == "truncate" and text.strip() and original.startswith(text) and not text.rstrip().endswith(("*/",))
    ), (text, decoded)
    # ...and only through documented repairs, each reported, or strict=False's control characters.
    if not events:
        loose, value = reference(text, strict=False)
        assert loose and same(decoded, value), text
    for event in events:
        assert event.kind == "decode"
        assert any(event.message.startswith(prefix) for prefix in DOCUMENTED), event.message


def test_the_suite_runner_on_files_of_each_kind(tmp_path: Path, capsys: Any) -> None:
    # A stand-in directory (JSONTestSuite itself is not vendored; the runner takes its path).
    files = {
        "y_ok.json": b'{"a": [1, 2.50, "x"]}',
        "y_top_number.json": b"-0.5e3",
        "n_trailing_comma.json": b"[1,]",
        "n_truncated.json": b'{"a": 1',
        "n_not_utf8.json": b'["\xff"]',
        "n_raw_newline.json": b'["a\nb"]',
        "i_deep.json": b"[" * 500 + b"]" * 500,
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    assert SUITE.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "y_: 2 files: accepted 2" in out and "n_: 4 files: accepted 2, refused 2" in out
    assert "i_: 1 files: refused 1" in out and "violations: 0" in out
    # A valid file the decoder got wrong, or an undocumented acceptance, is a violation.
    (tmp_path / "y_refused.json").write_bytes(b'{"a": 1')
    assert SUITE.main([str(tmp_path)]) == 1
    assert "VIOLATION y_refused.json" in capsys.readouterr().out
    assert SUITE.main([str(tmp_path / "empty")] if (tmp_path / "empty").mkdir() is None else []) == 2


def test_whitespace_json_does_not_allow_is_a_reported_repair() -> None:
    assert decode_json_value("[]\u00a0")[1][0].message.startswith("Removed whitespace JSON does not allow")
    assert decode_json_value("\u2028{}")[1][0].message.startswith("Removed whitespace JSON does not allow")
    assert decode_json_value(" \n[]\r\n\t") == ([], ())


@SETTINGS
@given(
    st.lists(VALUES, max_size=4) | st.dictionaries(st.text(max_size=6), VALUES, max_size=4),
    FORMATS,
    st.data(),
    st.sampled_from(["", "{", " x"]),
)
def test_a_payload_cut_before_the_next_opener_is_truncated(
    value: Any, fmt: dict[str, Any], data: st.DataObject, after: str
) -> None:
    """Salvage reads a payload up to the next opener of its dialect: one cut anywhere before it
    (a run of openers, a reply cut and resumed) is `truncated`, never a value and never
    `undecodable`; cut after a bracket, comma or colon, at the cut itself."""
    doc = json.dumps(value, **fmt)
    cut = data.draw(st.integers(1, len(doc) - 1))
    got = decode_payload(doc[:cut] + "<tool_call>" + after, 0, ReadContext(), "<tool_call>")
    assert isinstance(got, JsonFailure) and got.reason == "truncated", (doc[:cut], got)
    if doc[cut - 1] in "[{,:" and re.sub(r"\\.", "", doc[:cut]).count('"') % 2 == 0:  # not in a string
        assert got.pos == cut
