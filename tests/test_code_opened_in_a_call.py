"""Code opened inside an earlier call's own text, through every entry point that salvages.

CommonMark reads the whole reply, calls included: a fence line in a JSON string (a raw
newline), ``~~~`` in a Qwen3-Coder ``<parameter>``, a backtick in a string that opens a code
span, a ``<pre>`` in an argument. A later call CommonMark puts in that code is refused as
``in-code`` (a Rejection); the earlier call stands; a fence closed inside the argument costs
nothing. Each row runs through ``salvage_text``, ``StreamSalvager`` (whole, one character at a
time, and other chunkings), the proxy's whole and streamed repair (sans-I/O: the code its
servers run), and LiteLLM's ``repair_response`` / ``repair_stream``: one engine behind all.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from test_stream import stream

import toolrepair as tr

WEATHER = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
OFFERED = ["web_search", "get_weather"]


def hermes(arguments: str) -> str:
    return '<tool_call>{"name": "web_search", "arguments": ' + arguments + "}</tool_call>"


def qwen(value: str) -> str:
    return f"<tool_call>\n<function=web_search>\n<parameter=query>\n{value}\n</parameter>\n</function>\n</tool_call>"


def mistral(query: str) -> str:
    return '[TOOL_CALLS][{"name": "web_search", "arguments": {"query": "' + query + '"}}]'


# (reply, calls taken, calls refused in-code): the later call is in code that the earlier
# call's own text opened.
OPENED_IN_A_CALL = [
    # A fence line in a JSON string with raw newlines: backticks, tildes, an info string,
    # indented up to three, left open to the end.
    (hermes('{"query": "a\n```\nb"}') + "\n" + WEATHER, ["web_search"], ["get_weather"]),
    (hermes('{"query": "a\n~~~~ py\nb"}') + "\n\n" + WEATHER, ["web_search"], ["get_weather"]),
    (hermes('{"query": "x\n   ```\n"}') + "\nThen " + WEATHER, ["web_search"], ["get_weather"]),
    (hermes('{"query": "a\n```"}') + WEATHER, ["web_search"], ["get_weather"]),
    (
        hermes('{"query": "a\n```js\nb"}') + "\n" + WEATHER + "\n" + WEATHER,
        ["web_search"],
        ["get_weather", "get_weather"],
    ),
    # Qwen3-Coder's XML: a parameter's lines are the reply's lines.
    (qwen("~~~") + "\n" + WEATHER, ["web_search"], ["get_weather"]),
    (qwen("```python\nx = 1") + "\n" + WEATHER, ["web_search"], ["get_weather"]),
    (qwen("~~~\n```") + "\n\n\n" + WEATHER, ["web_search"], ["get_weather"]),
    # A Mistral payload.
    (mistral("a\n```\nb") + "\n" + WEATHER, ["web_search"], ["get_weather"]),
    (mistral("a\n~~~") + " " + WEATHER, ["web_search"], ["get_weather"]),
    # A code span opened by a backtick in the call's text, closed after the later call.
    (hermes('{"query": "a `b"}') + " and " + WEATHER + " `", ["web_search"], ["get_weather"]),
    (hermes('{"query": "a ``b"}') + "\n" + WEATHER + "\n``", ["web_search"], ["get_weather"]),
    # The first call dropped as reasoning before a lone `</think>` (whose own line the fence
    # covers): the later call is still in that code, and refused.
    (hermes('{"query": "a\n```\nb"}') + "\n</think>\n" + WEATHER, [], ["get_weather"]),
    (hermes('{"query": "a\n~~~\nb"}') + "\n</think>" + WEATHER, [], ["get_weather"]),
    (qwen("```") + "</think>\n" + WEATHER, [], ["get_weather"]),
    # A comment in an argument's <pre> (raw CRLF line endings; an XML parameter): a comment to a
    # browser, no tag to markdown-it-py, where `<script>` opens. In doubt: what follows is code.
    (
        hermes('{"query": "<pre>\r\n<!--</pre><script>-->\r\n</pre>"}') + "\r\n\r\n" + WEATHER,
        ["web_search"],
        ["get_weather"],
    ),
    (qwen("<pre><!--</pre><script>--></pre>") + "\n\n" + WEATHER, ["web_search"], ["get_weather"]),
]

# A fence or span closed inside the argument (a file with code blocks) costs nothing.
BALANCED = [
    hermes('{"query": "a\n```\nb\n```\n"}') + "\n" + WEATHER,
    hermes('{"query": "x\n~~~\ny\n~~~\n"}') + WEATHER,
    qwen("```python\nx = 1\n```") + "\n" + WEATHER,
    qwen("# Title\n\n~~~\ncode\n~~~\n\nmore") + WEATHER,
    hermes('{"query": "`a` and ``b``"}') + " " + WEATHER,
    mistral("a\n```\nb\n```\n") + "\n" + WEATHER,
    # A fence in a string written with escapes, not raw newlines, is no fence at all.
    hermes('{"query": "a\\n```\\nb"}') + "\n" + WEATHER,
]

# A dialect's own fence (DeepSeek V3 wraps its payload in ```json … ``` and writes its end token
# on the closing line) opens no code past its call: (reply, calls taken, rejections).
DS_BEGIN, DS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"


def ds3(name: str, arguments: str) -> str:
    return f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{arguments}\n```<｜tool▁call▁end｜>"


DIALECT_FENCES = [
    (DS_BEGIN + ds3("web_search", '{"query": "a"}') + ds3("get_weather", '{"city": "P"}') + DS_END, 2, 0),
    (DS_BEGIN + ds3("web_search", '{"query": "a"}') + DS_END + "\n" + WEATHER, 2, 0),
    # The closing line's rest is a paragraph: a code span there still masks.
    (DS_BEGIN + ds3("web_search", '{"query": "a"}') + DS_END + " `" + WEATHER + "`", 1, 0),
    # A fence the text opens after the call is code as ever: silently text.
    (DS_BEGIN + ds3("web_search", '{"query": "a"}') + DS_END + "\n```\n" + WEATHER + "\n```", 1, 0),
    # An argument's own fence line is no dialect syntax: it opens code, and the later call is refused.
    (DS_BEGIN + ds3("web_search", '{"query": "a\n```\nb"}') + DS_END + "\n" + WEATHER, 1, 1),
]


@pytest.mark.parametrize("step", [1, 5, 0])
@pytest.mark.parametrize(("text", "taken", "refused"), DIALECT_FENCES)
def test_a_dialects_own_fence_ends_with_its_call(text: str, taken: int, refused: int, step: int) -> None:
    whole = tr.salvage_text(text, OFFERED)
    assert (len(whole.calls), [r.reason for r in whole.rejected]) == (taken, ["in-code"] * refused)
    content, calls = stream(text, OFFERED, range(step or len(text), len(text), step or len(text)))
    assert (content, calls) == (whole.content, whole.calls)


def _names(calls: Any) -> list[str]:
    return [c.name for c in calls]


@pytest.mark.parametrize(("text", "taken", "refused"), OPENED_IN_A_CALL)
def test_salvage_text_refuses_the_later_call(text: str, taken: list[str], refused: list[str]) -> None:
    got = tr.salvage_text(text, OFFERED)
    assert _names(got.calls) == taken
    assert [(r.reason, r.name) for r in got.rejected] == [("in-code", n) for n in refused]
    for r in got.rejected:  # the rejection names the refused candidate's own span
        assert text[r.span[0] :].startswith("<tool_call>")
        assert r.text == text[r.span[0] : r.span[1]]


@pytest.mark.parametrize("text", BALANCED)
def test_a_balanced_fence_in_an_argument_costs_nothing(text: str) -> None:
    got = tr.salvage_text(text, OFFERED)
    assert _names(got.calls) == ["web_search", "get_weather"]
    assert got.rejected == ()


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 0])
@pytest.mark.parametrize(
    ("text", "taken", "refused"), OPENED_IN_A_CALL + [(t, ["web_search", "get_weather"], []) for t in BALANCED]
)
def test_the_stream_gives_what_the_whole_text_gives(text: str, taken: list[str], refused: list[str], step: int) -> None:
    whole = tr.salvage_text(text, OFFERED)
    step = step or len(text)
    content, calls = stream(text, OFFERED, range(step, len(text), step))
    assert (content, calls) == (whole.content, whole.calls)
    assert _names(calls) == taken


@pytest.mark.parametrize(("text", "taken", "refused"), OPENED_IN_A_CALL)
def test_a_pass_cut_anywhere_keeps_the_rejection(text: str, taken: list[str], refused: list[str]) -> None:
    """A pass that first sees the text cut inside the later call (the reader undecided, the
    mask already saying "code an earlier call opened") refuses it as the whole text does: it
    waits for the reader instead of passing the marker as text (the rejection was lost, and
    the region ended as neither a call nor a rejection)."""
    from toolrepair._salvage._engine import SalvagePass, config_for

    whole = tr.salvage_text(text, OFFERED)
    config = config_for(None)
    for k in range(len(text) + 1):
        run = SalvagePass(config, OFFERED, text[:k])
        run.advance(final=False)
        run.extend(text[k:])
        run.advance(final=True)
        got = run.result()
        assert (got.calls, got.rejected) == (whole.calls, whole.rejected), k
    assert [r.name for r in whole.rejected if r.reason == "in-code"] == refused


# -- the proxy: whole and streamed repair, the code its servers run --------------------------

PROXY_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
]


def _proxy_parts() -> Any:
    pytest.importorskip("starlette")
    from toolrepair.proxy._complete import repair_completion
    from toolrepair.proxy._report import Tally
    from toolrepair.proxy._stream import StreamRepair
    from toolrepair.proxy._tools import request_tools

    return repair_completion, Tally, StreamRepair, request_tools


def _body(text: str) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }


def _chunks(text: str, step: int) -> list[dict[str, Any]]:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    out += [
        {**base, "choices": [{"index": 0, "delta": {"content": text[i : i + step]}, "finish_reason": None}]}
        for i in range(0, len(text), step)
    ]
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return out


def _assembled_calls(events: list[dict[str, Any]]) -> list[str]:
    names: dict[int, str] = {}
    for event in events:
        for choice in event.get("choices") or ():
            for tc in (choice.get("delta") or {}).get("tool_calls") or ():
                fn = tc.get("function") or {}
                if fn.get("name"):
                    names[tc["index"]] = fn["name"]
    return [names[i] for i in sorted(names)]


@pytest.mark.parametrize("step", [1, 5, 0])
@pytest.mark.parametrize(("text", "taken", "refused"), OPENED_IN_A_CALL)
def test_the_proxy_whole_and_streamed(text: str, taken: list[str], refused: list[str], step: int) -> None:
    repair_completion, Tally, StreamRepair, request_tools = _proxy_parts()
    registry = request_tools({"tools": PROXY_TOOLS}, "local").registry
    whole = repair_completion(_body(text), registry, Tally())
    message = whole["choices"][0]["message"]
    assert [tc["function"]["name"] for tc in message.get("tool_calls") or ()] == taken
    repair = StreamRepair(registry, Tally())
    events = [c for chunk in _chunks(text, step or len(text)) for c in repair.feed(chunk)] + repair.close()
    assert _assembled_calls(events) == taken


# -- LiteLLM: repair_response and repair_stream --------------------------------------------


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for the price table
    return pytest.importorskip("litellm")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.parametrize(("text", "taken", "refused"), OPENED_IN_A_CALL)
def test_litellm_repair_response_and_repair_stream(text: str, taken: list[str], refused: list[str]) -> None:
    litellm = _litellm()
    from toolrepair.integrations.litellm import repair_response, repair_stream

    registry = tr.ToolRegistry([tr.ToolSpec(t["function"]["name"], t["function"]["parameters"]) for t in PROXY_TOOLS])
    messages = [{"role": "user", "content": "go"}]
    reply = repair_response(litellm.completion(model="gpt-4o-mini", messages=messages, mock_response=text), registry)
    assert [tc.function.name for tc in reply.choices[0].message.tool_calls or ()] == taken
    chunks = litellm.completion(model="gpt-4o-mini", messages=messages, mock_response=text, stream=True)
    built = litellm.stream_chunk_builder(list(repair_stream(chunks, registry)), messages=messages)
    assert [tc.function.name for tc in built.choices[0].message.tool_calls or ()] == taken
