"""bind_check: genuine binding failures get the hint; everything else passes through."""

from __future__ import annotations

from typing import Any

import pytest

import toolrepair as tr


def web_search(query: str, limit: int = 5) -> str:
    if limit < 0:
        raise ValueError("limit must be >= 0")
    return query


async def fetch(url: str, timeout: float = 1.0) -> str:
    return url


class Calc:
    name = "calculator"

    def run(self, expression: str) -> str:
        raise TypeError("unsupported operand")


class Service:
    def lookup(self, key: str, *, default: str = "") -> str:
        return key


HINT_WS = "Expected parameters for 'web_search' — required: ['query'], optional: ['limit']."


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (web_search, {}, f"missing a required argument: 'query'. {HINT_WS}"),
        (web_search, {"query": "x", "q": "y"}, f"got an unexpected keyword argument 'q'. {HINT_WS}"),
        (web_search, {"q": "x"}, f"missing a required argument: 'query'. {HINT_WS}"),
        (
            fetch,
            {"link": "x"},
            "missing a required argument: 'url'. Expected parameters for 'fetch' — "
            "required: ['url'], optional: ['timeout'].",
        ),
        (
            Calc(),
            {"expr": "1"},
            "missing a required argument: 'expression'. Expected parameters for "
            "'calculator' — required: ['expression'], optional: [].",
        ),
        (
            Service().lookup,
            {"default": "d"},
            "missing a required argument: 'key'. Expected parameters for "
            "'lookup' — required: ['key'], optional: ['default'].",
        ),
    ],
)
def test_bind_failures(tool: Any, arguments: dict[str, Any], message: str) -> None:
    failure = tr.bind_check(tool, arguments)
    assert failure is not None
    assert failure.message == message


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (web_search, {"query": "x"}),
        (web_search, {"query": "x", "limit": -1}),  # binds; the body's ValueError is the tool's business
        (Calc(), {"expression": "1+1"}),  # binds; its own TypeError is not a binding failure
        (fetch, {"url": "u", "timeout": 2}),
        (max, {"whatever": 1}),  # no signature: fail closed, no made-up hint
    ],
)
def test_binds(tool: Any, arguments: dict[str, Any]) -> None:
    assert tr.bind_check(tool, arguments) is None


def test_expected_parameters_field() -> None:
    failure = tr.bind_check(web_search, {})
    assert failure is not None
    assert failure.tool == "web_search"
    assert failure.expected_parameters == {"required": ["query"], "optional": ["limit"]}


def test_schema_only_tool_is_checked_against_its_schema() -> None:
    spec = tr.ToolSpec(
        "lookup",
        {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
            "additionalProperties": False,
        },
    )
    assert tr.bind_check(spec, {"key": "k"}) is None
    missing = tr.bind_check(spec, {})
    assert missing is not None and missing.message.startswith("missing a required argument: 'key'.")
    extra = tr.bind_check(spec, {"key": "k", "other": 1})
    assert extra is not None and extra.message.startswith("got an unexpected keyword argument 'other'.")
    open_spec = tr.ToolSpec("open", {"type": "object", "properties": {"key": {"type": "string"}}})
    assert tr.bind_check(open_spec, {"other": 1}) is None


def test_tool_errors_pass_through_unchanged_with_cause() -> None:
    registry = tr.ToolRegistry([web_search, Calc()])
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute("web_search", {"query": "x", "limit": -1})
    assert str(info.value) == "limit must be >= 0"
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.expected_parameters is None
    with pytest.raises(tr.ToolExecutionError) as info2:
        registry.execute("calculator", {"expression": "1+'a'"})
    assert str(info2.value) == "unsupported operand"
    assert isinstance(info2.value.__cause__, TypeError)
    assert "Expected parameters" not in str(info2.value)
