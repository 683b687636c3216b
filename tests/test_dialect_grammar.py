"""Wrappers, spellings and payloads as data: each row a reply, the calls a careful reader
expects, the content left, and the rejections (reasons, in order) that every opened region
which gave no call must leave. Every row is also fed in every two-piece split."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrepair import salvage_text
from toolrepair._salvage._engine import SalvagePass, config_for
from toolrepair._salvage.spelled import bar_variants
from toolrepair.testing import arguments

Calls = list[tuple[str, dict[str, Any]]]
Row = tuple[str, list[str], Calls, "str | None", list[str]]


def _dsml(p: str, block: str, *invokes: str) -> str:
    return f"<{p}{block}>\n" + "\n".join(invokes) + f"\n</{p}{block}>"


def _dsml_invoke(p: str, name: str, **params: str) -> str:
    body = "".join(f'<{p}parameter name="{k}" string="true">{v}</{p}parameter>\n' for k, v in params.items())
    return f'<{p}invoke name="{name}">\n{body}</{p}invoke>'


SPELLINGS: list[Row] = [
    # Every spelling of the DSML prefix, with each block keyword DeepSeek has used.
    *[
        (
            _dsml(p, block, _dsml_invoke(p, "a", x="1"), _dsml_invoke(p, "b", y="2")),
            ["a", "b"],
            [("a", {"x": "1"}), ("b", {"y": "2"})],
            "",
            [],
        )
        for p in ("｜DSML｜", "｜DSML｜ ", "｜｜DSML｜｜", "｜｜dsml｜｜ ")
        for block in ("function_calls", "tool_calls", "calls")
    ],
    # A block cut inside its second call: the complete first call stands, the cut one is refused.
    *[
        (
            _dsml(p, "calls", _dsml_invoke(p, "a", x="1"))[: -len(f"\n</{p}calls>")] + cut,
            ["a", "b"],
            [("a", {"x": "1"})],
            None,
            ["truncated"],
        )
        for p in ("｜DSML｜", "｜DSML｜ ")
        for cut in (
            f'\n<{p}invoke name="b">\n<{p}parameter name="q"',
            f'\n<{p}invoke name="b">\n<{p}parameter name="q">v',
        )
    ],
]

Q = "<tool_call>\n<function=w>\n<parameter=path>\nx.md\n</parameter>\n<parameter=content>\n{}\n</parameter>\n</function>\n</tool_call>"

VALUES: list[Row] = [
    # The format's own tags inside a value, where what follows disagrees: text, kept whole.
    (
        Q.format("Close with </function> then </tool_call>; open with <function=x>."),
        ["w"],
        [("w", {"path": "x.md", "content": "Close with </function> then </tool_call>; open with <function=x>."})],
        "",
        [],
    ),
    (
        Q.format("inline: </parameter> and </function> and <parameter=path> here."),
        ["w"],
        [("w", {"path": "x.md", "content": "inline: </parameter> and </function> and <parameter=path> here."})],
        "",
        [],
    ),
    # A value holding its call's whole closing sequence: the reply reads two ways, refused.
    (Q.format("a\n</parameter>\n</function>\n</tool_call>\nb"), ["w"], [], None, ["ambiguous"]),
    (Q.format("a\n</parameter>\n</function>\n</tool_call>"), ["w"], [], None, ["ambiguous"]),
    # One damage, one rule: a value whose closing tag is missing ends at its call's closers, in
    # Qwen3-Coder and in GLM alike.
    (
        "<tool_call>\n<function=w>\n<parameter=path>\nx.md\n</function>\n</tool_call>",
        ["w"],
        [("w", {"path": "x.md"})],
        "",
        [],
    ),
    ("<tool_call>w<arg_key>path</arg_key><arg_value>x.md</tool_call>", ["w"], [("w", {"path": "x.md"})], "", []),
    (
        "<tool_call>w<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>b</arg_key><arg_value>2</tool_call>",
        ["w"],
        [("w", {"a": "1", "b": "2"})],
        "",
        [],
    ),
    # Two values for one key: refused.
    (
        "<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n</function>\n"
        "</tool_call>",
        ["w"],
        [],
        None,
        ["undecodable-arguments"],
    ),
    (
        "<tool_call>w<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>a</arg_key><arg_value>2</arg_value>"
        "</tool_call>",
        ["w"],
        [],
        None,
        ["undecodable-arguments"],
    ),
    (
        '<minimax:tool_call><invoke name="w"><parameter name="a">1</parameter><parameter name="a">2</parameter>'
        "</invoke></minimax:tool_call>",
        ["w"],
        [],
        None,
        ["undecodable-arguments"],
    ),
    # An invoke's own tags in the block after it ended: a value held them.
    (
        '<minimax:tool_call><invoke name="w"><parameter name="a">1</parameter></invoke>x</parameter></invoke>'
        "</minimax:tool_call>",
        ["w"],
        [],
        None,
        ["ambiguous"],
    ),
]

J = '{"name": "w", "arguments": {"city": "Paris"}}'

CHANNELS: list[Row] = [
    # Harmony's final channel is the reply's content and analysis its reasoning: a call-shaped
    # object in either is text. (These rows also pin the marker scan with more than 64 markers
    # sharing one anchor character, the built-in table's `<` group.)
    (
        "<|channel|>analysis<|message|>Not a call.<|end|><|start|>assistant<|channel|>final<|message|>" + J,
        ["w"],
        [],
        None,
        [],
    ),
    ("<|channel|>final<|message|>" + J + "<|end|>", ["w"], [], None, []),
    ("<|channel|>final <|message|>" + J, ["w"], [], None, []),
    ("<|channel|>analysis<|message|>" + J + "<|end|>", ["w"], [], None, []),
    ("<think>" + J + "</think>", ["w"], [], None, []),
    # A call after the final message is still a call.
    (
        "<|channel|>final<|message|>ok<|end|><|start|>assistant<|channel|>commentary to=functions.w "
        '<|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        ["w"],
        [("w", {"city": "Paris"})],
        None,
        [],
    ),
]

K3 = '<|open|>tools<|sep|><|open|>call tool="w" index="1"<|sep|>{}<|close|>call<|sep|><|close|>tools<|sep|>'


def _k3(key: str, value: str) -> str:
    return f'<|open|>argument key="{key}" type="string"<|sep|>{value}<|close|>argument<|sep|>'


KIMI: list[Row] = [
    # Attribute values escaped as XML: the five entities and character references decode, once.
    (
        K3.format(_k3("q&amp;a", "1") + _k3("say &quot;hi&quot;", "2") + _k3("&#60;&#x3e;&amp;quot;", "3")),
        ["w"],
        [("w", {"q&a": "1", 'say "hi"': "2", "<>&quot;": "3"})],
        "",
        [],
    ),
    (K3.format(_k3("&bogus; &#0;", "1")), ["w"], [("w", {"&bogus; &#0;": "1"})], "", []),
    # The argument's closing token quoted in its value, where what follows disagrees: text.
    (
        K3.format(_k3("c", "<|close|>argument<|sep|> is how args end")),
        ["w"],
        [("w", {"c": "<|close|>argument<|sep|> is how args end"})],
        "",
        [],
    ),
    (K3.format(_k3("c", "1") + _k3("c", "2")), ["w"], [], None, ["undecodable-arguments"]),
]

FORMS: list[Row] = [
    # A wrapper and a payload reader combined: a name tag, then JSON arguments.
    ('<tool_call><function>w</function>{"city": "Tokyo"}</tool_call>', ["w"], [("w", {"city": "Tokyo"})], "", []),
    (
        'Sure. <tool_call>\n<function> w </function>\n{"city": "Tokyo"}\n</tool_call> ok',
        ["w"],
        [("w", {"city": "Tokyo"})],
        "Sure.  ok",
        [],
    ),
    ('<tool_call><function>w</function>{"city": "To', ["w"], [], None, ["truncated"]),
    ("<tool_call><function>w</function></tool_call>", ["w"], [], None, []),  # no arguments: not this form
    # Anthropic-style invokes with no namespace prefix.
    (
        '<function_calls>\n<invoke name="w">\n<parameter name="city">Tokyo</parameter>\n</invoke>\n</function_calls>',
        ["w"],
        [("w", {"city": "Tokyo"})],
        "",
        [],
    ),
    ('<function_calls>\nw(city="Tokyo")\n</function_calls>', ["w"], [("w", {"city": "Tokyo"})], "", []),  # OLMo 3
    # A bare invoke, with neither the block nor a namespace: a call once `</invoke>` closes it.
    (
        'court\n<invoke name="w">\n<parameter name="city">Tokyo</parameter>\n</invoke>',
        ["w"],
        [("w", {"city": "Tokyo"})],
        "court",
        [],
    ),
    (
        '<invoke name="w"><parameter name="city">A</parameter></invoke>\n<invoke name="w">{"city": "B"}</invoke>',
        ["w"],
        [("w", {"city": "A"}), ("w", {"city": "B"})],
        "",
        [],
    ),
    ('<invoke name="w">\n<parameter name="city">Tokyo</parameter>', ["w"], [], None, ["truncated"]),
    ('<invoke name="w"><parameter name="city">Tokyo</parameter> then prose', ["w"], [], None, ["truncated"]),
    ('<invoke name="zz"><parameter name="city">Tokyo</parameter></invoke>', ["w"], [], None, ["not-offered"]),
    ('<invoke name="w">{"city": </invoke>', ["w"], [], None, ["undecodable"]),
    # MiniMax's invokes are bare invokes inside its block: one cut or damaged MiniMax call is
    # one rejection (its invokes are not read again), and a call after the block still reads.
    ('<minimax:tool_call>\n<invoke name="w">\n<parameter name="city">To', ["w"], [], None, ["truncated"]),
    (
        '<minimax:tool_call><invoke name="w"><parameter id="c">1</parameter></invoke>'
        '<invoke name="w"><parameter name="city">B</parameter></invoke></minimax:tool_call>',
        ["w"],
        [],
        None,
        ["undecodable"],
    ),
    (
        '<minimax:tool_call><invoke name="w"><parameter id="c">1</parameter></invoke></minimax:tool_call>'
        '<invoke name="w"><parameter name="city">B</parameter></invoke>',
        ["w"],
        [("w", {"city": "B"})],
        None,
        ["undecodable"],
    ),
    (
        ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="w">\n]<]minimax[>[<city>To',
        ["w"],
        [],
        None,
        ["truncated"],
    ),
    # A stray block opener does not swallow the block written after it.
    (
        ']<]minimax[>[<tool_call> ]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="w">]<]minimax[>[<city>B'
        "]<]minimax[>[</city>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
        ["w"],
        [("w", {"city": "B"})],
        None,
        ["undecodable"],
    ),
    (
        '<function_calls><invoke name="w"><parameter name="c">1</parameter></invoke>junk</invoke></function_calls>',
        ["w"],
        [],
        None,
        ["ambiguous"],
    ),
    # A `<tool_use>` wrapper around the call object, or with the name as an attribute.
    ('<tool_use>{"name": "w", "arguments": {"city": "Tokyo"}}</tool_use>', ["w"], [("w", {"city": "Tokyo"})], "", []),
    ('<tool_use name="w">{"city": "Tokyo"}</tool_use>', ["w"], [("w", {"city": "Tokyo"})], "", []),
    # Attributes as arguments: one self-closing tag inside the wrapper, entities decoded once.
    ('<tool_call>exec tool="exec" command="ls -la" />', ["exec"], [("exec", {"command": "ls -la"})], "", []),
    (
        "Run it: <tool_call>\n<exec command=\"ls > out &amp;&amp; echo &quot;ok&quot;\" cwd='/tmp'/>\n</tool_call> done",
        ["exec"],
        [("exec", {"command": 'ls > out && echo "ok"', "cwd": "/tmp"})],
        "Run it:  done",
        [],
    ),
    ('<tool_use>exec command="ls" /></tool_use>', ["exec"], [("exec", {"command": "ls"})], "", []),
    ("<tool_call>get_time /></tool_call>", ["get_time"], [("get_time", {})], "", []),
    ('<tool_call>exec command="&amp;quot;"/>', ["exec"], [("exec", {"command": "&quot;"})], "", []),
    # Refused: a name not offered, another tool named, a key twice, cut, not self-closing.
    ('<tool_call>rm path="/" />', ["exec"], [], None, ["not-offered"]),
    ('<tool_call>exec tool="rm" command="ls" />', ["exec", "rm"], [], None, ["ambiguous"]),
    ('<tool_call>exec command="a" command="b" />', ["exec"], [], None, ["undecodable-arguments"]),
    ('<tool_call>exec command="ls -', ["exec"], [], None, ["truncated"]),
    ('<tool_call><exec command="ls"></exec></tool_call>', ["exec"], [], None, ["undecodable"]),
    # Never outside a wrapper, never prose or a bare value.
    ('exec command="ls" />', ["exec"], [], None, []),
    ('<exec command="ls" />', ["exec"], [], None, []),
    ("<tool_call>exec command=ls /></tool_call>", ["exec"], [], None, []),
    ("<tool_call>Note that this is text.</tool_call>", ["exec"], [], None, []),
    # Qwen-Agent's text protocol.
    ('I will look.\n✿FUNCTION✿: w\n✿ARGS✿: {"city": "Tokyo"}', ["w"], [("w", {"city": "Tokyo"})], "I will look.", []),
    ('✿FUNCTION✿: w\n✿ARGS✿: {"city": "To', ["w"], [], None, ["truncated"]),
    ("✿FUNCTION✿: w\nno arguments here", ["w"], [], None, []),
    # Gemma 4 keys holding spaces.
    (
        '<|tool_call>call:w{name:<|"|>Demo<|"|>, connections:{Basic LLM Chain:{main:[1]}}}<tool_call|>',
        ["w"],
        [("w", {"name": "Demo", "connections": {"Basic LLM Chain": {"main": [1]}}})],
        "",
        [],
    ),
    # Gemma 4's parenthesised form: `k=v` or `k: v`, with or without its closer, keys with
    # spaces; the values are the pythonic reader's literals (JSON's true/false/null too).
    (
        'It is. <|tool_call>call:w(city="Tokyo", unit="celsius")<tool_call|> ok',
        ["w"],
        [("w", {"city": "Tokyo", "unit": "celsius"})],
        "It is.  ok",
        [],
    ),
    ('<|tool_call>call:w(city: "Tokyo", days: 3)', ["w"], [("w", {"city": "Tokyo", "days": 3})], "", []),
    (
        "<|tool_call>call:w(Basic LLM Chain: {'main': [1, 2.50]}, on = true, off=None,)<tool_call|>",
        ["w"],
        [("w", {"Basic LLM Chain": {"main": [1, 2.5]}, "on": True, "off": None})],
        "",
        [],
    ),
    ("<|tool_call>call:w()<tool_call|>", ["w"], [("w", {})], "", []),
    ('<channel|>call:w(q="x")', ["w"], [("w", {"q": "x"})], "", []),  # its opener eaten, as for `{`
    # Refused, one reason each: positional, repeated key, an expression, cut, not offered.
    ('<|tool_call>call:w("Tokyo")<tool_call|>', ["w"], [], None, ["undecodable"]),
    ("<|tool_call>call:w(a=1, a=2)<tool_call|>", ["w"], [], None, ["undecodable-arguments"]),
    ("<|tool_call>call:w(a=open('f'))<tool_call|>", ["w"], [], None, ["non-literal"]),
    ("<|tool_call>call:w(a=1,,b=2)<tool_call|>", ["w"], [], None, ["undecodable"]),
    ('<|tool_call>call:w(city="To', ["w"], [], None, ["truncated"]),
    ('<|tool_call>call:zz(city="Tokyo")<tool_call|>', ["w"], [], None, ["not-offered"]),
    ('See call:w(city="Tokyo") in prose.', ["w"], [], None, []),  # no marker: not a call
]

QA = "<tool_call>\n<function=w>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"

EDGES: list[Row] = [
    ("<tool_call><function>bad name!</function>{}</tool_call>", ["w"], [], None, []),  # no name: not a call
    # Text inside an invoke block that holds none of the invoke's tags: the block's content.
    (
        '<minimax:tool_call><invoke name="w"><parameter name="a">1</parameter></invoke>junk</minimax:tool_call>',
        ["w"],
        [("w", {"a": "1"})],
        "junk</minimax:tool_call>",
        [],
    ),
    # The format's closers after a run of openers that read as no call: still a second reading.
    (QA + "<tool_call>" * 10 + "</parameter>", ["w"], [], None, ["ambiguous"]),
    # A Seed-OSS block whose second function head does not read: the block is refused.
    (
        "<seed:tool_call>\n<function=w>\n<parameter=a>1</parameter>\n</function>\n<function=bad name!>\n"
        "</seed:tool_call>",
        ["w"],
        [],
        None,
        ["undecodable"],
    ),
    # A damaged value read on past more than MAX_CROSSINGS of its own markers: its stop ends it.
    (
        "<tool_call>\n<function=w>\n<parameter=a>\nx\n</function>\n" + "<tool_call>" * 10,
        ["w"],
        [("w", {"a": "x"})],
        "<tool_call>" * 10,
        ["truncated"],  # the reply ends right after the last opener: cut off in a call
    ),
]

ALL = SPELLINGS + VALUES + CHANNELS + KIMI + FORMS + EDGES


@pytest.mark.parametrize(("text", "allowed", "calls", "content", "reasons"), ALL)
def test_table(text: str, allowed: list[str], calls: Calls, content: str | None, reasons: list[str]) -> None:
    r = salvage_text(text, allowed)
    assert [(c.name, c.arguments) for c in r.calls] == calls
    assert [x.reason for x in r.rejected] == reasons
    if content is not None:
        assert r.content == content
    if not calls:  # left as text: the content and reasoning are the reply's own text, markup aside
        assert r.content in text and r.reasoning in text


@pytest.mark.parametrize(("text", "allowed", "calls", "content", "reasons"), ALL)
def test_every_split_agrees(text: str, allowed: list[str], calls: Calls, content: Any, reasons: Any) -> None:
    whole = salvage_text(text, allowed)
    config = config_for(None)
    for k in range(len(text) + 1):
        run = SalvagePass(config, allowed, text[:k])
        run.advance(final=False)
        run.extend(text[k:])
        run.advance(final=True)
        got = run.result()
        assert (got.calls, got.content, got.rejected) == (whole.calls, whole.content, whole.rejected), k


def test_spelled_forms_keep_their_gates() -> None:
    """A spelling's gate (here the markerless JSON reader's) stays with its marker."""
    from toolrepair._salvage.bare_json import BARE_JSON
    from toolrepair._salvage.spelled import Spelled

    both = Spelled("x", (BARE_JSON, tr_hermes()))
    assert set(both.markers) == {"{", "[", "<tool_call>", "<tool_call "}
    assert set(both.gates) == {"{", "["}
    assert both.reasoning == ()


def tr_hermes() -> Any:
    from toolrepair._salvage._registry import HERMES

    return HERMES


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("<｜dsml｜", ("<｜dsml｜", "<｜dsml｜ ", "<｜｜dsml｜｜", "<｜｜dsml｜｜ ")),
        ("<x>", ("<x>", "<x> ")),  # no bar to double
    ],
)
def test_bar_variants(prefix: str, expected: tuple[str, ...]) -> None:
    assert bar_variants(prefix) == expected


# Gemma 4's parenthesised form: any arguments, keys written `k=v` or `k: v` (spaces inside a
# key allowed), closer or none, inside prose: exactly the call, whole and streamed.
_GEMMA_KEYS = st.from_regex(r"[a-z][a-z_]{0,6}( [A-Z][a-z]{0,3}){0,2}", fullmatch=True)


@settings(max_examples=min(settings().max_examples, 40), deadline=None)
@given(
    args=arguments(keys=_GEMMA_KEYS),
    sep=st.sampled_from(["=", ": ", " = ", ":"]),
    closer=st.sampled_from(["<tool_call|>", ""]),
    cut=st.integers(min_value=0),
)
def test_gemma_parenthesised_form_round_trips(args: dict[str, Any], sep: str, closer: str, cut: int) -> None:
    body = ", ".join(f"{k}{sep}{json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    text = f"Let me check.\n<|tool_call>call:w({body}){closer}\nDone."
    whole = salvage_text(text, ["w"])
    assert [(c.name, c.arguments) for c in whole.calls] == [("w", args)], text
    assert whole.content == "Let me check.\nDone." or whole.content == "Let me check.\n\nDone."
    k = cut % (len(text) + 1)
    run = SalvagePass(config_for(None), ["w"], text[:k])
    run.advance(final=False)
    run.extend(text[k:])
    run.advance(final=True)
    assert run.result().calls == whole.calls


# Attributes as arguments: any values (quotes and `&`, `<`, `>` escaped as XML does) come back
# exactly, whole and streamed.
def _attr_escape(v: str) -> str:
    return v.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


@settings(max_examples=min(settings().max_examples, 40), deadline=None)
@given(
    args=arguments(keys=st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True), values=st.text(max_size=12)),
    tag=st.booleans(),
    cut=st.integers(min_value=0),
)
def test_attribute_arguments_round_trip(args: dict[str, Any], tag: bool, cut: int) -> None:
    attrs = "".join(f' {k}="{_attr_escape(v)}"' for k, v in args.items())
    text = f"Ok.\n<tool_call>{'<' if tag else ''}exec{attrs} /></tool_call>\nDone."
    whole = salvage_text(text, ["exec"])
    assert [(c.name, c.arguments) for c in whole.calls] == [("exec", args)], text
    k = cut % (len(text) + 1)
    run = SalvagePass(config_for(None), ["exec"], text[:k])
    run.advance(final=False)
    run.extend(text[k:])
    run.advance(final=True)
    assert run.result().calls == whole.calls
