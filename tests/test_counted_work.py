"""The counted-work check the linear-time tests rely on: it passes linear work and fails
quadratic work, on any machine (no clock is read)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def linear(k: int) -> Callable[[], object]:
    return lambda: [abs(i) for i in range(k)]


def quadratic(k: int) -> Callable[[], object]:
    return lambda: [abs(i) for i in range(k * k)]


def refused(k: int) -> Callable[[], object]:
    def run() -> object:
        import toolrepair as tr

        return tr.salvage_text("<tool_call>{" * k, ["f"])

    return run


@pytest.mark.parametrize("run", [linear, refused])
def test_linear_work_passes(run: Callable[[int], Callable[[], object]], assert_linear_work: Any) -> None:
    assert_linear_work(run, 300)


def test_quadratic_work_fails(assert_linear_work: Any) -> None:
    with pytest.raises(AssertionError, match="calls at N=60"):
        assert_linear_work(quadratic, 60)
