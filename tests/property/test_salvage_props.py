"""Invariants of salvage_text on generated input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._names import split_namespace
from toolrepair._salvage._engine import config_for

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
ARGS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)
MARKERS = [
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "</function>",
    "{",
    "}",
    "[",
    "]",
    "```",
    "~~~",
    "<think>",
    "</think>",
    '"',
    "\n",
    " ",
    "\\",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "functools[",
    "<｜tool▁calls▁begin｜>",
    "<|tool_call_begin|>",
    "<|channel|>",
    "to=functions.",
    "<parameter=",
    "<arg_key>",
    "<invoke name=",
    "\ud800",
    "\x00",
]
HOSTILE = st.lists(st.sampled_from(MARKERS) | st.text(max_size=10), max_size=40).map("".join)


def render(name: str, args: dict[str, Any], style: int) -> str:
    payload = json.dumps({"name": name, "arguments": args})
    if style == 0:
        return f"<tool_call>{payload}</tool_call>"
    if style == 1:
        return f"<function={name}>{json.dumps(args)}</function>"
    return payload


def _within(part: str, whole: str) -> bool:
    """Is ``part`` a subsequence of ``whole``? O(len(whole))."""
    it = iter(whole)
    return all(ch in it for ch in part)


@settings(deadline=None)
@given(st.text() | HOSTILE)
def test_any_text_returns_a_result(text: str) -> None:
    result = tr.salvage_text(text, tr.ANY_TOOL)
    assert isinstance(result, tr.SalvageResult)
    assert isinstance(result.content, str) and isinstance(result.reasoning, str)
    assert _within(result.content, text)  # content only leaves out (calls, reasoning, markup)
    unmasked = tr.salvage_text(text, tr.ANY_TOOL, mask_reasoning=False)
    if not unmasked.calls:  # nothing taken out but calls without reasoning masks
        assert unmasked.content == text and unmasked.reasoning == ""
    for call in result.calls:
        assert isinstance(call.arguments, dict)
        assert call.span is not None and 0 <= call.span[0] < call.span[1] <= len(text)


@settings(deadline=None)
@given(NAMES, ARGS, st.integers(0, 2), st.text(max_size=30), st.text(max_size=30))
def test_rendered_call_round_trips(name: str, args: dict[str, Any], style: int, before: str, after: str) -> None:
    text = "Prose. " + render(name, args, style) + " More prose."
    calls = tr.salvage_text(text, [name], dialects=["hermes", "function_tag", "json"]).calls
    assert [(c.name, c.arguments) for c in calls] == [(name, args)]


@settings(deadline=None)
@given(
    NAMES,
    ARGS,
    st.integers(0, 2),
    st.sampled_from(["```\n{}\n```", "~~~~\n{}\n~~~~", "<think>{}</think>", "<think>{}", "{}</think>", "```json\n{}"]),
)
def test_masked_call_never_comes_back(name: str, args: dict[str, Any], style: int, wrapper: str) -> None:
    text = wrapper.replace("{}", render(name, args, style))
    assert tr.salvage_text(text, [name]).calls == ()


@settings(deadline=None)
@given(NAMES, NAMES, ARGS, st.integers(0, 2))
def test_names_outside_allowed_never_come_back(name: str, offered: str, args: dict[str, Any], style: int) -> None:
    result = tr.salvage_text(render(name, args, style), [offered])
    bare = split_namespace(name)
    same = {tr.normalize_name(name)} | ({tr.normalize_name(bare)} if bare else set())
    if tr.normalize_name(offered) not in same:
        assert result.calls == ()
    else:
        assert [c.name for c in result.calls] == [offered]
    assert all(c.name == offered for c in result.calls)


# --- the marker table: one trie-regex match per anchor equals comparing every marker ---------

_FINDER = config_for(None).finder
_MARKERS = sorted({m for group in _FINDER.groups.values() for _, m, _, _ in group})
# Letters whose case folding and lower() disagree, or that lower() to two characters.
_ODD = ["K", "ſ", "İ", "ß", "Σ", "ﬁ"]


def _brute(sub: Any, text: str, i: int) -> set[tuple[str, int]]:
    return {(m, order) for m, order, _ in sub.entries if text[i : i + len(m)].lower() == m}


@st.composite
def _marker_soup(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(_MARKERS), min_size=1, max_size=4))
    text = "".join(draw(st.sampled_from(["", " ", "x", "<", "|"])) + p for p in pieces)
    chars = list(text)
    for k in draw(st.lists(st.integers(0, len(chars) - 1), max_size=6)):
        chars[k] = draw(st.sampled_from([chars[k].upper(), chars[k].lower(), *_ODD]))
    return "".join(chars)


@settings(deadline=None)
@given(_marker_soup())
def test_markers_at_equals_comparing_every_marker(text: str) -> None:
    for subgroups in _FINDER.at.values():
        for sub in subgroups:
            for i in range(len(text)):
                got = {(m, order) for m, order, _ in sub.markers_at(text, i)}
                assert got == _brute(sub, text, i), (text, i)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<TOOL_CALL>", {"<tool_call>"}),
        ("<thin\u212a>", {"<think>"}),  # the Kelvin sign lowers to k
        ("<\u017feed:think>", set()),  # long s folds to s but does not lower to it
        ("<|channel|>analysis<|message|>", {"<|channel|>", "<|channel|>analysis<|message|>"}),
        ("<|CHANNEL|>", {"<|channel|>"}),
        ("<tool", set()),
    ],
)
def test_markers_at_table(text: str, expected: set[str]) -> None:
    got = {m for sub in _FINDER.at["<"] if sub.offset == 0 for m, _, _ in sub.markers_at(text, 0)}
    assert got == expected


_CHAIN = {"<" + "a" * i + ">" for i in range(100)} | {"<" + "a" * i for i in range(1, 100)}


@pytest.mark.parametrize(
    ("words", "text", "longest"),
    [
        ({"<tool_call>", "<tool_calls>", "<"}, "<tool_calls>x", "<tool_calls>"),
        ({"<tool_call>", "<tool_calls>", "<"}, "<tool_callx", "<"),
        ({"<tool_call>", "<tool_calls>"}, "<tool_cal", None),
        ({"[", "[tool_calls]", "[think]"}, "[THINK]", "[THINK]"),
        ({"<" + "a" * 3000 + ">"}, "<" + "a" * 3000 + ">", "<" + "a" * 3000 + ">"),
        (_CHAIN, "<" + "a" * 50 + ">", "<" + "a" * 50 + ">"),  # past the trie's size: alternation
        (_CHAIN, "<" + "a" * 150, "<" + "a" * 99),
    ],
)
def test_longest_marker_regex(words: set[str], text: str, longest: str | None) -> None:
    import re

    from toolrepair._salvage._scan import _longest_first

    m = re.compile(_longest_first(words), re.IGNORECASE).match(text)
    assert (m.group() if m else None) == longest


def test_a_custom_dialect_with_a_very_long_marker() -> None:
    opener = "<" + "a" * 3000 + ">"
    dialect = tr.TagDialect("long", open=opener, close="</x>")
    text = opener + '{"name": "f", "arguments": {}}</x>'
    assert [c.name for c in tr.salvage_text(text, ["f"], dialects=[dialect]).calls] == ["f"]
