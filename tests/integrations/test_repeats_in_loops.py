"""Repeated calls, in each integration: the same call (name and canonical arguments) past
``max_repeats`` (default 3) within a turn is not run; the model gets the registry's corrective
message, which says the call was repeated, and the run goes on.

The registry's repeated-call detection (``ToolRegistry(max_repeats=...)``), seen through each
framework's own loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolrepair as tr

RAN: list[str] = []


def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    RAN.append(query)
    return f"{limit} results for {query}"


def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


OK = "3 results for cats"
TIMES = 4  # one past the default max_repeats


def _check(answers: list[str]) -> None:
    """Three identical calls ran, the fourth was answered with the corrective message."""
    assert RAN == ["cats"] * 3
    assert answers[:3] == [OK] * 3
    assert "has already run 3 times" in answers[3] and answers[3] != OK


def test_the_registry_itself() -> None:
    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    with registry.turn():
        outcomes = [registry.run({"name": "web_search", "arguments": {"query": "cats"}}) for _ in range(TIMES)]
    _check([o.content for o in outcomes])
    assert not outcomes[3].ok and any(e.kind == "repeat" for e in registry.events)
    # Arguments spelled differently, canonically the same: still a repeat.
    RAN.clear()
    with registry.turn():
        for arguments in ({"query": "cats"}, '{"query": "cats"}', ' {"query":"cats"} '):
            registry.run({"name": "web_search", "arguments": arguments})
        assert "has already run 3 times" in registry.run({"name": "web_search", "arguments": {"query": "cats"}}).content
    # max_repeats=None turns it off.
    RAN.clear()
    free = tr.ToolRegistry([web_search], max_repeats=None)
    with free.turn():
        assert all(free.run({"name": "web_search", "arguments": {"query": "cats"}}).ok for _ in range(TIMES))


def test_openai() -> None:
    from toolrepair.integrations.openai import repair_chat_message, tool_calls, tool_result_message

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "cats"}'}}
            for i in range(TIMES)
        ],
    }
    with registry.turn():
        repaired = repair_chat_message(message, registry)
        answers = [tool_result_message(registry.run(call))["content"] for call in tool_calls(repaired)]
    # The fourth is answered with its ready tool message, never run.
    _check(answers + [e["tool_message"]["content"] for e in repaired["toolrepair_errors"]])


def test_anthropic() -> None:
    from toolrepair.integrations.anthropic import repair_message, tool_calls, tool_result_block

    RAN.clear()
    registry = tr.ToolRegistry([web_search])
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "web_search", "input": {"query": "cats"}} for i in range(TIMES)
        ],
    }
    with registry.turn():
        repaired = repair_message(message, registry)
        answers = [tool_result_block(registry.run(call))["content"] for call in tool_calls(repaired)]
    _check(answers + [e["message"] for e in repaired["toolrepair_errors"]])


def test_langchain_create_agent() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    from toolrepair.integrations.langchain import ToolRepairMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    RAN.clear()
    tools = [tool(web_search)]
    calls = [
        {"name": "web_search", "args": {"query": "cats"}, "id": f"c{i}", "type": "tool_call"} for i in range(TIMES)
    ]
    script = iter([AIMessage(content="", tool_calls=calls), AIMessage(content="Done.")])
    agent = create_agent(Scripted(messages=script), tools, middleware=[ToolRepairMiddleware(tr.ToolRegistry(tools))])
    result = agent.invoke({"messages": [HumanMessage("cats?")]})
    answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    _check(answers)
    assert result["messages"][-1].content == "Done."


def test_pydantic_ai() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import FunctionModel

    from toolrepair.integrations.pydantic_ai import ToolRepair

    RAN.clear()
    seen: list[Any] = []
    script = iter(
        [
            ModelResponse(
                parts=[ToolCallPart("web_search", {"query": "cats"}, tool_call_id=f"c{i}") for i in range(TIMES)]
            ),
            ModelResponse(parts=[TextPart("Done.")]),
        ]
    )

    def model(messages: list[Any], info: Any) -> Any:
        seen.append(messages[-1])
        return next(script)

    agent = Agent(FunctionModel(model), tools=[web_search], capabilities=[ToolRepair()])
    assert asyncio.run(agent.run("cats?")).output == "Done."
    request = seen[1]
    assert isinstance(request, ModelRequest)
    answers = [
        p.model_response() if isinstance(p, RetryPromptPart) else str(p.content)
        for p in request.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    ]
    assert RAN == ["cats"] * 3 and answers[:3] == [OK] * 3 and "has already run 3 times" in answers[3]


def test_openai_agents() -> None:
    pytest.importorskip("agents")
    from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

    from toolrepair.integrations.openai_agents import ToolRepair

    done = ResponseOutputMessage.model_validate(
        {
            "type": "message",
            "id": "m",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        }
    )
    calls = [
        ResponseFunctionToolCall(
            type="function_call",
            call_id=f"c{i}",
            name="web_search",
            arguments='{"query": "cats"}',
            id=f"fc{i}",
            status="completed",
        )
        for i in range(TIMES)
    ]

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            self.script, self.inputs = iter([calls, [done]]), []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self.inputs.append(input)
            return ModelResponse(output=next(self.script), usage=Usage(), response_id=None)

        async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
            raise NotImplementedError
            yield

    RAN.clear()
    model, repair = Scripted(), ToolRepair()
    agent = Agent(name="a", model=repair.model(model), tools=[function_tool(web_search)])
    assert asyncio.run(Runner.run(agent, "cats?", run_config=repair.run_config())).final_output == "Done."
    answers = [i["output"] for i in model.inputs[-1] if isinstance(i, dict) and i.get("type") == "function_call_output"]
    _check(answers)
