"""No silent wrong values (issue 18): numbers keep the model's spelling, floats become ints only
when the text is an integer, guessed quotes and Python escapes are read as written or refused,
and a repeated keyword is refused."""

from __future__ import annotations

import ast
import copy
import json
import math
import pickle
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._args import decode_arguments
from toolrepair._args._decode import SpelledFloat, read_float


def as_text(a: str) -> str:
    return a


def as_int(a: int) -> int:
    return a


def as_number(a: float) -> float:
    return a


# One registry runs the same calls across the tables on purpose: no repeat bound.
REGISTRY = tr.ToolRegistry([as_text, as_int, as_number], max_repeats=None)


# -- numbers for a str parameter: the model's spelling ------------------------------------------
@pytest.mark.parametrize(
    ("number", "expected"),
    [
        ("1.10", "1.10"),
        ("2.50", "2.50"),
        ("1e3", "1e3"),
        ("1E3", "1E3"),
        ("1.0e-5", "1.0e-5"),
        ("100000000000000000000000.0", "100000000000000000000000.0"),
        ("-0.0", "-0.0"),
        ("0.1", "0.1"),
        ("21.5", "21.5"),
        ("5", "5"),
        ("-12", "-12"),
        ("12345678901234567", "12345678901234567"),
        ("9007199254740993.0", "9007199254740993.0"),
    ],
)
@pytest.mark.parametrize("shape", ['{{"a": {}}}', "{{'a': {},}}", '{{"a": {}'], ids=["json", "lenient", "cut"])
def test_a_number_for_a_str_parameter_keeps_its_spelling(number: str, expected: str, shape: str) -> None:
    text = shape.format(number)
    if shape.endswith("{}"):  # the truncated shape is refused, not completed
        with pytest.raises(tr.ToolExecutionError, match="truncated"):
            REGISTRY.execute("as_text", text)
        return
    assert REGISTRY.execute("as_text", text) == expected
    if shape.startswith("{{'"):
        return
    # The same through salvage: a call written in text carries the spelling to the tool.
    reply = f'<tool_call>{{"name": "as_text", "arguments": {text}}}</tool_call>'
    (call,) = REGISTRY.salvage(reply).calls
    assert REGISTRY.execute(call) == expected


def test_the_coercion_is_recorded() -> None:
    outcome = REGISTRY.run({"name": "as_text", "arguments": '{"a": 1.10}'})
    assert outcome.ok and outcome.value == "1.10"
    assert [e.kind for e in outcome.events] == ["coerce"] and outcome.events[0].after == "1.10"


# -- floats for an int parameter: exact from the text, or refused --------------------------------
@pytest.mark.parametrize(
    ("number", "expected"),
    [
        ("5.0", 5),
        ("-3.00", -3),
        ("1e3", 1000),
        ("1.5e1", 15),
        ("12345678901234567.0", 12345678901234567),
        ("9007199254740993.0", 9007199254740993),
        ("1.152921504606847e+18", 1152921504606847000),
        ("1e300", 10**300),
        ("0e5", 0),
        ("1.5", None),
        ("1.00000000000000001", None),
        ("4503599627370497.5", None),
        ("1e-5", None),
    ],
)
def test_a_float_for_an_int_parameter_is_exact_or_refused(number: str, expected: int | None) -> None:
    for text in (f'{{"a": {number}}}', f"{{'a': {number},}}"):
        if expected is None:
            with pytest.raises(tr.ToolExecutionError, match="must be an integer"):
                REGISTRY.execute("as_int", text)
        else:
            value = REGISTRY.execute("as_int", text)
            assert type(value) is int and value == expected


def test_native_floats_still_coerce_by_their_value() -> None:
    assert REGISTRY.execute("as_int", {"a": 5.0}) == 5
    assert REGISTRY.execute("as_int", {"a": 2.0**60}) == 2**60  # the float is the value given
    assert REGISTRY.execute("as_text", {"a": 2.5}) == "2.5"
    with pytest.raises(tr.ToolExecutionError, match="must be an integer"):
        REGISTRY.execute("as_int", {"a": 1.5})


def test_a_number_parameter_gets_the_float() -> None:
    value = REGISTRY.execute("as_number", '{"a": 1.10}')
    assert value == 1.1 and isinstance(value, float)


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("1.5", False),
        ("0.1", False),
        ("-2.25", False),
        ("1e+16", True),
        ("1.5e-07", False),
        ("1.10", True),
        ("1e3", True),
        ("9007199254740992.0", True),
        ("-9007199254740992.0", True),
        ("9007199254740991.0", False),
    ],
)
def test_read_float_keeps_a_spelling_only_where_the_float_loses_it(text: str, spelled: bool) -> None:
    value = read_float(text)
    assert value == float(text)
    assert isinstance(value, SpelledFloat) is spelled
    if spelled:
        assert value.text == text  # type: ignore[attr-defined]


def test_a_spelled_float_is_a_float_everywhere_else() -> None:
    value = SpelledFloat("2.50")
    assert value == 2.5 and json.dumps(value) == "2.5" and hash(value) == hash(2.5)
    for clone in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert clone == 2.5 and type(clone) in (float, SpelledFloat)
    assert type(pickle.loads(pickle.dumps(value))) is float


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_spelling_reaches_a_str_parameter_as_written(x: float) -> None:
    # "-0" is an int literal, and ints are read as ints (0): the one spelling not kept.
    for spelling in {repr(x), f"{x:e}", f"{x:.17g}", f"{x:.3f}"} - {"-0"}:
        assert REGISTRY.execute("as_text", f'{{"a": {spelling}}}') == spelling


@given(st.integers(-(10**30), 10**30), st.sampled_from([".0", ".00", "e0", ".0e0"]))
def test_an_integer_written_as_a_float_is_that_integer(n: int, suffix: str) -> None:
    assert REGISTRY.execute("as_int", f'{{"a": {n}{suffix}}}') == n


# -- quotes: guesses refused like ["a" "b"] -------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        '{"key": ""value"}',
        '{"a": ["value1" value2", "value3"]}',
        '{""answer"": ""5""}',
        '{"a": ["a" "b"]}',
        '{"a": """}',
        '{"a": ["He said "hi" ok"]}',
        '["value1" value2", "value3"]',
    ],
)
def test_quote_guesses_are_refused(text: str) -> None:
    with pytest.raises(tr.ArgumentError) as info:
        decode_arguments(text)
    assert info.value.reason in ("ambiguous", "not-an-object")
    if text.startswith("{"):
        assert info.value.reason == "ambiguous"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "He said "hi" ok"}', 'He said "hi" ok'),
        ('{"a": "say "hi""}', 'say "hi"'),
        ('{"a": "x" "b": 1}', "x"),
        ('{"a": ""}', ""),
        ('{"a": "5""}', '5"'),
    ],
)
def test_unambiguous_quotes_still_decode(text: str, expected: str) -> None:
    assert decode_arguments(text)[0]["a"] == expected


# -- Python escapes in single-quoted strings --------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        r"\x1f",
        r"\x00",
        r"\U000e0001",
        r"\a\v",
        r"\101\0\12",
        r"\N{BULLET}",
        r"\N{LATIN SMALL LETTER A}",
        r"it\'s",
        r"tab\there",
        r"\q",
        r"C:\new",
        "a\\\nb",
        r"\u00e9",
        r"\x41\x42",
    ],
)
def test_single_quoted_strings_read_python_escapes_as_python(body: str) -> None:
    with warnings.catch_warnings():  # Python reads '\q' as backslash-q, with a warning (3.12: SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", SyntaxWarning)
        expected = ast.literal_eval("'" + body + "'")  # the reference: Python's own reading
    assert decode_arguments("{'a': '" + body + "'}")[0] == {"a": expected}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (r"\x4z", "undecodable"),
        (r"\x", "undecodable"),
        (r"\U00110000", "undecodable"),
        (r"\N{NO SUCH NAME}", "undecodable"),
        (r"C:\Users", "undecodable"),
        (r"\N{", "undecodable"),
    ],
)
def test_python_escapes_python_refuses_are_refused(body: str, reason: str) -> None:
    with pytest.raises(SyntaxError):
        ast.literal_eval("'" + body + "'")  # Python refuses it too
    with pytest.raises(tr.ArgumentError) as info:
        decode_arguments("{'a': '" + body + "'}")
    assert info.value.reason == reason


@pytest.mark.parametrize("text", ["{'a': '\\x4", "{'a': '\\U0001", "{'a': '\\N{BUL"])
def test_an_escape_cut_by_the_end_is_truncated(text: str) -> None:
    with pytest.raises(tr.ArgumentError) as info:
        decode_arguments(text)
    assert info.value.reason == "truncated"


def test_double_quoted_strings_keep_their_json_reading() -> None:
    assert decode_arguments('{"a": "\\x41"}')[0] == {"a": "\\x41"}


# -- pythonic: a repeated keyword ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("[f(amount=1, amount=1000)]", []),
        ("[f(amount=1), f(amount=1000)]", [{"amount": 1}, {"amount": 1000}]),
        ("[f(a=1, b=1)]", [{"a": 1, "b": 1}]),
        ("[f(a={'k': 1, 'k': 2})]", [{"a": {"k": 2}}]),  # a dict display repeats keys in Python too
    ],
)
def test_pythonic_refuses_a_repeated_keyword(text: str, calls: list[dict[str, Any]]) -> None:
    result = tr.salvage_text(text, ["f"])
    assert [c.arguments for c in result.calls] == calls
    if not calls:
        assert [r.reason for r in result.rejected] == ["undecodable-arguments"]
        with pytest.raises(SyntaxError):
            compile(text, "<reply>", "eval")  # Python refuses it


FLOAT_TEXTS = (
    st.floats(allow_nan=False, allow_infinity=False)
    .flatmap(
        lambda x: st.sampled_from(
            [repr(x), f"{x:e}", f"{x:.17g}", f"{x:.3f}", f"{x:.1f}", f"{x:.15g}", f"{x:.16g}", f"{x:f}"]
        )
    )
    .filter(lambda t: "." in t or "e" in t)
)


@given(FLOAT_TEXTS | st.from_regex(r"\A-?(0|[1-9][0-9]{0,18})\.[0-9]{1,18}\Z"))
def test_read_float_keeps_exactly_the_spellings_the_float_loses(text: str) -> None:
    if not math.isfinite(float(text)):  # a rounded spelling of the largest float may overflow
        return
    value = read_float(text)
    loses = float.__repr__(float(text)) != text or abs(float(text)) >= 2.0**53
    assert isinstance(value, SpelledFloat) is loses, text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[as_text(a=1.10)]", "1.10"),
        ("[as_text(a=-2.50)]", "-2.50"),
        ("[as_text(a=1e3)]", "1e3"),
        ("[as_text(a=100000000000000000000000.0)]", "100000000000000000000000.0"),
        ('[as_text(b="é", a=1.10)]', None),
        ("[as_text(\r a=2.50)]", "2.50"),
        ("[as_text(\n\n a=2.50)]", "2.50"),
    ],
)
def test_pythonic_floats_keep_their_spelling_too(text: str, expected: str | None) -> None:
    registry = tr.ToolRegistry([as_text, as_int])
    (call,) = registry.salvage(text).calls
    if expected is None:  # an unexpected argument: refused, not mangled
        assert not registry.run(call).ok
        return
    assert registry.execute(call) == expected


def test_pythonic_floats_for_an_int_parameter_are_exact() -> None:
    registry = tr.ToolRegistry([as_int])
    (call,) = registry.salvage("[as_int(a=12345678901234567.0)]").calls
    assert registry.execute(call) == 12345678901234567
