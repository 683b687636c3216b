"""The one engine on generated replies: the whole-text pass and the same pass fed in pieces agree.

The replies are built to hit the engine's harder orderings: every marker of every dialect in
mixed case, rendered calls of every dialect back to back, masks, names not offered, broken
payloads, markers found through different anchors at nearby places, and small size and depth
limits. ``salvage_text`` is ``SalvagePass`` run once; ``StreamSalvager`` feeds it.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._engine import config_for
from toolrepair.testing import tool_calls

from .test_builtin_dialects import RENDER

MARKERS = sorted({m for group in config_for(None).finder.groups.values() for _, m, _, _ in group})
NAMES = ["get_weather", "web_search", "f", "GetWeather", "web-search", "ns.f"]
PIECES = [
    "{",
    "}",
    "[",
    "]",
    '"',
    ":",
    "=",
    ">",
    "<",
    "\n",
    " ",
    "```",
    "~~~",
    "\\",
    "K",
    "ſ",
    "İ",
    "Action:",
    "\ud800",
    "\x00",
    "{{",
    '{"name": "f", "arguments": {"a": [1, {"b": 2}]}}',
]
ALLOWED = st.sampled_from([tr.ANY_TOOL, ["get_weather"], ["get_weather", "web_search"], ["f", "g"], ["ns.f"], []])
DIALECT_SETS = st.sampled_from(
    [
        None,
        ("hermes", "function_tag", "json"),
        ("hermes",),
        ("qwen3_coder", "glm"),
        ("json", "pythonic", "functionary", "command_r_plus", "harmony"),
    ]
)


def _cased(marker: str, flips: int) -> str:
    return "".join(c.upper() if (flips >> (i % 16)) & 1 else c for i, c in enumerate(marker))


@st.composite
def _texts(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            call = draw(tool_calls(names=st.sampled_from(NAMES)))
            try:
                parts.append(RENDER[draw(st.sampled_from(sorted(RENDER)))](call))
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


_C = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_GAPS = ["", " ", "\n", "ok. ", ": ", "{x}", "[", "```\n", "~", "<", ">", "=", "｜", "Action: "]
_PAYLOADS = [
    _C,
    '{"name": "web_search", "parameters": {"q": "x"}, "id": "c1"}',
    '{"name": "rm", "arguments": {}}',
    '{"name": "get_weather", "parameters": {"q": "x"}}',
    '{"name": 5, "arguments": {}}',
    '{"name": "get_weather", "arguments": {}, "id": "c2"}',
    '{"arguments": {"q": 1}, "name": "web_search"}',
    '{"name": "get_weather", "arguments": {"a": [[[[1]]]]}}',
    '{"name": "get_weather"}',
    "[" + _C + "]",
    "{oops}",
    '{"name": "get_weather", "arguments": "{\\"a\\": 1}"}',
    _C[:20],
]
_CLOSES = ["</tool_call>", " </tool_call>", "\n</tool_call>", "\n\n</tool_call>", "\n</TOOL_CALL>", "", "</tool_call"]


@st.composite
def _block_replies(draw: st.DrawFn) -> str:
    parts = [draw(st.sampled_from(["", "Sure. ", "Note: "]))]
    for _ in range(draw(st.integers(1, 6))):
        opener = draw(
            st.sampled_from(
                ["<tool_call>", "<tool_call>\n", "<tool_call>\n\n", "<tool_call> \n", "<TOOL_CALL>", "<TOOL_CALL>\n"]
            )
        )
        parts += [
            opener,
            draw(st.sampled_from(_PAYLOADS)),
            draw(st.sampled_from(_CLOSES)),
            draw(st.sampled_from(_GAPS)),
        ]
    return "".join(parts)


def _check_one_engine(text: str, allowed: Any, cuts: list[int], **kw: Any) -> None:
    whole = tr.salvage_text(text, allowed, **kw)
    # Calls in text order, inside the text, not overlapping; content is the text without them.
    spans = [c.span for c in whole.calls]
    assert all(s is not None and 0 <= s[0] < s[1] <= len(text) for s in spans)
    assert all(a[1] <= b[0] or a == b for a, b in pairwise(spans))  # type: ignore[index]
    # Content and reasoning are the reply's own text, with calls and markup cut out.
    assert len(whole.content) + len(whole.reasoning) <= len(text)
    stream = tr.StreamSalvager(allowed, **kw)
    events: list[Any] = []
    prev = 0
    for cut in [*sorted(c for c in cuts if c <= len(text)), len(text)]:
        events += stream.feed(text[prev:cut])
        prev = cut
    events += stream.close()
    assert tuple(e.call for e in events if isinstance(e, tr.ToolCallReady)) == whole.calls
    assert "".join(e.text for e in events if isinstance(e, tr.TextDelta)) == whole.content
    assert "".join(e.text for e in events if isinstance(e, tr.ReasoningDelta)) == whole.reasoning


CUTS = st.lists(st.integers(0, 300), max_size=10)


@settings(deadline=None)
@given(
    _texts(),
    ALLOWED,
    DIALECT_SETS,
    st.booleans(),
    st.booleans(),
    st.sampled_from([64, 2]),
    st.sampled_from([1_000_000, 40, 3]),
    CUTS,
)
def test_generated_replies(
    text: str, allowed: Any, dialects: Any, fences: bool, reasoning: bool, depth: int, chars: int, cuts: list[int]
) -> None:
    _check_one_engine(
        text,
        allowed,
        cuts,
        dialects=dialects,
        mask_fences=fences,
        mask_reasoning=reasoning,
        max_depth=depth,
        max_call_chars=chars,
    )


@settings(deadline=None)
@given(
    st.lists(st.sampled_from(sorted(RENDER)), min_size=1, max_size=4),
    st.lists(tool_calls(names=st.sampled_from(NAMES)), min_size=4, max_size=4),
    ALLOWED,
    CUTS,
)
def test_rendered_replies(dialects: list[str], calls: list[tr.ToolCall], allowed: Any, cuts: list[int]) -> None:
    pieces = []
    for name, call in zip(dialects, calls):
        try:
            pieces.append(RENDER[name](call))
        except (TypeError, ValueError):
            continue
    text = "Let me check.\n" + "\nThen:\n".join(pieces) + "\nDone."
    _check_one_engine(text, allowed, cuts)


@settings(deadline=None)
@given(
    _block_replies(),
    ALLOWED,
    st.sampled_from([None, ("hermes",), ("hermes", "json", "pythonic")]),
    st.sampled_from([64, 3]),
    st.sampled_from([1_000_000, 120, 30]),
    CUTS,
)
def test_json_block_replies(text: str, allowed: Any, dialects: Any, depth: int, chars: int, cuts: list[int]) -> None:
    _check_one_engine(text, allowed, cuts, dialects=dialects, max_depth=depth, max_call_chars=chars)
