"""Doubling times of hostile input: t(2N)/t(N) near 2 is linear, near 4 quadratic.

Run: python benchmarks/bench_doubling.py
The tests assert the same shapes on counted work (function calls, no clock); this script is
where their times live. N and 2N are timed in turn (``best_together``), so a busy spell of a
shared machine slows both alike. Target: every ratio below 3.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

from _common import best_together, machine

import toolrepair as tr
from toolrepair._args import decode_arguments


def salvage(text: str) -> object:
    return tr.salvage_text(text, tr.ANY_TOOL)


def stream(text: str) -> object:
    s = tr.StreamSalvager(tr.ANY_TOOL)
    return [s.feed(text[i : i + 16]) for i in range(0, len(text), 16)] + [s.close()]


def decode(text: str) -> object:
    try:
        return decode_arguments(text, max_chars=10**8)
    except tr.ToolRepairError as error:
        return error


# name -> (entry point, document of size n, n): n chosen so one run takes milliseconds.
CASES: dict[str, tuple[Callable[[str], object], Callable[[int], str], int]] = {
    "salvage: <tool_call>{ run": (salvage, lambda n: "<tool_call>{" * n, 4_000),
    "salvage: [TOOL_CALLS]{ run": (salvage, lambda n: "[TOOL_CALLS]{" * n, 4_000),
    "salvage: pythonic [f(a=, tail": (salvage, lambda n: "[f(" + "[f(a=, " * n, 4_000),
    "salvage: fence toggles": (salvage, lambda n: "```\n" * n, 8_000),
    "salvage: <think> opens": (salvage, lambda n: "<think>" * n, 8_000),
    "salvage: open brackets": (salvage, lambda n: "{" * n, 20_000),
    "salvage: prose": (salvage, lambda n: "plain words and more " * n, 50_000),
    "stream: <tool_call>{ run": (stream, lambda n: "<tool_call>{" * n, 2_000),
    "stream: prose": (stream, lambda n: "plain words and more " * n, 20_000),
    "decode: lenient members": (
        decode,
        lambda n: "{" + ", ".join(f"'k{i}': [True, {i}]" for i in range(n)) + ",}",
        2_000,
    ),
    "decode: unescaped quotes": (decode, lambda n: '{"a": "' + '"x ' * n + '"}', 20_000),
    "decode: invalid escapes": (decode, lambda n: '{"a": "' + "\\q" * n + '"}', 20_000),
    "decode: comments": (decode, lambda n: "{" + "/* c */ " * n + "}", 20_000),
    "decode: deep valid walk": (decode, lambda n: json.dumps({"a": [[[i]] for i in range(n)]}), 4_000),
    "decode: prose": (decode, lambda n: "word " * n, 100_000),
}


def main() -> None:
    print(f"# Doubling ratios ({machine()}); target < 3")
    print(f"{'case':<36} {'N':>8} {'t(N) ms':>10} {'t(2N)/t(N)':>11}")
    for name, (fn, make, n) in CASES.items():
        small, large = make(n), make(2 * n)
        t_small, t_large = best_together(partial(fn, small), partial(fn, large), repeat=5)
        flag = "" if t_large / t_small < 3 else "  <-- over target"
        print(f"{name:<36} {n:>8} {t_small * 1e3:>10.2f} {t_large / t_small:>11.2f}{flag}")


if __name__ == "__main__":
    main()
