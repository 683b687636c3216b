"""Latency `toolrepair serve` adds, against LiteLLM's proxy, on one scripted upstream.

Three paths to the same upstream, in one run: direct, through `toolrepair serve`, and through
LiteLLM's proxy (`litellm --config`, the peer users would otherwise put in front of a local
model). The added latency of a proxy is its percentile minus the direct path's percentile at the
same level, both measured by the same load client in the same run.

How the comparison is kept fair:

* Every server is its own process on 127.0.0.1, served by uvicorn with its defaults on all three
  (httptools, uvloop, 5 s keep-alive); the load client is a process of its own too (uvloop and
  httptools' parser over raw sockets, one request per connection at a time), so its CPU is not
  taken from the process it measures, and it reports that CPU per request and its share of a core.
* Each timed round is preceded by an untimed warm round on the same path at the same
  concurrency, on the same client connections: the client's connections are open and the
  proxy's upstream pool holds live connections when the clock starts, for all three paths alike
  (a connection a server closed in between is reopened and warmed before its timed request, and
  counted). The warm round's own figures are reported apart (fresh client connections).
* Rounds are interleaved: direct, toolrepair and LiteLLM take turns, round after round, in a
  rotating order, so a busy spell of a shared machine hits all three alike. The CPU each server
  process spends per request (from /proc) is printed beside the latencies: it is the steadiest
  figure on a busy machine.

Each route is measured in turn in the same run (`--routes`, default all three): chat completions,
Anthropic Messages (LiteLLM's `/v1/messages` with an `anthropic/` model whose `api_base` is the
upstream, so both proxies talk Messages to it) and OpenAI Responses (LiteLLM's `/v1/responses`).

The upstream answers at once with a reply that writes its tool call as text (Hermes), so
toolrepair does its real work (salvage, repair, re-serialisation) and the model's own time does
not hide the proxies' cost. Streams are 40 chunks.

    python benchmarks/bench_proxy.py [--quick] [--rounds N] [--levels 1,50,200]
                                     [--routes chat,messages,responses] [--no-litellm] [--profile-proxy FILE]
                                     [--model-profile NAME]

`--quick` is a short sanity run (a few rounds per level, a minute or two); the default plan
gives 2,000 samples per path and metric at one client, so that the p99 judged there rests on
20 samples above it.

Target (issue 29): on every route and at every level, toolrepair's added latency <= 0.3x LiteLLM
proxy's at p50, for whole replies and for a stream's first token; at one client the first
token's p99 too, judged only over >= 2,000 samples. The other p99s and the stream's end (`last`)
are printed beside them, not judged. Each route's table has a verdict per row; the run ends
with one table of every route (Markdown, to paste) and the overall verdict.
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
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

UPSTREAM = textwrap.dedent("""
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

    async def models(request):
        return Response(b'{"object": "list", "data": []}', media_type="application/json")

    def sse(events):
        return [f"event: {e['type']}\\ndata: {json.dumps(e)}\\n\\n".encode() for e in events]

    MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "bench",
               "content": [{"type": "text", "text": TEXT}], "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 20, "output_tokens": 40}}
    MESSAGE_WHOLE = json.dumps(MESSAGE).encode()
    MESSAGE_EVENTS = sse(
        [{"type": "message_start", "message": {**MESSAGE, "content": [], "stop_reason": None}},
         {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
        + [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in PIECES]
        + [{"type": "content_block_stop", "index": 0},
           {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 40}},
           {"type": "message_stop"}])
    PART = {"type": "output_text", "text": TEXT, "annotations": []}
    ITEM = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [PART]}
    RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1700000000, "model": "bench",
                "status": "completed", "output": [ITEM], "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "usage": {"input_tokens": 20, "output_tokens": 40, "total_tokens": 60,
                                       "input_tokens_details": {"cached_tokens": 0},
                                       "output_tokens_details": {"reasoning_tokens": 0}}}
    RESPONSE_WHOLE = json.dumps(RESPONSE).encode()
    IDS = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    RESPONSE_EVENTS = sse([{**e, "sequence_number": n} for n, e in enumerate(
        [{"type": "response.created", "response": {**RESPONSE, "status": "in_progress", "output": []}},
         {"type": "response.output_item.added", "output_index": 0,
          "item": {**ITEM, "status": "in_progress", "content": []}},
         {"type": "response.content_part.added", **IDS, "part": {**PART, "text": ""}}]
        + [{"type": "response.output_text.delta", **IDS, "delta": p, "logprobs": []} for p in PIECES]
        + [{"type": "response.output_text.done", **IDS, "text": TEXT, "logprobs": []},
           {"type": "response.content_part.done", **IDS, "part": PART},
           {"type": "response.output_item.done", "output_index": 0, "item": ITEM},
           {"type": "response.completed", "response": RESPONSE}])])

    def shaped(whole, events):
        async def answer(request):
            body = await request.json()
            if body.get("stream"):
                async def gen():
                    for event in events:
                        yield event
                return StreamingResponse(gen(), media_type="text/event-stream")
            return Response(whole, media_type="application/json")
        return answer

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models),
                            Route("/v1/messages", shaped(MESSAGE_WHOLE, MESSAGE_EVENTS), methods=["POST"]),
                            Route("/v1/responses", shaped(RESPONSE_WHOLE, RESPONSE_EVENTS), methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
""")

# `toolrepair serve` under cProfile (--profile-proxy): the harness's hook, not the package's.
PROFILED_SERVE = textwrap.dedent("""
    import cProfile, signal, sys, time
    from toolrepair.cli import main
    # uvicorn raises the stop signal again once it has shut down: exit through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # CPU time, not wall: on a shared machine a write that wakes the peer process often loses the
    # core to it, and a wall clock would charge that wait to whichever function made the write.
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    try:
        main(sys.argv[2:])
    finally:
        profile.disable()
        profile.dump_stats(sys.argv[1])
""")

LITELLM_CONFIG = textwrap.dedent("""
    model_list:
      - model_name: bench
        litellm_params:
          model: openai/bench
          api_base: {upstream}/v1
          api_key: none
      - model_name: bench-messages
        litellm_params:
          model: anthropic/bench
          api_base: {upstream}
          api_key: none
      - model_name: bench-responses
        litellm_params:
          model: openai/bench
          api_base: {upstream}/v1
          api_key: none
    litellm_settings:
      telemetry: false
      drop_params: true
""")

TOOLS = [
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
BODY = {"model": "bench", "messages": [{"role": "user", "content": "Weather in Paris tomorrow?"}], "tools": TOOLS}
_SCHEMA = TOOLS[0]["function"]["parameters"]
# route: (path, request body, what ends its stream)
ROUTES: dict[str, tuple[str, dict[str, Any], bytes]] = {
    "chat": ("/v1/chat/completions", BODY, b"data: [DONE]"),
    "messages": (
        "/v1/messages",
        {
            "model": "bench-messages",
            "max_tokens": 256,
            "messages": BODY["messages"],
            "tools": [{"name": "web_search", "input_schema": _SCHEMA}],
        },
        b"message_stop",
    ),
    "responses": (
        "/v1/responses",
        {
            "model": "bench-responses",
            "input": "Weather in Paris tomorrow?",
            "tools": [{"type": "function", "name": "web_search", "parameters": _SCHEMA}],
        },
        b"response.completed",
    ),
}

# Per level: (rounds, requests each connection sends in a timed round). A round at level c is c
# connections sending at once; at c=1 a round is a run of sequential requests.
PLAN = {1: (20, 100), 50: (8, 2), 200: (5, 1)}
QUICK_PLAN = {1: (4, 25), 50: (2, 1), 200: (1, 1)}  # --quick: a sanity run, nothing judged at p99
METRICS = ("whole", "ttft", "last")
TARGET = 0.3
JUDGED_P50 = ("whole", "ttft")  # `last` is printed, not judged
P99_SAMPLES = 2000  # the one p99 judged (first token, one client) needs at least this many samples


# -- the load client (its own process) ------------------------------------------------------


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, one request at a time; httptools parses the replies."""

    def __init__(self) -> None:
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.done: asyncio.Future[None] | None = None
        self.stream = False
        self.route = "chat"
        self.ended = False  # a stream's end event was seen
        self.start = self.first = self.end = 0.0
        self.body: list[bytes] = []
        self.pending = b""
        self.status = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment] (uvloop's is not asyncio's class)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.done is not None and not self.done.done():
            self.done.set_exception(ConnectionError("the server closed the connection mid-reply"))

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except Exception as exc:  # httptools' parse errors: the request fails
            if self.done is not None and not self.done.done():
                self.done.set_exception(exc)

    # httptools callbacks
    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        if not self.parser.should_keep_alive():
            self.closed = True

    def on_body(self, body: bytes) -> None:
        if not self.stream:
            self.body.append(body)
            return
        self.body = [(self.body[-1] if self.body else b"")[-64:], body]  # a stream keeps its tail, for its end
        self.ended = self.ended or ROUTES[self.route][2] in b"".join(self.body)
        if self.first:
            return
        *lines, self.pending = (self.pending + body).split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r")
            if line.startswith(b"data: ") and line != b"data: [DONE]" and _visible(json.loads(line[6:]), self.route):
                self.first = time.perf_counter()
                return

    def on_message_complete(self) -> None:
        self.end = time.perf_counter()
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

    async def request(self, raw: bytes, stream: bool, route: str) -> tuple[float, float, bool]:
        """(time to first token, time to last, the reply carries tool_calls)."""
        assert self.transport is not None
        self.done = asyncio.get_running_loop().create_future()
        self.stream, self.route, self.body, self.pending, self.first = stream, route, [], b"", 0.0
        self.ended = False
        self.start = time.perf_counter()
        self.transport.write(raw)
        await self.done
        if self.status != 200:
            raise RuntimeError(f"status {self.status}: {b''.join(self.body)[:200]!r}")
        if stream:
            if not self.ended:
                raise RuntimeError(f"the stream did not end with {ROUTES[route][2].decode()}")
            return (self.first or self.end) - self.start, self.end - self.start, False
        return self.end - self.start, self.end - self.start, _has_call(json.loads(b"".join(self.body)), route)


def _has_call(reply: dict[str, Any], route: str) -> bool:
    if route == "messages":
        return any(block.get("type") == "tool_use" for block in reply.get("content") or ())
    if route == "responses":
        return any(item.get("type") == "function_call" for item in reply.get("output") or ())
    return bool(reply["choices"][0]["message"].get("tool_calls"))


def _visible(chunk: dict[str, Any], route: str) -> bool:
    """An event that shows the user something: text or a tool call (not the role-only first chunk)."""
    kind = chunk.get("type")
    if route == "messages":
        return bool(
            (kind == "content_block_delta" and (chunk.get("delta") or {}).get("text"))
            or (kind == "content_block_start" and (chunk.get("content_block") or {}).get("type") == "tool_use")
        )
    if route == "responses":
        return bool(
            (kind == "response.output_text.delta" and chunk.get("delta"))
            or (kind == "response.output_item.added" and (chunk.get("item") or {}).get("type") == "function_call")
        )
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("tool_calls"):
            return True
    return False


def _raw_request(host: str, port: int, route: str, stream: bool) -> bytes:
    path, base, _ = ROUTES[route]
    body = json.dumps({**base, "stream": True} if stream else base).encode()
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


class _Client:
    """Runs the rounds the harness asks for, one JSON command a line on stdin, one answer a line."""

    def __init__(self) -> None:
        self.conns: list[_Conn] = []
        self.target: tuple[str, int] = ("127.0.0.1", 0)
        self.raw = {False: b"", True: b""}
        self.route = "chat"
        self.reconnects = 0

    async def _connect(self) -> _Conn:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Conn, *self.target)
        return conn

    async def _one(self, i: int, stream: bool, count: int, timed: bool) -> list[tuple[float, float, bool]]:
        out = []
        for _ in range(count):
            if self.conns[i].closed:  # the server closed it while idle: reopen, warm, then time
                self.conns[i] = await self._connect()
                self.reconnects += timed
                if timed:
                    await self.conns[i].request(self.raw[stream], stream, self.route)
            out.append(await self.conns[i].request(self.raw[stream], stream, self.route))
        return out

    async def command(self, cmd: dict[str, Any]) -> dict[str, Any]:
        if cmd["op"] == "close":
            for conn in self.conns:
                if conn.transport is not None:
                    conn.transport.close()
            self.conns = []
            return {}
        if cmd["op"] == "open":
            self.target = (cmd["host"], cmd["port"])
            self.route = cmd["route"]
            self.raw = {s: _raw_request(cmd["host"], cmd["port"], cmd["route"], s) for s in (False, True)}
            self.conns = list(await asyncio.gather(*(self._connect() for _ in range(cmd["level"]))))
            self.reconnects = 0
            return {}
        stream, count, timed = cmd["stream"], cmd["count"], cmd["op"] == "timed"
        cpu, wall = time.process_time(), time.perf_counter()
        got = await asyncio.gather(
            *(self._one(i, stream, count, timed) for i in range(len(self.conns))), return_exceptions=True
        )
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        samples = [s for r in got if not isinstance(r, BaseException) for s in r]
        errors = [f"{type(r).__name__}: {r}"[:300] for r in got if isinstance(r, BaseException)]
        return {
            "ttft": [s[0] for s in samples],
            "last": [s[1] for s in samples],
            "calls": sum(s[2] for s in samples),
            "errors": errors,
            "cpu": cpu,
            "wall": wall,
            "reconnects": self.reconnects,
        }


async def _client_main() -> None:
    client = _Client()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        answer = await client.command(json.loads(line))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def _run_client() -> None:
    try:
        import uvloop
    except ImportError:  # the client runs on asyncio's own loop: slower, still the same for all paths
        asyncio.run(_client_main())
    else:
        uvloop.run(_client_main())


# -- the harness ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as reply:  # a loopback URL built here
            return bool(reply.status < 500)
    except OSError:
        return False


@contextmanager
def _process(
    argv: list[str], url: str, env: dict[str, str] | None = None, ready: str = "/health"
) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server process, wait until `url + ready` answers, stop it (by its pid) at the end."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below, after the process)
    process = subprocess.Popen(argv, stdout=log, stderr=log, env={**os.environ, **(env or {})}, cwd=ROOT)
    try:
        for _ in range(3000):  # up to five minutes: LiteLLM's proxy takes a while to import on a busy machine
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"{argv[:3]} exited:\n{log.read().decode()[-2000:]}")
            if _answers(url + ready):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"{argv[:3]} did not start")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process, its threads and its descendants, from /proc."""
    total = 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total = (int(fields[11]) + int(fields[12])) / _TICK
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                total += sum(_cpu(int(child)) for child in f.read().split())
    except (OSError, ValueError):  # no /proc (not Linux) or the process is gone: not counted
        pass
    return total


class _Load:
    """The load client process, driven one command at a time."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--client"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT
        )

    def __call__(self, **cmd: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(cmd).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the load client exited")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


Samples = dict[tuple[int, str, str], list[float]]


class _Results:
    def __init__(self) -> None:
        self.timed: Samples = {}
        self.warm: Samples = {}
        self.rounds: dict[tuple[int, str, str], list[float]] = {}  # each round's p50, for the spread
        self.server_cpu: dict[tuple[int, str, bool], list[float]] = {}  # seconds, requests
        self.client: dict[tuple[int, str], list[float]] = {}  # cpu, wall, requests
        self.errors: dict[str, int] = {}
        self.reconnects: dict[str, int] = {}
        self.calls: dict[str, list[int]] = {}  # whole replies with tool_calls, whole replies

    def add(
        self, level: int, name: str, stream: bool, answer: dict[str, Any], *, warm: dict[str, Any], cpu: float
    ) -> None:
        keys = [("ttft", "ttft"), ("last", "last")] if stream else [("whole", "last")]
        for metric, field in keys:
            self.timed.setdefault((level, name, metric), []).extend(answer[field])
            self.warm.setdefault((level, name, metric), []).extend(warm[field])
            if answer[field]:
                self.rounds.setdefault((level, name, metric), []).append(statistics.median(answer[field]))
        n = len(answer["last"])
        server = self.server_cpu.setdefault((level, name, stream), [0.0, 0])
        server[0] += cpu
        server[1] += n
        client = self.client.setdefault((level, name), [0.0, 0.0, 0])
        client[0] += answer["cpu"]
        client[1] += answer["wall"]
        client[2] += n
        for error in answer["errors"] + warm["errors"]:
            self.errors[name] = self.errors.get(name, 0) + 1
            print(f"error via {name}: {error}", file=sys.stderr)
        self.reconnects[name] = self.reconnects.get(name, 0) + answer["reconnects"]
        if not stream:
            calls = self.calls.setdefault(name, [0, 0])
            calls[0] += answer["calls"]
            calls[1] += n


def _run(
    load: _Load,
    targets: dict[str, tuple[int, subprocess.Popen[bytes]]],
    levels: list[int],
    rounds: int,
    pids: dict[str, int],
    *,
    route: str,
    plan: dict[int, tuple[int, int]],
) -> _Results:
    results = _Results()
    names = list(targets)
    for level in levels:
        default_rounds, count = plan.get(level, (3, 1))
        for r in range(rounds or default_rounds):
            order = names[r % len(names) :] + names[: r % len(names)]  # rotating, so none always goes first
            for stream in (False, True):
                for name in order:
                    port, _ = targets[name]
                    load(op="open", host="127.0.0.1", port=port, route=route, level=level)
                    warm = load(op="warm", stream=stream, count=1)
                    before = _cpu(pids[name])
                    answer = load(op="timed", stream=stream, count=count)
                    cpu = _cpu(pids[name]) - before
                    load(op="close")
                    results.add(level, name, stream, answer, warm=warm, cpu=cpu)
        print(f"  {route}: level {level} done", file=sys.stderr)
    return results


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True, slots=True)
class _Row:
    """One route, level and metric: added milliseconds (proxy's percentile - direct's)."""

    route: str
    level: int
    metric: str
    n: int
    toolrepair: tuple[float, float]  # +p50, +p99
    litellm: tuple[float, float]
    ratio: tuple[float, float]
    judged: tuple[bool, bool]  # which of p50, p99 the target judges here
    ok: bool  # every judged ratio within the target


def _judged(level: int, metric: str, n: int) -> tuple[bool, bool]:
    """The target's rule: p50 of whole replies and first tokens everywhere; the first token's
    p99 at one client, and only over enough samples for a p99 to mean something."""
    return metric in JUDGED_P50, level == 1 and metric == "ttft" and n >= P99_SAMPLES


def _mark(row: _Row) -> str:
    if not any(row.judged):
        return "(not judged)"
    judged = "p50" + (" p99" if row.judged[1] else "")
    return f"{'met' if row.ok else 'NOT MET'} ({judged})"


def _print(res: _Results, levels: list[int], names: list[str], seconds: float, route: str) -> list[_Row]:
    peer = "litellm" in names
    print(f"\n== {ROUTES[route][0]} (LiteLLM's proxy: its {ROUTES[route][0]} route) ==")
    print(
        f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load average at the end "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; run took {seconds:.0f} s"
    )
    print(
        "milliseconds; added = proxy's percentile - direct's at the same level; whole = non-streaming "
        "reply, ttft/last = stream's first visible token / its end"
    )
    header = f"{'conc':>4} {'metric':<6} {'n':>5} {'direct p50/p99':>17} {'toolrepair +p50/+p99':>21}"
    if peer:
        header += f" {'litellm +p50/+p99':>19} {'ratio p50/p99':>14} {'round ratios p50':>17}  verdict"
    print(header)
    rows: list[_Row] = []
    for level in levels:
        for metric in METRICS:
            direct = res.timed[(level, "direct", metric)]
            d50, d99 = _pct(direct, 0.5) * 1e3, _pct(direct, 0.99) * 1e3
            tr = res.timed[(level, "toolrepair", metric)]
            t50, t99 = _pct(tr, 0.5) * 1e3 - d50, _pct(tr, 0.99) * 1e3 - d99
            row = f"{level:>4} {metric:<6} {len(tr):>5} {d50:>8.2f}/{d99:<8.2f} {t50:>10.2f}/{t99:<10.2f}"
            if peer:
                ll = res.timed[(level, "litellm", metric)]
                l50, l99 = _pct(ll, 0.5) * 1e3 - d50, _pct(ll, 0.99) * 1e3 - d99
                r50 = t50 / l50 if l50 > 0 else float("inf")
                r99 = t99 / l99 if l99 > 0 else float("inf")
                per_round = [
                    (t - d) / (ll_ - d) if ll_ > d else float("inf")
                    for d, t, ll_ in zip(
                        res.rounds[(level, "direct", metric)],
                        res.rounds[(level, "toolrepair", metric)],
                        res.rounds[(level, "litellm", metric)],
                        strict=True,
                    )
                ]
                spread = f"{min(per_round):.2f}..{max(per_round):.2f}"
                judged = _judged(level, metric, len(tr))
                ok = (not judged[0] or r50 <= TARGET) and (not judged[1] or r99 <= TARGET)
                rows.append(_Row(route, level, metric, len(tr), (t50, t99), (l50, l99), (r50, r99), judged, ok))
                row += f" {l50:>9.2f}/{l99:<9.2f} {r50:>6.3f}/{r99:<7.3f} {spread:>17}  {_mark(rows[-1])}"
            print(row)

    print(
        "\nCPU per request, milliseconds, whole/streamed, over the timed rounds (server: the process "
        "that answers the client, the upstream itself for direct; client: the load process), and the "
        "load process's busiest share of one core"
    )
    print(
        f"{'conc':>4} "
        + " ".join(f"{name + ' server':>19} {name + ' client':>17}" for name in names)
        + f" {'client share':>13}"
    )
    for level in levels:
        row = f"{level:>4} "
        share = 0.0
        for name in names:
            server = "/".join(
                f"{cpu / n * 1e3:.3f}" for cpu, n in (res.server_cpu[(level, name, stream)] for stream in (False, True))
            )
            ccpu, wall, cn = res.client[(level, name)]
            share = max(share, ccpu / wall if wall else 0.0)
            row += f"{server:>19} {ccpu / cn * 1e3:>17.3f} "
        print(row + f"{share:>12.0%}")

    print(
        "\nfresh client connections (each round's untimed warm-up, proxies' pools already warm "
        "after the first round): added p50, milliseconds"
    )
    for level in levels:
        cells = []
        for metric in METRICS:
            d50 = _pct(res.warm[(level, "direct", metric)], 0.5) * 1e3
            cells.append(
                f"{metric} "
                + " ".join(
                    f"{name} {_pct(res.warm[(level, name, metric)], 0.5) * 1e3 - d50:.2f}"
                    for name in names
                    if name != "direct"
                )
            )
        print(f"{level:>4}  n={len(res.warm[(level, 'direct', 'whole')])}  " + "; ".join(cells))

    tr_calls, tr_n = res.calls.get("toolrepair", [0, 0])
    print(
        f"\nwhole replies through toolrepair carrying tool_calls: {tr_calls}/{tr_n}; "
        f"reconnects after a server closed an idle connection: {res.reconnects}; errors: {res.errors or 'none'}"
    )
    if res.errors or tr_calls != tr_n:  # a path that failed, or a reply not repaired: no verdict stands
        rows = [replace(r, ok=False) for r in rows]
        print("errors, or whole replies without their call: every row of this route counts as NOT MET")
    return rows


def _summary(rows: list[_Row], seconds: float, plan: dict[int, tuple[int, int]]) -> None:
    """Every route in one table (Markdown), and the overall verdict."""
    print(
        f"\n== every route, one run ({seconds:.0f} s; load average at the end "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; plan "
        + ", ".join(f"c={c}: {r} rounds x {k}" for c, (r, k) in plan.items())
        + ") ==\nadded latency, milliseconds (proxy's percentile - direct's); ratio = toolrepair's / LiteLLM's\n"
    )
    print(
        "| route | c | metric | n | toolrepair +p50 | LiteLLM +p50 | ratio p50 | toolrepair +p99 | LiteLLM +p99 "
        "| ratio p99 | verdict |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {ROUTES[r.route][0]} | {r.level} | {r.metric} | {r.n} | {r.toolrepair[0]:.2f} | {r.litellm[0]:.2f} "
            f"| {r.ratio[0]:.3f} | {r.toolrepair[1]:.2f} | {r.litellm[1]:.2f} | {r.ratio[1]:.3f} | {_mark(r)} |"
        )
    failing = [f"{ROUTES[r.route][0]} c={r.level} {r.metric}" for r in rows if not r.ok]
    p99 = [r for r in rows if r.judged[1]]
    print(
        f"\ntarget: toolrepair's added latency <= {TARGET}x LiteLLM's at p50 (whole, ttft) on every route and "
        f"level, and the c=1 ttft p99 over >= {P99_SAMPLES} samples: "
        + ("met" if not failing else f"NOT MET ({'; '.join(failing)})")
        + ("" if p99 or not rows else f" (p99 not judged: fewer than {P99_SAMPLES} samples at c=1)")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,50,200")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short sanity run: " + ", ".join(f"{r} rounds of {k} at {c}" for c, (r, k) in QUICK_PLAN.items()),
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="rounds per level (default: "
        + ", ".join(f"{r} rounds of {k} at {c}" for c, (r, k) in PLAN.items())
        + "; each round: every path, whole then streamed, warm-up then timed)",
    )
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument(
        "--routes",
        default="chat,messages,responses",
        help="routes measured, one after another in the run: " + ", ".join(ROUTES),
    )
    parser.add_argument("--profile-proxy", metavar="FILE", help="run toolrepair serve under cProfile, stats to FILE")
    parser.add_argument(
        "--model-profile",
        metavar="NAME",
        help="serve with --model-profile NAME (e.g. hermes): streamed text and calls are released as they "
        "are certain; without one (the default, the model name `bench` picks none) a stream is held to its end",
    )
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        _run_client()
        return
    levels = [int(x) for x in args.levels.split(",")]
    routes = args.routes.split(",")
    plan = QUICK_PLAN if args.quick else PLAN
    started = time.perf_counter()

    up_port, tr_port, ll_port = _free_port(), _free_port(), _free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    env = {"PYTHONPATH": str(ROOT)}
    serve = ["serve", "--upstream", f"{upstream}/v1", "--port", str(tr_port)]
    if args.model_profile:
        serve += ["--model-profile", args.model_profile]
    print(f"toolrepair serve, model profile: {args.model_profile or 'none (a stream is held to its end)'}")
    serve_cmd = (
        [sys.executable, "-c", PROFILED_SERVE, str(Path(args.profile_proxy).resolve()), *serve]
        if args.profile_proxy
        else [sys.executable, "-m", "toolrepair", *serve]
    )
    load = _Load()
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            _process([sys.executable, "-c", UPSTREAM, str(up_port)], upstream, ready="/v1/models") as up,
            _process(serve_cmd, f"http://127.0.0.1:{tr_port}", env=env) as tr,
        ):
            targets = {"direct": (up_port, up), "toolrepair": (tr_port, tr)}
            pids = {"direct": up.pid, "toolrepair": tr.pid}
            if args.no_litellm:
                res = {
                    route: _run(load, targets, levels, args.rounds, pids, route=route, plan=plan) for route in routes
                }
            else:
                config = Path(tmp, "litellm.yaml")
                config.write_text(LITELLM_CONFIG.format(upstream=upstream))
                litellm_env = {
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                    "LITELLM_LOG": "ERROR",
                    "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
                }
                litellm_cmd = [
                    sys.executable,
                    "-m",
                    "litellm.proxy.proxy_cli",
                    "--config",
                    str(config),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(ll_port),
                    "--num_workers",
                    "1",
                ]
                with _process(
                    litellm_cmd, f"http://127.0.0.1:{ll_port}", env=litellm_env, ready="/health/liveliness"
                ) as ll:
                    targets["litellm"] = (ll_port, ll)
                    pids["litellm"] = ll.pid
                    res = {
                        route: _run(load, targets, levels, args.rounds, pids, route=route, plan=plan)
                        for route in routes
                    }
    finally:
        load.close()
    seconds = time.perf_counter() - started
    rows = [row for route in routes for row in _print(res[route], levels, list(targets), seconds, route)]
    if "litellm" in targets:
        _summary(rows, seconds, plan)  # the verdicts are printed; exit status 0


if __name__ == "__main__":
    main()
