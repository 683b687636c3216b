"""openai-agents: Runner.run over a scripted fake Model wrapped by ToolRepair.

    python examples/openai_agents_example.py

Offline: the fake Model replays a drifted name with broken JSON (which the SDK alone would turn
into ModelBehaviorError), an unknown tool (which alone would end the run), a denied tool and an
answer. Needs `pip install 'toolrepair[openai_agents]'`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

from toolrepair.integrations.openai_agents import ToolRepair


@function_tool
def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@function_tool
def delete_file(path: str) -> str:
    """Delete a file."""
    raise RuntimeError("never runs: the policy denies it")


def call(name: str, arguments: str, call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", call_id=call_id, name=name, arguments=arguments)


class ScriptedModel(Model):
    def __init__(self) -> None:
        self.turns = iter(
            [
                [call("GetWeather", "{'city': 'Oslo', 'days': '2',}", "c1")],
                [call("get_forecast", '{"city": "Bergen"}', "c2")],
                [call("delete_file", '{"path": "/tmp/x"}', "c3")],
                [
                    ResponseOutputMessage.model_validate(
                        {
                            "type": "message",
                            "id": "m1",
                            "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": "Sunny in Oslo.", "annotations": []}],
                        }
                    )
                ],
            ]
        )
        self.seen: set[str] = set()

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        for item in input if isinstance(input, list) else []:
            fresh = isinstance(item, dict) and item.get("type") == "function_call_output"
            if fresh and item["call_id"] not in self.seen:
                self.seen.add(item["call_id"])
                print(f"  result {item['call_id']}: {item['output']}")
        return ModelResponse(output=next(self.turns), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main() -> None:
    set_tracing_disabled(True)
    repair = ToolRepair(deny=["delete_file"])
    agent = Agent(name="weather", model=repair.model(ScriptedModel()), tools=[get_weather, delete_file])
    result = await Runner.run(agent, "Weather in Oslo, then clean up.", run_config=repair.run_config())
    print("answer:", result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
