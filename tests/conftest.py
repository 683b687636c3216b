"""Shared fixtures (a few tools written the way users write them, a counter of work) and the
hypothesis profiles.

Profiles: ``default`` is small and deterministic (the README's test command: 10 examples a
property, minutes on two cores); ``ci-deep`` is the fixed, larger budget ``.ci/run`` spends on
``tests/property`` as a step of its own, derandomized like ``default``; ``explore`` draws at random with a larger budget,
by hand only. Choose with ``HYPOTHESIS_PROFILE=ci-deep``. Tests set no ``max_examples`` of
their own, so the profile decides.

The profile decides the size of a few cross products too (``covering``): the README's command
runs a fixed subset in which every value of every axis still appears, ``ci-deep`` runs them whole.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, settings

from toolrepair import ToolRepairError
from toolrepair.testing import _count_calls

settings.register_profile(
    "default",
    max_examples=10,
    derandomize=True,  # the same examples every run: a red build is reproducible, never luck
    database=None,
    deadline=None,  # no clock in a verdict
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci-deep",
    max_examples=60,
    derandomize=True,  # CI's verdict is reproducible too: exploring is `explore`'s job
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# Random draws, a larger budget: run by hand (and between releases) to find new classes, whose
# findings become rows of the tables and fixes; never a step of CI, whose verdict must not be luck.
settings.register_profile(
    "explore",
    max_examples=200,
    derandomize=False,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
settings.load_profile(PROFILE)
DEEP = PROFILE in ("ci-deep", "explore")

_Case = TypeVar("_Case")


def covering(cases: Sequence[_Case], *axes: Callable[[_Case], Hashable]) -> list[_Case]:
    """The cases of a cross product to run: all of them under ``ci-deep``; under any other
    profile a fixed subset in which every value of every axis appears at least once.

    Greedy and deterministic: the next case kept is the one showing the most values not yet
    seen, then the one whose values have been seen least (spreading an axis with few values,
    an entry point, evenly over one with many, the input families), then the first in order.
    For the cross product of a families and b entry points that is max(a, b) cases, each family
    and each entry point at least once; the whole product is the deep step's (``.ci/run``).
    O(len(cases)^2 * len(axes)), on collection lists of a few hundred."""
    if DEEP:
        return list(cases)
    seen: list[Counter[Hashable]] = [Counter() for _ in axes]
    left = list(cases)
    kept: list[_Case] = []

    def score(case: _Case) -> tuple[int, int]:
        values = [axis(case) for axis in axes]
        new = sum(value not in counts for value, counts in zip(values, seen, strict=True))
        return new, -sum(counts[value] for value, counts in zip(values, seen, strict=True))

    while left:
        best = max(left, key=score)  # max keeps the first of equals: the same subset every run
        if score(best)[0] == 0:
            break
        left.remove(best)
        kept.append(best)
        for axis, counts in zip(axes, seen, strict=True):
            counts[axis(best)] += 1
    return kept


CORPUS = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "corpus.jsonl"


def web_search(query: str, limit: int = 5) -> str:
    """Search the web."""
    return f"results for {query} ({limit})"


def calculator(expression: str) -> float:
    """Evaluate arithmetic."""
    raise ZeroDivisionError("division by zero")


@pytest.fixture
def tools() -> list[object]:
    return [web_search, calculator]


def count_calls(fn: Callable[[], object]) -> int:
    """Function calls (Python and C) made while ``fn`` runs: counted work, the same on any
    machine however busy, where a time would not be. A documented error is an answer too."""

    def run() -> None:
        with contextlib.suppress(ToolRepairError):
            fn()

    return _count_calls(run)


# Linear work doubles with the input; quadratic work quadruples. The margin absorbs fixed costs.
MAX_COUNT_RATIO = 2.5


@pytest.fixture
def assert_linear_work() -> Callable[[Callable[[int], Callable[[], object]], int], None]:
    """``assert_linear_work(run, n)``: ``run(k)`` makes a call on input of size ``k``; the calls
    it makes at ``2n`` stay within ``MAX_COUNT_RATIO`` times those at ``n`` (plus a constant)."""

    def check(run: Callable[[int], Callable[[], object]], n: int) -> None:
        count_calls(run(n))  # warm caches (compiled patterns, configs) out of the count
        small, large = count_calls(run(n)), count_calls(run(2 * n))
        assert large <= MAX_COUNT_RATIO * small + 50, f"calls at N={n}: {small}, at 2N: {large}"

    return check


@pytest.fixture(scope="session")
def cover() -> Callable[..., list[object]]:
    """``covering`` for a cross product built inside a fixture (not a parametrization)."""
    return covering


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``@pytest.mark.covering("a", "b", c=key)`` on a parametrized test: run the ``covering``
    subset of its cases, the axes being the values of parameters ``a`` and ``b`` and ``key`` of
    parameter ``c``. The others are reported as deselected; ``ci-deep`` runs them all."""
    groups: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("covering") is not None and hasattr(item, "callspec"):
            groups.setdefault((str(item.path), item.originalname), []).append(item)  # type: ignore[attr-defined]
    drop: set[int] = set()
    for group in groups.values():
        mark = group[0].get_closest_marker("covering")
        assert mark is not None
        axes: list[Callable[[pytest.Item], Hashable]] = [
            lambda it, name=name: it.callspec.params[name]  # type: ignore[attr-defined]
            for name in mark.args
        ]
        axes += [
            lambda it, name=name, key=key: key(it.callspec.params[name])  # type: ignore[attr-defined]
            for name, key in mark.kwargs.items()
        ]
        kept = {id(it) for it in covering(group, *axes)}
        drop.update(id(it) for it in group if id(it) not in kept)
    if drop:
        config.hook.pytest_deselected(items=[it for it in items if id(it) in drop])
        items[:] = [it for it in items if id(it) not in drop]
