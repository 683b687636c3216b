"""The fast lane of ``salvage_text`` gives the general pass's answer on every text.

``run_whole(..., fast=False)`` is the general pass alone; ``salvage_text`` runs the lane and
hands over to the pass where the lane stops. The texts are built to hit what the lane must
hand over on: every marker of every dialect in mixed case, rendered calls of every dialect
back to back, masks, names not offered, broken payloads, markers found through different
anchors at nearby places, and small size and depth limits.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._engine import _allowlist, config_for, run_whole
from toolrepair._salvage._fast import fast_lane
from toolrepair.testing import tool_calls

from .test_builtin_dialects import RENDER

_FINDER = config_for(None).finder
MARKERS = sorted({m for group in _FINDER.groups.values() for _, m, _, _ in group})
NAMES = ["get_weather", "web_search", "f", "GetWeather", "web-search", "ns.f"]
PIECES = ["{", "}", "[", "]", '"', ":", "=", ">", "<", "\n", " ", "```", "~~~", "\\", "K", "ſ", "İ",
          "Action:", "\ud800", "\x00", "{{", '{"name": "f", "arguments": {"a": [1, {"b": 2}]}}']


def _cased(marker: str, flips: int) -> str:
    return "".join(c.upper() if (flips >> (i % 16)) & 1 else c for i, c in enumerate(marker))


@st.composite
def _texts(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            dialect = draw(st.sampled_from(sorted(RENDER)))
            call = draw(tool_calls(names=st.sampled_from(NAMES)))
            try:
                parts.append(RENDER[dialect](call))
            except (TypeError, ValueError):  # a value the format cannot write
                continue
        elif kind == 1:
            parts.append(_cased(draw(st.sampled_from(MARKERS)), draw(st.integers(0, 0xFFFF))))
        elif kind == 2:
            parts.append(draw(st.sampled_from(PIECES)))
        elif kind == 3:
            parts.append(draw(st.text(max_size=12)))
        else:
            parts.append(" ".join(draw(st.lists(st.sampled_from(["Sure", "the", "weather", "."]), max_size=5))))
    return "".join(parts)


ALLOWED = st.sampled_from([tr.ANY_TOOL, ["get_weather"], ["get_weather", "web_search"], ["f", "g"], ["ns.f"], []])
DIALECT_SETS = st.sampled_from([None, ("hermes", "function_tag", "json"), ("hermes",), ("qwen3_coder", "glm"),
                                ("json", "pythonic", "functionary", "command_r_plus", "harmony")])


def _both(text: str, allowed: Any, dialects: Any, fences: bool, reasoning: bool, depth: int,
          chars: int) -> tuple[tr.SalvageResult, tr.SalvageResult]:
    config = config_for(dialects, fences, reasoning)
    return (run_whole(text, config, allowed, depth, chars),
            run_whole(text, config, allowed, depth, chars, fast=False))


@settings(max_examples=400, deadline=None)
@given(_texts(), ALLOWED, DIALECT_SETS, st.booleans(), st.booleans(),
       st.sampled_from([64, 2]), st.sampled_from([1_000_000, 40, 3]))
def test_fast_lane_agrees_with_the_general_pass(text: str, allowed: Any, dialects: Any, fences: bool,
                                                reasoning: bool, depth: int, chars: int) -> None:
    fast, general = _both(text, allowed, dialects, fences, reasoning, depth, chars)
    assert fast == general


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(sorted(RENDER)), min_size=1, max_size=4),
       st.lists(tool_calls(names=st.sampled_from(NAMES)), min_size=4, max_size=4), ALLOWED)
def test_rendered_replies_agree(dialects: list[str], calls: list[tr.ToolCall], allowed: Any) -> None:
    pieces = []
    for name, call in zip(dialects, calls):
        try:
            pieces.append(RENDER[name](call))
        except (TypeError, ValueError):
            continue
    text = "Let me check.\n" + "\nThen:\n".join(pieces) + "\nDone."
    fast, general = _both(text, allowed, None, True, True, 64, 1_000_000)
    assert fast == general


CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
HERMES = f"<tool_call>{CALL}</tool_call>"

# (text, allowed, whether the lane finishes alone, the calls' names, the rejections' reasons)
CASES = [
    ("no marker at all", ["get_weather"], True, [], []),
    (f"Sure. {HERMES} and {HERMES}", ["get_weather"], True, ["get_weather", "get_weather"], []),
    (f"Sure. {HERMES}", ["GetWeather"], True, ["GetWeather"], []),  # one normalised match
    (f"{HERMES} then <tool_call>{{\"name\": \"rm\", \"arguments\": {{}}}}</tool_call>", ["get_weather"],
     False, ["get_weather"], ["not-offered"]),
    (f"{HERMES} then\n```\n{HERMES}\n```", ["get_weather"], False, ["get_weather"], []),  # a fence
    (f"<think>{HERMES}</think> {HERMES}", ["get_weather"], False, ["get_weather"], []),
    (f"{HERMES} <tool_call>{{\"name\": \"get_weather\", \"arguments\": {{", ["get_weather"], False,
     ["get_weather"], ["truncated"]),
    ("Action:\n```json\n[{\"tool_name\": \"get_weather\", \"parameters\": {}}]\n```", ["get_weather"], True,
     ["get_weather"], []),  # `action:` is found through `:`, six characters after its start
    # `[` reaches nine characters back (`functools[`): a `[` that close after a marker leaves
    # the order to the pass.
    ('{"a": [1]} ' + HERMES, ["get_weather"], False, ["get_weather"], []),
    (f"<TOOL_CALL>{CALL}</TOOL_CALL>", ["get_weather"], True, ["get_weather"], []),
    ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
     ["get_weather"], True, ["get_weather"], []),  # Hermes declines, Qwen3-Coder reads
    ('{"name": "get_weather", "arguments": {"city": "Paris"}}', ["get_weather"], True, ["get_weather"], []),
    ('The set {1, 2} and ' + HERMES, ["get_weather"], False, ["get_weather"], []),  # `{` not a call
    ('<tool_call>{"name": "", "arguments": {}}</tool_call>', tr.ANY_TOOL, False, [], ["not-offered"]),
    # Runs: the same marker spelled the same, taken while the gap before it holds no anchor.
    (f"A {HERMES} b {HERMES} c {HERMES} d", ["get_weather"], True, ["get_weather"] * 3, []),
    (f"A {HERMES} b {{x}} {HERMES} c {HERMES}", ["get_weather"], False, ["get_weather"] * 3, []),
    (f"A {HERMES} b <TOOL_CALL>{CALL}</TOOL_CALL> {HERMES}", ["get_weather"], True, ["get_weather"] * 3, []),
    (f"A {HERMES}]{HERMES}", ["get_weather"], True, ["get_weather"] * 2, []),  # `]` then `<`: no marker
    (f"A {HERMES} ]<]minimax[>[{HERMES}", ["get_weather"], False, ["get_weather"] * 2, ["undecodable"]),
    (f"A {HERMES} <tool_call>{{\"name\": \"rm\", \"arguments\": {{}}}}</tool_call> {HERMES}", ["get_weather"],
     False, ["get_weather"] * 2, ["not-offered"]),
    (f"A {HERMES}\n```\n{HERMES}\n```\n{HERMES}", ["get_weather"], False, ["get_weather"] * 2, []),
    (f"A {HERMES} <tool_call>[{CALL}]</tool_call>", ["get_weather"], True, ["get_weather"] * 2, []),
]


@pytest.mark.parametrize(("text", "allowed", "alone", "names", "reasons"), CASES,
                         ids=[c[0][:40] for c in CASES])
def test_fast_lane_table(text: str, allowed: Any, alone: bool, names: list[str],
                         reasons: list[str]) -> None:
    config = config_for(None)
    got = fast_lane(text, config, _allowlist(allowed), 64, 1_000_000)
    assert isinstance(got, tr.SalvageResult) is alone
    fast, general = _both(text, allowed, None, True, True, 64, 1_000_000)
    assert fast == general
    assert [c.name for c in fast.calls] == names
    assert [r.reason for r in fast.rejected] == reasons


def test_handover_keeps_the_calls_before_it() -> None:
    text = f"{HERMES} {HERMES}\n```\nx\n```\n{HERMES}"
    got = fast_lane(text, config_for(None), _allowlist(["get_weather"]), 64, 1_000_000)
    assert not isinstance(got, tr.SalvageResult)
    pos, calls, cuts = got
    assert [c.span for c in calls] == cuts == [(0, len(HERMES)), (len(HERMES) + 1, 2 * len(HERMES) + 1)]
    assert text[pos:].startswith("\n```")
    assert len(tr.salvage_text(text, ["get_weather"]).calls) == 3


def test_a_long_candidate_is_left_to_the_pass() -> None:
    # Past max_call_chars the pass probes prefixes: the lane hands such a candidate over.
    text = f"<tool_call>{CALL}</tool_call>" + " " * 50
    got = fast_lane(text, config_for(None), _allowlist(["get_weather"]), 64, 40)
    assert got == (0, [], [])
    fast, general = _both(text, ["get_weather"], None, True, True, 64, 40)
    assert fast == general and fast.rejected[0].reason == "too-large"


CORPUS = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "corpus.jsonl"


@pytest.mark.skipif(not CORPUS.exists(), reason="the conformance corpus is not beside the project")
def test_corpus_agrees() -> None:
    cases = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert cases
    for case in cases:
        for allowed in (tr.ANY_TOOL, [c["name"] for c in case["calls"]]):
            fast, general = _both(case["text"], allowed, None, True, True, 64, 1_000_000)
            assert fast == general, case["source"]


def test_first_character_tests_are_exact_ignoring_case() -> None:
    # A subgroup tests a marker's first character before its regex only when that character
    # is ASCII and not a letter: no other code point matches it ignoring case.
    tested = {c for *_, others, _ in _FINDER.lanes for _, firsts, _, _ in others if firsts for c in firsts}
    assert tested  # the minimax marker `]<]...` is found through its `<`, one character in
    pattern = re.compile("[" + re.escape("".join(sorted(tested))) + "]", re.IGNORECASE)
    others = "".join(chr(i) for i in range(0x110000) if chr(i) not in tested and not 0xD800 <= i < 0xE000)
    assert pattern.search(others) is None


@pytest.mark.parametrize(("marker", "checks"), [
    # `]<]minimax[>[<tool_call>` is found through the `<` one character in, but its `]<]` cannot
    # overlap `<tool_call>`: nothing to check. A run looks for its anchor, `<`, its first character.
    ("<tool_call>", []),
    ("[tool_calls]", [(-9, None)]),  # `functools[` ends at its `[`: matched before a run takes one
    ("[", None),  # shorter than `functools[`'s reach back from `[`
    ("action:", None),  # the same
    ("<|channel|>", None),  # `<|channel|>analysis<|message|>` starts with it
    ("to=functions.", None),  # its own `=` reaches back to its start
])
def test_run_checks_table(marker: str, checks: list[tuple[int, Any]] | None) -> None:
    got = _FINDER.run_checks(marker)
    assert (None if got is None else [(rel, firsts) for rel, firsts, _, _ in got]) == checks
    assert _FINDER.run_checks(marker) is got  # cached


BLOCK = tr.TagDialect("block", open="[call_block]", close="[/call_block]")


@pytest.mark.parametrize(("text", "names"), [
    (f"[call_block]{CALL}[/call_block] and [call_block]{CALL}[/call_block]", ["get_weather"] * 2),
    # `functools[` ends at the second block's `[`: it starts first, and the run leaves it to
    # the pass (which reads it as a `functools` list, not a call).
    (f"[call_block]{CALL}[/call_block] functools[call_block]{CALL}[/call_block]", ["get_weather"]),
])
def test_a_run_checks_markers_ending_inside_it(text: str, names: list[str]) -> None:
    config = config_for([BLOCK, "functools"])
    checks = config.finder.run_checks("[call_block]")
    assert checks is not None and [(rel, firsts) for rel, firsts, _, _ in checks] == [(-9, None)]
    fast, general = _both(text, ["get_weather"], [BLOCK, "functools"], True, True, 64, 1_000_000)
    assert fast == general
    assert [c.name for c in fast.calls] == names


def test_a_marker_too_short_for_a_run_is_found_marker_by_marker() -> None:
    short = tr.TagDialect("short", open="<c>", close="</c>")
    config = config_for([short, "functools"])
    assert config.finder.run_checks("<c>") is None  # `functools[` reaches further back than it is long
    text = f"<c>{CALL}</c> then <c>{CALL}</c>"
    got = fast_lane(text, config, _allowlist(["get_weather"]), 64, 1_000_000)
    assert isinstance(got, tr.SalvageResult) and [c.span for c in got.calls] == [(0, 62), (68, 130)]
    assert got == run_whole(text, config, ["get_weather"], 64, 1_000_000, fast=False)


class _Declining(tr.TagDialect):
    """A TagDialect that reads otherwise: the shortcut must not stand in for its reader."""

    def read(self, text: str, start: int, marker_end: int, ctx: Any) -> Any:
        return None


def test_the_shortcut_is_only_for_tag_dialects_reading_as_ours() -> None:
    from toolrepair._salvage._registry import HERMES as HERMES_DIALECT
    from toolrepair._salvage.tag import json_block_close

    declining = _Declining("declining", open="<tool_call>", close="</tool_call>")
    assert json_block_close(HERMES_DIALECT) is not None
    assert json_block_close(declining) is None and json_block_close(object()) is None
    assert config_for([declining]).express[1] == {}
    text = f"Sure. {HERMES}"
    assert tr.salvage_text(text, ["get_weather"], dialects=[declining]).calls == ()
    assert len(tr.salvage_text(text, ["get_weather"], dialects=[HERMES_DIALECT]).calls) == 1


LONG = tr.TagDialect("long", open="<abcdefghijklmnopqrst>", close="</x>")


def _spelled_differently(n: int) -> str:
    """n calls, each opened by a spelling of LONG's marker no other call uses."""
    letters = "abcdefghijklmnopqrst"
    parts = []
    for i in range(n):
        spelled = "".join(c.upper() if (i >> k) & 1 else c for k, c in enumerate(letters))
        parts.append(f'<{spelled}>{{"name": "f", "arguments": {{}}}}</x> ')
    return "".join(parts)


def test_runs_stay_linear_when_every_call_is_spelled_differently() -> None:
    # A run looks for the next occurrence of its marker's first anchor, not of its spelling: a
    # spelling that never comes again must not cost a search to the end of the text per call.
    from .test_hostile import assert_doubling

    text = _spelled_differently(8)
    assert len(tr.salvage_text(text, ["f"], dialects=[LONG]).calls) == 8
    small, large = (_looked_per_character(_spelled_differently(n), [LONG], ["f"]) for n in (100, 400))
    assert large <= small * 1.1 + 0.1, (small, large)
    assert_doubling(lambda t: tr.salvage_text(t, ["f"], dialects=[LONG]), _spelled_differently)


SHORT = tr.TagDialect("short", open="<c>", close="</c>")


class _CountingText(str):
    """A reply that counts the characters its ``find`` looks at: the lane's searches."""

    looked = 0

    def find(self, sub: str, start: Any = 0, end: Any = None) -> int:  # type: ignore[override]
        stop = len(self) if end is None else min(end, len(self))
        got = str.find(self, sub, start, stop)
        _CountingText.looked += (stop if got == -1 else got + len(sub)) - min(start, stop)
        return got


def _looked_per_character(text: str, dialects: list[Any] | None, allowed: list[str]) -> float:
    _CountingText.looked = 0
    got = fast_lane(_CountingText(text), config_for(dialects), _allowlist(allowed), 64, 1_000_000)
    assert got == tr.salvage_text(text, allowed, dialects=dialects)  # the lane alone, to the end
    return _CountingText.looked / len(text)


CALL_F = '<c>{"name": "f", "arguments": {}}</c> '


@pytest.mark.parametrize("tail", ["~", "[x]", "<d>"])
def test_an_anchor_far_ahead_is_not_searched_for_again_per_call(tail: str) -> None:
    # `<c>` is too short for runs (`functools[` reaches further back), so every call is found
    # by the anchors; the tail's anchor occurs once, at the very end. Searching for it again
    # from every cut would look at the rest of the text per call: characters looked at per
    # character of text would grow with the number of calls. Each anchor's search goes forward.
    dialects: list[Any] = [SHORT, "functools"]
    assert config_for(dialects).finder.run_checks("<c>") is None
    small, large = (_looked_per_character(CALL_F * n + tail, dialects, ["f"]) for n in (100, 400))
    assert large <= small * 1.1 + 0.1, (small, large)
    assert large < 2 * len(config_for(dialects).finder.anchors)


def test_a_run_looks_at_each_character_a_bounded_number_of_times() -> None:
    text = ("Some prose. " + HERMES + " ") * 300 + "~"
    assert _looked_per_character(text, None, ["get_weather"]) < 2 * len(_FINDER.anchors)


def _hostile_families() -> dict[str, Any]:
    from .test_hostile import FAMILIES

    return FAMILIES


def _looked_at(text: str) -> float:
    """Characters the lane's searches look at, per character of ``text`` (ANY_TOOL, every
    built-in dialect), whether it finishes or hands over."""
    _CountingText.looked = 0
    fast_lane(_CountingText(text), _CONFIG, None, 64, 1_000_000)
    return _CountingText.looked / len(text)


_CONFIG = config_for(None)
_UPPER = HERMES.replace("<tool_call>", "<TOOL_CALL>")
LANE_FAMILIES: dict[str, Any] = {
    "calls_then_tilde": lambda n: (HERMES + " ") * n + "~",
    "calls_with_braces_between": lambda n: (HERMES + " {x} ") * n + "[y]",
    "calls_spelled_two_ways": lambda n: (HERMES + " " + _UPPER + " ") * n,
    "calls_with_colons_between": lambda n: (HERMES + " note: ") * n + "```",
    # An opening run read to the end, then undone: by its last gap, or by its first.
    "calls_then_colon": lambda n: (HERMES + " ") * n + "note:",
    "colon_then_calls": lambda n: "note: " + (HERMES + " ") * n,
    "calls_colon_in_the_last_gap": lambda n: (HERMES + " ") * n + ": " + HERMES,
}


@pytest.mark.parametrize("family", sorted(LANE_FAMILIES) + ["hostile:" + f for f in sorted(_hostile_families())])
def test_the_lane_looks_at_each_character_a_bounded_number_of_times(family: str) -> None:
    make = _hostile_families()[family[8:]] if family.startswith("hostile:") else LANE_FAMILIES[family]
    small, large = _looked_at(make(100)), _looked_at(make(400))
    assert large <= small * 1.1 + 0.5, (small, large)


# Express reading (``_express``): runs of a JSON-block marker. A reply opening on one is read
# from its first anchor with the gaps checked once at the end; the state it hands the lane is
# the calls before the first gap holding an anchor.
_C = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_H = f"<tool_call>{_C}</tool_call>"
_RM = '<tool_call>{"name": "rm", "arguments": {}}</tool_call>'

# (text, allowed, max_depth, max_call_chars, what the opening run returns: the result's call
# count, or the position the lane goes on from and the calls kept)
EXPRESS_CASES: list[tuple[str, Any, int, int, Any]] = [
    (f"Sure. {_H} then {_H} done.", ["get_weather"], 64, 1_000_000, ("result", 2)),
    (f"{_H}{_H}{_H}", ["get_weather"], 64, 1_000_000, ("result", 3)),
    (f"{_H}\n", ["GetWeather"], 64, 1_000_000, ("result", 1)),  # offered under its normalised key
    (f"{_H}", tr.ANY_TOOL, 64, 1_000_000, ("result", 1)),
    (f"<tool_call>{_C}", ["get_weather"], 64, 1_000_000, ("result", 1)),  # the closing tag eaten
    (f"<tool_call> {_C} </TOOL_CALL> ok", ["get_weather"], 64, 1_000_000, ("result", 1)),  # closed in capitals
    (f"<tool_call>{_C} </tool_call", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # `<`: a cut close
    (f"Note: {_H}", ["get_weather"], 64, 1_000_000, ("stop", 0, 0)),  # an anchor before the first call
    (f"{_H} a: {_H} b {_H}", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # in the second gap
    (f"{_H} b {_H} set {{1}}", ["get_weather"], 64, 1_000_000, ("stop", 2, 2)),  # after the last call
    (f"{_H} {_RM} {_H}", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # a name not offered
    (f"{_H} <tool_call>[{_C}]</tool_call>", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # an array
    (f"{_H} <tool_call>{{oops}}</tool_call>", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # not JSON
    (f"{_H} <TOOL_CALL>{_C}</TOOL_CALL>", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # spelled otherwise
    (f"{_H} <think>{_H}</think>", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # another marker
    (f"{_H} {_H}" + " " * 80, ["get_weather"], 64, 100, ("stop", 0, 0)),  # more than the size limit to the end
    ('<tool_call>{"name": "get_weather", "arguments": {"a": [[[1]]]}}</tool_call>', ["get_weather"], 2,
     1_000_000, ("stop", 0, 0)),  # past the depth limit
    ('<tool_call>{"name": "", "arguments": {}}</tool_call>', tr.ANY_TOOL, 64, 1_000_000, ("stop", 0, 0)),
    ('<tool_call>{"name": "get_weather", "arguments": {}, "function": 1}</tool_call>', ["get_weather"], 64,
     1_000_000, ("stop", 0, 0)),  # not the common shape: read_json_block reads it
    # The usual spelling, one newline inside each end (a `startswith` each), beside others.
    (f"<tool_call>\n{_C}\n</tool_call> and {_H} and <tool_call>\n{_C}</tool_call>", ["get_weather"], 64,
     1_000_000, ("result", 3)),
    (f"<tool_call>\n\n{_C}\n\n</tool_call> <tool_call> \n{_C} \n</tool_call>", ["get_weather"], 64, 1_000_000,
     ("result", 2)),
    (f"<tool_call>\n{_C}\n</TOOL_CALL> x", ["get_weather"], 64, 1_000_000, ("result", 1)),  # closed in capitals
    (f"<tool_call>\n{_C}\n</tool_call", ["get_weather"], 64, 1_000_000, ("stop", 1, 1)),  # a cut close
    # A name and arguments alone is the common shape at once; anything else asks common_call.
    ('<tool_call>\n{"name": "get_weather", "arguments": {}, "id": "c1"}\n</tool_call>', ["get_weather"], 64,
     1_000_000, ("result", 1)),
    ('<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n</tool_call>', ["get_weather"], 64,
     1_000_000, ("result", 1)),
    ('<tool_call>\n{"arguments": {}, "name": "get_weather"}\n</tool_call>', ["get_weather"], 64, 1_000_000,
     ("result", 1)),
    ('<tool_call>\n{"name": "get_weather", "arguments": "{}"}\n</tool_call>', ["get_weather"], 64, 1_000_000,
     ("stop", 0, 0)),  # arguments as a JSON string: read_json_block decodes it
    ('<tool_call>\n{"name": 7, "arguments": {}}\n</tool_call>', ["get_weather"], 64, 1_000_000, ("stop", 0, 0)),
]


@pytest.mark.parametrize(("text", "allowed", "depth", "chars", "expected"), EXPRESS_CASES,
                         ids=[c[0][:40] for c in EXPRESS_CASES])
def test_an_opening_run(text: str, allowed: Any, depth: int, chars: int, expected: Any) -> None:
    from toolrepair._salvage._fast import _express

    config = config_for(None)
    k, express, rest = config.express
    marker = "<tool_call>"
    assert config.finder.anchors[k] == "<" and text.find("<") == text.find(marker)  # an opening run
    calls: list[tr.ToolCall] = []
    cuts: list[tuple[int, int]] = []
    got = _express(text, text.find(marker), marker, express[marker], rest, names=_allowlist(allowed),
                   max_depth=depth, max_call_chars=chars, calls=calls, cuts=cuts, opening=True)
    fast, general = _both(text, allowed, None, True, True, depth, chars)
    assert fast == general
    if expected[0] == "result":
        assert isinstance(got, tr.SalvageResult) and got == general and len(got.calls) == expected[1]
    else:
        _, kept, taken = expected
        assert isinstance(got, int) and len(calls) == len(cuts) == taken
        assert got == (cuts[-1][1] if cuts else 0)
        assert calls == list(general.calls[:taken]) and kept == taken


def test_the_express_table() -> None:
    k, express, rest = config_for(None).express
    assert _FINDER.anchors[k] == "<" and list(express) == ["<tool_call>"]
    assert express["<tool_call>"][0] == "</tool_call>" and express["<tool_call>"][2] == "hermes"
    assert rest == tuple(c for c in _FINDER.anchors if c != "<")
    # A block marker a run cannot follow alone (`functools[` may end inside it), a marker
    # found one character in, and a whitespace anchor have no express reading.
    assert config_for([BLOCK, "functools"]).express[1] == {}
    assert config_for([tr.TagDialect("late", open="call<<", close=">>end")]).express[1] == {}
    spaced = config_for([tr.TagDialect("ws", open="\n\n\n", close="\n\n")])
    assert spaced.express[:2] == (-1, {}) and "\n" in spaced.express[2] == spaced.finder.anchors
    # Two block markers on one anchor are both express; one on another anchor is not.
    two = [tr.TagDialect("a", open="<a-call>", close="</a>"), tr.TagDialect("b", open="<b-call>", close="</b>"),
           tr.TagDialect("c", open="%c-call%", close="%/c%")]
    assert sorted(config_for(two, False, False).express[1]) == ["<a-call>", "<b-call>"]


_GAPS = ["", " ", "\n", "ok. ", ": ", "{x}", "[", "```\n", "~", "<", ">", "=", "｜", "Action: "]
_PAYLOADS = [_C, '{"name": "web_search", "parameters": {"q": "x"}, "id": "c1"}', '{"name": "rm", "arguments": {}}',
             '{"name": "get_weather", "parameters": {"q": "x"}}', '{"name": 5, "arguments": {}}',
             '{"name": "get_weather", "arguments": {}, "id": "c2"}', '{"arguments": {"q": 1}, "name": "web_search"}',
             '{"name": "get_weather", "arguments": {"a": [[[[1]]]]}}', '{"name": "get_weather"}',
             "[" + _C + "]", "{oops}", '{"name": "get_weather", "arguments": "{\\"a\\": 1}"}', _C[:20]]
_CLOSES = ["</tool_call>", " </tool_call>", "\n</tool_call>", "\n\n</tool_call>", "\n</TOOL_CALL>", "", "</tool_call"]


@st.composite
def _block_replies(draw: st.DrawFn) -> str:
    parts = [draw(st.sampled_from(["", "Sure. ", "Note: "]))]
    for _ in range(draw(st.integers(1, 6))):
        opener = draw(st.sampled_from(["<tool_call>", "<tool_call>\n", "<tool_call>\n\n", "<tool_call> \n",
                                       "<TOOL_CALL>", "<TOOL_CALL>\n"]))
        parts += [opener, draw(st.sampled_from(_PAYLOADS)), draw(st.sampled_from(_CLOSES)),
                  draw(st.sampled_from(_GAPS))]
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_block_replies(), ALLOWED, st.sampled_from([None, ("hermes",), ("hermes", "json", "pythonic")]),
       st.sampled_from([64, 3]), st.sampled_from([1_000_000, 120, 30]))
def test_block_runs_agree_with_the_general_pass(text: str, allowed: Any, dialects: Any, depth: int,
                                                chars: int) -> None:
    fast, general = _both(text, allowed, dialects, True, True, depth, chars)
    assert fast == general


def test_a_marker_a_run_follows_starts_with_its_anchor() -> None:
    # The lane looks for a run's next marker by its first character: that must be its anchor.
    from toolrepair._salvage._scan import anchor_of

    followed = [m for m in MARKERS if _FINDER.run_checks(m) is not None]
    assert "<tool_call>" in followed
    assert all(anchor_of(m) == 0 for m in followed)
    late = config_for([tr.TagDialect("late", open="call<<", close=">>end")]).finder
    assert anchor_of("call<<") == 4 and late.run_checks("call<<") is None
