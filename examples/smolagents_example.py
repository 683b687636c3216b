"""smolagents: a ToolCallingAgent over a scripted smolagents Model wrapped by ToolRepairModel.

    python examples/smolagents_example.py

Offline: the scripted model writes its calls as text (Hermes tags, two in one reply, a Llama
pythonic call), drifts a name and asks for a denied tool. Needs `pip install 'toolrepair[smolagents]'`.
"""

from __future__ import annotations

from typing import Any

from smolagents import ToolCallingAgent, tool
from smolagents.models import ChatMessage, MessageRole, Model

from toolrepair.integrations.smolagents import ToolRepairModel


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city.

    Args:
        city: the city.
        days: how many days.
    """
    return f"{city}: sunny for {days} day(s)"


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: the file.
    """
    raise RuntimeError("never runs: the policy denies it")


REPLIES = [
    '<tool_call>{"name": "GetWeather", "arguments": {"city": "Oslo", "days": "2"}}</tool_call>'
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Bergen"}}</tool_call>',
    '[delete_file(path="/tmp/x")]',
    '<tool_call>{"name": "final_answer", "arguments": {"answer": "Sunny in Oslo and Bergen."}}</tool_call>',
]


class ScriptedModel(Model):
    def __init__(self) -> None:
        super().__init__(model_id="scripted")
        self.replies = iter(REPLIES)

    def generate(self, messages: Any, **kwargs: Any) -> ChatMessage:
        print("  model sees:", str(messages[-1].content)[-90:].replace("\n", " "))
        return ChatMessage(role=MessageRole.ASSISTANT, content=next(self.replies))


def main() -> None:
    agent = ToolCallingAgent(
        tools=[get_weather, delete_file],
        verbosity_level=0,
        model=ToolRepairModel(ScriptedModel(), deny=["delete_file"]),
    )
    print("answer:", agent.run("Weather in Oslo and Bergen, then clean up."))


if __name__ == "__main__":
    main()
