"""serialize_result: every value becomes a readable string; it never raises."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import pathlib
import uuid
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._result import EMPTY_OUTPUT


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    when: dt.date


class PydanticLike:
    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        assert mode == "json"
        return {"id": 1, "tags": ["a"]}


class BadStr:
    def __str__(self) -> str:
        raise RuntimeError("no str")


class BadEverything:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class BadDump:
    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        raise RuntimeError("broken")

    def __str__(self) -> str:
        return "BadDump()"


ERR = "Please inform the user that the operation could not be completed."


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        ("", ""),
        ("\ud800 lone surrogate", "\ud800 lone surrogate"),
        (None, EMPTY_OUTPUT),
        ({"error": "not found"}, f"Error: not found. {ERR}"),
        ({"error": "not found."}, f"Error: not found. {ERR}"),
        ([{"error": "quota"}, {"x": 1}], f"Error: quota. {ERR}"),
        ({"error": 404}, f"Error: 404. {ERR}"),
        ({"error": None, "x": 1}, '{"error": null, "x": 1}'),
        ({"error": ""}, '{"error": ""}'),
        ({"temp": 21, "city": "Zürich"}, '{"temp": 21, "city": "Zürich"}'),
        ([1, 2.5, True, None], "[1, 2.5, true, null]"),
        (42, "42"),
        (True, "true"),
        ((1, 2), "[1, 2]"),
        (float("nan"), "nan"),
        ({"x": float("inf")}, '{"x": "inf"}'),
        (dt.datetime(2026, 1, 2, 3, 4, 5), "2026-01-02T03:04:05"),
        ({"at": dt.date(2026, 1, 2)}, '{"at": "2026-01-02"}'),
        (dt.timedelta(seconds=90), "90.0"),
        (pathlib.PurePosixPath("/tmp/x"), "/tmp/x"),
        (Color.RED, "red"),
        (Point(1, dt.date(2026, 1, 1)), '{"x": 1, "when": "2026-01-01"}'),
        (PydanticLike(), '{"id": 1, "tags": ["a"]}'),
        ({3, 1, 2}, "[1, 2, 3]"),
        ({1, "a"}, '["a", 1]'),  # unorderable: sorted by repr
        (b"bytes", "bytes"),
        (b"\xff\x00", "base64:/wA="),
        (decimal.Decimal("1.10"), "1.10"),
        (uuid.UUID(int=0), "00000000-0000-0000-0000-000000000000"),
        ({1: "a"}, '{"1": "a"}'),
        ({(1, 2): "a"}, '{"(1, 2)": "a"}'),
        (BadDump(), "BadDump()"),
        (BadStr(), None),  # repr fallback, checked below
        (BadEverything(), "<unprintable BadEverything object>"),
    ],
)
def test_serialize_result(value: Any, expected: str | None) -> None:
    got = tr.serialize_result(value)
    assert isinstance(got, str)
    if expected is not None:
        assert got == expected
    else:
        assert got.startswith("<") and "BadStr" in got


def test_circular_and_deep_values_never_raise() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert tr.serialize_result(loop) == "[[...]]"
    deep: list[Any] = []
    cur = deep
    for _ in range(100_000):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    assert isinstance(tr.serialize_result(deep), str)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("x" * 100, 40, "x" * 13 + "… [truncated 87 characters]"),
        ("x" * 100, 5, "… [truncated 100 characters]"),
        ("x" * 100, None, "x" * 100),
    ],
)
def test_max_chars(text: str, limit: int | None, expected: str) -> None:
    assert tr.serialize_result(text, max_chars=limit) == expected


def test_json_output_is_valid_json_for_json_values() -> None:
    value = {"a": [1, {"b": 'ü\n"q"'}], "c": None}
    assert json.loads(tr.serialize_result(value)) == value
