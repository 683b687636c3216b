"""Where reasoning the salvager reads in a reply's content goes (``--reasoning``), whole and
streamed by one rule, and the salvager the proxy reads content with.

* ``separate`` (the default): the salvager's fields: ``content`` is the text outside calls,
  reasoning and chat-channel markup, ``reasoning`` the reasoning regions' text (sent as
  ``reasoning_content``, a ``thinking`` block, ...).
* ``inline``: the content as the model wrote it, less the calls taken from it: reasoning
  blocks and their markers stay where they were, for clients that show ``<think>`` themselves.
  ``ContentBuilder``'s whitespace rule tidies where the calls were cut, as in ``separate``.
* ``drop``: ``separate``'s content; the reasoning read from it goes nowhere.

Every mode reads calls the same way (a call inside reasoning is never one), and the reasoning
the upstream sent in a field of its own passes through untouched in every mode.
"""

from __future__ import annotations

from .._registry import ToolRegistry
from .._salvage import ReasoningDelta, StreamSalvager, TextDelta, ToolCallReady
from .._salvage._base import ContentBuilder, build_content
from .._salvage._stream import Event
from .._types import SalvageResult
from ._config import Reasoning

__all__ = ["ContentEvents", "content_salvager", "whole_fields"]


def content_salvager(registry: ToolRegistry) -> StreamSalvager:
    """A salvager over the registry's names, dialects, model profile and limits.

    Not ``registry.stream()``: that stream also refuses a reply marked untrusted (a tool's
    output fed back), holding events while a marked text begins as the reply does. The proxy
    builds a registry per request and marks nothing, so there is nothing to refuse; either
    way, with a model profile a call goes out the moment it closes."""
    return StreamSalvager(registry.names, dialects=registry.dialects, model=registry.model, limits=registry.limits)


def whole_fields(text: str, result: SalvageResult, mode: Reasoning) -> tuple[str, str]:
    """A whole reply's content and the reasoning read from it, under ``mode``. O(len(text)).

    >>> from toolrepair import salvage_text
    >>> text = "<think>Plan.</think> Hi"
    >>> [whole_fields(text, salvage_text(text, ["f"]), m) for m in ("separate", "inline", "drop")]
    [('Hi', 'Plan.'), ('<think>Plan.</think> Hi', ''), ('Hi', '')]
    """
    if mode == "separate":
        return result.content, result.reasoning
    if mode == "drop":
        return result.content, ""
    return build_content(text, [call.span or (0, 0) for call in result.calls]), ""


class ContentEvents:
    """A reply's content fed as it arrives; the salvager's events under ``mode``: the same
    calls, ``TextDelta`` and ``ReasoningDelta`` as ``whole_fields`` gives them.

    ``inline`` passes on the text it was fed, less each call's span, up to the salvager's
    ``settled`` offset (no call can start before it): as soon as the salvager itself would
    release it. It keeps the text from that offset on, at most what the salvager holds.

    >>> s = ContentEvents(StreamSalvager(["f"], model="qwen3"), "inline")
    >>> [e.text for e in s.feed("<think>Plan.</think> Hi") + s.close()]
    ['<think>Plan.</think> Hi']
    """

    __slots__ = ("_at", "_content", "_mode", "_pending", "_salvager")

    def __init__(self, salvager: StreamSalvager, mode: Reasoning) -> None:
        self._salvager = salvager
        self._mode = mode
        self._pending: list[str] = []  # inline: the text fed from offset `_at` on
        self._at = 0
        self._content = ContentBuilder()

    def feed(self, text: str) -> list[Event]:
        # Without a model profile the salvager only keeps each delta until the reply ends (a
        # lone `</think>` could still make it all reasoning): one feed per delta costs O(1).
        events = self._salvager.feed(text)
        if self._mode != "inline":
            return self._shaped(events)
        if text:
            self._pending.append(text)
        return self._inline(events, self._salvager.settled, final=False)

    def close(self) -> list[Event]:
        events = self._salvager.close()
        if self._mode != "inline":
            return self._shaped(events)
        return self._inline(events, self._salvager.settled, final=True)

    def _shaped(self, events: list[Event]) -> list[Event]:
        if self._mode == "drop":
            return [event for event in events if not isinstance(event, ReasoningDelta)]
        return events

    def _inline(self, events: list[Event], settled: int, *, final: bool) -> list[Event]:
        """The text fed, in order, its calls cut out where they stood. O(text passed on)."""
        out: list[Event] = []
        for event in events:
            if isinstance(event, ToolCallReady):
                start, end = event.call.span or (self._at, self._at)
                self._text(self._take(start), out)
                kept = self._content.cut()
                if kept:
                    out.append(TextDelta(kept))
                self._take(end)  # the call's own text: never content
                out.append(event)
        self._text(self._take(settled), out)
        rest = self._content.finish() if final else ""
        if rest:
            out.append(TextDelta(rest))
        return out

    def _take(self, upto: int) -> str:
        """The text fed from ``_at`` to ``upto``, consumed."""
        if upto <= self._at:
            return ""
        text = "".join(self._pending)
        piece, rest = text[: upto - self._at], text[upto - self._at :]
        self._pending = [rest] if rest else []
        self._at = upto
        return piece

    def _text(self, raw: str, out: list[Event]) -> None:
        text = self._content.text(raw) if raw else raw
        if text:
            out.append(TextDelta(text))
