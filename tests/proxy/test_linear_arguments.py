"""Native call arguments streamed in many pieces cost linear work, in the proxy and in the LiteLLM
and smolagents integrations: counted as the characters string concatenation copies (a ``str``
subclass counts them), never timed. Joining pieces once copies none; ``+=`` per piece copies
everything before it each time (4x the pieces, 16x the copying)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest

import toolrepair as tr
from toolrepair.proxy._report import Tally
from toolrepair.proxy._stream import StreamRepair

from .replies import TOOLS


class Piece(str):
    """A piece of streamed text that counts the characters each concatenation with it copies."""

    copied: ClassVar[int] = 0

    def __add__(self, other: str) -> str:
        Piece.copied += len(self) + len(other)
        return str.__add__(self, other)

    def __radd__(self, other: str) -> str:
        Piece.copied += len(other) + len(self)
        return str.__add__(other, self)


def _pieces(n: int) -> list[str]:
    """``{"query": "aaa…"}`` in n + 2 pieces (one character each in the middle)."""
    return [Piece('{"query": "'), *(Piece("a") for _ in range(n)), Piece('"}')]


def _copied(run: Callable[[list[str]], object], n: int) -> int:
    Piece.copied = 0
    run(_pieces(n))
    return Piece.copied


def _assert_linear(run: Callable[[list[str]], object], n: int = 2000) -> None:
    """Each character copied by concatenation at most once, at n and at 4n pieces."""
    for size in (n, 4 * n):
        total = size + 13
        assert _copied(run, size) <= total, f"{_copied(run, size)} characters copied for {total}"


def test_the_quadratic_form_is_caught() -> None:
    def plus_equals(pieces: list[str]) -> str:
        slot = {"arguments": ""}
        for piece in pieces:
            slot["arguments"] += piece
        return slot["arguments"]

    with pytest.raises(AssertionError, match="characters copied"):
        _assert_linear(plus_equals)


# -- the proxy ------------------------------------------------------------------------------------
def _proxy_stream(pieces: list[str]) -> dict[str, Any]:
    registry = tr.ToolRegistry([tr.ToolSpec(t["function"]["name"], t["function"]["parameters"]) for t in TOOLS])
    repair = StreamRepair(registry, Tally())
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "web_search", "arguments": ""}}
    out = repair.feed({"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
    for piece in pieces:
        out += repair.feed(
            {
                "id": "x",
                "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}],
            }
        )
    out += repair.feed({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    [call] = [tc for chunk in out for tc in chunk["choices"][0]["delta"].get("tool_calls") or ()]
    return call


def test_proxy_native_arguments_linear() -> None:
    call = _proxy_stream(_pieces(50))
    assert json.loads(call["function"]["arguments"]) == {"query": "a" * 50}
    _assert_linear(_proxy_stream)


# -- LiteLLM ----------------------------------------------------------------------------------------
def _litellm_stream(pieces: list[str]) -> dict[str, Any]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    pytest.importorskip("litellm")
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    from toolrepair.integrations.litellm import repair_stream

    def chunk(calls: list[dict[str, Any]] | None, finish: str | None = None) -> Any:
        delta = Delta(role="assistant")
        delta.tool_calls = calls  # plain mappings, as some providers' chunks carry: the pieces stay Pieces
        return ModelResponseStream(
            id="s", model="m", choices=[StreamingChoices(index=0, delta=delta, finish_reason=finish)]
        )

    chunks = [
        chunk([{"index": 0, "id": "c1", "type": "function", "function": {"name": "web_search", "arguments": ""}}]),
        *(chunk([{"index": 0, "function": {"arguments": p}}]) for p in pieces),
        chunk(None, "tool_calls"),
    ]
    registry = tr.ToolRegistry([tr.ToolSpec("web_search", TOOLS[0]["function"]["parameters"])])
    calls = [tc for c in repair_stream(chunks, registry) for tc in c.choices[0].delta.tool_calls or ()]
    [call] = calls
    return {
        "name": call["function"]["name"] if isinstance(call, dict) else call.function.name,
        "arguments": call["function"]["arguments"] if isinstance(call, dict) else call.function.arguments,
    }


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_litellm_native_arguments_linear() -> None:
    call = _litellm_stream(_pieces(50))
    assert call["name"] == "web_search" and json.loads(call["arguments"]) == {"query": "a" * 50}
    _assert_linear(_litellm_stream, 200)  # LiteLLM's chunk objects are slow to build: fewer pieces


# -- smolagents -------------------------------------------------------------------------------------
def _smolagents_stream(pieces: list[str]) -> Any:
    pytest.importorskip("smolagents")
    from smolagents.models import (
        ChatMessageStreamDelta,
        ChatMessageToolCallFunction,
        ChatMessageToolCallStreamDelta,
        Model,
    )

    from toolrepair.integrations.smolagents import ToolRepairModel

    class Pieces(Model):
        def __init__(self) -> None:
            super().__init__(model_id="pieces")

        def generate_stream(self, messages: Any, **kwargs: Any) -> Iterator[ChatMessageStreamDelta]:
            yield ChatMessageStreamDelta(
                tool_calls=[
                    ChatMessageToolCallStreamDelta(
                        index=0,
                        id="c1",
                        type="function",
                        function=ChatMessageToolCallFunction(name="web_search", arguments=""),
                    )
                ]
            )
            for piece in pieces:
                yield ChatMessageStreamDelta(
                    tool_calls=[
                        ChatMessageToolCallStreamDelta(
                            index=0, function=ChatMessageToolCallFunction(name="", arguments=piece)
                        )
                    ]
                )

    def web_search(query: str) -> str:
        return query

    model = ToolRepairModel(Pieces(), tr.ToolRegistry([web_search]))
    [call] = [tc for d in model.generate_stream([], tools_to_call_from=[]) for tc in d.tool_calls or ()]
    return call


def test_smolagents_native_arguments_linear() -> None:
    call = _smolagents_stream(_pieces(50))
    assert call.function.name == "web_search" and json.loads(call.function.arguments) == {"query": "a" * 50}
    _assert_linear(_smolagents_stream)
