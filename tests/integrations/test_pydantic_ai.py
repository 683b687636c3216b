"""toolrepair.integrations.pydantic_ai against real pydantic-ai: an Agent run by FunctionModel
(whole replies and streamed ones) with the ToolRepair capability."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest

import toolrepair as tr

pytest.importorskip("pydantic_ai")
from pydantic import Field
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    RetryPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolrepair.integrations.pydantic_ai import ToolRepair

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


def _scripted(script: list[ModelResponse], seen: list[ModelMessage]) -> FunctionModel:
    replies = iter(script)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages[-1])
        return next(replies)

    return FunctionModel(model)


def _agent(script: list[ModelResponse], seen: list[ModelMessage], **policy: Any) -> Agent:
    RAN.clear()
    return Agent(_scripted(script, seen), tools=[web_search, delete_file], capabilities=[ToolRepair(**policy)])


def _results(message: ModelMessage) -> list[tuple[str, str]]:
    assert isinstance(message, ModelRequest)
    return [
        (p.tool_name or "", p.model_response() if isinstance(p, RetryPromptPart) else str(p.content))
        for p in message.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    ]


SCRIPT = [
    ModelResponse(parts=[ToolCallPart("WebSearch", '{"query": "cats", "limit": "2",}', tool_call_id="c_drift")]),
    ModelResponse(parts=[TextPart("Again. " + HERMES.format(name="web_search", arguments='{"query": "dogs"}'))]),
    ModelResponse(parts=[ToolCallPart("image_search", '{"query": "otters"}', tool_call_id="c_unknown")]),
    ModelResponse(parts=[ToolCallPart("web_search", '{"query": "otters"}', tool_call_id="c_next")]),
    ModelResponse(parts=[ToolCallPart("DeleteFile", '{"path": "/"}', tool_call_id="c_denied")]),
    ModelResponse(parts=[TextPart("Done.")]),
]


def test_an_agent_run_through_every_case() -> None:
    seen: list[ModelMessage] = []
    result = asyncio.run(_agent(SCRIPT, seen, deny=["delete_file"]).run("find things"))
    assert result.output == "Done."
    assert RAN == [("web_search", ("cats", 2)), ("web_search", ("dogs", 3)), ("web_search", ("otters", 3))]
    assert _results(seen[1]) == [("web_search", "2 results for cats")]
    assert _results(seen[2]) == [("web_search", "3 results for dogs")]
    # A tool never offered: pydantic-ai's own retry prompt names the tools; the next turn succeeds.
    [(name, unknown)] = _results(seen[3])
    assert name == "image_search" and "Unknown tool name: 'image_search'" in unknown and "'web_search'" in unknown
    assert _results(seen[4]) == [("web_search", "3 results for otters")]
    # Denied: never validated, never run; the refusal is the call's result.
    assert _results(seen[5]) == [("delete_file", "Tool 'delete_file' is not allowed.")]
    # The history records the calls that ran: repaired names and arguments, salvaged text cut.
    responses = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    assert responses[0].parts[0].tool_name == "web_search" and responses[0].parts[0].args == {
        "query": "cats",
        "limit": 2,
    }
    assert [type(p).__name__ for p in responses[1].parts] == ["TextPart", "ToolCallPart"]
    assert responses[1].parts[0].content == "Again. "


@pytest.mark.parametrize(
    "policy",
    [{"deny": ["delete_file"]}, {"allow": ["web_search"]}, {"before_call": lambda call: call.name != "delete_file"}],
)
def test_a_denied_text_call_never_runs(policy: dict) -> None:
    seen: list[ModelMessage] = []
    script = [
        ModelResponse(parts=[TextPart(HERMES.format(name="delete_file", arguments='{"path": "/"}'))]),
        ModelResponse(parts=[TextPart("OK.")]),
    ]
    assert asyncio.run(_agent(script, seen, **policy).run("x")).output == "OK."
    assert RAN == []
    [(name, refusal)] = _results(seen[1])
    assert name == "delete_file" and refusal.startswith("Tool 'delete_file' ")


def test_arguments_that_cannot_be_repaired_get_the_corrective_message() -> None:
    seen: list[ModelMessage] = []
    script = [
        ModelResponse(parts=[ToolCallPart("web_search", '{"limit": 2}', tool_call_id="c_bad")]),
        ModelResponse(parts=[ToolCallPart("web_search", '{"query": "x"}', tool_call_id="c_good")]),
        ModelResponse(parts=[TextPart("OK.")]),
    ]
    assert asyncio.run(_agent(script, seen).run("x")).output == "OK."
    [(name, message)] = _results(seen[1])
    assert name == "web_search" and "Expected parameters for 'web_search'" in message
    assert RAN == [("web_search", ("x", 3))]


def positive(limit: Annotated[int, Field(gt=0)]) -> str:
    """Constrained beyond what the registry's schema says."""
    return f"limit {limit}"


def test_validation_errors_pydantic_finds_become_a_corrective_message() -> None:
    seen: list[ModelMessage] = []
    loose = tr.ToolRegistry(
        [
            tr.ToolSpec(
                "positive", {"type": "object", "properties": {"limit": {"type": "integer"}}, "required": ["limit"]}
            )
        ]
    )
    script = [
        ModelResponse(parts=[ToolCallPart("Positive", '{"limit": "-1"}', tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("OK.")]),
    ]
    agent = Agent(_scripted(script, seen), tools=[positive], capabilities=[ToolRepair(loose)])
    assert asyncio.run(agent.run("x")).output == "OK."
    [(name, message)] = _results(seen[1])
    assert name == "positive" and message.startswith(
        "Invalid arguments for 'positive': limit: Input should be greater than 0."
    )
    assert "Expected parameters for 'positive'" in message


# -- streaming -----------------------------------------------------------------------------------
def _streamed(turns: list[list[str]]) -> FunctionModel:
    replies = iter(turns)

    async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in next(replies):
            yield piece

    return FunctionModel(stream_function=model)


def test_streamed_text_never_shows_the_markup() -> None:
    RAN.clear()
    turns = [
        ["Let me ", "look. <tool_", 'call>{"name": "WebSearch", "arguments": {"query": "x"}}</tool_call>', " Now."],
        ['<tool_call>{"name": "delete_file", ', '"arguments": {"path": "/"}}</tool_call>'],
        ["All ", "done."],
    ]
    agent = Agent(
        _streamed(turns),
        tools=[web_search, delete_file],
        capabilities=[ToolRepair(deny=["delete_file"], screen_stream=True)],
    )

    async def main() -> tuple[list[Any], Any]:
        async with agent.run_stream_events("go") as events:
            return [e async for e in events], None

    events, _ = asyncio.run(main())
    shown = "".join(
        e.part.content
        if isinstance(e, PartStartEvent) and isinstance(e.part, TextPart)
        else e.delta.content_delta
        if isinstance(e, PartDeltaEvent) and isinstance(e.delta, TextPartDelta)
        else ""
        for e in events
    )
    assert "<tool_call>" not in shown and "tool_call" not in shown
    assert shown == "Let me look.  Now.All done."
    ends = [type(e.part).__name__ for e in events if isinstance(e, PartEndEvent)]
    # The calls written as text are ToolCallParts in the stream; the middle reply was only a call.
    assert ends == ["TextPart", "ToolCallPart", "ToolCallPart", "TextPart"]
    assert RAN == [("web_search", ("x", 3))]


# -- the hooks on their own, for calls no response carried -----------------------------------------
def test_the_validation_hooks_on_calls_after_model_request_never_saw() -> None:
    from pydantic_ai.exceptions import ModelRetry, SkipToolExecution, SkipToolValidation
    from pydantic_ai.tools import ToolDefinition

    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tool_def = ToolDefinition(name="delete_file", parameters_json_schema=schema)
    capability = ToolRepair(deny=["delete_file"])
    call = ToolCallPart("delete_file", {"path": "/"}, tool_call_id="c_late")

    async def main() -> None:
        with pytest.raises(SkipToolValidation):
            await capability.before_tool_validate(None, call=call, tool_def=tool_def, args={"path": "/"})
        with pytest.raises(SkipToolExecution) as skipped:
            await capability.before_tool_execute(None, call=call, tool_def=tool_def, args={})
        assert skipped.value.result == "Tool 'delete_file' is not allowed."
        allowing = ToolRepair()
        assert await allowing.before_tool_validate(None, call=call, tool_def=tool_def, args='{"path": "/x",}') == {
            "path": "/x"
        }
        assert await allowing.before_tool_execute(None, call=call, tool_def=tool_def, args={"path": "/x"}) == {
            "path": "/x"
        }
        with pytest.raises(ModelRetry, match="Expected parameters for 'delete_file'"):
            await allowing.before_tool_validate(None, call=call, tool_def=tool_def, args="{}")
        retry = ModelRetry("the tool's own validator")
        with pytest.raises(ModelRetry) as raised:
            await allowing.on_tool_validate_error(None, call=call, tool_def=tool_def, args={}, error=retry)
        assert raised.value is retry

    asyncio.run(main())


# -- the defaults ----------------------------------------------------------------------------------
def test_the_defaults_neither_stream_nor_break_a_non_streaming_model() -> None:
    """``ToolRepair()`` as documented: ``agent.run()`` with a FunctionModel that has no
    ``stream_function`` works, and the model is asked for a whole reply, not a stream."""
    asked: list[bool] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.append(True)
        return ModelResponse(parts=[TextPart("plain")])

    agent = Agent(FunctionModel(model), tools=[web_search], capabilities=[ToolRepair()])
    assert asyncio.run(agent.run("x")).output == "plain" and asked == [True]
    assert ToolRepair().has_wrap_run_event_stream is False
    assert ToolRepair(screen_stream=True).has_wrap_run_event_stream is True


def test_a_text_call_to_a_tool_never_offered_is_answered_and_the_next_turn_runs() -> None:
    seen: list[ModelMessage] = []
    script = [
        ModelResponse(
            parts=[TextPart("Looking. " + HERMES.format(name="image_search", arguments='{"query": "otters"}'))]
        ),
        ModelResponse(parts=[TextPart(HERMES.format(name="web_search", arguments='{"query": "otters"}'))]),
        ModelResponse(parts=[TextPart("Otters found.")]),
    ]
    result = asyncio.run(_agent(script, seen).run("otters"))
    assert result.output == "Otters found."
    [(name, retry)] = _results(seen[1])
    assert name == "image_search" and "Unknown tool name: 'image_search'" in retry and "'web_search'" in retry
    assert _results(seen[2]) == [("web_search", "3 results for otters")]
    first = next(m for m in result.all_messages() if isinstance(m, ModelResponse))
    assert [type(p).__name__ for p in first.parts] == ["TextPart", "ToolCallPart"] and first.parts[
        0
    ].content == "Looking. "
