"""OpenTelemetry (extra ``otel``): spans and repair events, read back from the real SDK's
in-memory exporter; and, without the package, no import and one cached look-up."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import toolrepair as tr
from toolrepair import _otel

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def provider() -> Iterator[None]:
    # The global provider can be set once per process; the package's tracer is a proxy that
    # follows it, whenever it is set.
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        sdk = TracerProvider()
        sdk.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(sdk)
    else:  # pragma: no cover - another suite set one first
        current.add_span_processor(SimpleSpanProcessor(EXPORTER))
    yield


@pytest.fixture(autouse=True)
def clear() -> Iterator[None]:
    EXPORTER.clear()
    yield
    EXPORTER.clear()


def web_search(query: str, limit: int = 5) -> str:
    return f"{limit} results for {query}"


def divide(a: int, b: int) -> float:
    return a / b


async def fetch(url: str) -> str:
    await asyncio.sleep(0)
    return f"fetched {url}"


def spans() -> list[ReadableSpan]:
    return list(EXPORTER.get_finished_spans())


def repairs(span: ReadableSpan) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == "toolrepair.repair"]


def test_a_run_is_an_execute_tool_span_with_the_genai_attributes() -> None:
    registry = tr.ToolRegistry([web_search])
    outcome = registry.run({"id": "call_1", "name": "web_search", "arguments": {"query": "cats"}})
    assert outcome.ok
    (span,) = spans()
    assert span.name == "execute_tool web_search"
    assert span.kind == trace.SpanKind.INTERNAL
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "web_search",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1",
    }
    assert span.status.status_code == StatusCode.UNSET
    assert repairs(span) == []


def test_each_repair_is_a_span_event_and_the_span_takes_the_resolved_name() -> None:
    registry = tr.ToolRegistry([web_search])
    outcome = registry.run({"name": "WebSearch", "arguments": '{"query": "cats", "limit": "3",}'})
    assert outcome.ok
    (span,) = spans()
    assert span.name == "execute_tool web_search"
    assert span.attributes is not None and span.attributes["gen_ai.tool.name"] == "web_search"
    assert "gen_ai.tool.call.id" not in span.attributes
    got = repairs(span)
    assert [e["toolrepair.kind"] for e in got] == [e.kind for e in outcome.events] == ["name", "decode", "coerce"]
    assert got[0] == {
        "toolrepair.kind": "name",
        "toolrepair.dialect": "native",
        "toolrepair.from": "WebSearch",
        "toolrepair.to": "web_search",
        "toolrepair.message": "Self-repaired tool name 'WebSearch' -> 'web_search'",
    }
    # A coercion's before/after are argument values: only its kind and path, unless opted in.
    assert got[2] == {"toolrepair.kind": "coerce", "toolrepair.dialect": "native", "toolrepair.path": "limit"}


def test_a_salvaged_call_names_its_dialect() -> None:
    registry = tr.ToolRegistry([web_search])
    (call,) = registry.salvage(
        '<tool_call>{"name": "web_search", "arguments": {"query": "x", "limit": "3"}}</tool_call>'
    ).calls
    assert registry.run(call).ok
    (span,) = spans()
    assert {e["toolrepair.dialect"] for e in repairs(span)} == {call.dialect} != {"native"}


@pytest.mark.parametrize(
    ("call", "error_type", "name"),
    [
        ({"name": "divide", "arguments": {"a": 1, "b": 0}}, "ZeroDivisionError", "divide"),
        ({"name": "nope", "arguments": {}}, "not-found", "nope"),
        ({"name": "schema_only", "arguments": {}}, "no-implementation", "schema_only"),
        ({"name": "divide", "arguments": {"a": "x", "b": 1}}, "arguments", "divide"),
        ({"name": "web_search", "arguments": {"query": "q"}}, "denied", "web_search"),
    ],
)
def test_a_failure_sets_error_type_and_the_error_status(call: dict[str, Any], error_type: str, name: str) -> None:
    registry = tr.ToolRegistry([web_search, divide, tr.ToolSpec("schema_only")], deny=["web_search"])
    outcome = registry.run(call)
    assert not outcome.ok
    (span,) = spans()
    assert span.name == f"execute_tool {name}"
    assert span.attributes is not None and span.attributes["error.type"] == error_type
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == outcome.content


def test_arguments_and_results_only_when_opted_in() -> None:
    call = {"name": "web_search", "arguments": {"query": "secret", "limit": "2"}}
    tr.ToolRegistry([web_search]).run(call)
    tr.ToolRegistry([web_search], trace_content=True).run(call)
    quiet, loud = spans()
    assert quiet.attributes is not None and loud.attributes is not None
    assert not any("secret" in str(v) for v in quiet.attributes.values())
    assert not any("secret" in str(v) for e in quiet.events for v in (e.attributes or {}).values())
    assert json.loads(str(loud.attributes["gen_ai.tool.call.arguments"])) == {"query": "secret", "limit": "2"}
    assert loud.attributes["gen_ai.tool.call.result"] == "2 results for secret"
    (coerce,) = repairs(loud)
    assert coerce["toolrepair.from"] == "2" and coerce["toolrepair.to"] == "2"  # "2" -> 2, as text


def test_long_content_is_cut() -> None:
    registry = tr.ToolRegistry([web_search], trace_content=True)
    registry.run({"name": "web_search", "arguments": {"query": "q" * 10_000}})
    (span,) = spans()
    assert span.attributes is not None
    assert len(str(span.attributes["gen_ai.tool.call.result"])) <= 4096


def test_arun_and_concurrent_tasks_each_get_their_span() -> None:
    registry = tr.ToolRegistry([fetch, web_search], max_repairs=10)

    async def main() -> list[tr.ToolOutcome]:
        return list(
            await asyncio.gather(
                *(registry.arun({"id": f"c{i}", "name": "Fetch", "arguments": {"url": str(i)}}) for i in range(5))
            )
        )

    assert all(o.ok for o in asyncio.run(main()))
    got = spans()
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in got if s.attributes) == [f"c{i}" for i in range(5)]
    assert all(s.name == "execute_tool fetch" and len(repairs(s)) == 1 for s in got)
    assert len({s.context.span_id for s in got if s.context}) == 5


def test_the_span_is_a_child_of_the_callers_span() -> None:
    registry = tr.ToolRegistry([web_search])
    with trace.get_tracer("app").start_as_current_span("agent turn") as parent:
        registry.run({"name": "web_search", "arguments": {"query": "q"}})
    child, outer = spans()
    assert child.parent is not None and child.parent.span_id == parent.get_span_context().span_id
    assert outer.name == "agent turn"


def test_an_escaping_error_ends_the_span_with_it() -> None:
    def on_repair(event: tr.RepairEvent) -> None:
        raise RuntimeError("callback failed")

    registry = tr.ToolRegistry([web_search], on_repair=on_repair)
    with pytest.raises(RuntimeError):
        registry.run({"name": "WebSearch", "arguments": {"query": "q"}})
    (span,) = spans()
    assert span.status.status_code == StatusCode.ERROR


BLOCKED = textwrap.dedent("""
    import sys
    lookups = []

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                lookups.append(name)
                raise ImportError(f"blocked: {name}")
            return None

    sys.meta_path.insert(0, Block())
    import toolrepair as tr
    assert not lookups and "opentelemetry" not in sys.modules

    def web_search(query: str) -> str:
        return query

    registry = tr.ToolRegistry([web_search], max_repeats=None)
    for _ in range(3):
        assert registry.run({"name": "WebSearch", "arguments": {"query": "q"}}).ok
    import asyncio
    assert asyncio.run(registry.arun({"name": "web_search", "arguments": {"query": "q"}})).ok
    print(lookups)
""")


def test_without_the_package_nothing_is_imported_and_it_is_looked_for_once() -> None:
    out = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['opentelemetry']"


def test_import_toolrepair_never_imports_opentelemetry() -> None:
    code = "import sys, toolrepair; print('opentelemetry' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_arguments_that_are_not_json_are_named_by_type() -> None:
    registry = tr.ToolRegistry([web_search], trace_content=True)
    registry.run(tr.ToolCall("web_search", {"query": {1, 2}}))
    (span,) = spans()
    assert span.attributes is not None and span.attributes["gen_ai.tool.call.arguments"] == "<dict>"


def test_error_type_of_a_tool_error_without_a_cause_is_its_kind() -> None:
    assert _otel.error_type(tr.ToolExecutionError("x", kind="tool-error")) == "tool-error"


def test_without_the_package_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same as the subprocess test, in process (so coverage sees the absent branch).
    monkeypatch.setattr(_otel, "_tracer", _otel._UNSET)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # importing it now fails
    registry = tr.ToolRegistry([web_search])
    assert registry.run({"name": "WebSearch", "arguments": {"query": "q"}}).ok
    assert _otel.maybe_tracer() is None
    assert asyncio.run(registry.arun({"name": "WebSearch", "arguments": {"query": "q"}})).ok
    assert spans() == []


def test_repairs_outside_a_run_go_to_the_callers_span_if_any() -> None:
    registry = tr.ToolRegistry([web_search])
    assert registry.repair({"name": "WebSearch", "arguments": {"query": "q"}}).call is not None  # no span: dropped
    with trace.get_tracer("app").start_as_current_span("turn"):
        registry.repair({"name": "WebSearch", "arguments": {"query": "q"}})
        _otel.add_repair_events([tr.RepairEvent("decode", "Removed comment at 3")], "hermes", False)
    (span,) = spans()
    assert [e["toolrepair.kind"] for e in repairs(span)] == ["name", "decode"]
    assert repairs(span)[1] == {
        "toolrepair.kind": "decode",
        "toolrepair.dialect": "hermes",
        "toolrepair.message": "Removed comment at 3",
    }


def test_a_call_without_a_name_keeps_the_span_name_it_started_with() -> None:
    tr.ToolRegistry([web_search]).run({"arguments": {}})
    (span,) = spans()
    assert span.name == "execute_tool " and span.attributes is not None
    assert span.attributes["error.type"] == "not-found"


def test_a_salvaged_calls_carried_repairs_are_span_events_with_the_name_written() -> None:
    registry = tr.ToolRegistry([web_search])
    (call,) = registry.salvage('<tool_call>{"name": "WebSearch", "arguments": {"query": "x",}}</tool_call>').calls
    outcome = registry.run(call)
    assert outcome.ok
    (span,) = spans()
    got = repairs(span)
    assert [e["toolrepair.kind"] for e in got] == [e.kind for e in outcome.events]
    name = next(e for e in got if e["toolrepair.kind"] == "name")
    assert (name["toolrepair.from"], name["toolrepair.to"], name["toolrepair.dialect"]) == (
        "WebSearch",
        "web_search",
        "hermes",
    )
