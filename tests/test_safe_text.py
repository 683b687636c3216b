"""Hostile values never crash an entry point: ints past CPython's int-string limit, exceptions
whose ``__str__`` fails, ``str`` subclasses with methods of their own (issue 18, "Nothing
escapes")."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._safe_text import exact_str, exception_message, int_fits_text, json_text, safe_int
from toolrepair.integrations import openai as tr_openai

BIG = 10**5000  # 5001 digits: past the default limit of 4300
HEX_4000 = "0x" + "f" * 4000  # parses in linear time, ~4817 decimal digits


class Hostile(str):
    """A str whose every method a naive caller might use raises."""

    def __len__(self) -> int:
        raise RuntimeError("len")

    def __getitem__(self, key: Any) -> str:
        raise RuntimeError("getitem")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("encode")

    def rstrip(self, *args: Any) -> str:
        raise RuntimeError("rstrip")

    def find(self, *args: Any) -> int:
        raise RuntimeError("find")


class RaisingStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message")


class NonStrStr(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]  # noqa: PLE0307


class HostileStrStr(Exception):
    def __str__(self) -> str:
        return Hostile("boom")


# -- the helpers -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "fits"),
    [
        (0, True),
        (-1, True),
        (10**4299, True),
        (10**4299 * -1, True),
        (2**1999, True),
        (10**4300, False),
        (-(10**4300), False),
        (BIG, False),
        (int(HEX_4000, 16), False),
    ],
    ids=lambda v: str(v)[:20] if not isinstance(v, int) or int_fits_text(v) else f"{v.bit_length()}-bits",
)
def test_int_fits_text(value: int, fits: bool) -> None:
    assert int_fits_text(value) is fits
    assert safe_int(value) == (value if fits else hex(value))


def test_int_fits_text_follows_the_interpreters_limit() -> None:
    old = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)  # 0: no limit
        assert int_fits_text(BIG)
        sys.set_int_max_str_digits(640)
        assert not int_fits_text(10**700)
        assert int_fits_text(10**600)
    finally:
        sys.set_int_max_str_digits(old)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1}, '{"a": 1}'),
        ({"a": "é"}, '{"a": "é"}'),
        ({"a": BIG}, json.dumps({"a": hex(BIG)})),
        ({"a": [1, -BIG, {"b": BIG}]}, json.dumps({"a": [1, hex(-BIG), {"b": hex(BIG)}]})),
        ({BIG: True}, json.dumps({hex(BIG): True})),
        ((BIG,), json.dumps([hex(BIG)])),
    ],
    ids=range(6),
)
def test_json_text(value: Any, expected: str) -> None:
    assert json_text(value) == expected


def test_json_text_still_refuses_a_cycle() -> None:
    cycle: list[Any] = [BIG]
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular"):
        json_text(cycle)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (ValueError("bad value"), "bad value"),
        (RaisingStr(), "RaisingStr (its message could not be read)"),
        (NonStrStr(), "NonStrStr (its message could not be read)"),
        (HostileStrStr(), "boom"),
    ],
)
def test_exception_message(exc: Exception, expected: str) -> None:
    message = exception_message(exc)
    assert type(message) is str
    assert message == expected


def test_exact_str() -> None:
    copy = exact_str(Hostile("abc"))
    assert type(copy) is str and copy == "abc"
    plain = "abc"
    assert exact_str(plain) is plain
    with pytest.raises(TypeError, match="bytes"):
        exact_str(b"abc")  # type: ignore[arg-type]


# -- big ints through every entry point ------------------------------------------------------
def f(a: int = 0) -> int:
    return a


def echo(a: Any = None) -> Any:
    return a


@pytest.mark.parametrize(
    "text", [f"[f(a={HEX_4000})]", f"[f(a=-{HEX_4000})]", f"[f(a=[1, {HEX_4000}])]", f"[f(a={{'k': {HEX_4000}}})]"]
)
def test_a_number_past_the_limit_is_refused_where_it_is_decoded(text: str) -> None:
    result = tr.salvage_text(text, ["f"])
    assert result.calls == ()
    assert [r.reason for r in result.rejected] == ["undecodable-arguments"]
    # A number within the limit still decodes, exactly.
    fine = tr.salvage_text("[f(a=0x" + "f" * 400 + ")]", ["f"])
    assert fine.calls[0].arguments == {"a": int("f" * 400, 16)}


def test_the_cli_refuses_it_too(tmp_path: Path) -> None:
    path = tmp_path / "reply.txt"
    path.write_text(f"[f(a={HEX_4000})]")
    out = subprocess.run(
        [sys.executable, "-m", "toolrepair", "salvage", str(path), "--tools", "f"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout)
    assert report["calls"] == []
    assert [r["reason"] for r in report["rejected"]] == ["undecodable-arguments"]


def test_the_openai_integration_refuses_it() -> None:
    registry = tr.ToolRegistry([f])
    repaired = tr_openai.repair_chat_message({"role": "assistant", "content": f"[f(a={HEX_4000})]"}, registry)
    # Never run: kept as a refused call with its answer ready (every refused candidate is), and
    # no digit of it left in the content (the candidate is longer than a rejection's excerpt).
    assert tr_openai.tool_calls(repaired) == []
    [error] = repaired["toolrepair_errors"]
    assert "(undecodable-arguments)" in error["message"]
    assert repaired["content"] is None


def test_big_native_ints_are_written_safely() -> None:
    registry = tr.ToolRegistry([echo])
    assert tr.ToolCall("f", {"a": BIG, "b": [-BIG]}).to_openai()["function"]["arguments"] == json.dumps(
        {"a": hex(BIG), "b": [hex(-BIG)]}
    )
    assert tr.serialize_result(BIG) == hex(BIG)
    assert tr.serialize_result({"n": [BIG]}) == json.dumps({"n": [hex(BIG)]})
    assert tr.serialize_result({BIG: 1}) == json.dumps({hex(BIG): 1})
    assert registry.execute("echo", {"a": 1}) == 1
    outcome = registry.run({"name": "echo", "arguments": {"a": [BIG]}})
    assert outcome.ok and outcome.value == [BIG] and outcome.content == json.dumps([hex(BIG)])


# -- tools whose exceptions cannot be printed ------------------------------------------------
@pytest.mark.parametrize(
    ("error", "message"),
    [
        (RaisingStr, "RaisingStr (its message could not be read)"),
        (NonStrStr, "NonStrStr (its message could not be read)"),
        (HostileStrStr, "boom"),
    ],
)
def test_a_tool_raising_an_unprintable_exception(error: type[Exception], message: str) -> None:
    def broken() -> None:
        raise error()

    async def abroken() -> None:
        raise error()

    registry = tr.ToolRegistry([broken, abroken])
    for name in ("broken", "abroken"):
        outcome = registry.run({"name": name, "arguments": {}})
        assert not outcome.ok and outcome.content == message and type(outcome.content) is str
        assert isinstance(outcome.error.__cause__, error)
        aoutcome = asyncio.run(registry.arun({"name": name, "arguments": {}}))
        assert not aoutcome.ok and aoutcome.content == message
        with pytest.raises(tr.ToolExecutionError) as info:
            registry.execute(name, {})
        assert str(info.value) == message and info.value.kind == "tool-error"
        assert isinstance(info.value.__cause__, error)
        # Its content is untrusted like any other outcome's.
        assert registry.salvage(outcome.content).rejected[0].reason == "untrusted"


# -- str subclasses --------------------------------------------------------------------------
@pytest.mark.parametrize("max_chars", [None, 0, 2, 5, 100])
def test_serialize_result_of_a_hostile_str(max_chars: int | None) -> None:
    text = tr.serialize_result(Hostile("abcdefghij"), max_chars=max_chars)
    assert type(text) is str
    assert text == tr.serialize_result("abcdefghij", max_chars=max_chars)


@pytest.mark.parametrize(
    "value",
    [
        {"error": Hostile("disk full")},
        [{"error": Hostile("x")}],
        {"k": Hostile("v")},
        [Hostile("a")],
        {"k": {1, 2}, "s": Hostile("v")},
    ],
)
def test_serialize_result_of_containers_of_hostile_strs(value: Any) -> None:
    text = tr.serialize_result(value, max_chars=8)
    assert type(text) is str and len(text) <= 40


def test_mark_untrusted_and_salvage_of_a_hostile_str() -> None:
    registry = tr.ToolRegistry([f])
    reply = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    assert registry.salvage(Hostile(reply)).calls[0].arguments == {"a": 1}
    assert tr.salvage_text(Hostile(reply), ["f"]).calls[0].name == "f"
    registry.mark_untrusted(Hostile(reply))
    assert registry.salvage(reply).rejected[0].reason == "untrusted"
    assert registry.salvage(Hostile(reply)).rejected[0].reason == "untrusted"


@pytest.mark.parametrize("value", [b"x", bytearray(b"x"), 1, None])
def test_mark_untrusted_takes_only_str(value: Any) -> None:
    with pytest.raises(TypeError, match="expected str"):
        tr.ToolRegistry([]).mark_untrusted(value)


def as_text(a: str = "") -> str:
    return a


def as_flag(a: bool = False) -> bool:
    return a


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("as_text", {"a": BIG}),
        ("as_flag", {"a": BIG}),
        ("As_Text", {"a": -BIG}),
        ("as_text", {"a": [1, [BIG]]}),
    ],
)
def test_native_arguments_with_a_long_int_are_refused_clearly(tool: str, arguments: dict[str, Any]) -> None:
    registry = tr.ToolRegistry([as_text, as_flag, f])
    with pytest.raises(tr.ToolExecutionError, match="too many digits") as info:
        registry.execute(tool, arguments)
    assert info.value.kind == "arguments"
    outcome = registry.run({"name": tool, "arguments": arguments})
    assert not outcome.ok and "too many digits" in outcome.content
    assert asyncio.run(registry.arun({"name": tool, "arguments": arguments})).content == outcome.content


def test_has_long_int() -> None:
    from toolrepair._safe_text import has_long_int

    cycle: list[Any] = [1]
    cycle.append(cycle)
    assert not has_long_int(cycle)
    cycle.append({BIG: 1})
    assert has_long_int(cycle)
    assert has_long_int(({"a": (2, -BIG)},))
    assert not has_long_int({"a": [10**4000, "x" * 5000, 1.5, None, True]})
