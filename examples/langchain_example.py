"""LangChain create_agent with ToolRepairMiddleware: drifted names, broken and text calls, unknown tools.

    python examples/langchain_example.py

Offline: the chat model replays scripted AIMessages. Needs `pip install 'toolrepair[langchain]'`.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

import toolrepair as tr
from toolrepair.integrations.langchain import ToolRepairMiddleware


@tool
def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    return f"{limit} results for {query!r}"


class ScriptedModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


SCRIPT = [
    AIMessage(
        content="",
        tool_calls=[
            {"name": "WebSearch", "args": {"query": "otters", "limit": "2"}, "id": "c1"},  # drifted name, string int
            {"name": "image_search", "args": {"query": "otters"}, "id": "c2"},  # never offered
        ],
    ),
    AIMessage(content='<tool_call>{"name": "web_search", "arguments": {"query": "sea otters"}}</tool_call>'),
    AIMessage(content="Otters hold hands while they sleep."),
]


def main() -> None:
    registry = tr.ToolRegistry([web_search])
    agent = create_agent(
        ScriptedModel(messages=iter(SCRIPT)), [web_search], middleware=[ToolRepairMiddleware(registry)]
    )
    for message in agent.invoke({"messages": [("user", "Tell me about otters")]})["messages"]:
        calls = [(c["name"], c["args"]) for c in getattr(message, "tool_calls", [])]
        print(f"{message.type:>5}: {message.content!r}" + (f" calls={calls}" if calls else ""))


if __name__ == "__main__":
    main()
