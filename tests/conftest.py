"""Shared fixtures (a few tools written the way users write them, a counter of work) and the
hypothesis profiles.

Profiles: ``default`` is small and deterministic (the README's test command, minutes on two
cores); ``ci-deep`` is the fixed, larger budget ``.ci/run`` spends on ``tests/property`` as a
step of its own. Choose with ``HYPOTHESIS_PROFILE=ci-deep``. Tests set no ``max_examples`` of
their own, so the profile decides.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings

from toolrepair import ToolRepairError
from toolrepair.testing import _count_calls

settings.register_profile(
    "default",
    max_examples=25,
    derandomize=True,  # the same examples every run: a red build is reproducible, never luck
    database=None,
    deadline=None,  # no clock in a verdict
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci-deep",
    max_examples=60,
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

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
