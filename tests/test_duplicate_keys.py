"""Duplicate keys in argument objects are refused, natively and salvaged, whichever reader
reads them (the C scanner's fast path, the lenient parser, double encoding, schema
coercion). Decided: equal duplicates are refused too (fail closed)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._args import decode_arguments
from toolrepair._args._decode import decode_json_value, decode_value_at
from toolrepair._errors import ArgumentError

PAID: list[int] = []


def pay(amount: int) -> str:
    PAID.append(amount)
    return "paid"


def send(payload: dict[str, Any], items: list[Any] | None = None) -> str:
    PAID.append(-1)
    return "sent"


@pytest.fixture(autouse=True)
def _clear() -> None:
    PAID.clear()


# (argument text, the key named in the refusal)
DUPLICATES = [
    ('{"amount": 1, "amount": 1000}', "amount"),
    ('{"amount": 1000, "amount": 1000}', "amount"),  # equal values: refused all the same
    ('{"a": 1, "b": 2, "a": 3}', "a"),
    ('{"x": {"b": 1, "b": 2}}', "b"),  # nested
    ('{"x": [1, {"k": null, "k": null}]}', "k"),  # inside an array
    ('{"amount": 1, "amount": 1000,}', "amount"),  # lenient path: trailing comma
    ("{'amount': 1, 'amount': 1000}", "amount"),  # lenient path: single quotes
    ("{amount: 1, amount: 1000}", "amount"),  # lenient path: bare keys
    ("{\"amount\": 1, 'amount': 1000}", "amount"),  # the same key in two quotings
    ('{"amount": True, "amount": False}', "amount"),  # lenient path: Python literals
    ('```json\n{"amount": 1, "amount": 2}\n```', "amount"),  # inside a code fence
    ('"{\\"amount\\": 1, \\"amount\\": 2}"', "amount"),  # double encoded
    ('{"\\u0061": 1, "a": 2}', "a"),  # the same key, one spelt with an escape
    ('{"": 1, "": 2}', ""),  # the empty key
    ('{"amount": 1, "amount": 2} ', "amount"),  # trailing whitespace
    ('{{"amount": 1, "amount": 2}}', "amount"),  # template-doubled braces
]


@pytest.mark.parametrize(("text", "key"), DUPLICATES)
def test_decoder_refuses_every_duplicate(text: str, key: str) -> None:
    with pytest.raises(ArgumentError) as info:
        decode_arguments(text)
    assert info.value.reason == "duplicate-key"
    assert f"Duplicate key {key!r} in the arguments" in str(info.value)
    with pytest.raises(ArgumentError) as as_bytes:
        decode_arguments(text.encode())
    assert as_bytes.value.reason == "duplicate-key"


@pytest.mark.parametrize(("text", "key"), DUPLICATES[:5])
def test_value_readers_refuse_duplicates(text: str, key: str) -> None:
    with pytest.raises(ArgumentError) as info:
        decode_json_value(text)
    assert info.value.reason == "duplicate-key"
    with pytest.raises(ArgumentError) as at:
        decode_value_at(text + " </tool_call>")
    assert at.value.reason == "duplicate-key"


def test_lenient_refusal_names_where_the_second_key_is() -> None:
    text = "{'amount': 1, 'amount': 1000}"
    with pytest.raises(ArgumentError) as info:
        decode_arguments(text)
    assert info.value.position == text.rindex("'amount'")
    assert "(at character 14)" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        '{"amount": 1, "Amount": 2}',  # keys differ in case: two keys
        '{"a": {"k": 1}, "b": {"k": 1}}',  # the same key in two objects
        '[{"k": 1}, {"k": 2}]',
        '{"a": "\\"a\\": 1, \\"a\\": 2"}',  # a duplicate inside a string is data
        '{"url": "http://x:1", "b": "c:d"}',  # colons in values
    ],
)
def test_distinct_keys_are_not_duplicates(text: str) -> None:
    assert decode_json_value(text)[0] == json.loads(text)


# Registry entry points: nothing runs, every one says why.
def test_registry_refuses_duplicate_keys_natively() -> None:
    registry = tr.ToolRegistry([pay])
    text = '{"amount": 1, "amount": 1000}'
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute("pay", text)
    assert info.value.kind == "arguments"
    assert str(info.value).startswith("Duplicate key 'amount' in the arguments")
    assert "Expected parameters for 'pay'" in str(info.value)
    outcome = registry.run({"name": "pay", "arguments": text})
    assert not outcome.ok and "Duplicate key 'amount'" in outcome.content
    assert not asyncio.run(registry.arun({"name": "pay", "arguments": text})).ok
    with pytest.raises(tr.ToolExecutionError):
        asyncio.run(registry.aexecute("pay", text))
    repair = tr.repair_call({"name": "pay", "arguments": text}, [pay])
    assert repair.call is None and "Duplicate key 'amount'" in str(repair.error)
    openai_shape = {"type": "function", "function": {"name": "pay", "arguments": text}}
    assert not registry.run(openai_shape).ok
    assert PAID == []


def test_a_string_coerced_to_an_object_refuses_duplicates() -> None:
    registry = tr.ToolRegistry([send])
    outcome = registry.run({"name": "send", "arguments": {"payload": '{"k": 1, "k": 2}'}})
    assert not outcome.ok and "Duplicate key 'k'" in outcome.content
    outcome = registry.run({"name": "send", "arguments": {"payload": {}, "items": '[{"k": 1, "k": 2}]'}})
    assert not outcome.ok and "Duplicate key 'k'" in outcome.content
    assert PAID == []


SALVAGED = [
    '<tool_call>{"name": "pay", "arguments": {"amount": 1, "amount": 1000}}</tool_call>',
    '<tool_call>{"name": "pay", "arguments": {"amount": 1, "amount": 1000},}</tool_call>',
    '<function=pay>{"amount": 1, "amount": 1000}</function>',
    '[TOOL_CALLS][{"name": "pay", "arguments": {"amount": 1, "amount": 1000}}]',
    '<tool_call>{"name": "pay", "name": "pay", "arguments": {"amount": 1000}}</tool_call>',  # the call's keys
    "[pay(amount=1, amount=1000)]",
    '```json\n{"name": "pay", "arguments": "{\\"amount\\": 1, \\"amount\\": 1000}"}\n```',
]


@pytest.mark.parametrize("text", SALVAGED)
def test_salvaged_duplicates_never_run(text: str) -> None:
    registry = tr.ToolRegistry([pay])
    result = registry.salvage("Paying now. " + text)
    outcomes = [registry.run(c) for c in result.calls]
    assert all(not o.ok for o in outcomes)
    assert result.rejected or outcomes  # refused in the text, or when run: never silently
    assert PAID == []


# Bare JSON has no marker: broken JSON there is prose, a duplicate key included.
@pytest.mark.parametrize(
    "text",
    [
        '{"name": "pay", "arguments": {"amount": 1, "amount": 1000}}',
        '{"name": "pay", "name": "pay", "arguments": {"amount": 1000}}',
    ],
)
def test_bare_json_with_a_duplicate_is_no_call(text: str) -> None:
    assert tr.ToolRegistry([pay]).salvage("Paying now. " + text).calls == ()


# -- properties ------------------------------------------------------------------------------
_KEYS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)


@st.composite
def _object_with_a_duplicate(draw: st.DrawFn) -> str:
    """An object's JSON text with one key written twice, at any position and depth."""
    members = draw(st.lists(st.tuples(_KEYS, _SCALARS), max_size=5, unique_by=lambda kv: kv[0]))
    key = draw(_KEYS)
    members = [kv for kv in members if kv[0] != key]
    first, second = draw(_SCALARS), draw(_SCALARS)
    parts = [json.dumps(k) + ": " + json.dumps(v) for k, v in members]
    parts.insert(draw(st.integers(0, len(parts))), json.dumps(key) + ": " + json.dumps(first))
    parts.insert(draw(st.integers(0, len(parts))), json.dumps(key) + ": " + json.dumps(second))
    inner = "{" + ", ".join(parts) + "}"
    for _ in range(draw(st.integers(0, 3))):
        inner = draw(st.sampled_from(['{"w": %s}', "[%s]", '{"a": 1, "w": [0, %s]}'])) % inner
    if inner.startswith("["):
        inner = '{"top": ' + inner + "}"
    lenient = draw(st.booleans())  # a trailing comma sends it down the lenient parser
    return inner[:-1] + ",}" if lenient else inner


@settings(max_examples=300, deadline=None)
@given(_object_with_a_duplicate())
def test_any_object_with_a_duplicate_key_is_refused(text: str) -> None:
    with pytest.raises(ArgumentError) as info:
        decode_arguments(text)
    assert info.value.reason == "duplicate-key"


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEYS, _SCALARS, max_size=6))
def test_objects_without_duplicates_decode_as_json_does(value: dict[str, Any]) -> None:
    text = json.dumps(value)
    assert decode_arguments(text)[0] == value
    assert decode_value_at(text)[0] == value  # the lenient parser agrees
