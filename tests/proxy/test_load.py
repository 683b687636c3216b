"""200 concurrent streaming clients through one proxy: no error, every reply exact."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from .replies import CASES, FLAVORS, TOOLS, assemble, seen

CLIENTS = 200
KEYS = ["hermes", "qwen3_xml", "mistral", "harmony", "reasoning", "native_drift", "prose", "native_mixed"]


async def _one(client: httpx.AsyncClient, url: str, i: int) -> tuple[int, Any, Any]:
    key = KEYS[i % len(KEYS)]
    model = f"{FLAVORS[i % len(FLAVORS)]}/{'char' if i % 10 == 0 else 'token'}/{key}"
    body = {"model": model, "messages": [{"role": "user", "content": str(i)}], "tools": TOOLS, "stream": True}
    events: list[Any] = []
    async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
            elif line == "data: [DONE]":
                events.append("[DONE]")
    message = assemble([e for e in events if e != "[DONE]"])
    expected = CASES[key][1]
    return (
        response.status_code,
        (seen(message), message["finish_reason"], events[-1]),
        ((expected.content, expected.calls), expected.finish, "[DONE]"),
    )


def test_200_concurrent_streams(proxy: str) -> None:
    async def main() -> list[tuple[int, Any, Any]]:
        limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
        async with httpx.AsyncClient(limits=limits, timeout=120) as client:
            return await asyncio.gather(*(_one(client, proxy, i) for i in range(CLIENTS)))

    results = asyncio.run(main())
    assert len(results) == CLIENTS
    for status, got, want in results:
        assert status == 200
        assert got == want
