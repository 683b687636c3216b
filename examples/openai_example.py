"""OpenAI Chat Completions: repair a reply's tool calls, run them, and answer with tool messages.

    python examples/openai_example.py

Offline: the "model" is a scripted ChatCompletionMessage payload with a drifted name and
broken arguments, then a reply that wrote its call as text. Needs `pip install 'toolrepair[openai]'`.
"""

from __future__ import annotations

import json

from openai.types.chat import ChatCompletionMessage

import toolrepair as tr
from toolrepair.integrations.openai import repair_chat_message, tool_calls, tool_result_message


def get_weather(city: str, days: int = 1) -> dict[str, object]:
    """Weather forecast for a city."""
    return {"city": city, "days": days, "forecast": ["sunny"] * days}


SCRIPT = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "GetWeather", "arguments": "{'city': 'Oslo', 'days': '2',}"},
            },
            {"id": "call_2", "type": "function", "function": {"name": "book_flight", "arguments": "{}"}},
        ],
    },
    {
        "role": "assistant",
        "content": 'Checking Bergen too.\n<tool_call>{"name": "get_weather", '
        '"arguments": {"city": "Bergen"}}</tool_call>',
    },
]


def main() -> None:
    registry = tr.ToolRegistry([get_weather])
    for payload in SCRIPT:
        message = ChatCompletionMessage.model_validate(payload)  # what client.chat.completions.create returns
        repaired = repair_chat_message(message, registry)
        calls = tool_calls(repaired)  # the calls to run: refused ones are left out
        errors = repaired.pop("toolrepair_errors", [])  # never sent to the API
        print("assistant:", json.dumps(repaired, ensure_ascii=False))
        for call in calls:
            print("tool:     ", json.dumps(tool_result_message(registry.run(call)), ensure_ascii=False))
        for error in errors:  # a refused call's answer, ready to send
            if error["tool_call_id"] is not None:
                print("tool:     ", json.dumps(error["tool_message"], ensure_ascii=False))


if __name__ == "__main__":
    main()
