"""StreamSalvager over a 200 KB reply with 50 calls, fed in 16-character deltas, against the
floor of any stream: wrapping each delta in one ``TextDelta``. Both timed in turn in one loop
(``best_together``).

Target (issue 17): <= 3x that floor on the plain reply. Two replies: plain prose between the
calls, and prose dense with marker characters (``{``, ``<``, ``:``, fences), where the pass
does real work; ``salvage_text`` of the whole reply is printed beside for reference.

Plain reply, default / ``mask_reasoning=False``, on a shared 2-core machine under load (ratios
swing with it): 6.4x / 11.1x (before plain deltas passed the pass by: 21.7x / 22.7x). Counted
in CPU instructions instead (``valgrind --tool=cachegrind``, each run less one that only builds
the deltas; the same on any machine): 2.8x / 4.8x (before: 12.9x / 13.7x). What remains: the
plain path itself (~3.4x: the anchor search, the marker-prefix check, the call), the pass
around each call (~6 entries while it is written) and the code mask reading every line.

``--instructions`` (issue 31, item 2) counts CPU instructions under callgrind instead, on
200 KB of ordinary Markdown (``corpus_markdown.py``) with no call and with one call at its end:
the stream in 16-character deltas, without a model profile and with ``hermes`` (the stream that
releases as it goes), against ``salvage_text`` of the same text under the same profile (target
<= 3x) and against the floor. Each run less one that only builds its inputs.

    python benchmarks/bench_stream.py [--instructions]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_together, instructions, machine

import toolrepair as tr

DELTA = 16
PLAIN = ("the", "model", "writes", "some", "prose", "about", "tools,", "results", "and", "answers.")
DENSE = ("the", "model", "writes", "{braces}", "<tags>", "note:", "x[0]", "```", "results", "and")
ALLOWED = ["web_search"]


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


def streamed(deltas: list[str], **kw: object) -> list[object]:
    s = tr.StreamSalvager(ALLOWED, **kw)  # type: ignore[arg-type]
    events: list[object] = []
    for d in deltas:
        events += s.feed(d)
    return events + s.close()


def floor_feeds(deltas: list[str]) -> list[object]:
    """Reference, not a competitor: the least any stream can do per delta, which is to hand
    it back as one ``TextDelta`` (no markers looked for, nothing held)."""
    events: list[object] = []
    for d in deltas:
        events += [tr.TextDelta(d)]
    return events


CALL = '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'


def counted() -> None:
    """Markdown streamed against its whole reply, in instructions (``--instructions``)."""
    here = Path(__file__).resolve().parent
    paths = [str(here.parent), str(here), *(p for p in sys.path if p.endswith("site-packages"))]
    print(f"stream — {machine()}; {DELTA}-character deltas; instructions under callgrind")
    for model in (None, "hermes"):
        for label, tail in (("200 KB Markdown, no call", ""), ("200 KB Markdown, one call at its end", CALL)):
            setup = (
                "import toolrepair as tr, bench_stream as b, corpus_markdown as c\n"
                f"t = c.markdown(200_000) + {tail!r}\nd = [t[i : i + b.DELTA] for i in range(0, len(t), b.DELTA)]\n"
                f"m = {model!r}\nw = c.markdown(20_000) + b.CALL\n"
                # What is built on first use (the mask's patterns, `regex`), out of the counts.
                "tr.salvage_text(w, b.ALLOWED, model=m)\nb.streamed([w[i : i + 16] for i in range(0, len(w), 16)], model=m)\n"
            )
            base = instructions(setup, path=paths)
            if base is None:
                print("valgrind is not installed: no instruction counts")
                return
            cost = {
                name: (instructions(setup + code, path=paths) or 0) - base
                for name, code in (
                    ("floor", "b.floor_feeds(d)\n"),
                    ("whole", "tr.salvage_text(t, b.ALLOWED, model=m)\n"),
                    ("stream", "b.streamed(d, model=m)\n"),
                )
            }
            ratio = cost["stream"] / max(cost["whole"], 1)
            verdict = "met" if ratio <= 3 else "NOT MET"
            print(
                f"  profile {model!s:<7} {label:<38} whole {cost['whole']:>12,}  stream {cost['stream']:>12,}"
                f"  floor {cost['floor']:>10,}  stream/whole {ratio:7.2f}x  target <= 3x: {verdict}"
                f"  stream/floor {cost['stream'] / max(cost['floor'], 1):6.2f}x",
                flush=True,
            )


def main() -> None:
    if "--instructions" in sys.argv[1:]:
        counted()
        return
    print(f"stream — {machine()}; {DELTA}-character deltas")
    for name, words, target in (("plain prose", PLAIN, 3.0), ("marker-dense prose", DENSE, None)):
        text = reply(words)
        deltas = [text[i : i + DELTA] for i in range(0, len(text), DELTA)]
        calls = tr.salvage_text(text, ALLOWED).calls  # the dense reply's fences mask some
        assert tuple(e.call for e in streamed(deltas) if isinstance(e, tr.ToolCallReady)) == calls
        assert len(calls) == 50 or words is DENSE
        floor, default, no_reasoning, whole = best_together(
            lambda d=deltas: floor_feeds(d),
            lambda d=deltas: streamed(d),
            lambda d=deltas: streamed(d, mask_reasoning=False),
            lambda t=text: tr.salvage_text(t, ALLOWED),
            repeat=5,
        )
        print(f"{name}: {len(text)} chars, {len(deltas)} deltas, {len(calls)} calls")
        print(f"  floor: one TextDelta per delta (baseline)  {floor * 1e3:8.2f} ms   1.00x")
        for label, t in (("stream, default", default), ("stream, mask_reasoning=False", no_reasoning)):
            note = ""
            if target is not None:
                note = f"target <= {target:g}x: {'met' if t / floor <= target else 'NOT MET'}"
            print(
                f"  {label:<40} {t * 1e3:8.2f} ms {t / floor:6.2f}x  ({t / len(deltas) * 1e6:5.2f} us per feed) {note}"
            )
        print(f"  reference: salvage_text of the whole reply  {whole * 1e3:8.2f} ms {whole / floor:6.2f}x")


if __name__ == "__main__":
    main()
