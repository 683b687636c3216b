"""Salvage of what users' models actually write (issue 19), class by class, with the near misses.

Each row: the reply, the names offered, the calls expected, the rejection reasons expected, and
the repairs the salvaged calls carry (their ``kind`` and the start of their message). A repair
is accepted only when the name is offered and the payload decodes whole; otherwise the reply
gives a ``Rejection`` with the true reason, or stays text.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

import toolrepair as tr

W = ["get_weather", "web_search"]
Row = tuple[str, Any, list[tuple[str, dict[str, Any]]], list[str], list[tuple[str, str]]]

LENIENT: list[Row] = [
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Madrid",}}</tool_call>',
        W,
        [("get_weather", {"city": "Madrid"})],
        [],
        [("decode", "Removed trailing comma")],
    ),
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Madrid", "now": True, "unit": None}}</tool_call>',
        W,
        [("get_weather", {"city": "Madrid", "now": True, "unit": None})],
        [],
        [("decode", "Replaced Python literal True"), ("decode", "Replaced Python literal None")],
    ),
    (
        "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Madrid'}}</tool_call>",
        W,
        [("get_weather", {"city": "Madrid"})],
        [],
        [("decode", "Replaced single quotes")],
    ),
    # The closing marker lost at the end of the reply: the payload is whole, so it is a call.
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Madrid",}}',
        W,
        [("get_weather", {"city": "Madrid"})],
        [],
        [("decode", "Removed trailing comma")],
    ),
    (
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Madrid",}',
        W,
        [("get_weather", {"city": "Madrid"})],
        [],
        [("decode", "Removed trailing comma")],
    ),
    (
        '<function=get_weather>{"city": "Madrid",}</function>',
        W,
        [("get_weather", {"city": "Madrid"})],
        [],
        [("decode", "Removed trailing comma")],
    ),
    # Near misses: truncation is never completed, an ambiguity never guessed.
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Madrid",', W, [], ["truncated"], []),
    ('<tool_call>{"name": "get_weather", "arguments": {"days": [1 2]}}</tool_call>', W, [], ["undecodable"], []),
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Madrid",}}</tool_call>',
        ["web_search"],
        [],
        ["not-offered"],
        [],
    ),
    # A broken payload does not swallow the call after it.
    (
        '<tool_call>{/* <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
        W,
        [("get_weather", {"city": "Oslo"})],
        ["truncated"],
        [],
    ),
]

DOUBLE: list[Row] = [
    (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '"{\\"city\\": \\"Tokyo\\"}"<|tool_call_end|><|tool_calls_section_end|>',
        W,
        [("get_weather", {"city": "Tokyo"})],
        [],
        [("decode", "Decoded double-encoded JSON string")],
    ),
    (
        '[TOOL_CALLS]get_weather[ARGS]"{\\"city\\": \\"Tokyo\\"}"',
        W,
        [("get_weather", {"city": "Tokyo"})],
        [],
        [("decode", "Decoded double-encoded JSON string")],
    ),
    (
        '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Tokyo\\",}"}</tool_call>',
        W,
        [("get_weather", {"city": "Tokyo"})],
        [],
        [("decode", "Decoded double-encoded JSON string"), ("decode", "Removed trailing comma")],
    ),
    (
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '"{\\"city\\": \\"Tokyo\\"}"<|call|>',
        W,
        [("get_weather", {"city": "Tokyo"})],
        [],
        [("decode", "Decoded double-encoded JSON string")],
    ),
    # A JSON string that holds no object is not arguments.
    ('[TOOL_CALLS]get_weather[ARGS]"Tokyo"', W, [], ["undecodable-arguments"], []),
    (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '"Tokyo"<|tool_call_end|><|tool_calls_section_end|>',
        W,
        [],
        ["undecodable-arguments"],
        [],
    ),
    (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        "Tokyo<|tool_call_end|><|tool_calls_section_end|>",
        W,
        [],
        ["undecodable-arguments"],
        [],
    ),
    ('<tool_call>{"name": "get_weather", "arguments": null}</tool_call>', W, [("get_weather", {})], [], []),
    (
        '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": "}</tool_call>',
        W,
        [],
        ["undecodable-arguments"],
        [],
    ),
]

NAMES: list[Row] = [
    (
        "<|start|>assistant<|channel|>commentary to=functions.Web Search <|constrain|>json<|message|>"
        '{"query": "cats"}<|call|>',
        W,
        [("web_search", {"query": "cats"})],
        [],
        [("name", "Self-repaired tool name 'Web Search' -> 'web_search'")],
    ),
    (
        '<|channel|>commentary to=functions.get_weather json<|message|>{"city": "Oslo"}<|call|>',
        W,
        [("get_weather", {"city": "Oslo"})],
        [],
        [],
    ),
    (
        '<tool_call>{"name": "functions.web_search", "arguments": {"query": "cats"}}</tool_call>',
        W,
        [("web_search", {"query": "cats"})],
        [],
        [("name", "Self-repaired tool name 'functions.web_search'")],
    ),
    (
        "<|start|>assistant<|channel|>commentary to=functions.Web Crawl <|constrain|>json<|message|>{}<|call|>",
        W,
        [],
        ["not-offered"],
        [],
    ),
]

QUIRKS: list[Row] = [
    ('<function=web_search={"query": "groq"}</function>', W, [("web_search", {"query": "groq"})], [], []),
    (
        '<function=web_search={"query": "groq",}</function>',
        W,
        [("web_search", {"query": "groq"})],
        [],
        [("decode", "Removed trailing comma")],
    ),
    ('<function=web_search={"query": "gr', W, [], ["truncated"], []),
    ('<function=drop_db={"x": 1}</function>', W, [], ["not-offered"], []),
]

ALIASES: list[Row] = [
    (
        '{\n"function": "send_message",\n"params": {\n    "message": "Hello!"\n}\n}',
        ["send_message"],
        [("send_message", {"message": "Hello!"})],
        [],
        [],
    ),
    ('{"tool_name": "get_weather", "tool_input": {"city": "Oslo"}}', W, [("get_weather", {"city": "Oslo"})], [], []),
    (
        'Action:\n{\n  "tool_name": "get_weather",\n  "tool_arguments": {"city": "Oslo"}\n}',
        W,
        [("get_weather", {"city": "Oslo"})],
        [],
        [],
    ),
    ('{"action": "web_search", "action_input": {"query": "cats"}}', W, [("web_search", {"query": "cats"})], [], []),
    # Prose-shaped JSON stays prose; a ReAct final answer is no tool.
    ('{"name": "Alice", "age": 30}', W, [], [], []),
    ('{"action": "Final Answer", "action_input": {"answer": "42"}}', W, [], ["not-offered"], []),
    ('{"function": "send_message"}', ["send_message"], [], [], []),  # no arguments: not a call shape
]

DAMAGED: list[Row] = [
    (
        'web_search{"query": "SPFMV", "filter_year": 2016}</function>',
        W,
        [("web_search", {"query": "SPFMV", "filter_year": 2016})],
        [],
        [],
    ),
    ('Searching.\nweb_search{"query": "x"}</function>', W, [("web_search", {"query": "x"})], [], []),
    # Without the intact closing marker, or not at a line start, a name before a brace is prose.
    ('web_search{"query": "x"} is the syntax', W, [], [], []),
    ('call web_search{"query": "x"}</function>', W, [], [], []),
    ('commentary to=functions.get_weather json{"city": "Tokyo"}', W, [("get_weather", {"city": "Tokyo"})], [], []),
    ('assistantcommentary to=functions.get_weather {"city": "Tokyo"}', W, [("get_weather", {"city": "Tokyo"})], [], []),
    ('commentary to=functions.get_weather json{"city": "Tok', W, [], ["truncated"], []),
    ("commentary to=functions.rm_rf json{}", W, [], ["not-offered"], []),
    (
        '<|channel>thought\nCheck it.<channel|>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
        W,
        [("get_weather", {"city": "Paris"})],
        [],
        [],
    ),
    (
        '<|channel>thought\ncall:get_weather{city:<|"|>Rome<|"|>}<channel|>call:get_weather{city:<|"|>Paris<|"|>}',
        W,
        [("get_weather", {"city": "Paris"})],
        [],
        [],
    ),
    ('Make a call:get_weather{city:<|"|>Paris<|"|>}', W, [], [], []),
    (
        '<tool_call name="get_weather" id="call_1">{"city": "Paris"}</tool_call>',
        W,
        [("get_weather", {"city": "Paris"})],
        [],
        [],
    ),
    (
        "<tool_call name='get_weather'>{'city': 'Paris'}</tool_call>",
        W,
        [("get_weather", {"city": "Paris"})],
        [],
        [("decode", "Replaced single quotes")],
    ),
    ('<tool_call id="c1">{"city": "Paris"}</tool_call>', W, [], [], []),  # no name: not this shape
    ('<tool_call name="rm">{}</tool_call>', W, [], ["not-offered"], []),
    ('<tool_call name="get_weather">Paris</tool_call>', W, [], [], []),  # a body that is no object
    ('<tool_call name="get_weather">', W, [], ["truncated"], []),  # the reply ends in the call
    ('<tool_call name="get_weather"', W, [], ["truncated"], []),
    (
        '<tool_call name="get_weather" ' + " ".join(f'a{i}="{i}"' for i in range(8)) + '>{"city": "Oslo"}</tool_call>',
        W,
        [],
        [],
        [],
    ),  # more attributes than a call tag has
    ('<tool_call name="get_weather">{"city": "Oslo"', W, [], ["truncated"], []),
    # A `<` ends an attribute tag that is not a call at once; the call tag after it is read.
    (
        '<tool_call name="f" <tool_call name="get_weather">{"city": "Oslo"}</tool_call>',
        W,
        [("get_weather", {"city": "Oslo"})],
        [],
        [],
    ),
    # Mistral's lenient reading stops before the next `[TOOL_CALLS]` as written (upper case).
    (
        "[TOOL_CALLS]get_weather{'city': 'Oslo', [TOOL_CALLS]get_weather{\"city\": \"Rome\"}",
        W,
        [("get_weather", {"city": "Rome"})],
        ["truncated"],
        [],
    ),
    ("[TOOL_CALLS]get_weather{'city': '[TOOL_CALLS]'}", W, [], ["truncated", "not-a-call"], []),
    ('[TOOL_CALLS]get_weather{"city": "[TOOL_CALLS]"}', W, [("get_weather", {"city": "[TOOL_CALLS]"})], [], []),
]

TABLE = [*LENIENT, *DOUBLE, *NAMES, *QUIRKS, *ALIASES, *DAMAGED]


@pytest.mark.parametrize(("text", "allowed", "calls", "reasons", "repairs"), TABLE, ids=[r[0][:50] for r in TABLE])
def test_salvage_table(
    text: str, allowed: Any, calls: list[tuple[str, dict[str, Any]]], reasons: list[str], repairs: list[tuple[str, str]]
) -> None:
    result = tr.salvage_text(text, allowed)
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert [r.reason for r in result.rejected] == reasons
    got = [(e.kind, e.message) for c in result.calls for e in c.repairs]
    assert len(got) == len(repairs)
    for (kind, message), (want_kind, want_start) in zip(got, repairs, strict=True):
        assert kind == want_kind and message.startswith(want_start)
    for call in result.calls:
        assert all(e.tool == call.name for e in call.repairs)


@pytest.mark.parametrize(("text", "allowed", "calls", "reasons", "repairs"), TABLE, ids=[r[0][:50] for r in TABLE])
def test_salvage_table_streamed(
    text: str, allowed: Any, calls: list[tuple[str, dict[str, Any]]], reasons: list[str], repairs: list[tuple[str, str]]
) -> None:
    stream = tr.StreamSalvager(allowed)
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    got = [e.call for e in events if isinstance(e, tr.ToolCallReady)]
    assert [(c.name, c.arguments) for c in got] == calls
    assert [c.repairs for c in got] == [c.repairs for c in tr.salvage_text(text, allowed).calls]


# -- every repair visible and budgeted ------------------------------------------------------


def web_search(query: str) -> str:
    return f"results for {query}"


DRIFT = '<tool_call>{"name": "WebSearch", "arguments": {"query": "cats"}}</tool_call>'
LENIENT_CALL = '<tool_call>{"name": "web_search", "arguments": {"query": "cats",}}</tool_call>'


def test_an_argument_string_past_the_call_limit_is_refused() -> None:
    big = "x" * (tr.Limits().max_call_chars + 1)
    text = '<tool_call>{"name": "get_weather", "arguments": "' + big + '"}</tool_call>'
    result = tr.salvage_text(text, W, max_call_chars=len(text) + 10)
    assert result.calls == () and [r.reason for r in result.rejected] == ["undecodable-arguments"]


def test_a_salvaged_drift_past_the_budget_gets_the_corrective_message() -> None:
    ran: list[str] = []

    def tracked(query: str) -> str:
        ran.append(query)
        return query

    registry = tr.ToolRegistry(
        [
            tr.ToolSpec(
                "web_search",
                {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                fn=tracked,
            )
        ],
        max_repairs=0,
    )
    with registry.turn():
        (call,) = registry.calls(DRIFT)
        outcome = registry.run(call)
    assert not outcome.ok and not ran
    assert outcome.content == "Tool 'WebSearch' not found. Did you mean 'web_search'? Available tools: ['web_search']"
    assert registry.events == []


def test_a_salvaged_payload_repair_past_the_budget_gets_the_corrective_message() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=0)
    with registry.turn():
        outcome = registry.run(registry.calls(LENIENT_CALL)[0])
    assert not outcome.ok
    assert outcome.content.startswith("Arguments for 'web_search' need correcting: Removed trailing comma")


def test_salvaged_repairs_are_logged_recorded_and_passed_on(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tr.RepairEvent] = []
    registry = tr.ToolRegistry([web_search], on_repair=seen.append)
    with caplog.at_level(logging.DEBUG, logger="toolrepair"), registry.turn():
        outcome = registry.run(registry.calls(DRIFT)[0])
    assert outcome.ok and outcome.content == "results for cats"
    event = tr.RepairEvent(
        "name", "Self-repaired tool name 'WebSearch' -> 'web_search'", "web_search", "WebSearch", "web_search"
    )
    assert outcome.events == (event,) and registry.events == [event] and seen == [event]
    assert "Self-repaired tool name 'WebSearch' -> 'web_search'" in [r.getMessage() for r in caplog.records]


def test_salvaged_and_native_repairs_share_one_budget() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=1)
    with registry.turn():
        assert registry.run({"name": "WebSearch", "arguments": {"query": "a"}}).ok  # spends the budget
        late = registry.run(registry.calls(DRIFT)[0])
    assert not late.ok and late.content.startswith("Tool 'WebSearch' not found.")
    with registry.turn():
        assert registry.run(registry.calls(DRIFT)[0]).ok  # a new turn, a new budget
        assert not registry.run({"name": "WebSearch", "arguments": {"query": "a"}}).ok


def test_a_salvaged_call_run_under_hosted_gets_the_corrective_message() -> None:
    hosted = tr.ToolRegistry([web_search], profile="hosted")
    assert hosted.calls(DRIFT) == []  # hosted never salvages
    (call,) = tr.salvage_text(DRIFT, ["web_search"]).calls  # salvaged elsewhere, then run here
    outcome = hosted.run(call)
    assert not outcome.ok and outcome.content.startswith("Tool 'WebSearch' not found.")


async def _arun(registry: tr.ToolRegistry, call: tr.ToolCall) -> tr.ToolOutcome:
    return await registry.arun(call)


def test_async_twin_budgets_salvaged_repairs_alike() -> None:
    import asyncio

    registry = tr.ToolRegistry([web_search], max_repairs=0)
    with registry.turn():
        outcome = asyncio.run(_arun(registry, registry.calls(DRIFT)[0]))
    assert not outcome.ok and outcome.content.startswith("Tool 'WebSearch' not found.")


def test_an_exact_salvaged_call_needs_no_budget() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=0)
    with registry.turn():
        outcome = registry.run(registry.calls(DRIFT.replace("WebSearch", "web_search"))[0])
    assert outcome.ok and outcome.events == ()


def test_tool_call_constructor_and_equality_are_unchanged_by_repairs() -> None:
    plain = tr.ToolCall("web_search", {"query": "x"}, "c1", "hermes", (0, 5))
    carried = tr.ToolCall("web_search", {"query": "x"}, "c1", "hermes", (0, 5), repairs=(tr.RepairEvent("name", "m"),))
    assert plain.repairs == () and carried.repairs and plain == carried
    assert carried.to_openai() == plain.to_openai()


# -- a closing marker lost at the end of the reply (the engine's stop token ate it) ----------

LOST_END = [
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}',
    '<function=get_weather>{"city": "Oslo"}',
    '<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}',
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>",
    '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n</invoke>',
    "<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>get_weather<\uff5ctool\u2581sep\uff5c>"
    '{"city": "Oslo"}',
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Oslo"}',
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}',
    '<|python_start|>[get_weather(city="Oslo")]',
    '<|tool_call_start|>[get_weather(city="Oslo")]',
    '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Oslo"}}',
    '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]',
    '<tool_call name="get_weather">{"city": "Oslo"}',
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}',
]


# Key/value calls whose own closer is lost too: the reply ends after a complete value. Cut
# short by max_tokens (more arguments may have followed) or eaten by a stop token: the two
# readings part on what runs, so the call is refused (truncated), never run with what it has.
LOST_CALL_END = [
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>",
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>",
    '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>',
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=unit>\nc\n</parameter>",
]


@pytest.mark.parametrize("text", LOST_CALL_END, ids=[t[:30] for t in LOST_CALL_END])
def test_a_key_value_call_whose_own_closer_is_lost_is_refused(text: str) -> None:
    result = tr.salvage_text(text, W)
    assert result.calls == ()
    assert [(r.reason, r.name) for r in result.rejected] == [("truncated", "get_weather")]
    stream = tr.StreamSalvager(W, model="qwen3")  # released as it goes: nothing before the end
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    assert not [e for e in events if isinstance(e, tr.ToolCallReady)]


@pytest.mark.parametrize("text", LOST_END, ids=[t[:30] for t in LOST_END])
def test_a_lost_end_marker_at_the_end_of_the_reply(text: str) -> None:
    assert [(c.name, c.arguments) for c in tr.salvage_text(text, W).calls] == [("get_weather", {"city": "Oslo"})]
    stream = tr.StreamSalvager(W)
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    assert [e.call.arguments for e in events if isinstance(e, tr.ToolCallReady)] == [{"city": "Oslo"}]
    # Cut inside the payload instead, it is truncated: never completed.
    cut = text[: text.index("Oslo") + 2]
    assert tr.salvage_text(cut, W).calls == ()


# A reply that stops right after (or inside) a call's opener: the model hit its stop token or
# token limit there (vLLM, SGLang and llama.cpp runs show each). (text, dialects, reasons):
# the region the opener began is one `truncated` rejection, to the reply's end; an opener in
# code, a message's end and prose stay text.
CUT_OFF: list[tuple[str, list[str] | None, list[str]]] = [
    ("Sure.<tool_call>", None, ["truncated"]),
    ("Sure. <tool_call>\n", None, ["truncated"]),
    ("<tool_call>\n<", None, ["truncated"]),
    ("Checking. <|tool_call>call:", None, ["truncated"]),
    ("<|python_tag|>", None, ["truncated"]),
    ("Let me check that for you.[TOOL_CALLS]", None, ["truncated"]),
    ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>", None, ["truncated"]),
    ("<|tool_calls_section_begin|>", None, ["truncated"]),
    ("<function_calls>\n<invoke name=", None, ["truncated"]),
    ("<seed:tool_call>", None, ["truncated"]),
    # Gemma 4 with its `<|tool_call>` eaten: the bare `call:` after the channel close.
    ('<|channel>thought\nx<channel|>call:get_weather(city="Oslo"', None, ["truncated"]),
    ('<channel|>call:get_weather{city:<|"|>Os', None, ["truncated"]),
    ('Try call:get_weather(city="Oslo"', None, []),  # `call:` in prose opens nothing
    ("```\n<tool_call>", None, []),  # in an open fence: code
    ("Use `<tool_call>`", None, []),
    ("```\n<tool_call>\n```\nThen: <tool_call>", None, ["truncated"]),  # the one outside code
    ("Done.<|end|>", ["harmony"], []),  # a message's end opens no call
    ("The set {", None, []),
    ("No call here.", None, []),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call><tool_call>', None, ["truncated"]),
]


@pytest.mark.parametrize(("text", "dialects", "reasons"), CUT_OFF, ids=[t[:40] for t, _, _ in CUT_OFF])
def test_a_reply_cut_off_at_an_opener_is_reported(text: str, dialects: list[str] | None, reasons: list[str]) -> None:
    result = tr.salvage_text(text, W, dialects=dialects)
    assert [r.reason for r in result.rejected] == reasons
    if reasons:
        (r,) = result.rejected
        assert r.span[1] == len(text)
    # One character at a time, events as they are certain: the same outcome at close().
    stream = tr.StreamSalvager(W, dialects=dialects, mask_reasoning=False)
    events = [e for ch in text for e in stream.feed(ch)] + stream.close()
    expected = tr.salvage_text(text, W, dialects=dialects, mask_reasoning=False)
    assert [e.call for e in events if isinstance(e, tr.ToolCallReady)] == list(expected.calls)
    assert stream._pass.result().rejected == expected.rejected
