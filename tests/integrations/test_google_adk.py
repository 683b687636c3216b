"""toolrepair.integrations.google_adk against real Google ADK: an LlmAgent run by InMemoryRunner
over a scripted fake BaseLlm, with ToolRepairPlugin (whole responses and SSE streaming)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

import toolrepair as tr

pytest.importorskip("google.adk")
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from toolrepair.integrations.google_adk import ToolRepairPlugin

RAN: list[tuple[str, Any]] = []
HERMES = '<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    RAN.append(("web_search", (query, limit)))
    return f"{limit} results for {query}"


def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(("delete_file", path))
    return "deleted"


def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


def _call(name: str, args: dict[str, Any], ident: str | None = None) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=ident))


def _text(text: str) -> types.Part:
    return types.Part(text=text)


class ScriptedLlm(BaseLlm):
    """A fake model: one list of parts per turn; it records each request's last content."""

    script: list[list[types.Part]]
    seen: list[Any] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append(llm_request.contents[-1])
        parts = self.script.pop(0)
        if stream and all(p.text for p in parts):
            text = "".join(p.text for p in parts)
            for start in range(0, len(text), 6):
                yield LlmResponse(
                    content=types.Content(role="model", parts=[_text(text[start : start + 6])]), partial=True
                )
        yield LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)


SCRIPT = [
    [_call("WebSearch", {"query": "cats", "limit": "2"}, "c_drift")],  # drifted name, a string for an int
    [_text("Again. " + HERMES.format(name="web_search", arguments='{"query": "dogs"}'))],  # a text call
    [_call("image_search", {"query": "otters"}, "c_unknown")],  # a tool never offered
    [_call("web_search", {"query": "otters"}, "c_next")],  # ... the next turn succeeds
    [_call("delete_file", {"path": "/"}, "c_denied"), _call("read_file", {"path": "/x"}, "c_fail")],
    [_call("web_search", {"limit": 2})],  # no id, bad arguments
    [_text("Done.")],
]


def _run(
    script: list[list[types.Part]], registry: tr.ToolRegistry, *, stream: bool = False
) -> tuple[ScriptedLlm, list[Any]]:
    RAN.clear()
    llm = ScriptedLlm(model="scripted", script=list(script), seen=[])
    agent = LlmAgent(name="scripted", model=llm, tools=[web_search, delete_file, read_file])
    runner = InMemoryRunner(app=App(name="t", root_agent=agent, plugins=[ToolRepairPlugin(registry)]))

    async def main() -> list[Any]:
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id=session.id,
                run_config=config,
                new_message=types.Content(role="user", parts=[_text("go")]),
            )
        ]
        await runner.close()
        return events

    return llm, asyncio.run(main())


def _responses(llm: ScriptedLlm) -> dict[str, Any]:
    return {
        p.function_response.id: p.function_response.response
        for c in llm.seen
        for p in c.parts or []
        if p.function_response is not None
    }


def _registry() -> tr.ToolRegistry:
    return tr.ToolRegistry([web_search, delete_file, read_file], deny=["delete_file"])


def _check(llm: ScriptedLlm, events: list[Any]) -> None:
    assert RAN == [("web_search", ("cats", 2)), ("web_search", ("dogs", 3)), ("web_search", ("otters", 3))]
    got = _responses(llm)
    assert got["c_drift"] == {"result": "2 results for cats"}
    assert got["c_unknown"] == {
        "error": "Tool 'image_search' not found. Did you mean 'web_search'? "
        "Available tools: ['delete_file', 'read_file', 'web_search']"
    }
    assert got["c_next"] == {"result": "3 results for otters"}
    assert got["c_denied"] == {"error": "Tool 'delete_file' is not allowed."}
    assert got["c_fail"] == {"error": "No such file: /x"}
    salvaged = [v for k, v in got.items() if k.startswith("call_") and "result" in v]
    assert salvaged == [{"result": "3 results for dogs"}]
    [bad] = [v for k, v in got.items() if k.startswith("call_") and "error" in v]
    assert "Expected parameters for 'web_search'" in bad["error"]
    assert events[-1].content.parts[0].text == "Done."


def test_a_run_through_every_case() -> None:
    _check(*_run(SCRIPT, _registry()))


def test_a_streamed_run_never_shows_the_markup() -> None:
    # With the model's profile the partial text streams (without one it waits for the reply's end).
    registry = tr.ToolRegistry([web_search, delete_file, read_file], deny=["delete_file"], model="hermes")
    llm, events = _run(SCRIPT, registry, stream=True)
    _check(llm, events)
    shown = "".join(p.text for e in events if e.partial and e.content for p in e.content.parts if p.text)
    assert "<tool_call>" not in shown and "tool_call" not in shown
    assert shown.startswith("Again.") and shown.endswith("Done.")


@pytest.mark.parametrize(
    "policy", [{"allow": ["web_search", "read_file"]}, {"before_call": lambda call: call.name != "delete_file"}]
)
def test_a_denied_text_call_never_runs(policy: dict) -> None:
    script = [[_text(HERMES.format(name="DeleteFile", arguments='{"path": "/"}'))], [_text("OK.")]]
    llm, events = _run(script, tr.ToolRegistry([web_search, delete_file, read_file], **policy))
    assert RAN == []
    [(ident, response)] = _responses(llm).items()
    assert ident.startswith("call_") and response["error"].startswith("Tool 'delete_file' ")
    assert events[-1].content.parts[0].text == "OK."


def test_the_hooks_on_calls_no_response_carried() -> None:
    from types import SimpleNamespace

    plugin = ToolRepairPlugin(_registry())
    context = SimpleNamespace(function_call_id="c_late")

    async def main() -> None:
        args = {"query": "x", "limit": "4"}
        assert (
            await plugin.before_tool_callback(
                tool=SimpleNamespace(name="web_search"), tool_args=args, tool_context=context
            )
            is None
        )
        assert args == {"query": "x", "limit": 4}  # repaired in place, for the tool ADK runs next
        refused = await plugin.before_tool_callback(
            tool=SimpleNamespace(name="delete_file"), tool_args={"path": "/"}, tool_context=context
        )
        assert refused == {"error": "Tool 'delete_file' is not allowed."}
        ghost = SimpleNamespace(name="web_serch")
        assert await plugin.before_tool_callback(tool=ghost, tool_args={}, tool_context=context) is None
        assert await plugin.on_tool_error_callback(
            tool=ghost, tool_args={}, tool_context=context, error=ValueError("lookup")
        ) == {
            "error": "Tool 'web_serch' not found. Did you mean 'web_search'? "
            "Available tools: ['delete_file', 'read_file', 'web_search']"
        }
        empty = LlmResponse(content=types.Content(role="model", parts=[]))
        assert await plugin.after_model_callback(callback_context=None, llm_response=empty) is None
        thought = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="hmm", thought=True)]))
        assert await plugin.after_model_callback(callback_context=None, llm_response=thought) is None
        plain = LlmResponse(content=types.Content(role="model", parts=[_text("Just words.")]))
        assert await plugin.after_model_callback(callback_context=None, llm_response=plain) is None

    asyncio.run(main())
