"""Upstream bodies read under a bound: decoded in pieces of at most ``STEP`` bytes, never whole.

httpx decodes a compressed body one network read at a time, and a read of 64 KiB of gzip can
inflate to over 100 MB at once (a 254 KB reply became 558 MB). Here the raw bytes are decoded
with zlib's ``max_length``, so no piece is larger than ``STEP`` whatever the ratio, and a whole
reply stops being read the moment it passes its bound. Every route that reads an upstream body
reads it through ``iter_body`` (streamed) or ``read_body`` (whole).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

import httpx

from ._errors import ProxyError

__all__ = ["STEP", "BodyDecoder", "iter_body", "read_body"]

STEP = 64 * 1024  # bytes: the largest decoded piece held at once


class BodyDecoder:
    """Decodes one body's ``content-encoding`` (identity, gzip, deflate) incrementally.

    O(len(input) + len(output)); at most ``STEP`` decoded bytes per piece. An encoding it does
    not read is a 502 ``ProxyError`` (the proxy asks for ``identity``; another encoding was not
    asked for, so it is not guessed at).

    >>> import gzip
    >>> decoder = BodyDecoder("gzip")
    >>> b"".join(decoder.feed(gzip.compress(b"x" * 100_000))) == b"x" * 100_000
    True
    """

    __slots__ = ("_head", "_wbits", "_zlib")

    def __init__(self, encoding: str | None) -> None:
        name = (encoding or "").strip().lower()
        self._zlib: zlib._Decompress | None = None
        self._head = b""
        if name in ("", "identity"):
            self._wbits = 0
        elif name in ("gzip", "x-gzip"):
            self._wbits = 16 + zlib.MAX_WBITS
        elif name == "deflate":
            self._wbits = zlib.MAX_WBITS  # zlib-wrapped, or raw: told by the first two bytes
        else:
            raise ProxyError(
                502,
                f"The upstream answered with content-encoding {name[:40]!r}, which the proxy "
                "did not ask for and does not decode.",
                kind="upstream_error",
            )

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (raises ``zlib.error`` on a corrupt body)."""
        if not self._wbits:
            for start in range(0, len(data), STEP):
                yield data[start : start + STEP]
            return
        if self._zlib is None:
            data = self._head + data
            if not data or (self._wbits == zlib.MAX_WBITS and len(data) < 2):
                self._head = data  # "deflate" is told zlib or raw by its first two bytes
                return
            if self._wbits == zlib.MAX_WBITS and not _zlib_header(data):
                self._wbits = -zlib.MAX_WBITS  # raw deflate, as some servers send "deflate"
            self._zlib = zlib.decompressobj(self._wbits)
        while True:
            out = self._zlib.decompress(data, STEP)
            data = self._zlib.unconsumed_tail
            if out:
                yield out
            if self._zlib.eof:  # a member ended: gzip allows another after it
                data = self._zlib.unused_data
                if not data:
                    return
                self._zlib = zlib.decompressobj(self._wbits)
            elif not data and len(out) < STEP:
                return


def _zlib_header(data: bytes) -> bool:
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] * 256 + data[1]) % 31 == 0


def iter_body(reply: httpx.Response) -> AsyncIterator[bytes]:
    """``reply``'s body (opened with ``stream=True``), decoded, in pieces of at most ``STEP``
    bytes. Raises ProxyError at once for an encoding it does not read (before any response
    starts); while iterating, httpx's errors as the network gives them, and ``zlib.error`` on a
    corrupt compressed body."""
    decoder = BodyDecoder(reply.headers.get("content-encoding"))

    async def pieces() -> AsyncIterator[bytes]:
        async for raw in reply.aiter_raw():
            for piece in decoder.feed(raw):
                yield piece

    return pieces()


async def read_body(reply: httpx.Response, limit: int) -> bytes:
    """``reply``'s whole body, decoded; a 502 ``ProxyError`` as soon as it passes ``limit``
    bytes (decoded) or cannot be decoded. Holds at most ``limit + STEP`` bytes."""
    parts: list[bytes] = []
    size = 0
    try:
        async for piece in iter_body(reply):
            size += len(piece)
            if size > limit:
                raise ProxyError(
                    502,
                    f"The upstream's reply is larger than {limit} bytes once decoded (--max-reply).",
                    kind="upstream_error",
                )
            parts.append(piece)
    except zlib.error:
        raise ProxyError(
            502, "The upstream's reply could not be decoded (corrupt compressed body).", kind="upstream_error"
        ) from None
    return b"".join(parts)
