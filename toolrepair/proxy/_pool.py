"""The upstream's keep-alive connections, reused in O(1): httpx's transport on a stack of idle ones.

httpcore's pool (httpx's default) rescans every connection, for every queued request, each time a
request starts or a response closes, and counts the idle ones inside that scan: O(n^2) work per
request at n concurrent requests (at 200 streaming clients it was most of the proxy's CPU). The
proxy talks to one upstream, over HTTP/1.1, with no limit on connections, so it needs none of that
bookkeeping: an idle connection is taken from the top of a stack and put back when its response
closes, and connections idle the longest (the bottom) are closed once expired.

Everything else stays httpx's: the request and response models, timeouts, and the mapping of
httpcore's errors to httpx's (the transport is an ``httpx.AsyncHTTPTransport`` whose pool is this).
"""

from __future__ import annotations

import ssl
from collections import deque
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import anyio
import httpcore
import httpx

__all__ = ["StackPool", "transport"]


class StackPool:
    """HTTP/1.1 connections to the origins requests name; idle ones on a stack, newest on top.

    ``handle_async_request`` is O(1) amortised: at most one idle connection is checked per
    request (plus those found expired, each closed once), and returning one is O(1).
    """

    def __init__(self, ssl_context: ssl.SSLContext | None, *, max_idle: int, keepalive_expiry: float) -> None:
        self._ssl_context = ssl_context
        self._max_idle = max_idle
        self._expiry = keepalive_expiry
        self._idle: deque[httpcore.AsyncHTTPConnection] = deque()  # right: most recently used
        self._busy: set[httpcore.AsyncHTTPConnection] = set()

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        while self._idle:
            connection = self._idle.pop()
            # has_expired: past keep-alive, or the server closed it (its socket reads EOF).
            if connection.can_handle_request(origin) and connection.is_idle() and not connection.has_expired():
                return connection
            await _close(connection)
        return httpcore.AsyncHTTPConnection(origin, ssl_context=self._ssl_context, keepalive_expiry=self._expiry)

    async def _give_back(self, connection: httpcore.AsyncHTTPConnection) -> None:
        self._busy.discard(connection)
        if connection.is_idle() and len(self._idle) < self._max_idle:
            self._idle.append(connection)
        else:
            await _close(connection)
        # The longest idle, at the bottom, expire first: close them (each one once).
        while self._idle and self._idle[0].has_expired():
            await _close(self._idle.popleft())

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        # No await between taking an idle connection and sending on it: it is still idle then.
        connection = await self._take(request.url.origin)
        self._busy.add(connection)
        try:
            response = await connection.handle_async_request(request)
        except BaseException:
            self._busy.discard(connection)
            await _close(connection)
            raise
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=_Returning(response.stream, self, connection),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        connections = [*self._idle, *self._busy]
        self._idle.clear()
        self._busy.clear()
        for connection in connections:
            await _close(connection)

    async def __aenter__(self) -> StackPool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


async def _close(connection: httpcore.AsyncHTTPConnection) -> None:
    with anyio.CancelScope(shield=True):
        await connection.aclose()


class _Returning:
    """A response body that gives its connection back to the pool when it is closed."""

    __slots__ = ("_closed", "_connection", "_pool", "_stream")

    def __init__(self, stream: Any, pool: StackPool, connection: httpcore.AsyncHTTPConnection) -> None:
        self._stream = stream
        self._pool = pool
        self._connection = connection
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            await self._stream.aclose()  # a body read to its end leaves the connection idle
            await self._pool._give_back(self._connection)


def transport(*, max_idle: int, keepalive_expiry: float) -> httpx.AsyncHTTPTransport:
    """httpx's own HTTP transport (certificates from its defaults, no environment proxies) with
    its pool replaced by a ``StackPool``."""
    base = httpx.AsyncHTTPTransport(trust_env=False)
    # httpx keeps its pool in `_pool` (every release since 0.18); were that to change, its own
    # pool stays in place (correct, only slower under high concurrency).
    pool = getattr(base, "_pool", None)
    if isinstance(pool, httpcore.AsyncConnectionPool):
        context = getattr(pool, "_ssl_context", None) or httpx.create_ssl_context(trust_env=False)
        base._pool = StackPool(context, max_idle=max_idle, keepalive_expiry=keepalive_expiry)  # type: ignore[assignment]
    return base
