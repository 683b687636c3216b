"""OpenTelemetry tracing of tool runs (the ``otel`` extra: ``opentelemetry-api``).

``run``/``arun`` open one ``execute_tool {name}`` span each, with the GenAI semantic-convention
attributes; every repair recorded while it is open becomes a ``toolrepair.repair`` span event.
Arguments and results go into the span only when the registry is built with
``trace_content=True``. Without ``opentelemetry-api`` nothing here imports it or costs more than
one cached lookup per run: the package is looked for once, on the first run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ._errors import ToolExecutionError
from ._safe_text import json_text
from ._types import RepairEvent, ToolOutcome

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["add_repair_events", "end_tool_span", "error_type", "maybe_tracer", "tool_span"]

# Longest text put into one attribute: spans are for reading, not for storing payloads.
MAX_ATTRIBUTE_CHARS = 4096
# Repair kinds whose before/after are values from the arguments, not names or syntax.
_VALUE_KINDS = frozenset({"coerce"})

_UNSET: Any = object()
_tracer: Any = _UNSET  # the cached answer: a Tracer, or None when opentelemetry is absent
_lock = threading.Lock()


def maybe_tracer() -> Tracer | None:
    """The package's tracer, or None without ``opentelemetry-api``. Looked up once, then cached.

    A ``ProxyTracer`` follows the provider the application sets, even after this first call.
    """
    global _tracer
    tracer = _tracer
    if tracer is _UNSET:
        with _lock:
            if _tracer is _UNSET:
                try:
                    from opentelemetry import trace
                except ImportError:
                    _tracer = None
                else:
                    from . import __version__

                    _tracer = trace.get_tracer("toolrepair", __version__)
            tracer = _tracer
    return tracer  # type: ignore[no-any-return]


def _text(value: Any) -> str:
    """A bounded attribute string for any value (never raises)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json_text(value)
        except (TypeError, ValueError, RecursionError):
            text = f"<{type(value).__name__}>"
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[: MAX_ATTRIBUTE_CHARS - 1] + "…"


@contextmanager
def tool_span(tracer: Tracer, name: str, call_id: str | None, arguments: Any, content: bool) -> Iterator[Span]:
    """The ``execute_tool {name}`` span around one run, current while it is open."""
    from opentelemetry.trace import SpanKind

    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    if content:
        attributes["gen_ai.tool.call.arguments"] = _text(arguments)
    with tracer.start_as_current_span(f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes) as span:
        yield span


def end_tool_span(span: Span, outcome: ToolOutcome, content: bool) -> None:
    """What the run gave: the resolved name, the error type, the result when opted in."""
    from opentelemetry.trace import Status, StatusCode

    if outcome.call.name:
        span.update_name(f"execute_tool {outcome.call.name}")
        span.set_attribute("gen_ai.tool.name", outcome.call.name)
    if content:
        span.set_attribute("gen_ai.tool.call.result", _text(outcome.content))
    if not outcome.ok:
        span.set_attribute("error.type", error_type(outcome.error))
        span.set_status(Status(StatusCode.ERROR, outcome.content[:MAX_ATTRIBUTE_CHARS]))


def error_type(error: ToolExecutionError) -> str:
    """``error.type``: the tool's own exception class for a tool failure, else the kind of
    refusal (``not-found``, ``arguments``, ``bind``, ``denied``, …), low-cardinality either way."""
    cause = error.__cause__
    if error.kind == "tool-error" and cause is not None:
        return type(cause).__qualname__
    return error.kind


def add_repair_events(events: Sequence[RepairEvent], dialect: str, content: bool) -> None:
    """One ``toolrepair.repair`` event per repair, on the current span when it records."""
    tracer = maybe_tracer()
    if tracer is None:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording():
        return
    for event in events:
        attributes: dict[str, Any] = {"toolrepair.kind": event.kind, "toolrepair.dialect": dialect}
        if event.path is not None:
            attributes["toolrepair.path"] = event.path
        if content or event.kind not in _VALUE_KINDS:  # a coercion's values are argument values
            attributes["toolrepair.message"] = _text(event.message)
            if event.before is not None:
                attributes["toolrepair.from"] = _text(event.before)
            if event.after is not None:
                attributes["toolrepair.to"] = _text(event.after)
        span.add_event("toolrepair.repair", attributes)
