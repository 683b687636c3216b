"""Tables for argument decoding, coercion and validation (toolrepair._args)."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest

from toolrepair._args import (
    CompiledSchema,
    check_nesting,
    compile_schema,
    decode_arguments,
    decode_value,
)
from toolrepair._args._decode import _MISSING, _Notes, _parse_lenient
from toolrepair._args._schema import _coerce_to, _is_type, _show
from toolrepair._errors import ArgumentError, format_expected
from toolrepair._limits import DEFAULT_LIMITS
from toolrepair._types import RepairEvent

DEFAULT_MAX_DEPTH = DEFAULT_LIMITS.max_depth
DEFAULT_MAX_CHARS = DEFAULT_LIMITS.max_argument_chars


def short_id(value: object) -> str | None:
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:30]}…({len(value)})"
    return None


def decode(raw: Any, **kwargs: Any) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
    return decode_arguments(raw, **kwargs)


def refusal(raw: Any, **kwargs: Any) -> ArgumentError:
    with pytest.raises(ArgumentError) as info:
        decode_arguments(raw, **kwargs)
    return info.value


# --------------------------------------------------------------------------------------------
# Decoding: valid JSON is untouched
# --------------------------------------------------------------------------------------------

VALID = [
    "{}",
    '{"a": 1}',
    '{"query": "cats", "limit": 5, "ok": true, "none": null, "x": -1.5e3}',
    '{"nested": {"list": [1, [2, [3]], {"k": "v"}]}}',
    ' \n\t{"a": "b"} \r\n',
    '{"text": "line one\nline two\ttabbed"}',  # raw control characters: strict=False
    '{"path": "C:\\\\Users\\\\me"}',
    '{"emoji": "\\ud83d\\ude00", "accent": "\\u00e9"}',
    '{"quote": "say \\"hi\\"", "apostrophe": "it\'s"}',
    '{"url": "http://example.com/a//b", "c": "/* not a comment */"}',
    '{"python": "True False None", "single": "\'x\'"}',
    '{"big": 123456789012345678901234567890, "neg": -0, "small": 1e-300}',
    '{"nul": "\\u0000", "lone": "\\ud800"}',
    '{"high then plain": "\\ud800\\u0041", "high then high": "\\ud800\\ud800"}',
]


@pytest.mark.parametrize("text", VALID)
def test_valid_json_is_decoded_as_json_loads_does_with_no_events(text: str) -> None:
    value, events = decode(text)
    assert value == json.loads(text, strict=False)
    assert events == ()


@pytest.mark.parametrize("text", VALID)
def test_valid_json_through_the_lenient_parser_gives_the_same_value(text: str) -> None:
    notes = _Notes()
    assert _parse_lenient(text, len(text) - len(text.lstrip()), 1000, notes, doubled=False) == json.loads(
        text, strict=False
    )
    assert notes.events() == ()


@pytest.mark.parametrize("text", VALID)
def test_valid_json_as_utf8_bytes(text: str) -> None:
    assert decode(text.encode("utf-8", "surrogatepass") if "\\ud800" not in text else text.encode())[0] == (
        json.loads(text, strict=False)
    )


def test_mapping_is_copied_and_none_is_empty() -> None:
    original = {"a": [1]}
    value, events = decode(original)
    assert value == original and value is not original and events == ()
    assert decode(MappingProxyType({"b": 2})) == ({"b": 2}, ())
    assert decode(None) == ({}, ())


def test_bytearray_and_memoryview() -> None:
    assert decode(bytearray(b'{"a": 1}'))[0] == {"a": 1}
    assert decode(memoryview(b'{"a": 1}'))[0] == {"a": 1}


# --------------------------------------------------------------------------------------------
# Decoding: repairs, each with its event
# --------------------------------------------------------------------------------------------

REPAIRS: list[tuple[str, dict[str, Any], list[str]]] = [
    # trailing commas
    ('{"a": 1,}', {"a": 1}, ["Removed trailing comma at 7"]),
    ('{"a": [1, 2,],}', {"a": [1, 2]}, ["Removed trailing comma at 11 (and 1 more)"]),
    ('{"a": [1,\n]}', {"a": [1]}, ["Removed trailing comma"]),
    # single quotes
    ("{'a': 'b'}", {"a": "b"}, ["Replaced single quotes with double quotes at 1 (and 1 more)"]),
    ("{'text': 'say \"hi\"'}", {"text": 'say "hi"'}, ["Replaced single quotes"]),
    ("{'a': 'it\\'s'}", {"a": "it's"}, ["Replaced single quotes"]),
    ("{'a': '\\u00e9\\n'}", {"a": "é\n"}, ["Replaced single quotes"]),
    # unquoted keys
    (
        "{a: 1, b_c: 2, $d: 3, e-f: 4}",
        {"a": 1, "b_c": 2, "$d": 3, "e-f": 4},
        ["Quoted bare key at 1 (and 3 more)"],
    ),
    ("{ключ: 1}", {"ключ": 1}, ["Quoted bare key at 1"]),
    # Python literals, outside strings only
    (
        '{"a": True, "b": False, "c": None}',
        {"a": True, "b": False, "c": None},
        [
            "Replaced Python literal True with true at 6",
            "Replaced Python literal False with false at 17",
            "Replaced Python literal None with null at 29",
        ],
    ),
    ("{'a': 'True', 'b': None}", {"a": "True", "b": None}, ["Replaced Python literal None with null at 19"]),
    (
        '{"a": [True, True]}',
        {"a": [True, True]},
        ["Replaced Python literal True with true at 7 (and 1 more)"],
    ),
    # comments outside strings
    ('{"a": 1, // the count\n"b": 2}', {"a": 1, "b": 2}, ["Removed comment at 9"]),
    ('{"a": /* inline */ 1}', {"a": 1}, ["Removed comment at 6"]),
    ('/* lead */ {"a": 1} // tail', {"a": 1}, ["Removed comment at 0 (and 1 more)"]),
    ("{'url': 'http://x.org/*'}", {"url": "http://x.org/*"}, ["Replaced single quotes"]),
    ('{"a": 1 // last', None, []),  # placeholder replaced below (truncated)
    # missing comma between members
    ('{"a": 1 "b": 2}', {"a": 1, "b": 2}, ["Inserted missing comma at 8"]),
    ('{"a": "x" "b": 2}', {"a": "x", "b": 2}, ["Inserted missing comma at 10"]),
    ('{"a": "x" "b\\"c": 2}', {"a": "x", 'b"c': 2}, ["Inserted missing comma at 10"]),
    ('{"a": "x" \'b\': 2}', {"a": "x", "b": 2}, ["Inserted missing comma at 10", "Replaced single quotes"]),
    ('{"a": "x"\n  "b": "y"}', {"a": "x", "b": "y"}, ["Inserted missing comma"]),
    ('{"a": [1] b: 2}', {"a": [1], "b": 2}, ["Inserted missing comma", "Quoted bare key"]),
    ('{"a": {"x": 1} "b": true}', {"a": {"x": 1}, "b": True}, ["Inserted missing comma at 15"]),
    # smart quotes used as delimiters
    ("{“a”: “b”}", {"a": "b"}, ["Replaced smart quotes with double quotes at 1 (and 1 more)"]),
    ("{‘a’: ‘don’t’}", {"a": "don’t"}, ["Replaced smart quotes", "Kept unescaped quote as string content"]),
    ("{“a”: “say “hi” now”}", {"a": "say “hi” now"}, ["Replaced smart quotes", "Kept unescaped quote"]),
    ('{"a": "he said “hi”"}', None, []),  # valid JSON: smart quotes inside a string are content
    # invalid escapes kept literal
    (
        '{"p": "C:\\Users\\me"}',
        {"p": "C:\\Users\\me"},
        ["Kept invalid escape as literal text at 9 (and 1 more)"],
    ),
    ('{"p": "C:\\users"}', {"p": "C:\\users"}, ["Kept invalid escape as literal text at 9"]),
    ('{"re": "\\d+\\.\\w"}', {"re": "\\d+\\.\\w"}, ["Kept invalid escape"]),
    ('{"a": "\\ud800\\uxyz0"}', {"a": "\ud800\\uxyz0"}, ["Kept invalid escape as literal text at 13"]),
    ('{"a": "don\\\'t"}', {"a": "don't"}, ["Replaced invalid escape of a quote with the quote at 10"]),
    # doubled braces (template leakage)
    ('{{"a": 1}}', {"a": 1}, ["Collapsed doubled braces at 0"]),
    ('{{"a": {{"b": [1, {{}}]}}}}', {"a": {"b": [1, {}]}}, ["Collapsed doubled braces"]),
    ('{{"code": "f{x}"}}', {"code": "f{x}"}, ["Collapsed doubled braces"]),
    # double encoding
    ('"{\\"a\\": 1}"', {"a": 1}, ["Decoded double-encoded JSON string at 0"]),
    (
        "\"{'a': 1,}\"",
        {"a": 1},
        ["Decoded double-encoded", "Replaced single quotes", "Removed trailing comma"],
    ),
    (json.dumps(json.dumps({"q": "x", "n": [1]})), {"q": "x", "n": [1]}, ["Decoded double-encoded"]),
    # Markdown fences
    ('```json\n{"a": 1}\n```', {"a": 1}, ["Removed Markdown code fence at 0"]),
    ('```\n{"a": 1}\n```\n', {"a": 1}, ["Removed Markdown code fence"]),
    ('~~~JSON \n{"a": 1}\n~~~', {"a": 1}, ["Removed Markdown code fence"]),
    ('```{"a": 1}```', {"a": 1}, ["Removed Markdown code fence"]),
    ('```json\n{"a": 1}', {"a": 1}, ["Removed Markdown code fence"]),  # unclosed fence, complete JSON
    (
        "```json\n{'a': 1,}\n```",
        {"a": 1},
        ["Removed Markdown code fence", "Replaced single quotes", "Removed trailing"],
    ),
    # unescaped quotes inside a string, where the reading is unambiguous
    (
        '{"text": "He said "hi" to me"}',
        {"text": 'He said "hi" to me'},
        ["Kept unescaped quote as string content at 18 (and 1 more)"],
    ),
    ('{"text": "He said "hi""}', {"text": 'He said "hi"'}, ["Kept unescaped quote as string content"]),
    ('{"a": "5" tall", "b": 1}', {"a": '5" tall', "b": 1}, ["Kept unescaped quote"]),
    (
        "{'a': 'rock 'n' roll'}",
        {"a": "rock 'n' roll"},
        ["Kept unescaped quote as string content at 12 (and 1 more)"],
    ),
    ("{'text': 'it's fine'}", {"text": "it's fine"}, ["Kept unescaped quote as string content at 12"]),
    # byte-order mark
    ('\ufeff{"a": 1}', {"a": 1}, ["Removed byte-order mark at 0"]),
    # many at once
    (
        "{query: 'cats', limit: 5, safe: True, // note\n}",
        {"query": "cats", "limit": 5, "safe": True},
        [
            "Quoted bare key",
            "Replaced single quotes",
            "Replaced Python literal True",
            "Removed comment",
            "Removed trailing comma",
        ],
    ),
]
REPAIRS = [case for case in REPAIRS if case[1] is not None]


@pytest.mark.parametrize(("text", "expected", "messages"), REPAIRS)
def test_repairs(text: str, expected: dict[str, Any], messages: list[str]) -> None:
    value, events = decode(text)
    assert value == expected
    assert all(event.kind == "decode" and event.tool is None for event in events)
    for message in messages:
        assert any(event.message.startswith(message) for event in events), (message, events)
    assert len(events) == len({event.message for event in events})


@pytest.mark.parametrize(("text", "expected", "messages"), REPAIRS)
def test_repairs_survive_surrounding_whitespace_and_bytes(
    text: str, expected: dict[str, Any], messages: list[str]
) -> None:
    assert decode(f"  {text}\n")[0] == expected
    assert decode(text.encode())[0] == expected


def test_repair_events_say_what_changed() -> None:
    _, events = decode("{'a': True,}")
    by_message = {event.message: event for event in events}
    assert by_message["Replaced Python literal True with true at 6"].before == "True"
    assert by_message["Replaced Python literal True with true at 6"].after == "true"
    assert by_message["Removed trailing comma at 10"].before == ","
    assert by_message["Replaced single quotes with double quotes at 1"].after == '"'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('  {"a": 1,}', "Removed trailing comma at 9"),
        ('```json\n{"a": 1,}\n```', "Removed trailing comma at 15"),
        ('\n\ufeff {"a": 1,}', "Removed trailing comma at 10"),
        ('\n\ufeff {"a": 1,}', "Removed byte-order mark at 1"),
        ('\n```json\n{"a": 1}\n```', "Removed Markdown code fence at 1"),
        ('  {{"a": 1}}', "Collapsed doubled braces at 2"),
    ],
)
def test_positions_are_positions_in_the_original_text(text: str, message: str) -> None:
    assert message in [event.message for event in decode(text)[1]]


@pytest.mark.parametrize(
    ("text", "position"),
    [('  {"a": 1}}', 10), ('```\n{"a": 1}}\n```', 12), ('  {"a": 02}', 8), ("  ", 2), ("```\n```", 4)],
)
def test_error_positions_are_positions_in_the_original_text(text: str, position: int) -> None:
    assert refusal(text).position == position


def test_smart_quotes_inside_a_json_string_are_content() -> None:
    assert decode('{"a": "he said “hi”"}') == ({"a": "he said “hi”"}, ())


# --------------------------------------------------------------------------------------------
# Decoding: refusals
# --------------------------------------------------------------------------------------------

REFUSALS: list[tuple[str, str, str]] = [
    # empty and prose
    ("", "empty", "Arguments are empty"),
    ("   \n\t", "empty", "Arguments are empty"),
    ("// nothing but a comment", "empty", "Arguments are empty"),
    ("```json\n```", "empty", "Arguments are empty"),
    ("Sure! Here are the arguments.", "undecodable", "Arguments are not JSON: unexpected 'Sure' at 0"),
    ("I cannot do that", "undecodable", "Arguments are not JSON"),
    ("<tool>", "undecodable", "Arguments are not JSON: unexpected '<' at 0"),
    ('Here: {"a": 1}', "undecodable", "Arguments are not JSON"),
    # not an object
    ("[1, 2]", "not-an-object", "Arguments must be a JSON object, got an array"),
    ('"hello"', "not-an-object", "Arguments must be a JSON object, got a string"),
    ('"[1]"', "not-an-object", "Arguments must be a JSON object, got an array"),
    ("5", "not-an-object", "Arguments must be a JSON object, got a number"),
    ("true", "not-an-object", "Arguments must be a JSON object, got a boolean"),
    ("null", "not-an-object", "Arguments must be a JSON object, got null"),
    ("None", "not-an-object", "got null"),
    ('"\\"{\\\\\\"a\\\\\\": 1}\\""', "not-an-object", "got a string"),  # triple encoding: decoded once only
    # non-finite and over-long numbers
    ('{"a": 1e999}', "undecodable", "Number '1e999' at 6 is not finite"),
    ('{"a": -1E400}', "undecodable", "is not finite"),
    ('{"a": NaN}', "undecodable", "NaN at 6 is not a finite number"),
    ('{"a": Infinity}', "undecodable", "Infinity at 6 is not a finite number"),
    ('{"a": -Infinity}', "undecodable", "Invalid number '-' at 6"),
    (
        '{"a": ' + "9" * 5000 + "}",
        "undecodable",
        "Number at 6 is too long (5000 characters; the limit is 4300)",
    ),
    # never guessed
    ('{"a": hello}', "undecodable", "Unexpected 'hello' at 6: string values must be quoted"),
    ('{"a": 1}}', "undecodable", "Unexpected text after the arguments at 8"),
    ('{"a": 1} {"b": 2}', "undecodable", "Unexpected text after the arguments at 9"),
    ('{"a": 1]', "undecodable", "Mismatched ']' at 7"),
    ('{"a": [1}', "undecodable", "Mismatched '}' at 8"),
    ('{"a" 1}', "ambiguous", "Ambiguous quote at 3: the string starting at 1 never ends if it is content"),
    ("{a 1}", "undecodable", "Expected ':' after key 'a' at 3, got '1'"),
    ('{"a": 1 : 2}', "undecodable", "Expected ',' or '}' at 8, got ':'"),
    ('{"a": [1 : 2]}', "undecodable", "Expected ',' or ']' at 9, got ':'"),
    ("{,}", "undecodable", "Expected a quoted key at 1, got ','"),
    ('{"a": 1,,}', "undecodable", "Expected a quoted key at 8"),
    ('{"a": [,]}', "undecodable", "Unexpected ',' at 7"),
    ("{1: 2}", "undecodable", "Expected a quoted key at 1, got '1'"),
    ('{"a": +1}', "undecodable", "Unexpected '+' at 6"),
    ('{"a": .5}', "undecodable", "Unexpected '.' at 6"),
    ('{"a": 1.}', "undecodable", "Invalid number '1.' at 6"),
    ('{"a": 0x1F}', "undecodable", "Expected ',' or '}' at 7, got 'x'"),
    ('{"a": 1b: 2}', "undecodable", "Expected ',' or '}' at 7, got 'b'"),
    ('{"a": 1 "b"}', "undecodable", "Expected ':' after key 'b' at 11"),
    ('{"a":\x00 1}', "undecodable", "Unexpected '\\x00' at 5"),
    ('{{"a": {"b": 1}}}', "undecodable", "Single '{' at 7 among doubled braces"),
    ('{{"a": 1}', "undecodable", "Single '}' at 8 among doubled braces"),
    ("{{{", "undecodable", "Expected a quoted key at 2"),
    # ambiguous: two readings, refuse
    ('{"zip": 02139}', "ambiguous", "Number '02139' at 8 has a leading zero: it is ambiguous"),
    ('{"a": -007}', "ambiguous", "leading zero"),
    ('{"a": [1 2]}', "ambiguous", "Missing comma between array elements at 9"),
    ('{"a": ["x" "y"]}', "ambiguous", "Ambiguous quote at 9: it may end the string or be part of it"),
    ('{"a": "x" "y"}', "ambiguous", "Ambiguous quote at 8"),
    ('{"a" "b": 1}', "ambiguous", "Ambiguous quote at 3"),
    (
        '{"a": "x"y}',
        "ambiguous",
        "Ambiguous quote at 8: the string starting at 6 never ends if it is content",
    ),
    ('{"a": [{"b": 1} {"c": 2}]}', "ambiguous", "Missing comma between array elements"),
]


@pytest.mark.parametrize(("text", "reason", "message"), REFUSALS, ids=short_id)
def test_refusals(text: str, reason: str, message: str) -> None:
    error = refusal(text)
    assert error.reason == reason
    assert message in str(error), str(error)
    assert error.message == str(error)


@pytest.mark.parametrize(
    ("text", "position"),
    [('{"a": 1}}', 8), ('{"zip": 02139}', 8), ('{"a": [1 2]}', 9), ('{"a": hello}', 6), ("", 0)],
)
def test_refusals_carry_the_position(text: str, position: int) -> None:
    assert refusal(text).position == position


@pytest.mark.parametrize("raw", [5, 1.5, [1], ("a",), object(), True])
def test_other_types_are_not_an_object(raw: Any) -> None:
    error = refusal(raw)
    assert error.reason == "not-an-object"
    assert str(error) == f"Arguments must be a JSON object, got {type(raw).__name__}"


def test_invalid_utf8_bytes() -> None:
    error = refusal(b'{"a": "\xff"}')
    assert (error.reason, error.position) == ("undecodable", 7)
    assert str(error) == "Arguments are not valid UTF-8 (at byte 7)"


# --------------------------------------------------------------------------------------------
# Decoding: truncation is never completed
# --------------------------------------------------------------------------------------------

TRUNCATED: list[tuple[str, str]] = [
    ('{"a": "hel', "Arguments are truncated: unterminated string starting at 6 (at character 10)"),
    ('{"a": "x\\', "unterminated string starting at 6"),
    ('{"a": "\\u00', "the text ends inside a \\u escape"),
    ('{"a": 12', "the text ends with 1 unclosed bracket (at character 8)"),
    ('{"a": 1.', "the text ends inside a number starting at 6"),
    ('{"a": -', "the text ends inside a number starting at 6"),
    ('{"a": 1e', "the text ends inside a number"),
    ('{"a": 1.5E+', "the text ends inside a number"),
    ('{"a"', "the text ends after key 'a' (at character 4)"),
    ('{"a":', "the text ends after the ':' of key 'a' (at character 5)"),
    ('{"a": ', "the text ends after the ':' of key 'a'"),
    ('{"a": 1,', "the text ends after the ',' at 7"),
    ('{"a": [1,', "the text ends after the ',' at 8"),
    ('{"a": [1, 2]', "the text ends with 1 unclosed bracket"),
    ('{"a": {"b": [', "the text ends with 3 unclosed brackets"),
    ("{", "the text ends with 1 unclosed bracket"),
    ('{"a": tr', "the text ends inside 'tr' at 6"),
    ('{"a": Fals', "the text ends inside 'Fals'"),
    ('{"a": n', "the text ends inside 'n'"),
    ('{"a": 1 /* note', "unterminated comment starting at 8"),
    ("{'a': 'x", "unterminated string starting at 6"),
    ("{“a”: “x", "unterminated string starting at 6"),
    ('{"a": "x" "b', "unterminated string starting at 10"),
    ('```json\n{"a": 1', "the text ends with 1 unclosed bracket"),
    ('{{"a": 1', "the text ends with 1 unclosed bracket"),
    ('"{\\"a\\": 1', "unterminated string"),
]


@pytest.mark.parametrize(("text", "message"), TRUNCATED)
def test_truncated(text: str, message: str) -> None:
    error = refusal(text)
    assert error.reason == "truncated"
    assert "truncated" in str(error)
    assert message in str(error), str(error)


DOCUMENTS = [
    '{"query": "cats and dogs", "limit": 10, "ratio": -1.5e-3, "flags": [true, false, null], "o": {"k": "\\u00e9\\n"}}',
    "{'a': True, b: [1, 2,], \"c\": None}",
    '{\n  "path": "C:\\\\tmp",\n  "items": [{"x": 0}, {"y": -0.25}]\n}',
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_prefix_of_a_document_is_truncated(document: str) -> None:
    assert decode(document)[0]
    for cut in range(1, len(document)):
        prefix = document[:cut]
        error = refusal(prefix)
        expected = "empty" if not prefix.strip() else "truncated"
        assert error.reason == expected, (prefix, str(error))


@pytest.mark.parametrize("document", DOCUMENTS)
@pytest.mark.parametrize("junk", [" x", "}", "]", ",", ' "k"', " 1"])
def test_a_document_with_trailing_junk_is_refused(document: str, junk: str) -> None:
    assert refusal(document + junk).reason in ("undecodable", "not-an-object")


# --------------------------------------------------------------------------------------------
# Decoding: limits and hostile input
# --------------------------------------------------------------------------------------------

N = 100_000


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * N, "too-deep"),
        ("[" * N + "]" * N, "too-deep"),
        ('{"a":' * N, "too-deep"),
        ('{"a":' * N + "1" + "}" * N, "too-deep"),
        ('{"a":' * (DEFAULT_MAX_DEPTH + 1) + "1" + "}" * (DEFAULT_MAX_DEPTH + 1), "too-deep"),
        ('{"a": ' + "[" * 150 + "]" * 150 + "}", "too-deep"),
        ("{" * N, "undecodable"),
        ("{" * N + "}" * N, "undecodable"),
        ('{"a": ' + "1" * N + "}", "undecodable"),
        ('{"a": ' + "1" * N, "undecodable"),
        ('{"a": 1' + "0" * N + ".5}", "undecodable"),
        ('{"a": 1.' + "5" * N + "}", None),
        ("{'a': 1." + "5" * N + "}", None),
        ('{"a": 1e999}', "undecodable"),
        ('{"a": "' + '"' * N + "}", "ambiguous"),
        ('{"a": "x"' + " " * N + 'y"}', None),
        ('{"a": "' + "\\" * N + '"}', None),
        ('{"a": "' + '" x' * N + '"}', "ambiguous"),  # a quote right after the opening one
        ('{"a": "x' + '" x' * N + '"}', None),
        ('{"a": "\x00"}', None),
        ('{"a": "\\ud800"}', None),
        ('{"a": "\ud800"}', None),
        ('{"\x00": "\udfff"}', None),
        ("{" + "/* " * N, "truncated"),
        ("{" + "/*" * N, "undecodable"),
        ("{" + "," * N + "}", "undecodable"),
        ("'" * N, "ambiguous"),
        ("{'a': '" + "'" * N, "ambiguous"),
        ("\x00" * N, "undecodable"),
        ("\ud800" * N, "undecodable"),
        ('{"a": [' + "1.5, " * 200 + "1e999]}", "undecodable"),
        ('{"a": [' + "1.5, " * 200 + '{"b": -1e999}]}', "undecodable"),
        ('{"a": [' + "1.5, " * 200 + "NaN]}", "undecodable"),
        ('{"a": [' + "1.5, " * 200 + "2.5]}", None),
    ],
    ids=short_id,
)
def test_hostile_input_gives_a_value_or_an_argument_error(text: str, reason: str | None) -> None:
    if reason is None:
        value, _ = decode(text)
        assert isinstance(value, dict)
    else:
        assert refusal(text).reason == reason


def test_depth_limit_is_exact() -> None:
    def nested(depth: int) -> str:
        return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)

    assert decode(nested(DEFAULT_MAX_DEPTH))[0]
    assert refusal(nested(DEFAULT_MAX_DEPTH + 1)).reason == "too-deep"
    assert decode(nested(5), max_depth=5)[0]
    assert refusal(nested(6), max_depth=5).reason == "too-deep"
    # the same bound on the lenient path
    assert decode(nested(5).replace('"a"', "a"), max_depth=5)[0]
    assert refusal(nested(6).replace('"a"', "a"), max_depth=5).reason == "too-deep"
    # and after a fence is stripped
    assert refusal("```\n" + nested(6) + "\n```", max_depth=5).reason == "too-deep"


def test_check_nesting_counts_arrays_and_objects() -> None:
    check_nesting({"a": [[1], {"b": []}]}, 4)
    with pytest.raises(ArgumentError) as info:
        check_nesting({"a": [[1], {"b": []}]}, 3)
    assert info.value.reason == "too-deep"
    assert str(info.value) == "Arguments nest deeper than 3 levels"


# The walk (check_nesting) is the one depth-and-finite check of what the C scanner read: it
# accepts exactly the values nested at most max_depth deep.

RECORDS = json.dumps(
    {"rows": [{"id": i, "name": f"item {i}", "price": i * 1.5, "tags": ["a", "b"]} for i in range(120)]}
)
# A long start, so that texts of any depth are long enough to be walked.
PAD = '{"pad": [' + "0, " * 300 + '0], "x": '


def deep_list(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def fooling_list(depth: int) -> str:
    """``depth`` nested arrays whose strings hold brackets: counted blindly, it nests 1 deep."""
    text = '["]"]'
    for _ in range(depth - 1):
        text = '["]", ' + text + ', "["]'
    return text


def nesting(value: Any) -> int:
    """The reference: nesting depth by recursion (the top container is 1)."""
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


WALKS = [
    # (text, max_depth, accepted: was proved by the former text proof; the walk decides alone)
    (RECORDS, DEFAULT_MAX_DEPTH, True),
    (RECORDS, 4, True),  # object, array, object, array: exactly 4
    (RECORDS, 3, False),
    (deep_list(9), DEFAULT_MAX_DEPTH, True),  # few pairs: no pass needed
    (deep_list(9), 8, False),
    ("[" + ", ".join([deep_list(8)] * 100) + "]", DEFAULT_MAX_DEPTH, True),  # 9 deep: all passes
    ("[" + ", ".join([deep_list(8)] * 100) + "]", 8, False),
    ("[" + ", ".join([deep_list(20)] * 100) + "]", DEFAULT_MAX_DEPTH, False),  # wide and deep: walked
    ("[" + ", ".join(["7"] * 300) + "]", DEFAULT_MAX_DEPTH, True),  # commas keep numbers apart
    ('{"name": "item 100", "t": true, "f": false, "n": null}', 5, True),
    # strings holding brackets: declined, whichever way they would fool a count
    ('{"a": "[[[["}', 5, False),
    ('{"a": "]]]"}', 5, False),
    ('{"[": 1}', 5, False),
    ('"[[["', 5, False),
    (fooling_list(20), 5, False),
    # escapes: only the quotes that delimit strings count
    ('{"a": "x\\"y", "b": [[1]]}', 5, True),
    ('{"a": "\\\\", "b": [1]}', 5, True),  # an escaped backslash, then the closing quote
    ('{"a": "a\\\\\\"\\\\\\\\", "b": [1]}', 5, True),  # "a\\\"\\\\"
    ('{"a": "\\"[", "b": 1}', 5, False),
    ('{"a": "\\\\\\"[", "b": 1}', 5, False),  # "\\\"[": the third backslash escapes the quote
    ('{"a": "a\\\\\\"[\\\\\\\\", "b": 1}', 5, False),  # "a\\\"[\\\\"
    ('{"a": "\\u005b\\u0022", "b": [1]}', 5, True),  # escaped '[' and '"' are not marks
    # non-ASCII and lone surrogates, escaped or raw
    ('{"é": "ü\\u00e9", "b": ["ж", "😀"]}', 5, True),
    ('{"a": "\\ud800", "b": "\ud800", "c": ["\\udfff"]}', 5, True),
    # numbers that overflow to inf, in every spelling
    ("[1e999]", 5, False),
    ('{"a": -1e999}', 5, False),
    ("[1E+400]", 5, False),
    ("[1e0400]", 5, False),
    ("[1" + "0" * 400 + ".0]", 5, False),
    ("[" + "9" * 209 + ".5e99]", 5, False),
    # finite numbers: proved, or declined when they look like an inf (the walk accepts them)
    ("[1e99, 1.5e-10, 123456789.25, -0.0, 1e+16, 5E-05]", 5, True),
    ("[" + "9" * 198 + ".5]", 5, True),  # 199 digits, fraction included
    ("[1e-400]", 5, False),
    ("[1e099]", 5, False),
    ('["550e8400-e29b-41d4"]', 5, False),  # hex that reads as an exponent
]


@pytest.mark.parametrize(("text", "max_depth", "proved"), WALKS, ids=short_id)
def test_the_walk_accepts_exactly_what_nests_within_the_limit(text: str, max_depth: int, proved: bool) -> None:
    value = json.loads(text)
    fits = nesting(value) <= max_depth
    finite = "Infinity" not in json.dumps(value)  # the reference: json's own float reading
    assert (fits and finite) or not proved  # what the former proof accepted fits
    if not fits:
        with pytest.raises(ArgumentError) as info:
            check_nesting(value, max_depth)
        assert info.value.reason == "too-deep"
    elif not finite:
        with pytest.raises(ValueError, match="inf"):
            check_nesting(value, max_depth)
    else:
        check_nesting(value, max_depth)


@pytest.mark.parametrize(
    ("inner", "reason"),
    [
        (RECORDS, None),
        ('{"q": "x\\"y", "r": "\\\\", "é": "ü", "s": "\\ud800\ud800"}', None),
        ('["[[[[", "]]]", "{{", "}"]', None),
        ('{"q": "a\\\\\\"[\\\\\\\\", "s": "\\ud800"}', None),
        (fooling_list(DEFAULT_MAX_DEPTH - 1), None),
        (fooling_list(DEFAULT_MAX_DEPTH), "too-deep"),
        (deep_list(DEFAULT_MAX_DEPTH - 1), None),
        (deep_list(DEFAULT_MAX_DEPTH), "too-deep"),
        (deep_list(DEFAULT_MAX_DEPTH, '"]]]]"'), "too-deep"),
        ("[1e999]", "undecodable"),
        ('{"a": -1e999}', "undecodable"),
        ("[1E+400]", "undecodable"),
        ("[1e0400]", "undecodable"),
        ("[1" + "0" * 400 + ".0]", "undecodable"),
        ("[1e-400, 1e099]", None),
    ],
    ids=short_id,
)
def test_long_texts_are_walked(inner: str, reason: str | None) -> None:
    text = PAD + inner + "}"
    if reason is None:
        assert decode(text) == (json.loads(text), ())
    else:
        assert refusal(text).reason == reason


def test_long_texts_with_long_strings_are_walked() -> None:
    text = json.dumps({"path": "a.py", "content": "x = [1]\n" * 3000, "tags": ["a", "b"], "n": 1.5})
    assert decode(text)[0] == json.loads(text)
    assert refusal(text[:-1] + ', "x": 1e999}').reason == "undecodable"


def test_size_limit() -> None:
    assert decode('{"a": "xxxx"}', max_chars=13)[0] == {"a": "xxxx"}
    error = refusal('{"a": "xxxxx"}', max_chars=13)
    assert (error.reason, str(error)) == (
        "too-large",
        "Arguments are too large (14 characters; the limit is 13)",
    )
    assert refusal(b'{"a": "xxxxx"}', max_chars=13).reason == "too-large"
    assert refusal(b"x" * 60, max_chars=13).reason == "too-large"
    assert refusal("{'a': 'xxxxx'}", max_chars=13).reason == "too-large"
    assert DEFAULT_MAX_CHARS == 10_000_000


def test_ten_megabytes() -> None:
    size = DEFAULT_MAX_CHARS - 100
    valid = json.dumps({"a": "x" * size})
    assert decode(valid)[0]["a"] == "x" * size
    broken = "{'a': '" + "x" * size + "',}"
    assert decode(broken)[0]["a"] == "x" * size
    assert refusal(valid[:-2]).reason == "truncated"
    assert refusal("y" * DEFAULT_MAX_CHARS).reason == "undecodable"
    assert refusal(valid + " " * 100).reason == "too-large"


def test_int_string_limit_never_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setattr(sys, "get_int_max_str_digits", sys.get_int_max_str_digits)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        for text in ('{"a": ' + "1" * 1000 + "}", "{'a': " + "1" * 1000 + "}"):
            assert refusal(text).reason == "undecodable"
    finally:
        sys.set_int_max_str_digits(old)


def _call(text: str) -> Callable[[], object]:
    def run() -> object:
        try:
            return decode_arguments(text, max_chars=10**8)
        except ArgumentError as error:
            return error

    return run


# name -> (document of size n, n). Work is counted in function calls (conftest.count_calls);
# the times are in benchmarks/bench_doubling.py.
LINEAR_CASES: dict[str, tuple[Callable[[int], str], int]] = {
    "lenient members": (lambda n: "{" + ", ".join(f"'k{i}': [True, {i}]" for i in range(n)) + ",}", 200),
    "truncated members": (lambda n: "{" + ", ".join(f'"k{i}": [{i}]' for i in range(n)), 200),
    "unescaped quotes": (lambda n: '{"a": "' + '"x ' * n + '"}', 2000),
    "quote then spaces": (lambda n: '{"a": "' + ('"' + " " * 20 + "x") * n + '"}', 2000),
    "invalid escapes": (lambda n: '{"a": "' + "\\q" * n + '"}', 2000),
    "comments": (lambda n: "{" + "/* c */ " * n + "}", 2000),
    "deep valid walk": (lambda n: json.dumps({"a": [[[i]] for i in range(n)]}), 400),
    "deep lenient": (
        lambda n: "{'a': " + "[" * min(n, 60) + "1" + "]" * min(n, 60) + ", 'b': [" + "1, " * n + "]}",
        400,
    ),
    "prose": (lambda n: "word " * n, 10000),
}


@pytest.mark.parametrize("name", list(LINEAR_CASES))
def test_decoding_work_is_linear(name: str, assert_linear_work: Any) -> None:
    make, size = LINEAR_CASES[name]
    assert_linear_work(lambda k: _call(make(k)), size)


# --------------------------------------------------------------------------------------------
# Schemas: compile
# --------------------------------------------------------------------------------------------

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "what to search for"},
        "limit": {"type": "integer", "minimum": 1},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "strict": {"type": "boolean"},
        "filters": {
            "type": "object",
            "properties": {"year": {"type": "integer"}, "lang": {"type": "string"}},
            "required": ["lang"],
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def test_expected_and_additional() -> None:
    compiled = compile_schema(SEARCH)
    assert isinstance(compiled, CompiledSchema)
    assert compiled.expected == {
        "required": ["query"],
        "optional": ["limit", "unit", "tags", "strict", "filters"],
    }
    assert compiled.allows_additional is False
    assert format_expected("search", compiled.expected).startswith("Expected parameters for 'search'")


@pytest.mark.parametrize(
    ("schema", "expected", "additional"),
    [
        ({}, {"required": [], "optional": []}, True),
        ({"type": "object"}, {"required": [], "optional": []}, True),
        (
            {"properties": {"b": {}, "a": {}}, "required": ["a", "b"]},
            {"required": ["b", "a"], "optional": []},
            True,
        ),
        ({"properties": {"a": {}}, "required": ["z", "a"]}, {"required": ["a", "z"], "optional": []}, True),
        (
            {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
            {"required": [], "optional": ["a"]},
            True,
        ),
        (
            {
                "$ref": "#/$defs/Args",
                "$defs": {"Args": {"properties": {"x": {}}, "additionalProperties": False}},
            },
            {"required": [], "optional": ["x"]},
            False,
        ),
        ({"$ref": "#/$defs/missing", "$defs": {}}, {"required": [], "optional": []}, True),
    ],
)
def test_expected_parameters(schema: dict[str, Any], expected: dict[str, list[str]], additional: bool) -> None:
    compiled = compile_schema(schema)
    assert compiled.expected == expected
    assert compiled.allows_additional is additional


def test_invalid_schemas_are_refused_at_compile_time() -> None:
    with pytest.raises(ValueError, match="Invalid JSON Schema for arguments"):
        compile_schema({"type": "object", "properties": {"a": {"type": "int"}}})
    with pytest.raises(TypeError):
        compile_schema([])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CompiledSchema("{}")  # type: ignore[arg-type]


def test_compiled_schemas_are_cached_by_content_and_kept_private() -> None:
    schema: dict[str, Any] = {"properties": {"n": {"type": "integer"}}, "additionalProperties": False}
    first = compile_schema(schema)
    assert compile_schema(json.loads(json.dumps(schema))) is first
    schema["properties"]["m"] = {}
    assert first.expected == {"required": [], "optional": ["n"]}
    assert compile_schema(schema) is not first
    odd = {"properties": {"n": {"type": "integer", "default": object()}}}
    assert compile_schema(odd).apply({"n": "1"}, tool="t")[0] == {"n": 1}


def test_unknown_metaschema_falls_back_without_a_warning() -> None:
    compiled = compile_schema({"$schema": "https://example.invalid/schema", "properties": {"a": {"type": "integer"}}})
    assert compiled.apply({"a": "1"}, tool="t")[0] == {"a": 1}


@pytest.mark.parametrize("schema", [{}, {"type": "object"}, {"type": "object", "properties": {}}])
def test_schema_without_properties_accepts_anything(schema: dict[str, Any]) -> None:
    args = {"x": 1, "Y": [{"z": None}]}
    assert compile_schema(schema).apply(args, tool="t") == (args, ())


# --------------------------------------------------------------------------------------------
# Schemas: apply — unchanged, coerced, renamed
# --------------------------------------------------------------------------------------------


def apply(schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], tuple[RepairEvent, ...]]:
    return compile_schema(schema).apply(args, tool="search")


def apply_error(schema: dict[str, Any], args: dict[str, Any]) -> ArgumentError:
    with pytest.raises(ArgumentError) as info:
        compile_schema(schema).apply(args, tool="search")
    return info.value


VALID_ARGS = [
    {"query": "cats"},
    {"query": "cats", "limit": 5, "unit": "celsius", "tags": ["a"], "strict": False},
    {"query": "02139", "tags": None, "filters": {"lang": "en", "year": 2020}},
    {"query": "", "tags": []},
]


@pytest.mark.parametrize("args", VALID_ARGS)
def test_valid_arguments_are_returned_unchanged(args: dict[str, Any]) -> None:
    value, events = apply(SEARCH, args)
    assert value == args and value is not args and events == ()


def prop(schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"v": schema}, **extra}


COERCIONS: list[tuple[dict[str, Any], Any, Any]] = [
    ({"type": "integer"}, "5", 5),
    ({"type": "integer"}, " 7 ", 7),
    ({"type": "integer"}, "-3", -3),
    ({"type": "integer"}, "5.0", 5),
    ({"type": "integer"}, 5.0, 5),
    ({"type": "integer"}, -2.0, -2),
    ({"type": "number"}, "2.5", 2.5),
    ({"type": "number"}, "3", 3),
    ({"type": "number"}, "-1e3", -1000.0),
    ({"type": "number"}, "2.0", 2),
    ({"type": "integer"}, "-12.000", -12),
    ({"type": "boolean"}, "true", True),
    ({"type": "boolean"}, "FALSE", False),
    ({"type": "boolean"}, " True ", True),
    ({"type": ["integer", "null"]}, "null", None),
    ({"type": ["integer", "null"]}, "NULL", None),
    ({"type": ["integer", "null"]}, "4", 4),
    ({"type": "null"}, "null", None),
    ({"type": "string"}, 5, "5"),
    ({"type": "string"}, -2.5, "-2.5"),
    ({"type": "array"}, '["a", "b"]', ["a", "b"]),
    ({"type": "array"}, "['a', 'b',]", ["a", "b"]),
    ({"type": "array", "items": {"type": "integer"}}, '["1", 2]', [1, 2]),
    ({"type": "array", "items": {"type": "integer"}}, ["1", 2.0, 3], [1, 2, 3]),
    (
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}]},
        ["1", "true", "x"],
        [1, True, "x"],
    ),
    ({"type": "object"}, '{"k": 1}', {"k": 1}),
    ({"type": "object", "properties": {"year": {"type": "integer"}}}, '{"year": "2020"}', {"year": 2020}),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"a": "1", "b": 2}, {"a": 1, "b": 2}),
    ({"enum": ["celsius", "fahrenheit"]}, "Celsius", "celsius"),
    ({"enum": ["celsius", "fahrenheit"]}, " FAHRENHEIT ", "fahrenheit"),
    ({"type": "string", "enum": ["Red", "green"]}, "red", "Red"),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "7", 7),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "null", None),
    ({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, "true", True),
    ({"oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "integer"}}]}, '["1"]', [1]),
    ({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}, '["x"]', ["x"]),
    ({"allOf": [{"type": "integer"}]}, "12", 12),
]


@pytest.mark.parametrize(("schema", "before", "after"), COERCIONS)
def test_coercions(schema: dict[str, Any], before: Any, after: Any) -> None:
    value, events = apply(prop(schema), {"v": before})
    assert value == {"v": after}
    assert type(value["v"]) is type(after)
    assert events and all(event.kind == "coerce" and event.tool == "search" for event in events)
    assert events[0].path.startswith("v")  # type: ignore[union-attr]


def test_coercion_event_says_what_changed() -> None:
    _, events = apply(prop({"type": "integer"}), {"v": "5"})
    assert events == (RepairEvent("coerce", "Coerced 'v' from '5' to 5", tool="search", before="5", after=5, path="v"),)


def test_nested_coercion_paths() -> None:
    value, events = apply(SEARCH, {"query": "x", "filters": {"lang": "en", "year": "2020"}, "limit": "3"})
    assert value == {"query": "x", "filters": {"lang": "en", "year": 2020}, "limit": 3}
    assert [event.path for event in events] == ["filters.year", "limit"]
    assert events[0].message == "Coerced 'filters.year' from '2020' to 2020"
    _, events = apply(prop({"type": "array", "items": {"type": "integer"}}), {"v": ["1", "2"]})
    assert [event.path for event in events] == ["v[0]", "v[1]"]


NOT_COERCED: list[tuple[dict[str, Any], Any, str]] = [
    ({"type": "integer"}, "5.5", 'must be an integer, got "5.5"'),
    ({"type": "integer"}, 5.5, "must be an integer, got 5.5"),
    ({"type": "integer"}, True, "must be an integer, got true"),
    ({"type": "integer"}, "five", 'must be an integer, got "five"'),
    ({"type": "integer"}, "1e3", 'must be an integer, got "1e3"'),
    ({"type": "integer"}, "1e-400", 'must be an integer, got "1e-400"'),
    ({"type": "integer"}, "5.01", 'must be an integer, got "5.01"'),
    ({"type": "integer"}, "02139", 'must be an integer, got "02139"'),
    ({"type": "integer"}, "1" * 5000, "must be an integer"),
    ({"type": "integer"}, float("inf"), "must be an integer"),
    ({"type": "number"}, "nan", 'must be a number, got "nan"'),
    ({"type": "number"}, "1e999", "must be a number"),
    ({"type": "number"}, False, "must be a number, got false"),
    ({"type": "boolean"}, "yes", 'must be a boolean (true or false), got "yes"'),
    ({"type": "boolean"}, 1, "must be a boolean (true or false), got 1"),
    ({"type": "string"}, True, "must be a string, got true"),
    ({"type": "string"}, float("nan"), "must be a string, got NaN"),
    ({"type": "string"}, [1], "must be a string, got [1]"),
    ({"type": "array"}, "a, b", 'must be an array, got "a, b"'),
    ({"type": "array"}, '{"k": 1}', "must be an array"),
    ({"type": "object"}, "[1]", "must be an object"),
    ({"type": "null"}, "none", 'must be null, got "none"'),
    ({"type": ["integer", "null"]}, "x", 'must be an integer or null, got "x"'),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "seven", 'must be an integer or null, got "seven"'),
    ({"enum": ["A", "a"]}, "á", "must be one of ['A', 'a'], got \"á\""),
    ({"enum": ["Yes", "YES"]}, "yes", "must be one of ['Yes', 'YES']"),
]


@pytest.mark.parametrize(("schema", "value", "message"), NOT_COERCED, ids=short_id)
def test_unsafe_coercions_are_not_made(schema: dict[str, Any], value: Any, message: str) -> None:
    error = apply_error(prop(schema), {"v": value})
    assert str(error).startswith(f"Argument 'v' {message}"), str(error)
    assert error.path == "v"
    assert error.reason in ("type", "enum")


def test_strings_stay_strings() -> None:
    assert apply(prop({"type": "string"}), {"v": "02139"}) == ({"v": "02139"}, ())
    assert apply(prop({"type": ["string", "null"]}), {"v": "null"}) == ({"v": "null"}, ())
    assert apply(prop({"anyOf": [{"type": "integer"}, {"type": "string"}]}), {"v": "5"}) == ({"v": "5"}, ())


def test_refs_coerce_recursively() -> None:
    schema = {
        "type": "object",
        "properties": {
            "point": {"$ref": "#/$defs/Point"},
            "old": {"$ref": "#/definitions/Old"},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
            "wrapped": {"allOf": [{"$ref": "#/$defs/Point"}]},
            "remote": {"$ref": "https://example.invalid/x.json"},
            "self": {"$ref": "#"},
        },
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
        "definitions": {"Old": {"type": "integer"}},
    }
    compiled = compile_schema(schema)
    value, events = compiled.apply(
        {"point": {"x": "1.5", "y": 2}, "old": "4", "maybe": '{"x": "3"}', "wrapped": {"y": "0"}}, tool="t"
    )
    assert value == {"point": {"x": 1.5, "y": 2}, "old": 4, "maybe": {"x": 3}, "wrapped": {"y": 0}}
    assert {event.path for event in events} == {"point.x", "old", "maybe", "maybe.x", "wrapped.y"}
    assert compiled.apply({"self": {"old": "5"}}, tool="t")[0] == {"self": {"old": 5}}


def test_ref_with_an_escaped_pointer_and_an_array_index() -> None:
    schema = {
        "properties": {
            "a": {"$ref": "#/$defs/a~1b"},
            "b": {"$ref": "#/x-list/1"},
            "c": {"$ref": "#/x-list/9"},
        },
        "$defs": {"a/b": {"type": "integer"}},
        "x-list": [{"type": "string"}, {"type": "boolean"}],
    }
    assert apply(schema, {"a": "1", "b": "true"})[0] == {"a": 1, "b": True}
    error = apply_error(schema, {"c": "x"})
    assert error.reason == "constraint"
    assert str(error) == "Arguments cannot be checked: the tool's schema refers to '/x-list/9', which does not exist"


def _deep(levels: int, leaf: Any) -> dict[str, Any]:
    args: dict[str, Any] = {}
    node = args
    for _ in range(levels):
        node["next"] = {}
        node = node["next"]
    node["next"] = leaf
    return args


@pytest.mark.parametrize(
    "node",
    [
        {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}},
        {"anyOf": [{"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}, {"type": "string"}]},
    ],
)
def test_recursive_schema_and_deep_arguments_do_not_escape(node: dict[str, Any]) -> None:
    compiled = compile_schema({"$defs": {"node": node}, "$ref": "#/$defs/node"})
    with pytest.raises(ArgumentError) as info:
        compiled.apply(_deep(5000, 5), tool="t")
    assert info.value.reason == "too-deep"
    assert compiled.apply(_deep(10, {}), tool="t")[1] == ()


def test_a_shallow_error_beside_a_deep_value_does_not_escape() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "z": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
    }
    with pytest.raises(ArgumentError) as info:
        compile_schema(schema).apply({"a": "x", "z": _deep(5000, 5)}, tool="t")
    assert info.value.reason in ("too-deep", "type")


def test_anchor_refs_validate_but_are_not_coerced_through() -> None:
    schema = {"properties": {"n": {"$ref": "#count"}}, "$defs": {"c": {"$anchor": "count", "type": "integer"}}}
    assert apply(schema, {"n": 5}) == ({"n": 5}, ())
    assert apply_error(schema, {"n": "5"}).reason == "type"


def test_remote_refs_fail_closed() -> None:
    schema = {"properties": {"remote": {"$ref": "https://example.invalid/x.json"}}}
    error = apply_error(schema, {"remote": 1})
    assert error.reason == "constraint"
    assert "https://example.invalid/x.json" in str(error)


def test_apply_does_not_mutate_its_input() -> None:
    args = {"query": "x", "filters": {"lang": "en", "year": "2020"}, "tags": '["a"]'}
    snapshot = json.loads(json.dumps(args))
    apply(SEARCH, args)
    assert args == snapshot


# --------------------------------------------------------------------------------------------
# Schemas: apply — misnamed keys
# --------------------------------------------------------------------------------------------

RENAMES: list[tuple[str, str]] = [
    ("Query", "query"),
    ("QUERY", "query"),
    ("query=", "query"),
    ("query:", "query"),
    (" query ", "query"),
    ("query =", "query"),
    ("qu_ery", "query"),
    ("que-ry", "query"),
    ("qu\u200bery", "query"),  # zero-width space (category Cf)
    ("ｑｕｅｒｙ", "query"),  # fullwidth, folded by NFKC
    ("maxResults", "max_results"),
    ("MAX-RESULTS", "max_results"),
]


@pytest.mark.parametrize(("key", "target"), RENAMES)
def test_misnamed_keys_are_renamed(key: str, target: str) -> None:
    schema = {
        "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}},
        "additionalProperties": False,
    }
    value = "x" if target == "query" else 3
    renamed, events = apply(schema, {key: value})
    assert renamed == {target: value}
    assert events == (
        RepairEvent(
            "rename",
            f"Renamed argument {key!r} -> {target!r}",
            tool="search",
            before=key,
            after=target,
            path=target,
        ),
    )


def test_rename_then_coerce_and_order_is_kept() -> None:
    value, events = apply(SEARCH, {"Limit": "5", "Query": "x"})
    assert list(value) == ["limit", "query"]
    assert value == {"limit": 5, "query": "x"}
    assert [event.kind for event in events] == ["rename", "rename", "coerce"]


def test_open_schema_renames_and_keeps_unknown_keys() -> None:
    schema = {"properties": {"query": {"type": "string"}}}
    assert apply(schema, {"Query": "x", "foo": 1})[0] == {"query": "x", "foo": 1}
    assert apply(schema, {"foo": 1}) == ({"foo": 1}, ())


def test_very_long_keys_are_never_renamed() -> None:
    key = "query" + "_" * 300
    assert apply_error(SEARCH, {key: "x"}).reason == "unknown-key"


def test_lookalike_letters_are_not_folded() -> None:
    error = apply_error(SEARCH, {"qսery": "x"})  # Armenian letter, not Latin u
    assert (error.reason, str(error)) == ("unknown-key", "Unexpected argument 'qսery'")


AMBIGUOUS_KEYS: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    (
        {"properties": {"query": {}}},
        {"query": "a", "Query": "b"},
        "Arguments 'query' and 'Query' both name 'query'",
    ),
    (
        {"properties": {"query": {}}},
        {"Query": "a", "query=": "b"},
        "Arguments 'Query' and 'query=' both name 'query'",
    ),
    (
        {"properties": {"max_results": {}, "maxResults": {}}},
        {"MaxResults": 1},
        "Argument 'MaxResults' is ambiguous: it could mean 'max_results' or 'maxResults'",
    ),
]


@pytest.mark.parametrize(("schema", "args", "message"), AMBIGUOUS_KEYS)
def test_ambiguous_keys_are_refused(schema: dict[str, Any], args: dict[str, Any], message: str) -> None:
    error = apply_error(schema, args)
    assert (error.reason, str(error)) == ("ambiguous", message)


def test_exact_keys_win_without_a_rename() -> None:
    schema = {"properties": {"max_results": {}, "maxResults": {}}}
    assert apply(schema, {"maxResults": 1, "max_results": 2}) == ({"maxResults": 1, "max_results": 2}, ())


# --------------------------------------------------------------------------------------------
# Schemas: apply — validation errors a model can act on
# --------------------------------------------------------------------------------------------

ERRORS: list[tuple[dict[str, Any], str, str, str | None]] = [
    ({"limit": 1}, "missing", "Missing required argument 'query'", "query"),
    ({"query": "x", "foo": 1}, "unknown-key", "Unexpected argument 'foo'", "foo"),
    (
        {"query": "x", "unit": "kelvin"},
        "enum",
        "Argument 'unit' must be one of ['celsius', 'fahrenheit'], got \"kelvin\"",
        "unit",
    ),
    (
        {"query": "x", "filters": {"lang": "en", "year": "twenty"}},
        "type",
        "Argument 'filters.year' must be an integer, got \"twenty\"",
        "filters.year",
    ),
    (
        {"query": "x", "filters": {"year": 1}},
        "missing",
        "Missing required argument 'filters.lang'",
        "filters.lang",
    ),
    (
        {"query": "x", "filters": {"lang": "en", "month": 1}},
        "unknown-key",
        "Unexpected argument 'filters.month'",
        "filters.month",
    ),
    (
        {"query": "x", "limit": 0},
        "constraint",
        "Argument 'limit' is invalid: 0 is less than the minimum of 1",
        "limit",
    ),
    ({"query": "x", "tags": ["a", [5]]}, "type", "Argument 'tags[1]' must be a string, got [5]", "tags[1]"),
    ({"query": "x", "tags": 5}, "type", "Argument 'tags' must be an array or null, got 5", "tags"),
    (
        {"query": "x", "tags": "x" * 200},
        "type",
        "Argument 'tags' must be an array or null, got \"" + "x" * 58 + "…",
        "tags",
    ),
    ({"query": ["x"]}, "type", "Argument 'query' must be a string, got [\"x\"]", "query"),
]


@pytest.mark.parametrize(("args", "reason", "message", "path"), ERRORS)
def test_validation_errors(args: dict[str, Any], reason: str, message: str, path: str | None) -> None:
    error = apply_error(SEARCH, args)
    assert (error.reason, str(error), error.path) == (reason, message, path)
    assert "Expected parameters" not in str(error)


def test_top_level_constraint_and_type_errors() -> None:
    error = apply_error({"type": "object", "minProperties": 1}, {})
    assert (error.reason, str(error), error.path) == (
        "constraint",
        "Arguments are invalid: {} should be non-empty",
        None,
    )
    error = apply_error({"type": "object", "not": {"type": "object"}}, {"a": 1})
    assert error.reason == "constraint"
    error = apply_error({"type": "array"}, {"a": 1})
    assert str(error) == 'Arguments must be an array, got {"a": 1}'


def test_union_errors_with_nested_schemas_use_the_best_match() -> None:
    schema = prop(
        {
            "anyOf": [
                {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                {"type": "integer", "minimum": 10},
            ]
        }
    )
    error = apply_error(schema, {"v": 3})
    assert error.reason == "constraint"


def test_pattern_properties_are_not_unexpected() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {"^x_": {"type": "integer"}},
        "additionalProperties": False,
        "unevaluatedProperties": False,
    }
    assert apply(schema, {"a": 1, "x_1": 2}) == ({"a": 1, "x_1": 2}, ())
    error = apply_error(schema, {"a": 1, "x_1": 2, "zz": 3})
    assert (error.reason, str(error)) == ("unknown-key", "Unexpected argument 'zz'")


def test_unevaluated_properties() -> None:
    schema = {"type": "object", "allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False}
    error = apply_error(schema, {"a": 1, "b": 2})
    assert (error.reason, str(error)) == ("unknown-key", "Unexpected argument 'b'")


# --------------------------------------------------------------------------------------------
# Validity is jsonschema's, with the strict integer type
# --------------------------------------------------------------------------------------------

SIMPLE = [
    ({"type": "string", "minLength": 2, "maxLength": 3, "title": "t"}, ["ab", "abc"], ["a", "abcd", 1]),
    ({"type": "number", "minimum": 0, "maximum": 1}, [0, 0.5, 1], [-1, 2, "0", True]),
    (
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
        [[1], [1, 2]],
        [[], [1, 2, 3], [1.0]],
    ),
    ({"enum": ["a", "b"]}, ["a"], ["c", 1, None]),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1.5], [1, "x"]),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, [1, None], [1.5, "x"]),
    (True, [1, "x"], []),
    ({"properties": {"a": {"type": "string"}}, "required": ["a"]}, ["x", 1, {"a": "y"}], [{"a": 1}, {}]),
]


@pytest.mark.parametrize(("schema", "good", "bad"), SIMPLE)
def test_validity_is_jsonschemas_with_strict_integers(schema: Any, good: list[Any], bad: list[Any]) -> None:
    compiled = CompiledSchema(schema if isinstance(schema, dict) else {"allOf": [schema]})
    assert all(compiled._is_valid(value) for value in good)
    assert not any(compiled._is_valid(value) for value in bad)


def test_type_helpers_on_names_the_schema_checker_would_refuse() -> None:
    assert _is_type(1, "whatever") is True
    assert _coerce_to("x", "whatever") is _MISSING
    assert _coerce_to("x", "string") is _MISSING
    assert _coerce_to([1], "string") is _MISSING


def test_show_survives_unserialisable_values() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert _show(loop) == "[[...]]"
    assert _show("x" * 100).endswith("…")


def test_decode_value_gives_any_json_value() -> None:
    assert decode_value("[1, 'a',]") == [1, "a"]
    assert decode_value('"x"') == "x"
