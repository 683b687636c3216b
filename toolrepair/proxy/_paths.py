"""Which request paths may reach the upstream, and as what: only normalised paths under its base.

A client's path is sent on below the upstream's base URL (``/v1/models`` goes to
``<upstream>/models``). A path that could name anything outside that base, for the proxy, for
httpx (which removes dot segments), or for an upstream that decodes or normalises once more, is
refused and never forwarded: fail closed, since the readings of ``/v1/%2e%2e/api/delete`` differ
from one server to the next.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote, unquote

from ._errors import ProxyError

__all__ = ["forwarded_path", "raw_request_path"]

# Percent-decoding is applied this many times in the check (a double-encoded `%252e` is a dot to
# an upstream behind another decoding layer); a path still changing after that is refused.
_DECODE_ROUNDS = 4
# After decoding: separators other than `/` and the characters no real path segment holds.
_FORBIDDEN = frozenset("\\\x00") | frozenset(chr(c) for c in range(0x20)) | {"\x7f"}
_ENCODED_SEPARATORS = ("%2f", "%5c")  # matched case-insensitively


def _dot_segment(segment: str) -> bool:
    """``.`` or ``..`` to some reader: with path parameters (``..;x``, Tomcat) and compatibility
    forms (``．．``, fullwidth dots, NFKC-folded by some servers)."""
    head = unicodedata.normalize("NFKC", segment).split(";", 1)[0]
    return head in (".", "..")


def _refusal(path: str) -> str | None:
    """Why ``path`` (percent-encoded, as sent) may not be forwarded, or None. O(len(path)) per round."""
    current = path
    for _ in range(_DECODE_ROUNDS):
        lowered = current.lower()
        if any(sep in lowered for sep in _ENCODED_SEPARATORS):
            return "an encoded '/' or '\\'"
        decoded = unquote(current, errors="strict") if "%" in current else current
        if any(ch in _FORBIDDEN for ch in decoded):
            return "a backslash or a control character"
        if any(_dot_segment(segment) for segment in decoded.split("/")):
            return "a '.' or '..' segment"
        if decoded == current:
            return None
        current = decoded
    return "percent-encoding nested too deep"


def forwarded_path(path: str, prefix: str = "/v1") -> str:
    """The part of ``path`` to put after the upstream's base: ``path`` (percent-encoded, as the
    client sent it) must be ``prefix`` or start with ``prefix + "/"``, and hold no dot segment,
    encoded separator, backslash or control character under any number of decodings (up to
    ``_DECODE_ROUNDS``). Anything else raises a 404 ``ProxyError`` in the OpenAI error shape.

    So for every path forwarded, the upstream URL normalised (dot segments removed, decoded any
    number of times) stays under the base. O(len(path)).

    >>> forwarded_path("/v1/models")
    '/models'
    >>> forwarded_path("/v1/%2e%2e/api/delete")
    Traceback (most recent call last):
    ...
    toolrepair.proxy._errors.ProxyError: Path '/v1/%2e%2e/api/delete' is not forwarded: it holds a '.' or '..' segment.
    """
    if path != prefix and not path.startswith(prefix + "/"):
        raise _not_forwarded(path, f"it is not under {prefix}/")
    if not path.isascii():
        raise _not_forwarded(path, "it holds characters that are not percent-encoded")
    try:
        reason = _refusal(path)
    except UnicodeDecodeError:
        reason = "percent-encoded bytes that are not UTF-8"
    if reason is not None:
        raise _not_forwarded(path, f"it holds {reason}")
    return path[len(prefix) :]


def _not_forwarded(path: str, why: str) -> ProxyError:
    shown = path if len(path) <= 200 else path[:200] + "…"
    return ProxyError(404, f"Path {shown!r} is not forwarded: {why}.", kind="invalid_request_error", param="path")


def raw_request_path(scope_path: str, raw_path: bytes | None) -> str:
    """The path as the client sent it (percent-encoding kept): the ASGI ``raw_path`` where the
    server gives one, else ``path`` encoded again."""
    if raw_path is not None:
        return raw_path.split(b"?", 1)[0].decode("latin-1")
    return quote(scope_path, safe="/:@!$&'()*+,;=-._~")
