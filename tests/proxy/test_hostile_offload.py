"""A large reply is repaired off the event loop: while its worker is held, /health and other
requests still answer (a test hook holds the worker on an event: no clock). The bound on
concurrent workers, counted."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from toolrepair.proxy import _app
from toolrepair.proxy._offload import INLINE_BYTES, Offload, default_workers

from .replies import CASES, TOOLS, completion
from .servers import RawUpstream, http_reply

_PADDING = "Some prose before the call. " * 1000  # well over INLINE_BYTES


def _answer(request: dict[str, Any]) -> bytes:
    body = json.loads(request["body"] or b"{}")
    text = _PADDING + CASES["hermes"][0].content
    if body.get("stream"):
        chunk = {"id": "x", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}
        return http_reply(
            b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n", content_type="text/event-stream"
        )
    if request["target"].endswith("/models"):
        return http_reply(b'{"object": "list", "data": []}')
    reply = completion(CASES["hermes"][0], "vllm")
    reply["choices"][0]["message"]["content"] = text
    return http_reply(json.dumps(reply).encode())


def _hold(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[threading.Event, threading.Event]:
    """Replace ``_app.<name>`` (work the proxy runs on a worker) with one that waits for
    ``release`` after setting ``entered``."""
    entered, release = threading.Event(), threading.Event()
    real: Callable[..., Any] = getattr(_app, name)

    def held(*args: Any) -> Any:
        entered.set()
        assert release.wait(60)  # a safety net: the test sets it
        return real(*args)

    monkeypatch.setattr(_app, name, held)
    return entered, release


@pytest.mark.parametrize(("stream", "hook"), [(False, "repair_whole"), (True, "_relay_events")])
def test_health_answers_while_a_large_reply_is_repaired(
    start_proxy: Any, monkeypatch: pytest.MonkeyPatch, stream: bool, hook: str
) -> None:
    upstream = RawUpstream(_answer)
    try:
        proxy = start_proxy(upstream=f"{upstream.url}/v1")
        entered, release = _hold(monkeypatch, hook)
        result: dict[str, Any] = {}

        def ask() -> None:
            body = {"model": "m", "messages": [], "tools": TOOLS, "stream": stream}
            result["response"] = httpx.post(f"{proxy}/v1/chat/completions", json=body, timeout=60)

        asking = threading.Thread(target=ask)
        asking.start()
        try:
            assert entered.wait(60)
            # The reply's repair holds its worker; the loop answers others meanwhile.
            health = httpx.get(f"{proxy}/health", timeout=60)
            assert health.status_code == 200 and health.json()["status"] == "ok"
            assert httpx.get(f"{proxy}/v1/models", timeout=60).status_code == 200
            assert "response" not in result  # still held
        finally:
            release.set()
            asking.join(60)
        response = result["response"]
        assert response.status_code == 200
        if not stream:
            assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "web_search"
        else:
            assert '"tool_calls"' in response.text and response.text.rstrip().endswith("data: [DONE]")
    finally:
        upstream.close()


def test_offload_bounds_the_workers_at_work() -> None:
    """Five calls on two workers: two run, three wait (counted from the limiter, not timed)."""
    release = threading.Event()
    running: list[int] = []
    most = [0]
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            running.append(i)
            most[0] = max(most[0], len(running))
        assert release.wait(60)
        with lock:
            running.remove(i)
        return i

    async def main() -> list[int]:
        offload = Offload(2)
        results: list[int] = []

        async def one(i: int) -> None:
            results.append(await offload.run(work, i))

        async with anyio.create_task_group() as group:
            for i in range(5):
                group.start_soon(one, i)
            for _ in range(100_000):  # until every task is at the limiter (a bound, not a clock)
                stats = offload.limiter.statistics()
                if stats.tasks_waiting == 3 and stats.borrowed_tokens == 2 and len(running) == 2:
                    break
                await anyio.sleep(0)
            stats = offload.limiter.statistics()
            assert (stats.borrowed_tokens, stats.tasks_waiting) == (2, 3)
            release.set()
        return results

    assert sorted(anyio.run(main)) == [0, 1, 2, 3, 4]
    assert most[0] == 2


def test_small_work_runs_inline() -> None:
    async def main() -> tuple[int, int]:
        offload = Offload(1)
        here = threading.get_ident()
        small = await offload.run(threading.get_ident, size=INLINE_BYTES - 1)
        large = await offload.run(threading.get_ident, size=INLINE_BYTES)
        assert small == here
        return here, large

    here, large = anyio.run(main)
    assert large != here


def test_default_workers_is_the_cpus_at_hand() -> None:
    assert default_workers() >= 1
    assert Offload().workers == default_workers()
