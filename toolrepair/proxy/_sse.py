"""Server-sent events, read line by line: the `data` payloads of an upstream stream."""

from __future__ import annotations

__all__ = ["MalformedSSE", "SSEReader"]

_FIELDS = frozenset({"data", "event", "id", "retry"})


class MalformedSSE(ValueError):
    """A line that is not a server-sent event field."""


class SSEReader:
    """Payloads of ``data`` fields, one per event (several data lines joined by ``\\n``).

    O(1) per line beyond its length. A line that is not ``field: value``, a comment
    (``:``) or blank raises ``MalformedSSE``.

    >>> r = SSEReader()
    >>> r.feed_line('data: {"a": 1}'), r.feed_line("")
    (None, '{"a": 1}')
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: list[str] | None = None

    def feed_line(self, line: str) -> str | None:
        """The event's data when ``line`` ends an event (is blank), else None."""
        if not line:
            data, self._data = self._data, None
            return None if data is None else "\n".join(data)
        if line[0] == ":":
            return None  # a comment (keep-alive)
        name, _, value = line.partition(":")
        if name not in _FIELDS:
            raise MalformedSSE(f"not a server-sent event line: {line[:80]!r}")
        if name == "data":
            if self._data is None:
                self._data = []
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def close(self) -> str | None:
        """The last event's data when the stream ended without its blank line."""
        data, self._data = self._data, None
        return None if data is None else "\n".join(data)

