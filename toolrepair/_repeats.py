"""Repeated calls: the one canonical key of a call, and a bounded count of each key.

A model stuck in a loop calls the same tool with the same arguments again and again; the
result will not change. ``ToolRegistry(max_repeats=3)`` lets the same call run at most that
many times within a turn (``with registry.turn():``), or, outside a turn, within the
registry's conversation (its lifetime); the next one is answered, without running, with
``repeat_message`` (a ``ToolExecutionError`` of kind ``repeat``, a ``RepairEvent`` of kind
``repeat``). ``audit`` counts the calls of a record past ``DEFAULT_MAX_REPEATS`` by the same key.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from ._safe_text import ints_as_text

__all__ = ["DEFAULT_MAX_REPEATS", "MAX_TRACKED_CALLS", "RepeatCounter", "call_key", "repeat_message"]

DEFAULT_MAX_REPEATS: Final = 3
"""How often the same call may run before it is answered instead (``ToolRegistry(max_repeats=)``)."""

MAX_TRACKED_CALLS: Final = 4096
"""Distinct calls a counter remembers; past this the one seen least recently is forgotten, so a
long-running registry stays bounded (a forgotten call counts from zero again)."""


def call_key(name: str, arguments: Mapping[str, Any]) -> bytes:
    """The identity of a call for counting repeats: the resolved tool name and the arguments
    as sorted-key JSON, after decoding and coercion (``{"n": "5"}`` coerced to ``{"n": 5}`` is
    the call ``{"n": 5}``; ``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` are one call). A 16-byte
    digest, so a counter's memory does not grow with the arguments. O(size of the arguments).

    >>> call_key("f", {"a": 1, "b": [2]}) == call_key("f", {"b": [2], "a": 1})
    True
    >>> call_key("f", {"a": 1}) == call_key("f", {"a": True})
    False
    """
    try:
        text = _canonical(arguments)
    except Exception:  # `default=repr` runs a native value's own __repr__: anything
        text = _fallback(arguments)
    data = (name + "\x00" + text).encode("utf-8", "surrogatepass")
    import hashlib  # on first use: not a cost of ``import toolrepair``

    return hashlib.blake2b(data, digest_size=16).digest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)


def _fallback(arguments: Mapping[str, Any]) -> str:
    """The key text of arguments sorted-key JSON cannot write. Each form has a prefix of its
    own, so it never equals a key of the form before it."""
    try:
        # An int past CPython's int-string limit: written as safe_text writes it (hex).
        return "\x02" + _canonical(ints_as_text(arguments))
    except Exception:  # as above
        pass
    try:
        # Keys of several types cannot be sorted, a cycle cannot be written: the repr, which
        # tells apart more calls than the JSON would (fail open: only a repeat can be missed).
        return "\x01" + repr(arguments)
    except Exception:  # a repr that raises: this call is like no other
        import secrets

        return "\x03" + secrets.token_hex(16)


def repeat_message(name: str, runs: int) -> str:
    """The corrective answer to a call that already ran ``runs`` times with the same arguments.

    >>> print(repeat_message("web_search", 3))  # doctest: +NORMALIZE_WHITESPACE
    Call 'web_search' with the same arguments has already run 3 times; its result will not
    change. Use the earlier result or change the arguments.
    """
    times = "once" if runs == 1 else "twice" if runs == 2 else f"{runs} times"
    return (
        f"Call {name!r} with the same arguments has already run {times}; its result will not change. "
        "Use the earlier result or change the arguments."
    )


class RepeatCounter:
    """How many times each call key ran; thread-safe, at most ``limit`` keys (least recently
    seen forgotten first). Each ``admit`` is O(1)."""

    __slots__ = ("_counts", "_limit", "_lock")

    def __init__(self, limit: int = MAX_TRACKED_CALLS) -> None:
        self._counts: OrderedDict[bytes, int] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def admit(self, key: bytes, max_repeats: int) -> int | None:
        """None, counting one more run of ``key``; or, when it ran ``max_repeats`` times
        already, that count (and nothing is counted: the call does not run)."""
        with self._lock:
            runs = self._counts.get(key, 0)
            if runs >= max_repeats:
                self._counts.move_to_end(key)
                return runs
            self._counts[key] = runs + 1
            self._counts.move_to_end(key)
            while len(self._counts) > self._limit:
                self._counts.popitem(last=False)
            return None

    def release(self, key: bytes) -> None:
        """Take back one run of ``key`` that was admitted but never happened. O(1)."""
        with self._lock:
            runs = self._counts.get(key, 0)
            if runs <= 1:
                self._counts.pop(key, None)
            else:
                self._counts[key] = runs - 1

    def count(self, key: bytes) -> int:
        """How many times ``key`` ran (0 when never, or forgotten)."""
        with self._lock:
            return self._counts.get(key, 0)
