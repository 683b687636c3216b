"""Work per character on the hostile families, whole and streamed (issue 31, item 1).

For each family of ``tests/property/test_hostile.py`` (and the shapes issue 31 measured: a
run of pythonic ``f(`` openers, 64 nested quotes with lines, many small calls, calls on one
unbroken line beside code spans), a text of about ``--chars`` characters is salvaged whole and
streamed in 16-character deltas. Printed per family, per character of input:

* ``whole``: ``salvage_text``;
* ``stream``: ``StreamSalvager`` fed the deltas, then closed;
* ``floor``: the least any stream does: one ``TextDelta`` per delta;
* ``s/w``: the stream against the whole reply; ``s/f``: the stream against the floor.

``--instructions`` counts CPU instructions under callgrind (valgrind must be installed): each
run less a run that only imports and warms the package, so the figures are the same on a busy
machine as on a quiet one. Without it the unit is profile events (``sys.setprofile`` calls and
returns, Python and C: the tests' counted work); one event is about 500-750 instructions.
Targets: every family <= 5,000 instructions a character, whole and streamed; a stream <= 1.5x
the whole reply's work, or, where the whole reply costs less than streaming does at its least
(text with no marker costs the whole reply one search), <= 4x the floor.

Without a model profile a stream keeps its deltas and reads the reply at ``close()`` (every
event waits for a lone reasoning close anyway), so it costs the whole reply's work plus O(1)
per delta; ``--model NAME`` measures the stream that releases as it goes.

    python benchmarks/bench_work.py [--instructions] [--chars 20000] [--only NAME,...] [--model NAME]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]

from _common import instructions, machine  # noqa: E402
from property.test_hostile import FAMILIES  # noqa: E402

import toolrepair as tr  # noqa: E402
from toolrepair.testing import _count_calls  # noqa: E402

DELTA = 16
CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
EXTRA: dict[str, Callable[[int], str]] = {
    "pythonic_f_open": lambda n: "f(" * n,
    "open_braces": lambda n: "{" * n,
    "nested_quotes_lines": lambda n: ("> " * 64 + "line\n") * max(1, n // 64),
    "nested_quotes_then_call": lambda n: ("> " * 64 + "line\n") * max(1, n // 64) + CALL,
    "many_small_calls": lambda n: (CALL + "\n") * max(1, n // 4),
    "one_line_calls_code_spans": lambda n: ("`x` " + CALL + " ") * max(1, n // 4),
}
ALL = {**FAMILIES, **EXTRA}

# Every kind of code and reasoning the mask reads, so that none is first met inside a count.
WARM = f"`x` {CALL}\n> - ```\n{CALL}\n```\n<pre>{CALL}</pre> <!-- {CALL} -->\n    {CALL}\n<think>{CALL}</think>\n[l](u `d`) <b>`c`</b> {CALL}"


def warm(make: Callable[[int], str]) -> None:
    """Compiled configurations and patterns out of the counts: the mask's, and the paths a
    short text of the family itself takes."""
    for text in (CALL * 3, WARM, make(8)):
        whole(text)
        stream(text)


def text_of(make: Callable[[int], str], chars: int) -> str:
    unit = max(1.0, len(make(10)) / 10)
    return make(max(1, int(chars / unit)))


MODEL: str | None = None  # `--model`: whole and stream under that profile


def whole(t: str) -> object:
    return tr.salvage_text(t, tr.ANY_TOOL, model=MODEL)


def stream(t: str) -> object:
    s = tr.StreamSalvager(tr.ANY_TOOL, model=MODEL)
    return [s.feed(t[i : i + DELTA]) for i in range(0, len(t), DELTA)] + [s.close()]


def floor(t: str) -> object:
    return [tr.TextDelta(t[i : i + DELTA]) for i in range(0, len(t), DELTA)]


# The same three, as the code a callgrind run executes (``--instructions``).
RUNS = {whole: "bench_work.whole(t)\n", stream: "bench_work.stream(t)\n", floor: "bench_work.floor(t)\n"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--only", default="", help="comma-separated family names")
    parser.add_argument(
        "--model",
        default=None,
        help="a model profile (qwen3, ...): a stream then releases as it goes instead of reading "
        "the reply at close(), which without one it must (a lone reasoning close may come)",
    )
    args = parser.parse_args()
    global MODEL
    MODEL = args.model
    only = {name for name in args.only.split(",") if name}
    site = [p for p in sys.path if p.endswith("site-packages")]
    paths = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests"), *site]

    def cost(run: Callable[[str], object], name: str, t: str) -> float:
        if not args.instructions:
            return float(_count_calls(lambda: run(t)))
        setup = f"import toolrepair as tr, bench_work\nbench_work.MODEL = {MODEL!r}\n"
        setup += f"t = bench_work.text_of(bench_work.ALL[{name!r}], {args.chars})\n"
        setup += f"bench_work.warm(bench_work.ALL[{name!r}])\n"
        got = instructions(setup + RUNS[run], path=paths)
        base = bases.get(name)
        if base is None:
            base = bases[name] = instructions(setup, path=paths) or 0
        return float((got or 0) - base)

    bases: dict[str, int] = {}
    unit = "instructions" if args.instructions else "profile events"
    print(f"# work per character, {unit}; {machine()}; deltas of {DELTA}; model profile {MODEL}")
    print(f"{'family':30} {'chars':>7} {'whole':>9} {'stream':>9} {'floor':>7} {'s/w':>7} {'s/f':>7}  target")
    bound = 5_000 if args.instructions else 10
    worst: list[str] = []
    for name, make in ALL.items():
        if only and name not in only:
            continue
        t = text_of(make, args.chars)
        n = len(t)
        if not args.instructions:
            warm(make)
        w, s, f = (cost(run, name, t) / n for run in (whole, stream, floor))
        over = max(w, s) > bound or (s > 1.5 * w and s > 4 * f)
        if over:
            worst.append(name)
        mark = "NOT MET" if over else "met"
        print(f"{name:30} {n:7} {w:9.1f} {s:9.1f} {f:7.1f} {s / max(w, 1e-9):7.2f} {s / f:7.2f}  {mark}", flush=True)
    print(f"# over a target: {len(worst)} of the families shown")


if __name__ == "__main__":
    main()
