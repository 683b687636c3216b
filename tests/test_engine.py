"""The one salvage engine (``SalvagePass``): a whole-text run and the stream are one pass.

``salvage_text`` runs ``SalvagePass`` once, final, over the whole text; ``StreamSalvager``
feeds the same pass. These tables pin what the pass takes and refuses on the cases that used
to be special: runs of one marker, masks between calls, refusals and rejections between
calls, markers found through different anchors close together, and the size limit.
"""

from __future__ import annotations

from typing import Any

import pytest

import toolrepair as tr
from toolrepair._salvage._engine import SalvagePass, config_for, run_whole

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
HERMES = f"<tool_call>{CALL}</tool_call>"
RM = '<tool_call>{"name": "rm", "arguments": {}}</tool_call>'


def streamed(text: str, allowed: Any, step: int, **kw: Any) -> tuple[tuple[tr.ToolCall, ...], str]:
    s = tr.StreamSalvager(allowed, **kw)
    events = [e for i in range(0, len(text), step) for e in s.feed(text[i : i + step])] + s.close()
    calls = tuple(e.call for e in events if isinstance(e, tr.ToolCallReady))
    return calls, "".join(e.text for e in events if isinstance(e, tr.TextDelta))


# (text, allowed, the calls' names, the rejections' reasons)
CASES: list[tuple[str, Any, list[str], list[str]]] = [
    ("no marker at all", ["get_weather"], [], []),
    (f"Sure. {HERMES} and {HERMES}", ["get_weather"], ["get_weather", "get_weather"], []),
    (f"Sure. {HERMES}", ["GetWeather"], ["GetWeather"], []),  # one normalised match
    (f"{HERMES} then {RM}", ["get_weather"], ["get_weather"], ["not-offered"]),
    (f"{HERMES} then\n```\n{HERMES}\n```", ["get_weather"], ["get_weather"], []),  # a fence
    (f"<think>{HERMES}</think> {HERMES}", ["get_weather"], ["get_weather"], []),
    (f'{HERMES} <tool_call>{{"name": "get_weather", "arguments": {{', ["get_weather"], ["get_weather"], ["truncated"]),
    (
        'Action:\n```json\n[{"tool_name": "get_weather", "parameters": {}}]\n```',
        ["get_weather"],
        ["get_weather"],
        [],
    ),  # `action:` is found through `:`, six characters after its start
    ('{"a": [1]} ' + HERMES, ["get_weather"], ["get_weather"], []),  # `[` reaches back (`functools[`)
    (f"<TOOL_CALL>{CALL}</TOOL_CALL>", ["get_weather"], ["get_weather"], []),
    (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        ["get_weather"],
        ["get_weather"],
        [],
    ),  # Hermes declines, Qwen3-Coder reads
    (CALL, ["get_weather"], ["get_weather"], []),
    ("The set {1, 2} and " + HERMES, ["get_weather"], ["get_weather"], []),  # `{` not a call
    ('<tool_call>{"name": "", "arguments": {}}</tool_call>', tr.ANY_TOOL, [], ["not-offered"]),
    (f"A {HERMES} b {HERMES} c {HERMES} d", ["get_weather"], ["get_weather"] * 3, []),
    (f"A {HERMES} b {{x}} {HERMES} c {HERMES}", ["get_weather"], ["get_weather"] * 3, []),
    (f"A {HERMES} b <TOOL_CALL>{CALL}</TOOL_CALL> {HERMES}", ["get_weather"], ["get_weather"] * 3, []),
    (f"A {HERMES}]{HERMES}", ["get_weather"], ["get_weather"] * 2, []),  # `]` then `<`: no marker
    (f"A {HERMES} ]<]minimax[>[{HERMES}", ["get_weather"], ["get_weather"] * 2, ["undecodable"]),
    (f"A {HERMES} {RM} {HERMES}", ["get_weather"], ["get_weather"] * 2, ["not-offered"]),
    (f"A {HERMES}\n```\n{HERMES}\n```\n{HERMES}", ["get_weather"], ["get_weather"] * 2, []),
    (f"A {HERMES} <tool_call>[{CALL}]</tool_call>", ["get_weather"], ["get_weather"] * 2, []),
    (f"{HERMES} {HERMES}\n```\nx\n```\n{HERMES}", ["get_weather"], ["get_weather"] * 3, []),
]


@pytest.mark.parametrize(("text", "allowed", "names", "reasons"), CASES, ids=[c[0][:40] for c in CASES])
def test_the_pass(text: str, allowed: Any, names: list[str], reasons: list[str]) -> None:
    got = tr.salvage_text(text, allowed)
    assert [c.name for c in got.calls] == names
    assert [r.reason for r in got.rejected] == reasons
    assert got == run_whole(text, config_for(None), allowed, 64, 1_000_000)
    for step in (1, 7):
        assert streamed(text, allowed, step) == (got.calls, got.content)


def test_calls_before_a_mask_keep_their_spans() -> None:
    text = f"{HERMES} {HERMES}\n```\nx\n```\n{HERMES}"
    got = tr.salvage_text(text, ["get_weather"])
    n = len(HERMES)
    assert [c.span for c in got.calls] == [(0, n), (n + 1, 2 * n + 1), (len(text) - n, len(text))]
    assert got.content == "```\nx\n```"


def test_a_candidate_past_the_size_limit_is_given_up() -> None:
    text = HERMES + " " * 50
    got = tr.salvage_text(text, ["get_weather"], max_call_chars=40)
    assert got.calls == () and [r.reason for r in got.rejected] == ["too-large"]
    assert streamed(text, ["get_weather"], 3, max_call_chars=40) == (got.calls, got.content)


BLOCK = tr.TagDialect("block", open="[call_block]", close="[/call_block]")
SHORT = tr.TagDialect("short", open="<c>", close="</c>")


@pytest.mark.parametrize(
    ("text", "dialects", "names", "spans"),
    [
        (
            f"[call_block]{CALL}[/call_block] and [call_block]{CALL}[/call_block]",
            [BLOCK, "functools"],
            ["get_weather"] * 2,
            None,
        ),
        # `functools[` ends at the second block's `[`: it starts first, and reads as a list, not a call.
        (
            f"[call_block]{CALL}[/call_block] functools[call_block]{CALL}[/call_block]",
            [BLOCK, "functools"],
            ["get_weather"],
            None,
        ),
        (f"<c>{CALL}</c> then <c>{CALL}</c>", [SHORT, "functools"], ["get_weather"] * 2, [(0, 62), (68, 130)]),
    ],
)
def test_markers_ending_inside_another(
    text: str, dialects: list[Any], names: list[str], spans: list[tuple[int, int]] | None
) -> None:
    got = tr.salvage_text(text, ["get_weather"], dialects=dialects)
    assert [c.name for c in got.calls] == names
    if spans is not None:
        assert [c.span for c in got.calls] == spans


class _Declining(tr.TagDialect):
    """A TagDialect that reads otherwise: its own reader decides, whatever its class."""

    def read(self, text: str, start: int, marker_end: int, ctx: Any) -> Any:
        return None


def test_a_tag_dialect_subclass_is_read_by_its_own_reader() -> None:
    from toolrepair._salvage._registry import HERMES as HERMES_DIALECT

    declining = _Declining("declining", open="<tool_call>", close="</tool_call>")
    text = f"Sure. {HERMES}"
    assert tr.salvage_text(text, ["get_weather"], dialects=[declining]).calls == ()
    assert len(tr.salvage_text(text, ["get_weather"], dialects=[HERMES_DIALECT]).calls) == 1


_C = CALL
_H = HERMES

# JSON blocks back to back in their usual spellings, and what breaks a run of them:
# (text, allowed, max_depth, max_call_chars, calls taken, rejections' reasons).
BLOCK_CASES: list[tuple[str, Any, int, int, int, list[str]]] = [
    (f"Sure. {_H} then {_H} done.", ["get_weather"], 64, 1_000_000, 2, []),
    (f"{_H}{_H}{_H}", ["get_weather"], 64, 1_000_000, 3, []),
    (f"{_H}\n", ["GetWeather"], 64, 1_000_000, 1, []),  # offered under its normalised key
    (f"{_H}", tr.ANY_TOOL, 64, 1_000_000, 1, []),
    (f"<tool_call>{_C}", ["get_weather"], 64, 1_000_000, 1, []),  # the closing tag eaten
    (f"<tool_call> {_C} </TOOL_CALL> ok", ["get_weather"], 64, 1_000_000, 1, []),  # closed in capitals
    (f"<tool_call>{_C} </tool_call", ["get_weather"], 64, 1_000_000, 1, []),  # a cut close
    (f"Note: {_H}", ["get_weather"], 64, 1_000_000, 1, []),
    (f"{_H} a: {_H} b {_H}", ["get_weather"], 64, 1_000_000, 3, []),
    (f"{_H} b {_H} set {{1}}", ["get_weather"], 64, 1_000_000, 2, []),
    (f"{_H} {RM} {_H}", ["get_weather"], 64, 1_000_000, 2, ["not-offered"]),
    (f"{_H} <tool_call>[{_C}]</tool_call>", ["get_weather"], 64, 1_000_000, 2, []),  # an array
    (f"{_H} <tool_call>{{oops}}</tool_call>", ["get_weather"], 64, 1_000_000, 1, ["undecodable"]),
    (f"{_H} <TOOL_CALL>{_C}</TOOL_CALL>", ["get_weather"], 64, 1_000_000, 2, []),  # spelled otherwise
    (f"{_H} <think>{_H}</think>", ["get_weather"], 64, 1_000_000, 1, []),  # masked
    (f"{_H} {_H}" + " " * 80, ["get_weather"], 64, 100, 2, []),
    (
        '<tool_call>{"name": "get_weather", "arguments": {"a": [[[1]]]}}</tool_call>',
        ["get_weather"],
        2,
        1_000_000,
        0,
        ["too-deep"],
    ),
    ('<tool_call>{"name": "", "arguments": {}}</tool_call>', tr.ANY_TOOL, 64, 1_000_000, 0, ["not-offered"]),
    (
        '<tool_call>{"name": "get_weather", "arguments": {}, "function": 1}</tool_call>',
        ["get_weather"],
        64,
        1_000_000,
        1,
        [],
    ),
    (
        f"<tool_call>\n{_C}\n</tool_call> and {_H} and <tool_call>\n{_C}</tool_call>",
        ["get_weather"],
        64,
        1_000_000,
        3,
        [],
    ),
    (f"<tool_call>\n\n{_C}\n\n</tool_call> <tool_call> \n{_C} \n</tool_call>", ["get_weather"], 64, 1_000_000, 2, []),
    (f"<tool_call>\n{_C}\n</TOOL_CALL> x", ["get_weather"], 64, 1_000_000, 1, []),
    (f"<tool_call>\n{_C}\n</tool_call", ["get_weather"], 64, 1_000_000, 1, []),
    (
        '<tool_call>\n{"name": "get_weather", "arguments": {}, "id": "c1"}\n</tool_call>',
        ["get_weather"],
        64,
        1_000_000,
        1,
        [],
    ),
    (
        '<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n</tool_call>',
        ["get_weather"],
        64,
        1_000_000,
        1,
        [],
    ),
    ('<tool_call>\n{"arguments": {}, "name": "get_weather"}\n</tool_call>', ["get_weather"], 64, 1_000_000, 1, []),
    (
        '<tool_call>\n{"name": "get_weather", "arguments": "{}"}\n</tool_call>',
        ["get_weather"],
        64,
        1_000_000,
        1,
        [],
    ),  # arguments as a JSON string
]


@pytest.mark.parametrize(
    ("text", "allowed", "depth", "chars", "n", "reasons"), BLOCK_CASES, ids=[c[0][:40] for c in BLOCK_CASES]
)
def test_json_blocks(text: str, allowed: Any, depth: int, chars: int, n: int, reasons: list[str]) -> None:
    got = tr.salvage_text(text, allowed, max_depth=depth, max_call_chars=chars)
    assert len(got.calls) == n
    assert [r.reason for r in got.rejected] == reasons
    assert streamed(text, allowed, 5, max_depth=depth, max_call_chars=chars) == (got.calls, got.content)


def test_a_pass_is_one_object_for_both_entry_points() -> None:
    config = config_for(None)
    whole = SalvagePass(config, ["get_weather"], HERMES)
    whole.advance(final=True)
    fed = SalvagePass(config, ["get_weather"])
    for ch in HERMES:
        fed.extend(ch)
        fed.advance(final=False)
    fed.advance(final=True)
    assert whole.result() == fed.result() == tr.salvage_text(HERMES, ["get_weather"])


@pytest.mark.parametrize(
    ("marker", "offset"),
    [
        ("<tool_call>", 0),  # `<` is rarer in prose than `_`
        ("call:", 4),
        ("functools[", 9),
        ("◁/think▷", 0),  # a symbol from outside ASCII before any ASCII punctuation (`/`)
        ("<｜tool▁calls▁begin｜>", 1),
    ],
)
def test_a_marker_is_found_by_its_rarest_character(marker: str, offset: int) -> None:
    from toolrepair._salvage._scan import anchor_of

    assert anchor_of(marker) == offset


@pytest.mark.parametrize(
    ("text", "markers"),
    [
        ('Hello {"name": "f", "arguments": {}}', 1),  # the lead position (first non-space) holds no `{`
        ('{"name": "f", "arguments": {}}', 1),  # it does: one marker, not two
        ("  [x] and [y]", 1),  # json's `[` only opens the reply; the pythonic gate rules out `[y]`
    ],
)
def test_lead_gated_markers_are_handled_once(text: str, markers: int) -> None:
    run = SalvagePass(config_for(None), tr.ANY_TOOL, text)
    run.advance(final=True)
    assert run.work.markers == markers
    assert run.result() == tr.salvage_text(text, tr.ANY_TOOL)


@pytest.mark.parametrize(
    "text",
    [
        '   {"name": "get_weather", "arguments": {}}',  # the lead (first non-space) not known at first
        'get_weather\n{"city": "Paris"} {"x": 1}',  # functionary's recipient line, then a second brace
        'x{"name": "get_weather", "arguments": {}}',  # function_tag's headless name: no lead
    ],
)
def test_gated_braces_streamed_before_the_lead_is_known(text: str) -> None:
    want = tr.salvage_text(text, ["get_weather"])
    for step in (1, 2, 5):
        assert streamed(text, ["get_weather"], step) == (want.calls, want.content)
