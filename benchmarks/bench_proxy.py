"""Latency `toolrepair serve` adds, against LiteLLM's proxy, on one scripted upstream.

Three paths to the same upstream, in one run: direct, through `toolrepair serve`, and through
LiteLLM's proxy (`litellm --config`, the peer users would otherwise put in front of a local
model). Each server is its own process on 127.0.0.1; the load comes from this process (httpx
async). At each concurrency level the three targets run in turn, round after round (interleaved,
so a busy spell of a shared machine hits all three alike), and the added latency of a proxy is
its percentile minus the direct path's percentile at the same level.

The upstream answers at once with a reply that writes its tool call as text (Hermes), so
toolrepair does its real work (salvage, repair, re-serialisation) and the model's own time does
not hide the proxies' cost. Streams are 40 chunks.

    python benchmarks/bench_proxy.py [--rounds N] [--levels 1,50,200] [--no-litellm]

Target: toolrepair's added latency <= 0.3x LiteLLM proxy's at every level (printed as a ratio).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]

UPSTREAM = textwrap.dedent('''
    import json, sys
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    TEXT = ('Let me look that up. <tool_call>{"name": "WebSearch", "arguments": '
            '{"query": "weather in Paris tomorrow", "limit": "3"}}</tool_call>')
    BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "bench"}
    PIECES = [TEXT[i:i + 4] for i in range(0, len(TEXT), 4)]
    EVENTS = [b"data: " + json.dumps({**BASE, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                           "finish_reason": None}]}).encode() + b"\\n\\n"]
    EVENTS += [b"data: " + json.dumps({**BASE, "choices": [{"index": 0, "delta": {"content": p},
                                                            "finish_reason": None}]}).encode() + b"\\n\\n" for p in PIECES]
    EVENTS += [b"data: " + json.dumps({**BASE, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).encode()
               + b"\\n\\n", b"data: [DONE]\\n\\n"]
    WHOLE = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "bench",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 20, "completion_tokens": 40, "total_tokens": 60}}).encode()

    async def chat(request):
        body = await request.json()
        if body.get("stream"):
            async def gen():
                for event in EVENTS:
                    yield event
            return StreamingResponse(gen(), media_type="text/event-stream")
        return Response(WHOLE, media_type="application/json")

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
''')

LITELLM_CONFIG = textwrap.dedent('''
    model_list:
      - model_name: bench
        litellm_params:
          model: openai/bench
          api_base: {upstream}/v1
          api_key: none
    litellm_settings:
      telemetry: false
      drop_params: true
''')

TOOLS = [{"type": "function", "function": {"name": "web_search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"]}}}]
BODY = {"model": "bench", "messages": [{"role": "user", "content": "Weather in Paris tomorrow?"}], "tools": TOOLS}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _process(argv: list[str], url: str, env: dict[str, str] | None = None, ready: str = "/health") -> Iterator[str]:
    """Start a server process, wait until `url + ready` answers, stop it (by its pid) at the end."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below, after the process)
    process = subprocess.Popen(argv, stdout=log, stderr=log, env={**os.environ, **(env or {})}, cwd=ROOT)
    try:
        for _ in range(600):  # up to a minute: LiteLLM's proxy takes a while to import
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"{argv[:3]} exited:\n{log.read().decode()[-2000:]}")
            try:
                if httpx.get(url + ready, timeout=1).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError(f"{argv[:3]} did not start")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


async def _request(client: httpx.AsyncClient, url: str, stream: bool) -> tuple[float, float]:
    """(time to first token, time to last) in seconds; for a whole reply both are its latency."""
    start = time.perf_counter()
    if not stream:
        response = await client.post(url, json=BODY)
        response.raise_for_status()
        reply = response.json()
        assert reply["choices"][0]["message"], reply
        end = time.perf_counter() - start
        return end, end
    first = None
    async with client.stream("POST", url, json={**BODY, "stream": True}) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line == "data: [DONE]":
                break
            if first is None and line.startswith("data: ") and _visible(json.loads(line[6:])):
                first = time.perf_counter() - start
    end = time.perf_counter() - start
    return (first if first is not None else end), end


def _visible(chunk: dict[str, object]) -> bool:
    """A chunk that shows the user something: text or a tool call (not the role-only first chunk)."""
    for choice in chunk.get("choices") or ():  # type: ignore[attr-defined]
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("tool_calls"):
            return True
    return False


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


errors: dict[str, int] = {}


async def _run(targets: dict[str, str], levels: list[int], rounds: int) -> dict[tuple[int, str, str], list[float]]:
    samples: dict[tuple[int, str, str], list[float]] = {}
    # Idle connections are dropped before the servers' 5 s keep-alive closes them under us.
    limits = httpx.Limits(max_connections=max(levels) * 2, max_keepalive_connections=max(levels) * 2,
                          keepalive_expiry=3)
    async with httpx.AsyncClient(limits=limits, timeout=120, trust_env=False) as client:
        for url in targets.values():  # warm each path (connections, imports, caches)
            await asyncio.gather(*(_request(client, url, s) for s in (False, True) for _ in range(10)))
        for level in levels:
            for _ in range(rounds):
                for stream in (False, True):
                    for name, url in targets.items():
                        got = await asyncio.gather(*(_request(client, url, stream) for _ in range(level)),
                                                   return_exceptions=True)
                        results = [r for r in got if not isinstance(r, BaseException)]
                        for error in got:
                            if isinstance(error, BaseException):
                                errors[name] = errors.get(name, 0) + 1
                                print(f"error via {name}: {type(error).__name__}: {error}"[:300], file=sys.stderr)
                        if stream:
                            samples.setdefault((level, name, "ttft"), []).extend(r[0] for r in results)
                            samples.setdefault((level, name, "last"), []).extend(r[1] for r in results)
                        else:
                            samples.setdefault((level, name, "whole"), []).extend(r[1] for r in results)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,50,200")
    parser.add_argument("--rounds", type=int, default=0, help="rounds per level (default: 30 at 1, 4 at 50, 2 at 200)")
    parser.add_argument("--no-litellm", action="store_true")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    up_port, tr_port, ll_port = _free_port(), _free_port(), _free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    env = {"PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp, \
            _process([sys.executable, "-c", UPSTREAM, str(up_port)], upstream, ready="/v1/models"), \
            _process([sys.executable, "-m", "toolrepair", "serve", "--upstream", f"{upstream}/v1", "--port",
                      str(tr_port)], f"http://127.0.0.1:{tr_port}", env=env) as tr_url:
        targets = {"direct": f"{upstream}/v1/chat/completions", "toolrepair": f"{tr_url}/v1/chat/completions"}
        config = Path(tmp, "litellm.yaml")
        config.write_text(LITELLM_CONFIG.format(upstream=upstream))
        litellm_env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR",
                       "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true"}
        litellm_cmd = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(config), "--host",
                       "127.0.0.1", "--port", str(ll_port), "--num_workers", "1"]
        if args.no_litellm:
            samples = asyncio.run(_levels(targets, levels, args.rounds))
        else:
            with _process(litellm_cmd, f"http://127.0.0.1:{ll_port}", env=litellm_env,
                          ready="/health/liveliness") as ll_url:
                targets["litellm"] = f"{ll_url}/v1/chat/completions"
                samples = asyncio.run(_levels(targets, levels, args.rounds))
    _print(samples, levels, list(targets))


async def _levels(targets: dict[str, str], levels: list[int], rounds: int = 0) -> dict[tuple[int, str, str], list[float]]:
    samples: dict[tuple[int, str, str], list[float]] = {}
    for level in levels:
        default = {1: 30, 50: 4, 200: 2}.get(level, 2)
        samples.update(await _run(targets, [level], rounds or default))
    return samples


def _print(samples: dict[tuple[int, str, str], list[float]], levels: list[int], names: list[str]) -> None:
    print(f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; milliseconds; added = proxy - direct "
          "at the same percentile")
    header = f"{'conc':>4} {'metric':<6} {'n':>4} {'direct p50/p99':>16} {'toolrepair +p50/+p99':>21}"
    if "litellm" in names:
        header += f" {'litellm +p50/+p99':>19} {'ratio p50/p99':>14}"
    print(header)
    worst = 0.0
    for level in levels:
        for metric in ("whole", "ttft", "last"):
            direct = samples[(level, "direct", metric)]
            d50, d99 = _pct(direct, 0.5) * 1e3, _pct(direct, 0.99) * 1e3
            row = f"{level:>4} {metric:<6} {len(direct):>4} {d50:>7.2f}/{d99:<8.2f}"
            tr = samples[(level, "toolrepair", metric)]
            t50, t99 = _pct(tr, 0.5) * 1e3 - d50, _pct(tr, 0.99) * 1e3 - d99
            row += f" {t50:>10.2f}/{t99:<10.2f}"
            if "litellm" in names:
                ll = samples[(level, "litellm", metric)]
                l50, l99 = _pct(ll, 0.5) * 1e3 - d50, _pct(ll, 0.99) * 1e3 - d99
                r50, r99 = t50 / l50 if l50 > 0 else float("inf"), t99 / l99 if l99 > 0 else float("inf")
                worst = max(worst, r50, r99)
                row += f" {l50:>9.2f}/{l99:<9.2f} {r50:>6.3f}/{r99:<6.3f}"
            print(row)
    if "litellm" in names:
        print(f"worst ratio {worst:.3f} (target <= 0.3): {'met' if worst <= 0.3 else 'NOT met'}")
    print("errors:", errors or "none")
    print("median of direct whole-reply latencies:", f"{statistics.median(samples[(levels[0], 'direct', 'whole')]) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
