"""LlamaIndex FunctionAgent with toolrepair in front of its tool dispatch (ToolRepairAgent).

    python examples/llamaindex_example.py

Offline: a MockFunctionCallingLLM replays scripted replies. Needs `pip install 'toolrepair[llamaindex]'`.
"""

from __future__ import annotations

import asyncio

from llama_index.core.agent.workflow import ToolCallResult
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool

from toolrepair.integrations.llamaindex import ToolRepairAgent


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


SCRIPT = iter(
    [
        # LlamaIndex alone would call multiply with {} here: the arguments are not strict JSON.
        ChatMessage(
            role="assistant",
            blocks=[
                ToolCallBlock(tool_call_id="c1", tool_name="Multiply", tool_kwargs="{'a': 6, 'b': '7',}"),
                ToolCallBlock(tool_call_id="c2", tool_name="divide", tool_kwargs='{"a": 6, "b": 7}'),
            ],
        ),
        ChatMessage(
            role="assistant", content='<tool_call>{"name": "multiply", "arguments": {"a": 2, "b": 21}}</tool_call>'
        ),
        ChatMessage(role="assistant", content="6 x 7 = 42, and so is 2 x 21."),
    ]
)


async def main() -> None:
    llm = MockFunctionCallingLLM(response_generator=lambda messages, **kwargs: next(SCRIPT))
    agent = ToolRepairAgent(tools=[FunctionTool.from_defaults(multiply)], llm=llm, streaming=False)
    handler = agent.run(user_msg="What is 6 times 7?")
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            flag = "error" if event.tool_output.is_error else "ok"
            print(f"{event.tool_name}({event.tool_kwargs}) -> [{flag}] {event.tool_output.content}")
    print("answer:", await handler)


if __name__ == "__main__":
    asyncio.run(main())
