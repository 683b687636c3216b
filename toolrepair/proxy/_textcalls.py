"""The text of one text block (Messages) or output_text part (Responses), salvaged as it arrives.

Both new routes cut a text region into the same pieces, streamed or whole: visible text,
reasoning read from it (a ``Thought``, under ``--reasoning separate``; see ``_reasoning``), and
calls salvaged from it (each repaired by ``salvaged_call``, with its stable id), in text order.
A whole reply is fed as one piece; a stream piece by piece. Cost: ``StreamSalvager``'s bound,
O(text + calls).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._registry import ToolRegistry
from .._salvage import ReasoningDelta, TextDelta, ToolCallReady
from .._types import ToolCall
from ._calls import salvaged_call
from ._config import Reasoning
from ._reasoning import ContentEvents, content_salvager
from ._report import Tally

__all__ = ["Piece", "TextCalls", "Thought"]


@dataclass(frozen=True, slots=True)
class Thought:
    """Reasoning read from the text (its markers excluded), to go out apart from it."""

    text: str


Piece = str | Thought | ToolCall


class TextCalls:
    """Text in, pieces out. With ``salvage`` False (the hosted profile, or a reply that already
    has native calls) the text passes as it is.

    >>> import toolrepair as tr
    >>> text = TextCalls(tr.ToolRegistry([tr.ToolSpec("f")]), Tally(), "toolu_", salvage=True)
    >>> pieces = text.feed('Sure. <tool_call>{"name": "f", "arguments": {}}</tool_call>') + text.close()
    >>> pieces[0], pieces[1].name, pieces[1].id.startswith("toolu_")
    ('Sure. ', 'f', True)
    """

    __slots__ = ("_prefix", "_registry", "_salvager", "_tally")

    def __init__(
        self, registry: ToolRegistry, tally: Tally, prefix: str, *, salvage: bool, reasoning: Reasoning = "separate"
    ) -> None:
        self._registry = registry
        self._tally = tally
        self._prefix = prefix
        self._salvager = (
            ContentEvents(content_salvager(registry), reasoning) if salvage and registry.profile != "hosted" else None
        )

    def feed(self, text: str) -> list[Piece]:
        if self._salvager is None:
            return [text] if text else []
        return self._pieces(self._salvager.feed(text))

    def close(self) -> list[Piece]:
        if self._salvager is None:
            return []
        salvager, self._salvager = self._salvager, None
        return self._pieces(salvager.close())

    def _pieces(self, events: list[TextDelta | ReasoningDelta | ToolCallReady]) -> list[Piece]:
        out: list[Piece] = []
        for event in events:
            if isinstance(event, TextDelta):
                if not event.text:
                    continue
                if out and isinstance(out[-1], str):
                    out[-1] += event.text
                else:
                    out.append(event.text)
            elif isinstance(event, ReasoningDelta):  # never a source of calls
                if not event.text:
                    continue
                if out and isinstance(out[-1], Thought):
                    out[-1] = Thought(out[-1].text + event.text)
                else:
                    out.append(Thought(event.text))
            else:
                # The reply's salvaged calls so far number it: ids are unique in the reply.
                written = salvaged_call(event.call, self._tally.salvaged, self._registry, self._tally, self._prefix)
                if written is not None:  # a refused call is noted, never delivered
                    out.append(written)
        return out
