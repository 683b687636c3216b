"""Timing helpers shared by the benchmark scripts: best-of-N, ratios against a baseline."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import timeit
from collections.abc import Callable
from typing import Any


def best(fn: Callable[[], Any], *, number: int = 0, repeat: int = 7) -> float:
    """Seconds per call, best of ``repeat`` runs (auto-ranged when ``number`` is 0)."""
    timer = timeit.Timer(fn)
    if number == 0:
        number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def best_together(*fns: Callable[[], Any], repeat: int = 15) -> list[float]:
    """Seconds per call of each of ``fns``, best of ``repeat`` runs taken in turn (each auto-
    ranged once): a busy spell of a shared machine then slows every one alike, so their ratios
    hold steadier than those of figures measured one after the other."""
    timers = [timeit.Timer(fn) for fn in fns]
    numbers = [timer.autorange()[0] for timer in timers]
    bests = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, (timer, number) in enumerate(zip(timers, numbers, strict=True)):
            bests[k] = min(bests[k], timer.timeit(number) / number)
    return bests


def machine() -> str:
    return f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()} ({platform.processor() or 'cpu'})"


def row(label: str, seconds: float, baseline: float | None = None, target: str = "") -> str:
    ratio = f"{seconds / baseline:8.2f}x" if baseline else " " * 9
    return f"{label:<52} {seconds * 1e6:12.2f} µs {ratio}  {target}"


def instructions(code: str, *, path: list[str] | None = None) -> int | None:
    """Instructions a fresh ``python -S -c code`` executes, counted by callgrind (None where
    valgrind is not installed). Counts, not seconds: the same on a busy machine as on a quiet
    one, so a ratio of two of them can be checked anywhere. ``path`` is put at the front of
    ``sys.path`` (``-S`` leaves out this machine's site start-up, on both sides of a ratio).
    The interpreter is the real binary, not a shim script, and hash randomisation is fixed."""
    if shutil.which("valgrind") is None:
        return None
    prefix = f"import sys; sys.path[:0] = {list(path or [])!r}; "
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    argv += [os.path.realpath(sys.executable), "-S", "-c", prefix + code]
    env = dict(os.environ, PYTHONHASHSEED="0")
    err = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stderr
    match = re.search(r"Collected : (\d+)", err)
    return int(match.group(1)) if match else None
