"""Server-sent events, read from the bytes as they arrive: the `data` payloads of an upstream stream."""

from __future__ import annotations

from collections.abc import Iterator

from ._config import DEFAULT_MAX_LINE

__all__ = ["MalformedSSE", "SSEReader"]

_FIELDS = frozenset({"data", "event", "id", "retry"})


class MalformedSSE(ValueError):
    """A line that is not a server-sent event field, or one longer than the reader's bound."""


def _decoded(line: bytes) -> str:
    """A line as UTF-8, strictly: bytes that are not UTF-8 are a malformed stream, never read
    with replacement characters (the whole reply's rule too: fail closed, one reading)."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedSSE(f"a line that is not UTF-8 (byte {exc.start})") from None


class SSEReader:
    """Payloads of ``data`` fields, one per event (several data lines joined by ``\\n``).

    O(1) per line beyond its length. A line that is not ``field: value``, a comment
    (``:``) or blank raises ``MalformedSSE``; so does a line, or an event's data, longer than
    ``max_line`` bytes (memory stays within that bound plus one read, whatever the upstream sends).

    >>> r = SSEReader()
    >>> r.feed_line('data: {"a": 1}'), r.feed_line("")
    (None, '{"a": 1}')
    """

    __slots__ = ("_cr", "_data", "_data_size", "_max_line", "_rest", "_rest_size")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._max_line = max_line
        self._data: list[str] | None = None
        self._data_size = 0
        self._rest: list[bytes] = []  # the line still open, in pieces (joined once it ends)
        self._rest_size = 0
        self._cr = False  # the bytes so far ended in CR: a LF first in the next chunk is its pair

    def feed(self, chunk: bytes) -> Iterator[str]:
        """The data of each event ``chunk`` completes, in order (lazily: a malformed line raises
        where it stands, after the events before it).

        Lines end in LF, CRLF or CR (the SSE grammar), and are decoded as UTF-8 (what SSE is;
        a line that is not UTF-8 raises ``MalformedSSE``);
        nothing else ends a line, so a U+2028 inside a JSON string stays in it. A line ended
        by a CR last in ``chunk`` is read at once (a LF first in the next chunk is its pair).
        O(len(chunk)) per call, plus the open line once, when it ends.
        """
        if self._cr and chunk.startswith(b"\n"):  # the LF of a CRLF split between two chunks
            chunk = chunk[1:]
            self._cr = False
        if b"\n" not in chunk and b"\r" not in chunk:
            self._cr = self._cr and not chunk
            self._rest.append(chunk)
            self._rest_size += len(chunk)
            self._check(self._rest_size)
            return
        self._rest.append(chunk)
        buffer = b"".join(self._rest)
        self._cr = buffer.endswith(b"\r")
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *lines, rest = buffer.split(b"\n")
        self._rest = [rest]
        self._rest_size = len(rest)
        for line in lines:
            self._check(len(line))
            data = self.feed_line(_decoded(line))
            if data is not None:
                yield data

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
                self._data_size = 0
            self._data_size += len(value)
            self._check(self._data_size)
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def _check(self, size: int) -> None:
        if size > self._max_line:
            raise MalformedSSE(f"a line or event longer than {self._max_line} bytes (--max-line)")

    def close(self) -> str | None:
        """The last event's data when the stream ended without its blank line."""
        rest = b"".join(self._rest)
        self._rest, self._cr, self._rest_size = [], False, 0
        if rest:
            self.feed_line(_decoded(rest))
        data, self._data = self._data, None
        return None if data is None else "\n".join(data)
