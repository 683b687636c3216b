"""The JSON-bodied dialects: one table per dialect, streaming prefix-stability, linear time."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._salvage import json_family
from toolrepair._salvage._engine import SalvagePass, config_for
from toolrepair._salvage._registry import HERMES
from toolrepair._salvage.bare_json import BARE_JSON

# This family plus the two seed dialects it shares markers with (hermes' `<tool_call>` for
# Granite 3.1 and xLAM, the markerless `json` for `{` and `[`).
DIALECTS = (*json_family.DIALECTS, HERMES, BARE_JSON)
ALLOWED = ["web_search", "calculator"]
WS = ("web_search", {"query": "cats"})
CALC = ("calculator", {"expression": "1+1"})
Row = tuple[str, Any, list[tuple[str, dict[str, Any]]], "str | None"]


def j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def call(name: str, args: dict[str, Any], key: str = "arguments") -> str:
    return j({"name": name, key: args})


WS_CALL = call("web_search", {"query": "cats"})
CALC_CALL = call("calculator", {"expression": "1+1"})
NESTED = {"query": 'say "hi" {x} ]} [y', "deep": {"a": [1, {"b": "}{]["}], "u": "北京 🎉"}}
TRUNC = '{"name": "web_search", "arguments": {"query": "ca'

MISTRAL: list[Row] = [
    ("Sure.[TOOL_CALLS][" + WS_CALL + "] Done.", ALLOWED, [WS], "Sure. Done."),
    ("[TOOL_CALLS] [" + WS_CALL + ", " + CALC_CALL + "]", ALLOWED, [WS, CALC], ""),
    (
        '[TOOL_CALLS]web_search{"query": "cats"}[TOOL_CALLS]calculator[ARGS]{"expression": "1+1"}',
        ALLOWED,
        [WS, CALC],
        "",
    ),
    ('Hi [TOOL_CALLS]web_search[CALL_ID]a1B2c3D4e[ARGS]{"query": "cats"}', ALLOWED, [WS], "Hi "),
    ("[TOOL_CALLS]web_search" + j(NESTED), ALLOWED, [("web_search", NESTED)], ""),
    (
        '[TOOL_CALLS]web_search{"query": "[TOOL_CALLS]x{}"} and then',
        ALLOWED,
        [("web_search", {"query": "[TOOL_CALLS]x{}"})],
        "and then",
    ),
    ("[TOOL_CALLS] [" + WS_CALL + "]\nextra trailing text", ALLOWED, [WS], "extra trailing text"),
    ("[TOOL_CALLS]  junk [" + WS_CALL + "] trail", ALLOWED, [WS], "trail"),
    # Junk never spans another token: the array search stops there, and the next call is read
    # (a stray token with junk once swallowed the call after it, up to an array in its arguments).
    (
        '[tool_calls] x [TOOL_CALLS]web_search[ARGS]{"query": [{}]} ',
        ALLOWED,
        [("web_search", {"query": [{}]})],
        "[tool_calls] x ",
    ),
    ("[TOOL_CALLS] junk [TOOL_CALLS] [" + WS_CALL + "]", ALLOWED, [WS], "[TOOL_CALLS] junk "),
    ('```\n[TOOL_CALLS]web_search{"query": "cats"}\n```', ALLOWED, [], None),
    ('[THINK]maybe [TOOL_CALLS]web_search{"query": "cats"}[/THINK]No call.', ALLOWED, [], "No call."),
    ('[THINK]plan[/THINK][TOOL_CALLS]web_search{"query": "cats"}', ALLOWED, [WS], ""),
    ('[TOOL_CALLS]delete_all{"path": "/"}', ALLOWED, [], None),
    ('[TOOL_CALLS]web_search{"query": "ca', ALLOWED, [], None),
    ("[TOOL_CALLS]web_search", ALLOWED, [], None),
    ("[TOOL_CALLS] not json at all", ALLOWED, [], None),
    ("[TOOL_CALLS]web_search[ARGS][1, 2]", ALLOWED, [], None),
]

PYTHON_TAG: list[Row] = [
    (
        "Let me look. <|python_tag|>" + call("web_search", {"query": "cats"}, "parameters"),
        ALLOWED,
        [WS],
        "Let me look. ",
    ),
    (
        "<|python_tag|>"
        + call("web_search", {"query": "cats"}, "parameters")
        + "; "
        + call("calculator", {"expression": "1+1"}, "parameters"),
        ALLOWED,
        [WS, CALC],
        "",
    ),
    (
        "<|python_tag|>" + WS_CALL + ";\n<|python_tag|>" + CALC_CALL + "\nHope that helps.",
        ALLOWED,
        [WS, CALC],
        "Hope that helps.",
    ),
    (
        "<|python_tag|>" + j({"type": "function", "name": "web_search", "parameters": {"query": "cats"}}),
        ALLOWED,
        [WS],
        "",
    ),
    ("<|python_tag|>" + call("web_search", NESTED, "parameters"), ALLOWED, [("web_search", NESTED)], ""),
    (
        "<|python_tag|>" + call("web_search", {"query": "<|python_tag|>;{"}),
        ALLOWED,
        [("web_search", {"query": "<|python_tag|>;{"})],
        "",
    ),
    ("<think><|python_tag|>" + WS_CALL + "</think>ok", ALLOWED, [], "ok"),
    ("<|python_tag|>" + call("rm_rf", {}), ALLOWED, [], None),
    ("<|python_tag|>" + TRUNC, ALLOWED, [], None),
    ('<|python_tag|>brave_search.call(query="cats")', ALLOWED, [], None),
]

GRANITE: list[Row] = [
    ("<|tool_call|>[" + WS_CALL + "]", ALLOWED, [WS], ""),
    (
        "Checking.\n<|tool_call|> ["
        + j({"arguments": {"query": "cats"}, "name": "web_search"})
        + ", "
        + CALC_CALL
        + "]\nOne moment.",
        ALLOWED,
        [WS, CALC],
        "Checking.\nOne moment.",
    ),
    ("<|tool_call|>[" + call("web_search", NESTED) + "]", ALLOWED, [("web_search", NESTED)], ""),
    ("<tool_call> [" + WS_CALL + "]", ALLOWED, [WS], ""),  # Granite 3.1: hermes' tag, no closing tag
    ("<|tool_call|> " + WS_CALL, ALLOWED, [], None),  # always an array
    ("~~~\n<|tool_call|>[" + WS_CALL + "]\n~~~", ALLOWED, [], None),
    ("<|tool_call|>[" + call("shutdown", {}) + "]", ALLOWED, [], None),
    ("<|tool_call|>[" + TRUNC, ALLOWED, [], None),
]

GRANITE_20B: list[Row] = [
    ("<function_call> " + WS_CALL + "\n<function_call> " + CALC_CALL, ALLOWED, [WS, CALC], ""),
    ("I'll search. <function_call> " + WS_CALL + "</function_call> done", ALLOWED, [WS], "I'll search.  done"),
    (
        "<function_call> " + call("web_search", {"query": "</function_call>"}),
        ALLOWED,
        [("web_search", {"query": "</function_call>"})],
        "",
    ),
    ("<function_call> [" + WS_CALL + "]", ALLOWED, [], None),
    ('<function_call> {"name": 123}', ALLOWED, [], None),
    ("<function_call> " + TRUNC, ALLOWED, [], None),
    ("<think><function_call> " + WS_CALL + "</think>", ALLOWED, [], ""),
]

INTERNLM2: list[Row] = [
    (
        "Let me check. <|action_start|><|plugin|>"
        + call("web_search", {"query": "cats"}, "parameters")
        + "<|action_end|>",
        ALLOWED,
        [WS],
        "Let me check. ",
    ),
    (
        "<|action_start|><|plugin|>\n"
        + json.dumps({"name": "web_search", "parameters": NESTED}, indent=2, ensure_ascii=False)
        + "\n<|action_end|>",
        ALLOWED,
        [("web_search", NESTED)],
        "",
    ),
    (
        "<|action_start|><|plugin|>" + call("web_search", {"query": "<|action_end|>"}, "parameters") + "<|action_end|>",
        ALLOWED,
        [("web_search", {"query": "<|action_end|>"})],
        "",
    ),
    ("<|action_start|><|plugin|>" + call("web_search", {"query": "cats"}, "parameters"), ALLOWED, [WS], ""),
    ("<|action_start|><|interpreter|>print(1)<|action_end|>", ALLOWED, [], None),
    ("<|action_start|><|plugin|>" + call("delete_everything", {}, "parameters") + "<|action_end|>", ALLOWED, [], None),
    ("<|action_start|><|plugin|>not json<|action_end|>", ALLOWED, [], None),
    ("<|action_start|><|plugin|>" + TRUNC, ALLOWED, [], None),
]

TOOL_CALLS: list[Row] = [
    (
        "I will call it. <tool_calls>[" + WS_CALL + ", " + CALC_CALL + "]</tool_calls>",
        ALLOWED,
        [WS, CALC],
        "I will call it. ",
    ),
    (" <tool_calls>[\n    " + WS_CALL + "\n]</tool_calls>\nThanks!", ALLOWED, [WS], "Thanks!"),
    ("<tool_calls>\n" + WS_CALL + "\n" + CALC_CALL + "\n</tool_calls>", ALLOWED, [WS, CALC], ""),
    (
        "<tool_calls>\n"
        + json.dumps({"name": "web_search", "arguments": NESTED}, indent=2, ensure_ascii=False)
        + "\n</tool_calls>",
        ALLOWED,
        [("web_search", NESTED)],
        "",
    ),
    ("<tool_calls>\n" + WS_CALL + "\n{broken line}\n" + CALC_CALL + "\n</tool_calls>", ALLOWED, [WS, CALC], ""),
    (
        "<tool_calls>\n" + WS_CALL + '\n{"name": "missing_args"}\n' + CALC_CALL + "\n</tool_calls>",
        ALLOWED,
        [WS, CALC],
        "",
    ),
    (
        "<tool_calls>\n" + call("web_search", {"query": "</tool_calls>"}),
        ALLOWED,
        [("web_search", {"query": "</tool_calls>"})],
        "",
    ),
    ("<think>try <tool_calls>\n" + WS_CALL + "\n</tool_calls></think>\n\nOk.", ALLOWED, [], "Ok."),
    (
        "thinking about <tool_calls>["
        + WS_CALL
        + "]</tool_calls>\n[BEGIN FINAL RESPONSE]\n<tool_calls>["
        + CALC_CALL
        + "]</tool_calls>",
        ALLOWED,
        [CALC],
        "",
    ),  # all before the close-only marker: reasoning
    ("<tool_calls>[" + call("format_disk", {}) + "]</tool_calls>", ALLOWED, [], None),
    ("<tool_calls>\n" + TRUNC, ALLOWED, [], None),
    ("<tool_calls>[" + TRUNC, ALLOWED, [], None),
]

TAGS: list[Row] = [
    ("ok\n</think>\n<TOOLCALL>[" + WS_CALL + ", " + CALC_CALL + "]</TOOLCALL>", ALLOWED, [WS, CALC], ""),
    (
        "<toolcall>[" + call("web_search", {"query": "</TOOLCALL>"}) + "]",
        ALLOWED,
        [("web_search", {"query": "</TOOLCALL>"})],
        "",
    ),
    ("<TOOLCALL>[" + TRUNC, ALLOWED, [], None),
    (
        "Let me check.\n<longcat_tool_call>" + WS_CALL + "</longcat_tool_call>\nHere.",
        ALLOWED,
        [WS],
        "Let me check.\nHere.",
    ),
    ("Some text with <longcat_tool_call>invalid json", ALLOWED, [], None),
    ("```\n<longcat_tool_call>" + WS_CALL + "</longcat_tool_call>\n```", ALLOWED, [], None),
]

COHERE_ROWS: list[Row] = [
    (
        "<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[\n    "
        + j({"tool_call_id": "0", "tool_name": "web_search", "parameters": {"query": "cats"}})
        + ",    "
        + j({"tool_call_id": "1", "tool_name": "calculator", "parameters": {"expression": "1+1"}})
        + "\n]<|END_ACTION|>",
        ALLOWED,
        [WS, CALC],
        "",
    ),
    (
        "<|START_ACTION|>[" + j({"tool_name": "web_search", "parameters": NESTED}) + "]<|END_ACTION|>",
        ALLOWED,
        [("web_search", NESTED)],
        "",
    ),
    ("<|START_ACTION|>[" + j({"tool_name": "web_search", "parameters": {"query": "cats"}}) + "]", ALLOWED, [WS], ""),
    (
        "<|START_THINKING|>maybe <|START_ACTION|>["
        + j({"tool_name": "web_search", "parameters": {}})
        + "]<|END_ACTION|><|END_THINKING|>No.",
        ALLOWED,
        [],
        "No.",
    ),
    ("<|START_ACTION|>[!!!]<|END_ACTION|>", ALLOWED, [], None),
    ('<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "web_search", ', ALLOWED, [], None),
    ("<|START_ACTION|>[" + j({"tool_name": "drop_db", "parameters": {}}) + "]<|END_ACTION|>", ALLOWED, [], None),
]

COMMAND_R_PLUS: list[Row] = [
    (
        "Action:\n```json\n[" + j({"tool_name": "web_search", "parameters": {"query": "cats"}}) + "]\n```",
        ALLOWED,
        [WS],
        "",
    ),
    (
        "Plan: search.\nAction: ```json\n[\n  "
        + j({"tool_name": "web_search", "parameters": {"query": "cats"}})
        + ",\n  "
        + j({"tool_name": "calculator", "parameters": {"expression": "1+1"}})
        + "\n]\n```\nDone.",
        ALLOWED,
        [WS, CALC],
        "Plan: search.\nDone.",
    ),
    (
        "Action:\n```json\n[" + j({"tool_name": "web_search", "parameters": {"query": "```"}}) + "]\n```",
        ALLOWED,
        [("web_search", {"query": "```"})],
        "",
    ),
    ("Action:\n```json\n[" + j({"tool_name": "web_search", "parameters": {"query": "cats"}}) + "]", ALLOWED, [WS], ""),
    ("```json\n[" + j({"tool_name": "web_search", "parameters": {"query": "cats"}}) + "]\n```", ALLOWED, [], None),
    ("Transaction:\n```json\n[" + j({"tool_name": "web_search", "parameters": {}}) + "]\n```", ALLOWED, [], None),
    ("Action: I will now search for cats.", ALLOWED, [], None),
    ('Action:\n```json\n[{"tool_name": "web_search", "parameters": {"query": "ca', ALLOWED, [], None),
    ("Action:\n```python\nprint(1)\n```", ALLOWED, [], None),
]

APERTUS: list[Row] = [
    ("<|tools_prefix|>[" + j({"web_search": {"query": "cats"}}) + "]<|tools_suffix|>", ALLOWED, [WS], ""),
    (
        "<|inner_prefix|>hmm<|inner_suffix|>Sure. <|tools_prefix|>["
        + j({"web_search": {"query": "cats"}})
        + ", "
        + j({"calculator": {"expression": "1+1"}})
        + "]<|tools_suffix|>",
        ALLOWED,
        [WS, CALC],
        "Sure. ",
    ),
    ("<|tools_prefix|>[" + j({"web_search": NESTED}) + "]", ALLOWED, [("web_search", NESTED)], ""),
    (
        "<|inner_prefix|><|tools_prefix|>[" + j({"web_search": {}}) + "]<|tools_suffix|><|inner_suffix|>",
        ALLOWED,
        [],
        "",
    ),
    ("<|tools_prefix|>[" + j({"rm": {"path": "/"}}) + "]<|tools_suffix|>", ALLOWED, [], None),
    ('<|tools_prefix|>[{"web_search": {"query": "ca', ALLOWED, [], None),
]

GIGACHAT: list[Row] = [
    ("<|message_sep|>\n\nfunction call<|role_sep|>\n" + WS_CALL, ALLOWED, [WS], ""),
    (
        "I'll remember.<|message_sep|>\n\nfunction call<|role_sep|>\n" + call("web_search", NESTED) + "</s>",
        ALLOWED,
        [("web_search", NESTED)],
        "I'll remember.",
    ),
    ("<|function_call|>" + WS_CALL, ALLOWED, [WS], ""),
    ('<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "web_search", "arguments": "cats"}', ALLOWED, [], None),
    ('<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "web_search"}', ALLOWED, [], None),
    ("<|message_sep|>\n\nassistant<|role_sep|>\nHello", ALLOWED, [], None),
    ("<|function_call|>" + TRUNC, ALLOWED, [], None),
    ("<|function_call|>" + call("launch", {}), ALLOWED, [], None),
]

LFM2_JSON: list[Row] = [
    ("<|tool_call_start|>[" + WS_CALL + "]<|tool_call_end|>", ALLOWED, [WS], ""),
    (
        "Checking. <|tool_call_start|>[" + WS_CALL + ", " + CALC_CALL + "]<|tool_call_end|> ok",
        ALLOWED,
        [WS, CALC],
        "Checking.  ok",
    ),
    (
        "<|tool_call_start|>[" + call("web_search", {"query": "<|tool_call_end|>"}) + "]",
        ALLOWED,
        [("web_search", {"query": "<|tool_call_end|>"})],
        "",
    ),
    ("<|tool_call_start|><|tool_call_end|>", ALLOWED, [], None),
    ("<think><|tool_call_start|>[" + WS_CALL + "]<|tool_call_end|></think>", ALLOWED, [], ""),
    ("<|tool_call_start|>[" + TRUNC, ALLOWED, [], None),
]

FUNCTOOLS: list[Row] = [
    ("functools[" + WS_CALL + "]", ALLOWED, [WS], ""),
    (" functools[" + WS_CALL + "]", ALLOWED, [WS], ""),  # FireFunction v2
    (
        "Let me check.\nfunctools[\n  " + WS_CALL + ",\n  " + CALC_CALL + "\n]\nAnything else?",
        ALLOWED,
        [WS, CALC],
        "Let me check.\nAnything else?",
    ),
    ("functools[" + call("web_search", NESTED) + "]", ALLOWED, [("web_search", NESTED)], ""),
    ("functools[" + TRUNC, ALLOWED, [], None),
    ('functools{"name": "web_search"}', ALLOWED, [], None),
    ("functools[] just text", ALLOWED, [], None),
    ("<think>functools[" + WS_CALL + "]</think>", ALLOWED, [], ""),
]

FUNCTIONARY: list[Row] = [
    ('Looking.\n>>>web_search\n{"query": "cats"}', ALLOWED, [WS], "Looking."),
    ('>>>web_search\n{"query": "cats"}\n>>>calculator\n{"expression": "1+1"}', ALLOWED, [WS, CALC], ""),
    (">>>web_search\n" + j(NESTED), ALLOWED, [("web_search", NESTED)], ""),
    (">>>python\nprint('>> hi')\n", ["python"], [("python", {"code": "print('>> hi')"})], ""),
    ("all\nHello, world!\nWhat's up?", ALLOWED, [], None),
    ('>>>all\nJust text {"query": "cats"}', ALLOWED, [], None),
    ('>>> quoted email reply\n{"query": "cats"}', ALLOWED, [], None),
    ('>>>wipe\n{"all": true}', ALLOWED, [], None),
    ('>>>web_search\n{"query": "ca', ALLOWED, [], None),
    ('```\n>>>web_search\n{"query": "cats"}\n```', ALLOWED, [], None),
    # The first call has no `>>>`: the recipient line stays in the content (engine cuts from `{`).
    ('web_search\n{"query": "cats"}', ALLOWED, [WS], "web_search"),
    ('Sure\n{"name": "web_search", "arguments": {"query": "cats"}}', ALLOWED, [WS], "Sure"),
]

GENERIC: list[Row] = [
    (j({"tool_call": {"name": "web_search", "arguments": {"query": "cats"}}}), ALLOWED, [WS], ""),
    (
        j(
            {
                "tool_calls": [
                    {"name": "web_search", "arguments": {"query": "cats"}},
                    {"name": "calculator", "arguments": {"expression": "1+1"}},
                ]
            }
        ),
        ALLOWED,
        [WS, CALC],
        "",
    ),
    (j({"response": "Hello there"}), ALLOWED, [], None),
    ("Intro " + j({"tool_call": {"name": "web_search", "arguments": {}}}), ALLOWED, [], None),
    ('{"tool_call": {"name": "web_search", "arguments": {"query": "ca', ALLOWED, [], None),
    (j({"tool_call": {"name": "nope", "arguments": {}}}), ALLOWED, [], None),
]

XLAM: list[Row] = [
    ("<think>I'll help.</think>[" + WS_CALL + "]", ALLOWED, [WS], ""),
    ("<think>x</think>\n[" + WS_CALL + ", " + CALC_CALL + "]", ALLOWED, [WS, CALC], ""),
    ("[" + WS_CALL + "]", ALLOWED, [WS], ""),
    ("I'll check.[TOOL_CALLS][" + WS_CALL + "]", ALLOWED, [WS], "I'll check."),
    ("I'll check.<tool_call>[" + WS_CALL + "]</tool_call>", ALLOWED, [WS], "I'll check."),
    ("I'll help.\n```json\n[" + WS_CALL + "]\n```", ALLOWED, [], None),  # a fence is never a call
    ("<think>a [list] here</think> and [brackets] there", ALLOWED, [], "and [brackets] there"),
    ("<think>x</think>[" + TRUNC, ALLOWED, [], "[" + TRUNC),
]

TABLES: dict[str, list[Row]] = {
    "mistral": MISTRAL,
    "python_tag": PYTHON_TAG,
    "granite": GRANITE,
    "granite_20b": GRANITE_20B,
    "internlm2": INTERNLM2,
    "tool_calls": TOOL_CALLS,
    "tags": TAGS,
    "cohere": COHERE_ROWS,
    "command_r_plus": COMMAND_R_PLUS,
    "apertus": APERTUS,
    "gigachat": GIGACHAT,
    "lfm2_json": LFM2_JSON,
    "functools": FUNCTOOLS,
    "functionary": FUNCTIONARY,
    "generic_json": GENERIC,
    "xlam": XLAM,
}
ROWS = [pytest.param(*row, id=f"{name}-{i}") for name, rows in TABLES.items() for i, row in enumerate(rows)]


def salvage(text: str, allowed: Any) -> tr.SalvageResult:
    return tr.salvage_text(text, allowed, dialects=DIALECTS)


@pytest.mark.parametrize(("text", "allowed", "expected", "content"), ROWS)
def test_dialect_tables(
    text: str, allowed: Any, expected: list[tuple[str, dict[str, Any]]], content: str | None
) -> None:
    result = salvage(text, allowed)
    assert [(c.name, c.arguments) for c in result.calls] == expected
    assert result.content == (text if content is None else content)


CONFIG = config_for(DIALECTS)
MARKERS = (
    [m for d in DIALECTS for m in d.markers]
    + ["```", "~~~"]
    + [m for pair in CONFIG.reasoning for m in pair if m is not None]
)


def _splits_a_marker(text: str, k: int) -> bool:
    """``text[:k]`` ends inside a possible marker (the engine's scanner does not yet carry a
    marker cut by a chunk boundary over to the next chunk: that is the engine's, not a reader's)."""
    tail = text[max(0, k - 32) : k].lower()
    return any(tail.endswith(m[:n]) for m in MARKERS for n in range(1, len(m)))


def _reasoning_forced_open(text: str) -> bool:
    low = text.lower()
    return any(
        close in low and (open_ is None or low.find(open_) == -1 or low.find(close) < low.find(open_))
        for open_, close in CONFIG.reasoning
    )


@pytest.mark.parametrize(("text", "allowed", "expected", "content"), ROWS)
def test_prefixes_are_stable(text: str, allowed: Any, expected: Any, content: Any) -> None:
    """Every prefix either blocks or agrees with the whole text.

    Two checks per cut point: the calls and rejections a pass over the prefix commits to are
    the first ones of the whole text; and a pass that stops at the prefix and then resumes over
    the rest ends where a pass over the whole text ends.
    """
    whole = salvage(text, allowed)
    for k in range(len(text) + 1):
        run = SalvagePass(CONFIG, allowed, text[:k])
        run.advance(final=False)
        if not _reasoning_forced_open(text):  # a later close-only marker drops earlier calls
            got = run.result()
            assert got.calls == whole.calls[: len(got.calls)], k
            assert got.rejected == whole.rejected[: len(got.rejected)], k
        if _splits_a_marker(text, k):
            continue
        run.extend(text[k:])
        run.advance(final=True)
        assert run.result() == whole, k


def test_escape_cut_by_a_chunk_boundary() -> None:
    """A prefix ending inside a ``\\u`` escape waits (``decode_at`` alone calls it undecodable)."""
    text = "<tool_calls>[" + json.dumps({"name": "web_search", "arguments": {"query": "北京"}}) + "]</tool_calls>"
    k = text.index("\\u") + 3
    run = SalvagePass(CONFIG, ALLOWED, text[:k])
    run.advance(final=False)
    assert run.result().rejected == ()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[TOOL_CALLS]delete_all{"path": "/"}', "not-offered"),
        ("[TOOL_CALLS][" + call("delete_all", {}) + "]", "not-offered"),
        ("<|python_tag|>" + call("rm_rf", {}), "not-offered"),
        ("<|tool_call|>[" + call("shutdown", {}) + "]", "not-offered"),
        ("<function_call> " + call("shutdown", {}), "not-offered"),
        ("<|action_start|><|plugin|>" + call("delete_everything", {}, "parameters") + "<|action_end|>", "not-offered"),
        ("<tool_calls>\n" + call("format_disk", {}) + "\n</tool_calls>", "not-offered"),
        ("<TOOLCALL>[" + call("format_disk", {}) + "]</TOOLCALL>", "not-offered"),
        ("<|START_ACTION|>[" + j({"tool_name": "drop_db", "parameters": {}}) + "]<|END_ACTION|>", "not-offered"),
        ("Action:\n```json\n[" + j({"tool_name": "drop_db", "parameters": {}}) + "]\n```", "not-offered"),
        ("<|tools_prefix|>[" + j({"rm": {"path": "/"}}) + "]<|tools_suffix|>", "not-offered"),
        ("<|function_call|>" + call("launch", {}), "not-offered"),
        ("<|tool_call_start|>[" + call("launch", {}) + "]<|tool_call_end|>", "not-offered"),
        ("functools[" + call("launch", {}) + "]", "not-offered"),
        ('>>>wipe\n{"all": true}', "not-offered"),
        (j({"tool_call": {"name": "nope", "arguments": {}}}), "not-offered"),
        ("<think>x</think>[" + call("launch", {}) + "]", "not-offered"),
        ('[TOOL_CALLS]web_search{"query": "ca', "truncated"),
        ("<|tool_call|>[" + TRUNC, "truncated"),
        ("<tool_calls>\n" + TRUNC, "truncated"),
        ("<|START_ACTION|>[!!!]<|END_ACTION|>", "undecodable"),
        ("<|tool_call|> " + WS_CALL, "not-a-call"),
        (
            '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "web_search", "arguments": "cats"}',
            "undecodable-arguments",
        ),
    ],
)
def test_rejection_reasons(text: str, reason: str) -> None:
    result = salvage(text, ALLOWED)
    assert not result.calls
    assert reason in [r.reason for r in result.rejected]
    assert result.content == (text if "</think>" not in text else text[text.index("</think>") + 8 :])


def test_call_ids_are_kept() -> None:
    text = (
        '[TOOL_CALLS]web_search[CALL_ID]000000001[ARGS]{"query": "cats"}'
        '[TOOL_CALLS]calculator[CALL_ID]000000002[ARGS]{"expression": "1+1"}'
    )
    assert [c.id for c in salvage(text, ALLOWED).calls] == ["000000001", "000000002"]
    nemo = "[TOOL_CALLS][" + j({"name": "web_search", "arguments": {}, "id": "a1B2c3D4e"}) + "]"
    assert [c.id for c in salvage(nemo, ALLOWED).calls] == ["a1B2c3D4e"]
    cohere = "<|START_ACTION|>[" + j({"tool_call_id": "7", "tool_name": "web_search", "parameters": {}}) + "]"
    assert [c.id for c in salvage(cohere, ALLOWED).calls] == ["7"]


def test_dialect_names_and_markers() -> None:
    names = [d.name for d in json_family.DIALECTS]
    assert len(names) == len(set(names))
    for d in json_family.DIALECTS:
        hash(d)
        for m in d.markers:
            assert m == m.lower()
            assert any(not c.isalnum() and not c.isspace() for c in m)
    assert {d.name for d in json_family.DIALECTS} <= set(tr.DIALECTS)


def test_lfm2_pythonic_body_is_left_to_another_dialect() -> None:
    text = '<|tool_call_start|>[web_search(query="cats")]<|tool_call_end|>'
    result = tr.salvage_text(text, ALLOWED, dialects=[json_family.LFM2_JSON])
    assert result.calls == () and result.rejected == ()


# Hostile input: an opening marker (and the start of a payload) repeated. Each read must stop
# at the next marker, so twice the input costs about twice the work (quadratic: four times),
# counted in function calls (conftest.count_calls); the times are in benchmarks/bench_doubling.py.
HOSTILE = [
    "[TOOL_CALLS]{",
    "[TOOL_CALLS]x[CALL_ID]",
    "[TOOL_CALLS] junk [",
    '<|python_tag|>{"name": "f", "parameters": {}};',
    "<|tool_call|>[",
    "<tool_calls>{",
    "<tool_calls>\n{x}\n",
    "Action:\n```json\n[",
    "<|tools_prefix|>[{",
    ">>>f\n{",
    ">>>python\n",
    "</think>[{",
]


@pytest.mark.parametrize("unit", HOSTILE)
def test_hostile_repetition_is_linear(unit: str, assert_linear_work: Any) -> None:
    assert_linear_work(lambda k: partial(tr.salvage_text, unit * k, ALLOWED, dialects=DIALECTS), 4_000 // len(unit))
