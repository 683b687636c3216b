"""Every region a call marker opened gives exactly one outcome: over any cut of any rendered
call of any built-in dialect we render, the rejections never overlap each other or an accepted
call, and every reason is one of ``RejectReason``'s."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._engine import _resolve_dialects

from .test_builtin_dialects import RENDER

MAX_EXAMPLES = min(settings().max_examples, 100)

CALLS = [
    tr.ToolCall("get_weather", {"city": "Zürich", "unit": "c"}),
    tr.ToolCall("search", {"query": "a <b> c", "n": "3"}),
]


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@pytest.mark.parametrize("dialect", sorted(RENDER))
def test_cut_calls_give_one_outcome_each(dialect: str) -> None:
    render = RENDER[dialect]
    text = render(CALLS[0]) + "\n" + render(CALLS[1])

    @settings(max_examples=MAX_EXAMPLES, deadline=None)
    @given(cut=st.integers(min_value=0, max_value=len(text)))
    def run(cut: int) -> None:
        piece = text[:cut]
        result = tr.salvage_text(piece, ["get_weather", "search"])
        spans = [r.span for r in result.rejected]
        for i, a in enumerate(spans):
            assert all(not _overlap(a, b) for b in spans[i + 1 :]), (piece, result.rejected)
            assert all(c.span is None or not _overlap(a, c.span) for c in result.calls), (piece, result)
        for r in result.rejected:
            assert r.reason in {x.value for x in tr.RejectReason}, r

    run()


def _params(call: tr.ToolCall) -> str:
    return "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in call.arguments.items())


# Forms a dialect reads besides its own rendering, where one region's tags are another form's
# markers: a bare invoke, and a MiniMax block (whose invokes are bare invokes) before one.
FORMS = {
    "bare-invoke": lambda c: f'<invoke name="{c.name}">\n{_params(c)}\n</invoke>',
    "minimax-then-bare": lambda c: (
        f'<minimax:tool_call>\n<invoke name="{c.name}">{_params(c)}</invoke>\n</minimax:tool_call>\n'
        f'<invoke name="{c.name}">{_params(c)}</invoke>'
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_cut_forms_give_one_outcome_each(form: str) -> None:
    render = FORMS[form]
    text = render(CALLS[0]) + "\n" + render(CALLS[1])

    @settings(max_examples=MAX_EXAMPLES // 2, deadline=None)
    @given(cut=st.integers(min_value=0, max_value=len(text)))
    def run(cut: int) -> None:
        result = tr.salvage_text(text[:cut], ["get_weather", "search"])
        spans = sorted([r.span for r in result.rejected] + [c.span for c in result.calls if c.span is not None])
        assert all(a[1] <= b[0] or a == b for a, b in itertools.pairwise(spans)), (text[:cut], result)

    run()


def _opened(dialect: str, text: str) -> int | None:
    """Where the first of ``dialect``'s markers in ``text`` ends, or None (markers are lower case)."""
    (d,) = _resolve_dialects([dialect])
    folded = text.lower()
    ends = [folded.find(m) + len(m) for m in d.markers if folded.find(m) != -1]
    return min(ends) if ends else None


# Markerless JSON has no call marker: a `{` opens any object, and one cut short stays text.
@pytest.mark.parametrize("dialect", sorted(set(RENDER) - {"json"}))
def test_a_reply_cut_off_in_a_call_gives_an_outcome(dialect: str) -> None:
    """No silent miss: a reply that ends anywhere after a call's opening marker (the model
    stopped, or hit its token limit, inside the call) gives a call or a rejection, whole and
    streamed alike."""
    text = RENDER[dialect](CALLS[0])
    opened = _opened(dialect, text)
    assert opened is not None, text

    @settings(max_examples=MAX_EXAMPLES, deadline=None)
    @given(cut=st.integers(min_value=opened, max_value=len(text)))
    def run(cut: int) -> None:
        piece = text[:cut]
        result = tr.salvage_text(piece, ["get_weather", "search"], dialects=[dialect], mask_reasoning=False)
        assert result.calls or result.rejected, piece
        # Streamed in 3-character deltas (events as they are certain): the same outcome.
        streamed = tr.StreamSalvager(["get_weather", "search"], dialects=[dialect], mask_reasoning=False)
        for k in range(0, len(piece), 3):
            streamed.feed(piece[k : k + 3])
        streamed.close()
        assert streamed._pass.result() == result, piece

    run()
