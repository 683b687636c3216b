"""Every size and depth bound in one value, with one documented default each.

A :class:`Limits` is accepted wherever limits are (``salvage_text``, ``StreamSalvager``,
``decode_arguments``, ``ToolRegistry``, the CLI); the older keyword parameters
(``max_input_chars=``, ``max_call_chars=``, ``max_depth=``) still work and override it.
A call meets the same bounds however it arrived: natively, or salvaged from text.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_LIMITS", "Limits", "limits_with"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what toolrepair reads; every field is a count of characters or levels.

    >>> Limits().max_depth
    64
    >>> Limits(max_depth=8).max_call_chars
    1000000
    """

    max_input_chars: int = 32_000_000
    """Longest reply salvaged at all: longer text is one ``input-too-large`` Rejection."""

    max_call_chars: int = 1_000_000
    """Longest candidate call in a reply, from its marker (``too-large`` beyond it)."""

    max_depth: int = 64
    """Deepest nesting of objects and arrays in a call's arguments (the top object is 1), for
    native and salvaged calls alike."""

    max_name_chars: int = 256
    """Longest tool name (or call id) read from text; no real name is this long."""

    max_argument_chars: int = 10_000_000
    """Longest argument text decoded (``InputTooLargeError``, reason ``too-large``, beyond it)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < (1 if field.name == "max_depth" else 0):
                least = 1 if field.name == "max_depth" else 0
                raise ValueError(f"Limits.{field.name} must be an int >= {least}, got {value!r}")


DEFAULT_LIMITS: Final = Limits()


def limits_with(limits: Limits | None, **overrides: int | None) -> Limits:
    """``limits`` (default: ``DEFAULT_LIMITS``) with each keyword that is not None put in.

    >>> limits_with(None, max_depth=5, max_call_chars=None).max_depth
    5
    """
    base = DEFAULT_LIMITS if limits is None else limits
    if not isinstance(base, Limits):
        raise TypeError(f"limits must be a Limits, not {type(base).__name__}")
    if not overrides:  # the usual call (limits alone): no dict to build
        return base
    given = {name: value for name, value in overrides.items() if value is not None}
    return dataclasses.replace(base, **given) if given else base
