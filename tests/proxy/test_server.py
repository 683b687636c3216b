"""The proxy behind a real socket, in front of a real (scripted) upstream: repair, passthrough, faults."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import httpx
import pytest

from .replies import CASES, CHUNKINGS, FLAVORS, TOOLS, assemble, chunks, seen


def _chat(url: str, model: str, **extra: Any) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **extra}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)


def _events(
    url: str, model: str, headers: dict[str, str] | None = None, **extra: Any
) -> tuple[httpx.Response, list[Any]]:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "stream": True, **extra}
    out: list[Any] = []
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=30, headers=headers) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line[len("data: ") :]
                out.append(data if data == "[DONE]" else json.loads(data))
            elif line.startswith(":"):
                out.append(line)
    return response, out


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("key", sorted(CASES))
def test_whole_reply_repaired(proxy: str, flavor: str, key: str) -> None:
    _, expected = CASES[key]
    response = _chat(proxy, f"{flavor}/whole/{key}")
    assert response.status_code == 200
    assert response.headers["x-toolrepair"] == expected.header
    choice = response.json()["choices"][0]
    assert seen(choice["message"]) == (expected.content, expected.calls)
    assert choice["finish_reason"] == expected.finish
    for tc in choice["message"].get("tool_calls") or ():
        assert tc["id"].startswith("call_") and tc["type"] == "function"
    assert "toolrepair" not in response.json()  # only with --annotate


_STREAMED = ["hermes", "qwen3_xml", "mistral", "harmony", "reasoning", "native_drift", "native_mixed", "prose"]
# Every server shape and chunking for one case, every case in each chunking (the pure property
# test runs every combination and arbitrary cuts; these run them through real sockets).
_COMBOS = sorted(
    {(f, c, "hermes") for f in FLAVORS for c in CHUNKINGS}
    | {(FLAVORS[i % len(FLAVORS)], c, k) for i, k in enumerate(_STREAMED) for c in CHUNKINGS}
)


@pytest.mark.parametrize(("flavor", "chunking", "key"), _COMBOS)
def test_streamed_reply_repaired(proxy: str, flavor: str, chunking: str, key: str) -> None:
    reply, expected = CASES[key]
    response, events = _events(proxy, f"{flavor}/{chunking}/{key}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert events[-1] == "[DONE]"
    assert events[-2] == f": x-toolrepair {expected.header}"
    chunks = [e for e in events if isinstance(e, dict)]
    assert all("error" not in c for c in chunks)
    message = assemble(chunks)
    assert seen(message) == (expected.content, expected.calls)
    assert message["finish_reason"] == expected.finish
    assert message["reasoning"] == reply.reasoning
    whole = _chat(proxy, f"{flavor}/whole/{key}").json()["choices"][0]
    assert [tc["id"] for tc in message["tool_calls"] or ()] == [
        tc["id"] for tc in whole["message"].get("tool_calls") or ()
    ]
    if flavor == "vllm":  # the usage chunk passes through
        assert any(c.get("usage") for c in chunks)


def test_annotate_adds_the_report(start_proxy: Any) -> None:
    url = start_proxy(annotate=True)
    body = _chat(url, "vllm/whole/schema_refused").json()
    report = body["toolrepair"]
    assert (report["repaired"], report["salvaged"], report["refused"]) == (0, 1, 1)
    assert "required" in report["notes"][0]["message"] or "query" in report["notes"][0]["message"]
    _, events = _events(url, "vllm/token/hermes")
    last = [e for e in events if isinstance(e, dict)][-1]
    assert last["toolrepair"]["salvaged"] == 1 and last["choices"] == []


@pytest.mark.parametrize("extra", [{"tool_choice": "none"}, {"tools": None}, {"tools": []}])
def test_nothing_salvaged_without_tools(proxy: str, extra: dict[str, Any]) -> None:
    response = _chat(proxy, "vllm/whole/hermes", **extra)
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=0, refused=0"
    assert response.json()["choices"][0]["message"]["content"] == CASES["hermes"][0].content
    assert response.json()["choices"][0]["finish_reason"] == "stop"


def test_named_tool_choice_offers_that_tool_alone(proxy: str) -> None:
    # mistral's reply calls get_weather and web_search; only web_search is offered
    choice = {"type": "function", "function": {"name": "web_search"}}
    response = _chat(proxy, "vllm/whole/mistral", tool_choice=choice)
    calls = seen(response.json()["choices"][0]["message"])[1]
    assert calls == [("web_search", {"query": "Paris events"})]


def test_hosted_profile(start_proxy: Any) -> None:
    url = start_proxy(profile="hosted")
    response = _chat(url, "vllm/whole/hermes")
    assert response.json()["choices"][0]["message"]["content"] == CASES["hermes"][0].content
    response = _chat(url, "vllm/whole/native_drift")
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=0, refused=1"
    choice = response.json()["choices"][0]
    assert "tool_calls" not in choice["message"] and choice["finish_reason"] == "stop"  # refused: never a call


# -- self-repair round trips and tool_choice ---------------------------------------------
def test_reprompt_sends_the_corrective_text(start_proxy: Any, upstream: Any) -> None:
    url = start_proxy(max_reprompts=1)
    before = len(upstream.seen)
    response = _chat(url, "reprompt/schema_refused")
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=1, refused=0, reprompts=1"
    assert seen(response.json()["choices"][0]["message"])[1] == [("web_search", {"query": "fixed"})]
    second = upstream.seen[before + 1]["body"]["messages"]
    # the refused call was never delivered, so the turn has no call to answer: the corrective
    # text comes as a user message
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert "tool_calls" not in second[1]
    assert "Expected parameters for 'web_search'" in second[2]["content"]


def test_no_reprompt_by_default(proxy: str) -> None:
    response = _chat(proxy, "reprompt/schema_refused")
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=1, refused=1"


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "web_search"}}])
def test_tool_choice_required_is_honoured(start_proxy: Any, upstream: Any, choice: Any) -> None:
    url = start_proxy(max_reprompts=2)
    before = len(upstream.seen)
    response = _chat(url, "reprompt/prose", tool_choice=choice)
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=1, refused=0, reprompts=1"
    asked = upstream.seen[before + 1]["body"]["messages"]
    assert asked[-1]["role"] == "user" and "You must call" in asked[-1]["content"]


def test_tool_choice_unmet_is_said(start_proxy: Any) -> None:
    url = start_proxy(max_reprompts=1)
    response = _chat(url, "reprompt/never", tool_choice="required")
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=0, refused=0, reprompts=1, tool_choice=unmet"
    assert response.json()["choices"][0]["message"]["content"] == "The answer is 4."
    response = _chat(url, "reprompt/never")  # auto: nothing asked again
    assert response.headers["x-toolrepair"] == "repaired=0, salvaged=0, refused=0"
    # streamed, the reply is the user's before it could be asked again: said in the report
    _, events = _events(url, "reprompt/never", tool_choice="required")
    assert events[-2] == ": x-toolrepair repaired=0, salvaged=0, refused=0, tool_choice=unmet"
    _, events = _events(url, "vllm/token/hermes", tool_choice="required")
    assert events[-2] == ": x-toolrepair repaired=1, salvaged=1, refused=0"


# -- passthrough ---------------------------------------------------------------------------
def test_other_paths_are_forwarded_unchanged(proxy: str, upstream: Any) -> None:
    response = httpx.get(f"{proxy}/v1/models?limit=2", headers={"authorization": "Bearer up-key"})
    assert response.status_code == 200 and response.json()["data"][0]["id"] == "m"
    assert response.headers["x-upstream"] == "yes"
    assert len(response.headers.get_list("date")) == len(response.headers.get_list("server")) == 1
    assert upstream.seen[-1]["query"] == "limit=2"
    assert upstream.seen[-1]["headers"]["authorization"] == "Bearer up-key"  # forwarded without --api-key
    emb = httpx.post(f"{proxy}/v1/embeddings", json={"model": "e", "input": "x"})
    assert emb.json()["data"][0]["embedding"] == [0.5, 0.5, 0.5]
    with httpx.stream("POST", f"{proxy}/v1/completions", json={"model": "m", "prompt": "x", "stream": True}) as r:
        lines = [line for line in r.iter_lines() if line]
    assert lines[-1] == "data: [DONE]" and len(lines) == 3
    assert httpx.get(f"{proxy}/v1/nothing-here").status_code == 404


def test_health(proxy: str) -> None:
    response = httpx.get(f"{proxy}/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"


# -- faults ----------------------------------------------------------------------------------
def test_upstream_unreachable_is_502(start_proxy: Any) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        url = start_proxy(upstream=f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
        for response in (
            _chat(url, "vllm/whole/prose"),
            httpx.get(f"{url}/v1/models"),
            httpx.post(
                f"{url}/v1/chat/completions", json={"model": "m", "messages": [], "tools": TOOLS, "stream": True}
            ),
        ):
            assert response.status_code == 502
            assert response.json()["error"]["type"] == "upstream_unreachable"
            assert "could not be reached" in response.json()["error"]["message"]


@pytest.mark.parametrize(("model", "status"), [("fault/500", 500), ("fault/404", 404)])
@pytest.mark.parametrize("stream", [False, True])
def test_upstream_errors_pass_through(proxy: str, model: str, status: int, stream: bool) -> None:
    response = _chat(proxy, model, stream=stream)
    assert response.status_code == status
    assert "error" in response.json()


def test_upstream_not_json_passes_through(proxy: str) -> None:
    response = _chat(proxy, "fault/notjson")
    assert response.status_code == 200 and response.text == "<html>gateway</html>"


@pytest.mark.parametrize("stream", [False, True])
def test_slow_upstream_is_504(start_proxy: Any, stream: bool) -> None:
    url = start_proxy(timeout=0.3)
    response = _chat(url, "fault/slow", stream=stream)
    assert response.status_code == 504
    assert "--timeout" in response.json()["error"]["message"]


@pytest.mark.parametrize("kind", ["cut", "malformed", "badjson", "stall"])
def test_broken_stream_ends_with_error_and_done(start_proxy: Any, kind: str) -> None:
    url = start_proxy(timeout=0.3)  # "stall": the upstream stops sending mid-stream
    response, events = _events(url, f"fault/{kind}")
    assert response.status_code == 200
    assert events[-1] == "[DONE]"
    errors = [e for e in events if isinstance(e, dict) and "error" in e]
    assert len(errors) == 1 and errors[0]["error"]["type"] == "upstream_error"
    # everything the upstream sent is delivered: the call it did not finish, as the text it is
    sent = chunks(CASES["hermes"][0], "vllm", "char")
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in sent[: (len(sent) + 1) // 3])
    assert text.startswith("Let me look. <tool_call>")
    assert assemble([e for e in events if isinstance(e, dict) and "choices" in e])["content"] == text


def test_client_disconnect_cancels_the_upstream(proxy: str, upstream: Any) -> None:
    upstream.cancelled.clear()
    body = {"model": "fault/hang", "messages": [], "tools": TOOLS, "stream": True}
    with httpx.stream("POST", f"{proxy}/v1/chat/completions", json=body, timeout=30) as response:
        for line in response.iter_lines():
            # The reply has begun (its first event, the role): the client leaves. Not the first
            # content, which a stream without a model profile may hold until the upstream's end,
            # here its timeout: the test would wait that out before the client could leave.
            if line.startswith("data:"):
                break
    # the client is gone; the upstream sees its request cancelled (no clock: an event, bounded wait)
    assert upstream.cancelled.wait(20)


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (b"{not json", 400, "not a JSON object"),
        (b"[1, 2]", 400, "not a JSON object"),
        (b'{"model": "m", "tools": {"a": 1}}', 400, "tools must be an array"),
        (b'{"model": "m", "tools": [{"type": "function", "function": {}}]}', 400, "function.name"),
        (
            b'{"model": "m", "tools": [{"type": "function", "function": {"name": "a"}}], "tool_choice": 3}',
            400,
            "tool_choice",
        ),
        (
            b'{"model": "m", "tools": [{"type": "function", "function": {"name": "a"}}], '
            b'"tool_choice": {"type": "function", "function": {"name": "b"}}}',
            400,
            "not in tools",
        ),
        (b'{"model": "m", "messages": [], "pad": "' + b"x" * 2000 + b'"}', 413, "--max-body"),
    ],
)
def test_bad_requests(start_proxy: Any, content: bytes, status: int, message: str) -> None:
    url = start_proxy(max_body=1000)
    response = httpx.post(f"{url}/v1/chat/completions", content=content, headers={"content-type": "application/json"})
    assert response.status_code == status
    assert message in response.json()["error"]["message"]


def test_body_limit_without_content_length(start_proxy: Any) -> None:
    url = start_proxy(max_body=1000)

    def body():
        yield b'{"model": "m", "pad": "'
        yield b"x" * 2000
        yield b'"}'

    response = httpx.post(f"{url}/v1/chat/completions", content=body())  # chunked: no length declared
    assert response.status_code == 413


def test_api_key(start_proxy: Any, upstream: Any) -> None:
    url = start_proxy(api_key="s3cret")
    assert _chat(url, "vllm/whole/prose").status_code == 401
    wrong = httpx.get(f"{url}/v1/models", headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "--api-key" in wrong.json()["error"]["message"]
    good = httpx.get(f"{url}/v1/models", headers={"authorization": "Bearer s3cret"})
    assert good.status_code == 200
    assert "authorization" not in upstream.seen[-1]["headers"]  # the proxy's key is not sent on
    assert httpx.get(f"{url}/health").status_code == 200


class _Lines(logging.Handler):
    """Collects the proxy's log lines; ``wait(n)`` until n came (a streamed reply logs at its end,
    which may be just after the client read [DONE])."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.changed:
            self.lines.append(record.getMessage())
            self.changed.notify_all()

    def wait(self, n: int) -> list[str]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.lines) >= n, timeout=20)
            return list(self.lines)


def test_one_log_line_per_request_without_bodies_or_auth(proxy: str) -> None:
    logger = logging.getLogger("toolrepair.proxy")
    handler = _Lines()
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        _chat(proxy, "vllm/whole/hermes", user="secret-body-marker")
        handler.wait(1)
        httpx.get(f"{proxy}/v1/models", headers={"authorization": "Bearer secret-token"})
        handler.wait(2)
        _events(proxy, "vllm/token/hermes")
        lines = handler.wait(3)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(lines) == 3
    assert lines[0].startswith("POST /v1/chat/completions 200 repaired=1, salvaged=1, refused=0 ")
    assert lines[0].endswith("ms")
    assert lines[1].startswith("GET /v1/models 200 - ")
    assert lines[2].startswith("POST /v1/chat/completions 200 repaired=1, salvaged=1, refused=0 ")
    assert not any("secret" in line or "cats" in line for line in lines)


def test_upstream_cut_while_answering_whole_is_502(proxy: str) -> None:
    response = _chat(proxy, "fault/cut")  # not streamed: the body breaks off
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "upstream_error"


def test_completion_without_choices_passes(proxy: str) -> None:
    response = _chat(proxy, "fault/nochoices", tool_choice="required")
    assert response.status_code == 200 and response.json() == {"id": "x", "object": "chat.completion"}


def test_stream_without_done_after_the_finish_is_whole(proxy: str) -> None:
    _, events = _events(proxy, "fault/nodone")
    assert events[-1] == "[DONE]"
    assert not any(isinstance(e, dict) and "error" in e for e in events)
    message = assemble([e for e in events if isinstance(e, dict)])
    assert seen(message) == (CASES["hermes"][1].content, CASES["hermes"][1].calls)


def test_stream_ending_before_the_finish_is_an_error(proxy: str) -> None:
    _, events = _events(proxy, "fault/eof")
    errors = [e for e in events if isinstance(e, dict) and "error" in e]
    assert [e["error"]["message"] for e in errors] == ["The upstream closed the stream before it ended."]
    assert events[-1] == "[DONE]"


def test_passthrough_stream_cut_delivers_what_came(proxy: str) -> None:
    with httpx.stream("POST", f"{proxy}/v1/completions", json={"model": "cut", "prompt": "x", "stream": True}) as r:
        lines = [line for line in r.iter_lines() if line]
    assert len(lines) == 2 and '"Hello"' in lines[0]


def test_upstream_read_timeout_is_504(upstream: Any) -> None:
    # The client alone, without the app's own bound: httpx's read timeout is mapped the same way.
    import anyio

    from toolrepair.proxy._config import ProxyConfig
    from toolrepair.proxy._errors import ProxyError
    from toolrepair.proxy._upstream import Upstream as Client

    async def main() -> None:
        client = Client(ProxyConfig(f"{upstream.url}/v1", timeout=0.2))
        try:
            with pytest.raises(ProxyError) as exc:
                await client.open(
                    "POST",
                    "/v1/chat/completions",
                    headers=[],
                    content=json.dumps({"model": "fault/slow", "messages": []}).encode(),
                )
            assert exc.value.status == 504
        finally:
            await client.aclose()

    anyio.run(main)


class _Flaky:
    """A raw HTTP server on loopback: it drops the first ``drops`` connections after reading the
    request (a kept-alive connection closed under the client), then answers each with ``reply``."""

    def __init__(self, drops: int, reply: bytes) -> None:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.drops = drops
        self.reply = reply
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.connections += 1
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                while len(rest) < length:
                    rest += conn.recv(65536)
                if self.connections > self.drops:
                    body = self.reply
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                    )

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize(("drops", "status"), [(1, 200), (2, 502)])
def test_a_connection_closed_before_any_answer_is_retried_once(start_proxy: Any, drops: int, status: int) -> None:
    from .replies import completion

    flaky = _Flaky(drops, json.dumps(completion(CASES["hermes"][0], "vllm")).encode())
    try:
        url = start_proxy(upstream=f"{flaky.url}/v1")
        response = _chat(url, "m")
        assert response.status_code == status
        assert flaky.connections == 2  # the request and its one retry, never more
        if status == 200:
            assert response.headers["x-toolrepair"] == "repaired=1, salvaged=1, refused=0"
    finally:
        flaky.close()


@pytest.mark.parametrize(
    ("reply", "passed_as_written"),
    [
        # nothing to repair: the upstream's bytes, spacing and number spelling included
        (
            b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi \\u00e9"},'
            b' "finish_reason": "stop"}], "usage": {"cost": 1E2}}',
            True,
        ),
        # a text call salvaged: the body is re-encoded
        (
            json.dumps(
                {
                    "id": "x",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": CASES["hermes"][0].content},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode(),
            False,
        ),
    ],
)
def test_a_whole_reply_with_nothing_to_repair_keeps_its_bytes(
    start_proxy: Any, reply: bytes, passed_as_written: bool
) -> None:
    upstream = _Flaky(0, reply)
    try:
        response = _chat(start_proxy(upstream=f"{upstream.url}/v1"), "m")
        assert response.status_code == 200
        assert (response.content == reply) is passed_as_written
        if passed_as_written:
            assert response.headers["x-toolrepair"] == "repaired=0, salvaged=0, refused=0"
        else:
            assert response.json()["choices"][0]["message"]["tool_calls"]
    finally:
        upstream.close()
