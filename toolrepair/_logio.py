"""The command's files: logs in (JSON Lines, gzip sniffed, stdin), lines out, a progress line.

Logs are read as bytes one line at a time, so memory stays flat in the log's size.
"""

from __future__ import annotations

import gzip
import io
import os
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any, TextIO

__all__ = ["Progress", "counted", "isatty", "open_log", "open_output", "same_file"]

#: The progress line is redrawn at most this often (seconds).
PROGRESS_INTERVAL = 0.1

_GZIP_MAGIC = b"\x1f\x8b"


def open_log(path: str, stdin: TextIO) -> tuple[Iterable[bytes | str], IO[bytes] | None, int | None]:
    """(lines, the raw byte stream for progress, its total size when known).

    Gzip is recognised by its magic bytes (or a ``.gz`` suffix), on stdin too when stdin
    has a byte buffer.
    """
    raw: IO[bytes]
    if path == "-":
        buffer = getattr(stdin, "buffer", None)
        if buffer is None:  # a text stream without bytes underneath (tests, embedding)
            return stdin, None, None
        raw = buffer
    else:
        raw = open(path, "rb")  # noqa: SIM115 - closed by _lines once exhausted
    total: int | None = None
    try:
        stat = os.fstat(raw.fileno())
        total = stat.st_size if stat.st_size > 0 else None
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    if not callable(getattr(raw, "peek", None)):
        # Sniffing the magic bytes must not consume them: give the stream a peekable buffer.
        raw = io.BufferedReader(raw)  # type: ignore[type-var]
    head = raw.peek(2)[:2]  # type: ignore[attr-defined]
    if head == _GZIP_MAGIC or (not head and path.endswith(".gz")):
        stream: IO[bytes] | gzip.GzipFile = gzip.GzipFile(fileobj=raw, mode="rb")
    else:
        stream = raw
    return _lines(stream, raw if path != "-" else None), raw, total


def _lines(stream: IO[bytes] | gzip.GzipFile, owned: IO[bytes] | None) -> Iterator[bytes]:
    try:
        yield from stream
    finally:
        stream.close()
        if owned is not None:
            owned.close()


class Progress:
    """A ``\\r`` line on a terminal's stderr: bytes read of the total, at most 10 redraws/s."""

    def __init__(self, out: TextIO, raw: IO[bytes] | None, total: int | None) -> None:
        self.out, self.raw, self.total = out, raw, total
        self.next_draw = time.monotonic() + PROGRESS_INTERVAL
        self.drawn = False

    def tick(self, lines: int) -> None:
        now = time.monotonic()
        if now < self.next_draw:
            return
        self.next_draw = now + PROGRESS_INTERVAL
        done = _position(self.raw)
        if self.total and done is not None:
            pct = min(100.0, 100.0 * done / self.total)
            bar = "#" * int(pct / 5)
            line = f"[{bar:<20}] {pct:5.1f}%  {_mib(done)}/{_mib(self.total)}  {lines:,} lines"
        else:
            line = f"{_mib(done) if done is not None else '?'} read  {lines:,} lines"
        self.out.write("\r" + line + "\x1b[K")
        self.out.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.drawn = False


def _position(raw: IO[bytes] | None) -> int | None:
    if raw is None:
        return None
    try:
        return raw.tell()
    except (OSError, ValueError):
        return None


def _mib(n: int) -> str:
    return f"{n / 1048576:.1f} MiB"


def counted(lines: Iterable[bytes | str], progress: Progress) -> Iterator[bytes | str]:
    # Checking the clock once per 256 lines keeps the progress bar's cost out of the profile.
    for i, line in enumerate(lines, 1):
        if not i & 0xFF:
            progress.tick(i)
        yield line


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Output:
    """Lines out to ``path`` (``.gz``: gzip with a fixed mtime, so output is reproducible),
    written to a temporary file renamed into place on success: a failed run leaves no half file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tmp = f"{path}.tmp{os.getpid()}"
        self.raw = open(self.tmp, "wb")  # noqa: SIM115 - closed by close()
        self.stream: IO[bytes] = (gzip.GzipFile(fileobj=self.raw, mode="wb", mtime=0)  # type: ignore[assignment]
                                  if path.endswith(".gz") else self.raw)

    def write(self, line: bytes | str) -> None:
        self.stream.write(line if isinstance(line, bytes) else line.encode("utf-8", "surrogateescape"))

    def close(self, *, ok: bool) -> None:
        if self.stream is not self.raw:
            self.stream.close()
        self.raw.close()
        if ok:
            os.replace(self.tmp, self.path)
        else:
            os.unlink(self.tmp)


class _StdoutOutput:
    def __init__(self, stdout: TextIO) -> None:
        self.text = stdout
        self.buffer: IO[bytes] | None = getattr(stdout, "buffer", None)

    def write(self, line: bytes | str) -> None:
        if self.buffer is not None:
            self.buffer.write(line if isinstance(line, bytes) else line.encode("utf-8", "surrogateescape"))
        else:
            self.text.write(line if isinstance(line, str) else line.decode("utf-8", "surrogateescape"))

    def close(self, *, ok: bool) -> None:
        if self.buffer is not None:
            self.buffer.flush()
        self.text.flush()


def open_output(path: str, stdout: TextIO) -> _Output | _StdoutOutput:
    """Where ``fix`` writes: ``-`` is stdout (bytes through its buffer when it has one)."""
    return _StdoutOutput(stdout) if path == "-" else _Output(path)


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (the output must never overwrite the input)."""
    if a == "-" or b == "-":
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
