"""serialize_result: every tool result becomes a string a model can read. It never raises."""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from ._safe_text import exact_str, safe_int

__all__ = ["EMPTY_OUTPUT", "serialize_result"]

EMPTY_OUTPUT = "Function returned an empty output"
_TRUNCATED = "… [truncated {n} characters]"
# Conversions of exotic objects recurse through containers; cut here, not at RecursionError.
_MAX_DEPTH = 200


def _error_message(value: Any) -> str | None:
    """The message of an `{"error": msg}` result, or of a list that starts with one."""
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, Mapping) and "error" in value:
        msg = value["error"]
        if msg is None or msg is False or msg == "":
            return None
        return exact_str(msg) if isinstance(msg, str) else _plain(msg)
    return None


def _readable(value: Any, depth: int = 0) -> Any:
    """A JSON-compatible stand-in for one value; containers are converted recursively."""
    if depth > _MAX_DEPTH:
        return "…"
    for kinds, convert in _conversions():
        if isinstance(value, kinds):
            return convert(value, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
        return _readable(fields, depth + 1)
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # pydantic v2
        try:
            return _readable(dump(mode="json"), depth + 1)
        except Exception:
            pass
    return _plain(value)


def _float(value: float, depth: int) -> Any:
    return value if math.isfinite(value) else str(value)  # NaN/inf are not JSON


def _set(value: set[Any] | frozenset[Any], depth: int) -> list[Any]:
    """Sorted, so that the text does not depend on hashing; by repr where items do not order."""
    items = [_readable(v, depth) for v in value]
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def _bytes(value: bytes | bytearray | memoryview, depth: int) -> str:
    raw = bytes(value)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        import base64  # here: binary results are rare, and the import is not free (nor struct's)

        return "base64:" + base64.b64encode(raw).decode("ascii")


# The first kind a value is an instance of says how it reads (order matters: bool before int,
# datetime before date); each conversion gets the depth of the values inside.
@functools.cache
def _conversions() -> tuple[tuple[type[Any] | tuple[type[Any], ...], Callable[[Any, int], Any]], ...]:
    """The table, made on the first result: datetime, pathlib, uuid and decimal (and what they
    import) are a large share of ``import toolrepair`` when imported with it."""
    import datetime as _dt
    import pathlib
    import uuid
    from decimal import Decimal

    return (
        ((type(None), bool), lambda value, depth: value),
        (str, lambda value, depth: exact_str(value)),
        (int, lambda value, depth: safe_int(value)),  # past the int-string limit: hex, not a ValueError
        (float, _float),
        (Mapping, lambda value, depth: {_key(k): _readable(v, depth) for k, v in value.items()}),
        ((list, tuple), lambda value, depth: [_readable(v, depth) for v in value]),
        ((set, frozenset), _set),
        ((_dt.datetime, _dt.date, _dt.time), lambda value, depth: value.isoformat()),
        (_dt.timedelta, lambda value, depth: value.total_seconds()),
        (enum.Enum, lambda value, depth: _readable(value.value, depth)),
        ((pathlib.PurePath, uuid.UUID, Decimal, complex), lambda value, depth: str(value)),
        ((bytes, bytearray, memoryview), _bytes),
    )


def _key(key: Any) -> str:
    if isinstance(key, str):
        return exact_str(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return str(safe_int(key))
    return _plain(key)


def _plain(value: Any) -> str:
    for convert in (str, repr):
        try:
            text = convert(value)
        except Exception:
            continue
        if isinstance(text, str):
            return exact_str(text)
    return f"<unprintable {type(value).__name__} object>"


def _truncate(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    marker = _TRUNCATED.format(n=len(text) - max_chars)
    keep = max(0, max_chars - len(marker))
    marker = _TRUNCATED.format(n=len(text) - keep)
    return text[:keep] + marker


def serialize_result(value: Any, *, max_chars: int | None = None) -> str:
    """The string a model sees for a tool's return value.

    ``str`` unchanged; None -> ``Function returned an empty output``; ``{"error": msg}`` (or
    a list starting with one) -> ``Error: msg. Please inform the user ...``; JSON-serialisable
    values -> ``json.dumps(..., ensure_ascii=False)``; dates, paths, enums, dataclasses,
    pydantic models, sets and bytes get a readable encoding; anything else ``str(value)``.
    With ``max_chars``, longer text is cut and ends with a visible marker.

    >>> serialize_result({"temp": 21})
    '{"temp": 21}'
    """
    try:
        text = exact_str(_serialize(value))  # a str subclass's own __len__ must not run below
    except Exception:  # last line of defence: the contract is "never raises"
        text = f"<unprintable {type(value).__name__} object>"
    return _truncate(text, max_chars)


def _serialize(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return EMPTY_OUTPUT
    try:
        error = _error_message(value)
    except Exception:
        error = None
    if error is not None:
        return f"Error: {error.rstrip('.')}. Please inform the user that the operation could not be completed."
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        if "Circular reference" in str(exc):
            return _plain(value)  # repr marks the cycle: `[[...]]`
    except (TypeError, RecursionError):
        pass
    try:
        readable = _readable(value)
        if isinstance(readable, str):
            return readable
        return json.dumps(readable, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return _plain(value)
