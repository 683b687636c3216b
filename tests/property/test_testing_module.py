"""toolrepair.testing: its strategies keep their promises, and check_dialect passes good
dialects and fails broken ones with a readable, shrunk example."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage import Found, NeedMore, RawCall, ReadContext
from toolrepair._salvage._registry import by_name
from toolrepair.testing import (
    arguments,
    check_dialect,
    end_markers,
    opening_markers,
    prose,
    reasoning_markers,
    replies,
    tool_calls,
    tool_names,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The passing checks' budget: the profile's (conftest), 25 in the README's command, 60 under ci-deep.
MAX_EXAMPLES = min(settings().max_examples, 100)


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("custom_dialect_example", ROOT / "examples" / "custom_dialect.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


EXAMPLE = _load_example()


def hermes(call: tr.ToolCall) -> str:
    return "<tool_call>" + json.dumps({"name": call.name, "arguments": call.arguments}) + "</tool_call>"


# --- import without hypothesis ---------------------------------------------------------


def test_import_needs_no_hypothesis_and_use_names_the_extra() -> None:
    # A meta-path finder that refuses hypothesis stands in for an environment without it.
    script = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "hypothesis" or name.startswith("hypothesis."):
                    raise ImportError("No module named 'hypothesis'")
        sys.meta_path.insert(0, Block())
        import toolrepair.testing as t
        assert "hypothesis" not in sys.modules
        for use in (t.tool_names, t.arguments, t.prose, lambda: t.check_dialect(None, str)):
            try:
                use()
            except ImportError as e:
                assert "pip install 'toolrepair[test]'" in str(e), e
            else:
                raise SystemExit("no ImportError")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --- strategies ------------------------------------------------------------------------


def test_end_markers_cover_the_builtin_dialects() -> None:
    ends = set(end_markers())
    for m in (
        "</tool_call>",
        "</function>",
        "</parameter>",
        "<|call|>",
        "<｜tool▁call▁end｜>",
        "<tool_call|>",
        "<end_function_call>",
        "<|tool_call_end|>",
        "</arg_value>",
        "<|end_action|>",
        "</think>",
        "[/think]",
    ):
        assert m in ends, m
    assert "<tool_call>" in opening_markers()
    assert not ends & set(opening_markers())


@settings(deadline=None)
@given(prose())
def test_prose_salvages_to_no_call_under_every_builtin_dialect(text: str) -> None:
    assert "```" not in text and "~~~" not in text
    assert not any(m in text.lower() for m in reasoning_markers())
    for name in tr.DIALECTS:
        assert tr.salvage_text(text, tr.ANY_TOOL, dialects=[name]).calls == (), name


def test_prose_really_holds_markers_and_braces() -> None:
    seen: set[str] = set()

    @settings(max_examples=400, deadline=None, database=None)
    @given(prose())
    def collect(text: str) -> None:
        seen.update(c for c in "{}`" if c in text)
        seen.update("marker" for m in opening_markers() if len(m) > 2 and m in text.lower())

    collect()
    assert seen == {"{", "}", "`", "marker"}


def test_arguments_carry_end_markers_and_awkward_strings() -> None:
    seen: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(arguments())
    def collect(args: dict[str, Any]) -> None:
        blob = json.dumps(args, ensure_ascii=False)
        seen.update(m for m in ("</tool_call>", '\\"', "\\\\", "\\n", "{") if m in blob)
        seen.update("non-ascii" for c in blob if ord(c) > 127)
        seen.update("end marker" for m in end_markers() if m in blob)
        json.loads(blob)  # JSON-compatible

    collect()
    assert {'\\"', "\\\\", "\\n", "non-ascii", "end marker"} <= seen


@settings(deadline=None)
@given(tool_calls())
def test_tool_calls_are_named_calls_with_json_arguments(call: tr.ToolCall) -> None:
    assert isinstance(call, tr.ToolCall) and call.name.isidentifier()
    assert json.loads(json.dumps(call.arguments)) == call.arguments


@settings(deadline=None)
@given(replies(hermes, calls=tool_calls(tool_names(), arguments())))
def test_replies_round_trip_through_hermes(reply: tuple[str, list[tr.ToolCall]]) -> None:
    text, calls = reply
    got = tr.salvage_text(text, [c.name for c in calls], dialects=["hermes"]).calls
    assert [(c.name, c.arguments) for c in got] == [(c.name, c.arguments) for c in calls]


# --- check_dialect passes ----------------------------------------------------------------


def test_check_dialect_passes_the_documented_tag_dialect() -> None:
    check_dialect(EXAMPLE.AT_CALL, EXAMPLE.render_at_call, max_examples=MAX_EXAMPLES)


def test_check_dialect_passes_the_documented_protocol_dialect() -> None:
    check_dialect(EXAMPLE.AtTool(), EXAMPLE.render_at_tool, max_examples=MAX_EXAMPLES)


# --- check_dialect fails, readably ---------------------------------------------------------


def test_a_renderer_writing_another_name_fails_the_round_trip() -> None:
    def wrong_name(call: tr.ToolCall) -> str:
        return hermes(tr.ToolCall(call.name + "_v2", call.arguments))

    with pytest.raises(
        AssertionError,
        match=r"check_dialect\(hermes\): round trip failed: (?s:.*)(Falsifying example|Failing test case)"
        r"(?s:.*)call=ToolCall\(",
    ):
        check_dialect(by_name("hermes"), wrong_name, max_examples=50)


def test_a_renderer_cutting_the_payload_fails_the_round_trip() -> None:
    def cut(call: tr.ToolCall) -> str:  # the closing brace and marker lost, garbage after
        return hermes(call)[: -len("}</tool_call>")] + " ]]"

    with pytest.raises(AssertionError, match=r"check_dialect\(hermes\): round trip failed: .*salvaged to \[\]"):
        check_dialect(by_name("hermes"), cut, max_examples=50)


@dataclass(frozen=True)
class NestedNames:
    """Broken: reads every object with a ``name`` in the payload as a call, so an argument
    ``{"name": "rm"}`` becomes a call to ``rm`` whenever ``rm`` is offered."""

    name: str = "nested_names"
    markers: tuple[str, ...] = ("@@call",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        found = EXAMPLE.AT_CALL.read(text, start, marker_end, ctx)
        if not isinstance(found, Found) or not found.calls:
            return found
        extra: list[RawCall] = []
        stack: list[Any] = [found.calls[0].arguments]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                if isinstance(value.get("name"), str):
                    extra.append(RawCall(value["name"], {}))
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
        return Found(found.end, found.calls + tuple(extra))


def test_a_dialect_taking_names_from_elsewhere_fails_the_allowlist() -> None:
    # The round trip offers only the call's own name, so the extra calls are rejected there;
    # the allowlist property offers the call's own strings and sees one come back.
    with pytest.raises(
        AssertionError,
        match=r"check_dialect\(nested_names\): allowlist failed: .*offered"
        r"(?s:.*)(Falsifying example|Failing test case)",
    ):
        check_dialect(
            NestedNames(),
            EXAMPLE.render_at_call,
            max_examples=200,
            names=st.just("get_weather"),
            arguments=st.fixed_dictionaries({"q": st.text()}, optional={"name": st.just("rm")}),
        )


@dataclass(frozen=True)
class Fragile:
    """Broken: indexes past the end of the text when the marker ends it."""

    name: str = "fragile"
    markers: tuple[str, ...] = ("@@call",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        if text[marker_end] == "!":  # IndexError on "...@@call"
            return None
        return EXAMPLE.AT_CALL.read(text, start, marker_end, ctx)


def test_a_dialect_raising_on_junk_fails_robustness() -> None:
    with pytest.raises(
        AssertionError,
        match=r"check_dialect\(fragile\): robustness failed: IndexError(?s:.*)(Falsifying example|Falsifying explicit example|Failing test case|Failing explicit example)",
    ):
        check_dialect(Fragile(), EXAMPLE.render_at_call, max_examples=100)


@dataclass(frozen=True)
class Quadratic:
    """Broken: a hand-written scanner looks for its closing marker through the whole rest of
    the text, from every opening marker."""

    name: str = "quadratic"
    markers: tuple[str, ...] = ("@@call",)

    def read(self, text: str, start: int, marker_end: int, ctx: ReadContext) -> Found | NeedMore | None:
        for i in range(marker_end, len(text), 32):  # to the end of the text, every time
            if text.startswith("@@end", i):
                break
        return EXAMPLE.AT_CALL.read(text, start, marker_end, ctx)


def test_a_quadratic_reader_fails_linear_cost() -> None:
    with pytest.raises(
        AssertionError,
        match=r"check_dialect\(quadratic\): linear cost failed: '@@call' \* \d+: calls made \d+ against \d+ for half",
    ):
        check_dialect(Quadratic(), EXAMPLE.render_at_call, max_examples=10)
