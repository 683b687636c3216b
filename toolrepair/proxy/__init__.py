"""toolrepair's OpenAI-compatible repair proxy (``toolrepair serve``).

Point any OpenAI client's ``base_url`` at it: chat completions come back with tool calls
native and repaired (names, arguments, calls written as text), streaming included; every
other ``/v1/`` path is forwarded unchanged. Needs the ``proxy`` extra
(``pip install 'toolrepair[proxy]'``: Starlette, uvicorn, httpx), imported here only.

>>> app = create_app(upstream="http://127.0.0.1:11434/v1")   # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ._config import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_LINE,
    DEFAULT_MAX_REPLY,
    DEFAULT_TIMEOUT,
    ProxyConfig,
)

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ("DEFAULT_MAX_BODY", "DEFAULT_MAX_LINE", "DEFAULT_MAX_REPLY", "DEFAULT_TIMEOUT", "ProxyConfig", "create_app")

_MISSING = "toolrepair serve needs Starlette, uvicorn and httpx (missing module {!r}): pip install 'toolrepair[proxy]'"


def create_app(
    upstream: str,
    *,
    profile: Literal["local", "hosted"] = "local",
    annotate: bool = False,
    max_reprompts: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    max_body: int = DEFAULT_MAX_BODY,
    max_reply: int = DEFAULT_MAX_REPLY,
    max_line: int = DEFAULT_MAX_LINE,
    workers: int | None = None,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    api_key: str | None = None,
    repair_history: bool = True,
    metrics: bool = False,
    model_profile: str | None = None,
    reasoning: Literal["separate", "inline", "drop"] = "separate",
    transport: Any = None,
) -> Starlette:
    """The proxy as an ASGI app (run it with any ASGI server, or ``toolrepair serve``).

    ``upstream`` is the model server's OpenAI base URL (``http://127.0.0.1:11434/v1``);
    ``transport`` an ``httpx.AsyncBaseTransport`` to reach it by (default: the network);
    ``metrics`` serves ``GET /metrics`` (and counts through OpenTelemetry when installed);
    ``model_profile`` names a ``tr.model_profile`` for every request (``"none"``: no profile;
    None: picked from each request's ``model``); ``reasoning`` is where reasoning read from the
    content goes: ``"separate"``, ``"inline"`` or ``"drop"`` (see docs/proxy.md).
    """
    config = ProxyConfig(
        upstream,
        profile=profile,
        annotate=annotate,
        max_reprompts=max_reprompts,
        timeout=timeout,
        max_body=max_body,
        max_reply=max_reply,
        max_line=max_line,
        workers=workers,
        header_timeout=header_timeout,
        max_connections=max_connections,
        api_key=api_key,
        repair_history=repair_history,
        metrics=metrics,
        model_profile=model_profile,
        reasoning=reasoning,
    )
    try:
        from ._app import build_app
    except ImportError as exc:
        raise ImportError(_MISSING.format(exc.name)) from exc
    return build_app(config, transport=transport)
