"""ToolRegistry: name repair, messages, budget, profiles, dispatch, async parity, threads, policy."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from typing import Any

import pytest

import toolrepair as tr


def web_search(query: str, limit: int = 5) -> str:
    return f"results for {query} ({limit})"


def calculator(expression: str) -> float:
    raise ZeroDivisionError("division by zero")


async def fetch(url: str, timeout: float = 1.0) -> str:
    await asyncio.sleep(0)
    return f"fetched {url}"


class Wiki:
    name = "wiki_lookup"

    def run(self, title: str, lang: str = "en") -> str:
        return f"{title}@{lang}"


class Store:
    def get_item(self, key: str) -> str:
        return f"item {key}"


@pytest.fixture
def registry() -> tr.ToolRegistry:
    return tr.ToolRegistry([web_search, calculator, fetch, Wiki(), Store().get_item])


AVAILABLE = "['calculator', 'fetch', 'get_item', 'web_search', 'wiki_lookup']"


@pytest.mark.parametrize(
    "name",
    [
        "web_search",
        "WebSearch",
        "web-search",
        "Web Search",
        "WEB_SEARCH",
        "webSearch",
        "ｗｅｂ＿ｓｅａｒｃｈ",
        "web\u200bsearch",
        "\u2066web_search\u2069",
        "functions.web_search",
        "default_api.web_search",
        "tools.web_search",
        "multi_tool_use.WebSearch",
        "functions.WebSearch",
    ],
)
def test_drift_dispatches(registry: tr.ToolRegistry, name: str) -> None:
    assert registry.execute(name, {"query": "cats"}) == "results for cats (5)"


@pytest.mark.parametrize(
    ("name", "message", "suggestion"),
    [
        (
            "wеb_search",
            f"Tool 'wеb_search' not found. Did you mean 'web_search'? Available tools: {AVAILABLE}",
            "web_search",
        ),  # Cyrillic е
        (
            "web_serch",
            f"Tool 'web_serch' not found. Did you mean 'web_search'? Available tools: {AVAILABLE}",
            "web_search",
        ),
        ("translate", f"Tool 'translate' not found. Available tools: {AVAILABLE}", None),
        ("", f"Tool '' not found. Available tools: {AVAILABLE}", None),
    ],
)
def test_unknown_names(registry: tr.ToolRegistry, name: str, message: str, suggestion: str | None) -> None:
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute(name, {"query": "cats"})
    err = info.value
    assert str(err) == message
    assert err.kind == "not-found"
    assert err.suggestion == suggestion
    assert err.available_tools == ["calculator", "fetch", "get_item", "web_search", "wiki_lookup"]


def test_ambiguous_drift_never_dispatches_but_exact_names_do() -> None:
    def read_file(path: str) -> str:
        return "snake"

    def readFile(path: str) -> str:
        return "camel"

    registry = tr.ToolRegistry([read_file, readFile])
    assert registry.execute("read_file", {"path": "p"}) == "snake"
    assert registry.execute("readFile", {"path": "p"}) == "camel"
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute("READ_FILE", {"path": "p"})
    assert str(info.value) == (
        "Tool 'READ_FILE' not found. Did you mean 'read_file'? Available tools: ['readFile', 'read_file']"
    )


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("web_search", {"q": "x"}, {"required": ["query"], "optional": ["limit"]}),
        ("fetch", {}, {"required": ["url"], "optional": ["timeout"]}),
        ("wiki_lookup", {"page": "x"}, {"required": ["title"], "optional": ["lang"]}),
        ("get_item", {"id": 1}, {"required": ["key"], "optional": []}),
    ],
)
def test_expected_parameters(
    registry: tr.ToolRegistry, name: str, arguments: dict[str, Any], expected: dict[str, list[str]]
) -> None:
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute(name, arguments)
    err = info.value
    assert err.kind == "arguments"
    assert err.expected_parameters == expected
    assert str(err).endswith(
        f"Expected parameters for {name!r} — required: {expected['required']!r}, optional: {expected['optional']!r}."
    )


def test_tool_error_passes_through(registry: tr.ToolRegistry) -> None:
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute("calculator", {"expression": "1/0"})
    assert str(info.value) == "division by zero"
    assert info.value.kind == "tool-error"
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_repair_is_logged_and_recorded(registry: tr.ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tr.RepairEvent] = []
    registry.on_repair = seen.append
    with caplog.at_level(logging.DEBUG, logger="toolrepair"):
        registry.execute("WebSearch", {"query": "x"})
    assert "Self-repaired tool name 'WebSearch' -> 'web_search'" in [r.getMessage() for r in caplog.records]
    assert registry.events == seen
    assert seen[0].kind == "name" and seen[0].before == "WebSearch" and seen[0].after == "web_search"


def test_arguments_as_json_string(registry: tr.ToolRegistry) -> None:
    assert registry.execute("web_search", '{"query": "x", "limit": 2}') == "results for x (2)"
    assert registry.execute("web_search", '{"query": "x", "limit": "3",}') == "results for x (3)"
    kinds = [e.kind for e in registry.events]
    assert kinds == ["decode", "coerce"]


def test_budget_is_spent_per_turn_and_resets() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=2, max_repeats=None)
    with registry.turn():
        assert registry.execute("WebSearch", {"query": "a"})
        assert registry.execute("web_search", {"query": "b"})  # exact: costs nothing
        assert registry.execute("web-search", {"query": "c"})
        with pytest.raises(tr.ToolExecutionError) as info:
            registry.execute("Web Search", {"query": "d"})
        assert info.value.suggestion == "web_search"
        with pytest.raises(tr.ToolExecutionError):
            registry.execute("web_search", {"query": "e", "limit": "2"})  # argument repairs count too
        assert registry.execute("web_search", {"query": "f"})
    with registry.turn():
        assert registry.execute("WebSearch", {"query": "g"})
    # outside a turn each call has a budget of its own
    for _ in range(5):
        assert registry.execute("WebSearch", {"query": "h"})


def test_zero_budget_and_hosted_never_repair_silently() -> None:
    for registry in (tr.ToolRegistry([web_search], profile="hosted"), tr.ToolRegistry([web_search], max_repairs=0)):
        assert registry.max_repairs == 0
        with pytest.raises(tr.ToolExecutionError) as info:
            registry.execute("WebSearch", {"query": "x"})
        assert str(info.value) == (
            "Tool 'WebSearch' not found. Did you mean 'web_search'? Available tools: ['web_search']"
        )
        with pytest.raises(tr.ToolExecutionError) as info2:
            registry.execute("web_search", '{"query": "x",}')
        assert "need correcting: Removed trailing comma" in str(info2.value)
        assert registry.execute("web_search", {"query": "x"}) == "results for x (5)"
        assert registry.events == []


def test_profiles_and_limits_are_validated() -> None:
    assert tr.ToolRegistry([web_search]).max_repairs == 2
    with pytest.raises(ValueError, match="profile"):
        tr.ToolRegistry([web_search], profile="cloud")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_repairs"):
        tr.ToolRegistry([web_search], max_repairs=-1)


def test_run_never_raises_for_tool_failures(registry: tr.ToolRegistry) -> None:
    ok = registry.run({"name": "WebSearch", "arguments": {"query": "x"}, "id": "c1"})
    assert ok.ok and ok.value == "results for x (5)" and ok.content == "results for x (5)"
    assert ok.call.name == "web_search" and ok.call.id == "c1"
    assert [e.kind for e in ok.events] == ["name"]
    bad = registry.run(tr.ToolCall("nope", {}))
    assert not bad.ok and bad.content.startswith("Tool 'nope' not found.")
    assert isinstance(bad.error, tr.ToolExecutionError)
    boom = registry.run(
        {"type": "function", "id": "c2", "function": {"name": "calculator", "arguments": '{"expression": "1/0"}'}}
    )
    assert not boom.ok and boom.content == "division by zero" and boom.call.id == "c2"


def test_schema_only_tool_cannot_run() -> None:
    registry = tr.ToolRegistry([tr.ToolSpec("remote", {"type": "object", "properties": {}})])
    outcome = registry.run({"name": "remote", "arguments": {}})
    assert not outcome.ok and outcome.error.kind == "no-implementation"


def test_async_parity(registry: tr.ToolRegistry) -> None:
    async def main() -> None:
        assert await registry.aexecute("Fetch", {"url": "u"}) == "fetched u"
        assert await registry.aexecute("web_search", {"query": "s"}) == "results for s (5)"
        with pytest.raises(tr.ToolExecutionError) as info:
            await registry.aexecute("calculator", {"expression": "1/0"})
        assert str(info.value) == "division by zero"
        with pytest.raises(tr.ToolExecutionError):
            await registry.aexecute("wеb_search", {"query": "s"})
        out = await registry.arun({"name": "fetch", "arguments": {"url": "v"}})
        assert out.ok and out.content == "fetched v"
        bad = await registry.arun({"name": "calculator", "arguments": {"expression": "x"}})
        assert not bad.ok and bad.content == "division by zero"
        missing = await registry.arun({"name": "fetch", "arguments": {}})
        assert not missing.ok and missing.error.kind == "arguments"

    asyncio.run(main())


def test_async_tool_through_sync_execute(registry: tr.ToolRegistry) -> None:
    assert registry.execute("fetch", {"url": "u"}) == "fetched u"
    assert registry.run({"name": "fetch", "arguments": {"url": "w"}}).content == "fetched w"


def test_async_tool_through_sync_execute_inside_a_loop_is_a_clear_error(registry: tr.ToolRegistry) -> None:
    async def main() -> None:
        with pytest.raises(tr.ToolRepairError, match="aexecute"):
            registry.execute("fetch", {"url": "u"})

    asyncio.run(main())


def test_async_tool_that_raises_through_sync_execute() -> None:
    async def broken(x: int) -> int:
        raise KeyError("missing key")

    registry = tr.ToolRegistry([broken])
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute("broken", {"x": 1})
    assert str(info.value) == "'missing key'"


def test_thread_safety() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=1000)
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for j in range(50):
                assert registry.execute("WebSearch", {"query": f"{i}-{j}"}) == f"results for {i}-{j} (5)"
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(registry.events) == 400
    assert all(e.kind == "name" for e in registry.events)


def test_turn_budget_is_shared_by_threads_of_one_turn() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=10, max_repeats=None)
    results: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            try:
                registry.execute("WebSearch", {"query": "x"})
                ok = True
            except tr.ToolExecutionError:
                ok = False
            with lock:
                results.append(ok)

    with registry.turn():
        # Threads run in a copy of the turn's context, so they share its budget.
        threads = [threading.Thread(target=contextvars.copy_context().run, args=(worker,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results.count(True) == 10
    assert results.count(False) == 30


def test_concurrent_turns_do_not_share_budgets() -> None:
    registry = tr.ToolRegistry([fetch], max_repairs=1)

    async def one_turn() -> list[bool]:
        got = []
        with registry.turn():
            for _ in range(3):
                out = await registry.arun({"name": "Fetch", "arguments": {"url": "u"}})
                got.append(out.ok)
                await asyncio.sleep(0)
        return got

    async def main() -> list[list[bool]]:
        return list(await asyncio.gather(*(one_turn() for _ in range(20))))

    assert asyncio.run(main()) == [[True, False, False]] * 20


def test_policy_sees_the_resolved_name() -> None:
    def delete_file(path: str) -> str:
        return "deleted"

    vetoed: list[tr.ToolCall] = []
    registry = tr.ToolRegistry([web_search, delete_file], deny={"delete_file"})
    for name in ("delete_file", "DeleteFile", "delete-file", "functions.delete_file"):
        with pytest.raises(tr.ToolExecutionError) as info:
            registry.execute(name, {"path": "/"})
        assert info.value.kind == "denied"
        assert str(info.value) == "Tool 'delete_file' is not allowed."
    allow_only = tr.ToolRegistry([web_search, delete_file], allow={"web_search"})
    assert allow_only.execute("WebSearch", {"query": "x"})
    with pytest.raises(tr.ToolExecutionError):
        allow_only.execute("DeleteFile", {"path": "/"})

    def before_call(call: tr.ToolCall) -> bool:
        vetoed.append(call)
        return call.dialect == "native"

    guarded = tr.ToolRegistry([delete_file], before_call=before_call)
    assert guarded.execute("DeleteFile", {"path": "/"}) == "deleted"
    salvaged = guarded.salvage('<tool_call>{"name": "delete_file", "arguments": {"path": "/"}}</tool_call>')
    refused = guarded.run(salvaged.calls[0])
    assert not refused.ok and refused.error.kind == "denied"
    assert [c.dialect for c in vetoed] == ["native", "hermes"]


def test_salvage_and_calls() -> None:
    text = 'Let me look.<tool_call>{"name": "WebSearch", "arguments": {"query": "x"}}</tool_call>'
    local = tr.ToolRegistry([web_search])
    result = local.salvage(text)
    assert [c.name for c in result.calls] == ["web_search"] and result.content == "Let me look."
    assert local.calls(text) == list(result.calls)
    native = [{"id": "1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}]
    assert local.calls(text, native) == native
    assert local.calls(None) == [] and local.calls("") == []
    hosted = tr.ToolRegistry([web_search], profile="hosted")
    assert hosted.salvage(text) == tr.SalvageResult((), text, ())
    assert hosted.calls(text) == []


def test_introspection(registry: tr.ToolRegistry) -> None:
    assert registry.names == ["web_search", "calculator", "fetch", "wiki_lookup", "get_item"]
    assert len(registry) == 5
    assert "fetch" in registry and "Fetch" not in registry
    assert registry.info("fetch").is_async


def test_repair_call_function(registry: tr.ToolRegistry) -> None:
    repaired = tr.repair_call({"name": "Web-Search", "arguments": '{"Query": "x", "limit": "2"}'}, [web_search])
    assert repaired.call == tr.ToolCall("web_search", {"query": "x", "limit": 2})
    assert repaired.error is None and bool(repaired)
    assert [e.kind for e in repaired.events] == ["name", "rename", "coerce"]
    failed = tr.repair_call(tr.ToolCall("nope", {}), registry)
    assert failed.call is None and isinstance(failed.error, tr.ToolExecutionError) and not failed
    with pytest.raises(TypeError):
        tr.repair_call(42, [web_search])  # type: ignore[arg-type]


def test_invalid_schema_fails_at_registration_naming_the_tool() -> None:
    with pytest.raises(ValueError, match="tool 'broken'"):
        tr.ToolRegistry([tr.ToolSpec("broken", {"type": "no-such-type"})])
