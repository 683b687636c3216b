"""No exception escapes: every public entry point returns a value or raises a ToolRepairError
(for salvage and serialize_result: returns a value, always), on any input."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._args import decode_arguments

# Pieces of every dialect's syntax, masks and the characters that break naive parsers.
MARKERS = [
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "</function>",
    "<function_calls>",
    "<invoke name=",
    "<parameter=",
    "</parameter>",
    "<arg_key>",
    "<arg_value>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    ":",
    ",",
    "=",
    "\\",
    "\n",
    " ",
    "```",
    "~~~",
    "<think>",
    "</think>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "functools[",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|channel|>",
    "to=functions.",
    "<|message|>",
    "<|call|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "[f(",
    "a=",
    "x=1",
    "lambda",
    "__import__",
    "open(",
    '"name"',
    '"arguments"',
    '"parameters"',
    "null",
    "true",
    "NaN",
    "1e999",
    "\ud800",
    "\udfff",
    "\x00",
    "\u200b",
    "ｔｏｏｌ",
    "web_search",
    "WebSearch",
    "functions.web_search",
    "0x" + "f" * 4000,
    "9" * 4400,
    "1.10",
    "1e3",
    "12345678901234567.0",
    "\\x1f",
    "\\U000e0001",
    "\\N{",
    "[f(a=1, a=2)]",
    '""value"',
]
HOSTILE = st.lists(st.sampled_from(MARKERS) | st.text(max_size=8), max_size=60).map("".join)
TEXT = st.text() | HOSTILE


def sink(a: Any = None, b: str = "", n: int = 0) -> str:
    return "ok"


def web_search(query: str, limit: int = 5) -> str:
    return query


REGISTRY = tr.ToolRegistry([sink, web_search], max_repairs=10)
NAMES = st.sampled_from(["sink", "Sink", "web_search", "WebSearch", "functions.sink", "", "nope"]) | st.text(
    max_size=12
)
# Built, not sampled: hypothesis would print the strategy's ints, past the int-string limit.
BIG_INTS = st.sampled_from([5000, -5000, 6021]).map(lambda e: 10**e if e > 0 else -(10**-e))
JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10) | BIG_INTS
JSON_ANY = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
ARGUMENTS = TEXT | st.binary(max_size=200) | JSON_ANY | st.dictionaries(st.text(max_size=6), JSON_ANY, max_size=4)


class Hostile:
    """A tool result whose every conversion raises."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class Liar:
    """A tool result that claims to be a mapping and a pydantic model and lies about both."""

    def keys(self) -> list[str]:
        raise RuntimeError("no keys")

    def model_dump(self, **kwargs: Any) -> Any:
        return self

    def __str__(self) -> str:
        return 42  # type: ignore[return-value]  # noqa: PLE0307


class HostileStr(str):
    """A str whose methods all raise."""

    def __len__(self) -> int:
        raise RuntimeError("len")

    def __getitem__(self, key: Any) -> str:
        raise RuntimeError("getitem")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("encode")

    def rstrip(self, *args: Any) -> str:
        raise RuntimeError("rstrip")


class Unprintable(Exception):
    """An exception whose message cannot be read."""

    def __init__(self, how: int) -> None:
        super().__init__()
        self.how = how

    def __str__(self) -> str:
        if self.how == 0:
            raise RuntimeError("no message")
        if self.how == 1:
            return 42  # type: ignore[return-value]  # noqa: PLE0307
        return HostileStr("hostile message")


def raiser(how: int = 0) -> None:
    raise Unprintable(how)


async def araiser(how: int = 0) -> None:
    raise Unprintable(how)


def echo(value: Any = None) -> Any:
    return value


RAISING = tr.ToolRegistry([raiser, araiser, echo], max_repairs=10)

RESULTS = st.recursive(
    JSON_LEAF
    | st.binary(max_size=20)
    | st.builds(Hostile)
    | st.builds(Liar)
    | st.just(math.nan)
    | st.builds(HostileStr, st.text(max_size=20))
    | st.sets(st.integers(), max_size=3)
    | st.complex_numbers(allow_nan=True),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3)
        | st.builds(lambda v: {"error": v}, inner)
    ),
    max_leaves=10,
)
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def documented(fn: Callable[[], object]) -> object:
    try:
        return fn()
    except tr.ToolRepairError as exc:
        return exc


@SETTINGS
@given(TEXT, st.booleans(), st.booleans(), st.sampled_from([tr.ANY_TOOL, ["sink", "web_search"], [], ["f"]]))
def test_salvage_text_always_returns(text: str, fences: bool, reasoning: bool, allowed: Any) -> None:
    result = tr.salvage_text(text, allowed, mask_fences=fences, mask_reasoning=reasoning)
    assert isinstance(result, tr.SalvageResult)
    for call in result.calls:
        assert isinstance(call.arguments, dict)


@SETTINGS
@given(TEXT, st.lists(st.integers(0, 200), max_size=12))
def test_stream_salvager_always_returns(text: str, cuts: list[int]) -> None:
    stream = tr.StreamSalvager(["sink", "web_search"])
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    events: list[object] = []
    for a, b in itertools.pairwise(points):
        events.extend(stream.feed(text[a:b]))
    events.extend(stream.close())
    assert all(isinstance(e, (tr.TextDelta, tr.ReasoningDelta, tr.ToolCallReady)) for e in events)


@SETTINGS
@given(ARGUMENTS)
def test_decode_arguments_returns_or_raises_argument_error(raw: Any) -> None:
    try:
        value, events = decode_arguments(raw)
    except tr.ArgumentError as exc:
        assert exc.reason
    else:
        assert isinstance(value, dict) and isinstance(events, tuple)


@SETTINGS
@given(NAMES, ARGUMENTS)
def test_repair_and_dispatch_return_or_raise_documented_errors(name: str, arguments: Any) -> None:
    call = {"name": name, "arguments": arguments}
    repair = tr.repair_call(call, REGISTRY)
    assert (repair.call is None) != (repair.error is None)
    documented(lambda: REGISTRY.execute(name, arguments))
    outcome = REGISTRY.run(call)
    assert isinstance(outcome.content, str)
    assert isinstance(asyncio.run(REGISTRY.arun(call)).content, str)
    documented(lambda: tr.repair_call({"function": {"name": name, "arguments": arguments}}, [sink]))


@SETTINGS
@given(RESULTS, st.none() | st.integers(0, 50))
def test_serialize_result_never_raises(value: Any, max_chars: int | None) -> None:
    assert isinstance(tr.serialize_result(value, max_chars=max_chars), str)


@SETTINGS
@given(TEXT)
def test_registry_text_paths_always_return(text: str) -> None:
    registry = tr.ToolRegistry([sink, web_search])
    assert isinstance(registry.salvage(text), tr.SalvageResult)
    for call in registry.calls(text):
        assert isinstance(registry.run(call).content, str)


@SETTINGS
@given(st.sampled_from(["raiser", "araiser", "Raiser"]), st.integers(0, 2) | st.text(max_size=3))
def test_unprintable_tool_exceptions_never_escape(name: str, how: Any) -> None:
    call = {"name": name, "arguments": {"how": how}}
    outcome = RAISING.run(call)
    assert type(outcome.content) is str and not outcome.ok
    assert type(asyncio.run(RAISING.arun(call)).content) is str
    error = documented(lambda: RAISING.execute(name, {"how": how}))
    assert isinstance(error, tr.ToolExecutionError) and type(str(error)) is str


@SETTINGS
@given(RESULTS, JSON_ANY)
def test_any_result_runs_and_any_json_arguments_write(value: Any, arguments: Any) -> None:
    outcome = RAISING.run({"name": "echo", "arguments": {"value": value}})
    assert type(outcome.content) is str
    text = tr.ToolCall("echo", {"value": arguments}).to_openai()["function"]["arguments"]
    assert isinstance(text, str)


@SETTINGS
@given(st.text(max_size=40), st.none() | st.integers(0, 50))
def test_str_subclasses_are_read_as_their_text(text: str, max_chars: int | None) -> None:
    hostile = HostileStr(text)
    assert tr.serialize_result(hostile, max_chars=max_chars) == tr.serialize_result(text, max_chars=max_chars)
    registry = tr.ToolRegistry([sink])
    registry.mark_untrusted(hostile)
    assert registry.salvage(text).rejected[0].reason == "untrusted"
    assert isinstance(tr.salvage_text(hostile, ["sink"]), tr.SalvageResult)
