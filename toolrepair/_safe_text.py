"""Text from values a tool or a caller handed over, which may be hostile: a ``str`` subclass
with its own methods, an exception whose ``__str__`` raises, an int past CPython's
int-string limit. Nothing here calls a method the value itself defines."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["exact_str", "exception_message", "has_long_int", "int_fits_text", "ints_as_text", "json_text", "safe_int"]

# Below this many bits an int has fewer than 603 decimal digits, under the lowest limit CPython
# accepts (640): such ints (nearly all) need no look at the limit.
_ALWAYS_FITS_BITS = 2000


def exact_str(text: str) -> str:
    """``text`` as an exact ``str``, by a C-level copy that no subclass method can intercept.

    >>> class Loud(str):
    ...     def __len__(self) -> int:
    ...         raise RuntimeError
    >>> type(exact_str(Loud("x"))).__name__
    'str'
    """
    if type(text) is str:
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected str, not {type(text).__name__}")
    return str.__getitem__(text, slice(None))


def exception_message(exc: BaseException) -> str:
    """``str(exc)``, or a message naming its type when ``__str__`` raises or is not a str."""
    try:
        message = str(exc)
    except Exception:
        message = None
    if isinstance(message, str):
        return exact_str(message)
    return f"{type(exc).__name__} (its message could not be read)"


def int_fits_text(value: int) -> bool:
    """Whether ``str(value)`` stays within CPython's int-string limit
    (``sys.get_int_max_str_digits``; converting past it is quadratic and raises ValueError)."""
    if value.bit_length() < _ALWAYS_FITS_BITS:
        return True
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit == 0:
        return True
    try:
        int.__str__(value)  # at most `limit` digits: bounded work
    except ValueError:
        return False
    return True


def safe_int(value: int) -> int | str:
    """``value``, or its exact hex spelling (``0x…``, linear to write) when its decimal spelling
    is past the int-string limit."""
    return value if int_fits_text(value) else hex(value)


def json_text(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, writing ints past the int-string limit as their
    hex strings instead of raising ``ValueError``. O(size of ``value``); the extra walk runs only
    when such an int is there."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except ValueError:
        return json.dumps(ints_as_text(value), ensure_ascii=False)


def ints_as_text(value: Any, path: set[int] | None = None) -> Any:
    """``value`` (nested dicts, lists, tuples) with each int past the int-string limit as its
    hex spelling (``safe_int``); ``ValueError`` for a cycle. O(size of ``value``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return safe_int(value)
    if not isinstance(value, (dict, list, tuple)):
        return value
    path = set() if path is None else path
    if id(value) in path:  # json.dumps's own answer to a cycle
        raise ValueError("Circular reference detected")
    path.add(id(value))
    if isinstance(value, dict):
        out: Any = {ints_as_text(k) if isinstance(k, int) else k: ints_as_text(v, path) for k, v in value.items()}
    else:
        out = [ints_as_text(v, path) for v in value]
    path.discard(id(value))
    return out


def has_long_int(value: Any) -> bool:
    """Whether ``value`` (nested dicts and lists) holds an int past the int-string limit.
    Iterative: O(elements), any depth; each container is looked at once (cycles end)."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(k for k in item if isinstance(k, int))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, int) and not int_fits_text(item):
            return True
    return False
