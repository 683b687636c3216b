"""The code mask is asked lazily (``SalvagePass._marker``): only where a reader's answer depends
on it. These tests hold the pass to what asking first gives: no call from code, ever, and the
same results as an oracle pass that asks the mask before every dialect marker."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._base import NEED_MORE
from toolrepair._salvage._engine import Pending, SalvagePass, config_for
from toolrepair._salvage._marks import Hit

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
HERMES = f"<tool_call>{CALL}</tool_call>"
ALLOWED = ["get_weather"]


class _AskFirst(SalvagePass):
    """The oracle: the mask is asked about every dialect marker before any reader runs."""

    def _marker(self, item: Hit, final: bool, retried: bool, pending: Pending) -> bool:
        code = self._covers(item.start, final)
        if code is NEED_MORE:
            self._block(item, None)
            return False
        if code:
            self.pos = max(self.pos, item.start + 1)
            return True
        return super()._marker(item, final, retried, pending)


def ask_first(text: str, allowed: Any, **kw: bool) -> tr.SalvageResult:
    run = _AskFirst(config_for(None, **kw), allowed, text)
    run.advance(final=True)
    return run.result()


# Call-shaped blocks of every kind in every kind of code: never a call, never a rejection.
CODE = [
    f"```\n{HERMES}\n```",
    f"```json\n{CALL}\n```",
    f"~~~\n{CALL}\n~~~",
    f"> ```\n> {HERMES}\n> ```",
    f"- item\n\n  ```\n  {CALL}\n  ```",
    f"1. ```json\n   {HERMES}\n   ```",
    f"Inline `{HERMES}` code.",
    f"Inline ``{CALL}`` code.",
    '```\n<tool_call>{"name": "rm", "arguments": {}}</tool_call>\n```',  # not offered: no rejection either
    '```\n<tool_call>{"name": "get_weather", "arguments": {\n```',  # truncated: no rejection
    f"> - ```\n>   {CALL}\n>   ```",
]


@pytest.mark.parametrize("code", CODE)
def test_a_call_in_code_is_never_taken(code: str) -> None:
    got = tr.salvage_text(code, ALLOWED)
    assert got.calls == () and got.rejected == () and got.content == code
    # ... and after it, text is read again: the call outside code is taken.
    after = tr.salvage_text(f"{code}\n\nThen {HERMES}", ALLOWED)
    assert [c.span[0] for c in after.calls] == [len(code) + 7]
    assert after == ask_first(f"{code}\n\nThen {HERMES}", ALLOWED)


def test_an_unclosed_fence_is_code_to_the_end() -> None:
    text = f"```\n{HERMES}\n\nThen {HERMES}"
    assert tr.salvage_text(text, ALLOWED) == ask_first(text, ALLOWED) == tr.SalvageResult((), text, ())


def test_a_rejection_in_code_is_not_reported_but_one_in_text_is() -> None:
    rm = '<tool_call>{"name": "rm", "arguments": {}}</tool_call>'
    got = tr.salvage_text(f"```\n{rm}\n```\n{rm}", ALLOWED)
    assert [(r.reason, r.span[0]) for r in got.rejected] == [("not-offered", 9 + len(rm))]


def test_data_read_from_code_into_text_hides_what_it_spans() -> None:
    # The documented trade of not asking the mask for a silent skip: a brace in a code span
    # that the JSON reader reads on past the span as data (here an unbalanced quote makes a
    # string run to the next quote) hides the markers it spans, exactly as the same brace
    # does in plain text. Nothing is taken from code either way.
    text = f'`{{"a": "b` then {HERMES} and "}}'
    assert tr.salvage_text(text, ALLOWED).calls == ()
    assert tr.salvage_text(text.replace("`", ""), ALLOWED).calls == ()  # the same in text
    assert len(ask_first(text, ALLOWED).calls) == 1  # asking first reads it again


# Generated Markdown with calls: blocks of prose, code in every container, data JSON, calls.
PROSE = st.sampled_from(
    [
        "Some text.",
        "A [link](http://x.y/1) and [2].",
        "key: value",
        "{x} and <br>",
        "# Heading",
        "**bold** `code()`",
        "- a list item",
        "> a quote",
        "",
    ]
)
DATA = st.dictionaries(
    st.sampled_from(["name", "status", "a", "arguments"]),
    st.integers(0, 9) | st.sampled_from(["x", "paris"]),
    max_size=3,
).map(json.dumps)
CALLS = st.sampled_from(
    [
        HERMES,
        CALL,
        f"<tool_call>[{CALL}]</tool_call>",
        '<tool_call>{"name": "rm", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {',
    ]
)
FENCES = st.sampled_from(
    [
        ("```\n", "\n```"),
        ("```json\n", "\n```"),
        ("~~~\n", "\n~~~"),
        ("> ```\n> ", "\n> ```"),
        ("- ```\n  ", "\n  ```"),
        ("`", "`"),
        ("``", "``"),
        ("<think>", "</think>"),
    ]
)


@st.composite
def markdown_with_calls(draw: st.DrawFn) -> str:
    blocks = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            blocks.append(draw(PROSE))
        elif kind == 1:
            blocks.append(draw(CALLS))
        else:
            open_, close = draw(FENCES)
            body = draw(CALLS) if kind == 2 else draw(DATA)
            blocks.append(open_ + body + (close if draw(st.booleans()) else ""))
    return draw(st.sampled_from(["\n\n", "\n", " "])).join(blocks)


@given(markdown_with_calls(), st.sampled_from([{}, {"mask_reasoning": False}]))
def test_asking_lazily_gives_what_asking_first_gives(text: str, kw: dict[str, bool]) -> None:
    assert tr.salvage_text(text, ALLOWED, **kw) == ask_first(text, ALLOWED, **kw)


def test_a_decided_candidate_waits_for_the_mask_without_being_read_again() -> None:
    # A code span left open: whether the call is code depends on a closing backtick that may
    # come later in the paragraph. The first delta holds the whole call, so the reader decides
    # at once and the mask cannot; each delta after it asks only the mask, so reads stay
    # constant however long the line grows.
    def reads(n: int) -> tuple[int, tuple[tr.ToolCall, ...]]:
        stream = tr.StreamSalvager(ALLOWED)
        head = "`" + HERMES + " w"
        text = "ord" + " word" * n + "\n\nafter"
        events = stream.feed(head) + [e for i in range(0, len(text), 4) for e in stream.feed(text[i : i + 4])]
        events += stream.close()
        calls = tuple(e.call for e in events if isinstance(e, tr.ToolCallReady))
        return stream.work.reads, calls

    small, calls = reads(200)
    large, _ = reads(400)
    assert calls == tr.salvage_text("`" + HERMES + " word" * 200 + "\n\nafter", ALLOWED).calls
    assert large == small <= 4


@pytest.mark.parametrize(
    "text",
    [
        "`" + HERMES + " word" * 50 + "` closed\n\nafter",  # decided, then the span closes: code
        "`" + HERMES + " word" * 50 + "\n\nafter",  # decided, the paragraph ends: a call
        "`<tool_call>" + " " * 300 + CALL + "</tool_call> word` x",  # both undecided for a while
        "`<tool_call>" + " " * 300 + CALL + "</tool_call> word\n\nx",
    ],
)
@pytest.mark.parametrize("step", [1, 3, 16, 0])
def test_a_stream_waiting_on_the_mask_gives_salvage_text(text: str, step: int) -> None:
    stream = tr.StreamSalvager(ALLOWED)
    # step 0: the call whole in the first delta (the reader decides before the mask can).
    head = text.index("</tool_call>") + 16 if step == 0 else 0
    events = stream.feed(text[:head])
    step = step or 5
    events += [e for i in range(head, len(text), step) for e in stream.feed(text[i : i + step])] + stream.close()
    want = tr.salvage_text(text, ALLOWED)
    assert tuple(e.call for e in events if isinstance(e, tr.ToolCallReady)) == want.calls
    assert "".join(e.text for e in events if isinstance(e, tr.TextDelta)) == want.content
    assert want == ask_first(text, ALLOWED)
