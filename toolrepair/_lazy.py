"""Built on first use: patterns and tables that only some inputs reach.

Compiling a pattern costs far more than matching it once (``re``'s parser and compiler run in
Python, ``regex``'s too), and a module that compiles every pattern it may need pays for all of
them on ``import toolrepair``, for inputs most programs never see. ``lazy`` defers the build to
the first call and caches its value: each later call is one call of a C-level cache, O(1).

    _ATX = lazy(lambda: re.compile(r"#{1,6}(?=[ \\t]|$)"))
    ...
    _ATX().match(text, i)

Patterns on the path of every call stay compiled at import: deferring them moves the cost to the
first call and adds a call to each use, for nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = ["lazy"]

_T = TypeVar("_T")


def lazy(build: Callable[[], _T]) -> Callable[[], _T]:
    """``build``'s value, built on the first call and the same object on every later one (so an
    ``is`` test against it holds). Thread-safe in the sense of ``functools.cache``: two first
    calls at once may both build, and one value is kept; ``build`` must be pure."""
    return functools.cache(build)
