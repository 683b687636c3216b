"""Reasoning apart from content: every convention real replies use, model profiles, and calls
written inside reasoning that never closes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._base import ContentBuilder, ReasoningBuilder, build_content, build_fields

CALL = '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>'
KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}"
    "<|tool_call_end|><|tool_calls_section_end|>"
)
XML_CALL = "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>"


def names(result: tr.SalvageResult) -> list[str]:
    return [c.name for c in result.calls]


K3_CALL = (
    '<|open|>tools<|sep|><|open|>call tool="a" index="1"<|sep|><|open|>argument key="x" type="string"<|sep|>1'
    "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"
)

OPENED_HARMONY = tr.ModelProfile("opened", dialects=["harmony"], reasoning=[("<think>", "</think>")], opened=True)

# (reply, options, content, reasoning, calls)
CONVENTIONS: list[tuple[str, dict[str, Any], str, str, list[str]]] = [
    ("<think>plan</think>\n\nHello", {}, "Hello", "plan", []),
    ("<think>\nplan\n</think>\n\n" + CALL, {}, "", "plan", ["a"]),
    ('<think type="plan">p</think>ok', {}, "ok", "p", []),
    ("<think >p</think >ok", {}, "ok", "p", []),
    ("<think\n>p</think\n>ok", {}, "ok", "p", []),
    ("<THINK>p</THINK>ok", {}, "ok", "p", []),
    ("<thinking>p</thinking>ok", {}, "ok", "p", []),
    ("<think no close", {}, "<think no close", "", []),  # no `>`: a tag it is not
    ("[THINK]p[/THINK]ok", {}, "ok", "p", []),
    ("<seed:think>p</seed:think>ok", {}, "ok", "p", []),
    ("<|channel>thought\np\n<channel|>ok", {}, "ok", "p", []),
    (
        "<|channel|>analysis<|message|>p<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>",
        {},
        "ok",
        "p",
        [],
    ),
    (
        "<|channel|>analysis<|message|>p<|end|><|start|>assistant to=functions.a<|channel|>commentary"
        '<|constrain|>json<|message|>{"x": 1}<|call|>',
        {},
        "",
        "p",
        ["a"],
    ),
    ("<|channel|>commentary<|message|>Let me look.<|end|>", {}, "Let me look.", "", []),
    ("<|open|>think<|sep|>p<|close|>think<|sep|><|open|>response<|sep|>ok<|close|>response<|sep|>", {}, "ok", "p", []),
    ("p<|close|>think<|sep|><|open|>response<|sep|>ok", {"model": "kimi-k3"}, "ok", "p", []),
    # The template opened reasoning but the reply opens its answer first thing: it skipped the
    # reasoning (Kimi K3 answering in its response block; the calls after it are calls). Not
    # first thing, the opener is reasoning's text like any other.
    ("<|open|>response<|sep|>Hi<|close|>response<|sep|><|close|>message<|sep|>", {"model": "kimi-k3"}, "Hi", "", []),
    ("\n<|open|>response<|sep|>Hi<|close|>response<|sep|>" + K3_CALL, {"model": "kimi-k3"}, "Hi", "", ["a"]),
    (
        "p <|open|>response<|sep|>Hi<|close|>response<|sep|>",
        {"model": "kimi-k3"},
        "",
        "p <|open|>response<|sep|>Hi<|close|>response<|sep|>",
        [],
    ),
    ("<|open|>response<|sep|>Hi", {"model": "kimi-k3"}, "Hi", "", []),
    ("<|open|>response<|sep|>Hi", {}, "Hi", "", []),
    ("<|channel|>final<|message|>Hi<|return|>", {"model": OPENED_HARMONY}, "Hi", "", []),
    ("p <|channel|>final<|message|>Hi", {"model": OPENED_HARMONY}, "", "p <|channel|>final<|message|>Hi", []),
    ("<think>a</think> mid <think>b</think> end", {}, "mid  end", "a\n\nb", []),
    # The reply began inside reasoning (the template opened it): to the first close.
    ("plan</think>\n\nok", {}, "ok", "plan", []),
    ("plan " + CALL + "</think>ok", {}, "ok", "plan " + CALL, []),
    ("plan</think>ok", {"model": "qwen3-thinking"}, "ok", "plan", []),
    ("still thinking", {"model": "qwen3-thinking"}, "", "still thinking", []),
    ("<think>plan</think>ok", {"model": "qwen3-thinking"}, "ok", "plan", []),  # opened again at once
    # With a profile whose template does not open reasoning, a lone close is markup.
    ("Hi " + CALL + " </think> done", {"model": "qwen3"}, "Hi  done", "", ["a"]),
    # Reasoning in code is no reasoning.
    ("```\n<think>p</think>\n```", {}, "```\n<think>p</think>\n```", "", []),
    ("no reasoning at all", {}, "no reasoning at all", "", []),
    ("<think>p</think>ok", {"mask_reasoning": False}, "<think>p</think>ok", "", []),
]


@pytest.mark.parametrize(("text", "kw", "content", "reasoning", "calls"), CONVENTIONS)
def test_reasoning_conventions(text: str, kw: dict[str, Any], content: str, reasoning: str, calls: list[str]) -> None:
    result = tr.salvage_text(text, ["a"], **kw)
    assert (result.content, result.reasoning, names(result)) == (content, reasoning, calls)


@pytest.mark.parametrize(("text", "kw", "content", "reasoning", "calls"), CONVENTIONS)
def test_reasoning_conventions_streamed(
    text: str, kw: dict[str, Any], content: str, reasoning: str, calls: list[str]
) -> None:
    for step in (1, 3, len(text) or 1):
        s = tr.StreamSalvager(["a"], **kw)
        events = [e for i in range(0, len(text), step) for e in s.feed(text[i : i + step])] + s.close()
        got = (
            "".join(e.text for e in events if isinstance(e, tr.TextDelta)),
            "".join(e.text for e in events if isinstance(e, tr.ReasoningDelta)),
            [e.call.name for e in events if isinstance(e, tr.ToolCallReady)],
        )
        assert got == (content, reasoning, calls), step


# (reply, options, calls, rejections, content, reasoning)
IN_REASONING: list[tuple[str, dict[str, Any], list[str], list[str], str, str]] = [
    ("<think>I will call " + CALL, {}, [], ["in-reasoning"], "", "I will call " + CALL),
    ("<think>I will call " + CALL, {"reasoning_calls": "take"}, ["a"], [], "", "I will call"),
    ("<think>I will call " + CALL + " then stop", {"reasoning_calls": "take"}, ["a"], [], "then stop", "I will call"),
    # Closed reasoning: a quoted call, never taken nor reported.
    ("<think>" + CALL + "</think>ok", {"reasoning_calls": "take"}, [], [], "ok", CALL),
    ("<think>" + CALL + "</think>ok", {}, [], [], "ok", CALL),
    # A not-offered call and a truncated one inside unterminated reasoning are reported too.
    (
        '<think><tool_call>{"name": "b", "arguments": {}}</tool_call>',
        {},
        [],
        ["in-reasoning"],
        "",
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>',
    ),
    (
        '<think><tool_call>{"name": "b", "arguments": {}}</tool_call>',
        {"reasoning_calls": "take"},
        [],
        ["in-reasoning"],
        "",
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>',
    ),
    (
        '<think>x <tool_call>{"name": "a", "arguments": {"x": ',
        {},
        [],
        ["truncated"],
        "",
        'x <tool_call>{"name": "a", "arguments": {"x": ',  # cut off: its trailing space stays
    ),
    # Whitespace goes beside a marker only: reasoning the reply ends inside keeps its own.
    ("<think>I only need ", {}, [], [], "", "I only need "),
    ("I only need \n", {"model": "qwen3-thinking"}, [], [], "", "I only need \n"),
    ("<think>I only need </think>", {}, [], [], "", "I only need"),
    ("<think>plan \n" + CALL, {"reasoning_calls": "take"}, ["a"], [], "", "plan"),
    # The template opened reasoning (Qwen3.5): the call before any close.
    ("Need to look.\n" + XML_CALL, {"model": "qwen3.5"}, [], ["in-reasoning"], "", "Need to look.\n" + XML_CALL),
    ("Need to look.\n" + XML_CALL, {"model": "qwen3.5", "reasoning_calls": "take"}, ["a"], [], "", "Need to look."),
    ("Two " + CALL + " " + CALL, {"model": "qwen3-thinking", "reasoning_calls": "take"}, ["a", "a"], [], "", "Two"),
    # A region a reader calls markup (a Kimi section opener holding no call) ends before a
    # reasoning or channel marker in it: the marker opens reasoning as anywhere else.
    ("<|tool_call_section_begin|><think>" + KIMI, {}, [], ["not-a-call", "in-reasoning"], "", KIMI),
    ("<|tool_calls_section_begin|> <THINK>" + CALL, {}, [], ["not-a-call", "in-reasoning"], "", CALL),
    (
        "<|tool_calls_section_begin|><|channel|>analysis<|message|>" + CALL,
        {},
        [],
        ["not-a-call", "in-reasoning"],
        "",
        CALL,
    ),
    ("Hi <|tool_calls_section_begin|> <think>plan</think>" + CALL, {}, ["a"], ["not-a-call"], "Hi ", "plan"),
]


@pytest.mark.parametrize(("text", "kw", "calls", "reasons", "content", "reasoning"), IN_REASONING)
def test_calls_inside_unterminated_reasoning(
    text: str, kw: dict[str, Any], calls: list[str], reasons: list[str], content: str, reasoning: str
) -> None:
    result = tr.salvage_text(text, ["a"], **kw)
    assert names(result) == calls
    assert [r.reason for r in result.rejected] == reasons
    assert (result.content, result.reasoning) == (content, reasoning)
    for step in (1, 5):
        s = tr.StreamSalvager(["a"], **kw)
        events = [e for i in range(0, len(text), step) for e in s.feed(text[i : i + step])] + s.close()
        assert [e.call for e in events if isinstance(e, tr.ToolCallReady)] == list(result.calls)
        assert "".join(e.text for e in events if isinstance(e, tr.ReasoningDelta)) == reasoning


def test_reasoning_calls_is_checked() -> None:
    with pytest.raises(ValueError, match="reasoning_calls"):
        tr.salvage_text("x", ["a"], reasoning_calls="always")
    with pytest.raises(ValueError, match="reasoning_calls"):
        tr.StreamSalvager(["a"], reasoning_calls="maybe")


# -- model profiles ---------------------------------------------------------------------------

REQUIRED = [
    "qwen3",
    "qwen3-coder",
    "qwen2.5",
    "deepseek-r1",
    "deepseek-v3",
    "gpt-oss",
    "gemma4",
    "kimi-k2",
    "glm",
    "mistral",
    "llama3",
    "llama4",
    "hermes",
    "minimax",
]


@pytest.mark.parametrize("name", REQUIRED)
def test_built_in_profiles(name: str) -> None:
    profile = tr.model_profile(name)
    assert tr.MODEL_PROFILES[name] is profile and profile.name == name
    assert all(d in tr.DIALECTS for d in profile.dialects)
    assert tr.model_profile(name.upper().replace("-", "_")) is profile  # spelled as names are folded


def test_profiles_are_frozen_slotted_values_a_user_can_build() -> None:
    mine = tr.ModelProfile("mine", dialects=["hermes"], reasoning=[("<reflect>", "</reflect>")])
    assert mine.dialects == ("hermes",) and mine.reasoning == (("<reflect>", "</reflect>"),) and not mine.opened
    assert not hasattr(mine, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        mine.name = "x"  # type: ignore[misc]
    result = tr.salvage_text("<reflect>r</reflect>ok " + CALL, ["a"], model=mine)
    assert (result.content, result.reasoning, names(result)) == ("ok ", "r", ["a"])
    # Its dialects only: a Mistral call is text to a Hermes profile.
    text = '[TOOL_CALLS]a[ARGS]{"x": 1}'
    assert tr.salvage_text(text, ["a"], model=mine).content == text
    assert names(tr.salvage_text(text, ["a"], model="mistral")) == ["a"]
    # dialects= given beside a profile wins over the profile's.
    assert names(tr.salvage_text(text, ["a"], model=mine, dialects=["mistral"])) == ["a"]
    assert dataclasses.replace(mine, opened=True).opened


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"dialects": ["hermes"], "reasoning": [("<t>",)]}, "reasoning pair"),
        ({"dialects": ["hermes"], "reasoning": [("", "</t>")]}, "reasoning pair"),
        ({"dialects": ["nope"]}, "unknown dialect"),
        ({"dialects": []}, "dialects must be"),
        ({"dialects": "hermes"}, "dialects must be"),
        ({"dialects": ["hermes"], "opened": True}, "opened=True needs"),
    ],
)
def test_bad_profiles_are_clear_errors(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        tr.ModelProfile("x", **kw)
    with pytest.raises(ValueError, match="needs a name"):
        tr.ModelProfile("", dialects=["hermes"])


def test_unknown_profile_names_suggest() -> None:
    with pytest.raises(ValueError, match="Did you mean 'qwen3'") as info:
        tr.model_profile("qwen4")
    assert "Profiles:" in str(info.value)
    with pytest.raises(ValueError, match="Unknown model profile 'zzzz'\\. Profiles"):
        tr.salvage_text("x", ["a"], model="zzzz")
    with pytest.raises(TypeError, match="profile name is a str"):
        tr.model_profile(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be"):
        tr.salvage_text("x", ["a"], model=3)  # type: ignore[arg-type]


def test_registry_takes_a_model_profile() -> None:
    def a(x: int) -> int:
        return x

    registry = tr.ToolRegistry([a], model="qwen3")
    assert registry.model is tr.model_profile("qwen3")
    result = registry.salvage("<think>p</think>ok " + CALL)
    assert (result.content, result.reasoning, names(result)) == ("ok ", "p", ["a"])
    s = registry.stream()
    events = s.feed("<think>p</think>ok " + CALL) + s.close()
    assert [e.call.name for e in events if isinstance(e, tr.ToolCallReady)] == ["a"]
    assert tr.ToolRegistry([a], profile="hosted", model="qwen3").salvage(CALL).calls == ()


# -- the builders -------------------------------------------------------------------------------


def reference_content(text: str, cuts: list[tuple[int, int]]) -> str:
    """The content rule written out piece by piece, without the builders: the reference they
    keep. A line break is what ``str.splitlines`` breaks on."""
    if not cuts:
        return text
    out: list[str] = []
    prev, empty = 0, True
    for s, e in cuts:
        piece = text[prev:s]
        if prev > 0 and empty:
            piece = piece.lstrip()
        body = piece.rstrip()
        trail = piece[len(body) :]
        within_a_line = "".join(trail.splitlines()) == trail
        out.append(body + trail if body and within_a_line else body)
        empty = empty and not body
        prev = e
    tail = text[prev:]
    if empty:
        tail = tail.lstrip()
    if not tail.strip():
        tail = ""
    out.append(tail)
    return "".join(out)


SPANS = st.lists(st.integers(0, 40), max_size=8).map(sorted)
TEXT = st.text(alphabet=" \nab\t\r\x0b\x1c\x1f\x85\u2028", max_size=40)


@given(TEXT, SPANS)
def test_content_builder_keeps_the_content_rule(text: str, points: list[int]) -> None:
    points = [min(p, len(text)) for p in points]
    cuts = list(zip(points[::2], points[1::2], strict=False))
    assert build_content(text, cuts) == reference_content(text, cuts)


@given(TEXT, SPANS, st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_builders_give_the_same_fed_in_any_pieces(text: str, points: list[int], sizes: list[int]) -> None:
    points = [min(p, len(text)) for p in points]
    cuts = [(s, e, s + (e - s) // 3, e - (e - s) // 3) for s, e in zip(points[::2], points[1::2], strict=False)]
    content, reasoning = build_fields(text, cuts)
    c, r = ContentBuilder(), ReasoningBuilder()
    out: list[str] = []
    thought: list[str] = []
    prev, k = 0, 0

    def pieces(a: int, b: int) -> list[str]:
        nonlocal k
        got = []
        while a < b:
            size = sizes[k % len(sizes)]
            k += 1
            got.append(text[a : min(b, a + size)])
            a += size
        return got

    for s, e, inner_s, inner_e in cuts:
        out += [c.text(p) for p in pieces(prev, s)]
        out.append(c.cut())
        thought += [r.text(p) for p in pieces(inner_s, inner_e)]
        if inner_e > inner_s and inner_e == e == len(text):  # reasoning to the reply's end
            thought.append(r.cut_off())
        else:
            r.close()
        prev = e
    out += [c.text(p) for p in pieces(prev, len(text))]
    out.append(c.finish())
    assert ("".join(out), "".join(thought)) == (content, reasoning)


def test_builder_examples() -> None:
    assert build_fields("Hi <t>x</t> there", [(3, 11, 6, 7)]) == ("Hi  there", "x")
    assert build_fields("Hi\n<t>x</t> there", [(3, 11, 6, 7)]) == ("Hi there", "x")
    assert build_fields("  ", []) == ("  ", "")
    assert json.dumps(build_fields("a\n\n", [(0, 1, 0, 1)])) == json.dumps(("", "a"))


# -- integrations with a place for reasoning ------------------------------------------------------


def test_openai_message_gets_reasoning_content() -> None:
    from toolrepair.integrations.openai import repair_chat_message

    def a(x: int) -> int:
        return x

    out = repair_chat_message(
        {"role": "assistant", "content": "<think>Need a.</think>Sure. " + CALL}, tr.ToolRegistry([a])
    )
    assert (out["content"], out["reasoning_content"]) == ("Sure. ", "Need a.")
    assert [c["function"]["name"] for c in out["tool_calls"]] == ["a"]


def test_langchain_message_gets_reasoning_content() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    from toolrepair.integrations.langchain import repair_ai_message

    def a(x: int) -> int:
        return x

    message = messages.AIMessage(content="<think>Need a.</think>Sure. " + CALL, additional_kwargs={"k": 1})
    out = repair_ai_message(message, tr.ToolRegistry([a]))
    assert out.content == "Sure. "
    assert out.additional_kwargs == {"k": 1, "reasoning_content": "Need a."}
    assert [c["name"] for c in out.tool_calls] == ["a"]
