"""Google ADK: an LlmAgent run by InMemoryRunner over a scripted fake BaseLlm, with ToolRepairPlugin.

    python examples/google_adk_example.py

Offline: the fake model replays a drifted name, an unknown tool, a denied tool, a call written as
text, then an answer. Needs `pip install 'toolrepair[google_adk]'`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

import toolrepair as tr
from toolrepair.integrations.google_adk import ToolRepairPlugin


def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


def delete_file(path: str) -> str:
    """Delete a file."""
    raise RuntimeError("never runs: the policy denies it")


def call(name: str, args: dict[str, Any], ident: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=ident))


class ScriptedLlm(BaseLlm):
    script: list[list[types.Part]]

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        for part in llm_request.contents[-1].parts or []:
            if part.function_response is not None:
                print(f"  {part.function_response.name} -> {part.function_response.response}")
        yield LlmResponse(content=types.Content(role="model", parts=self.script.pop(0)))


SCRIPT = [
    [call("GetWeather", {"city": "Oslo", "days": "2"}, "c1")],
    [call("get_forecast", {"city": "Bergen"}, "c2")],
    [call("delete_file", {"path": "/tmp/x"}, "c3")],
    [types.Part(text='Bergen then. <tool_call>{"name": "get_weather", "arguments": {"city": "Bergen"}}</tool_call>')],
    [types.Part(text="Sunny in Oslo and Bergen.")],
]


async def main() -> None:
    registry = tr.ToolRegistry([get_weather, delete_file], deny=["delete_file"])
    agent = LlmAgent(
        name="weather", model=ScriptedLlm(model="scripted", script=SCRIPT), tools=[get_weather, delete_file]
    )
    runner = InMemoryRunner(app=App(name="example", root_agent=agent, plugins=[ToolRepairPlugin(registry)]))
    session = await runner.session_service.create_session(app_name="example", user_id="me")
    message = types.Content(role="user", parts=[types.Part(text="Weather in Oslo and Bergen?")])
    async for event in runner.run_async(user_id="me", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            print("answer:", event.content.parts[0].text)
    await runner.close()


if __name__ == "__main__":
    asyncio.run(main())
