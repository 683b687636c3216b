"""The pythonic and XML-style dialects: tables of replies, streaming prefixes, hostile input."""

from __future__ import annotations

import copy
import pickle
from functools import partial
from typing import Any

import pytest

from toolrepair import ANY_TOOL, ToolRegistry, ToolSpec, repair_call, salvage_text
from toolrepair._salvage._engine import SalvagePass, config_for

Row = tuple[str, Any, list[tuple[str, dict[str, Any]]], "str | None"]

PYTHONIC: list[Row] = [
    ("[lookup(term='owl', limit=3)]", ["lookup"], [("lookup", {"term": "owl", "limit": 3})], ""),
    (
        "Sure thing: [lookup(term=\"a]b\", flags={'x': [1, (2, 3)]}, on=True, off=None)] ok.",
        ["lookup"],
        [("lookup", {"term": "a]b", "flags": {"x": [1, [2, 3]]}, "on": True, "off": None})],
        "Sure thing:  ok.",
    ),
    ("[a(v=-2.5, w=true, z=null), b()]", ["a", "b"], [("a", {"v": -2.5, "w": True, "z": None}), ("b", {})], ""),
    ("[a(p='it\\'s'), b(q=open('x')), c(r=b'raw'), d(s=1e999)]", ["a", "b", "c", "d"], [("a", {"p": "it's"})], None),
    ("[a(x=1)] then [b(y='2')]", ["a", "b"], [("a", {"x": 1}), ("b", {"y": "2"})], "then "),
    ("[a(x=1])]", ["a"], [], None),
    ("[a(x='unterminated)]", ["a"], [], None),
    ("[a(x=1", ["a"], [], None),
    ("```\n[a(x=1)]\n```", ["a"], [], None),
    ("<think>[a(x=1)]</think>", ["a"], [], ""),
    ("[rm(path='/')]", ["a"], [], None),
    ("see [the docs](http://x) and [note(s)]", ["a"], [], None),
    ("[get_weather('Paris')]", ["get_weather"], [], None),
    ("[a(x='''multi\nline''', y=\"\"\"q\"\"\")]", ["a"], [("a", {"x": "multi\nline", "y": "q"})], ""),
]

WRAPPED: list[Row] = [
    (
        "Hi <|python_start|>[a(x='1'), b(y=2)]<|python_end|> bye",
        ["a", "b"],
        [("a", {"x": "1"}), ("b", {"y": 2})],
        "Hi  bye",
    ),
    ("<|python_start|>[a(x='<|python_end|>')]", ["a"], [("a", {"x": "<|python_end|>"})], ""),
    ("<|python_start|>[a(x=1)", ["a"], [], None),
    (
        "<function_calls>a(x=\"1\")\nb(y={'k': [true, null]})</function_calls>",
        ["a", "b"],
        [("a", {"x": "1"}), ("b", {"y": {"k": [True, None]}})],
        "",
    ),
    (
        'Ok.<function_calls>a(x="</function_calls>")\n</function_calls>',
        ["a"],
        [("a", {"x": "</function_calls>"})],
        "Ok.",
    ),
    ("<function_calls>a(x=1)\nb(y=open('f'))</function_calls>", ["a", "b"], [("a", {"x": 1})], None),
    (
        '<|tool_call_start|>[a(x="p")]<|tool_call_end|> and <|tool_call_start|>[b()]<|tool_call_end|>',
        ["a", "b"],
        [("a", {"x": "p"}), ("b", {})],
        "and ",
    ),
    ("<think><|tool_call_start|>[a()]<|tool_call_end|></think>", ["a"], [], ""),
    ("<|tool_call_start|>[zz(x=1)]<|tool_call_end|>", ["a"], [], None),
    # A stray opener whose body does not decode does not swallow the call written after it.
    (
        "<function_calls> x { <function_calls>\nget_weather()\n</function_calls> }",
        ["get_weather"],
        [("get_weather", {})],
        "<function_calls> x {  }",
    ),
    (
        "<|python_start|> x { <|python_start|>[get_weather()]<|python_end|> }",
        ["get_weather"],
        [("get_weather", {})],
        "<|python_start|> x {  }",
    ),
    (
        "<|tool_call_start|> x { <|tool_call_start|>[get_weather()]<|tool_call_end|> }",
        ["get_weather"],
        [("get_weather", {})],
        "<|tool_call_start|> x {  }",
    ),
    # ... while a call inside a well-formed block's arguments stays data.
    ('<function_calls>a(x="<function_calls>b()</function_calls>")</function_calls>', ["b"], [], None),
]

QWEN: list[Row] = [
    (
        "<tool_call>\n<function=run>\n<parameter=cmd>\nls -la\n</parameter>\n<parameter=n>\n2\n</parameter>\n"
        "</function>\n</tool_call>",
        ["run"],
        [("run", {"cmd": "ls -la", "n": "2"})],
        "",
    ),
    (
        "Let me look.\n<tool_call>\n<function=write>\n<parameter=body>\n<p>a</p>\n</parameter> inside\n"
        "</parameter>\n</function>\n</tool_call>\nDone.",
        ["write"],
        [("write", {"body": "<p>a</p>\n</parameter> inside"})],
        "Let me look.\nDone.",
    ),
    (
        "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
        "<function=b>\n<parameter=y>\n\n two\n\n</parameter>\n</function>\n</tool_call>",
        ["a", "b"],
        [("a", {"x": "1"}), ("b", {"y": "\n two\n"})],
        "",
    ),
    ("<function=a>\n<parameter=x>\nv\n</parameter>\n</function>\n</tool_call>", ["a"], [("a", {"x": "v"})], ""),
    # The reply ends after a value, the call's own closer never written: cut short (more
    # parameters may have followed) or its closers eaten; one reading runs a call that may
    # lack arguments, so it is refused (truncated). With `</function>` it is whole.
    ("<tool_call>\n<function=a>\n<parameter=x>\nv\n</parameter>\n", ["a"], [], None),
    ("<tool_call>\n<function=a>\n<parameter=x>\nv\n</parameter>\n</function>", ["a"], [("a", {"x": "v"})], ""),
    ("<tool_call>\n<function=a>\n<parameter=x>\nhalf", ["a"], [], None),
    ("<tool_call>\n<function=a>\n", ["a"], [], None),
    ("```\n<tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n</tool_call>\n```", ["a"], [], None),
    ("<tool_call>\n<function=nope>\n<parameter=x>1</parameter>\n</function>\n</tool_call>", ["a"], [], None),
    # A closing tag inside a value is text where the structure after it disagrees (here
    # `</TOOL_CALL>` is followed by prose, `</function>` by `</parameter>`): the value's own
    # `</parameter>` ends it, and it comes back whole.
    (
        "<tool_call>\n<function=a>\n<parameter=x>\nsee </TOOL_CALL> here\n</parameter>\n</function>\n</tool_call>",
        ["a"],
        [("a", {"x": "see </TOOL_CALL> here"})],
        "",
    ),
    (
        "<tool_call>\n<function=a>\n<parameter=x>\nv</function>\n</parameter>\n</tool_call>",
        ["a"],
        [("a", {"x": "v</function>"})],
        "",
    ),
    # A missing `</parameter>` before `</function>` and the block close: the stop ends the value.
    ("<tool_call>\n<function=a>\n<parameter=x>\nv\n</function>\n</tool_call>", ["a"], [("a", {"x": "v"})], ""),
    # Two readings (x = "v\n<parameter=y>\nw", or x = "v" with its close missing and y = "w"):
    # refused, see test_rejection_reasons.
    (
        "<tool_call>\n<function=a>\n<parameter=x>\nv\n<parameter=y>\nw\n</parameter>\n</function>\n</tool_call>",
        ["a"],
        [],
        None,
    ),
    # One template newline each side, `\r\n` counted as one (CRLF logs): a trailing CR merges.
    (
        "<tool_call>\r\n<function=a>\r\n<parameter=x>\r\nv\r\n</parameter>\r\n</function>\r\n</tool_call>",
        ["a"],
        [("a", {"x": "v"})],
        "",
    ),
    (
        "<tool_call>\n<function=a>\n<parameter=x>\n\r\n</parameter>\n</function>\n</tool_call>",
        ["a"],
        [("a", {"x": ""})],
        "",
    ),
    # Seed-OSS blocks may hold several functions (a Qwen3-Coder block holds one).
    (
        "<seed:tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n<function=a>\n"
        "<parameter=x>2</parameter>\n</function>\n</seed:tool_call>",
        ["a"],
        [("a", {"x": "1"}), ("a", {"x": "2"})],
        "",
    ),
    (
        "<seed:think>try <seed:tool_call><function=a><parameter=x>0</parameter></function></seed:tool_call>"
        "</seed:think><seed:tool_call>\n<function=a>\n<parameter=x>keep\n</parameter>\n</function>\n</seed:tool_call>",
        ["a"],
        [("a", {"x": "keep\n"})],
        None,
    ),
]

GLM: list[Row] = [
    (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>",
        ["get_weather"],
        [("get_weather", {"city": "Oslo"})],
        "",
    ),
    (
        "Sure.<tool_call>a<arg_key>k</arg_key><arg_value>x </arg_value> <tool_call> y</arg_value></tool_call>"
        "<tool_call>b</tool_call>",
        ["a", "b"],
        [("a", {"k": "x </arg_value> <tool_call> y"}), ("b", {})],
        "Sure.",
    ),
    (
        '<tool_call>a<arg_key>k</arg_key><arg_value>[1, {"z": "}"}]</arg_value></tool_call>',
        ["a"],
        [("a", {"k": '[1, {"z": "}"}]'})],
        "",
    ),
    ('<tool_call>a<arg_key>k</arg_key><arg_value>[1, {"z": "}"}]</arg_value>', ["a"], [], None),  # no closer
    ("<tool_call>a<arg_key>k</arg_key><arg_value>cut", ["a"], [], None),
    ("<tool_call>a", ["a"], [], None),
    ("<think><tool_call>a</tool_call></think>", ["a"], [], ""),
    ("<tool_call>zz</tool_call>", ["a"], [], None),
    ('<tool_call>{"name": "a", "arguments": {}}</tool_call>', ["a"], [("a", {})], ""),
]

INVOKE: list[Row] = [
    (
        'Checking.\n<minimax:tool_call>\n<invoke name="a">\n<parameter name="x">1</parameter>\n</invoke>\n'
        '<invoke name="b"><parameter name="y"><b>hi</parameter> there</b></parameter></invoke>\n'
        "</minimax:tool_call>",
        ["a", "b"],
        [("a", {"x": "1"}), ("b", {"y": "<b>hi</parameter> there</b>"})],
        "Checking.",
    ),
    ('<minimax:tool_call><invoke name="a"><parameter name="x">1</parameter>', ["a"], [], None),  # no closer
    ('<minimax:tool_call><invoke name="a"><parameter name="x">1</parameter></invoke>', ["a"], [("a", {"x": "1"})], ""),
    ('<minimax:tool_call><invoke name="a"><parameter name="x">1', ["a"], [], None),
    ('<think><minimax:tool_call><invoke name="a"></invoke></minimax:tool_call></think>', ["a"], [], ""),
    (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="a">\n<｜DSML｜parameter name="n" string="false">'
        '{"k": [1, 2]}</｜DSML｜parameter>\n<｜DSML｜parameter name="s" string="true">42</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        ["a"],
        [("a", {"n": {"k": [1, 2]}, "s": "42"})],
        "",
    ),
    (
        '<｜DSML｜tool_calls><｜DSML｜invoke name="a">{"q": "x"}</｜DSML｜invoke></｜DSML｜tool_calls>',
        ["a"],
        [("a", {"q": "x"})],
        "",
    ),
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>a\n<steptml:invoke name="a">'
        '<steptml:parameter name="s">  pad </steptml:parameter></steptml:invoke><｜tool_call_end｜>'
        "<｜tool_calls_end｜> after",
        ["a"],
        [("a", {"s": "  pad "})],
        "after",
    ),
    (
        '<atem:function_calls><atem:invoke name="a"><atem:parameter name="k">v</atem:parameter></atem:invoke>'
        "</atem:function_calls>",
        ["a"],
        [("a", {"k": "v"})],
        "",
    ),
    (
        '<function name="a"><param name="k"><![CDATA[x</param>y]]></param></function>\n'
        '<function name="b"><param name="k">2</param></function>',
        ["a", "b"],
        [("a", {"k": "x</param>y"}), ("b", {"k": "2"})],
        "",
    ),
    ('<minimax:tool_call><invoke name="zz"></invoke></minimax:tool_call>', ["a"], [], None),
    (
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="a">]<]minimax[>[<k>v]<]minimax[>[</k>'
        "]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
        ["a"],
        [("a", {"k": "v"})],
        "",
    ),
    # The reply ended between invokes: the complete calls stand.
    (
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="a">]<]minimax[>[<k>v]<]minimax[>[</k>'
        "]<]minimax[>[</invoke>",
        ["a"],
        [("a", {"k": "v"})],
        "",
    ),
    ('<minimax:tool_call><invoke name="a">{"q": "x"}', ["a"], [("a", {"q": "x"})], ""),
    (
        '<|open|>tools<|sep|><|open|>call tool="a" index="1"<|sep|><|open|>argument key="n" type="number"'
        '<|sep|>7<|close|>argument<|sep|><|open|>argument key="s" type="string"<|sep|>7<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|>",
        ["a"],
        [("a", {"n": 7, "s": "7"})],
        "",
    ),
]

ALL = PYTHONIC + WRAPPED + QWEN + GLM + INVOKE


def _check(text: str, allowed: Any, calls: list[tuple[str, dict[str, Any]]], content: str | None) -> None:
    r = salvage_text(text, allowed)
    assert [(c.name, c.arguments) for c in r.calls] == calls
    if content is not None:
        assert r.content == content
    if not calls and content is None:
        assert r.content == text


@pytest.mark.parametrize(("text", "allowed", "calls", "content"), ALL)
def test_table(text: str, allowed: Any, calls: list[tuple[str, dict[str, Any]]], content: str | None) -> None:
    _check(text, allowed, calls, content)


@pytest.mark.parametrize(("text", "allowed", "calls", "content"), ALL)
def test_streaming_prefixes_agree(text: str, allowed: Any, calls: Any, content: Any) -> None:
    whole = salvage_text(text, allowed)
    config = config_for(None)
    for k in range(len(text) + 1):
        run = SalvagePass(config, allowed, text[:k])
        run.advance(final=False)
        run.extend(text[k:])
        run.advance(final=True)
        got = run.result()
        assert (got.calls, got.content) == (whole.calls, whole.content), k


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[rm(path='/')]", "not-offered"),
        ("[a(x=1])]", "undecodable"),
        ("[a(x=__import__('os'))]", "non-literal"),
        ("[a(x=1e999)]", "undecodable-arguments"),
        ("[a(x='one\nline')]", "undecodable"),  # a newline inside a one-line string
        ("[a(x={**d})]", "non-literal"),
        ("[a(x={1: 2})]", "undecodable-arguments"),  # JSON keys are strings
        ("[a(x=not 1)]", "non-literal"),
        ("[a(x=-True)]", "non-literal"),
        ("[a(x=y)]", "non-literal"),
        ("<tool_call>\n<function=zz>\n<parameter=x>1</parameter>\n</function>\n</tool_call>", "not-offered"),
        ("<tool_call>zz<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>", "not-offered"),
        ('<minimax:tool_call><invoke name="a"><parameter name="x">1', "truncated"),
        ('<minimax:tool_call><invoke name="a">{"q": }</invoke></minimax:tool_call>', "undecodable"),
        (
            '<minimax:tool_call><invoke name="a"><parameter_x name="k">1</parameter_x></invoke></minimax:tool_call>',
            "undecodable",
        ),
        (
            '<minimax:tool_call><invoke name="a"><parameter id="k">1</parameter></invoke></minimax:tool_call>',
            "undecodable",
        ),
        ("]<]minimax[>[<tool_call>]<]minimax[>[<foo>", "undecodable"),
        (']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="a">]<]minimax[>[<k>v]<]minimax[>[</j>', "undecodable"),
        ("<tool_call>a<arg_key>" + "k" * 300 + "</arg_key><arg_value>v</arg_value></tool_call>", "undecodable"),
        ("<tool_call>a<arg_key>k</arg_key> v</tool_call>", "undecodable"),
        (
            "<tool_call>\n<function=a>\n<parameter=x>\nv\n<parameter=y>\nw\n</parameter>\n</function>\n</tool_call>",
            "ambiguous",
        ),
        (
            "<tool_call>a<arg_key>k</arg_key><arg_value>v<arg_key>j</arg_key><arg_value>w</arg_value></tool_call>",
            "ambiguous",
        ),
    ],
)
def test_rejection_reasons(text: str, reason: str) -> None:
    r = salvage_text(text, ["a"])
    assert not r.calls
    assert [x.reason for x in r.rejected] == [reason]


def test_deep_nesting_refused_before_parsing() -> None:
    text = "[a(x=" + "[" * 5000 + "]" * 5000 + ")]"
    r = salvage_text(text, ["a"])
    assert not r.calls and r.rejected[0].reason == "too-deep"


def test_json_array_left_to_json_readers() -> None:
    r = salvage_text('[{"name": "a", "arguments": {"x": 1}}]', ["a"])
    assert [(c.name, c.arguments, c.dialect) for c in r.calls] == [("a", {"x": 1}, "json")]


HOSTILE = [
    "[f(",
    "[f(a=, ",
    "[f('",
    "<|python_start|>[f(",
    "<function_calls>f(",
    "<tool_call><function=f><parameter=x>",
    "<tool_call>f<arg_key>k</arg_key><arg_value>",
    '<minimax:tool_call><invoke name="f"><parameter name="k">',
    '<function name="f"><param name="k"><![CDATA[',
    '<|open|>tools<|sep|><|open|>call tool="f"<|sep|>',
    "<function_calls> x {",
    "<|python_start|> x (",  # broken bodies, each marker read again
    '<tool_call>f a="x" ',  # attributes as arguments: a tag never closed
]


@pytest.mark.parametrize("unit", HOSTILE)
def test_hostile_repetition_is_linear(unit: str, assert_linear_work: Any) -> None:
    # Counted work (conftest.count_calls); the times are in benchmarks/bench_doubling.py.
    head = "[f(" if unit == "[f(a=, " else ""  # the published ReDoS shape: one list, a long tail
    assert_linear_work(lambda k: partial(salvage_text, head + unit * k, ANY_TOOL), 4_000 // len(unit))


# Raw tag text `null` (Qwen3-Coder, Seed-OSS): None where the parameter's schema allows null,
# the string "null" where it does not; JSON's own "null" string always stays a string.
_QWEN_V = "<tool_call>\n<function=f>\n<parameter=v>\n{}\n</parameter>\n</function>\n</tool_call>"
_SEED_V = "<seed:tool_call>\n<function=f>\n<parameter=v>{}</parameter>\n</function>\n</seed:tool_call>"
NULL_TEXT: list[tuple[str, Any, Any]] = [
    (_QWEN_V.format("null"), {"type": ["string", "null"]}, None),
    (_QWEN_V.format("null"), {"type": "string"}, "null"),
    (_QWEN_V.format("NULL"), {"type": ["null", "string"]}, None),
    (_QWEN_V.format("null"), {"type": ["integer", "null"]}, None),
    (_QWEN_V.format("null"), {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
    (_QWEN_V.format("null"), {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "null"),
    (_QWEN_V.format("null"), {}, "null"),  # no type list: kept as written
    (_QWEN_V.format("nullish"), {"type": ["string", "null"]}, "nullish"),
    (_QWEN_V.format('"null"'), {"type": ["string", "null"]}, '"null"'),
    (_SEED_V.format("null"), {"type": ["string", "null"]}, None),
    (_SEED_V.format(" null "), {"type": "string"}, " null "),
    ('<tool_call>{"name": "f", "arguments": {"v": "null"}}</tool_call>', {"type": ["string", "null"]}, "null"),
]


@pytest.mark.parametrize(("text", "prop", "value"), NULL_TEXT)
def test_tag_text_null_is_none_where_the_schema_allows_it(text: str, prop: Any, value: Any) -> None:
    registry = ToolRegistry([ToolSpec("f", {"type": "object", "properties": {"v": prop}})])
    (call,) = salvage_text(text, registry.names).calls
    repaired = repair_call(call, registry).call
    assert repaired is not None
    got = repaired.arguments["v"]
    assert got == value and type(got) is type(value)


def test_null_text_is_a_plain_str_once_copied() -> None:
    (call,) = salvage_text(_QWEN_V.format("null"), ["f"]).calls
    assert call.arguments == {"v": "null"}
    assert type(pickle.loads(pickle.dumps(call.arguments["v"]))) is str
    assert type(copy.deepcopy(call.arguments)["v"]) is str
