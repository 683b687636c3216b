"""CPU work off the event loop: parsing, salvaging and repairing a large reply run on a worker
thread, so one hostile reply never holds every other client (``/health`` included).

The number of threads at work at once is bounded (by default the CPUs this process may use):
the loop keeps answering, and the machine is not asked for more parallel work than it has. A
small piece of work runs inline: a thread hop costs more than it saves there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

__all__ = ["INLINE_BYTES", "Offload", "default_workers"]

T = TypeVar("T")

# Below this many bytes of input, work runs on the loop: salvage is linear, and a few KiB cost
# less than the hop to a thread and back.
INLINE_BYTES = 4 * 1024


def default_workers() -> int:
    """The CPUs this process may run on (its affinity where the platform says), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on every platform
        return max(1, os.cpu_count() or 1)


class Offload:
    """Runs functions on worker threads, at most ``workers`` at a time (others wait their turn,
    on the loop, without blocking it).

    >>> Offload(2).workers
    2
    """

    __slots__ = ("_limiter", "workers")

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else default_workers()
        self._limiter: anyio.CapacityLimiter | None = None  # made on the loop, at first use

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.workers)
        return self._limiter

    async def run(self, fn: Callable[..., T], *args: object, size: int | None = None) -> T:
        """``fn(*args)``, on a worker thread; inline when ``size`` (the input's bytes) is given
        and under ``INLINE_BYTES``. The caller is cancelled as usual; the thread finishes its
        call (a thread cannot be interrupted), still counted against the bound."""
        if size is not None and size < INLINE_BYTES:
            return fn(*args)
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)
