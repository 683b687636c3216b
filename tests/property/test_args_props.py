"""Properties of argument decoding and schema application (toolrepair._args)."""

from __future__ import annotations

import contextlib
import json
from functools import partial
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolrepair._args import check_nesting, compile_schema, decode_arguments
from toolrepair._args._decode import _Notes, _parse_lenient
from toolrepair._errors import ArgumentError

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Finite numbers only: JSON has no NaN or infinity, and toolrepair refuses them.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=25,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=6)
dumps_options = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 2, "\t"]),
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([None, (",", ":"), (", ", ": ")]),
    }
)


@SETTINGS
@given(json_objects, dumps_options)
def test_valid_json_objects_round_trip_unchanged_with_no_events(obj: dict[str, Any], options: dict[str, Any]) -> None:
    text = json.dumps(obj, **options)
    assert decode_arguments(text) == (obj, ())
    assert decode_arguments(text.encode("utf-8", "surrogatepass") if options["ensure_ascii"] else text)[0] == obj


@SETTINGS
@given(json_objects, dumps_options)
def test_the_lenient_parser_agrees_with_json_on_valid_json(obj: dict[str, Any], options: dict[str, Any]) -> None:
    text = json.dumps(obj, **options)
    notes = _Notes()
    assert _parse_lenient(text, 0, 1000, notes, doubled=False) == obj
    assert notes.events() == ()


@SETTINGS
@given(json_objects.filter(bool), st.data())
def test_a_cut_document_is_always_truncated(obj: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(obj, ensure_ascii=data.draw(st.booleans()))
    cut = data.draw(st.integers(min_value=1, max_value=len(text) - 1))
    try:
        decode_arguments(text[:cut])
    except ArgumentError as error:
        assert error.reason == "truncated", (text[:cut], str(error))
    else:
        raise AssertionError(f"decoded a truncated document: {text[:cut]!r}")


plain_text = st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="\\"), max_size=8)
python_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | plain_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(plain_text, children, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(st.dictionaries(plain_text, python_values, max_size=5))
def test_python_reprs_decode_to_the_same_value(obj: dict[str, Any]) -> None:
    # A dict's repr is the model's favourite near-JSON: single quotes, True/False/None.
    value, events = decode_arguments(repr(obj))
    assert value == obj
    assert all(event.kind == "decode" for event in events)


@settings(deadline=None)
@given(st.text())
def test_any_text_gives_a_dict_or_an_argument_error(text: str) -> None:
    try:
        value, events = decode_arguments(text)
    except ArgumentError as error:
        assert error.reason in {
            "truncated",
            "undecodable",
            "empty",
            "not-an-object",
            "too-deep",
            "too-large",
            "ambiguous",
        }
    else:
        assert isinstance(value, dict)
        assert all(event.kind == "decode" for event in events)


json_alphabet = st.sampled_from(list("{}[]:,\"'“”‘’\\/*tfnTFN0123456789.-eE aq\n\ufeff`"))


@settings(deadline=None)
@given(st.lists(json_alphabet, max_size=40).map("".join))
def test_json_like_noise_gives_a_dict_or_an_argument_error(text: str) -> None:
    try:
        value, _ = decode_arguments(text)
    except ArgumentError:
        return
    assert isinstance(value, dict)


@SETTINGS
@given(st.binary(max_size=64))
def test_any_bytes_give_a_dict_or_an_argument_error(raw: bytes) -> None:
    with contextlib.suppress(ArgumentError):
        decode_arguments(raw)


# --------------------------------------------------------------------------------------------
# The walk: the one depth-and-finite check of what the C scanner read
# --------------------------------------------------------------------------------------------

# Strings full of what could fool a count: brackets, quotes, backslashes, digits and 'e'.
tricky_text = st.text(st.sampled_from('[]{}"\\,:e0123 aé\ud800\x00'), max_size=8)
tricky_strings = tricky_text.map(json.dumps) | tricky_text.map(partial(json.dumps, ensure_ascii=False))
number_literals = st.from_regex(r"-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?([eE][-+]?[0-9]{1,4})?", fullmatch=True) | (
    st.integers(min_value=150, max_value=320).map(lambda digits: "9" * digits + ".5")
)
json_texts = st.recursive(
    number_literals | tricky_strings | st.sampled_from(["true", "false", "null"]),
    lambda inner: (
        st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
        | st.lists(st.tuples(tricky_strings, inner), max_size=4).map(
            lambda pairs: "{" + ",".join(f"{key}: {value}" for key, value in pairs) + "}"
        )
    ),
    max_leaves=30,
)
depth_limits = st.integers(min_value=1, max_value=40) | st.just(100)


@st.composite
def deep_texts(draw: st.DrawFn) -> str:
    """A JSON text nested up to 40 deep, each level beside a tricky string."""
    text = draw(json_texts | st.sampled_from(["1", "[]", "{}"]))
    besides = tricky_strings if draw(st.booleans()) else st.sampled_from(['""', '"k"', '"a b"'])
    for _ in range(draw(st.integers(min_value=1, max_value=40))):
        beside = draw(besides)
        text = f"[{beside}, {text}]" if draw(st.booleans()) else f"{{{beside}: {text}}}"
    return text


tricky_texts = json_texts | deep_texts()


def walk_verdict(value: Any, max_depth: int) -> str:
    try:
        check_nesting(value, max_depth)
    except ArgumentError as error:
        return error.reason
    except ValueError:
        return "not finite"
    return "ok"


def nesting(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


def reference_verdict(text: str, max_depth: int, *, every_literal: bool = False) -> str:
    """What the walk must say, by recursion and json.loads's own float parsing.

    ``every_literal``: what the decoder must say, which also refuses a non-finite literal that a
    repeated key then replaces (every float literal is read, kept or not).
    """
    literals: list[float] = []
    value = json.loads(text, parse_float=lambda t: literals.append(float(t)) or float(t))
    if nesting(value) > max_depth:
        return "too-deep"
    if every_literal and not all(x - x == 0.0 for x in literals):
        return "not finite"
    floats = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float):
            floats.append(item)
    return "ok" if all(x - x == 0.0 for x in floats) else "not finite"


@SETTINGS
@given(tricky_texts, depth_limits)
def test_the_walk_agrees_with_recursion(text: str, max_depth: int) -> None:
    assert walk_verdict(json.loads(text), max_depth) == reference_verdict(text, max_depth)


@SETTINGS
@given(tricky_texts, depth_limits)
def test_long_texts_decode_as_json_loads_within_the_limits(inner: str, max_depth: int) -> None:
    # The padding makes the text long enough to be walked whatever its depth.
    text = '{"pad": [' + "0, " * 100 + '0], "value": ' + inner + "}"
    verdict = reference_verdict(text, max_depth, every_literal=True)
    duplicated = has_duplicate_keys(text)
    try:
        value, events = decode_arguments(text, max_depth=max_depth)
    except ArgumentError as error:
        if duplicated and error.reason == "duplicate-key":
            return  # refused, as every object with a key written twice is (whatever else it holds)
        assert verdict != "ok"
        assert error.reason == ("too-deep" if verdict == "too-deep" else "undecodable")
    else:
        assert verdict == "ok" and not duplicated
        assert (value, events) == (json.loads(text), ())


def has_duplicate_keys(text: str) -> bool:
    """Does any object in ``text`` write a key twice? (``json.loads`` keeps the last value.)"""
    found = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        found = found or len({k for k, _ in items}) != len(items)
        return dict(items)

    with contextlib.suppress(RecursionError, ValueError):
        json.loads(text, object_pairs_hook=pairs)
    return found


# --------------------------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------------------------

FIELD_TYPES: dict[str, tuple[dict[str, Any], st.SearchStrategy[Any]]] = {
    "string": ({"type": "string"}, st.text(max_size=10)),
    "integer": ({"type": "integer"}, st.integers()),
    "number": ({"type": "number"}, st.floats(allow_nan=False, allow_infinity=False) | st.integers()),
    "boolean": ({"type": "boolean"}, st.booleans()),
    "enum": ({"enum": ["celsius", "fahrenheit"]}, st.sampled_from(["celsius", "fahrenheit"])),
    "optional": ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, st.none() | st.integers()),
    "list": ({"type": "array", "items": {"type": "string"}}, st.lists(st.text(max_size=5), max_size=3)),
    "object": (
        {"type": "object", "properties": {"year": {"type": "integer"}}, "additionalProperties": False},
        st.fixed_dictionaries({}, optional={"year": st.integers()}),
    ),
    "ref": (
        {"$ref": "#/$defs/Point"},
        st.fixed_dictionaries({"x": st.floats(allow_nan=False, allow_infinity=False)}),
    ),
}
DEFS = {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}


@st.composite
def schemas_with_instances(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    names = draw(
        st.lists(
            st.sampled_from(["query", "limit", "unit", "max_results", "tags", "when", "flag"]),
            unique=True,
            min_size=1,
            max_size=5,
        )
    )
    kinds = [draw(st.sampled_from(sorted(FIELD_TYPES))) for _ in names]
    required = [name for name in names if draw(st.booleans())]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: FIELD_TYPES[kind][0] for name, kind in zip(names, kinds, strict=True)},
        "required": required,
        "$defs": DEFS,
    }
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    instance = {
        name: draw(FIELD_TYPES[kind][1])
        for name, kind in zip(names, kinds, strict=True)
        if name in required or draw(st.booleans())
    }
    return schema, instance


@SETTINGS
@given(schemas_with_instances())
def test_a_valid_instance_is_returned_unchanged_with_no_events(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    schema, instance = case
    value, events = compile_schema(schema).apply(instance, tool="t")
    assert value == instance
    assert events == ()


@SETTINGS
@given(schemas_with_instances(), st.dictionaries(st.text(max_size=6), json_values, max_size=3))
def test_apply_gives_a_dict_or_an_argument_error(
    case: tuple[dict[str, Any], dict[str, Any]], noise: dict[str, Any]
) -> None:
    schema, instance = case
    try:
        value, events = compile_schema(schema).apply({**instance, **noise}, tool="t")
    except ArgumentError as error:
        assert error.reason in {
            "ambiguous",
            "unknown-key",
            "missing",
            "type",
            "enum",
            "constraint",
            "too-deep",
        }
    else:
        assert isinstance(value, dict)
        assert all(event.tool == "t" and event.kind in ("rename", "coerce") for event in events)
