"""The command's files: logs in (JSON Lines, gzip sniffed, stdin), lines out, a progress line.

Logs are read as bytes one line at a time, so memory stays flat in the log's size.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any, TextIO

__all__ = [
    "Line",
    "LongLine",
    "OutputError",
    "Progress",
    "bounded_lines",
    "char_count",
    "counted",
    "isatty",
    "open_log",
    "open_output",
    "same_file",
]

_GZIP_MAGIC = b"\x1f\x8b"


#: An over-long line is read and copied through in pieces of at most this many bytes.
CHUNK_BYTES = 1 << 20


def open_log(path: str, stdin: TextIO, max_chars: int) -> tuple[Iterator[Line], IO[bytes] | None, int | None]:
    """(lines, the raw byte stream for progress, its total size when known).

    Gzip is recognised by its magic bytes (or a ``.gz`` suffix), on stdin too when stdin
    has a byte buffer. A line longer than ``max_chars`` characters comes as a ``LongLine``
    (see ``bounded_lines``): memory stays flat however long a line is.
    """
    raw: IO[bytes]
    if path == "-":
        buffer = getattr(stdin, "buffer", None)
        if buffer is None:  # a text stream without bytes underneath (tests, embedding)
            return bounded_lines(stdin, max_chars), None, None
        raw = buffer
    else:
        raw = open(path, "rb")  # noqa: SIM115 - closed by _lines once exhausted
    total: int | None = None
    try:
        st = os.fstat(raw.fileno())
        total = st.st_size if st.st_size > 0 else None
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
    return _lines(stream, raw if path != "-" else None, max_chars), raw, total


def _lines(stream: IO[bytes] | gzip.GzipFile, owned: IO[bytes] | None, max_chars: int) -> Iterator[Line]:
    try:
        yield from bounded_lines(stream, max_chars)
    finally:
        stream.close()
        if owned is not None:
            owned.close()


class LongLine:
    """A line longer than the limit, never held whole: ``chunks()`` reads it (its line ending
    included) piece by piece, each at most ``max(cap, chunk)`` long. Whatever the consumer does
    not read is skipped before the next line."""

    __slots__ = ("_chunk", "_done", "_stream", "head")

    def __init__(self, head: bytes | str, stream: Any, chunk: int) -> None:
        self.head, self._stream, self._chunk = head, stream, chunk
        self._done = False

    def chunks(self) -> Iterator[bytes | str]:
        if self._done:
            return
        yield self.head
        newline = b"\n" if isinstance(self.head, bytes) else "\n"
        while not self._done:
            piece = self._stream.readline(self._chunk)
            if piece[-1:] == newline or not piece:
                self._done = True
            if piece:
                yield piece

    def drain(self) -> None:
        for _ in self.chunks():
            pass


Line = bytes | str | LongLine


def bounded_lines(stream: Any, max_chars: int, chunk: int = CHUNK_BYTES) -> Iterator[Line]:
    """The lines of ``stream`` (bytes or text, with their endings), each read with a bound: a
    line that may hold up to ``max_chars`` characters comes whole, a longer one as a ``LongLine``.

    UTF-8 spends at most 4 bytes on a character, so a line of ``4 * max_chars`` bytes and its
    ``\\r\\n`` may still be within the limit: that is the most read at once (the caller counts
    its characters); a line past it is certainly longer. O(line) time, O(cap + chunk) memory.
    """
    binary = not isinstance(stream, io.TextIOBase)
    cap = 4 * max_chars + 2 if binary else max_chars + 2
    newline: Any = b"\n" if binary else "\n"
    while True:
        line = stream.readline(cap)
        if not line:
            return
        if len(line) < cap or line[-1:] == newline:
            yield line
            continue
        long = LongLine(line, stream, chunk)
        yield long
        long.drain()


_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


def char_count(text: bytes | str) -> int:
    """Characters of a line: ``len`` of text; of UTF-8 bytes, the bytes that start one
    (continuation bytes are 0b10xxxxxx). O(len), in C."""
    if isinstance(text, str):
        return len(text)
    return len(text) - len(text.translate(None, _NOT_CONTINUATION))


#: A terminal's progress line is redrawn every this many records or bytes, whichever comes first.
TTY_EVERY = (4096, 4 << 20)
#: Elsewhere (a file, a CI log) one progress line is written every this many records or bytes.
LOG_EVERY = (100_000, 256 << 20)


class Progress:
    """How far a log has been read, on stderr: a ``\\r`` line on a terminal, else one line per
    step. Steps are counted in records and bytes read (stdin's too), never by the clock, so a
    log's progress lines are the same on every run."""

    def __init__(
        self,
        out: TextIO,
        raw: IO[bytes] | None,
        total: int | None,
        *,
        tty: bool,
        every: tuple[int, int] | None = None,
        label: str = "",
    ) -> None:
        self.out, self.raw, self.total, self.tty, self.label = out, raw, total, tty, label
        self.every_lines, self.every_bytes = every or (TTY_EVERY if tty else LOG_EVERY)
        self.lines = self.bytes = 0
        self.next_lines, self.next_bytes = self.every_lines, self.every_bytes
        self.drawn = False

    def add(self, size: int) -> None:
        """One line of ``size`` bytes read."""
        self.lines += 1
        self.bytes += size
        if self.lines >= self.next_lines or self.bytes >= self.next_bytes:
            self.next_lines = self.lines + self.every_lines
            self.next_bytes = self.bytes + self.every_bytes
            self.draw()

    def text(self) -> str:
        done = _position(self.raw)
        read = f"{_mib(self.bytes)} read  {self.lines:,} lines"
        if self.total and done is not None:
            pct = min(100.0, 100.0 * done / self.total)
            if self.tty:
                return f"[{'#' * int(pct / 5):<20}] {pct:5.1f}%  {_mib(done)}/{_mib(self.total)}  {self.lines:,} lines"
            return f"{read}  ({pct:.1f}% of {_mib(self.total)})"
        return read

    def draw(self) -> None:
        if self.tty:
            self.out.write("\r" + self.text() + "\x1b[K")
            self.drawn = True
        else:
            self.out.write(f"{self.label}{self.text()}\n")
        self.out.flush()

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


def counted(lines: Iterable[Line], progress: Progress) -> Iterator[Line]:
    for line in lines:
        progress.add(len(line.head) if isinstance(line, LongLine) else len(line))
        yield line


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class OutputError(Exception):
    """``fix`` cannot write its output: the message names OUT, never the temporary file."""


def _refuse_unless_regular(path: str) -> int | None:
    """OUT's permission bits when it is a regular file, None when it does not exist yet;
    anything else (a device, a FIFO, a socket, a folder, a symlink) is refused: replacing it
    would destroy what it is (``-o /dev/null`` as root would replace the system's)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(
            f"refusing to write {path}: it is {_kind(st.st_mode)}, not a regular file "
            "(give a regular file or - for stdout)"
        )
    return stat.S_IMODE(st.st_mode)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - every file type POSIX knows is listed above


def _new_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file: 0o666 less the umask."""
    mask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(mask)
    return 0o666 & ~mask


class _Output:
    """Lines out to ``path`` (``.gz``: gzip with a fixed mtime, so output is reproducible),
    written to a temporary file renamed into place on success: a failed or interrupted run
    leaves neither a half OUT nor the temporary file.

    The temporary file is created exclusively (``mkstemp``: O_EXCL, an unpredictable name) in
    OUT's own folder, so nothing planted there is written through and ``os.replace`` stays one
    atomic rename on one file system. OUT keeps its permission bits when it existed.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.mode = _refuse_unless_regular(path)
        folder, name = os.path.split(os.path.abspath(path))
        try:
            fd, self.tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            os.fchmod(fd, self.mode if self.mode is not None else _new_file_mode())
            self.raw: IO[bytes] = os.fdopen(fd, "wb")
        except BaseException:  # pragma: no cover - fchmod of a file just created, fdopen of its fd
            os.close(fd)
            os.unlink(self.tmp)
            raise
        self.stream: IO[bytes] = (
            gzip.GzipFile(fileobj=self.raw, mode="wb", mtime=0)  # type: ignore[assignment]
            if path.endswith(".gz")
            else self.raw
        )

    def write(self, line: bytes | str) -> None:
        try:
            self.stream.write(line if isinstance(line, bytes) else line.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def close(self, *, ok: bool) -> None:
        """Put the output in place (``ok``) or remove it; either way the temporary file is gone."""
        try:
            try:
                if self.stream is not self.raw:
                    self.stream.close()
                self.raw.close()
            except OSError as exc:  # the last buffer could not be written (a full disk)
                if ok:
                    raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
            if ok:
                # OUT may have been swapped for something else while the log was read.
                _refuse_unless_regular(self.path)
                os.replace(self.tmp, self.path)
        finally:
            if os.path.lexists(self.tmp):
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
