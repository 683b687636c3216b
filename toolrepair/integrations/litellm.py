"""LiteLLM: repair ``ModelResponse``s and streams from the SDK, and the proxy's responses.

- ``repair_response(response, registry)``: a copy of a ``litellm.completion`` result with every
  choice's tool calls repaired, and calls written as text salvaged into ``tool_calls``;
- ``repair_stream(chunks, registry)`` / ``arepair_stream``: the same over a streamed reply
  (``stream=True``): text calls never reach the screen, they arrive as tool-call deltas;
- ``ToolRepairLogger(...)``: a proxy ``CustomLogger`` whose ``async_post_call_success_hook`` and
  ``async_post_call_streaming_iterator_hook`` do both for every client of a LiteLLM proxy, against
  the ``tools`` each request offers (``litellm_settings: callbacks: [...]``).

A call that cannot be repaired, or that the registry's policy refuses, is never handed on: it
leaves ``tool_calls`` and its corrective message is added to the reply's text, so no executor
behind LiteLLM (an agent framework, a proxy client) runs it and the model reads why next turn.

Nothing here imports LiteLLM until it is used; without it a clear ImportError names the extra.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall, ToolSpec
from ._common import (
    REASONING_SEPARATOR,
    Reasoned,
    Vetted,
    VettedStream,
    as_dict,
    lazy_classes,
    require,
    vet,
)
from .openai import ERRORS_KEY, repair_chat_message

# ToolRepairLogger is built on first access (module __getattr__, below).
__all__ = [  # noqa: F822
    "ToolRepairLogger",
    "arepair_stream",
    "registry_for_request",
    "repair_response",
    "repair_stream",
    "repaired_message",
]

_EXTRA = "litellm"


def _utils() -> Any:
    return require("litellm.types.utils", _EXTRA)


def repaired_message(message: Mapping[str, Any], registry: ToolRegistry) -> dict[str, Any]:
    """An assistant message dict with its calls repaired (``openai.repair_chat_message``), the
    refused ones taken out and their corrective messages appended to ``content``."""
    fixed = repair_chat_message(message, registry)
    errors = fixed.pop(ERRORS_KEY, [])
    if not errors:
        return fixed
    refused = {e["tool_call_id"] for e in errors} - {None}
    calls = [tc for tc in fixed.get("tool_calls") or [] if tc.get("id") not in refused]
    if calls:
        fixed["tool_calls"] = calls
    else:
        fixed.pop("tool_calls", None)
    notes = "\n".join(e["message"] for e in errors)
    fixed["content"] = f"{fixed['content']}\n{notes}" if fixed.get("content") else notes
    return fixed


def repair_response(response: Any, registry: ToolRegistry) -> Any:
    """A copy of a ``ModelResponse`` with every choice's message repaired (see the module doc).

    ``finish_reason`` follows: ``tool_calls`` when calls remain, ``stop`` when none do.
    """
    utils = _utils()
    out = response.model_copy(deep=True)
    for choice in out.choices:
        message = getattr(choice, "message", None)
        if message is None:
            continue
        before = as_dict(message)
        fixed = repaired_message(before, registry)
        if fixed == before:
            continue
        choice.message = utils.Message(**fixed)
        choice.finish_reason = _finish(choice.finish_reason, bool(fixed.get("tool_calls")))
    return out


def _finish(reason: Any, has_calls: bool) -> Any:
    if has_calls and reason in (None, "stop"):
        return "tool_calls"
    if not has_calls and reason == "tool_calls":
        return "stop"
    return reason


# -- streaming ----------------------------------------------------------------------------------
class _StreamRepair:
    """One streamed reply (choice 0): text goes through the salvager, native tool-call deltas are
    gathered until the reply ends (a name or arguments can only be repaired whole), then every
    call is vetted and sent as one complete delta each; refused calls become text."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._text = VettedStream(registry, "call_")
        self._native: dict[int, dict[str, Any]] = {}
        self._sent_calls = 0
        self._shown = False
        self._last: Any = None
        # "upstream": the server sent reasoning_content itself; "salvaged": reasoning read from
        # the text went out (after the server's, a blank line apart).
        self._reasoned: str | None = None

    def _chunk(
        self, template: Any, content: str | None, calls: list[ToolCall], finish: Any, reasoning: str | None = None
    ) -> Any:
        utils = _utils()
        chunk = template.model_copy(deep=True)
        deltas = [
            {
                "index": self._sent_calls + i,
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
            }
            for i, c in enumerate(calls)
        ]
        self._sent_calls += len(calls)
        delta = utils.Delta(content=content, tool_calls=deltas or None)
        if reasoning:  # where LiteLLM puts a reasoning model's thinking
            delta.reasoning_content = reasoning
        chunk.choices[0].delta = delta
        chunk.choices[0].finish_reason = finish
        return chunk

    def _emit(
        self, template: Any, items: list[str | Vetted | Reasoned], finish: Any = None, upstream: Any = None
    ) -> list[Any]:
        """One chunk for what ``items`` release; ``upstream`` is the reasoning the chunk fed
        carried itself (it goes first, then what was read from the text, as whole replies)."""
        parts: list[str] = []
        thought: list[str] = []
        for item in items:
            if isinstance(item, Reasoned):
                thought.append(item.text)
            elif isinstance(item, str):
                parts.append(item)
            elif item.error is not None:  # a refusal is a line of its own
                parts.append(("\n" if self._shown or parts else "") + item.message)
        text = "".join(parts)
        self._shown = self._shown or bool(text)
        calls = [i.call for i in items if isinstance(i, Vetted) and i.error is None]
        reasoning = self._reasoning(upstream if isinstance(upstream, str) else "", "".join(thought))
        if not text and not calls and not reasoning and finish is None:
            return []
        return [self._chunk(template, text or None, calls, finish, reasoning or None)]

    def _reasoning(self, upstream: str, salvaged: str) -> str:
        """The reasoning to send now: the server's piece, then the piece read from the text, the
        first of those after some of the server's own a blank line apart (``joined_reasoning``)."""
        if salvaged and self._reasoned == "upstream":
            salvaged = REASONING_SEPARATOR + salvaged
        if upstream and self._reasoned is None:
            self._reasoned = "upstream"
        if salvaged:
            self._reasoned = "salvaged"
        return upstream + salvaged

    def feed(self, chunk: Any) -> list[Any]:
        self._last = chunk
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return [chunk]  # usage-only chunks pass through
        delta = choices[0].delta
        for tc in getattr(delta, "tool_calls", None) or []:
            data = as_dict(tc)
            # Pieces are kept and joined once at the end: `+=` would copy the whole so far each time.
            slot = self._native.setdefault(int(data.get("index") or 0), {"id": None, "name": [], "arguments": []})
            fn = data.get("function") or {}
            slot["id"] = slot["id"] or data.get("id")
            slot["name"].append(fn.get("name") or "")
            slot["arguments"].append(fn.get("arguments") or "")
        items = self._text.feed_reasoned(delta.content) if isinstance(getattr(delta, "content", None), str) else []
        finish = choices[0].finish_reason
        upstream = getattr(delta, "reasoning_content", None)
        if finish is None:
            return self._emit(chunk, items, upstream=upstream)
        return self._finish(chunk, items, finish, upstream)

    def _finish(self, template: Any, items: list[str | Vetted | Reasoned], finish: Any, upstream: Any) -> list[Any]:
        items = items + self._text.close_reasoned()
        for slot in self._native.values():
            items.append(vet(self._registry, _joined(slot)))
        self._native = {}
        has_calls = self._sent_calls > 0 or any(isinstance(i, Vetted) and i.error is None for i in items)
        return self._emit(template, items, _finish(finish, has_calls), upstream)

    def close(self) -> list[Any]:
        """Whatever is still held when a stream ends without a finishing chunk."""
        if self._last is None or not getattr(self._last, "choices", None):
            return []
        items = self._text.close_reasoned()
        native: list[str | Vetted | Reasoned] = [vet(self._registry, _joined(s)) for s in self._native.values()]
        self._native = {}
        return self._emit(self._last, items + native)


def _joined(slot: dict[str, Any]) -> tuple[str, str, Any]:
    """A streamed native call's (name, arguments, id), its pieces joined once: O(its length)."""
    return "".join(slot["name"]), "".join(slot["arguments"]), slot["id"]


def repair_stream(chunks: Iterable[Any], registry: ToolRegistry) -> Iterator[Any]:
    """``ModelResponseStream`` chunks of one reply (``litellm.completion(..., stream=True)``), repaired."""
    _utils()
    state = _StreamRepair(registry)
    for chunk in chunks:
        yield from state.feed(chunk)
    yield from state.close()


async def arepair_stream(chunks: AsyncIterable[Any], registry: ToolRegistry) -> AsyncIterator[Any]:
    """The async twin of ``repair_stream`` (``await litellm.acompletion(..., stream=True)``)."""
    _utils()
    state = _StreamRepair(registry)
    async for chunk in chunks:
        for out in state.feed(chunk):
            yield out
    for out in state.close():
        yield out


# -- proxy ----------------------------------------------------------------------------------------
def registry_for_request(
    data: Mapping[str, Any],
    *,
    allow: Collection[str] | None = None,
    deny: Collection[str] | None = None,
    before_call: Callable[[ToolCall], bool | None] | None = None,
) -> ToolRegistry:
    """A registry of the tools one Chat Completions request offers (schemas only), with a policy."""
    specs: list[ToolSpec] = []
    for tool in data.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            specs.append(
                ToolSpec(
                    fn["name"],
                    dict(params) if isinstance(params, Mapping) else {"type": "object"},
                    fn.get("description") or "",
                )
            )
    return ToolRegistry(specs, allow=allow, deny=deny, before_call=before_call)


def _logger_class() -> type:
    custom_logger = require("litellm.integrations.custom_logger", _EXTRA)

    class ToolRepairLogger(custom_logger.CustomLogger):  # type: ignore[misc,name-defined]
        """A LiteLLM proxy callback repairing every chat completion (whole and streamed).

        With ``registry`` the proxy repairs against it; otherwise against the ``tools`` each
        request offers, with ``allow``/``deny``/``before_call`` as the policy. Requests that
        offer no tools pass through untouched.
        """

        def __init__(
            self,
            registry: ToolRegistry | None = None,
            *,
            allow: Collection[str] | None = None,
            deny: Collection[str] | None = None,
            before_call: Callable[[ToolCall], bool | None] | None = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(**kwargs)
            self.registry = registry
            self._policy: dict[str, Any] = {"allow": allow, "deny": deny, "before_call": before_call}

        def registry_for(self, data: Mapping[str, Any]) -> ToolRegistry | None:
            if self.registry is not None:
                return self.registry
            registry = registry_for_request(data, **self._policy)
            return registry if len(registry) else None

        async def async_post_call_success_hook(
            self, data: dict[str, Any], user_api_key_dict: Any, response: Any
        ) -> Any:
            registry = self.registry_for(data)
            if registry is None or not hasattr(response, "choices"):
                return response
            return repair_response(response, registry)

        async def async_post_call_streaming_iterator_hook(
            self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
        ) -> AsyncIterator[Any]:
            registry = self.registry_for(request_data)
            if registry is None:
                async for chunk in response:
                    yield chunk
                return
            async for chunk in arepair_stream(response, registry):
                yield chunk

    ToolRepairLogger.__module__ = __name__
    ToolRepairLogger.__qualname__ = "ToolRepairLogger"
    return ToolRepairLogger


# ToolRepairLogger subclasses LiteLLM's CustomLogger, so it is built on first use: importing this
# module must not import the framework.
__getattr__ = lazy_classes(__name__, {"ToolRepairLogger": _logger_class})
