"""salvage_text: the engine's rules, with the seed dialects hermes, function_tag and json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._salvage import NEED_MORE, Found, RawCall, ReadContext

SEED = ["hermes", "function_tag", "json"]


def hermes(name: str, args: dict[str, Any] | str, tag: str = "tool_call") -> str:
    return f"<{tag}>" + json.dumps({"name": name, "arguments": args}) + f"</{tag}>"


CALL = hermes("web_search", {"query": "cats"})
ALLOWED = ["web_search", "calculator"]


def calls_of(text: str, allowed: Any = ALLOWED, **kw: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in tr.salvage_text(text, allowed, dialects=SEED, **kw).calls]


WS = ("web_search", {"query": "cats"})


@pytest.mark.parametrize(
    ("text", "expected", "content"),
    [
        # hermes
        (CALL, [WS], ""),
        ("Sure, let me check." + CALL, [WS], "Sure, let me check."),
        ("Sure.\n\n" + CALL + "\n\nDone.", [WS], "Sure.\n\nDone."),
        (CALL + "\n" + CALL, [WS, WS], ""),  # duplicates are both returned
        ("<TOOL_CALL>" + json.dumps({"name": "web_search", "arguments": {"query": "cats"}}) + "</Tool_Call>", [WS], ""),
        (
            "<tool_call>\n" + json.dumps({"tool": "web_search", "parameters": {"query": "cats"}}) + "\n</tool_call>",
            [WS],
            "",
        ),
        (hermes("web_search", json.dumps({"query": "cats"})), [WS], ""),  # arguments as a JSON string
        ("<tool_call>" + json.dumps({"name": "web_search", "arguments": {"query": "cats"}}), [WS], ""),  # EOS ate it
        ("<tool_call>\n" + json.dumps({"name": "web_search", "arguments": {"query": "cats"}}) + "\n", [WS], ""),
        (
            hermes("web_search", {"query": "echo '</tool_call>'"}),
            [("web_search", {"query": "echo '</tool_call>'"})],
            "",
        ),
        (
            hermes("web_search", {"query": "a\nb", "deep": {"x": [1, {"y": "}{]["}]}}),
            [("web_search", {"query": "a\nb", "deep": {"x": [1, {"y": "}{]["}]}})],
            "",
        ),
        (
            "<tool_call>["
            + json.dumps({"name": "web_search", "arguments": {"query": "cats"}})
            + ","
            + json.dumps({"name": "calculator", "arguments": {"expression": "1+1"}})
            + "]</tool_call>",
            [WS, ("calculator", {"expression": "1+1"})],
            "",
        ),
        ("<tool_call>\n" + json.dumps({"name": "get_time"}) + "\n</tool_call>", [], None),  # not offered
        # function_tag
        ('<function=web_search>{"query": "cats"}</function>', [WS], ""),
        ('Use it: <FUNCTION=web_search>{"query": "cats"}</FUNCTION> ok', [WS], "Use it:  ok"),
        ('<function=web_search>{"query": "cats"}', [WS], ""),
        (
            '<function=web_search>\n{"query": "</function>"}\n</function>',
            [("web_search", {"query": "</function>"})],
            "",
        ),
        # json
        (json.dumps({"name": "web_search", "arguments": {"query": "cats"}}), [WS], ""),
        ("  " + json.dumps({"name": "web_search", "parameters": {"query": "cats"}}) + "\n", [WS], ""),
        ("[" + json.dumps({"name": "web_search", "arguments": {"query": "cats"}}) + "]", [WS], ""),
        (
            "I will call " + json.dumps({"name": "web_search", "arguments": {"query": "cats"}}) + " now",
            [WS],
            "I will call  now",
        ),
        (json.dumps({"name": "Alice", "age": 30}), [], None),
        (json.dumps({"name": "web_search"}), [], None),  # a bare object needs arguments
        ('Braces {like this} and {"a": 1} are prose', [], None),
        (
            '{"name": "web_search", "arguments": {"query": "cats"}};{"name": "web_search", "arguments": {"query": "cats"}}',
            [WS, WS],
            "",
        ),
        ("a [list] at [start]", [], None),
    ],
)
def test_seed_dialects(text: str, expected: list[tuple[str, dict[str, Any]]], content: str | None) -> None:
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert [(c.name, c.arguments) for c in result.calls] == expected
    assert bool(result) == bool(expected)
    assert result.content == (text if content is None else content)


@pytest.mark.parametrize(
    "text",
    [
        "```\n" + CALL + "\n```",
        "```json\n" + CALL + "\n```\n",
        "~~~\n" + CALL + "\n~~~",
        "   ```\n" + CALL + "\n```",  # indented up to three spaces
        "````\n```\n" + CALL + "\n```\n````",  # a longer fence contains a shorter one
        "```\n" + CALL,  # unclosed: masks to the end
        "```python\r\nx = 1\r\n" + CALL + "\r\n```\r\n",  # CRLF
        "text\n```\n" + CALL + "\n```",
        "```\n" + '<function=web_search>{"query": "cats"}</function>' + "\n```",
    ],
)
def test_masked_calls_are_never_calls(text: str) -> None:
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert result.calls == ()
    assert result.content == text and result.reasoning == ""


@pytest.mark.parametrize(
    ("text", "reasoning", "rejected"),
    [
        ("<think>" + CALL + "</think>", CALL, ()),
        ("<THINK>\nplanning " + CALL + "\n</THINK>", "planning " + CALL, ()),
        ("<think>unclosed reasoning " + CALL, "unclosed reasoning " + CALL, ("in-reasoning",)),
        ("forced-open reasoning " + CALL + "</think>", "forced-open reasoning " + CALL, ()),
        (
            "<think>" + json.dumps({"name": "web_search", "arguments": {"query": "cats"}}) + "</think>",
            json.dumps({"name": "web_search", "arguments": {"query": "cats"}}),
            (),
        ),
    ],
)
def test_calls_in_reasoning_are_never_calls(text: str, reasoning: str, rejected: tuple[str, ...]) -> None:
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert result.calls == ()
    assert (result.content, result.reasoning) == ("", reasoning)
    assert tuple(r.reason for r in result.rejected) == rejected


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("```\nx\n```\n" + CALL, 1),  # closed fence, call after it
        ("    ```\n" + CALL + "\n```", 1),  # 4 spaces: not a fence opener; the last ``` opens an empty one
        ("text ``` inline ``` " + CALL, 1),  # backticks inside a line are not a fence
        ("```js ``` x\n" + CALL, 1),  # an info string with a backtick: inline code, not a fence
        ("```\nx\n``` trailing\n" + CALL + "\n```", 0),  # a closer has nothing after it; the real one is later
        ("````\nx\n```\n" + CALL + "\n````", 0),  # a shorter run does not close
        ("~~~\nx\n```\n" + CALL + "\n~~~", 0),  # another fence character does not close
        ("<think>a</think>" + CALL, 1),
        ("<think>a</think>" + CALL + "</think>", 0),  # a lone close masks all before it, pairs or not
        ("</think>" + CALL, 1),
        (CALL + "<think>later</think>", 1),
    ],
)
def test_mask_boundaries(text: str, n: int) -> None:
    assert len(tr.salvage_text(text, ALLOWED, dialects=SEED).calls) == n


def test_masks_can_be_switched_off() -> None:
    fenced = "```\n" + CALL + "\n```"
    thought = "<think>" + CALL + "</think>"
    assert len(tr.salvage_text(fenced, ALLOWED, dialects=SEED, mask_fences=False).calls) == 1
    assert len(tr.salvage_text(thought, ALLOWED, dialects=SEED, mask_reasoning=False).calls) == 1
    assert len(tr.salvage_text(thought, ALLOWED, dialects=SEED, mask_fences=False).calls) == 0


def test_forced_open_reasoning_drops_calls_before_it() -> None:
    text = CALL + " thinking </think>" + CALL
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert len(result.calls) == 1
    assert result.calls[0].span == (len(CALL) + len(" thinking </think>"), len(text))


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("get_time", "not-offered"),
        ("wеb_search", "not-offered"),  # Cyrillic е
        ("web_searc", "not-offered"),  # suggestions are not dispatches
    ],
)
def test_names_outside_the_allowlist(name: str, reason: str) -> None:
    text = "ok " + hermes(name, {"query": "x"})
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert result.calls == ()
    assert result.content == text
    assert [(r.reason, r.name, r.dialect, r.span) for r in result.rejected] == [
        (reason, name, "hermes", (3, len(text)))
    ]


@pytest.mark.parametrize(
    ("name", "offered"),
    [
        ("WebSearch", "web_search"),
        ("web-search", "web_search"),
        ("functions.web_search", "web_search"),
        ("ＷｅｂＳｅａｒｃｈ", "web_search"),
    ],
)
def test_drifted_names_carry_the_offered_name(name: str, offered: str) -> None:
    assert calls_of(hermes(name, {"query": "x"})) == [(offered, {"query": "x"})]


def test_ambiguous_allowlist_rejects() -> None:
    text = hermes("READ_FILE", {})
    result = tr.salvage_text(text, ["read_file", "readFile"], dialects=SEED)
    assert result.calls == () and result.rejected[0].reason == "not-offered"
    assert calls_of(hermes("readFile", {}), ["read_file", "readFile"]) == [("readFile", {})]


def test_any_tool_is_an_explicit_opt_out() -> None:
    assert calls_of(hermes("anything_at_all", {"x": 1}), tr.ANY_TOOL) == [("anything_at_all", {"x": 1})]
    assert repr(tr.ANY_TOOL) == "ANY_TOOL"
    assert calls_of(hermes("web_search", {}), "web_search") == [("web_search", {})]  # one name, not letters


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('<tool_call>{"name": "web_search", "arguments": {"query": "ca', "truncated"),
        ('<tool_call>{"name": "web_search", "arguments": {"query": 1', "truncated"),
        ('<tool_call>{"name": "web_search", "arguments": {"query":', "truncated"),
        ('<tool_call>{"name": "web_search", "arguments": {"query"', "truncated"),
        ('<tool_call>{"name": "web_search", "arguments": {"query": tr', "truncated"),
        ('<tool_call>{"name": "web_search", "arguments": {"query": "x"}', "truncated"),
        ('<tool_call>{"name": "web_search", "arguments": {"query": "x"}</tool_call>', "undecodable"),
        ('<tool_call>{"name": "web_search", "arguments": {query: x}}</tool_call>', "undecodable"),
        ('<tool_call>{"name": "web_search", "arguments": "hello"}</tool_call>', "undecodable-arguments"),
        ('<tool_call>{"name": "web_search", "arguments": [1]}</tool_call>', "undecodable-arguments"),
        ('<tool_call>{"foo": 1}</tool_call>', "not-a-call"),
        ('<tool_call>{"name": "web_search", "arguments": {"x": NaN}}</tool_call>', "undecodable"),
        # Not finite: the same rule as argument decoding, never a silent inf.
        ('<tool_call>{"name": "web_search", "arguments": {"x": 1e999}}</tool_call>', "undecodable"),
        ('<tool_call>{"name": "web_search", "arguments": {"x": [-1E+400]}}</tool_call>', "undecodable"),
        ('<function=web_search>{"limit": ' + "9" * 400 + ".5}</function>", "undecodable"),
        ('<function=web_search>{"query": "ca', "truncated"),
        ('<function=web_search>{"query": }</function>', "undecodable"),
    ],
)
def test_broken_payloads_are_rejections_not_calls(text: str, reason: str) -> None:
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert result.calls == ()
    assert result.content == text
    assert [r.reason for r in result.rejected] == [reason]


def test_a_valid_call_after_a_broken_one_is_found() -> None:
    text = '<tool_call>{"name": "web_search", "arguments": {' + CALL
    assert calls_of(text) == [WS]
    text2 = '{"name": "web_search", "parameters": {{"name": "web_search", "parameters": {"query": "cats"}}'
    assert calls_of(text2) == [WS]


def test_interleaved_dialects_come_back_in_text_order() -> None:
    text = (
        'First <function=calculator>{"expression": "1"}</function> then '
        + hermes("web_search", {"query": "a"})
        + ' and {"name": "calculator", "arguments": {"expression": "2"}} and '
        + '<function=web_search>{"query": "b"}</function>'
    )
    result = tr.salvage_text(text, ALLOWED, dialects=SEED)
    assert [(c.name, c.dialect) for c in result.calls] == [
        ("calculator", "function_tag"),
        ("web_search", "hermes"),
        ("calculator", "json"),
        ("web_search", "function_tag"),
    ]
    spans = [c.span for c in result.calls]
    assert spans == sorted(spans)
    assert all(s is not None and text[s[0] : s[1]].strip() for s in spans)
    assert result.content == "First  then  and  and "


def test_spans_and_openai_shape() -> None:
    text = "x " + CALL
    call = tr.salvage_text(text, ALLOWED, dialects=SEED).calls[0]
    assert call.span == (2, len(text))
    assert call.to_openai() == {
        "id": None,
        "type": "function",
        "function": {"name": "web_search", "arguments": '{"query": "cats"}'},
    }


def test_only_the_dialects_asked_for_are_used() -> None:
    text = '<function=web_search>{"query": "cats"}</function> ' + CALL
    assert [c.dialect for c in tr.salvage_text(text, ALLOWED, dialects=["hermes"]).calls] == ["hermes"]
    assert tr.salvage_text(text, ALLOWED, dialects=[]).calls == ()
    with pytest.raises(ValueError, match="unknown dialect 'nope'"):
        tr.salvage_text(text, ALLOWED, dialects=["nope"])


def test_clean_prose_is_returned_unchanged() -> None:
    text = "Just an answer, with no tool call at all. " * 100
    result = tr.salvage_text(text, ALLOWED)
    assert result == tr.SalvageResult((), text, ())


def test_limits() -> None:
    big = "x" * 101
    result = tr.salvage_text(big, ALLOWED, max_input_chars=100)
    assert result.calls == () and result.content == big and result.rejected[0].reason == "input-too-large"
    deep = hermes("web_search", {"a": [[[[[["x"]]]]]]})
    assert calls_of(deep, max_depth=10) and not calls_of(deep, max_depth=4)
    assert tr.salvage_text(deep, ALLOWED, dialects=SEED, max_depth=4).rejected[0].reason == "too-deep"
    large = hermes("web_search", {"query": "y" * 500})
    assert calls_of(large, max_call_chars=1000) and not calls_of(large, max_call_chars=100)
    with pytest.raises(TypeError):
        tr.salvage_text(b"bytes", ALLOWED)  # type: ignore[arg-type]


_ONE_CALL = '<tool_call>{"name": "a", "arguments": {}}</tool_call>'


@pytest.mark.parametrize(
    ("allowed", "names"),
    [
        (["a"], ["a"]),
        (("a",), ["a"]),
        ({"a"}, ["a"]),
        (frozenset(["a", "b"]), ["a"]),
        ("a", ["a"]),
        ("ab", []),  # one name, not the collection of its letters
        (["A"], ["A"]),
        ([], []),
        (tr.ANY_TOOL, ["a"]),
    ],
)
def test_allowlist_shapes(allowed: Any, names: list[str]) -> None:
    assert [c.name for c in tr.salvage_text(_ONE_CALL, allowed).calls] == names


@pytest.mark.parametrize("allowed", [[1], [["a"]], ["a", None], 5, None, (x for x in [1])])
def test_an_allowlist_that_is_not_names_is_a_type_error(allowed: Any) -> None:
    with pytest.raises(TypeError, match="collection of tool names"):
        tr.salvage_text(_ONE_CALL, allowed)


def test_rejection_text_is_bounded() -> None:
    text = "<tool_call>" + json.dumps({"name": "nope", "arguments": {"q": "z" * 5000}}) + "</tool_call>"
    rejection = tr.salvage_text(text, ALLOWED, dialects=SEED).rejected[0]
    assert len(rejection.text) == 1000 and rejection.span == (0, len(text))


def test_tag_dialect() -> None:
    mine = tr.TagDialect("mine", open="<<CALL>>", close="<</CALL>>")
    text = 'pre <<call>>{"name": "web_search", "arguments": {"query": "cats"}}<</call>> post'
    result = tr.salvage_text(text, ALLOWED, dialects=[mine])
    assert [(c.name, c.dialect) for c in result.calls] == [("web_search", "mine")]
    assert result.content == "pre  post"
    assert tr.salvage_text(text, ALLOWED, dialects=["hermes"]).calls == ()
    with pytest.raises(ValueError):
        tr.TagDialect("bad", open="", close="x")
    with pytest.raises(ValueError):
        tr.TagDialect("bad", open="CALL", close="x")


@dataclass(frozen=True)
class ArrowDialect:
    """A protocol implementation: `=> name(json)` lines."""

    name: str = "arrow"
    markers: tuple[str, ...] = ("=> ",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | Any:
        open_paren = text.find("(", marker_end, marker_end + 64)
        if open_paren == -1:
            return None if ctx.final else NEED_MORE
        close = text.find(")", open_paren)
        if close == -1:
            return NEED_MORE if not ctx.final else Found(len(text), error="truncated")
        args = json.loads(text[open_paren + 1 : close])
        return Found(close + 1, (RawCall(text[marker_end:open_paren], args),))


def test_protocol_dialect() -> None:
    d = ArrowDialect()
    assert isinstance(d, tr.Dialect)
    result = tr.salvage_text('hello\n=> web_search({"query": "cats"})\nbye', ALLOWED, dialects=[d])
    assert [(c.name, c.arguments) for c in result.calls] == [WS]
    assert result.content == "hello\nbye"
    assert tr.salvage_text("=> web_search(", ALLOWED, dialects=[d]).rejected[0].reason == "truncated"


@pytest.mark.parametrize(
    "text",
    [
        '[ {"name": "web_search", "arguments": {"query": "cats"}} ',  # a broken reply-wide array
        '[TOOL_CALLS] [TOOL_CALLS]web_search[ARGS]{"query": "cats"}',  # a stray token before a call
    ],
)
def test_a_refused_candidate_does_not_swallow_the_call_after_it(text: str) -> None:
    assert [(c.name, c.arguments) for c in tr.salvage_text(text, ALLOWED).calls] == [WS]


@pytest.mark.parametrize(
    "text",
    [
        '<function name=<think><function name="web_search"></function>',
        "<|python_start|> x\n```\n<|python_start|>[web_search()]<|python_end|>\n```\n",
        "<|tool_call_start|> x\n```\n<|tool_call_start|>[web_search()]<|tool_call_end|>\n```\n",
        '<tool_calls> {\n```\n<tool_calls>[{"name": "web_search", "arguments": {}}]</tool_calls>\n```\n',
        "<function_calls> x\n```\n<function_calls>\nweb_search()\n</function_calls>\n```\n",
        '{"broken": \n```\n' + CALL + "\n```\n",
        '<tool_call>{"name": "nope", "arguments": {"x": "\n```\n"}}</tool_call>\n' + CALL,
    ],
)
def test_a_mask_opened_inside_text_a_refused_candidate_read_still_masks(text: str) -> None:
    # Found by check_dialect: a refused candidate's reader read across a fence or <think>;
    # the engine must still open the mask there, so the call after it is never a call.
    assert tr.salvage_text(text, ALLOWED).calls == ()


def test_harmony_end_is_not_forced_open_reasoning() -> None:
    text = (
        "<|start|>assistant<|channel|>commentary to=functions.web_search <|constrain|>json<|message|>"
        '{"query": "cats"}<|call|><|start|>functions.web_search to=assistant<|message|>{"ok": true}<|end|>'
    )
    assert [(c.name, c.arguments) for c in tr.salvage_text(text, ALLOWED).calls] == [WS]


# --- hand-written __init__s of the hot value types keep the dataclass contract ---------------


@pytest.mark.parametrize("cls", [tr.ToolCall, tr.RawCall, tr.Found, tr.SalvageResult])
def test_hand_written_init_matches_fields(cls: type) -> None:
    import dataclasses
    import inspect

    params = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]
    args = {f.name: (f"v-{f.name}" if f.default is dataclasses.MISSING else f.default) for f in fields}
    made = cls(**args)
    assert {f.name: getattr(made, f.name) for f in fields} == args
    assert dataclasses.replace(made) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, fields[0].name, "other")
