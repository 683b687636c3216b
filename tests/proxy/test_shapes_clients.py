"""Real clients of the Messages and Responses APIs through the proxy, on loopback, in front of
a scripted upstream serving those routes: the ``anthropic`` SDK, the ``openai`` SDK's Responses
client, and openai-agents' default (Responses) model running an agent end to end."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from toolrepair.proxy import create_app

from .replies import CASES
from .servers import Running
from .shapes import MESSAGE_TOOLS, RESPONSE_TOOLS, ShapedUpstream, serve_shaped

shaped = pytest.fixture(scope="module", name="shaped")(serve_shaped)
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

WANT = [("web_search", {"query": "cats", "limit": 3})]
MESSAGES = [{"role": "user", "content": "find cats"}]


@pytest.fixture(scope="module")
def proxy(shaped: ShapedUpstream) -> Iterator[str]:
    with Running(create_app(upstream=f"{shaped.url}/v1", timeout=30)) as running:  # type: ignore[attr-defined]
        yield running.url


@pytest.fixture(scope="module")
def reprompting(shaped: ShapedUpstream) -> Iterator[str]:
    app = create_app(upstream=f"{shaped.url}/v1", timeout=30, max_reprompts=1)  # type: ignore[attr-defined]
    with Running(app) as running:
        yield running.url


def _anthropic(url: str) -> Any:
    return anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)


def _tool_uses(message: Any) -> list[tuple[str, Any]]:
    return [(b.name, b.input) for b in message.content if b.type == "tool_use"]


def _text(message: Any) -> str:
    return "".join(b.text for b in message.content if b.type == "text")


@pytest.mark.parametrize("chunking", ["whole", "token", "char"])
def test_anthropic_sdk(proxy: str, chunking: str) -> None:
    client = _anthropic(proxy)
    try:
        model = f"{chunking}/hermes"
        reply = client.messages.create(model=model, max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS)
        assert _tool_uses(reply) == WANT
        assert reply.stop_reason == "tool_use"
        assert reply.content[1].id.startswith("toolu_") and _text(reply) == "Let me look. "
        with client.messages.stream(model=model, max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS) as stream:
            final = stream.get_final_message()
        assert final.model_dump() == reply.model_dump()
        raw = client.messages.with_raw_response.create(
            model=model, max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS
        )
        assert raw.headers["x-toolrepair"] == "repaired=1, salvaged=1, refused=0"
    finally:
        client.close()


@pytest.mark.parametrize("key", ["native_drift", "reasoning", "native_mixed", "prose", "mistral"])
def test_anthropic_sdk_each_shape(proxy: str, key: str) -> None:
    _, expected = CASES[key]
    client = _anthropic(proxy)
    try:
        reply = client.messages.create(model=f"token/{key}", max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS)
        with client.messages.stream(
            model=f"char/{key}", max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS
        ) as stream:
            final = stream.get_final_message()
        for message in (reply, final):
            assert _tool_uses(message) == expected.calls
            assert (_text(message) or None) == expected.content
            assert message.stop_reason == ("tool_use" if expected.calls else "end_turn")
        assert [b.type for b in final.content] == [b.type for b in reply.content]
    finally:
        client.close()


def test_anthropic_sdk_async_and_a_broken_stream(proxy: str) -> None:
    async def main() -> None:
        client = anthropic.AsyncAnthropic(base_url=proxy, api_key="sk-test", max_retries=0)
        try:
            async with client.messages.stream(
                model="token/qwen3_xml", max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS
            ) as stream:
                final = await stream.get_final_message()
            assert _tool_uses(final) == WANT
            with pytest.raises(anthropic.APIStatusError, match=r"broke off|closed the stream"):
                async with client.messages.stream(
                    model="fault/cut", max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS
                ) as stream:
                    await stream.get_final_message()
        finally:
            await client.close()

    asyncio.run(main())


def test_anthropic_reprompt_answers_with_an_is_error_tool_result(reprompting: str, shaped: ShapedUpstream) -> None:
    client = _anthropic(reprompting)
    try:
        raw = client.messages.with_raw_response.create(
            model="script/reprompt", max_tokens=100, messages=MESSAGES, tools=MESSAGE_TOOLS
        )
        reply = raw.parse()
    finally:
        client.close()
    assert _tool_uses(reply) == [("web_search", {"query": "fixed"})]
    assert raw.headers["x-toolrepair"] == "repaired=0, salvaged=1, refused=0, reprompts=1"
    corrected = shaped.seen[-1]["messages"]
    assert corrected[-2]["role"] == "assistant" and corrected[-2]["content"][0]["name"] == "send_email"
    result = corrected[-1]["content"][0]
    assert (result["type"], result["is_error"]) == ("tool_result", True)
    assert result["tool_use_id"] == corrected[-2]["content"][0]["id"]
    assert "Tool 'send_email' not found" in result["content"]


def _plain(output: list[Any]) -> list[dict[str, Any]]:
    # a streamed response is a ParsedResponse: its items carry `parsed` fields besides
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("parsed", "parsed_arguments")}
        return [strip(v) for v in value] if isinstance(value, list) else value

    return [strip(item.model_dump(mode="json", exclude_none=True)) for item in output]


@pytest.mark.parametrize("chunking", ["whole", "token", "char"])
def test_openai_responses(proxy: str, chunking: str) -> None:
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    try:
        model = f"{chunking}/hermes"
        reply = client.responses.create(model=model, input="find cats", tools=RESPONSE_TOOLS)
        calls = [(i.name, json.loads(i.arguments)) for i in reply.output if i.type == "function_call"]
        assert calls == WANT and reply.output_text == "Let me look. "
        assert reply.output[1].call_id.startswith("call_")
        with client.responses.stream(model=model, input="find cats", tools=RESPONSE_TOOLS) as stream:
            final = stream.get_final_response()
        assert _plain(final.output) == _plain(reply.output)
        raw = client.responses.with_raw_response.create(model=model, input="find cats", tools=RESPONSE_TOOLS)
        assert raw.headers["x-toolrepair"] == "repaired=1, salvaged=1, refused=0"
    finally:
        client.close()


@pytest.mark.parametrize("key", ["native_drift", "reasoning", "native_mixed", "prose", "mistral", "harmony"])
def test_openai_responses_each_shape(proxy: str, key: str) -> None:
    _, expected = CASES[key]
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    try:
        reply = client.responses.create(model=f"token/{key}", input="find cats", tools=RESPONSE_TOOLS)
        with client.responses.stream(model=f"char/{key}", input="find cats", tools=RESPONSE_TOOLS) as stream:
            final = stream.get_final_response()
        for response in (reply, final):
            calls = [(i.name, json.loads(i.arguments)) for i in response.output if i.type == "function_call"]
            assert calls == expected.calls
            assert (response.output_text or None) == expected.content
        assert [i.type for i in final.output] == [i.type for i in reply.output]
    finally:
        client.close()


def test_openai_responses_broken_stream_raises(proxy: str) -> None:
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    try:
        with (
            pytest.raises(openai.APIError, match=r"broke off|closed the stream"),
            client.responses.stream(model="fault/cut", input="find cats", tools=RESPONSE_TOOLS) as stream,
        ):
            stream.get_final_response()
    finally:
        client.close()


def test_routes_without_tools_pass_through(proxy: str) -> None:
    body = {"model": "whole/hermes", "max_tokens": 10, "messages": MESSAGES}
    response = httpx.post(f"{proxy}/v1/messages", json=body, timeout=30)
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=0, refused=0"
    assert "<tool_call>" in response.json()["content"][0]["text"]
    response = httpx.post(f"{proxy}/v1/responses", json={"model": "whole/hermes", "input": "x"}, timeout=30)
    assert "<tool_call>" in response.json()["output"][0]["content"][0]["text"]


@pytest.mark.parametrize("route", ["messages", "responses"])
def test_route_errors(proxy: str, route: str) -> None:
    tools = MESSAGE_TOOLS if route == "messages" else RESPONSE_TOOLS
    response = httpx.post(f"{proxy}/v1/{route}", content=b"[1]", timeout=30)
    assert response.status_code == 400
    response = httpx.post(f"{proxy}/v1/{route}", json={"model": "m", "tools": "x"}, timeout=30)
    assert (response.status_code, response.json()["error"]["param"]) == (400, "tools")
    for stream in (False, True):
        response = httpx.post(
            f"{proxy}/v1/{route}", json={"model": "fault/500", "tools": tools, "stream": stream}, timeout=30
        )
        assert response.status_code == 500 and response.json()["error"]["message"] == "model exploded"


def test_malformed_stream_is_reported(proxy: str) -> None:
    body = {"model": "fault/malformed", "max_tokens": 10, "messages": MESSAGES, "tools": MESSAGE_TOOLS, "stream": True}
    with httpx.stream("POST", f"{proxy}/v1/messages", json=body, timeout=30) as response:
        lines = list(response.iter_lines())
    assert "event: error" in lines
    assert any("malformed event stream" in line for line in lines)
    assert lines[-2].startswith(": x-toolrepair ")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_openai_agents_runner_end_to_end(proxy: str, shaped: ShapedUpstream) -> None:
    agents = pytest.importorskip("agents")
    ran: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"Sunny in {city}."

    client = openai.AsyncOpenAI(base_url=f"{proxy}/v1", api_key="sk-test", max_retries=0)
    # the provider's default model for a name: OpenAIResponsesModel, posting to /v1/responses
    provider = agents.OpenAIProvider(openai_client=client)
    agent = agents.Agent(
        name="weather", instructions="Answer with the tools.", tools=[get_weather], model="script/agent"
    )
    config = agents.RunConfig(model_provider=provider, tracing_disabled=True)
    assert isinstance(provider.get_model("script/agent"), agents.OpenAIResponsesModel)

    async def main() -> Any:
        try:
            return await agents.Runner.run(agent, "Weather in Paris?", run_config=config)
        finally:
            await client.close()

    result = asyncio.run(main())
    assert ran == ["Paris"]  # the call the model wrote as text ran, with the name repaired
    assert result.final_output == "It is sunny in Paris."
    second = shaped.seen[-1]["input"]
    outputs = [i for i in second if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert outputs and outputs[0]["output"] == "Sunny in Paris."
