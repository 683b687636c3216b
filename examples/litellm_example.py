"""LiteLLM: repair a completion and a streamed completion, then the same through the proxy's hook.

    python examples/litellm_example.py

Offline: LiteLLM's own `mock_response` / `mock_tool_calls` play the model. Needs
`pip install 'toolrepair[litellm]'`.
"""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for the price table

import litellm

import toolrepair as tr
from toolrepair.integrations.litellm import ToolRepairLogger, repair_response, repair_stream


def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


def delete_file(path: str) -> str:
    """Delete a file."""
    raise RuntimeError("never runs: the policy denies it")


TEXT_CALL = 'Checking.\n<tool_call>{"name": "GetWeather", "arguments": {"city": "Oslo", "days": "2"}}</tool_call>'
MESSAGES = [{"role": "user", "content": "Weather in Oslo?"}]


def main() -> None:
    registry = tr.ToolRegistry([get_weather, delete_file], deny=["delete_file"])

    # 1. A whole completion whose call was written as text, as local models often do.
    reply = repair_response(
        litellm.completion(model="ollama/qwen2.5", messages=MESSAGES, mock_response=TEXT_CALL), registry
    )
    message = reply.choices[0].message
    print("content:", repr(message.content), "finish:", reply.choices[0].finish_reason)
    for tc in message.tool_calls or []:
        fn = {"name": tc.function.name, "arguments": tc.function.arguments}
        outcome = registry.run({"id": tc.id, "function": fn})
        print("tool:   ", tc.function.name, "->", outcome.content)

    # 2. The same reply streamed: the markup never reaches the screen, the call arrives as a delta.
    print("stream: ", end="")
    for chunk in repair_stream(
        litellm.completion(model="ollama/qwen2.5", messages=MESSAGES, mock_response=TEXT_CALL, stream=True), registry
    ):
        delta = chunk.choices[0].delta
        print(delta.content or "", end="")
        for tc in delta.tool_calls or []:
            print(f"[call {tc.function.name}({tc.function.arguments})]", end="")
    print()

    # 3. Behind a LiteLLM proxy (`callbacks: [ToolRepairLogger(deny=[...])]`): a denied call
    #    never reaches the client; its refusal becomes the reply's text.
    denied = litellm.completion(
        model="ollama/qwen2.5",
        messages=MESSAGES,
        mock_response="",
        mock_tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "DeleteFile", "arguments": '{"path": "/"}'}}
        ],
    )
    tools = [{"type": "function", "function": {"name": "delete_file", "parameters": {"type": "object"}}}]
    hook = ToolRepairLogger(deny=["delete_file"]).async_post_call_success_hook
    out = asyncio.run(hook({"tools": tools}, None, denied))
    print("proxy:  ", repr(out.choices[0].message.content), "calls:", out.choices[0].message.tool_calls)


if __name__ == "__main__":
    main()
