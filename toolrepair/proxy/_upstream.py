"""The upstream model server, over one pooled httpx client: requests out, faults as ProxyErrors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import httpx

from ._config import ProxyConfig
from ._errors import ProxyError
from ._pool import transport as pooled_transport

__all__ = ["Upstream", "forwarded_headers", "json_object", "returned_headers", "timeout_error"]

# Hop-by-hop headers (RFC 9110 7.6.1) and those the proxy recomputes: never forwarded.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                  "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
                  "content-encoding"})


def forwarded_headers(headers: Iterable[tuple[str, str]], *, drop_auth: bool) -> list[tuple[str, str]]:
    """The client's headers for the upstream. With ``--api-key`` the client's Authorization was
    the proxy's own key, so it stays here."""
    return [(k, v) for k, v in headers
            if k.lower() not in _HOP and not (drop_auth and k.lower() == "authorization")]


# The proxy's own server writes these; the upstream's copies would be duplicates.
_OWN = frozenset({"date", "server"})


def returned_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The upstream's response headers for the client (length, encoding, date and server are the proxy's)."""
    return {k: v for k, v in headers if k.lower() not in _HOP and k.lower() not in _OWN}


class Upstream:
    """Sends requests to ``config.upstream``; ``/v1/x`` goes to ``<upstream>/x``."""

    __slots__ = ("_base", "client", "config")

    def __init__(self, config: ProxyConfig, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        self._base = config.upstream.rstrip("/")
        # One pool for every client: connections to the model server are reused, and the
        # timeout bounds connecting and each read (a stream may run long, a read may not).
        # Idle connections are dropped before common servers' keep-alive (uvicorn: 5 s) drops them.
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(config.timeout),
            transport=transport or pooled_transport(max_idle=256, keepalive_expiry=4.0), trust_env=False,
        )

    def url(self, path: str) -> str:
        rest = path[len("/v1"):] if path.startswith("/v1") else path
        return self._base + rest

    async def open(self, method: str, path: str, *, headers: list[tuple[str, str]], content: bytes,
                   query: str = "") -> httpx.Response:
        """Send and return the response with its body unread (stream it, then ``aclose``)."""
        url = self.url(path) + (f"?{query}" if query else "")
        request = self.client.build_request(method, url, headers=headers, content=content)
        try:
            try:
                return await self.client.send(request, stream=True)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                # A kept-alive connection the server closed as it was reused: nothing was answered,
                # so the request is sent once more, on a fresh connection.
                return await self.client.send(request, stream=True)
        except httpx.TimeoutException:
            raise timeout_error(self.config.timeout) from None
        except httpx.TransportError as exc:
            raise ProxyError(502, f"The upstream {self._base} could not be reached: {type(exc).__name__}"
                             f"{': ' + str(exc) if str(exc) else ''}.", kind="upstream_unreachable") from None

    async def aclose(self) -> None:
        await self.client.aclose()


def timeout_error(timeout: float) -> ProxyError:
    return ProxyError(504, f"The upstream did not answer within {timeout:g} s (--timeout).", kind="upstream_timeout")


def json_object(data: bytes | str) -> dict[str, Any] | None:
    """``data`` as a JSON object, or None."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
