"""The special-token dialects: DeepSeek V3/V3.1, Kimi-K2, gpt-oss harmony, Gemma 4, FunctionGemma.

Each table row is (text, allowed, expected calls, expected content or None for "unchanged",
expected rejection reasons). Every row is also salvaged as a stream (prefix-stability) and
every dialect gets hostile repeated-marker input (linear time, by doubling ratio).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._salvage import token_family
from toolrepair._salvage._base import NEED_MORE, ReadContext
from toolrepair._salvage._engine import SalvagePass, config_for
from toolrepair._salvage._json import JsonFailure
from toolrepair._salvage.gemma import read_loose_object

FAMILY = [d.name for d in token_family.DIALECTS]
ALLOWED = ["get_weather", "search", "send", "function"]
Row = tuple[str, Any, list[tuple[str, dict[str, Any]]], "str | None", list[str]]

GW = ("get_weather", {"city": "Paris"})
SEARCH = ("search", {"q": "cats"})


def salvage(text: str, allowed: Any = ALLOWED) -> tr.SalvageResult:
    return tr.salvage_text(text, allowed, dialects=FAMILY)


# --- DeepSeek ---------------------------------------------------------------------------

DB, DE = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"


def ds3(name: str, args: str, *, end: bool = True) -> str:
    call = f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```"
    return call + ("<｜tool▁call▁end｜>" if end else "")


def ds31(name: str, args: str, *, end: bool = True) -> str:
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}" + ("<｜tool▁call▁end｜>" if end else "")


PARIS = '{"city": "Paris"}'
CATS = '{"q": "cats"}'
TRICKY = '{"q": "say \\"hi\\" {x} ]", "opts": {"n": [1, {"m": null}], "path": "C:\\\\tmp"}}'
TRICKY_VALUE = {"q": 'say "hi" {x} ]', "opts": {"n": [1, {"m": None}], "path": "C:\\tmp"}}

BROKEN = DB + ds3("get_weather", '{"city": "Tokyo"') + ds3("search", CATS) + DE

DEEPSEEK_V3_ROWS: list[Row] = [
    ("Checking." + DB + ds3("get_weather", PARIS) + DE + " Done.", ALLOWED, [GW], "Checking. Done.", []),
    (DB + ds3("get_weather", PARIS) + "\n" + ds3("search", CATS) + DE, ALLOWED, [GW, SEARCH], "", []),
    (DB + ds3("search", TRICKY) + DE, ALLOWED, [("search", TRICKY_VALUE)], "", []),
    (
        DB + ds3("search", '{"q": "<｜tool▁call▁end｜><｜tool▁calls▁end｜>```"}') + DE,
        ALLOWED,
        [("search", {"q": "<｜tool▁call▁end｜><｜tool▁calls▁end｜>```"})],
        "",
        [],
    ),
    ("Sure. " + DB + ds3("get_weather", PARIS, end=False), ALLOWED, [GW], "Sure. ", []),  # EOS ate the ends
    (DB + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" + PARIS, ALLOWED, [GW], "", []),
    (DB + ds3("get_weather", '{"city": "Paris"}```'.replace("```", "")) + DE, ALLOWED, [GW], "", []),
    ("<｜tool calls begin｜>" + ds3("get_weather", PARIS) + DE, ALLOWED, [GW], "", []),
    ("<｜tool\\_calls\\_begin｜>" + ds3("get_weather", PARIS) + DE, ALLOWED, [GW], "", []),
    ("<｜tool▁calls｜>" + ds3("get_weather", PARIS) + DE, ALLOWED, [GW], "", []),
    (
        DB
        + "<｜tool_call_begin｜>function<｜tool_sep｜>get_weather\n```json\n"
        + PARIS
        + "\n```<｜tool_call_end｜>"
        + "<｜tool_calls_end｜>",
        ALLOWED,
        [GW],
        "",
        [],
    ),
    ("Lone: " + ds3("get_weather", PARIS), ALLOWED, [GW], "Lone: ", []),  # no section token
    (
        "</think>"
        + DB
        + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        + PARIS
        + "```<｜tool▁call▁end｜>"
        + DE,
        ALLOWED,
        [GW],
        "",
        [],
    ),  # the lone close: empty reasoning
    ("```\n" + DB + ds3("get_weather", PARIS) + DE + "\n```", ALLOWED, [], None, []),
    ("<think>maybe " + DB + ds3("get_weather", PARIS) + DE + "</think>No.", ALLOWED, [], "No.", []),
    (DB + ds3("delete_all", "{}") + DE, ALLOWED, [], None, ["not-offered"]),
    (DB + ds3("get_weather", '{"city": "Par'), ALLOWED, [], None, ["truncated"]),
    # A broken payload refuses its whole section, which stays text: its own ```json line then
    # opens a Markdown fence that nothing closes, so the call after it is inside a fence.
    (BROKEN + " after " + ds3("search", CATS), ALLOWED, [], None, ["undecodable"]),
    (DB + ds3("get_weather", "[1, 2]") + ds3("search", CATS) + DE, ALLOWED, [SEARCH], "", ["undecodable-arguments"]),
    (DB + "function<｜tool▁sep｜>get_weather\n```json\n" + PARIS + "\n```" + DE, ALLOWED, [], None, []),
    # Step-3 bodies under the same tokens are not DeepSeek's
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="step_only"></steptml:invoke>'
        "<｜tool_call_end｜><｜tool_calls_end｜>",
        ALLOWED,
        [],
        None,
        [],
    ),
]

DEEPSEEK_V31_ROWS: list[Row] = [
    ("normal text" + DB + ds31("get_weather", PARIS) + DE, ALLOWED, [GW], "normal text", []),
    (
        "pre " + DB + ds31("get_weather", PARIS) + ds31("search", CATS) + DE + " post",
        ALLOWED,
        [GW, SEARCH],
        "pre  post",
        [],
    ),
    (DB + ds31("search", TRICKY) + DE, ALLOWED, [("search", TRICKY_VALUE)], "", []),
    (
        DB + ds31("search", '{"q": "<｜tool▁sep｜><｜tool▁call▁end｜>"}') + DE,
        ALLOWED,
        [("search", {"q": "<｜tool▁sep｜><｜tool▁call▁end｜>"})],
        "",
        [],
    ),
    (DB + ds31("get_weather", PARIS, end=False), ALLOWED, [GW], "", []),
    ("REASONING</think>CONTENT" + DB + ds31("get_weather", PARIS) + DE, ALLOWED, [GW], "CONTENT", []),
    (DB + ds31("function", '{"a": 1}') + DE, ALLOWED, [("function", {"a": 1})], "", []),
    ("<think>" + DB + ds31("get_weather", PARIS) + DE, ALLOWED, [], "", ["in-reasoning"]),  # reasoning never closed
    ("Let me look." + DB + "get_weather", ALLOWED, [], None, []),
    (DB + ds31("get_weather", '{"city": ') + DE, ALLOWED, [], None, ["undecodable"]),
    (DB + ds31("get_weather", '{"city": ', end=False), ALLOWED, [], None, ["truncated"]),
    (DB + ds31("rm_rf", "{}") + DE, ALLOWED, [], None, ["not-offered"]),
    (DB + ds31("get_weather", PARIS) + DE, tr.ANY_TOOL, [GW], "", []),
]

# --- Kimi-K2 ------------------------------------------------------------------------------

KB, KE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"


def kimi(ident: str, args: str, *, end: bool = True) -> str:
    return f"<|tool_call_begin|>{ident}<|tool_call_argument_begin|>{args}" + ("<|tool_call_end|>" if end else "")


KIMI_ROWS: list[Row] = [
    ("I'll check. " + KB + kimi("functions.get_weather:0", PARIS) + KE + " Ok.", ALLOWED, [GW], "I'll check.  Ok.", []),
    (
        KB + kimi("functions.get_weather:0", PARIS) + kimi("functions.search:1", CATS) + KE,
        ALLOWED,
        [GW, SEARCH],
        "",
        [],
    ),
    (
        KB
        + " \n<|tool_call_begin|> functions.get_weather:0 <|tool_call_argument_begin|> "
        + PARIS
        + " <|tool_call_end|>\n "
        + KE,
        ALLOWED,
        [GW],
        "",
        [],
    ),
    (KB + kimi("functions.search:0", TRICKY) + KE, ALLOWED, [("search", TRICKY_VALUE)], "", []),
    (
        KB + kimi("functions.search:0", '{"q": "<|tool_call_end|><|tool_calls_section_end|>"}') + KE,
        ALLOWED,
        [("search", {"q": "<|tool_call_end|><|tool_calls_section_end|>"})],
        "",
        [],
    ),
    ("Go " + kimi("functions.get_weather:0", PARIS, end=False), ALLOWED, [GW], "Go ", []),
    (kimi("functions.get_weather:0", PARIS) + kimi("functions.search:1", CATS), ALLOWED, [GW, SEARCH], "", []),
    ("<|tool_call_section_begin|>" + kimi("get_weather:3", PARIS) + "<|tool_call_section_end|>", ALLOWED, [GW], "", []),
    (
        KB + kimi("functions.get_weather.0", PARIS) + kimi("functions.search:1", CATS) + KE,
        ALLOWED,
        [SEARCH],
        "",
        ["malformed-id"],
    ),
    # A refused section is one rejection, taken out of the content with its tokens.
    (
        "A " + KB + kimi("functions.get_weather:0", '{"city": "Paris"') + kimi("functions.search:1", CATS) + KE + " b",
        ALLOWED,
        [],
        "A  b",
        ["undecodable"],
    ),
    (KB + kimi("functions.get_weather:0", '{"city": ', end=False), ALLOWED, [], "", ["truncated"]),
    # A section that holds no call of Kimi's: a JSON call object in it is read, anything else
    # refuses it whole; its opener never leaks into the content.
    ("Hi " + KB, ALLOWED, [], "Hi ", ["truncated"]),
    ("Hi " + KB + " nothing here " + KE + " bye", ALLOWED, [], "Hi  bye", ["not-a-call"]),
    ("Hi " + KB + KE + " bye", ALLOWED, [], "Hi  bye", ["not-a-call"]),
    ("Hi " + KB + ' {"a": 1} ' + KE + " bye", ALLOWED, [], "Hi  bye", ["not-a-call"]),
    ("Hi " + KB + ' {"name": "get_weather", "arguments": ' + PARIS + "} " + KE + " bye", ALLOWED, [GW], "Hi  bye", []),
    (
        KB + '<|tool_call_begin|> functions.get_weather:0 {"city": "Paris"} <|tool_call_end|>' + KE,
        ALLOWED,
        [],
        "",
        ["undecodable"],
    ),  # the argument token missing: the id and the payload cannot be told apart
    ("```\n" + KB + "\n```", ALLOWED, [], None, []),  # in code: text, no region opened
    # Noise between the section token and its first call: the section's, cut out with it.
    ("Ok. " + KB + " noise " + kimi("functions.get_weather:0", PARIS) + KE, ALLOWED, [GW], "Ok. ", []),
    # A stray section token does not swallow the section written after it.
    (KB + " " + KB + kimi("functions.get_weather:0", PARIS) + KE + " x", ALLOWED, [GW], "x", ["not-a-call"]),
    ("a " + KB + " so " + KB + kimi("functions.get_weather:0", PARIS) + KE, ALLOWED, [GW], "a ", ["not-a-call"]),
    ("```\n" + KB + kimi("functions.get_weather:0", PARIS) + KE + "\n```", ALLOWED, [], None, []),
    ("<think>" + kimi("functions.get_weather:0", PARIS) + "</think>", ALLOWED, [], "", []),
    (KB + kimi("functions.drop_db:0", "{}") + KE, ALLOWED, [], None, ["not-offered"]),
    ("get_weather:0<|tool_call_argument_begin|>" + PARIS + "<|tool_call_end|>", ALLOWED, [], None, []),
]

# --- gpt-oss harmony -----------------------------------------------------------------------

ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|>"


def harmony(name: str, args: str, *, end: str = "<|call|>") -> str:
    return f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}{end}"


HARMONY_ROWS: list[Row] = [
    (ANALYSIS + harmony("get_weather", PARIS), ALLOWED, [GW], "", []),
    (
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>"
        + PARIS
        + "<|call|>",
        ALLOWED,
        [GW],
        "",
        [],
    ),
    (ANALYSIS + "\n" + harmony("get_weather", PARIS, end=""), ALLOWED, [GW], "", []),
    (harmony("get_weather", PARIS, end="<|end|>") + harmony("search", CATS), ALLOWED, [GW, SEARCH], "", []),
    (
        harmony("search", '{"q": "<|call|><|end|><|start|>"}'),
        ALLOWED,
        [("search", {"q": "<|call|><|end|><|start|>"})],
        "",
        [],
    ),
    (harmony("search", TRICKY), ALLOWED, [("search", TRICKY_VALUE)], "", []),
    (
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + PARIS + "<|call|>",
        ALLOWED,
        [GW],
        "",
        [],
    ),
    (" to=functions.get_weather<|channel|>analysis <|constrain|>json<|message|>" + PARIS, ALLOWED, [GW], "", []),
    (
        "<|channel|> analysis<|message|> hmm<|end|><|start|> assistant to=functions.get_weather<|channel|> commentary "
        "<|constrain|>  json<|message|> " + PARIS + "<|end|>",
        ALLOWED,
        [GW],
        "",
        [],
    ),
    (
        harmony("get_weather", PARIS) + "<|start|>functions.get_weather to=assistant<|message|>"
        '{"name": "search", "arguments": {}}<|end|>',
        ALLOWED,
        [GW],
        '<|start|>functions.get_weather to=assistant<|message|>{"name": "search", "arguments": {}}',
        [],
    ),
    (
        harmony("get_weather", PARIS) + "<|start|>assistant<|channel|>final<|message|>Sunny.",
        ALLOWED,
        [GW],
        "Sunny.",
        [],
    ),
    (
        harmony("get_weather", PARIS) + "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>",
        ALLOWED,
        [GW],
        "Checking.",
        [],
    ),  # a preamble: content, its markup taken out
    (
        "<|start|>assistant<|channel|>commentary to=python <|constrain|>code<|message|>print('hi')<|call|>",
        ALLOWED,
        [],
        None,
        [],
    ),
    ("<|start|>assistant<|channel|>commentary to=browser.search<|message|>" + CATS + "<|call|>", ALLOWED, [], None, []),
    ("<|channel|>analysis<|message|>Maybe " + harmony("get_weather", PARIS) + "<|end|>", ALLOWED, [], "", []),
    ("```\n" + harmony("get_weather", PARIS) + "\n```", ALLOWED, [], None, []),
    (harmony("get_weather", '{"city": "Par', end=""), ALLOWED, [], None, ["truncated"]),
    (
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json",
        ALLOWED,
        [],
        None,
        ["truncated"],
    ),
    (harmony("get_weather", "Paris please"), ALLOWED, [], None, ["undecodable-arguments"]),
    (harmony("get_weather", "[1]"), ALLOWED, [], None, ["undecodable-arguments"]),
    (harmony("format_disk", "{}"), ALLOWED, [], None, ["not-offered"]),
    ("Set goto=functions.get_weather<|message|>" + PARIS, ALLOWED, [], None, []),
]

# --- Gemma 4 / FunctionGemma ---------------------------------------------------------------

Q = '<|"|>'


def g4(name: str, body: str, *, end: bool = True) -> str:
    return f"<|tool_call>call:{name}{body}" + ("<tool_call|>" if end else "")


DEEP = "{a:" * 70 + "1" + "}" * 70

GEMMA4_ROWS: list[Row] = [
    (
        "Checking. " + g4("get_weather", "{city:" + Q + "Paris" + Q + "}") + " Done.",
        ALLOWED,
        [GW],
        "Checking.  Done.",
        [],
    ),
    (
        g4("get_weather", "{city:" + Q + "Paris" + Q + "}") + "\n" + g4("search", "{q:" + Q + "cats" + Q + "}"),
        ALLOWED,
        [GW, SEARCH],
        "",
        [],
    ),
    (
        g4(
            "search",
            "{q:"
            + Q
            + 'say "hi" \\n {x}'
            + Q
            + ", n:[1, -2.5e3, true, null, {deep:["
            + Q
            + "z"
            + Q
            + "]}], o:{}, e:[]}",
        ),
        ALLOWED,
        [("search", {"q": 'say "hi" \\n {x}', "n": [1, -2500.0, True, None, {"deep": ["z"]}], "o": {}, "e": []})],
        "",
        [],
    ),
    (
        g4("search", "{q:" + Q + "<tool_call|><|tool_call>}" + Q + "}"),
        ALLOWED,
        [("search", {"q": "<tool_call|><|tool_call>}"})],
        "",
        [],
    ),
    ("Sure " + g4("get_weather", "{city:" + Q + "Paris" + Q + "}", end=False), ALLOWED, [GW], "Sure ", []),
    (g4("search", '{q:"cats", "n": 2,}'), ALLOWED, [("search", {"q": "cats", "n": 2})], "", []),
    (
        "<|tool_call>" + json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}}) + "<tool_call|>",
        ALLOWED,
        [GW],
        "",
        [],
    ),
    (
        "<|channel>thought\nmaybe " + g4("get_weather", "{city:" + Q + "Paris" + Q + "}") + "<channel|>Hi",
        ALLOWED,
        [],
        "Hi",
        [],
    ),
    ("```\n" + g4("get_weather", "{city:" + Q + "Paris" + Q + "}") + "\n```", ALLOWED, [], None, []),
    (g4("reboot", "{}"), ALLOWED, [], None, ["not-offered"]),
    (g4("get_weather", "{city:" + Q + "Par", end=False), ALLOWED, [], None, ["truncated"]),
    (g4("get_weather", "{city:Paris}"), ALLOWED, [], None, ["undecodable"]),
    (g4("get_weather", "{city:1e999}"), ALLOWED, [], None, ["undecodable"]),
    (g4("get_weather", DEEP), ALLOWED, [], None, ["too-deep"]),
    (g4("get_weather", "{city:[1}"), ALLOWED, [], None, ["undecodable"]),
]

FUNCTIONGEMMA_ROWS: list[Row] = [
    (
        "Let me check.<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>",
        ALLOWED,
        [GW],
        "Let me check.",
        [],
    ),
    (
        "<start_function_call>call:search{q:<escape>a, b: {c}<escape>,n:3}<end_function_call>"
        "<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>",
        ALLOWED,
        [("search", {"q": "a, b: {c}", "n": 3}), GW],
        "",
        [],
    ),
    (
        "<start_function_call>call:search{q:<escape><end_function_call><escape>,tags:[<escape>x<escape>]}"
        "<end_function_call>",
        ALLOWED,
        [("search", {"q": "<end_function_call>", "tags": ["x"]})],
        "",
        [],
    ),
    ("<start_function_call>call:get_weather{city:<escape>Paris<escape>}", ALLOWED, [GW], "", []),
    ("<start_function_call>call:get_weather{city:<escape>Par", ALLOWED, [], None, ["truncated"]),
    ("<start_function_call>call:shutdown{}<end_function_call>", ALLOWED, [], None, ["not-offered"]),
    (
        "<think><start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call></think>",
        ALLOWED,
        [],
        "",
        [],
    ),
]

TABLES: dict[str, list[Row]] = {
    "deepseek_v3": DEEPSEEK_V3_ROWS,
    "deepseek_v31": DEEPSEEK_V31_ROWS,
    "kimi_k2": KIMI_ROWS,
    "harmony": HARMONY_ROWS,
    "gemma4": GEMMA4_ROWS,
    "functiongemma": FUNCTIONGEMMA_ROWS,
}
ALL_ROWS = [pytest.param(*row, id=f"{d}-{i}") for d, rows in TABLES.items() for i, row in enumerate(rows)]


def test_family_index() -> None:
    assert FAMILY == ["deepseek_v3", "deepseek_v31", "kimi_k2", "harmony", "gemma4", "functiongemma"]
    assert set(FAMILY) <= set(tr.DIALECTS)
    for d in token_family.DIALECTS:
        hash(d)
        assert all(m == m.lower() and any(not c.isalnum() for c in m.replace(" ", "")) for m in d.markers)


@pytest.mark.parametrize(("text", "allowed", "expected", "content", "reasons"), ALL_ROWS)
def test_table(
    text: str, allowed: Any, expected: list[tuple[str, dict[str, Any]]], content: str | None, reasons: list[str]
) -> None:
    result = salvage(text, allowed)
    assert [(c.name, c.arguments) for c in result.calls] == expected
    assert result.content == (text if content is None else content)
    assert [r.reason for r in result.rejected] == reasons
    for call in result.calls:
        assert call.span is not None and 0 <= call.span[0] < call.span[1] <= len(text)


@pytest.mark.parametrize(("text", "allowed", "expected", "content", "reasons"), ALL_ROWS)
def test_default_dialects_agree(
    text: str, allowed: Any, expected: list[tuple[str, dict[str, Any]]], content: str | None, reasons: list[str]
) -> None:
    """With every built-in dialect on, the family still finds exactly its calls."""
    result = tr.salvage_text(text, allowed)
    assert [(c.name, c.arguments) for c in result.calls] == expected


def _as_tuple(r: tr.SalvageResult) -> tuple[Any, ...]:
    return (
        [(c.name, c.arguments, c.id, c.dialect, c.span) for c in r.calls],
        r.content,
        [(x.reason, x.span, x.name) for x in r.rejected],
    )


@pytest.mark.parametrize(("text", "allowed", "expected", "content", "reasons"), ALL_ROWS)
def test_streaming_prefix_stability(text: str, allowed: Any, expected: Any, content: Any, reasons: Any) -> None:
    """Any prefix either blocks or agrees with the whole text, wherever the text is cut."""
    config = config_for(FAMILY)
    whole = _as_tuple(salvage(text, allowed))
    for k in range(len(text) + 1):
        run = SalvagePass(config, allowed, text[:k])
        run.advance(final=False)
        early = [(c.name, c.arguments, c.id, c.dialect, c.span) for c in run.calls]
        assert early == whole[0][: len(early)], (k, text[:k])
        run.extend(text[k:])
        run.advance(final=True)
        assert _as_tuple(run.result()) == whole, (k, text[:k])
    # and one character at a time
    run = SalvagePass(config, allowed, "")
    for ch in text:
        run.extend(ch)
        run.advance(final=False)
    run.advance(final=True)
    assert _as_tuple(run.result()) == whole


def test_ids_and_dialect_labels() -> None:
    r = salvage(KB + kimi("functions.get_weather:0", PARIS) + kimi("search:7", CATS) + KE)
    assert [(c.id, c.dialect) for c in r.calls] == [("functions.get_weather:0", "kimi_k2"), ("search:7", "kimi_k2")]
    r = salvage(DB + ds3("get_weather", PARIS) + ds31("search", CATS) + DE)  # mixed forms in one section
    assert [(c.name, c.dialect) for c in r.calls] == [("get_weather", "deepseek_v3"), ("search", "deepseek_v31")]
    r = salvage(harmony("get_weather", PARIS))
    assert [(c.name, c.id, c.dialect) for c in r.calls] == [("get_weather", None, "harmony")]


def test_drifted_names_resolve_against_the_allowlist() -> None:
    r = salvage(g4("GetWeather", "{city:" + Q + "Paris" + Q + "}"))
    assert [c.name for c in r.calls] == ["get_weather"]


def test_masks_can_be_switched_off() -> None:
    text = "<|channel|>analysis<|message|>" + harmony("get_weather", PARIS) + "<|end|>"
    assert not salvage(text)
    assert tr.salvage_text(text, ALLOWED, dialects=FAMILY, mask_reasoning=False)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{}", {}),
        ("{a:1,b:[],c:{}}", {"a": 1, "b": [], "c": {}}),
        ('{"k":<|"|>v<|"|>}', {"k": "v"}),
        ('{<|"|>k k<|"|>:false}', {"k k": False}),
        ("{ a : [ 1 , 2 ] , }", {"a": [1, 2]}),
        ("{a:[[[]]]}", {"a": [[[]]]}),
    ],
)
def test_loose_object(body: str, expected: dict[str, Any]) -> None:
    got = read_loose_object(body + "<tail>", 0, ReadContext(), '<|"|>')
    assert got == (expected, len(body))


@pytest.mark.parametrize("body", ["{a}", "{a:1 b:2}", "{:1}", "{a:[1}", "{a:1]", "{a:tru}", "{a:01}", "{a:-}"])
def test_loose_object_refuses(body: str) -> None:
    got = read_loose_object(body + " ", 0, ReadContext(), '<|"|>')
    assert isinstance(got, JsonFailure) and got.reason == "undecodable"


def test_loose_object_streaming_and_limits() -> None:
    assert read_loose_object("{a:12", 0, ReadContext(final=False), "<escape>") is NEED_MORE
    assert read_loose_object("{a:<escape>x<esc", 0, ReadContext(final=False), "<escape>") is NEED_MORE
    got = read_loose_object("{a:12", 0, ReadContext(), "<escape>")
    assert isinstance(got, JsonFailure) and got.reason == "truncated"
    got = read_loose_object("{a:[[[[1]]]]}", 0, ReadContext(max_depth=3), "<escape>")
    assert isinstance(got, JsonFailure) and got.reason == "too-deep"
    got = read_loose_object("{a:<escape>" + "x" * 100 + "<escape>}", 0, ReadContext(max_call_chars=50), "<escape>")
    assert isinstance(got, JsonFailure) and got.reason == "too-large"


# --- linear time ---------------------------------------------------------------------------

# Repeated opening markers with broken payloads. Units marked True make the JSON decoder fail
# once per marker (each failure must cost what it read, not its offset in the reply).
HOSTILE: dict[str, list[tuple[str, bool]]] = {
    "deepseek_v3": [
        (DB, False),
        (DB + '<｜tool▁call▁begin｜>function<｜tool▁sep｜>x\n```json\n{"a":', False),
        ("<｜tool▁call▁begin｜>function<｜tool▁sep｜>x\n```json\n{", True),
    ],
    "deepseek_v31": [
        (DB + "<｜tool▁call▁begin｜>f<｜tool▁sep｜>", False),
        ('<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a":"', True),
    ],
    "kimi_k2": [
        (KB, False),
        (KB + "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{", False),
        ("<|tool_call_begin|>" + "x" * 30, False),
        ('<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a":[', True),
    ],
    "harmony": [
        ("to=functions.", False),
        ("<|channel|>", False),
        ("<|start|>python<|message|>", False),
        ("<|start|>assistant to=python<|message|><|", False),
        ("<|end|>", False),
        ("<|start|>assistant to=functions.f<|message|>{", True),
    ],
    "gemma4": [
        ("<|tool_call>call:f{a:" + Q, False),
        ("<|tool_call>call:f{a:[", False),
        ("<|tool_call>", False),
        ('<|tool_call>call:f(a="', False),  # the parenthesised form: a string never closed
        ("<|tool_call>call:f(a=[", False),
    ],
    "functiongemma": [("<start_function_call>call:f{a:<escape>", False), ("<start_function_call>call:f{a:[{b:", False)],
}


@pytest.mark.parametrize(("dialect", "unit"), [(d, u) for d, us in HOSTILE.items() for u, _ in us])
def test_hostile_input_is_linear(dialect: str, unit: str, assert_linear_work: Any) -> None:
    """Work at 2N stays near twice the work at N (quadratic would be 4x), counted in function
    calls (conftest.count_calls); the times are in benchmarks/bench_doubling.py."""
    assert_linear_work(
        lambda k: partial(tr.salvage_text, unit * k, ALLOWED, dialects=FAMILY), max(200, 4_000 // len(unit))
    )
