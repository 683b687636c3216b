"""The `toolrepair` command (and `python -m toolrepair`): salvage, audit, fix, serve.

Each verb is one ``add_<verb>`` function registering its parser and handler; ``VERBS`` lists
them, so a new verb is one function and one entry. Messages have one shape:
``toolrepair: error: <what>`` for an error that stops the command (exit 1; usage errors
exit 2), and ``toolrepair: <file>:<line>[:<column>]: <why>`` for a record that is skipped.
Input is UTF-8: ``salvage`` refuses a file that is not, ``audit`` and ``fix`` count such a
line as a bad record (and ``fix`` writes it unchanged).
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn, Protocol, TextIO

from . import __version__
from ._audit import LineError, process_lines
from ._limits import Limits
from ._logio import OutputError, Progress, counted, isatty, open_log, open_output, same_file
from ._records import RecordFixer, tool_specs
from ._report import AuditReport, format_report
from ._salvage import ANY_TOOL, DIALECTS, salvage_text

__all__ = ["VERBS", "build_parser", "main"]

PROG = "toolrepair"
#: Bad records reported one by one on stderr; the rest are only counted.
MAX_REPORTED_BAD_LINES = 20


class UsageError(Exception):
    """A command line argparse refuses: its usage line and the message, exit status 2."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is raised for ``main`` to print, never a traceback."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage())


def fail(message: str) -> int:
    """Print the one error line; the exit status of an error that is not a usage error."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 1


def _names(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of tool names")
    return names


def _dialects(value: str) -> list[str]:
    from ._salvage._registry import OPT_IN  # named only: the opt-in dialects (react, cline)

    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in DIALECTS and n not in OPT_IN]
    if unknown:
        known = ", ".join(DIALECTS)
        raise argparse.ArgumentTypeError(f"unknown dialect(s) {unknown}; known: {known}; opt-in: {', '.join(OPT_IN)}")
    return names


# -- salvage -----------------------------------------------------------------------------------
class _Fatal(Exception):
    """An error that ends the command with one line and exit status 1."""


def _read_text(path: str, stdin: TextIO, limit: int) -> str:
    """The whole reply, strict UTF-8, at most ``limit`` characters (one more is an error)."""
    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            buffer = getattr(stdin, "buffer", None)
            text = buffer.read(4 * limit + 4).decode("utf-8") if buffer is not None else stdin.read(limit + 1)
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read(limit + 1)
    except UnicodeDecodeError as exc:
        raise _Fatal(f"{source} is not valid UTF-8 (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    except OSError as exc:
        raise _Fatal(f"cannot read {source}: {exc.strerror or exc}") from None
    if len(text) > limit:
        raise _Fatal(f"{source} is longer than salvage's input limit of {limit:,} characters")
    return text


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


_LIMIT_FLAGS = (
    ("--max-input-chars", "max_input_chars"),
    ("--max-call-chars", "max_call_chars"),
    ("--max-depth", "max_depth"),
)


def _limits(args: argparse.Namespace) -> Limits:
    given = {field: getattr(args, field, None) for _, field in _LIMIT_FLAGS}
    return Limits(**{field: value for field, value in given.items() if value is not None})


def _salvage(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    limits = _limits(args)
    try:
        allowed: Any = _allowed_names(args)
        text = _read_text(args.file, stdin, limits.max_input_chars)
    except _Fatal as exc:
        return fail(str(exc))
    result = salvage_text(
        text,
        allowed,
        dialects=args.dialects,
        mask_fences=not args.no_mask_fences,
        mask_reasoning=not args.no_mask_reasoning,
        limits=limits,
    )
    out = {
        "calls": [
            {**c.to_openai(), "id": c.id or f"call_{i}", "dialect": c.dialect, "span": list(c.span or ())}
            for i, c in enumerate(result.calls)
        ],
        "content": result.content,
        "rejected": [
            {"reason": r.reason, "name": r.name, "dialect": r.dialect, "span": list(r.span), "text": r.text}
            for r in result.rejected
        ],
    }
    json.dump(out, stdout, ensure_ascii=False, indent=2 if args.pretty else None)
    stdout.write("\n")
    return 0


def add_salvage(sub: Any) -> None:
    sal = sub.add_parser(
        "salvage",
        help="recover tool calls written as text in a model reply",
        description="Print {calls, content, rejected} as JSON for a model reply (UTF-8).",
    )
    sal.add_argument("file", nargs="?", default="-", help="the reply text (default: - for stdin)")
    _tool_options(sal, required=True, json_flag=False)
    sal.add_argument(
        "--dialects",
        type=_dialects,
        default=None,
        help="comma-separated dialects (default: the built-ins; opt-in: react, cline)",
    )
    sal.add_argument("--no-mask-fences", action="store_true", help="also salvage inside Markdown fences")
    sal.add_argument("--no-mask-reasoning", action="store_true", help="also salvage inside reasoning blocks")
    sal.add_argument("--pretty", action="store_true", help="indent the JSON output")
    _limit_options(sal)
    sal.set_defaults(handler=_salvage)


def _limit_options(parser: Any) -> None:
    defaults = Limits()
    for flag, field in _LIMIT_FLAGS:
        parser.add_argument(
            flag, type=_count, default=None, metavar="N", help=f"Limits.{field} (default: {getattr(defaults, field)})"
        )


# -- audit and fix -----------------------------------------------------------------------------
def _tools_of(args: argparse.Namespace) -> Any:
    """What ``--tools``, ``--tools-file`` or ``--any`` offer (None: nothing but records' own)."""
    if getattr(args, "any", False):
        return ANY_TOOL
    if args.tools_file is not None:
        try:
            with open(args.tools_file, encoding="utf-8") as handle:
                return json.load(handle)
        except OSError as exc:
            raise _Fatal(f"cannot read {args.tools_file}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise _Fatal(f"{args.tools_file} is not a JSON list of tool definitions: {exc}") from None
    return args.tools


def _allowed_names(args: argparse.Namespace) -> Any:
    """salvage's allowlist: ``--any``, ``--tools`` or the names of ``--tools-file``'s definitions."""
    tools = _tools_of(args)
    if tools is ANY_TOOL or args.tools_file is None:
        return tools
    try:
        return [spec.name for spec in tool_specs(tools)]
    except (TypeError, ValueError) as exc:
        raise _Fatal(f"{args.tools_file}: {exc}") from None


def _fixer_of(args: argparse.Namespace) -> RecordFixer:
    tools = _tools_of(args)
    try:
        return RecordFixer(tools, _limits(args))
    except (TypeError, ValueError) as exc:
        raise _Fatal(f"{args.tools_file or '--tools'}: {exc}") from None


class _Sink(Protocol):
    """Where ``fix`` writes its records (``open_output``'s file or stdout)."""

    def write(self, line: bytes | str) -> None: ...

    def close(self, *, ok: bool) -> None: ...


def _fix_output(args: argparse.Namespace, stdout: TextIO) -> _Sink:
    """Where ``fix`` writes, opened; never its own input."""
    if same_file(args.file, args.output):
        raise _Fatal(f"refusing to write {args.output} over its input")
    try:
        return open_output(args.output, stdout)
    except OutputError as exc:
        raise _Fatal(str(exc)) from None


def _run_log(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, *, fixing: bool) -> int:
    source = "<stdin>" if args.file == "-" else args.file
    try:
        fixer = _fixer_of(args)
        output = _fix_output(args, stdout) if fixing else None
    except _Fatal as exc:
        return fail(str(exc))
    done = False
    try:
        report, bad_numbers = _read_log(args, source, stdin, fixer, output)
        done = True
    except (_Fatal, OutputError) as exc:
        return fail(str(exc))
    finally:
        if output is not None and not done:
            output.close(ok=False)  # no half-written OUT and no temporary file, on Ctrl-C too
    _write_report(args, source, report, bad_numbers, stdout, fixing=fixing)
    if report.records and report.bad_records == report.records:
        return fail(f"no record of {source} could be read ({report.bad_records:,} bad)")
    return 0


def _read_log(
    args: argparse.Namespace, source: str, stdin: TextIO, fixer: RecordFixer, output: _Sink | None
) -> tuple[AuditReport, list[int]]:
    """Every record of the log through ``fixer`` (written to ``output`` when fixing, which is
    closed once complete); the report and the first bad lines' numbers, each said on stderr."""
    err = sys.stderr
    try:
        lines, raw, total = open_log(args.file, stdin, fixer.limits.max_input_chars)
    except OSError as exc:
        raise _Fatal(f"cannot read {source}: {exc.strerror or exc}") from None
    tty = isatty(err)
    verb = "fix" if output is not None else "audit"
    progress = Progress(err, raw, total, tty=tty, label=f"{PROG} {verb}: {source}: ")
    bad_numbers: list[int] = []

    def on_bad_line(number: int, error: LineError) -> None:
        if len(bad_numbers) < MAX_REPORTED_BAD_LINES:
            bad_numbers.append(number)
            progress.clear()
            where = f"{source}:{number}" + (f":{error.column}" if error.column is not None else "")
            print(f"{PROG}: {where}: {error.reason}", file=err)

    feed = counted(lines, progress)
    try:
        tally = process_lines(feed, fixer, write=output.write if output is not None else None, on_bad_line=on_bad_line)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable or truncated gzip, I/O error
        progress.clear()
        message = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise _Fatal(f"cannot read {source}: {message}") from None
    finally:
        close = getattr(lines, "close", None)
        if callable(close):
            close()
    if output is not None:
        output.close(ok=True)
    progress.clear()
    return tally.freeze(), bad_numbers


def _write_report(
    args: argparse.Namespace, source: str, report: AuditReport, bad_numbers: list[int], stdout: TextIO, *, fixing: bool
) -> None:
    err = sys.stderr
    if report.bad_records > MAX_REPORTED_BAD_LINES:
        print(f"{PROG}: {source}: ... and {report.bad_records - MAX_REPORTED_BAD_LINES} more bad records", file=err)
    # fix -o - writes the records to stdout, so its report goes to stderr.
    out: IO[str] = err if fixing and args.output == "-" else stdout
    if args.json:
        json.dump({**report.to_json(), "bad_line_numbers": bad_numbers}, out, ensure_ascii=False)
        out.write("\n")
    else:
        title = f"{PROG} fix: {source} -> {args.output}" if fixing else f"{PROG} audit: {source}"
        out.write(format_report(report, title))


def _audit(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    return _run_log(args, stdin, stdout, fixing=False)


def _fix(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    return _run_log(args, stdin, stdout, fixing=True)


def _tool_options(parser: Any, *, required: bool, json_flag: bool = True) -> None:
    who = parser.add_mutually_exclusive_group(required=required)
    who.add_argument("--tools", type=_names, help="comma-separated names of the tools offered to the model")
    who.add_argument(
        "--tools-file",
        metavar="FILE",
        help="a JSON list of OpenAI-style tool definitions (their schemas count coercions)",
    )
    who.add_argument("--any", action="store_true", help="accept any tool name (no allowlist)")
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print the report as one JSON object, not a table")
        _limit_options(parser)


def add_audit(sub: Any) -> None:
    audit = sub.add_parser(
        "audit",
        help="summarise what would be repaired, salvaged and refused in a log of model replies",
        description="Read JSON Lines of records (completions, messages, fine-tuning conversations, ShareGPT, "
        "Anthropic; gzip too) and count repaired, unrepairable and salvaged calls. A record's own "
        "`tools` field wins over the tools given here. Nothing is executed.",
    )
    audit.add_argument("file", help="the log (JSON Lines, optionally gzip); - for stdin")
    _tool_options(audit, required=True)
    audit.set_defaults(handler=_audit)


def add_fix(sub: Any) -> None:
    fix = sub.add_parser(
        "fix",
        help="rewrite text tool calls in a log or dataset as native calls, repaired",
        description="Write IN to OUT with each assistant turn's text calls as native tool calls (fresh ids), "
        "names and arguments repaired against the record's `tools` or the tools given, tool results "
        "linked to the new ids. Records with nothing to fix, and bad records, are copied byte for "
        "byte; order is kept. Ends with the audit table (on stderr when OUT is -).",
    )
    fix.add_argument("file", metavar="IN", help="JSON Lines, optionally gzip; - for stdin")
    fix.add_argument(
        "-o", "--output", metavar="OUT", required=True, help="where to write (.gz: gzip); - for stdout; never IN itself"
    )
    _tool_options(fix, required=True)
    fix.set_defaults(handler=_fix)


def add_serve(sub: Any) -> None:
    from .proxy._cli import add_serve_parser  # the proxy stack itself is imported only when `serve` runs

    add_serve_parser(sub)


VERBS: list[Callable[[Any], None]] = [add_salvage, add_audit, add_fix, add_serve]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Repair LLM tool calls.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for add in VERBS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the command; returns the exit status (errors are one line on stderr, never a traceback)."""
    parser = build_parser()
    out = stdout or sys.stdout
    try:
        args = parser.parse_args(argv)
        if args.version:
            out.write(f"{PROG} {__version__}\n")
            return 0
        if args.command is None:
            parser.error(f"a command is required ({', '.join(sub.__name__[4:] for sub in VERBS)})")
    except UsageError as exc:
        sys.stderr.write(exc.usage)
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        status: int = args.handler(args, stdin or sys.stdin, out)
    except OSError as exc:
        return fail(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
    except KeyboardInterrupt:
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
