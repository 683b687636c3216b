"""`toolrepair audit LOG --tools a,b`: what toolrepair would repair, salvage and refuse in a log.

The log is JSON Lines of model replies, one per line, in any of these shapes:

- an OpenAI chat completion (``{"choices": [{"message": ...}]}``; each choice is a reply);
- a bare assistant message (``{"role": "assistant", "content": ..., "tool_calls": [...]}``,
  or the legacy ``function_call``), or an Ollama chat response (``{"message": {...}}``);
- an Anthropic message (``{"role": "assistant", "content": [{"type": "text"}, {"type":
  "tool_use", "name", "input", "id"}]}``, with or without ``"type": "message"``);
- an OpenAI Responses object (``{"output": [{"type": "message"}, {"type": "function_call"}]}``);
- ``{"text": ...}`` / ``{"response": ...}`` or a bare JSON string: reply text alone.

Nothing is executed: native calls go through the same repair as ``ToolRegistry.repair``, text
goes through ``salvage_text`` (only when the reply has no native calls, the project's rule).
The log is read one line at a time and only counters are kept, so memory stays flat however
large the log; the one unbounded key space (names a model invents) is pruned.

>>> report = audit_lines(['{"text": "no call here"}', '{"role": "assistant", "tool_calls": []}'], ["a"])
>>> report.replies, report.empty_replies
(2, 2)
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TextIO

from ._args import decode_arguments
from ._errors import ArgumentError
from ._repair import ToolIndex, _as_call, coerce_call
from ._salvage import ANY_TOOL, salvage_text
from ._types import ToolSpec

__all__ = ["AuditReport", "add_audit_parser", "audit_lines", "open_log"]

#: Bad lines reported one by one on stderr; the rest are only counted.
MAX_REPORTED_BAD_LINES = 20
#: The rejected-name counter is pruned to ``NAME_COUNTER_KEEP`` entries when it passes
#: ``NAME_COUNTER_LIMIT``: names are model-generated, so their number is unbounded.
NAME_COUNTER_LIMIT = 100_000
NAME_COUNTER_KEEP = 10_000
#: A refused name is counted by its first characters only (a model can emit megabyte "names").
MAX_NAME_CHARS = 100
#: The progress line is redrawn at most this often (seconds).
PROGRESS_INTERVAL = 0.1

_GZIP_MAGIC = b"\x1f\x8b"
_REPAIR_KINDS = ("name", "decode", "coerce", "rename")


class BadLine(ValueError):
    """A log line that is not JSON, or not a shape of model reply this command knows."""


@dataclass(slots=True)
class AuditReport:
    """Counters over a log; the only state the audit keeps, whatever the log's size."""

    lines: int = 0
    replies: int = 0
    replies_with_native: int = 0
    replies_salvaged: int = 0
    empty_replies: int = 0
    native_calls: int = 0
    clean_calls: int = 0
    repaired_calls: int = 0
    unrepairable_calls: int = 0
    salvaged_calls: int = 0
    rejected: int = 0
    bad_lines: int = 0
    by_repair: Counter[str] = field(default_factory=Counter)
    unrepairable: Counter[str] = field(default_factory=Counter)
    by_dialect: Counter[str] = field(default_factory=Counter)
    by_rejection_reason: Counter[str] = field(default_factory=Counter)
    rejected_names: Counter[str] = field(default_factory=Counter)
    bad_line_numbers: list[int] = field(default_factory=list)
    names_pruned: bool = False

    def refuse_name(self, name: str | None) -> None:
        if not name:
            return
        self.rejected_names[name[:MAX_NAME_CHARS]] += 1
        if len(self.rejected_names) > NAME_COUNTER_LIMIT:
            # Keeps the counter bounded; counts of pruned names are approximate from here on.
            self.rejected_names = Counter(dict(self.rejected_names.most_common(NAME_COUNTER_KEEP)))
            self.names_pruned = True

    def to_json(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "replies": self.replies,
            "bad_lines": self.bad_lines,
            "replies_with_native_calls": self.replies_with_native,
            "replies_salvaged": self.replies_salvaged,
            "empty_replies": self.empty_replies,
            "native_calls": self.native_calls,
            "clean_calls": self.clean_calls,
            "repaired_calls": self.repaired_calls,
            "unrepairable_calls": self.unrepairable_calls,
            "salvaged_calls": self.salvaged_calls,
            "rejected": self.rejected,
            "by_repair": {k: self.by_repair[k] for k in _ordered(self.by_repair, _REPAIR_KINDS)},
            "unrepairable": dict(self.unrepairable.most_common()),
            "by_dialect": dict(self.by_dialect.most_common()),
            "by_rejection_reason": dict(self.by_rejection_reason.most_common()),
            "top_rejected_names": [[n, c] for n, c in self.rejected_names.most_common(5)],
            "rejected_names_approximate": self.names_pruned,
            "bad_line_numbers": list(self.bad_line_numbers),
        }


def _ordered(counter: Counter[str], first: Sequence[str]) -> list[str]:
    return [k for k in first if k in counter] + sorted(k for k in counter if k not in first)


# -- reading the shapes ---------------------------------------------------------------------
def _text_of_content(content: Any, calls: list[Any]) -> str:
    """The reply text of a message's ``content``; ``tool_use`` blocks go to ``calls``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadLine(f"content is a {type(content).__name__}, not text or a list of blocks")
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping):
            kind = block.get("type")
            if kind in ("text", "output_text") and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind in ("tool_use", "function_call"):
                calls.append(block)
            # Other blocks (thinking, images, refusals) hold no call and no salvageable text:
            # reasoning is never salvaged.
    return "".join(parts)


def _message(msg: Mapping[str, Any]) -> tuple[list[Any], str]:
    role = msg.get("role")
    if role is not None and role != "assistant":
        raise BadLine(f"a {role!r} message is not a model reply")
    calls: list[Any] = []
    text = _text_of_content(msg.get("content"), calls)
    tool_calls = msg.get("tool_calls")
    if isinstance(tool_calls, list):
        calls.extend(tool_calls)
    elif tool_calls is not None:
        raise BadLine("tool_calls is not a list")
    legacy = msg.get("function_call")
    if isinstance(legacy, Mapping):
        calls.append(legacy)
    return calls, text


def replies_of(obj: Any) -> list[tuple[list[Any], str]]:
    """``(native calls, text)`` for each reply in one decoded log line; raises ``BadLine``."""
    if isinstance(obj, str):
        return [([], obj)]
    if not isinstance(obj, Mapping):
        raise BadLine(f"a JSON {type(obj).__name__} is not a model reply")
    choices = obj.get("choices")
    if isinstance(choices, list):
        out = []
        for choice in choices:
            msg = choice.get("message") if isinstance(choice, Mapping) else None
            if not isinstance(msg, Mapping):
                raise BadLine("a choice without a message")
            out.append(_message(msg))
        return out
    output = obj.get("output")
    if isinstance(output, list):  # OpenAI Responses: items are messages and function calls
        calls: list[Any] = []
        text = _text_of_content(
            [b for item in output if isinstance(item, Mapping) and item.get("type") == "message"
             for b in (item.get("content") or [])]
            + [item for item in output if isinstance(item, Mapping) and item.get("type") == "function_call"],
            calls)
        return [(calls, text)]
    message = obj.get("message")
    if isinstance(message, Mapping):  # Ollama chat
        return [_message(message)]
    if "content" in obj or "tool_calls" in obj or "function_call" in obj:
        return [_message(obj)]
    for key in ("text", "response"):
        if isinstance(obj.get(key), str):
            return [([], obj[key])]
    raise BadLine("not a recognised reply shape (no choices, content, tool_calls or text)")


# -- auditing ------------------------------------------------------------------------------
class _Auditor:
    """One reply at a time into an ``AuditReport``; holds the tool index built once."""

    def __init__(self, tools: Sequence[str] | None) -> None:
        self.report = AuditReport()
        # Schema-only tools: an empty object schema accepts any arguments, so what is audited
        # is the name and the decoding, the two things a log can show without the real schemas.
        self.index = None if tools is None else ToolIndex(ToolSpec(n, {"type": "object"}) for n in tools)
        self.allowed: Any = ANY_TOOL if tools is None else tuple(tools)

    def native(self, call: Any) -> None:
        report = self.report
        report.native_calls += 1
        if not isinstance(call, Mapping):
            report.unrepairable_calls += 1
            report.unrepairable["malformed"] += 1
            return
        if self.index is None:
            self._native_any(call)
            return
        # The repair ToolRegistry.repair makes with an unlimited budget and no policy, without
        # the registry's event log, which would grow with the log being audited.
        repair, _ = coerce_call(self.index, call, allow_silent=True)
        if repair.call is None:
            error = repair.error
            kind = getattr(error, "kind", "error")
            cause = getattr(error, "__cause__", None)
            if isinstance(cause, ArgumentError):
                kind = f"{kind}:{cause.reason}"
            report.unrepairable_calls += 1
            report.unrepairable[kind] += 1
            if kind == "not-found":
                report.refuse_name(_as_call(call)[0])
            return
        self._count_events({e.kind for e in repair.events})

    def _native_any(self, call: Mapping[str, Any]) -> None:
        # --any: every name is accepted as written, so only the arguments can need repair.
        name, raw_args, *_ = _as_call(call)
        report = self.report
        if not name:
            report.unrepairable_calls += 1
            report.unrepairable["no-name"] += 1
            return
        try:
            _, events = decode_arguments(raw_args)
        except ArgumentError as exc:
            report.unrepairable_calls += 1
            report.unrepairable[f"arguments:{exc.reason}"] += 1
            return
        self._count_events({e.kind for e in events})

    def _count_events(self, kinds: set[str]) -> None:
        report = self.report
        if kinds:
            report.repaired_calls += 1
            report.by_repair.update(kinds)
        else:
            report.clean_calls += 1

    def reply(self, calls: list[Any], text: str) -> None:
        report = self.report
        report.replies += 1
        if calls:
            report.replies_with_native += 1
            for call in calls:
                self.native(call)
            return
        result = salvage_text(text, self.allowed) if text else None
        if result is not None:
            for rejection in result.rejected:
                report.rejected += 1
                report.by_rejection_reason[rejection.reason] += 1
                report.refuse_name(rejection.name)
            for salvaged in result.calls:
                report.salvaged_calls += 1
                report.by_dialect[salvaged.dialect] += 1
        if result:
            report.replies_salvaged += 1
        else:
            report.empty_replies += 1


def audit_lines(
    lines: Iterable[bytes | str],
    tools: Sequence[str] | None,
    *,
    on_bad_line: Callable[[int, str], None] | None = None,
) -> AuditReport:
    """Audit JSON Lines of model replies against the offered ``tools`` (``None``: any name).

    Blank lines are skipped; a line that is not a reply is counted in ``bad_lines`` and passed
    to ``on_bad_line(number, why)``. Memory is O(1) in the number of lines.
    """
    auditor = _Auditor(tools)
    report = auditor.report
    for number, line in enumerate(lines, 1):
        report.lines = number
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            replies = replies_of(obj)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, BadLine
            report.bad_lines += 1
            if len(report.bad_line_numbers) < MAX_REPORTED_BAD_LINES:
                report.bad_line_numbers.append(number)
            if on_bad_line is not None:
                on_bad_line(number, _why(exc))
            continue
        for calls, text in replies:
            auditor.reply(calls, text)
    return report


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 at byte {exc.start}"
    if isinstance(exc, RecursionError):
        return "not valid JSON: nested too deeply"
    return str(exc)[:200]


# -- files, progress -----------------------------------------------------------------------
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


class _Progress:
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


def _counted(lines: Iterable[bytes | str], progress: _Progress) -> Iterator[bytes | str]:
    # Checking the clock once per 256 lines keeps the progress bar's cost out of the profile.
    for i, line in enumerate(lines, 1):
        if not i & 0xFF:
            progress.tick(i)
        yield line


# -- the table -----------------------------------------------------------------------------
def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:5.1f}%" if whole else "     -"


def format_report(report: AuditReport, source: str) -> str:
    """The human-readable summary: counts, and percentages of the enclosing total."""
    out: list[str] = [f"toolrepair audit: {source}", ""]

    def line(label: str, n: int, whole: int | None = None, indent: int = 0) -> None:
        pct = _pct(n, whole) if whole is not None else ""
        out.append(f"{'  ' * indent}{label:<{36 - 2 * indent}} {n:>10,}  {pct}".rstrip())

    r = report
    line("replies", r.replies)
    line("with native calls", r.replies_with_native, r.replies, 1)
    line("with calls salvaged from text", r.replies_salvaged, r.replies, 1)
    line("with no call", r.empty_replies, r.replies, 1)
    line("bad lines (skipped)", r.bad_lines)
    out.append("")
    line("native calls", r.native_calls)
    line("valid as sent", r.clean_calls, r.native_calls, 1)
    line("repaired", r.repaired_calls, r.native_calls, 1)
    for kind in _ordered(r.by_repair, _REPAIR_KINDS):
        line(kind, r.by_repair[kind], r.native_calls, 2)
    line("cannot be repaired", r.unrepairable_calls, r.native_calls, 1)
    for kind, n in r.unrepairable.most_common():
        line(kind, n, r.native_calls, 2)
    out.append("")
    line("calls salvaged from text", r.salvaged_calls)
    for dialect, n in r.by_dialect.most_common():
        line(dialect, n, r.salvaged_calls, 1)
    line("candidates rejected", r.rejected)
    for reason, n in r.by_rejection_reason.most_common():
        line(reason, n, r.rejected, 1)
    if r.rejected_names:
        out.append("")
        approx = " (approximate)" if r.names_pruned else ""
        out.append(f"most common refused names{approx}")
        for name, n in r.rejected_names.most_common(5):
            line(repr(name), n, None, 1)
    return "\n".join(out) + "\n"


# -- the command ---------------------------------------------------------------------------
def _tool_names(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of tool names")
    return names


def run_audit(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO | None = None) -> int:
    err = stderr if stderr is not None else sys.stderr
    try:
        lines, raw, total = open_log(args.file, stdin)
    except OSError as exc:
        print(f"toolrepair audit: error: cannot read {args.file}: {exc.strerror or exc}", file=err)
        return 1
    tty = _isatty(err)
    progress = _Progress(err, raw, total) if tty else None
    reported = 0

    def on_bad_line(number: int, why: str) -> None:
        nonlocal reported
        reported += 1
        if reported <= MAX_REPORTED_BAD_LINES:
            if progress is not None:
                progress.clear()
            print(f"toolrepair audit: line {number}: {why}", file=err)

    source = lines if progress is None else _counted(lines, progress)
    try:
        report = audit_lines(source, None if args.any else args.tools, on_bad_line=on_bad_line)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable or truncated gzip, I/O error
        if progress is not None:
            progress.clear()
        message = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        print(f"toolrepair audit: error: cannot read {args.file}: {message}", file=err)
        return 1
    finally:
        close = getattr(lines, "close", None)
        if callable(close) and lines is not stdin:
            close()
    if progress is not None:
        progress.clear()
    if report.bad_lines > MAX_REPORTED_BAD_LINES:
        print(f"toolrepair audit: ... and {report.bad_lines - MAX_REPORTED_BAD_LINES} more bad lines",
              file=err)
    if args.json:
        json.dump(report.to_json(), stdout, ensure_ascii=False)
        stdout.write("\n")
    else:
        stdout.write(format_report(report, "<stdin>" if args.file == "-" else args.file))
    return 0


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def add_audit_parser(subparsers: Any) -> None:
    """Register the ``audit`` verb on the CLI's subparsers."""
    audit = subparsers.add_parser(
        "audit", help="summarise what would be repaired, salvaged and refused in a log of model replies",
        description="Read JSON Lines of model replies (OpenAI, Anthropic, bare messages or {\"text\"}; "
                    "gzip too) and count repaired, unrepairable and salvaged calls. Nothing is executed.")
    audit.add_argument("file", help="the log (JSON Lines, optionally gzip); - for stdin")
    who = audit.add_mutually_exclusive_group(required=True)
    who.add_argument("--tools", type=_tool_names, help="comma-separated names of the tools offered to the model")
    who.add_argument("--any", action="store_true", help="accept any tool name (no allowlist)")
    audit.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    audit.set_defaults(handler=run_audit)
