"""The stream ``ToolRegistry.stream()`` returns: a ``StreamSalvager`` that refuses a reply
marked untrusted (imported with the salvage engine, on the first stream)."""

from __future__ import annotations

from typing import Any

from ._safe_text import exact_str
from ._salvage import StreamSalvager, TextDelta
from ._salvage._stream import Event
from ._untrusted import Marks, ReplyDigest

__all__ = ["TrustedStream"]


class TrustedStream(StreamSalvager):
    """``ToolRegistry.stream()``: refuses a reply marked untrusted, exactly as ``salvage``
    does, and otherwise releases what the salvager releases, when it releases it.

    Whether the reply is a marked text is known only at its end, but whether it can still be
    one is known as it goes (``Marks.may_begin``): while no marked text begins with what was
    read, the salvager's events pass at once, so with a model profile each call goes the
    moment it closes. While one does, from the first call (or reasoning) on the events wait,
    until none does or ``close()``; the text before them, the reply as written, passes. A reply
    found marked at ``close()`` comes back as text from where the events passed end (a text
    marked after a call was released does not take the call back: it was not marked when the
    call went). Memory: the text not yet passed on, and a running digest. O(1) per character
    beyond the salvager's own work, plus O(text not yet passed on) per feed that has events."""

    __slots__ = ("_digest", "_held_events", "_marks", "_start", "_unreleased")

    def __init__(self, marks: Marks, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._marks = marks
        self._digest = ReplyDigest()
        # The reply from offset `_start` on (what a refused reply gives back as text), as the
        # pieces fed: joined only when events come. Names of their own: a slot the base class
        # also has would be shared, and each would overwrite the other's.
        self._unreleased: list[str] = []
        self._start = 0
        self._held_events: list[Event] | None = None

    def feed(self, delta: str) -> list[Event]:
        events = super().feed(delta)  # first: it refuses what is not a str, or after close()
        delta = exact_str(delta)  # a str subclass's methods never run
        self._digest.update(delta)
        if delta:
            self._unreleased.append(delta)
        return self._pass_on(events) if events or self._held_events else []

    def close(self) -> list[Event]:
        events = super().close()
        if self._marks.has(self._digest.digest()):
            tail = "".join(self._unreleased)
            self._unreleased, self._held_events = [], None
            return [TextDelta(tail)] if tail else []
        return self._pass_on(events, final=True)

    def _pass_on(self, events: list[Event], final: bool = False) -> list[Event]:
        held = self._held_events
        out: list[Event] = []
        if held is None:
            # Released text that is the reply as written is text whatever the verdict.
            rest = "".join(self._unreleased)
            i = 0
            while i < len(events):
                event = events[i]
                if not isinstance(event, TextDelta) or not rest.startswith(event.text):
                    break
                rest = rest[len(event.text) :]
                self._start += len(event.text)
                out.append(event)
                i += 1
            self._unreleased = [rest] if rest else []
            events = events[i:]
            if not events and not final:
                return out
        if final or not self._marks.may_begin(self._digest.prefix):
            # No marked text begins as this reply does: nothing later can make it one.
            out.extend(held or ())
            out.extend(events)
            self._held_events = None
            settled = self.settled  # every call starting before it is among the events passed
            if settled > self._start:
                rest = "".join(self._unreleased)[settled - self._start :]
                self._unreleased, self._start = [rest] if rest else [], settled
            return out
        self._held_events = [*(held or ()), *events]
        return out
