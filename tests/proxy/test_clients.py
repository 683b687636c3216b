"""Real clients against the proxy: each gets native tool_calls from a model that wrote them as text.

The OpenAI SDK (sync and async, whole and streamed), LiteLLM's SDK and LangChain's ChatOpenAI
talk to the proxy on loopback exactly as users point them at it (``base_url``/``api_base``).
"""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from typing import Any

import pytest

from .replies import TOOLS

openai = pytest.importorskip("openai")

WANT = [("web_search", {"query": "cats", "limit": 3})]
MESSAGES = [{"role": "user", "content": "find cats"}]


def _calls(tool_calls: Any) -> list[tuple[str, Any]]:
    return [(tc.function.name, json.loads(tc.function.arguments)) for tc in tool_calls or ()]


@pytest.mark.parametrize("model", ["vllm/whole/hermes", "ollama/char/qwen3_xml", "llamacpp/token/hermes"])
def test_openai_sdk_sync(proxy: str, model: str) -> None:
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    try:
        reply = client.chat.completions.create(model=model, messages=MESSAGES, tools=TOOLS)
        assert _calls(reply.choices[0].message.tool_calls) == WANT
        assert reply.choices[0].finish_reason == "tool_calls"
        assert reply.choices[0].message.tool_calls[0].id.startswith("call_")
        with client.chat.completions.stream(model=model, messages=MESSAGES, tools=TOOLS) as stream:
            final = stream.get_final_completion()
        assert _calls(final.choices[0].message.tool_calls) == WANT
        assert final.choices[0].finish_reason == "tool_calls"
        raw = client.chat.completions.with_raw_response.create(model=model, messages=MESSAGES, tools=TOOLS)
        assert raw.headers["x-toolrepair"].startswith("repaired=1, salvaged=1")
    finally:
        client.close()


def test_openai_sdk_async(proxy: str) -> None:
    async def main() -> None:
        client = openai.AsyncOpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
        try:
            reply = await client.chat.completions.create(
                model="lmstudio/whole/qwen3_xml", messages=MESSAGES, tools=TOOLS
            )
            assert _calls(reply.choices[0].message.tool_calls) == WANT
            stream = await client.chat.completions.create(
                model="lmstudio/char/qwen3_xml", messages=MESSAGES, tools=TOOLS, stream=True
            )
            deltas = [chunk async for chunk in stream]
            calls = [tc for chunk in deltas for choice in chunk.choices for tc in choice.delta.tool_calls or ()]
            assert _calls(calls) == WANT
            assert deltas[-1].choices[0].finish_reason == "tool_calls"
        finally:
            await client.close()

    asyncio.run(main())


def test_openai_sdk_raises_on_a_broken_stream(proxy: str) -> None:
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    try:
        stream = client.chat.completions.create(model="fault/cut", messages=MESSAGES, tools=TOOLS, stream=True)
        with pytest.raises(openai.APIError, match=r"closed the stream|broke off"):
            for _ in stream:
                pass
    finally:
        client.close()


@pytest.fixture(scope="module")
def litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of the price list
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytest.importorskip("litellm")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_litellm_sdk(proxy: str, litellm: Any) -> None:
    reply = litellm.completion(
        model="openai/vllm/token/hermes", api_base=f"{proxy}/v1", api_key="sk-test", messages=MESSAGES, tools=TOOLS
    )
    assert _calls(reply.choices[0].message.tool_calls) == WANT
    chunks = list(
        litellm.completion(
            model="openai/ollama/char/hermes",
            api_base=f"{proxy}/v1",
            api_key="sk-test",
            messages=MESSAGES,
            tools=TOOLS,
            stream=True,
        )
    )
    built = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    assert _calls(built.choices[0].message.tool_calls) == WANT
    assert built.choices[0].message.content in (None, "", "Let me look. ")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_langchain_chat_openai(proxy: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        langchain_openai = pytest.importorskip("langchain_openai")

    def web_search(query: str, limit: int = 5) -> str:
        """Search the web."""
        return query

    def get_weather(city: str) -> str:
        """Weather for a city."""
        return city

    llm = langchain_openai.ChatOpenAI(
        model="vllm/token/qwen3_xml", base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0
    )
    bound = llm.bind_tools([web_search, get_weather])
    message = bound.invoke("find cats")
    assert [(c["name"], c["args"]) for c in message.tool_calls] == WANT
    assert message.tool_calls[0]["id"].startswith("call_")
    total = None
    for chunk in bound.stream("find cats"):
        total = chunk if total is None else total + chunk
    assert total is not None
    assert [(c["name"], c["args"]) for c in total.tool_calls] == WANT
