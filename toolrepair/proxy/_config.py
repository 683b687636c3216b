"""ProxyConfig: everything `toolrepair serve` is told, one documented default each."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from ._redact import redact_url

Reasoning = Literal["separate", "inline", "drop"]
REASONING_MODES: tuple[Reasoning, ...] = ("separate", "inline", "drop")

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_LINE",
    "DEFAULT_MAX_REPLY",
    "DEFAULT_TIMEOUT",
    "REASONING_MODES",
    "ProxyConfig",
    "Reasoning",
    "upstream_warning",
]

DEFAULT_TIMEOUT = 600.0  # seconds; local models can think for minutes before the first token
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # bytes; long agent histories with images stay well under
# bytes, decoded: a whole upstream reply read to be repaired (Limits.max_input_chars is 32M chars)
DEFAULT_MAX_REPLY = 64 * 1024 * 1024
# bytes: one line (or one event's data) of an upstream event stream; a chunk is a few hundred bytes,
# a server that sends the whole reply as one chunk stays well under
DEFAULT_MAX_LINE = 16 * 1024 * 1024
DEFAULT_HEADER_TIMEOUT = 10.0  # seconds for a request's headers, from its first byte; clients send them at once
# open client connections; each also holds one to the upstream, so with the common limit of 1024
# open files the process stays under it
DEFAULT_MAX_CONNECTIONS = 400


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
    max_reply: int = DEFAULT_MAX_REPLY  # largest whole upstream reply read, in bytes once decoded
    max_line: int = DEFAULT_MAX_LINE  # longest upstream event-stream line or event, in bytes
    # Worker threads repairing large replies at once (None: the CPUs this process may use).
    workers: int | None = None
    header_timeout: float = DEFAULT_HEADER_TIMEOUT  # seconds a request's headers may take (`serve`)
    max_connections: int = DEFAULT_MAX_CONNECTIONS  # open client connections (`serve`)
    # When set, clients must send `Authorization: Bearer <api_key>`; kept out of the repr (logs, tracebacks).
    api_key: str | None = field(default=None, repr=False)
    repair_history: bool = True  # pair the request history's calls and results (``repair_history``'s rules)
    metrics: bool = False  # count requests and calls; serve them at GET /metrics
    # A `tr.model_profile` name for every request, "none" for no profile; None: picked from
    # each request's `model` field (`_model.PROFILE_BY_MODEL`).
    model_profile: str | None = None
    # Reasoning read from the content: "separate" (`reasoning_content`, a `thinking` block),
    # "inline" (left in the content as written) or "drop". The upstream's own passes as sent.
    reasoning: Reasoning = "separate"

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http:// or https:// URL, not {redact_url(self.upstream)!r}")
        if self.profile not in ("local", "hosted"):
            raise ValueError(f"profile must be 'local' or 'hosted', not {self.profile!r}")
        if self.max_reprompts < 0:
            raise ValueError("max_reprompts must be >= 0")
        if not self.timeout > 0:
            raise ValueError("timeout must be > 0 seconds")
        if self.max_body <= 0:
            raise ValueError("max_body must be > 0 bytes")
        if self.max_reply <= 0 or self.max_line <= 0:
            raise ValueError("max_reply and max_line must be > 0 bytes")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1")
        if not self.header_timeout > 0 or self.max_connections < 1:
            raise ValueError("header_timeout must be > 0 seconds and max_connections >= 1")
        if self.api_key == "":
            raise ValueError("api_key must not be empty")
        if self.reasoning not in REASONING_MODES:
            raise ValueError(f"reasoning must be one of {', '.join(REASONING_MODES)}, not {self.reasoning!r}")
        from ._model import profile_named

        profile_named(self.model_profile)  # ValueError naming the profiles for an unknown one


_VERSION = re.compile(r"/v\d+[a-z0-9]*(?:/|$)")  # /v1, /v1beta, /api/v1, /openai/v1/


def upstream_warning(upstream: str) -> str | None:
    """Why an upstream URL looks wrong, or None: one without a version path (``/v1``) sends
    ``/v1/chat/completions`` to ``<upstream>/chat/completions``, which most servers answer 404.

    >>> upstream_warning("http://127.0.0.1:11434/v1") is None, upstream_warning("http://127.0.0.1:11434") is None
    (True, False)
    """
    if _VERSION.search(urlsplit(upstream).path):
        return None
    return (
        f"the upstream URL {upstream!r} has no version path: requests go to {upstream.rstrip('/')}/chat/"
        f"completions and the like; most servers serve them under /v1 (e.g. {upstream.rstrip('/')}/v1)"
    )
