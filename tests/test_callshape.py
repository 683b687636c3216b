"""Tables for the one reader of call shapes (native calls, logs and salvaged JSON alike)."""

from __future__ import annotations

from typing import Any

import pytest

import toolrepair as tr
from toolrepair._callshape import CALL_KEYS, CallShape, call_parts, read_call_shape
from toolrepair._salvage._json import call_from_object

SHAPES: list[tuple[dict[str, Any], CallShape]] = [
    ({"name": "f", "arguments": {"q": 1}}, CallShape("f", {"q": 1}, "arguments", None, False)),
    ({"name": "f", "parameters": "{}"}, CallShape("f", "{}", "parameters", None, False)),
    ({"name": "f", "args": {}, "id": "c1"}, CallShape("f", {}, "args", "c1", False)),
    ({"name": "f", "input": {}, "tool_call_id": "t"}, CallShape("f", {}, "input", "t", False)),
    ({"tool": "f", "arguments": {}}, CallShape("f", {}, "arguments", None, False)),
    ({"tool_name": "f", "tool_input": {"a": 1}}, CallShape("f", {"a": 1}, "tool_input", None, False)),
    ({"function_name": "f", "arguments": {}}, CallShape("f", {}, "arguments", None, False)),
    ({"name": "f"}, CallShape("f", None, None, None, False)),
    ({"name": 3, "arguments": {}}, CallShape(None, {}, "arguments", None, False)),
    (
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        CallShape("f", "{}", "arguments", "c", True),
    ),
    # a "function" key that names no call is data: the outer keys are read
    ({"name": "f", "arguments": {}, "function": {"description": "x"}}, CallShape("f", {}, "arguments", None, False)),
    ({"name": "f", "arguments": {"a": 1}, "parameters": {"b": 2}}, CallShape("f", {"a": 1}, "arguments", None, False)),
    ({"id": 5, "name": "f", "arguments": {}}, CallShape("f", {}, "arguments", None, False)),
    # the common shape with its id under another key (salvage once read only "id" here)
    ({"name": "f", "arguments": {"q": 1}, "tool_call_id": "t"}, CallShape("f", {"q": 1}, "arguments", "t", False)),
    # LlamaIndex's ToolSelection, as its integration reads additional_kwargs["tool_calls"]
    (
        {"tool_id": "t1", "tool_name": "f", "tool_kwargs": {"q": 1}},
        CallShape("f", {"q": 1}, "tool_kwargs", "t1", False),
    ),
    ({"id": "a", "tool_id": "b", "name": "f"}, CallShape("f", None, None, "a", False)),
]


@pytest.mark.parametrize(("obj", "shape"), SHAPES)
def test_read_call_shape(obj: dict[str, Any], shape: CallShape) -> None:
    assert read_call_shape(obj) == shape


def test_every_row_has_a_distinct_name_key() -> None:
    names = [row.name for row in CALL_KEYS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("obj", "shape"), SHAPES)
def test_native_repair_and_salvage_read_the_same_name(obj: dict[str, Any], shape: CallShape) -> None:
    assert call_parts(obj)[0] == (shape.name or "")
    salvaged = call_from_object(obj, require_arguments=False)
    assert (salvaged.name if salvaged is not None else None) == shape.name
    if salvaged is not None:  # and the same id and (object) arguments
        assert salvaged.id == shape.id
        if isinstance(shape.arguments, dict):
            assert salvaged.arguments == shape.arguments


def test_call_parts_of_a_toolcall_and_of_junk() -> None:
    call = tr.ToolCall("f", {"a": 1}, "i", "hermes", (1, 2))
    assert call_parts(call) == ("f", {"a": 1}, "i", "hermes", (1, 2))
    with pytest.raises(TypeError, match="a call is a ToolCall or a mapping, not list"):
        call_parts([1])  # type: ignore[arg-type]


def tool(q: int) -> str:
    return f"q={q}"


@pytest.mark.parametrize(
    "obj",
    [
        {"tool_name": "tool", "tool_input": {"q": 1}},
        {"tool": "tool", "args": '{"q": 1}'},
        {"id": "c", "function": {"name": "tool", "arguments": '{"q": 1}'}},
    ],
)
def test_every_entry_point_reads_the_table(obj: dict[str, Any]) -> None:
    registry = tr.ToolRegistry([tool])
    assert tr.repair_call(obj, [tool]).call == tr.ToolCall("tool", {"q": 1}, obj.get("id"))
    outcome = registry.run(obj)  # type: ignore[arg-type]
    assert outcome.ok and outcome.value == "q=1" and outcome.call.name == "tool"
    report = tr.audit_records([{"tool_calls": [obj]}], tools=[tool])
    assert (report.native_calls, report.clean_calls, report.unrepairable_calls) == (1, 1, 0)
    assert report == tr.audit_records([{"tool_calls": [{"name": "tool", "arguments": {"q": 1}}]}], tools=[tool])


@pytest.mark.parametrize("obj", [[{"name": "f", "arguments": {}}], "f", 3, None])
def test_salvage_reads_no_call_from_a_non_mapping(obj: Any) -> None:
    assert call_from_object(obj, require_arguments=False) is None
