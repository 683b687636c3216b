"""pydantic-ai: an Agent with the ToolRepair capability, driven by a scripted FunctionModel.

    python examples/pydantic_ai_example.py

Offline: FunctionModel replays a drifted name with broken JSON, a Llama-style pythonic call
left as text, a denied tool, then an answer. Needs `pip install 'toolrepair[pydantic_ai]'`.
"""

from __future__ import annotations

import asyncio

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolrepair.integrations.pydantic_ai import ToolRepair


def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


def delete_file(path: str) -> str:
    """Delete a file."""
    raise RuntimeError("never runs: the policy denies it")


SCRIPT = iter(
    [
        ModelResponse(parts=[ToolCallPart("GetWeather", "{'city': 'Oslo', 'days': '2',}", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart('Bergen too. [get_weather(city="Bergen")]')]),
        ModelResponse(parts=[ToolCallPart("delete_file", '{"path": "/tmp/x"}', tool_call_id="c3")]),
        ModelResponse(parts=[TextPart("Sunny in Oslo and Bergen; I may not delete files.")]),
    ]
)


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if isinstance(last, ModelRequest):
        for part in last.parts:
            if isinstance(part, ToolReturnPart):
                print(f"  tool {part.tool_name} -> {part.content}")
    return next(SCRIPT)


async def main() -> None:
    agent = Agent(
        FunctionModel(model),
        tools=[get_weather, delete_file],
        capabilities=[ToolRepair(deny=["delete_file"], screen_stream=False)],
    )
    result = await agent.run("Weather in Oslo and Bergen, then clean up.")
    print("answer:", result.output)


if __name__ == "__main__":
    asyncio.run(main())
