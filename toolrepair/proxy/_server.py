"""The HTTP server's guard against slow and idle peers: a bound on the time and bytes a request's
headers may take, and on open connections.

uvicorn bounds an idle kept-alive connection (``timeout_keep_alive``) and the requests it will
start (``limit_concurrency``, checked only once headers are complete), but not a connection whose
headers never finish: a thousand such connections (slowloris) held every file descriptor, and
every new request failed. Its protocol classes are therefore wrapped here, generically (httptools
and h11 alike, through what both keep: ``connections``, ``cycle``, ``transport``):

* a request's headers must be complete within ``header_timeout`` seconds of its first byte (of
  the connection, for the first request), or the connection is closed;
* headers larger than ``MAX_HEADER_BYTES`` get 431 and the connection is closed;
* past ``max_connections`` open connections, the one that has waited longest for its headers is
  closed to make room (a busy server keeps its working connections); with none waiting, the
  new connection is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ._config import ProxyConfig

__all__ = ["MAX_HEADER_BYTES", "guarded_protocol", "server_options"]

MAX_HEADER_BYTES = 64 * 1024  # bytes of one request's head (request line and headers)

_TOO_LARGE_BODY = (
    b'{"error": {"message": "Request headers larger than 65536 bytes.", "type": '
    b'"invalid_request_error", "param": null, "code": "invalid_request_error"}}'
)
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: " + str(len(_TOO_LARGE_BODY)).encode() + b"\r\n\r\n" + _TOO_LARGE_BODY
)


def guarded_protocol(base: type[asyncio.Protocol], *, header_timeout: float, max_connections: int) -> type[Any]:
    """``base`` (a uvicorn HTTP protocol class) with the guards above. Each call makes a class of
    its own, with its own record of the connections waiting for headers (one per server).
    O(1) per connection and per read, amortised."""
    waiting: dict[Any, None] = {}  # connections whose request head is unfinished, oldest first

    class Guarded(base):  # type: ignore[valid-type, misc]
        _guard_timer: asyncio.TimerHandle | None = None
        _guard_cycle: Any = None
        _guard_bytes = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._guard_wait()
            if len(self.connections) > max_connections:
                oldest = next((c for c in waiting if c is not self), None)
                (oldest if oldest is not None else self)._guard_drop()

        def data_received(self, data: bytes) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            if idle and self not in waiting:  # the first byte of the next request
                self._guard_wait()
            if self in waiting:
                self._guard_bytes += len(data)
            super().data_received(data)
            if self.cycle is not self._guard_cycle:  # a request's headers completed
                self._guard_cycle = self.cycle
                self._guard_done()
            elif self in waiting and self._guard_bytes > MAX_HEADER_BYTES:
                self._guard_done()
                if not self.transport.is_closing():
                    self.transport.write(_TOO_LARGE)
                    self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._guard_done()
            super().connection_lost(exc)

        def _guard_wait(self) -> None:
            waiting[self] = None
            self._guard_bytes = 0
            if self._guard_timer is None:
                loop = asyncio.get_running_loop()
                self._guard_timer = loop.call_later(header_timeout, self._guard_expired)

        def _guard_done(self) -> None:
            waiting.pop(self, None)
            if self._guard_timer is not None:
                self._guard_timer.cancel()
                self._guard_timer = None

        def _guard_expired(self) -> None:
            self._guard_timer = None
            if self in waiting:
                self._guard_drop()

        def _guard_drop(self) -> None:
            self._guard_done()
            if not self.transport.is_closing():
                self.transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded


def server_options(config: ProxyConfig) -> dict[str, Any]:
    """uvicorn's options for serving the proxy under ``config``: its HTTP protocol guarded, an
    idle kept-alive connection closed after 5 s, h11's buffer bounded like httptools' head."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return {
        "http": guarded_protocol(
            AutoHTTPProtocol, header_timeout=config.header_timeout, max_connections=config.max_connections
        ),
        "timeout_keep_alive": 5,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
    }
