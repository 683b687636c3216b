"""The proxy pairs each request history's calls and results before the upstream sees it
(``--no-repair-history`` turns it off); a valid history goes up as the client's own bytes."""

from __future__ import annotations

import json
from typing import Any

import httpx

from toolrepair._history import PLACEHOLDER

from .replies import FLAVORS, TOOLS

CALL = {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{'query': 'x',}"}}
BROKEN = [
    {"role": "tool", "tool_call_id": "gone", "content": "orphan"},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "user", "content": "and?"},
]
PAIRED = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{**CALL, "function": {"name": "web_search", "arguments": '{"query": "x"}'}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": PLACEHOLDER},
    {"role": "user", "content": "and?"},
]


def _send(url: str, upstream: Any, content: bytes) -> dict[str, Any]:
    before = len(upstream.seen)
    response = httpx.post(
        f"{url}/v1/chat/completions", content=content, timeout=30, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200
    body: dict[str, Any] = upstream.seen[before]["body"]
    return body


def _body(messages: list[Any], **extra: Any) -> bytes:
    return json.dumps({"model": f"{FLAVORS[0]}/whole/prose", "messages": messages, **extra}).encode()


def test_request_history_repaired_by_default(proxy: str, upstream: Any) -> None:
    assert _send(proxy, upstream, _body(BROKEN, tools=TOOLS))["messages"] == PAIRED
    # Without tools in the request too: pairing needs no tools.
    assert _send(proxy, upstream, _body(BROKEN))["messages"] == PAIRED


def test_no_repair_history_sends_it_as_it_is(start_proxy: Any, upstream: Any) -> None:
    url = start_proxy(repair_history=False)
    assert _send(url, upstream, _body(BROKEN, tools=TOOLS))["messages"] == BROKEN


def test_valid_history_and_odd_bodies_pass_unchanged(proxy: str, upstream: Any) -> None:
    valid = PAIRED
    content = _body(valid, tools=TOOLS)
    assert _send(proxy, upstream, content)["messages"] == valid
    assert int(upstream.seen[-1]["headers"]["content-length"]) == len(content)  # the client's bytes
    spaced = content.replace(b", ", b",   ")
    _send(proxy, upstream, spaced)
    assert int(upstream.seen[-1]["headers"]["content-length"]) == len(spaced)
    # A messages field the rules do not read goes up for the upstream to judge.
    odd = json.dumps({"model": f"{FLAVORS[0]}/whole/prose", "messages": [{"role": "user", "content": "x"}, "junk"]})
    assert _send(proxy, upstream, odd.encode())["messages"][1] == "junk"


def test_serve_has_the_flag() -> None:
    import argparse

    from toolrepair.proxy._cli import add_serve_parser

    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers())
    assert parser.parse_args(["serve", "--upstream", "http://x/v1"]).no_repair_history is False
    assert parser.parse_args(["serve", "--upstream", "http://x/v1", "--no-repair-history"]).no_repair_history is True
