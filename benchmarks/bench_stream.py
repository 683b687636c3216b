"""StreamSalvager over a 200 KB reply with 50 calls, fed in 16-character deltas, as a ratio to
salvage_text on the whole reply (both measured here, best of several runs).

Two replies: plain prose between the calls (salvage_text is then little more than a few
``str.find`` calls, so the ratio mostly measures the stream's fixed cost per ``feed``), and
prose dense with marker characters (``{``, ``<``, ``:``, fences), where both do real work.

    python benchmarks/bench_stream.py
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import toolrepair as tr

DELTA = 16
PLAIN = ("the", "model", "writes", "some", "prose", "about", "tools,", "results", "and", "answers.")
DENSE = ("the", "model", "writes", "{braces}", "<tags>", "note:", "x[0]", "```", "results", "and")


def reply(words: tuple[str, ...], chars: int = 200_000, calls: int = 50) -> str:
    rng = random.Random(1)
    parts: list[str] = []
    per_gap = chars // calls
    for i in range(calls):
        gap: list[str] = []
        size = 0
        while size < per_gap - 120:
            word = rng.choice(words)
            gap.append(word)
            size += len(word) + 1
        parts.append(" ".join(gap) + "\n")
        call = {"name": "web_search", "arguments": {"query": f"question {i}", "limit": i}}
        parts.append(f"<tool_call>{json.dumps(call)}</tool_call>\n")
    return "".join(parts)


def best(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def streamed(text: str, allowed: list[str], delta: int, **kw: object) -> list[object]:
    s = tr.StreamSalvager(allowed, **kw)  # type: ignore[arg-type]
    events: list[object] = []
    for i in range(0, len(text), delta):
        events += s.feed(text[i : i + delta])
    return events + s.close()


def floor_feeds(text: str, delta: int) -> list[object]:
    """Reference, not a competitor: the least any stream can do per delta, which is to hand
    it back as one ``TextDelta`` (no markers looked for, nothing held)."""
    events: list[object] = []
    for i in range(0, len(text), delta):
        events += [tr.TextDelta(text[i : i + delta])]
    return events


def main() -> None:
    allowed = ["web_search"]
    for name, words in (("plain prose", PLAIN), ("marker-dense prose", DENSE)):
        text = reply(words)
        whole = best(lambda text=text: tr.salvage_text(text, allowed))  # type: ignore[misc]
        result = tr.salvage_text(text, allowed)
        assert len(result.calls) == 50
        print(f"{name}: {len(text)} chars, 50 calls; salvage_text {whole * 1e3:.2f} ms")
        floor = best(lambda text=text: floor_feeds(text, DELTA), runs=3)  # type: ignore[misc]
        print(f"  reference: one TextDelta per {DELTA}-char delta, nothing else "
              f"{floor * 1e3:7.2f} ms  ratio {floor / whole:6.1f}x  (the floor for any stream)")
        for delta in (DELTA, 256):
            for label, kw in (("default", {}), ("mask_reasoning=False", {"mask_reasoning": False})):
                def run(text: str = text, delta: int = delta, kw: dict[str, object] = kw) -> list[object]:
                    return streamed(text, allowed, delta, **kw)

                t = best(run, runs=3)
                print(f"  stream, {delta:>3}-char deltas, {label:<21} {t * 1e3:7.2f} ms  ratio {t / whole:6.1f}x"
                      f"  ({t / (len(text) / delta) * 1e6:5.2f} us per feed)")


if __name__ == "__main__":
    main()
