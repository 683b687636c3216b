"""StreamSalvager equals salvage_text for every reply and every way of cutting it."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage import ReasoningDelta, StreamSalvager, TextDelta, ToolCallReady

CORPUS = pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "corpus.jsonl"
CASES: list[dict[str, Any]] = (
    [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    if CORPUS.exists()
    else []
)
# Calls of every built-in dialect as their models write them: the corpus's real outputs.
MODEL_CALLS = [c["text"] for c in CASES if c["calls"]] or ['<tool_call>{"name": "f", "arguments": {}}</tool_call>']

NAMES = st.sampled_from(["f", "web_search", "get_weather"])
SCALARS = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=12)
ARGS = st.dictionaries(st.text(max_size=6), SCALARS | st.lists(SCALARS, max_size=3), max_size=3)
WS = st.sampled_from(["", " ", "  ", "\n", " \n\t", "\n\n"])


@st.composite
def seed_call(draw: st.DrawFn) -> str:
    name, args = draw(NAMES), draw(ARGS)
    style = draw(st.integers(0, 4))
    payload = json.dumps({"name": name, "arguments": args})
    if style == 0:
        return f"<tool_call>{draw(WS)}{payload}{draw(WS)}</tool_call>"
    if style == 1:
        return f"<function={name}>{json.dumps(args)}</function>"
    if style == 2:
        return f"<tool_call>{payload}"  # the closing tag eaten by the end of sequence
    if style == 3:
        return f"[{payload}]"
    return payload + draw(st.sampled_from(["", ";", "; "]))


PARTIAL = st.sampled_from(
    [
        "<tool_",
        "<function",
        "```",
        "``",
        "~~",
        "<think",
        "</thi",
        "[TOOL_",
        "<|",
        "{",
        "[",
        '{"name": "f", "argu',
        "Action",
        "<tool_call>{",
    ]
)
MASKS = st.sampled_from(
    [
        "```\n",
        "```json\n",
        "\n```\n",
        "~~~\n",
        "````\n",
        "\n````",
        "\n~~~~~\n",
        "<think>",
        "</think>",
        "[THINK]",
        "[/THINK]",
        "[BEGIN FINAL RESPONSE]",
        "<|START_THINKING|>",
        "<|END_THINKING|>",
        "` inline `",
        # containers, CR endings, closing-fence whitespace, HTML blocks, code spans
        "\n> ```\n> ",
        "\n- ```\n  ",
        "\n1. ~~~\r   ",
        "```\r",
        "\r```\r\n",
        "\n```\u00a0\n",
        "\n``` \t\n",
        "\n<details>\n",
        "\n<!--\n",
        "-->\n",
        "\n\n",
        "`",
        "``",
        "\\`",
        "\n    ",
        "<thinking>",
        "</reasoning>",
        "\u25c1think\u25b7",
        "<|end_of_thought|>",
        # spelled tags, channels and chat-channel markup
        '<think type="plan">',
        "<think\n>",
        "</think >",
        "<think ",
        "<seed:think>",
        "</seed:think>",
        "<|channel|>analysis<|message|>",
        "<|end|>",
        "<|start|>assistant<|channel|>final<|message|>",
        "<|return|>",
        "<|channel>thought\n",
        "<channel|>",
        "<|open|>think<|sep|>",
        "<|close|>think<|sep|>",
        "<|open|>response<|sep|>",
        "<|close|>response<|sep|>",
    ]
)
PROSE = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["Sure.", "Let me check.", "Done!", "a {brace} here", "x < y > z", "Action: none", "é ü 中文"]
)
PIECE = seed_call() | st.sampled_from(MODEL_CALLS) | PARTIAL | MASKS | PROSE | WS
REPLY = st.lists(PIECE, max_size=10).map("".join)
ALLOWED = st.sampled_from([["f", "web_search"], tr.ANY_TOOL, ["get_weather"]])
OPTIONS = st.sampled_from(
    [
        {},
        {"dialects": ["hermes", "function_tag", "json"]},
        {"mask_reasoning": False},
        {"mask_fences": False},
        {"max_call_chars": 60},
        {"model": "qwen3"},
        {"model": "qwen3-thinking"},
        {"model": "gpt-oss"},
        {"model": "kimi-k3"},
        {"model": "qwen3", "reasoning_calls": "take"},
        {"reasoning_calls": "take"},
        {"model": "qwen3.5", "reasoning_calls": "take"},
        {"model": "qwen3-coder"},
    ]
)


def streamed(text: str, allowed: Any, cuts: list[int], **kw: Any) -> tuple[str, str, tuple[tr.ToolCall, ...]]:
    return fed(StreamSalvager(allowed, **kw), text, cuts)


def fed(salvager: StreamSalvager, text: str, cuts: list[int]) -> tuple[str, str, tuple[tr.ToolCall, ...]]:
    """The content, reasoning and calls of ``text`` fed to ``salvager`` cut at ``cuts``."""
    events: list[Any] = []
    prev = 0
    for cut in [*sorted(c for c in cuts if c <= len(text)), len(text)]:
        events += salvager.feed(text[prev:cut])
        prev = cut
    events += salvager.close()
    return (
        "".join(e.text for e in events if isinstance(e, TextDelta)),
        "".join(e.text for e in events if isinstance(e, ReasoningDelta)),
        tuple(e.call for e in events if isinstance(e, ToolCallReady)),
    )


def expected(text: str, allowed: Any, **kw: Any) -> tuple[str, str, tuple[tr.ToolCall, ...]]:
    result = tr.salvage_text(text, allowed, **kw)
    return result.content, result.reasoning, result.calls


@settings(deadline=None)
@given(REPLY, ALLOWED, OPTIONS, st.lists(st.integers(0, 400), max_size=12))
def test_any_cuts_give_salvage_text(text: str, allowed: Any, kw: dict[str, Any], cuts: list[int]) -> None:
    assert streamed(text, allowed, cuts, **kw) == expected(text, allowed, **kw)


@settings(deadline=None)
@given(REPLY, ALLOWED, OPTIONS)
def test_one_character_at_a_time_gives_salvage_text(text: str, allowed: Any, kw: dict[str, Any]) -> None:
    assert streamed(text, allowed, list(range(len(text))), **kw) == expected(text, allowed, **kw)


# XML-family markup, whole and broken: with its model's profile a call is final at its
# wrapper's closer, and the stream must still equal the whole reply however it is cut.
XML_PIECES = st.sampled_from(
    [
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
        '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1</parameter>\n</invoke>\n</minimax:tool_call>',
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="true">1'
        "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        "<tool_call>",
        "</tool_call>",
        "<function=f>",
        "</function>",
        "<parameter=a>",
        "</parameter>",
        '<invoke name="f">',
        "</invoke>",
        "</minimax:tool_call>",
        "<arg_value>",
        "</arg_value>",
        "\n",
        " x ",
        "Done.",
    ]
)
XML_MODELS = st.sampled_from(["qwen3-coder", "glm", "minimax", "deepseek-v3.2"])


@settings(deadline=None)
@given(st.lists(XML_PIECES, max_size=8).map("".join), XML_MODELS, st.lists(st.integers(0, 400), max_size=12))
def test_xml_replies_with_a_profile_stream_as_whole(text: str, model: str, cuts: list[int]) -> None:
    want = expected(text, ["f"], model=model)
    assert streamed(text, ["f"], cuts, model=model) == want
    assert streamed(text, ["f"], list(range(len(text))), model=model) == want


@settings(deadline=None)
@given(st.lists(PIECE, min_size=1, max_size=6), st.integers(1, 5))
def test_text_deltas_are_never_empty_and_calls_come_in_order(pieces: list[str], step: int) -> None:
    text = "".join(pieces)
    salvager = StreamSalvager(tr.ANY_TOOL)
    events: list[Any] = []
    for i in range(0, len(text), step):
        events += salvager.feed(text[i : i + step])
    events += salvager.close()
    assert all(e.text for e in events if not isinstance(e, ToolCallReady))
    starts = [e.call.span[0] for e in events if isinstance(e, ToolCallReady)]
    assert starts == sorted(starts)


@pytest.mark.skipif(not CASES, reason="conformance corpus not present")
@pytest.mark.parametrize("kw", [{}, {"mask_reasoning": False}])
def test_whole_corpus_one_character_at_a_time(kw: dict[str, Any]) -> None:
    for case in CASES:
        text = case["text"]
        allowed = [c["name"] for c in case["calls"]] or tr.ANY_TOOL
        want = expected(text, allowed, **kw)
        assert streamed(text, allowed, [], **kw) == want, text
        assert streamed(text, allowed, list(range(len(text))), **kw) == want, text


@settings(deadline=None)
@given(
    REPLY,
    st.sampled_from([None, "qwen3", "hermes", "gpt-oss", "qwen3-coder"]),
    st.lists(st.tuples(st.integers(0, 400), st.sampled_from(["", " ", "x", "<tool_call>"])), max_size=4),
    st.booleans(),
    st.lists(st.integers(0, 400), max_size=12),
)
def test_the_registry_stream_gives_what_registry_salvage_gives(
    text: str, model: str | None, marks: list[tuple[int, str]], whole: bool, cuts: list[int]
) -> None:
    # Texts marked untrusted that begin as the reply does (a prefix of it and more), and maybe
    # the reply itself: however it is cut, the registry's stream (which releases calls before
    # close() when no marked text can still be the reply) gives what `salvage` gives.
    def f(**kw: Any) -> str:
        return "ok"

    registry = tr.ToolRegistry([f], model=model)
    for at, more in marks:
        registry.mark_untrusted(text[:at] + more)
    if whole:
        registry.mark_untrusted(text)
    result = registry.salvage(text)
    want = (result.content, result.reasoning, result.calls)
    assert fed(registry.stream(), text, cuts) == want
    assert fed(registry.stream(), text, list(range(len(text)))) == want
