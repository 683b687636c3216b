"""The proxy's pure parts, as tables: config, SSE lines, request tools, reply edges, the ASGI edges."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair.proxy import ProxyConfig, create_app
from toolrepair.proxy._complete import repair_completion
from toolrepair.proxy._errors import ProxyError
from toolrepair.proxy._report import Note, Tally
from toolrepair.proxy._reprompt import corrective_turn
from toolrepair.proxy._sse import MalformedSSE, SSEReader
from toolrepair.proxy._stream import StreamRepair
from toolrepair.proxy._tools import request_tools

from .replies import TOOLS, assemble


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"upstream": "localhost:11434"}, "http:// or https://"),
        ({"upstream": "http://x", "profile": "cloud"}, "profile"),
        ({"upstream": "http://x", "max_reprompts": -1}, "max_reprompts"),
        ({"upstream": "http://x", "timeout": 0}, "timeout"),
        ({"upstream": "http://x", "max_body": 0}, "max_body"),
        ({"upstream": "http://x", "api_key": ""}, "api_key"),
        ({"upstream": "http://x", "max_reply": 0}, "max_reply"),
        ({"upstream": "http://x", "max_line": 0}, "max_line"),
        ({"upstream": "http://x", "workers": 0}, "workers"),
        ({"upstream": "http://x", "header_timeout": 0}, "header_timeout"),
        ({"upstream": "http://x", "max_connections": 0}, "max_connections"),
        ({"upstream": "me:pw@host"}, "'\\*\\*\\*@host'"),  # credentials hidden even in this message
        ({"upstream": "http://x", "reasoning": "hide"}, "reasoning must be one of separate, inline, drop"),
        ({"upstream": "http://x", "model_profile": "qwen"}, "Unknown model profile 'qwen'"),
    ],
)
def test_config_refuses(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProxyConfig(**options)


@pytest.mark.parametrize(
    ("lines", "payloads"),
    [
        (["data: {}", ""], ["{}"]),
        (["data:{}", ""], ["{}"]),  # the space is optional
        (["data: a", "data: b", ""], ["a\nb"]),  # several data lines are one event
        ([": keep-alive", "", "data: x", ""], ["x"]),
        (["event: message", "id: 7", "retry: 10", "data: x", ""], ["x"]),
        (["", "", "id: 1", ""], []),  # blank lines and events without data carry nothing
        (["data", ""], [""]),
    ],
)
def test_sse_reader(lines: list[str], payloads: list[str]) -> None:
    reader = SSEReader()
    out = [p for line in lines if (p := reader.feed_line(line)) is not None]
    assert out == payloads
    assert reader.close() is None


def test_sse_reader_close_gives_an_unterminated_event() -> None:
    reader = SSEReader()
    assert reader.feed_line("data: last") is None
    assert reader.close() == "last"


@pytest.mark.parametrize(
    ("chunks", "payloads"),
    [
        ([b"data: a\n\n"], ["a"]),
        ([b"data: a\r\n\r\n"], ["a"]),
        ([b"data: a\r\r"], ["a"]),  # CR alone ends a line, and the event at once
        ([b"data: a\r", b"\n\r", b"\n"], ["a"]),  # CRLF split between chunks is one line end
        ([b"data: a\r", b"", b"\n", b"\n"], ["a"]),
        ([b"da", b"ta: ", b"a", b"\n", b"\n", b"data: b\n\n: ping"], ["a", "b"]),
        ([b"data: a\n\ndata: b\n\n"], ["a", "b"]),  # one read, two events
        (["data: \u2028\u2029\x85\x0c\n\n".encode()], ["\u2028\u2029\x85\x0c"]),  # not line ends in SSE
        ([b"data: \xc3", b"\xa9\n\n"], ["\u00e9"]),  # UTF-8 split between chunks
    ],
)
def test_sse_reader_feed(chunks: list[bytes], payloads: list[str]) -> None:
    reader = SSEReader()
    assert [p for chunk in chunks for p in reader.feed(chunk)] == payloads
    assert reader.close() is None


def test_sse_reader_feed_then_close_gives_an_unterminated_line() -> None:
    reader = SSEReader()
    assert list(reader.feed(b"data: a\n\ndata: b")) == ["a"]
    assert reader.close() == "b"


def test_sse_reader_feed_raises_after_the_events_before_a_bad_line() -> None:
    events = SSEReader().feed(b"data: a\n\ngarbage\ndata: b\n\n")
    assert next(events) == "a"
    with pytest.raises(MalformedSSE, match="garbage"):
        next(events)


_SSE_LINES = st.lists(
    st.sampled_from(["data: {}", "data: x\u2028y", ": ping", "id: 1", "", "data: \u00e9"]), max_size=12
)


@given(_SSE_LINES, st.sampled_from(["\n", "\r\n", "\r"]), st.lists(st.integers(0, 200), max_size=8))
def test_sse_reader_feed_equals_reading_the_lines_whole(lines: list[str], end: str, cuts: list[int]) -> None:
    """However the bytes are cut into reads, the events are those of the lines read one by one."""
    whole = "".join(line + end for line in lines).encode()
    expected_reader = SSEReader()
    expected = [p for line in lines if (p := expected_reader.feed_line(line)) is not None]
    bounds = sorted({min(c, len(whole)) for c in cuts} | {0, len(whole)})
    reader = SSEReader()
    got = [p for a, b in itertools.pairwise(bounds) for p in reader.feed(whole[a:b])]
    assert got == expected
    assert reader.close() == expected_reader.close()


@pytest.mark.parametrize("line", ["garbage", "error: {}", "Data: x", '{"choices": []}'])
def test_sse_reader_refuses_what_is_not_a_field(line: str) -> None:
    with pytest.raises(MalformedSSE, match="not a server-sent event line"):
        SSEReader().feed_line(line)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"tools": "x"}, "tools must be an array"),
        ({"tools": [1]}, r"tools\[0\] must be an object"),
        ({"tools": [{"type": "function"}]}, "function.name"),
        ({"tools": [{"type": "function", "function": {"name": ""}}]}, "function.name"),
        ({"tools": [{"type": "function", "function": {"name": "a", "parameters": []}}]}, "JSON Schema object"),
        ({"tools": [{"function": {"name": "a"}}, {"function": {"name": "a"}}]}, "two tools are named 'a'"),
        ({"tools": [{"function": {"name": "a", "parameters": {"type": "nonsense"}}}]}, "tool 'a'"),
        ({"tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice must be"),
        ({"tools": TOOLS, "tool_choice": {"type": "function"}}, "tool_choice must be"),
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "not in tools"),
    ],
)
def test_request_tools_refuses(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ProxyError, match=message) as exc:
        request_tools(body, "local")
    assert exc.value.status == 400 and exc.value.body()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("body", "names", "required"),
    [
        ({}, None, False),
        ({"tools": []}, None, False),
        ({"tools": TOOLS, "tool_choice": "none"}, None, False),
        ({"tools": [{"type": "custom", "custom": {"name": "grep"}}]}, None, False),  # no schema: nothing to repair
        ({"tools": TOOLS}, ["web_search", "get_weather"], False),
        ({"tools": TOOLS, "tool_choice": None}, ["web_search", "get_weather"], False),
        ({"tools": TOOLS, "tool_choice": "auto"}, ["web_search", "get_weather"], False),
        ({"tools": TOOLS, "tool_choice": "required"}, ["web_search", "get_weather"], True),
        (
            {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
            ["get_weather"],
            True,
        ),
    ],
)
def test_request_tools(body: dict[str, Any], names: list[str] | None, required: bool) -> None:
    tools = request_tools(body, "local")
    assert (tools.registry.names if tools.registry is not None else None) == names
    assert tools.required is required


def _registry() -> tr.ToolRegistry:
    registry = request_tools({"tools": TOOLS}, "local").registry
    assert registry is not None
    return registry


@pytest.mark.parametrize(
    "body",
    [
        {"object": "chat.completion"},
        {"choices": "x"},
        {"choices": [1, {"index": 0}]},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]},
    ],
)
def test_completion_shapes_left_alone(body: dict[str, Any]) -> None:
    tally = Tally()
    assert repair_completion(body, _registry(), tally) == body
    assert tally == Tally()


def test_custom_tool_calls_pass_as_they_are() -> None:
    custom = {"id": "c1", "type": "custom", "custom": {"name": "grep", "input": "x"}}
    body = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "tool_calls": [custom, 3]}, "finish_reason": "tool_calls"}
        ]
    }
    tally = Tally()
    assert repair_completion(body, _registry(), tally)["choices"][0]["message"]["tool_calls"] == [custom, 3]
    assert tally.header() == "repaired=0, salvaged=0, refused=0"


def test_not_offered_text_call_is_refused_and_noted() -> None:
    text = '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    tally = Tally()
    out = repair_completion(body, _registry(), tally)
    assert out["choices"][0]["message"]["content"] == text  # left as the model wrote it
    assert out["choices"][0]["finish_reason"] == "stop"
    assert tally.salvaged == 0
    assert tally.refused == len(tally.notes)
    assert all(n.tool_call_id is None for n in tally.notes)


def _feed(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    repair = StreamRepair(_registry(), Tally())
    return [c for chunk in chunks for c in repair.feed(chunk)] + repair.close()


def test_stream_edges() -> None:
    usage = {"total_tokens": 3}
    out = _feed(
        [
            {"id": "a", "choices": [{"index": 0, "delta": {"content": "Hi <tool_"}}]},  # held: may be a marker
            {"id": "a", "choices": [], "usage": usage},  # no choices: passes as it is
            {"id": "a", "choices": [{"index": 0, "delta": {"content": "c"}}], "usage": usage},  # still held
            {"id": "a", "choices": [{"index": 0, "delta": {"content": "y"}, "finish_reason": "stop"}]},
        ]
    )
    assert out.count({"id": "a", "choices": [], "usage": usage}) == 2  # nothing to carry them: on their own
    assert assemble(out)["content"] == "Hi <tool_cy"
    assert out[-1]["choices"][0]["finish_reason"] == "stop"


def test_stream_cut_short_releases_what_it_held() -> None:
    out = _feed(
        [
            {"id": "a", "choices": [{"index": 0, "delta": {"content": 'ok <tool_call>{"name": "web'}}]},
            {
                "id": "a",
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c",
                                    "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                                },
                                {"index": 0, "type": "function", "function": None},
                            ]
                        },
                    }
                ],
            },
        ]
    )
    message = assemble(out)
    assert message["content"] == 'ok <tool_call>{"name": "web'  # native calls began: held text is text
    assert [tc["function"]["name"] for tc in message["tool_calls"]] == ["get_weather"]
    assert message["finish_reason"] is None
    assert out[-1]["id"] == "a"


def test_stream_text_and_finish_in_one_chunk() -> None:
    out = _feed(
        [
            {"id": "a", "choices": [{"index": 0, "delta": {"content": "a  "}}]},
            {"id": "a", "choices": [{"index": 0, "delta": {"content": "b <tool_"}, "finish_reason": "stop"}]},
        ]
    )
    # Without a model profile the stream holds its text until the finish (a lone </think> could
    # still make it reasoning): all of it comes with the close at the finish, one delta.
    assert [c["choices"][0]["delta"].get("content") for c in out] == ["a  b <tool_"]


def test_corrective_turn() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "r",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}},
            {"type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        ],
    }
    turn = corrective_turn(
        message, [Note("c1", "web_search", "Fix it."), Note(None, "x", "Not offered.")], missing_call=None
    )
    assert turn[0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [message["tool_calls"][0], {**message["tool_calls"][1], "id": "call_toolrepair_1"}],
    }
    assert turn[1:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "Fix it."},
        {
            "role": "tool",
            "tool_call_id": "call_toolrepair_1",
            "content": "Not run: correct the other calls of this turn, then call again.",
        },
        {"role": "user", "content": "Not offered."},
    ]


def test_create_app_without_the_stack_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "toolrepair.proxy._app", None)
    with pytest.raises(ImportError, match=r"pip install 'toolrepair\[proxy\]'"):
        create_app(upstream="http://127.0.0.1:1/v1")


async def _asgi(app: Any, scope: dict[str, Any], receive: Any) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _scope(path: str, method: str = "POST") -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "server": ("127.0.0.1", 8787),
        "client": ("127.0.0.1", 5),
        "headers": [],
    }


def test_client_gone_before_its_body_arrived() -> None:
    app = create_app(upstream="http://127.0.0.1:1/v1")

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    sent = asyncio.run(_asgi(app, _scope("/v1/chat/completions"), receive))
    assert sent[0]["status"] == 499


def test_streamed_body_stops_when_a_write_fails() -> None:
    from toolrepair.proxy._app import _Body

    closed: list[bool] = []

    async def chunks() -> Any:
        yield b"one"
        yield b"two"

    async def on_close() -> None:
        closed.append(True)

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)  # the client says nothing; the write fails instead
        return {}

    async def send(message: dict[str, Any]) -> None:
        if message.get("body"):
            raise OSError("broken pipe")

    asyncio.run(_Body(chunks(), 200, {}, on_close)(_scope("/v1/x"), receive, send))
    assert closed == [True]


@pytest.mark.parametrize(
    ("deltas", "merged"),
    [
        ([], []),
        ([{"content": "a"}, {"content": "b"}], [{"content": "ab"}]),
        (
            [{"content": "a"}, {"tool_calls": []}, {"content": "b"}],
            [{"content": "a"}, {"tool_calls": []}, {"content": "b"}],
        ),
        (
            [{"role": "assistant", "content": "a"}, {"content": "b"}],
            [{"role": "assistant", "content": "a"}, {"content": "b"}],
        ),
    ],
)
def test_adjacent_text_deltas_merge(deltas: list[dict[str, Any]], merged: list[dict[str, Any]]) -> None:
    from toolrepair.proxy._stream import _merge

    assert _merge(deltas) == merged


# The request's `model` -> the profile it is salvaged under (`_model.PROFILE_BY_MODEL`).
MODEL_NAMES = [
    ("qwen3:8b", "qwen3"),
    ("Qwen/Qwen3-8B", "qwen3"),
    ("hf.co/unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M", "qwen3"),
    ("qwen3-coder:30b", "qwen3-coder"),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder"),
    ("Qwen3-235B-A22B-Thinking-2507", "qwen3-thinking"),
    ("qwen3.5:35b", "qwen3.5"),
    ("deepseek-r1:14b", "deepseek-r1"),
    ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "deepseek-r1"),  # the more specific row first
    ("deepseek-v3-0324", "deepseek-v3"),
    ("openai/gpt-oss-20b", "gpt-oss"),
    ("gpt-oss:120b", "gpt-oss"),
    ("google/gemma-4-31b-it", "gemma4"),
    ("gemma4:e4b", "gemma4"),
    ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),
    ("Kimi-K2-Thinking", "kimi-k2-thinking"),
    ("zai-org/GLM-4.7", "glm-4.7"),
    ("mistral-small3.2:24b", "mistral"),
    ("devstral:24b", "mistral"),
    # no profile: an unknown family, a point release the table does not name, a look-alike
    ("qwen3.6-plus", None),
    ("deepseek-v3.1", None),  # thinking mode opens <think>, the other does not: not from a name
    ("gemma-3-4b-it", None),
    ("qwen32b", None),
    ("llama3.1:8b", None),
    ("m", None),
    ("", None),
]


@pytest.mark.parametrize(("name", "profile"), MODEL_NAMES)
def test_the_model_name_picks_the_profile(name: str, profile: str | None) -> None:
    from toolrepair.proxy._model import profile_for

    picked = profile_for(None, name)
    assert (picked.name if picked is not None else None) == profile


@pytest.mark.parametrize(
    ("setting", "model", "profile"),
    [("gpt-oss", "qwen3:8b", "gpt-oss"), ("none", "qwen3:8b", None), (None, 7, None), (None, None, None)],
)
def test_the_named_profile_wins_over_the_model_name(setting: str | None, model: Any, profile: str | None) -> None:
    from toolrepair.proxy._model import profile_for

    picked = profile_for(setting, model)
    assert (picked.name if picked is not None else None) == profile


def test_every_profile_the_table_names_exists() -> None:
    from toolrepair.proxy._model import PROFILE_BY_MODEL

    assert {name for _, name in PROFILE_BY_MODEL} <= set(tr.MODEL_PROFILES)


def test_the_documented_table_is_the_code_s() -> None:
    # docs/proxy.md's table, row by row ("a or b": two rows of the code's), is PROFILE_BY_MODEL.
    import re
    from pathlib import Path

    from toolrepair.proxy._model import PROFILE_BY_MODEL

    doc = (Path(__file__).resolve().parents[2] / "docs" / "proxy.md").read_text()
    section = doc.split("### Model profiles", 1)[1].split("\n\n| the name holds | profile |\n|---|---|\n", 1)[1]
    rows = [line.split(" | ") for line in section.split("\n\n", 1)[0].splitlines()]
    documented = [
        (tuple(re.findall(r"`([^`]+)`", alternative)), re.findall(r"`([^`]+)`", profile)[0])
        for holds, profile in ((r[0].strip("| "), r[1]) for r in rows if "anything else" not in r[0])
        for alternative in holds.split(" or ")
    ]
    assert documented == list(PROFILE_BY_MODEL)


# The app reads the request's `model` for the profile and applies --reasoning (whole reply; the
# stream's rule is the same code, see test_stream_equivalence.py). (model, --model-profile,
# --reasoning) -> (content, reasoning_content): the gpt-oss profile knows harmony's reasoning
# only, so a <think> block is content there.
APP_REASONING = [
    (("m", None, "separate"), ("Hi", "a")),
    (("m", None, "inline"), ("<think>a</think>Hi", None)),
    (("m", None, "drop"), ("Hi", None)),
    (("openai/gpt-oss-20b", None, "separate"), ("<think>a</think>Hi", None)),
    (("openai/gpt-oss-20b", "none", "separate"), ("Hi", "a")),
    (("m", "gpt-oss", "separate"), ("<think>a</think>Hi", None)),
]


@pytest.mark.parametrize(("given", "expected"), APP_REASONING)
def test_the_app_picks_the_profile_and_the_reasoning_mode(given: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    import httpx

    model, profile, reasoning = given
    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "<think>a</think>Hi"}}]}
    data = json.dumps(reply).encode()

    class Upstream(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, headers={"content-type": "application/json"}, stream=httpx.ByteStream(data))

    upstream = Upstream()
    app = create_app("http://up/v1", model_profile=profile, reasoning=reasoning, transport=upstream)
    body = {"model": model, "messages": [], "tools": TOOLS}

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy") as client:
            return await client.post("/v1/chat/completions", json=body)

    message = asyncio.run(post()).json()["choices"][0]["message"]
    assert (message.get("content"), message.get("reasoning_content")) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [("m", [("thinking", "a"), ("text", "Hi")]), ("gpt-oss:20b", [("text", "<think>a</think>Hi")])],
)
def test_the_messages_route_picks_the_profile_too(model: str, expected: list[tuple[str, str]]) -> None:
    import httpx

    reply = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "<think>a</think>Hi"}]}
    data = json.dumps(reply).encode()

    class Upstream(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, headers={"content-type": "application/json"}, stream=httpx.ByteStream(data))

    app = create_app("http://up/v1", transport=Upstream())
    tools = [{"name": "web_search", "input_schema": {"type": "object", "properties": {}}}]

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy") as client:
            return await client.post("/v1/messages", json={"model": model, "messages": [], "tools": tools})

    blocks = asyncio.run(post()).json()["content"]
    assert [(b["type"], b.get("thinking", b.get("text"))) for b in blocks] == expected


_HERMES = 'Let me look. <tool_call>{"name": "web_search", "arguments": {"query": "cats"}}</tool_call> Done.'


@pytest.mark.parametrize("options", [{}, {"model": "qwen3"}, {"mask_reasoning": False}, {"max_input_chars": 40}])
@pytest.mark.parametrize("mode", ["separate", "inline", "drop"])
def test_content_events_give_the_salvagers_events_at_the_same_moments(options: dict[str, Any], mode: str) -> None:
    from toolrepair.proxy._reasoning import ContentEvents

    deltas = [_HERMES[i : i + 4] for i in range(0, len(_HERMES), 4)]
    events = ContentEvents(tr.StreamSalvager(["web_search"], **options), mode)
    reference = ContentEvents(tr.StreamSalvager(["web_search"], **options), mode)
    # The same events at the same moments (per delta), as the salvager fed delta by delta gives.
    reference_out = [reference._shaped(reference._salvager.feed(d)) for d in deltas]
    if mode == "inline":  # inline reads `settled` per delta: compared on the result, whole, below
        reference_out = []
    got = [events.feed(d) for d in deltas]
    if reference_out:
        assert got == reference_out
    got.append(events.close())
    whole = ContentEvents(tr.StreamSalvager(["web_search"], **options), mode)
    expected = whole.feed(_HERMES) + whole.close()
    flat = [e for batch in got for e in batch]
    assert "".join(e.text for e in flat if isinstance(e, tr.TextDelta)) == "".join(
        e.text for e in expected if isinstance(e, tr.TextDelta)
    )
    assert [e.call.name for e in flat if isinstance(e, tr.ToolCallReady)] == [
        e.call.name for e in expected if isinstance(e, tr.ToolCallReady)
    ]
