"""Scripted model replies and the wire shapes four local servers give them (whole and streamed).

A reply is what the model wrote; ``completion`` and ``chunks`` render it the way Ollama, vLLM,
llama.cpp or LM Studio send it, so the proxy is tested against the shapes users' servers emit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "description": "Search the web.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
]

FLAVORS = ("ollama", "vllm", "llamacpp", "lmstudio")
CHUNKINGS = ("whole", "token", "char")


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None  # native calls, OpenAI shape
    reasoning: str | None = None
    finish: str = "stop"


@dataclass(frozen=True)
class Expected:
    """What a client must see after the proxy (calls as (name, arguments))."""

    content: str | None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    finish: str = "tool_calls"
    header: str = "repaired=0, salvaged=1, refused=0"


def _native(ident: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


# key: (reply, what the client sees)
CASES: dict[str, tuple[Reply, Expected]] = {
    "hermes": (
        Reply(
            'Let me look. <tool_call>{"name": "WebSearch", "arguments": {"query": "cats", "limit": "3"}}</tool_call>'
        ),
        Expected(
            "Let me look. ", [("web_search", {"query": "cats", "limit": 3})], header="repaired=1, salvaged=1, refused=0"
        ),
    ),
    "qwen3_xml": (
        Reply(
            "<tool_call>\n<function=web_search>\n<parameter=query>\ncats\n</parameter>\n<parameter=limit>\n3\n"
            "</parameter>\n</function>\n</tool_call>"
        ),
        Expected(None, [("web_search", {"query": "cats", "limit": 3})], header="repaired=1, salvaged=1, refused=0"),
    ),
    "mistral": (
        Reply(
            '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, '
            '{"name": "web_search", "arguments": {"query": "Paris events"}}]'
        ),
        Expected(
            None,
            [("get_weather", {"city": "Paris"}), ("web_search", {"query": "Paris events"})],
            header="repaired=0, salvaged=2, refused=0",
        ),
    ),
    "harmony": (
        Reply(
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            '{"city": "Oslo"}<|call|>'
        ),
        Expected(None, [("get_weather", {"city": "Oslo"})]),
    ),
    "reasoning": (
        Reply(
            '<tool_call>{"name": "web_search", "arguments": {"query": "dogs"}}</tool_call>',
            reasoning='Maybe <tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>, no.',
        ),
        Expected(None, [("web_search", {"query": "dogs"})]),
    ),
    "native_drift": (
        Reply(None, [_native("call_n1", "WebSearch", "{'query': 'cats', 'limit': '2',}")], finish="tool_calls"),
        Expected(None, [("web_search", {"query": "cats", "limit": 2})], header="repaired=1, salvaged=0, refused=0"),
    ),
    "native_mixed": (
        Reply(
            None,
            [_native("call_a", "get_weather", '{"city": "Rome"}'), _native("call_b", "send_email", '{"to": "x"}')],
            finish="tool_calls",
        ),
        # send_email is not offered: refused, and never delivered as a call
        Expected(None, [("get_weather", {"city": "Rome"})], header="repaired=0, salvaged=0, refused=1"),
    ),
    "prose": (
        Reply("The answer is 4."),
        Expected("The answer is 4.", [], finish="stop", header="repaired=0, salvaged=0, refused=0"),
    ),
    "fenced": (
        Reply(
            'Like this:\n```\n<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>\n```\nDone.'
        ),
        Expected(
            'Like this:\n```\n<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>\n```\nDone.',
            [],
            finish="stop",
            header="repaired=0, salvaged=0, refused=0",
        ),
    ),
    "schema_refused": (
        Reply('<tool_call>{"name": "web_search", "arguments": {"limit": 3}}</tool_call>'),
        # salvaged, then refused by the schema (no query): never delivered as a call
        Expected(None, [], finish="stop", header="repaired=0, salvaged=1, refused=1"),
    ),
}


def _pieces(text: str, chunking: str) -> list[str]:
    if chunking == "whole":
        return [text]
    if chunking == "char":
        return list(text)
    # token-sized: 1 to 4 characters in a fixed pattern (a tokenizer's rhythm, deterministic)
    out, i, sizes = [], 0, (3, 1, 4, 2)
    while i < len(text):
        size = sizes[len(out) % 4]
        out.append(text[i : i + size])
        i += size
    return out


def completion(reply: Reply, flavor: str, model: str = "m") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning" if flavor == "ollama" else "reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }
    if flavor == "ollama":
        body["system_fingerprint"] = "fp_ollama"
    return body


def chunks(
    reply: Reply, flavor: str, chunking: str | Callable[[str], list[str]], model: str = "m"
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects ``flavor`` streams ``reply`` as (``chunking`` a name
    in CHUNKINGS or a function splitting a text into pieces)."""
    split = chunking if callable(chunking) else (lambda text: _pieces(text, chunking))
    base: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
    }
    if flavor == "ollama":
        base["system_fingerprint"] = "fp_ollama"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        if flavor == "ollama":
            delta = {"role": "assistant", **delta}
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    out: list[dict[str, Any]] = []
    if flavor == "vllm":
        out.append(chunk({"role": "assistant", "content": ""}))
    elif flavor == "llamacpp":
        out.append(chunk({"role": "assistant", "content": None}))
    elif flavor == "lmstudio":
        out.append(chunk({"role": "assistant"}))
    key = "reasoning" if flavor == "ollama" else "reasoning_content"
    for piece in split(reply.reasoning or ""):
        out.append(chunk({key: piece}))
    for piece in split(reply.content or ""):
        out.append(chunk({"content": piece}))
    for i, call in enumerate(reply.tool_calls or ()):
        if flavor == "ollama":  # Ollama sends each call whole
            out.append(chunk({"tool_calls": [{"index": i, **call}]}))
            continue
        fn = call["function"]
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": fn["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in split(fn["arguments"]):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    usage = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    if flavor == "llamacpp":
        out.append(chunk({}, reply.finish, usage=usage, timings={"predicted_ms": 1.0}))
    else:
        out.append(chunk({"content": ""} if flavor == "ollama" else {}, reply.finish))
    if flavor == "vllm":
        out.append({**base, "choices": [], "usage": usage})
    return out


def sse(chunk_list: list[dict[str, Any]], *, done: bool = True) -> list[bytes]:
    events = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunk_list]
    if done:
        events.append(b"data: [DONE]\n\n")
    return events


def assemble(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What a client builds from streamed chunks (the OpenAI SDK's accumulation rules)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for event in events:
        for choice in event.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content"):
                content.append(delta["content"])
            for key in ("reasoning", "reasoning_content"):
                if delta.get(key):
                    reasoning.append(delta[key])
            for tc in delta.get("tool_calls") or ():
                call = calls.setdefault(
                    tc["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                )
                if tc.get("id"):
                    call["id"] = tc["id"]
                fn = tc.get("function") or {}
                call["function"]["name"] += fn.get("name") or ""
                call["function"]["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": [calls[i] for i in sorted(calls)] or None,
        "finish_reason": finish,
    }


def seen(message: dict[str, Any]) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """(content, [(name, decoded arguments)]) of an assembled or whole message."""
    calls = [(tc["function"]["name"], _loads(tc["function"]["arguments"])) for tc in message.get("tool_calls") or ()]
    return message.get("content") or None, calls


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
