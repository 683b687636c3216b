"""The two answers known without doing the work, checked against doing it.

- A whole-text salvage of a text with no anchor character of any enabled marker returns at
  once: the same result as the full ``SalvagePass``.
- A schema that constrains nothing but ``type: object`` skips jsonschema: jsonschema says
  valid for every object such a schema sees.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._args import compile_schema
from toolrepair._args._schema import _vacuous
from toolrepair._salvage._engine import SalvagePass, config_for, run_whole

CONFIG = config_for(None)
ANCHORS = "".join(CONFIG.finder.anchors)


def _full_pass(text: str, allowed: Any) -> tr.SalvageResult:
    run = SalvagePass(CONFIG, allowed, text)
    run.advance(final=True)
    return run.result()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "plain prose, with commas; and a full stop.",
        "The answer depends on the period you look at; here is a summary of the main points.",
        "tool_call name web_search arguments query cats",  # markers' words, none of their anchors
        "caf\u00e9 \u2014 \u00fcber (parentheses) \"quotes\" 'single'",
    ],
)
def test_text_without_anchors_returns_at_once_with_the_full_pass_result(text: str) -> None:
    assert CONFIG.finder.anchor_re.search(text) is None
    fast = run_whole(text, CONFIG, ["web_search"], 64, 1 << 20)
    assert fast == _full_pass(text, ["web_search"]) == tr.SalvageResult((), text, ())


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "web_search", "arguments": {"q": "x"}}</tool_call>',
        '[web_search(q="x")]',
        "```\n<tool_call>{}</tool_call>\n```",
        "thinking</think>after",
    ],
)
def test_text_with_an_anchor_takes_the_full_pass(text: str) -> None:
    assert CONFIG.finder.anchor_re.search(text) is not None
    assert run_whole(text, CONFIG, ["web_search"], 64, 1 << 20) == _full_pass(text, ["web_search"])


@given(st.text(alphabet=st.characters(blacklist_characters=ANCHORS), max_size=200) | st.text(max_size=200))
def test_run_whole_equals_the_full_pass(text: str) -> None:
    assert run_whole(text, CONFIG, ["web_search"], 64, 1 << 20) == _full_pass(text, ["web_search"])


def test_a_bad_allowlist_fails_on_text_without_anchors_too() -> None:
    with pytest.raises(TypeError, match="allowed must be"):
        tr.salvage_text("plain prose", 42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("schema", "vacuous"),
    [
        ({}, True),
        ({"type": "object"}, True),
        ({"type": ["object"]}, True),
        ({"type": "object", "properties": {}, "required": []}, True),
        ({"type": "object", "title": "t", "description": "d", "additionalProperties": True}, True),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, True),
        ({"type": "object", "properties": {"q": {"type": "string"}}}, False),
        ({"type": "object", "required": ["q"]}, False),
        ({"type": "object", "additionalProperties": False}, False),
        ({"type": "object", "maxProperties": 1}, False),
        ({"type": "object", "minProperties": 1}, False),
        ({"type": "object", "patternProperties": {"^x": {"type": "integer"}}}, False),
        ({"type": "object", "propertyNames": {"maxLength": 1}}, False),
        ({"type": "string"}, False),
        ({"type": ["object", "null"]}, False),
        ({"not": {}}, False),
        ({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object"}}}, False),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, False),
    ],
)
def test_vacuous_schemas(schema: dict[str, Any], vacuous: bool) -> None:
    assert _vacuous(schema) is vacuous


VACUOUS = [
    {},
    {"type": "object"},
    {"type": "object", "properties": {}, "required": []},
    {"type": ["object"], "additionalProperties": True},
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(st.sampled_from(VACUOUS), st.dictionaries(st.text(max_size=8), JSON, max_size=4))
def test_a_vacuous_schema_accepts_what_jsonschema_accepts(schema: dict[str, Any], args: dict[str, Any]) -> None:
    assert jsonschema.Draft202012Validator(schema).is_valid(args)  # the reference's answer
    assert compile_schema(schema).apply(args, tool="t") == (args, ())
