"""toolrepair.integrations.litellm against real LiteLLM: mock_response completions (whole and
streamed), a tool loop over them, and the proxy's own post-call hooks (ProxyLogging)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

import toolrepair as tr

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for the price table
litellm = pytest.importorskip("litellm")

from toolrepair.integrations.litellm import (  # noqa: E402
    arepair_stream,
    registry_for_request,
    repair_response,
    repair_stream,
)

# LiteLLM's own types and clients warn as they load: its warnings, not ours.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:litellm.*"),
]

RAN: list[tuple[str, dict[str, Any]]] = []


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    RAN.append(("web_search", {"query": query, "limit": limit}))
    return f"{limit} results for {query}"


def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(("delete_file", {"path": path}))
    return "deleted"


TOOLS_PAYLOAD = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "delete_file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
]
HERMES = '<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'


def _native(name: str, arguments: str, ident: str = "c1") -> dict[str, Any]:
    return {
        "mock_tool_calls": [{"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}],
        "mock_response": "",
    }


# What the model "says" each turn, as LiteLLM's own mock arguments.
SCRIPT = [
    _native("WebSearch", '{"query": "cats", "limit": "2",}', "c_drift"),  # drifted name, broken JSON
    {"mock_response": "Again. " + HERMES.format(name="web_search", arguments='{"query": "dogs"}')},  # text call
    _native("image_search", '{"query": "otters"}', "c_unknown"),  # a tool never offered
    _native("web_search", '{"query": "otters"}', "c_next"),  # ... and the next turn succeeds
    _native("DeleteFile", '{"path": "/"}', "c_denied"),  # denied by policy
    {"mock_response": "Done."},
]


def _native_stream(call: dict[str, Any]) -> list[Any]:
    """A streamed native call as providers send it (LiteLLM's mock streams text only): the id and
    name first, then the arguments in pieces, then the finishing chunk."""
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    def chunk(delta: Delta, finish: str | None = None) -> ModelResponseStream:
        return ModelResponseStream(
            id="chatcmpl-s", model="gpt-4o-mini", choices=[StreamingChoices(index=0, delta=delta, finish_reason=finish)]
        )

    fn, args = call["function"], call["function"]["arguments"]
    first = {"index": 0, "id": call["id"], "type": "function", "function": {"name": fn["name"], "arguments": ""}}
    pieces = [args[: len(args) // 2], args[len(args) // 2 :]]
    return [
        chunk(Delta(role="assistant", tool_calls=[first])),
        *(chunk(Delta(tool_calls=[{"index": 0, "function": {"arguments": p}}])) for p in pieces),
        chunk(Delta(), "tool_calls"),
    ]


def _registry() -> tr.ToolRegistry:
    return tr.ToolRegistry([web_search, delete_file], deny=["delete_file"])


def _loop(registry: tr.ToolRegistry, *, stream: bool) -> list[dict[str, Any]]:
    """A plain tool loop over litellm.completion: run every call the repaired reply holds."""
    RAN.clear()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find things"}]
    for turn in SCRIPT:
        if stream:
            chunks = (
                _native_stream(turn["mock_tool_calls"][0])
                if "mock_tool_calls" in turn
                else litellm.completion(
                    model="gpt-4o-mini", messages=messages, tools=TOOLS_PAYLOAD, stream=True, **turn
                )
            )
            reply = litellm.stream_chunk_builder(list(repair_stream(chunks, registry)), messages=messages)
        else:
            reply = repair_response(
                litellm.completion(model="gpt-4o-mini", messages=messages, tools=TOOLS_PAYLOAD, **turn), registry
            )
        message = reply.choices[0].message
        messages.append(
            {
                "role": "assistant",
                "content": message.content,
                **({"tool_calls": [tc.model_dump() for tc in message.tool_calls]} if message.tool_calls else {}),
            }
        )
        for tc in message.tool_calls or []:
            outcome = registry.run(
                {"id": tc.id, "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
            )
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": outcome.content})
    return messages


def _check_loop(messages: list[dict[str, Any]], *, stream: bool) -> None:
    assert RAN == [
        ("web_search", {"query": "cats", "limit": 2}),
        ("web_search", {"query": "dogs", "limit": 3}),
        ("web_search", {"query": "otters", "limit": 3}),
    ]
    tool_results = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool_results == ["2 results for cats", "3 results for dogs", "3 results for otters"]
    said = [m["content"] for m in messages if m["role"] == "assistant"]
    # The text call left the visible text, the space before it kept, whole or streamed.
    assert said[1] == "Again. "
    # The tool never offered and the denied one reached the model as text, never an executor.
    assert (
        said[2]
        == "Tool 'image_search' not found. Did you mean 'web_search'? Available tools: ['delete_file', 'web_search']"
    )
    assert said[4] == "Tool 'delete_file' is not allowed."
    assert said[5] == "Done."


def test_a_tool_loop_over_completions() -> None:
    _check_loop(_loop(_registry(), stream=False), stream=False)


def test_a_tool_loop_over_streamed_completions() -> None:
    _check_loop(_loop(_registry(), stream=True), stream=True)


def test_streamed_text_never_shows_the_markup() -> None:
    text = "Let me look. " + HERMES.format(name="web_search", arguments='{"query": "cats"}') + " Back soon."
    chunks = list(
        repair_stream(
            litellm.completion(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], mock_response=text, stream=True
            ),
            _registry(),
        )
    )
    shown = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert shown == "Let me look.  Back soon." and "<tool_call>" not in shown
    calls = [tc for c in chunks for tc in c.choices[0].delta.tool_calls or []]
    assert [(tc.function.name, json.loads(tc.function.arguments)) for tc in calls] == [
        ("web_search", {"query": "cats"})
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_async_stream_and_a_stream_without_a_finishing_chunk() -> None:
    async def main() -> list[Any]:
        chunks = await litellm.acompletion(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "x"}],
            mock_response=HERMES.format(name="WebSearch", arguments='{"query": "q"}'),
            stream=True,
        )
        return [c async for c in arepair_stream(chunks, _registry())]

    out = asyncio.run(main())
    [call] = [tc for c in out for tc in c.choices[0].delta.tool_calls or []]
    assert call.function.name == "web_search" and call.id.startswith("call_")
    # Cut off before its finishing chunk: what was held still comes out, once.
    raw = list(
        litellm.completion(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], mock_response="plain words", stream=True
        )
    )
    unfinished = [c for c in raw if c.choices[0].finish_reason is None]
    shown = "".join(c.choices[0].delta.content or "" for c in repair_stream(unfinished, _registry()))
    assert shown == "plain words"
    assert list(repair_stream([], _registry())) == []


def test_a_reply_with_nothing_to_repair_is_an_equal_copy() -> None:
    reply = litellm.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], mock_response="Hi.")
    fixed = repair_response(reply, _registry())
    assert fixed is not reply and fixed.choices[0].message.content == "Hi."
    assert fixed.choices[0].finish_reason == "stop"


def test_registry_for_request_reads_the_offered_tools() -> None:
    registry = registry_for_request(
        {
            "tools": [
                *TOOLS_PAYLOAD,
                {"type": "custom", "custom": {}},
                {"type": "function", "function": {"name": "bare"}},
            ]
        },
        deny=["bare"],
    )
    assert registry.names == ["web_search", "delete_file", "bare"]
    assert registry.info("web_search").expected == {"required": ["query"], "optional": ["limit"]}
    assert len(registry_for_request({})) == 0


# -- the proxy's own hooks ------------------------------------------------------------------------
@pytest.fixture
def proxy_logging() -> Any:
    pytest.importorskip("litellm.proxy.utils")
    from litellm.caching.dual_cache import DualCache
    from litellm.proxy._types import UserAPIKeyAuth
    from litellm.proxy.utils import ProxyLogging

    from toolrepair.integrations.litellm import ToolRepairLogger

    logger = ToolRepairLogger(deny=["delete_file"])
    saved = list(litellm.callbacks)
    litellm.callbacks = [logger]
    try:
        yield ProxyLogging(user_api_key_cache=DualCache()), UserAPIKeyAuth(api_key="sk-test")
    finally:
        litellm.callbacks = saved


@pytest.mark.parametrize(
    ("turn", "content", "calls"),
    [
        (SCRIPT[0], "", [("web_search", {"query": "cats", "limit": 2})]),
        (SCRIPT[1], "Again. ", [("web_search", {"query": "dogs"})]),
        (SCRIPT[4], "Tool 'delete_file' is not allowed.", []),
        ({"mock_response": "Done."}, "Done.", []),
    ],
)
def test_the_proxy_success_hook(proxy_logging: Any, turn: dict, content: str, calls: list) -> None:
    logging, key = proxy_logging
    data = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x"}], "tools": TOOLS_PAYLOAD}
    response = litellm.completion(**data, **turn)
    out = asyncio.run(logging.post_call_success_hook(data=data, response=response, user_api_key_dict=key))
    message = out.choices[0].message
    assert (message.content or "") == content
    assert [(tc.function.name, json.loads(tc.function.arguments)) for tc in message.tool_calls or []] == calls
    assert out.choices[0].finish_reason == ("tool_calls" if calls else "stop")


def test_the_proxy_streaming_hook(proxy_logging: Any) -> None:
    logging, key = proxy_logging
    data = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x"}], "tools": TOOLS_PAYLOAD}
    text = (
        "Sure. "
        + HERMES.format(name="delete_file", arguments='{"path": "/"}')
        + HERMES.format(name="web_search", arguments='{"query": "cats"}')
    )

    async def main(request: dict[str, Any]) -> list[Any]:
        upstream = await litellm.acompletion(**data, mock_response=text, stream=True)
        return [
            c
            async for c in logging.async_post_call_streaming_iterator_hook(
                response=upstream, user_api_key_dict=key, request_data=request
            )
        ]

    chunks = asyncio.run(main(data))
    shown = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert shown == "Sure. \nTool 'delete_file' is not allowed."
    assert [tc.function.name for c in chunks for tc in c.choices[0].delta.tool_calls or []] == ["web_search"]
    # A request that offers no tools streams through untouched.
    untouched = asyncio.run(main({"model": "gpt-4o-mini", "messages": data["messages"]}))
    assert "".join(c.choices[0].delta.content or "" for c in untouched) == text


def test_the_proxy_hook_with_a_fixed_registry_and_non_chat_responses() -> None:
    from toolrepair.integrations.litellm import ToolRepairLogger

    logger = ToolRepairLogger(_registry())
    response = litellm.completion(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], **_native("WebSearch", '{"query": "q"}')
    )
    out = asyncio.run(logger.async_post_call_success_hook({}, None, response))
    assert out.choices[0].message.tool_calls[0].function.name == "web_search"
    assert asyncio.run(logger.async_post_call_success_hook({}, None, "not a completion")) == "not a completion"
    assert asyncio.run(ToolRepairLogger().async_post_call_success_hook({}, None, response)) is response


# -- reasoning read from the text ----------------------------------------------------------------
_THOUGHT_CALL = '<think>Plan.</think>Sure. <tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'


@pytest.mark.parametrize(("upstream", "expected"), [(None, "Plan."), ("UP", "UP\n\nPlan.")])
def test_streamed_reasoning_read_from_the_text_goes_to_reasoning_content(upstream: str | None, expected: str) -> None:
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    def chunk(delta: Delta, finish: str | None = None) -> ModelResponseStream:
        return ModelResponseStream(
            id="chatcmpl-r", model="m", choices=[StreamingChoices(index=0, delta=delta, finish_reason=finish)]
        )

    pieces = [chunk(Delta(role="assistant", reasoning_content=upstream))] if upstream else []
    pieces += [chunk(Delta(content=ch)) for ch in _THOUGHT_CALL]
    pieces.append(chunk(Delta(), "stop"))
    out = list(repair_stream(pieces, _registry()))
    deltas = [c.choices[0].delta for c in out]
    assert "".join(getattr(d, "reasoning_content", None) or "" for d in deltas) == expected
    assert "".join(d.content or "" for d in deltas) == "Sure. "
    assert [tc.function.name for d in deltas for tc in d.tool_calls or ()] == ["web_search"]


def test_whole_reasoning_read_from_the_text_goes_to_reasoning_content() -> None:
    from toolrepair.integrations.litellm import repaired_message

    fixed = repaired_message({"role": "assistant", "content": _THOUGHT_CALL, "reasoning_content": "UP"}, _registry())
    assert (fixed["content"], fixed["reasoning_content"]) == ("Sure. ", "UP\n\nPlan.")


# -- whole and streamed give the same content -----------------------------------------------------
_HERMES_CALL = '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Sure. " + _HERMES_CALL, "Sure. "),
        ("Sure.\n" + _HERMES_CALL, "Sure."),
        ("  " + _HERMES_CALL + "  ", ""),
        (_HERMES_CALL + " Done. ", "Done. "),
        ("Sure. " + _HERMES_CALL + "\n\nDone.\n", "Sure. \n\nDone.\n"),
        ("a\t" + _HERMES_CALL + "\tb", "a\t\tb"),
    ],
)
def test_whole_and_streamed_content_agree(text: str, content: str) -> None:
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    from toolrepair.integrations.litellm import repaired_message

    def chunk(delta: Delta, finish: str | None = None) -> ModelResponseStream:
        return ModelResponseStream(
            id="chatcmpl-w", model="m", choices=[StreamingChoices(index=0, delta=delta, finish_reason=finish)]
        )

    whole = repaired_message({"role": "assistant", "content": text}, _registry())
    for size in (1, 3, len(text)):
        pieces = [chunk(Delta(content=text[i : i + size])) for i in range(0, len(text), size)]
        out = list(repair_stream([*pieces, chunk(Delta(), "stop")], _registry()))
        streamed = "".join(c.choices[0].delta.content or "" for c in out)
        names = [tc.function.name for c in out for tc in c.choices[0].delta.tool_calls or ()]
        assert (streamed, names) == (content, ["web_search"]), size
    assert ((whole["content"] or ""), [c["function"]["name"] for c in whole["tool_calls"]]) == (content, ["web_search"])
