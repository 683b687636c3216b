"""StreamSalvager: salvage over a streamed reply (work in progress: buffers to close())."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .._types import ToolCall
from ._base import AnyTool, Dialect
from ._engine import salvage_text

__all__ = ["StreamSalvager", "TextDelta", "ToolCallReady"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    call: ToolCall


class StreamSalvager:
    def __init__(self, allowed: Collection[str] | AnyTool, *, dialects: Sequence[str | Dialect] | None = None,
                 mask_fences: bool = True, mask_reasoning: bool = True) -> None:
        self._allowed = allowed
        self._dialects = dialects
        self._masks = (mask_fences, mask_reasoning)
        self._parts: list[str] = []

    def feed(self, delta: str) -> list[TextDelta | ToolCallReady]:
        self._parts.append(delta)
        return []

    def close(self) -> list[TextDelta | ToolCallReady]:
        result = salvage_text("".join(self._parts), self._allowed, dialects=self._dialects,
                              mask_fences=self._masks[0], mask_reasoning=self._masks[1])
        events: list[TextDelta | ToolCallReady] = []
        if result.content:
            events.append(TextDelta(result.content))
        events.extend(ToolCallReady(c) for c in result.calls)
        return events
