"""docs/proxy.md's client recipes, run as written against the proxy on loopback: the Claude Code
variables as the Anthropic SDK reads them, the Codex CLI provider's TOML, the openai-agents code."""

from __future__ import annotations

import asyncio
import os
import re
import tomllib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolrepair.proxy import create_app

from .servers import Running
from .shapes import MESSAGE_TOOLS, RESPONSE_TOOLS, ShapedUpstream, serve_shaped

shaped = pytest.fixture(scope="module", name="shaped")(serve_shaped)
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

DOC = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"
DOCUMENTED = "http://127.0.0.1:8787"


def recipe(name: str) -> str:
    """The fenced block after ``<!-- recipe: name -->`` in docs/proxy.md."""
    match = re.search(rf"<!-- recipe: {re.escape(name)} -->\n```[a-z]*\n(.*?)```", DOC.read_text(), re.S)
    assert match is not None, f"no recipe {name!r} in {DOC}"
    return match.group(1)


@pytest.fixture(scope="module")
def keyed(shaped: ShapedUpstream) -> Iterator[str]:
    """A proxy started with ``--api-key unused``, the key the recipes give clients."""
    app = create_app(upstream=f"{shaped.url}/v1", timeout=30, api_key="unused")  # type: ignore[attr-defined]
    with Running(app) as running:
        yield running.url


def _exports(block: str) -> dict[str, str]:
    found = re.findall(r"^export (\w+)=(\S+)", block, re.M)
    assert found
    return dict(found)


def test_claude_code_variables(keyed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = _exports(recipe("claude-code"))
    assert env["ANTHROPIC_BASE_URL"] == DOCUMENTED  # no /v1: the client adds /v1/messages
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.replace(DOCUMENTED, keyed))
    client = anthropic.Anthropic(max_retries=0)  # everything from the environment, as Claude Code reads it
    try:
        reply = client.messages.create(
            model="token/hermes",
            max_tokens=100,
            tools=MESSAGE_TOOLS,
            messages=[{"role": "user", "content": "find cats"}],
        )
    finally:
        client.close()
    assert [(b.name, b.input) for b in reply.content if b.type == "tool_use"] == [
        ("web_search", {"query": "cats", "limit": 3})
    ]
    # Claude Code sends ANTHROPIC_API_KEY as x-api-key, which --api-key does not accept.
    response = httpx.post(
        f"{keyed}/v1/messages",
        headers={"x-api-key": env["ANTHROPIC_AUTH_TOKEN"]},
        timeout=30,
        json={"model": "token/hermes", "max_tokens": 10, "messages": []},
    )
    assert response.status_code == 401


def test_codex_provider(keyed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tomllib.loads(recipe("codex"))
    provider = config["model_providers"][config["model_provider"]]
    assert provider["wire_api"] == "responses" and provider["base_url"] == f"{DOCUMENTED}/v1"
    monkeypatch.setenv(provider["env_key"], "unused")
    # What Codex sends: POST <base_url>/responses with the env_key's value as a Bearer token.
    client = openai.OpenAI(
        base_url=provider["base_url"].replace(DOCUMENTED, keyed), api_key=os.environ[provider["env_key"]], max_retries=0
    )
    try:
        with client.responses.stream(model="char/qwen3_xml", input="find cats", tools=RESPONSE_TOOLS) as stream:
            final = stream.get_final_response()
    finally:
        client.close()
    assert [(i.name, i.arguments) for i in final.output if i.type == "function_call"] == [
        ("web_search", '{"query": "cats", "limit": 3}')
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_openai_agents_recipe(shaped: ShapedUpstream) -> None:
    pytest.importorskip("agents")
    app = create_app(upstream=f"{shaped.url}/v1", timeout=30)  # type: ignore[attr-defined]
    with Running(app) as running:
        code = recipe("openai-agents").replace(DOCUMENTED, running.url)
        code = code.replace('model="qwen3:8b"', 'model="script/agent"')  # the scripted upstream's agent
        namespace: dict[str, Any] = {}
        exec(compile(code, str(DOC), "exec"), namespace)  # the page's own code, as a reader runs it
    assert namespace["result"].final_output == "It is sunny in Paris."


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_openai_agents_default_client_recipe(shaped: ShapedUpstream) -> None:
    pytest.importorskip("agents")
    from agents.models import _openai_shared
    from agents.tracing import get_trace_provider

    tracing = get_trace_provider()
    before = _openai_shared._default_openai_client, getattr(tracing, "_manual_disabled", None)
    app = create_app(upstream=f"{shaped.url}/v1", timeout=30)  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {}
    try:
        with Running(app) as running:
            code = recipe("openai-agents-default").replace(DOCUMENTED, running.url)
            # The scripted upstream's agent, its name with a `/` written as the page says.
            code = code.replace('model="qwen3:8b"', 'model="openai/script/agent"')
            exec(compile(code, str(DOC), "exec"), namespace)  # the page's own code, as a reader runs it
    finally:  # the recipe sets the SDK's globals (0.24's private slots): put them back for other tests
        client = _openai_shared._default_openai_client
        _openai_shared._default_openai_client = before[0]
        if hasattr(tracing, "_manual_disabled"):
            tracing._manual_disabled = before[1]
            tracing._refresh_disabled_flag()
        # run_sync leaves the thread's default loop open on purpose, with the recipe's client's
        # kept-alive connection on it: both closed here, as a script's exit would.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            loop = asyncio.get_event_loop_policy().get_event_loop()
        if client is not None and client is not before[0]:
            loop.run_until_complete(client.close())
        loop.close()
        asyncio.set_event_loop(None)
    assert namespace["result"].final_output == "It is sunny in Paris."
