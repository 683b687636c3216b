"""Tool introspection: every kind of tool, its name, schema, expected parameters and call style."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import pathlib
from typing import Annotated, Any, Literal, TypedDict

import pytest

import toolrepair as tr
from toolrepair._spec import ToolInfo, expected_from_schema, inspect_tool, iter_tools, schema_for_callable


def web_search(query: str, limit: int = 5) -> str:
    """Search the web.

    Longer description."""
    return query


async def fetch(url: str, *, timeout: float = 1.0) -> str:
    return url


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    year: int


class Greeter:
    """A callable instance."""

    def __call__(self, name: str, polite: bool = True) -> str:
        return name


class NamedGreeter(Greeter):
    name = "greet"


class CalcTool:
    """BaseTool-like: .name + .run."""

    name = "calculator"
    description = "Evaluate arithmetic."

    def run(self, expression: str, precision: int = 2) -> str:
        return expression


class ClassStyleTool:
    """BaseTool-like class style: .run(tool_input) over ._run(**kwargs)."""

    name = "lookup"

    def run(self, tool_input: dict[str, Any]) -> str:
        return self._run(**tool_input)

    def _run(self, key: str, default: str = "") -> str:
        return key


class Methods:
    def method(self, a: int, b: int = 1) -> int:
        return a + b


def kwargs_tool(a: int, **extra: Any) -> int:
    return a


def positional_only(a: int, /, b: int = 2) -> int:
    return a + b


@pytest.mark.parametrize(
    ("tool", "name", "expected", "is_async"),
    [
        (web_search, "web_search", {"required": ["query"], "optional": ["limit"]}, False),
        (fetch, "fetch", {"required": ["url"], "optional": ["timeout"]}, True),
        (Greeter(), "Greeter", {"required": ["name"], "optional": ["polite"]}, False),
        (NamedGreeter(), "greet", {"required": ["name"], "optional": ["polite"]}, False),
        (CalcTool(), "calculator", {"required": ["expression"], "optional": ["precision"]}, False),
        (ClassStyleTool(), "lookup", {"required": ["key"], "optional": ["default"]}, False),
        (Methods().method, "method", {"required": ["a"], "optional": ["b"]}, False),
        (kwargs_tool, "kwargs_tool", {"required": ["a"], "optional": []}, False),
        (functools.partial(web_search, limit=3), "partial", {"required": ["query"], "optional": ["limit"]}, False),
    ],
)
def test_inspect_tool(tool: Any, name: str, expected: dict[str, list[str]], is_async: bool) -> None:
    info = inspect_tool(tool)
    assert info.name == name
    assert info.expected == expected
    assert info.is_async is is_async


def test_name_attribute_wins_over_dunder_name() -> None:
    def f(x: int) -> int:
        return x

    f.name = "renamed"  # type: ignore[attr-defined]
    assert inspect_tool(f).name == "renamed"


def test_class_style_tool_dispatches_through_run_with_a_dict() -> None:
    info = inspect_tool(ClassStyleTool())
    assert info.call_style == "dict"
    assert tr.ToolRegistry([ClassStyleTool()]).execute("lookup", {"key": "k"}) == "k"


def test_toolspec_schema_only() -> None:
    spec = tr.ToolSpec(
        "web_search",
        {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    )
    info = inspect_tool(spec)
    assert info.target is None and info.call_style == "none"
    assert info.expected == {"required": ["query"], "optional": ["limit"]}


def test_toolspec_wrapping_a_callable_uses_its_signature() -> None:
    spec = tr.ToolSpec("search", {"type": "object", "properties": {"query": {"type": "string"}}}, fn=web_search)
    info = inspect_tool(spec)
    assert info.target is web_search
    assert info.expected == {"required": ["query"], "optional": ["limit"]}
    assert tr.ToolRegistry([spec]).execute("search", {"query": "q"}) == "q"


def test_description_is_first_paragraph() -> None:
    assert inspect_tool(web_search).description == "Search the web."
    assert inspect_tool(CalcTool()).description == "Evaluate arithmetic."


def test_not_a_tool() -> None:
    with pytest.raises(TypeError, match="not a tool"):
        inspect_tool(42)
    assert inspect_tool(inspect_tool(web_search)).name == "web_search"


def test_iter_tools_unpacks_containers() -> None:
    class Server:
        """An MCP-style container: iterating yields its tools."""

        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter([web_search, CalcTool()])

    tools = list(iter_tools([Server(), [fetch], Greeter()]))
    assert [inspect_tool(t).name for t in tools] == ["web_search", "calculator", "fetch", "Greeter"]
    registry = tr.ToolRegistry([Server()])
    assert registry.names == ["web_search", "calculator"]
    assert registry.execute("Calculator", {"expression": "1"}) == "1"


def test_duplicate_names_are_an_error() -> None:
    with pytest.raises(ValueError, match="two tools are named 'web_search'"):
        tr.ToolRegistry([web_search, web_search])


def t_primitives(a: int, b: float, c: str, d: bool, e: bytes, f: None) -> None: ...
def t_containers(a: list[int], b: dict[str, float], c: tuple[int, ...], d: set[str], e: list) -> None: ...  # type: ignore[type-arg]
def t_unions(a: int | None, b: int | str, c: int | None = None, d: Any = None) -> None: ...
def t_special(a: Literal["x", "y"], b: Color, c: dt.datetime, d: dt.date, e: pathlib.Path) -> None: ...
def t_structured(a: Point, b: Movie, c: Annotated[int, "how many"]) -> None: ...
def t_untyped(a, b=1) -> None: ...  # type: ignore[no-untyped-def]
def t_tuples(a: tuple[int, str], b: tuple[float], c: tuple) -> None: ...  # type: ignore[type-arg]


@pytest.mark.parametrize(
    ("fn", "props"),
    [
        (
            t_primitives,
            {
                "a": {"type": "integer"},
                "b": {"type": "number"},
                "c": {"type": "string"},
                "d": {"type": "boolean"},
                "e": {"type": "string"},
                "f": {"type": "null"},
            },
        ),
        (
            t_containers,
            {
                "a": {"type": "array", "items": {"type": "integer"}},
                "b": {"type": "object", "additionalProperties": {"type": "number"}},
                "c": {"type": "array", "items": {"type": "integer"}},
                "d": {"type": "array", "items": {"type": "string"}},
                "e": {"type": "array"},
            },
        ),
        (
            t_tuples,
            {
                "a": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "minItems": 2,
                    "maxItems": 2,
                },
                "b": {"type": "array", "prefixItems": [{"type": "number"}], "minItems": 1, "maxItems": 1},
                "c": {"type": "array"},
            },
        ),
        (
            t_unions,
            {
                "a": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "b": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "c": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "d": {},
            },
        ),
        (
            t_special,
            {
                "a": {"enum": ["x", "y"]},
                "b": {"enum": ["red", "blue"]},
                "c": {"type": "string", "format": "date-time"},
                "d": {"type": "string", "format": "date"},
                "e": {"type": "string"},
            },
        ),
        (
            t_structured,
            {
                "a": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                    "required": ["x"],
                },
                "b": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                    "required": ["title", "year"],
                },
                "c": {"type": "integer", "description": "how many"},
            },
        ),
        (t_untyped, {"a": {}, "b": {}}),
    ],
)
def test_schema_for_callable(fn: Any, props: dict[str, Any]) -> None:
    schema = schema_for_callable(fn)
    assert schema["type"] == "object"
    assert schema["properties"] == props
    assert schema["additionalProperties"] is False


def test_schema_allows_extra_keys_with_kwargs() -> None:
    assert "additionalProperties" not in schema_for_callable(kwargs_tool)


def test_schema_with_future_annotations() -> None:
    namespace: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\n"
        "def f(query: str, limit: int = 5, tags: list[str] | None = None) -> str:\n    return query\n",
        namespace,
    )
    schema = schema_for_callable(namespace["f"])
    assert schema["properties"]["query"] == {"type": "string"}
    assert schema["properties"]["limit"] == {"type": "integer"}
    assert schema["required"] == ["query"]


def test_unresolvable_annotation_falls_back_to_any() -> None:
    namespace: dict[str, Any] = {}
    exec("from __future__ import annotations\ndef f(a: Missing, b: int) -> None: ...\n", namespace)
    schema = schema_for_callable(namespace["f"])
    assert schema["properties"] == {"a": {}, "b": {}}


def test_builtin_without_signature_fails_closed() -> None:
    info = inspect_tool(max)  # no readable signature
    assert info.signature is None
    assert info.expected is None
    assert tr.bind_check(max, {"anything": 1}) is None


def test_positional_only_parameters_are_passed_positionally() -> None:
    registry = tr.ToolRegistry([positional_only])
    assert registry.execute("positional_only", {"a": 1, "b": 5}) == 6


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({}, {"required": [], "optional": []}),
        ({"properties": {"a": {}, "b": {}}, "required": ["b"]}, {"required": ["b"], "optional": ["a"]}),
        ({"properties": {"a": {}}, "required": ["a", "z"]}, {"required": ["a", "z"], "optional": []}),
        ({"properties": "junk", "required": "junk"}, {"required": [], "optional": []}),
    ],
)
def test_expected_from_schema(schema: dict[str, Any], expected: dict[str, list[str]]) -> None:
    assert expected_from_schema(schema) == expected


def test_pydantic_style_args_schema() -> None:
    class Model:
        @staticmethod
        def model_json_schema() -> dict[str, Any]:
            return {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    class Tool:
        name = "search"
        args_schema = Model

        def invoke(self, arguments: dict[str, Any]) -> str:
            return str(arguments["q"])

    info = inspect_tool(Tool())
    assert isinstance(info, ToolInfo)
    assert info.call_style == "dict"
    assert info.schema["required"] == ["q"]
    assert tr.ToolRegistry([Tool()]).execute("Search", {"q": "x"}) == "x"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"p": [1, "a"]}, "(1, 'a')"),
        ({"p": ["1", "a"]}, "(1, 'a')"),  # each item coerced to its own schema
        ({"p": [1, "a", 3]}, "too long"),
        ({"p": [1]}, "too short"),
        ({"p": [1, 2]}, "(1, '2')"),  # a number for a string item keeps its spelling
        ({"p": [1, [2]]}, "Argument 'p[1]' must be a string"),
    ],
)
def test_fixed_tuple_items_each_have_their_schema(arguments: dict[str, object], expected: str) -> None:
    def pair(p: tuple[int, str]) -> str:
        return repr(tuple(p))

    outcome = tr.ToolRegistry([pair]).run(tr.ToolCall("pair", arguments))
    assert expected in outcome.content
