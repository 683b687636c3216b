"""``toolrepair serve``: its arguments, and running the app under uvicorn. Imports nothing
of the proxy stack until the command runs."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from ._config import DEFAULT_MAX_BODY, DEFAULT_MAX_LINE, DEFAULT_MAX_REPLY, DEFAULT_TIMEOUT, upstream_warning

__all__ = ["API_KEY_ENV", "add_serve_parser", "api_key"]

API_KEY_ENV = "TOOLREPAIR_API_KEY"


def _positive(kind: type[float] | type[int]) -> Any:
    def parse(value: str) -> float | int:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, not {value!r}") from None
        if number < 0 or (number == 0 and kind is float):
            raise argparse.ArgumentTypeError(f"expected a positive number, not {value!r}")
        return number

    return parse


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, not {value!r}")
    return port


def add_serve_parser(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the OpenAI-compatible repair proxy",
        description="Serve /v1/chat/completions with tool calls repaired; other /v1/ "
        "paths are forwarded to the upstream unchanged.",
    )
    serve.add_argument(
        "--upstream", required=True, help="the model server's OpenAI base URL, e.g. http://127.0.0.1:11434/v1"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, loopback only)")
    serve.add_argument("--port", type=_port, default=8787, help="port, 1 to 65535 (default: 8787)")
    serve.add_argument(
        "--profile",
        choices=("local", "hosted"),
        default="local",
        help="local: repair and salvage; hosted: repair nothing silently (default: local)",
    )
    serve.add_argument("--annotate", action="store_true", help="add a `toolrepair` field to each reply")
    serve.add_argument(
        "--max-reprompts",
        type=_positive(int),
        default=0,
        help="round trips asking the model to correct a call (default: 0)",
    )
    serve.add_argument(
        "--timeout",
        type=_positive(float),
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait on the upstream (default: {DEFAULT_TIMEOUT:g})",
    )
    serve.add_argument(
        "--max-body",
        type=_positive(int),
        default=DEFAULT_MAX_BODY,
        help=f"largest request body in bytes (default: {DEFAULT_MAX_BODY})",
    )
    serve.add_argument(
        "--max-reply",
        type=_positive(int),
        default=DEFAULT_MAX_REPLY,
        help=f"largest whole upstream reply in bytes, decoded (default: {DEFAULT_MAX_REPLY})",
    )
    serve.add_argument(
        "--max-line",
        type=_positive(int),
        default=DEFAULT_MAX_LINE,
        help=f"longest upstream event-stream line in bytes (default: {DEFAULT_MAX_LINE})",
    )
    key = serve.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key-file",
        metavar="F",
        default=None,
        help="require clients to send 'Authorization: Bearer KEY', KEY being the first line of F "
        f"(or set {API_KEY_ENV})",
    )
    key.add_argument(
        "--api-key", default=None, help="the key itself (visible to other users in `ps`: prefer --api-key-file)"
    )
    serve.add_argument(
        "--no-repair-history",
        action="store_true",
        help="send request histories as they are (default: unanswered calls answered, "
        "orphaned results dropped, argument JSON normalised)",
    )
    serve.add_argument(
        "--metrics", action="store_true", help="count requests and tool calls; serve them at GET /metrics (Prometheus)"
    )
    serve.add_argument(
        "--model-profile",
        metavar="NAME",
        default=None,
        help="the model's profile (a tr.model_profile name, or 'none'); default: picked from each "
        "request's model name, see docs/proxy.md",
    )
    serve.add_argument(
        "--reasoning",
        choices=("separate", "inline", "drop"),
        default="separate",
        help="reasoning read from the content (<think>...): separate (reasoning_content, thinking "
        "blocks), inline (left in the content) or drop (default: separate)",
    )
    serve.set_defaults(handler=_serve)


def _log_requests() -> None:
    """The proxy's one line per request, on stderr. Only ``toolrepair.proxy`` is set to INFO:
    an INFO root logger would also let httpx write a line for every upstream request (a second
    line per request, and a formatted write to stderr on the hot path)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logger = logging.getLogger("toolrepair.proxy")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def api_key(args: argparse.Namespace, environ: Mapping[str, str]) -> str | None:
    """The key clients must send: from ``--api-key-file`` (its first line), ``--api-key``, or the
    environment's ``TOOLREPAIR_API_KEY``, in that order; None for none. An unreadable or empty
    file raises ValueError. ``--api-key`` puts the key in the process's command line, which every
    user of the machine can read (``ps``): it still works, with a warning on stderr."""
    if args.api_key_file is not None:
        try:
            with open(args.api_key_file, encoding="utf-8") as file:
                key = file.readline().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read the API key from {args.api_key_file!r}: {exc}") from None
        if not key:
            raise ValueError(f"the API key file {args.api_key_file!r} is empty")
        return key
    if args.api_key is not None:
        print(
            "toolrepair: warning: --api-key is visible to other users of this machine (ps); "
            f"use --api-key-file F or {API_KEY_ENV} instead",
            file=sys.stderr,
        )
        return str(args.api_key)
    return environ.get(API_KEY_ENV) or None


def _serve(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from ..cli import fail
    from . import create_app

    try:
        app = create_app(
            upstream=args.upstream,
            profile=args.profile,
            annotate=args.annotate,
            max_reprompts=args.max_reprompts,
            timeout=args.timeout,
            max_body=args.max_body,
            max_reply=args.max_reply,
            max_line=args.max_line,
            api_key=api_key(args, os.environ),
            repair_history=not args.no_repair_history,
            metrics=args.metrics,
            model_profile=args.model_profile,
            reasoning=args.reasoning,
        )
        import uvicorn
    except (ImportError, ValueError) as exc:
        return fail(str(exc))

    _log_requests()
    logging.getLogger("toolrepair.proxy").info("repairing for the upstream %s", app.state.shown_upstream)
    warning = upstream_warning(args.upstream)
    if warning is not None:
        logging.getLogger("toolrepair.proxy").warning("warning: %s", warning)
    stdout.write(banner(args.host, args.port))
    stdout.flush()
    # What start-up made (modules, the app) lives as long as the server: frozen out of the
    # collector's reach, a full collection no longer walks it in the middle of a request
    # (measured: a ~20 ms pause every few hundred requests, the whole p99 of a first token).
    gc.freeze()
    # uvicorn's access log would be a second line per request (and logs query strings).
    from ._server import server_options

    uvicorn.run(
        app, host=args.host, port=args.port, access_log=False, log_level="info", **server_options(app.state.config)
    )
    return 0


def banner(host: str, port: int) -> str:
    """The base URLs to give clients (OpenAI clients take the ``/v1`` one; Anthropic's SDK and
    Claude Code add ``/v1`` themselves).

    >>> print(banner("127.0.0.1", 8787), end="")
    toolrepair serve: OpenAI base URL http://127.0.0.1:8787/v1 (Anthropic: http://127.0.0.1:8787)
    """
    shown = f"[{host}]" if ":" in host else host
    return f"toolrepair serve: OpenAI base URL http://{shown}:{port}/v1 (Anthropic: http://{shown}:{port})\n"
