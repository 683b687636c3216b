"""The `toolrepair` command: `toolrepair salvage [FILE|-] --tools a,b` (and `python -m toolrepair`)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from ._salvage import ANY_TOOL, DIALECTS, salvage_text

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2, never a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _read(path: str, stdin: TextIO) -> str:
    if path == "-":
        return stdin.read()
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        return handle.read()


def _names(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of tool names")
    return names


def _dialects(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in DIALECTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown dialect(s) {unknown}; known: {', '.join(DIALECTS)}")
    return names


def _salvage(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    text = _read(args.file, stdin)
    allowed: Any = ANY_TOOL if args.any else args.tools
    result = salvage_text(text, allowed, dialects=args.dialects, mask_fences=not args.no_mask_fences,
                          mask_reasoning=not args.no_mask_reasoning)
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="toolrepair", description="Repair LLM tool calls.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sal = sub.add_parser("salvage", help="recover tool calls written as text in a model reply",
                         description="Print {calls, content, rejected} as JSON for a model reply.")
    sal.add_argument("file", nargs="?", default="-", help="the reply text (default: - for stdin)")
    who = sal.add_mutually_exclusive_group(required=True)
    who.add_argument("--tools", type=_names, help="comma-separated names of the tools offered to the model")
    who.add_argument("--any", action="store_true", help="accept any tool name (no allowlist)")
    sal.add_argument("--dialects", type=_dialects, default=None, help="comma-separated dialects (default: all)")
    sal.add_argument("--no-mask-fences", action="store_true", help="also salvage inside Markdown fences")
    sal.add_argument("--no-mask-reasoning", action="store_true", help="also salvage inside reasoning blocks")
    sal.add_argument("--pretty", action="store_true", help="indent the JSON output")
    sal.set_defaults(handler=_salvage)
    try:
        audit = importlib.import_module("toolrepair._audit")
    except ImportError:  # pragma: no cover - the audit verb ships with the package
        pass
    else:
        audit.add_audit_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the command; returns the exit status (errors are one line on stderr, never a traceback)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.handler(args, stdin or sys.stdin, stdout or sys.stdout)
    except OSError as exc:
        print(f"toolrepair: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
