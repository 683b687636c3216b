"""ProxyConfig: everything `toolrepair serve` is told, one documented default each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_TIMEOUT", "ProxyConfig", "upstream_warning"]

DEFAULT_TIMEOUT = 600.0  # seconds; local models can think for minutes before the first token
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # bytes; long agent histories with images stay well under


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """How the proxy repairs and what it accepts.

    >>> ProxyConfig("http://127.0.0.1:11434/v1").profile
    'local'
    """

    upstream: str
    profile: Literal["local", "hosted"] = "local"
    annotate: bool = False  # add a `toolrepair` field to each completion body
    max_reprompts: int = 0  # self-repair round trips per request
    timeout: float = DEFAULT_TIMEOUT  # seconds to wait on the upstream (to the headers, then between reads)
    max_body: int = DEFAULT_MAX_BODY  # largest request body accepted, in bytes
    api_key: str | None = None  # when set, clients must send `Authorization: Bearer <api_key>`
    metrics: bool = False  # count requests and calls; serve them at GET /metrics

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http:// or https:// URL, not {self.upstream!r}")
        if self.profile not in ("local", "hosted"):
            raise ValueError(f"profile must be 'local' or 'hosted', not {self.profile!r}")
        if self.max_reprompts < 0:
            raise ValueError("max_reprompts must be >= 0")
        if not self.timeout > 0:
            raise ValueError("timeout must be > 0 seconds")
        if self.max_body <= 0:
            raise ValueError("max_body must be > 0 bytes")
        if self.api_key == "":
            raise ValueError("api_key must not be empty")


_VERSION = re.compile(r"/v\d+[a-z0-9]*(?:/|$)")  # /v1, /v1beta, /api/v1, /openai/v1/


def upstream_warning(upstream: str) -> str | None:
    """Why an upstream URL looks wrong, or None: one without a version path (``/v1``) sends
    ``/v1/chat/completions`` to ``<upstream>/chat/completions``, which most servers answer 404.

    >>> upstream_warning("http://127.0.0.1:11434/v1") is None, upstream_warning("http://127.0.0.1:11434") is None
    (True, False)
    """
    if _VERSION.search(urlsplit(upstream).path):
        return None
    return (f"the upstream URL {upstream!r} has no version path: requests go to {upstream.rstrip('/')}/chat/"
            f"completions and the like; most servers serve them under /v1 (e.g. {upstream.rstrip('/')}/v1)")
