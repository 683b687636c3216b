"""ProxyConfig: everything `toolrepair serve` is told, one documented default each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_TIMEOUT", "ProxyConfig"]

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
    repair_history: bool = True  # pair the request history's calls and results (``repair_history``'s rules)

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
