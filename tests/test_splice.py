"""``fix`` rewrites only what it repairs: every other byte of a record stays as it was.

``tests/data/json_valid_documents.json`` holds JSONTestSuite's (github.com/nst/JSONTestSuite)
single-line ``y_`` documents, the ``i_`` ones Python's json accepts (huge exponents, long
integers, lone surrogates, 500 nested arrays) and the spellings the issue named, written out
as data (name -> the document's exact text); nothing is fetched when the tests run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._records import RecordFixer
from toolrepair._report import Tally
from toolrepair._splice import same_value, splice

DOCS: dict[str, str] = json.loads((Path(__file__).parent / "data" / "json_valid_documents.json").read_text("utf-8"))
CALL = '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'
CALL_JSON = json.dumps(CALL)
TOOLS = ["web_search"]


def test_the_documents_are_json() -> None:
    assert len(DOCS) > 100
    for text in DOCS.values():
        json.loads(text)
        assert "\n" not in text  # each fits on one JSON Lines line


# -- the table -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kept",
    [
        "1e400",
        "-1E400",
        "12345678901234567890.5",
        "1.10",
        "2.50e0",
        "-0.0",
        "1E+2",
        "123.456e-789",
        "-237462374673276894279832749832423479823246327846",
        '"\\u00e9\\/"',
        '"\\ud800"',
    ],
)
def test_values_beside_a_repair_keep_their_spelling(kept: str) -> None:
    line = (
        '{"id": '
        + kept
        + ', "messages": [{"role": "assistant", "content": '
        + CALL_JSON
        + ', "score": '
        + kept
        + ', "score": 2}], "tail" :'
        + kept
        + "}\n"
    )
    fixed, report = tr.fix_record(line, tools=TOOLS)
    assert report.records_changed == 1
    assert fixed.startswith('{"id": ' + kept + ', "messages": [{"role": "assistant", "content": ')
    assert ', "score": ' + kept + ', "score": 2' in fixed  # the duplicate key too
    assert fixed.endswith('], "tail" :' + kept + "}\n")
    assert same_value(json.loads(fixed), tr.fix_record(json.loads(line), tools=TOOLS)[0])


def test_bytes_lines_are_spliced_as_bytes() -> None:
    line = '{"n": 1.10, "é": "\\u00e9", "messages": [{"role": "assistant", "content": ' + CALL_JSON + "}]}\r\n"
    fixed, _ = tr.fix_record(line.encode(), tools=TOOLS)
    assert isinstance(fixed, bytes) and fixed.endswith(b"}]}\r\n")
    assert fixed.startswith('{"n": 1.10, "é": "\\u00e9", "messages": '.encode())
    assert fixed.decode() == tr.fix_record(line, tools=TOOLS)[0]


# -- every shape fix writes, with documents around and inside what it changes -----------------------
def records(doc: str) -> list[str]:
    """Records in every shape ``fix`` rewrites, with ``doc`` beside the repair at each level."""
    return [
        '{"meta": ' + doc + ', "messages": [{"role": "user", "content": "q", "x": ' + doc + "}, "
        '{"role": "assistant", "content": ' + CALL_JSON + ', "extra": ' + doc + "}, "
        '{"role": "tool", "y": ' + doc + ', "content": "r"}], "tail": ' + doc + "}",
        '{"choices": [{"index": 0, "logprobs": ' + doc + ', "finish_reason": "stop", "message": '
        '{"role": "assistant", "content": ' + CALL_JSON + '}}], "usage": ' + doc + "}",
        '{"role": "assistant", "stop_reason": "end_turn", "content": [{"type": "image", "source": ' + doc + "}, "
        '{"type": "text", "text": ' + CALL_JSON + '}], "z": ' + doc + "}",
        '{"conversations": [{"from": "human", "value": "q", "x": '
        + doc
        + '}, {"from": "gpt", "value": '
        + json.dumps("Let me look. " + CALL)
        + ', "w": '
        + doc
        + '}, {"from": "observation", "value": "r"}], '
        '"meta": ' + doc + "}",
        '{"tools": [{"type": "function", "function": {"name": "web_search", "parameters": {"type": "object"}}}], '
        '"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "extra": ' + doc + ", "
        '"function": {"name": "WebSearch", "arguments": "{\\"query\\": \\"x\\"}"}}]}], "m": ' + doc + "}",
    ]


#: Where in a record the fix may write: the values it repairs (and the keys that hold them).
REPAIR_SITES = (CALL_JSON, json.dumps("Let me look. " + CALL), '"WebSearch"', '"stop"', '"end_turn"', '"r"}')


def unchanged_outside_repairs(line: str, fixed: str, doc: str) -> None:
    # Every embedded document comes back in its own spelling, as many times as it was written...
    assert fixed.count(doc) >= line.count(doc)
    # ...everything before the first place a repair may write is the same text, and everything
    # after the last one...
    first = min(line.index(site) for site in REPAIR_SITES if site in line)
    assert fixed[:first] == line[:first]
    last = max(line.rindex(site) + len(site) for site in REPAIR_SITES if site in line)
    assert fixed.endswith(line[last:])
    # ...and the record means what the fix of its decoded value means.
    assert same_value(json.loads(fixed), fixed_value(line))


def fixed_value(line: str) -> Any:
    """The decoded record fixed in place (no copy, so 500 nested arrays are no obstacle)."""
    value = json.loads(line)
    RecordFixer(TOOLS).fix(value, Tally(), owned=True)
    return value


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_document_survives_every_shape(name: str) -> None:
    doc = DOCS[name]
    for line in records(doc):
        fixed, report = tr.fix_record(line, tools=TOOLS)
        assert report.records_changed == 1, (name, line)
        unchanged_outside_repairs(line, fixed, doc)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(DOCS)), st.sampled_from(sorted(DOCS)), st.integers(0, 4))
def test_documents_mixed_in_records_are_byte_identical(first: str, second: str, shape: int) -> None:
    doc = DOCS[first] + ", " + DOCS[second]
    line = records("[" + doc + "]")[shape]
    fixed, report = tr.fix_record(line, tools=TOOLS)
    assert report.records_changed == 1
    assert fixed.count("[" + doc + "]") >= line.count("[" + doc + "]")
    assert same_value(json.loads(fixed), fixed_value(line))


# -- splice itself: any old value, any new value -----------------------------------------------------
scalars = st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=True) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner, max_size=5),
    max_leaves=25,
)


@st.composite
def edited(draw: st.DrawFn) -> tuple[Any, Any]:
    """A value and a changed copy: members and elements replaced, added, deleted, inserted."""
    old = draw(values)

    def change(value: Any) -> Any:
        action = draw(st.integers(0, 5))
        if action == 0:
            return draw(values)
        if type(value) is dict:
            out = {
                k: change(v) if draw(st.booleans()) else v
                for k, v in value.items()
                if action != 1 or draw(st.booleans())
            }
            for key in draw(st.lists(st.text(max_size=4), max_size=2)) if action == 2 else []:
                out[key] = draw(values)
            return out
        if type(value) is list:
            out_list = [change(v) if draw(st.booleans()) else v for v in value if action != 1 or draw(st.booleans())]
            for _ in range(draw(st.integers(0, 2)) if action == 3 else 0):
                out_list.insert(draw(st.integers(0, len(out_list))), draw(values))
            return out_list
        return value

    return old, change(old)


@st.composite
def spelled(draw: st.DrawFn, value: Any) -> str:
    """``value``'s JSON with spacing drawn per container."""
    if type(value) is dict:
        colon, comma = draw(st.sampled_from([":", ": ", " : "])), draw(st.sampled_from([",", ", ", " ,\t"]))
        inner = comma.join(json.dumps(k) + colon + draw(spelled(v)) for k, v in value.items())
        return "{" + draw(st.sampled_from(["", " "])) + inner + draw(st.sampled_from(["", " "])) + "}"
    if type(value) is list:
        comma = draw(st.sampled_from([",", ", ", " , "]))
        return "[" + draw(st.sampled_from(["", " "])) + comma.join(draw(spelled(v)) for v in value) + "]"
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


@settings(max_examples=400, deadline=None)
@given(edited(), st.data())
def test_splice_decodes_to_the_new_value(pair: tuple[Any, Any], data: st.DataObject) -> None:
    old, new = pair
    text = " " + data.draw(spelled(old)) + " "
    out = splice(text, json.loads(text), new)
    assert same_value(json.loads(out), new)
    if same_value(old, new):
        assert out == text


def test_same_value_is_strict() -> None:
    assert same_value(math.nan, math.nan) and same_value([1, {"a": 2.0}], [1, {"a": 2.0}])
    for a, b in [
        (1, 1.0),
        (1, True),
        (0.0, -0.0),
        ({"a": 1}, {"b": 1}),
        ([1], [1, 2]),
        ([1], {"a": 1}),
        ({"a": 1, "b": [1]}, {"b": [1.0], "a": 1}),
    ]:
        assert not same_value(a, b)
    assert same_value({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order is no difference
    deep_a: Any = []
    deep_b: Any = []
    for _ in range(5000):  # past json's encoder: the iterative walk decides
        deep_a, deep_b = [deep_a], [deep_b]
    assert same_value(deep_a, deep_b) and not same_value(deep_a, [deep_b])
    assert same_value({1, 2}, {2, 1}) and not same_value({1}, {2})  # not JSON at all: the walk too


def test_text_that_is_not_the_old_value_is_refused() -> None:
    for text, old, new in [
        ("[1, 2]", [1, 2, 3], [1]),
        ('{"a": [1]}', {"b": [1]}, {"b": [2]}),
        ('{"a": [1, 2]}', {"a": [1]}, {"a": [3]}),
    ]:
        with pytest.raises(ValueError, match="not the JSON of the old value"):
            splice(text, old, new)
