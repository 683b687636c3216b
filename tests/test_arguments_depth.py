"""One depth limit for a call's arguments, however the call arrived.

`Limits.max_depth` counts the levels of the ARGUMENTS value (the top object is 1): a native
call given as an object or as JSON text, and a call salvaged from text in any dialect, are
accepted at exactly `max_depth` levels and refused at `max_depth + 1`. The wrapper a dialect
puts around the arguments (Hermes's `{"name", "arguments"}`, a list of calls, OpenAI's
`{"tool_calls": [{"function": ...}]}`) adds no level.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._args import check_nesting, decode_arguments


def f(**kwargs: Any) -> str:
    """Accepts anything."""
    return "ok"


def nested(depth: int, lists: tuple[bool, ...] = ()) -> dict[str, Any]:
    """Arguments exactly ``depth`` levels deep; level k (k >= 2) is a list when ``lists[k-2]``."""
    value: Any = 1
    for level in range(depth, 1, -1):
        value = [value] if level - 2 < len(lists) and lists[level - 2] else {"a": value}
    return {"a": value} if depth > 1 else {"x": value}


def _salvaged(text: str, limits: tr.Limits, dialect: str) -> bool | None:
    """True: one call accepted in ``dialect``; False: refused (as too-deep, if reported); None: else."""
    result = tr.salvage_text(text, ["f"], limits=limits)
    if [c.dialect for c in result.calls] == [dialect] and not result.rejected:
        return True
    # Far past the limit, the payload's reading bound refuses it first: an inner object may then
    # be refused again by another dialect, and bare JSON that deep is text (no Rejection).
    if not result.calls and {r.reason for r in result.rejected} <= {"too-deep"}:
        return False
    return None


def _streamed(text: str, limits: tr.Limits) -> bool:
    stream = tr.StreamSalvager(["f"], limits=limits)
    events = [e for i in range(0, len(text), 7) for e in stream.feed(text[i : i + 7])] + stream.close()
    return any(isinstance(e, tr.ToolCallReady) for e in events)


def _native(arguments: Any, limits: tr.Limits) -> bool:
    repair = tr.ToolRegistry([f], limits=limits).repair({"name": "f", "arguments": arguments})
    if repair.error is not None:
        assert repair.error.kind == "arguments" and "nest deeper" in str(repair.error)
    return repair.error is None


def _call(args: dict[str, Any]) -> str:
    return json.dumps({"name": "f", "arguments": args})


def _pythonic(args: dict[str, Any]) -> str:
    return "[f(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) + ")]"


# (dialect, the reply carrying arguments `args`): wrappers of 0 to 4 levels (`WRAPPER_DEPTH`).
SALVAGE_PATHS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("hermes", lambda args: f"<tool_call>{_call(args)}</tool_call>"),
    ("function_tag", lambda args: f"<function=f>{json.dumps(args)}</function>"),
    ("pythonic", _pythonic),
    ("mistral", lambda args: f"[TOOL_CALLS][{_call(args)}]"),
    ("mistral", lambda args: f"[TOOL_CALLS]f[ARGS]{json.dumps(args)}"),
    (
        "generic_json",
        lambda args: json.dumps({"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": args}}]}),
    ),
]


def verdicts(args: dict[str, Any], limits: tr.Limits) -> dict[str, bool | None]:
    """Accepted or not, on every path, for the same arguments and limits."""
    out: dict[str, bool | None] = {
        "native dict": _native(args, limits),
        "native string": _native(json.dumps(args), limits),
        # A trailing comma: the lenient parser's own depth bound, not the C scanner's walk.
        "native lenient string": _native(json.dumps(args)[:-1] + ",}", limits),
    }
    for i, (dialect, write) in enumerate(SALVAGE_PATHS):
        text = write(args)
        out[f"salvaged {i} {dialect}"] = _salvaged(text, limits, dialect)
        out[f"streamed {i} {dialect}"] = _streamed(text, limits)
    return out


@pytest.mark.parametrize("max_depth", [1, 2, 8, 64])
@pytest.mark.parametrize("extra", [0, 1])
def test_every_path_agrees_at_the_boundary(max_depth: int, extra: int) -> None:
    depth = max_depth + extra
    limits = tr.Limits(max_depth=max_depth)
    expected = extra == 0
    got = verdicts(nested(depth), limits)
    assert got == dict.fromkeys(got, expected)
    if not expected:  # one level past the limit, every salvaged path reports it, once
        for _, write in SALVAGE_PATHS:
            rejected = tr.salvage_text(write(nested(depth)), ["f"], limits=limits).rejected
            assert [(r.name, r.reason) for r in rejected] == [("f", "too-deep")]


def test_default_limit_is_the_native_one() -> None:
    # The default Limits(): 64 levels accepted everywhere, 65 refused everywhere.
    assert set(verdicts(nested(64), tr.Limits()).values()) == {True}
    assert set(verdicts(nested(65), tr.Limits()).values()) == {False}


def test_salvaged_string_arguments_meet_a_raised_limit() -> None:
    # Arguments written as a JSON string inside the payload (Granite 4) are read without a
    # bound of their own: a limit above the default still holds them as it holds native ones.
    limits = tr.Limits(max_depth=90)
    for depth, accepted in ((90, True), (91, False)):
        text = "<tool_call>" + json.dumps({"name": "f", "arguments": json.dumps(nested(depth))}) + "</tool_call>"
        result = tr.salvage_text(text, ["f"], limits=limits)
        assert (len(result.calls), [r.reason for r in result.rejected]) == ((1, []) if accepted else (0, ["too-deep"]))
        assert _native(nested(depth), limits) is accepted


def test_registry_holds_a_salvaged_call_to_the_limit_too() -> None:
    # A call salvaged under a looser limit is checked again when a registry runs it.
    call = tr.salvage_text(f"<tool_call>{_call(nested(9))}</tool_call>", ["f"]).calls[0]
    assert tr.ToolRegistry([f], limits=tr.Limits(max_depth=9)).repair(call).error is None
    repair = tr.ToolRegistry([f], limits=tr.Limits(max_depth=8)).repair(call)
    assert repair.error is not None and repair.error.kind == "arguments"


def test_native_dict_keeps_floats_as_given() -> None:
    # Finiteness is a rule of text; an object built by the caller is held to depth only.
    assert decode_arguments({"x": float("inf")}) == ({"x": float("inf")}, ())
    with pytest.raises(tr.ArgumentError) as info:
        decode_arguments(nested(3), max_depth=2)
    assert info.value.reason == "too-deep"


@pytest.mark.parametrize("n", [10**5])
def test_very_deep_nesting_is_refused_without_recursion(n: int) -> None:
    deep: Any = 1
    for _ in range(n):
        deep = {"a": deep}
    with pytest.raises(tr.ArgumentError) as info:
        decode_arguments(deep)
    assert info.value.reason == "too-deep"
    assert not _native(deep, tr.Limits())
    text = '{"a": ' * n + "1" + "}" * n
    assert not _native(text, tr.Limits())
    replies = [(d, write({"a": 1}).replace('{"a": 1}', text)) for d, write in SALVAGE_PATHS if d != "pythonic"]
    replies.append(("pythonic", "[f(a=" + "[" * n + "1" + "]" * n + ")]"))
    for dialect, reply in replies:
        result = tr.salvage_text(reply, ["f"])
        # Bare JSON nested that deep is text, not a candidate; every other dialect reports it.
        assert not result.calls
        assert [r.reason for r in result.rejected] == ([] if dialect == "generic_json" else ["too-deep"])


def test_check_nesting_depth_only_ignores_non_finite() -> None:
    check_nesting([[float("nan")]], 2, finite=False)
    with pytest.raises(ValueError):  # the finite check raises its own ValueError subclass
        check_nesting([[float("nan")]], 2)
    with pytest.raises(tr.ArgumentError):
        check_nesting([[float("nan")]], 1, finite=False)


@given(
    max_depth=st.integers(1, 70),
    depth=st.integers(1, 72),
    lists=st.lists(st.booleans(), max_size=72).map(tuple),
)
def test_paths_agree_on_any_depth(max_depth: int, depth: int, lists: tuple[bool, ...]) -> None:
    limits = tr.Limits(max_depth=max_depth)
    got = verdicts(nested(depth, lists), limits)
    assert got == dict.fromkeys(got, depth <= max_depth)


# -- a raised or lowered limit holds at every entry point -------------------------------------
ARRAY_TOOL = tr.ToolSpec(
    "g", {"type": "object", "properties": {"x": {"type": "array"}}, "required": ["x"]}, fn=lambda x: "ok"
)
# `x`: nested arrays of integers, to any depth; a string leaf is coerced to an integer.
INT_TREE = tr.ToolSpec(
    "h",
    {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/t"}},
        "required": ["x"],
        "$defs": {"t": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/t"}}]}},
    },
    fn=lambda x: "ok",
)


def _list_of(depth: int, leaf: Any) -> Any:
    """A value ``depth`` levels deep (a bare leaf is 0)."""
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def registry_verdicts(depth: int, limits: tr.Limits) -> dict[str, bool]:
    """Accepted or not, through each registry entry point, for arguments ``depth`` levels deep."""
    registry = tr.ToolRegistry([f, ARRAY_TOOL, INT_TREE], limits=limits, max_repairs=100, max_repeats=None)
    args = nested(depth)
    text = f"<tool_call>{_call(args)}</tool_call>"

    def runs(name: str, arguments: Any) -> bool:
        try:
            registry.execute(name, arguments)
        except tr.ToolExecutionError as exc:
            assert exc.kind == "arguments", exc
            ok = False
        else:
            ok = True
        assert registry.run({"name": name, "arguments": arguments}).ok is ok
        assert (tr.repair_call({"name": name, "arguments": arguments}, registry).error is None) is ok
        return ok

    salvaged = registry.salvage(text)
    out = {
        "execute dict": runs("f", args),
        "execute text": runs("f", json.dumps(args)),
        "execute lenient text": runs("f", json.dumps(args)[:-1] + ",}"),
        "salvage then run": bool(salvaged.calls) and all(registry.run(c).ok for c in salvaged.calls),
        "calls then run": all(registry.run(c).ok for c in registry.calls(text)) and bool(registry.calls(text)),
        "salvage_text(limits=)": bool(tr.salvage_text(text, ["f"], limits=limits).calls),
        "stream": _streamed(text, limits),
        # the string holds `depth - 1` levels; inside `{"x": ...}` the call is `depth` deep
        "coerced JSON string": runs("g", {"x": json.dumps(_list_of(depth - 1, 1))}),
    }
    if depth <= 60:  # deeper, jsonschema's own recursion refuses this schema (fail closed)
        out["coerced leaf"] = runs("h", {"x": _list_of(depth - 1, "5")})
    return out


@pytest.mark.parametrize(
    ("max_depth", "depths"),
    [
        (10, (9, 10, 11, 64)),
        (64, (63, 64, 65, 70)),
        (100, (64, 65, 70, 99, 100, 101)),
        (150, (64, 65, 70, 149, 150, 151)),
    ],
)
def test_a_custom_limit_holds_at_every_entry_point(max_depth: int, depths: tuple[int, ...]) -> None:
    limits = tr.Limits(max_depth=max_depth)
    for depth in depths:
        got = registry_verdicts(depth, limits)
        assert got == dict.fromkeys(got, depth <= max_depth), (depth, got)
        assert set(verdicts(nested(depth), limits).values()) == {depth <= max_depth}


@pytest.mark.parametrize("depth", [2, 20, 40, 60])
def test_a_deep_string_leaf_is_coerced_within_the_limit(depth: int) -> None:
    # The coercion walk reaches as deep as the limit allows, through $ref and anyOf.
    registry = tr.ToolRegistry([INT_TREE], limits=tr.Limits(max_depth=100), max_repairs=100)
    outcome = registry.run({"name": "h", "arguments": {"x": _list_of(depth, "5")}})
    assert outcome.ok and outcome.call.arguments == {"x": _list_of(depth, 5)}


def test_a_coerced_string_cannot_take_the_arguments_past_the_limit() -> None:
    registry = tr.ToolRegistry([ARRAY_TOOL], limits=tr.Limits(max_depth=5))
    assert registry.run({"name": "g", "arguments": {"x": json.dumps(_list_of(4, 1))}}).ok
    outcome = registry.run({"name": "g", "arguments": {"x": json.dumps(_list_of(5, 1))}})
    assert not outcome.ok and "nest deeper than 5" in outcome.content
