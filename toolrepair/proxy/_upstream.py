"""The upstream model server, over one pooled httpx client: requests out, faults as ProxyErrors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import httpx

from ._config import ProxyConfig
from ._errors import ProxyError
from ._paths import forwarded_path
from ._pool import transport as pooled_transport
from ._redact import redact_url, scrub

__all__ = ["Upstream", "forwarded_headers", "json_object", "returned_headers", "timeout_error"]

# Hop-by-hop headers (RFC 9110 7.6.1, plus the non-standard proxy-connection) and those the
# proxy recomputes: never forwarded, in either direction.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)


def _nominated(headers: list[tuple[str, str]]) -> frozenset[str]:
    """The header names a ``Connection`` header lists: hop-by-hop for this message alone
    (RFC 9110 7.6.1), so never forwarded either. O(total length of the Connection values)."""
    names: set[str] = set()
    for key, value in headers:
        if key.lower() == "connection":
            names.update(token.strip().lower() for token in value.split(","))
    return frozenset(names)


def forwarded_headers(headers: Iterable[tuple[str, str]], *, drop_auth: bool) -> list[tuple[str, str]]:
    """The client's headers for the upstream: without the hop-by-hop set, those the client's
    ``Connection`` header nominates, and (with an API key) the client's Authorization, which was
    the proxy's own key. The upstream is asked for an uncompressed body (``identity``): a
    compressed one is decoded under a bound anyway (see ``_body``), and on loopback compression
    only costs CPU."""
    items = list(headers)
    dropped = _HOP | _nominated(items)
    out = [(k, v) for k, v in items if k.lower() not in dropped and not (drop_auth and k.lower() == "authorization")]
    out.append(("accept-encoding", "identity"))
    return out


# The proxy's own server writes these; the upstream's copies would be duplicates.
_OWN = frozenset({"date", "server"})


def returned_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The upstream's response headers for the client: without the hop-by-hop set, those its
    ``Connection`` header nominates, and length, encoding, date and server (the proxy's own)."""
    items = list(headers)
    dropped = _HOP | _OWN | _nominated(items)
    return {k: v for k, v in items if k.lower() not in dropped}


class Upstream:
    """Sends requests to ``config.upstream``; ``/v1/x`` goes to ``<upstream>/x``."""

    __slots__ = ("_base", "_query", "client", "config", "shown")

    def __init__(self, config: ProxyConfig, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        base, _, self._query = config.upstream.partition("?")
        self._base = base.split("#", 1)[0].rstrip("/")
        self.shown = redact_url(config.upstream)  # the upstream as every message shows it
        # One pool for every client: connections to the model server are reused, and the
        # timeout bounds connecting and each read (a stream may run long, a read may not).
        # Idle connections are dropped before common servers' keep-alive (uvicorn: 5 s) drops them.
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(config.timeout),
            transport=transport or pooled_transport(max_idle=256, keepalive_expiry=4.0),
            trust_env=False,
        )

    def url(self, path: str, query: str = "") -> str:
        """The upstream URL for the client's ``path`` (percent-encoded, as sent): only a path
        ``forwarded_path`` accepts, put below the base (ProxyError 404 otherwise). The base's own
        query (``?api-version=…``) comes first, then the client's."""
        joined = "&".join(part for part in (self._query, query) if part)
        return self._base + forwarded_path(path) + (f"?{joined}" if joined else "")

    async def open(
        self, method: str, path: str, *, headers: list[tuple[str, str]], content: bytes, query: str = ""
    ) -> httpx.Response:
        """Send and return the response with its body unread (stream it, then ``aclose``).
        ``path`` is the client's, percent-encoded as sent (see ``url``)."""
        url = self.url(path, query)
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
            detail = scrub(str(exc), self.config.upstream)
            raise ProxyError(
                502,
                f"The upstream {self.shown} could not be reached: {type(exc).__name__}"
                f"{': ' + detail if detail else ''}.",
                kind="upstream_unreachable",
            ) from None

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
