"""``GET /ready``: whether the upstream answers, for orchestrators' readiness probes.

``/health`` says the proxy itself is up (liveness); ``/ready`` asks the upstream for its model
list (``GET <upstream>/models``, what every OpenAI-compatible server serves) and is 503 when it
cannot be reached or answers with a server error. Bounded: at most ``READY_TIMEOUT`` seconds
(or ``--timeout``, when shorter), the answer's body never read past its first bytes.
"""

from __future__ import annotations

import anyio
import httpx

from ._upstream import Upstream

__all__ = ["READY_TIMEOUT", "readiness"]

READY_TIMEOUT = 5.0  # seconds; a probe that waits longer is itself the fault


async def readiness(upstream: Upstream) -> tuple[int, dict[str, str]]:
    """(HTTP status, body) for ``/ready``; the body says why when the upstream is not ready."""
    base = upstream.config.upstream
    limit = min(READY_TIMEOUT, upstream.config.timeout)
    try:
        with anyio.fail_after(limit):
            reply = await upstream.client.send(
                upstream.client.build_request("GET", upstream.url("/v1/models")), stream=True
            )
            await reply.aclose()
    except TimeoutError:
        return 503, {"status": "unavailable", "upstream": base, "reason": f"no answer within {limit:g} s"}
    except httpx.HTTPError as exc:
        return 503, {"status": "unavailable", "upstream": base, "reason": f"unreachable: {type(exc).__name__}"}
    if reply.status_code >= 500:
        return 503, {"status": "unavailable", "upstream": base, "reason": f"upstream answered {reply.status_code}"}
    return 200, {"status": "ready", "upstream": base}
