"""What the proxy did, counted (``--metrics``): Prometheus exposition at ``GET /metrics``, and the
same instruments through OpenTelemetry when ``opentelemetry-api`` is installed.

Every label value is from a bounded set (routes, outcomes, call sources and results, repair
kinds, the built-in dialects, refusal kinds); a value outside its set is counted as ``other``,
so no tool name, model name or path ever becomes a series. Each app has its own
``CollectorRegistry``: several apps in one process (tests, embedding) never share counts.
Recording a request is O(its tally's distinct keys).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Iterable
from typing import Any

import httpx

from .._salvage import DIALECTS
from ._report import Tally

__all__ = ["METRICS_CONTENT_TYPE", "Metrics", "UpstreamClock", "route_of", "time_upstream", "upstream_seconds"]

METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus' text format

ROUTES = {"/v1/chat/completions": "chat_completions", "/v1/messages": "messages", "/v1/responses": "responses"}
OUTCOMES = ("ok", "client_error", "upstream_error", "proxy_error", "stream_fault", "client_disconnected")
SOURCES = frozenset({"native", "salvaged"})
RESULTS = frozenset({"passed", "repaired", "refused"})
REPAIR_KINDS = frozenset({"name", "decode", "coerce", "rename", "salvage"})
REFUSAL_REASONS = frozenset({"not-found", "arguments", "bind", "denied", "no-implementation", "tool-error", "rejected"})
_DIALECTS = frozenset(DIALECTS)
# Seconds. An upstream is a model: from milliseconds to minutes. The proxy's own time: sub-ms up.
UPSTREAM_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
ADDED_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def route_of(path: str) -> str:
    """The route label of a request path: a repaired route, or ``passthrough``."""
    return ROUTES.get(path, "passthrough")


def outcome_of(status: int, fault: str | None) -> str:
    if fault is not None:
        return "stream_fault"
    if status == 499:
        return "client_disconnected"
    if status < 400:
        return "ok"
    if status in (502, 504):
        return "upstream_error"
    return "client_error" if status < 500 else "proxy_error"


def _bounded(value: str, allowed: frozenset[str]) -> str:
    return value if value in allowed else "other"


class UpstreamClock(httpx.AsyncByteStream):
    """When the upstream was asked and when its answer's last byte came (one per upstream request).

    ``wrap`` puts itself around a response's byte stream; O(1) per read.
    """

    __slots__ = ("_stream", "asked", "done")

    def __init__(self) -> None:
        self.asked = time.perf_counter()
        self.done: float | None = None
        self._stream: Any = None

    def wrap(self, reply: Any) -> None:
        self._stream = reply.stream
        reply.stream = self

    async def __aiter__(self) -> Any:
        try:
            async for part in self._stream:
                yield part
        finally:
            self.done = time.perf_counter()

    async def aclose(self) -> None:
        if self.done is None:
            self.done = time.perf_counter()
        await self._stream.aclose()

    @property
    def seconds(self) -> float | None:
        return None if self.done is None else self.done - self.asked


async def time_upstream(request: Any, opening: Awaitable[httpx.Response], metrics: Metrics | None) -> httpx.Response:
    """The upstream's answer (``opening`` awaited), its time kept on the request when metrics
    are counted: from the request sent to the answer's last byte read."""
    if metrics is None:
        return await opening
    clock = UpstreamClock()
    reply = await opening
    clock.wrap(reply)
    clocks = getattr(request.state, "upstream_clocks", None)
    if clocks is None:
        clocks = request.state.upstream_clocks = []
    clocks.append(clock)
    return reply


def upstream_seconds(request: Any) -> float | None:
    """The upstream's time over the request's round trips (None when it was never reached)."""
    clocks = getattr(request.state, "upstream_clocks", None)
    if not clocks:
        return None
    return sum(clock.seconds or 0.0 for clock in clocks)


class Metrics:
    """The proxy's counters and histograms, Prometheus and (when installed) OpenTelemetry.

    >>> m = Metrics(otel=False)
    >>> m.observe(route="messages", stream=False, status=200, fault=None, tally=Tally(salvaged=1),
    ...           upstream=0.5, total=0.501)
    >>> b'toolrepair_proxy_requests_total{outcome="ok",route="messages",stream="false"} 1.0' in m.exposition()
    True
    """

    def __init__(self, *, otel: bool = True, meter_provider: Any = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "toolrepair_proxy_requests",
            "Requests by route, stream and outcome.",
            ("route", "stream", "outcome"),
            registry=registry,
        )
        self._calls = Counter(
            "toolrepair_proxy_tool_calls", "Tool calls by source and result.", ("source", "result"), registry=registry
        )
        self._repairs = Counter("toolrepair_proxy_repairs", "Repairs made, by kind.", ("kind",), registry=registry)
        self._salvaged = Counter(
            "toolrepair_proxy_salvaged_calls", "Calls salvaged from text, by dialect.", ("dialect",), registry=registry
        )
        self._refusals = Counter(
            "toolrepair_proxy_refusals", "Calls refused, by reason.", ("reason",), registry=registry
        )
        self._reprompts = Counter(
            "toolrepair_proxy_reprompts", "Round trips asking the model again.", registry=registry
        )
        self._upstream = Histogram(
            "toolrepair_proxy_upstream_seconds",
            "Time from asking the upstream to its answer's last byte.",
            ("route",),
            buckets=UPSTREAM_BUCKETS,
            registry=registry,
        )
        self._added = Histogram(
            "toolrepair_proxy_added_seconds",
            "Time the proxy added to a request beyond the upstream's.",
            ("route",),
            buckets=ADDED_BUCKETS,
            registry=registry,
        )
        self._otel = _Otel.maybe(meter_provider) if otel else None

    def observe(
        self,
        *,
        route: str,
        stream: bool,
        status: int,
        fault: str | None,
        tally: Tally | None,
        upstream: float | None,
        total: float,
    ) -> None:
        """Count one finished request (its upstream time None when the upstream was not reached)."""
        outcome = outcome_of(status, fault)
        streamed = "true" if stream else "false"
        self._requests.labels(route, streamed, outcome).inc()
        counts = _counts(tally)
        for name, labels, value in counts:
            getattr(self, name).labels(*labels).inc(value)
        if tally is not None and tally.reprompts:
            self._reprompts.inc(tally.reprompts)
        added = None
        if upstream is not None:
            added = max(0.0, total - upstream)
            self._upstream.labels(route).observe(upstream)
            self._added.labels(route).observe(added)
        if self._otel is not None:
            self._otel.record(
                {"route": route, "stream": stream, "outcome": outcome},
                counts,
                reprompts=tally.reprompts if tally is not None else 0,
                upstream=upstream,
                added=added,
                route=route,
            )

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


def _counts(tally: Tally | None) -> list[tuple[str, tuple[str, ...], int]]:
    """(instrument, labels, value) for what ``tally`` counted: bounded labels only."""
    if tally is None:
        return []
    out: list[tuple[str, tuple[str, ...], int]] = []
    out.extend(
        ("_calls", (_bounded(source, SOURCES), _bounded(result, RESULTS)), n)
        for (source, result), n in tally.outcomes.items()
    )
    out.extend(("_repairs", (_bounded(kind, REPAIR_KINDS),), n) for kind, n in tally.repair_kinds.items())
    out.extend(("_salvaged", (_bounded(dialect, _DIALECTS),), n) for dialect, n in tally.dialects.items())
    out.extend(("_refusals", (_bounded(note.reason, REFUSAL_REASONS),), 1) for note in tally.notes)
    return out


_LABELS = {"_calls": ("source", "result"), "_repairs": ("kind",), "_salvaged": ("dialect",), "_refusals": ("reason",)}


class _Otel:
    """The same instruments on an OpenTelemetry meter (dotted names, the semantic-convention style)."""

    def __init__(self, meter: Any) -> None:
        self._requests = meter.create_counter(
            "toolrepair.proxy.requests", unit="{request}", description="Requests by route, stream and outcome."
        )
        self._instruments = {
            "_calls": meter.create_counter(
                "toolrepair.proxy.tool_calls", unit="{call}", description="Tool calls by source and result."
            ),
            "_repairs": meter.create_counter(
                "toolrepair.proxy.repairs", unit="{repair}", description="Repairs made, by kind."
            ),
            "_salvaged": meter.create_counter(
                "toolrepair.proxy.salvaged_calls", unit="{call}", description="Calls salvaged from text, by dialect."
            ),
            "_refusals": meter.create_counter(
                "toolrepair.proxy.refusals", unit="{call}", description="Calls refused, by reason."
            ),
        }
        self._reprompts = meter.create_counter(
            "toolrepair.proxy.reprompts", unit="{request}", description="Round trips asking the model again."
        )
        self._upstream = meter.create_histogram(
            "toolrepair.proxy.upstream.duration",
            unit="s",
            description="Time from asking the upstream to its last byte.",
        )
        self._added = meter.create_histogram(
            "toolrepair.proxy.added.duration", unit="s", description="Time the proxy added beyond the upstream's."
        )

    @classmethod
    def maybe(cls, meter_provider: Any) -> _Otel | None:
        try:
            from opentelemetry import metrics
        except ImportError:
            return None
        from .. import __version__

        provider = meter_provider if meter_provider is not None else metrics.get_meter_provider()
        return cls(provider.get_meter("toolrepair.proxy", __version__))

    def record(
        self,
        attributes: dict[str, Any],
        counts: Iterable[tuple[str, tuple[str, ...], int]],
        *,
        reprompts: int,
        upstream: float | None,
        added: float | None,
        route: str,
    ) -> None:
        self._requests.add(1, attributes)
        for name, labels, value in counts:
            self._instruments[name].add(value, dict(zip(_LABELS[name], labels, strict=True)))
        if reprompts:
            self._reprompts.add(reprompts, {"route": route})
        if upstream is not None and added is not None:
            self._upstream.record(upstream, {"route": route})
            self._added.record(added, {"route": route})
