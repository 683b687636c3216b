"""Anthropic Messages: repair tool_use blocks, salvage calls written as text, answer with tool_result blocks.

    python examples/anthropic_example.py

Offline: the replies are scripted `anthropic.types.Message` payloads. Needs
`pip install 'toolrepair[anthropic]'`.
"""

from __future__ import annotations

import json

from anthropic.types import Message

import toolrepair as tr
from toolrepair.integrations.anthropic import repair_message, tool_calls, tool_result_block


def read_file(path: str) -> str:
    """Read a text file."""
    raise FileNotFoundError(f"No such file: {path}")


def list_dir(path: str = ".") -> list[str]:
    """List a directory."""
    return ["README.md", "pyproject.toml"]


def reply(content: list[dict[str, object]], stop_reason: str) -> Message:
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )


SCRIPT = [
    reply(
        [
            {"type": "tool_use", "id": "toolu_1", "name": "ListDir", "input": {"path": "."}},
            {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "NOTES.md"}},
        ],
        "tool_use",
    ),
    reply(
        [
            {
                "type": "text",
                "text": 'Reading the README.\n<tool_call>{"name": "read_file", "arguments": {"path": 42}}</tool_call>',
            }
        ],
        "end_turn",
    ),
]


def main() -> None:
    registry = tr.ToolRegistry([read_file, list_dir])
    for message in SCRIPT:
        repaired = repair_message(message, registry)
        calls = tool_calls(repaired)  # the calls to run: refused ones are left out
        errors = repaired.pop("toolrepair_errors", [])  # never sent to the API
        print("assistant:", json.dumps(repaired["content"]), "| stop_reason:", repaired["stop_reason"])
        results = [tool_result_block(registry.run(call)) for call in calls]
        results += [error["tool_result"] for error in errors if error["tool_use_id"] is not None]
        print("user:     ", json.dumps(results))


if __name__ == "__main__":
    main()
