"""A mixed JSON Lines set shared by the HF datasets and Ray Data tests: every record shape,
records fix changes, records it leaves alone, and bad records."""

from __future__ import annotations

import json
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    }
]


def _call(i: int) -> str:
    return (
        f"<tool_call>{json.dumps({'name': 'web_search', 'arguments': {'query': f'q{i}', 'limit': str(i)}})}</tool_call>"
    )


def _record(i: int) -> Any:
    kind = i % 8
    if kind == 0:
        return {
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Sure. " + _call(i)}, "finish_reason": "stop"}
            ]
        }
    if kind == 1:
        return {
            "messages": [
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": _call(i)},
                {"role": "tool", "content": "r"},
            ]
        }
    if kind == 2:
        return {"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": _call(i)}]}
    if kind == 3:
        return {"role": "assistant", "content": [{"type": "text", "text": _call(i)}]}
    if kind == 4:
        return {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": "WebSearch", "arguments": f"{{'query': 'q{i}',}}"},
                }
            ],
        }
    if kind == 5:
        return {"role": "assistant", "content": f"Plain prose {i}, caf\u00e9."}
    if kind == 6:
        return {"text": _call(i)}
    return None  # a bad record


def mixed_lines(n: int) -> list[str]:
    """``n`` JSON lines (no line endings), about one in eight bad."""
    out = []
    for i in range(n):
        record = _record(i)
        out.append(f'{{"broken": {i}' if record is None else json.dumps(record, ensure_ascii=i % 2 == 0))
    return out
