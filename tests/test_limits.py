"""Tables for `Limits`: one value, one default each, read by every entry point."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest

import toolrepair as tr
from toolrepair import cli
from toolrepair._args import decode_arguments
from toolrepair._limits import DEFAULT_LIMITS, limits_with

DEFAULTS = {
    "max_input_chars": 32_000_000,
    "max_call_chars": 1_000_000,
    "max_depth": 64,
    "max_name_chars": 256,
    "max_argument_chars": 10_000_000,
}


def test_defaults_are_documented_values() -> None:
    assert dataclasses.asdict(tr.Limits()) == DEFAULTS
    assert tr.Limits() == DEFAULT_LIMITS


def test_limits_is_a_frozen_slotted_value() -> None:
    limits = tr.Limits(max_depth=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_depth = 4  # type: ignore[misc]
    assert not hasattr(limits, "__dict__")
    assert limits == tr.Limits(max_depth=3) and hash(limits) == hash(tr.Limits(max_depth=3))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_depth", 0),
        ("max_input_chars", -1),
        ("max_call_chars", 1.5),
        ("max_name_chars", "9"),
        ("max_argument_chars", True),
    ],
)
def test_invalid_fields_are_refused(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"Limits.{field} must be an int"):
        tr.Limits(**{field: value})


@pytest.mark.parametrize(
    ("base", "overrides", "expected"),
    [
        (None, {}, DEFAULT_LIMITS),
        (None, {"max_depth": None}, DEFAULT_LIMITS),
        (None, {"max_depth": 5}, tr.Limits(max_depth=5)),
        (tr.Limits(max_depth=5), {"max_call_chars": 9}, tr.Limits(max_depth=5, max_call_chars=9)),
        (tr.Limits(max_depth=5), {"max_depth": 7}, tr.Limits(max_depth=7)),  # the keyword wins
    ],
)
def test_keywords_override_the_value(base: tr.Limits | None, overrides: dict[str, Any], expected: tr.Limits) -> None:
    assert limits_with(base, **overrides) == expected


def test_limits_must_be_a_limits() -> None:
    with pytest.raises(TypeError, match="limits must be a Limits"):
        tr.salvage_text("x", tr.ANY_TOOL, limits={"max_depth": 3})  # type: ignore[arg-type]


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def hermes(arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": "sink", "arguments": arguments}) + "</tool_call>"


def sink(**kwargs: Any) -> str:
    return "ok"


@pytest.mark.parametrize("limits", [None, tr.Limits(max_depth=10)])
def test_a_call_has_the_same_depth_limit_however_it_arrived(limits: tr.Limits | None) -> None:
    depth = (limits or DEFAULT_LIMITS).max_depth
    registry = tr.ToolRegistry([sink], limits=limits)
    # One bound for both paths. (Salvage applies it to the payload it reads, so a wrapper
    # object around the arguments, as Hermes has, counts as a level there.)
    for arguments_depth, accepted in ((depth - 1, True), (depth + 1, False)):
        arguments = nested(arguments_depth)
        native = registry.run(tr.ToolCall("sink", json.dumps(arguments)))  # type: ignore[arg-type]
        salvaged = registry.salvage(hermes(arguments))
        assert native.ok is accepted
        assert bool(salvaged.calls) is accepted
        if not accepted:
            assert salvaged.rejected[0].reason == "too-deep"
            assert isinstance(native.error, tr.ToolExecutionError)
            assert "nest deeper" in str(native.error)


def test_input_too_large_is_raised_by_argument_decoding() -> None:
    with pytest.raises(tr.InputTooLargeError) as info:
        decode_arguments('{"a": "xxxxx"}', limits=tr.Limits(max_argument_chars=13))
    error = info.value
    assert (error.size, error.limit, error.reason) == (14, 13, "too-large")
    assert isinstance(error, tr.ArgumentError) and isinstance(error, ValueError)
    with pytest.raises(tr.InputTooLargeError) as info:
        decode_arguments(b"x" * 60, max_chars=13)
    assert (info.value.size, info.value.limit) == (60, 13)


def test_the_registry_reports_input_too_large_as_the_cause() -> None:
    registry = tr.ToolRegistry([sink], limits=tr.Limits(max_argument_chars=10))
    outcome = registry.run(tr.ToolCall("sink", '{"text": "more than ten"}'))  # type: ignore[arg-type]
    assert not outcome.ok
    assert isinstance(outcome.error, tr.ToolExecutionError)
    assert isinstance(outcome.error.__cause__, tr.InputTooLargeError)
    assert outcome.error.__cause__.limit == 10


def test_salvage_never_raises_for_size_it_rejects() -> None:
    text = hermes({"q": "x"})
    result = tr.salvage_text(text, ["sink"], limits=tr.Limits(max_input_chars=len(text) - 1))
    assert [r.reason for r in result.rejected] == ["input-too-large"] and result.content == text


@pytest.mark.parametrize(
    ("limits", "accepted"),
    [(None, True), (tr.Limits(max_call_chars=20), False), (tr.Limits(max_input_chars=20), False)],
)
def test_registry_salvage_and_stream_read_the_limits(limits: tr.Limits | None, accepted: bool) -> None:
    text = hermes({"q": "x"})
    registry = tr.ToolRegistry([sink], limits=limits)
    assert bool(registry.salvage(text).calls) is accepted
    stream = registry.stream()
    events = stream.feed(text) + stream.close()
    assert any(isinstance(e, tr.ToolCallReady) for e in events) is accepted


def test_max_input_chars_keyword_still_overrides() -> None:
    registry = tr.ToolRegistry([sink], max_input_chars=5, limits=tr.Limits(max_depth=3))
    assert registry.limits == tr.Limits(max_input_chars=5, max_depth=3)
    assert registry.max_input_chars == 5


@pytest.mark.parametrize("dialect", ["function_tag", "mistral"])
def test_name_length_is_read_from_the_limits(dialect: str) -> None:
    name = "t" * 40
    text = f"<function={name}>{{}}</function>" if dialect == "function_tag" else f"[TOOL_CALLS]{name}[ARGS]{{}}"
    assert tr.salvage_text(text, [name], dialects=[dialect]).calls
    assert not tr.salvage_text(text, [name], dialects=[dialect], limits=tr.Limits(max_name_chars=39)).calls
    stream = tr.StreamSalvager([name], dialects=[dialect], limits=tr.Limits(max_name_chars=39))
    assert not any(isinstance(e, tr.ToolCallReady) for e in stream.feed(text) + stream.close())


def test_bare_json_nesting_bound_follows_max_depth() -> None:
    text = json.dumps({"name": "sink", "arguments": nested(6)})
    assert tr.salvage_text(text, ["sink"], dialects=["json"]).calls
    assert not tr.salvage_text(text, ["sink"], dialects=["json"], max_depth=4).calls


@pytest.mark.parametrize(
    ("flags", "calls"),
    [([], 1), (["--max-depth", "2"], 0), (["--max-call-chars", "20"], 0)],
)
def test_cli_reads_the_limits(flags: list[str], calls: int) -> None:
    out = io.StringIO()
    text = hermes({"q": {"deep": [1]}})
    assert cli.main(["salvage", "-", "--tools", "sink", *flags], stdin=io.StringIO(text), stdout=out) == 0
    assert len(json.loads(out.getvalue())["calls"]) == calls


def test_cli_input_limit_is_the_limits(capsys: pytest.CaptureFixture[str]) -> None:
    text = hermes({"q": "x"})
    status = cli.main(
        ["salvage", "-", "--tools", "sink", "--max-input-chars", "20"], stdin=io.StringIO(text), stdout=io.StringIO()
    )
    assert status == 1
    assert "longer than salvage's input limit of 20 characters" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_cli_refuses_bad_limits(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["salvage", "-", "--any", "--max-depth", value], stdin=io.StringIO(""), stdout=io.StringIO())
    assert status == 2
    assert "expected a whole number >= 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("deltas", "model"),
    [
        (["a" * 8, "b" * 8, "c" * 8], None),  # held for a lone reasoning close, then over the bound
        (["a" * 8, "b" * 8, "c" * 8], "qwen3"),  # released as it comes, then over the bound
        (["<tool_call>{", '"name": "f"', "}</tool_call> and more"], None),  # a candidate cut by the bound
    ],
)
def test_a_stream_past_its_input_bound_has_settled_all_it_was_fed(deltas: list[str], model: str | None) -> None:
    # Past max_input_chars the rest passes through as text, so all of it is decided: a caller
    # that passes text on up to `settled` (the proxy's --reasoning inline) loses none of it.
    salvager = tr.StreamSalvager(["f"], max_input_chars=10, model=model)
    fed = 0
    for delta in deltas:
        salvager.feed(delta)
        fed += len(delta)
        if fed > 10:
            assert salvager.settled == fed
    salvager.close()
    assert salvager.settled == fed
