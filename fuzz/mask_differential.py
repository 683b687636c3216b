"""The code mask against markdown-it-py (CommonMark), for as many generated texts as asked.

Each text comes from the grammar in ``tests/property/mask_oracle.py`` (containers, fences,
HTML blocks, code spans, indented code, headings, LF/CR/CRLF, Unicode whitespace, planted
Hermes calls, plain and with Markdown in their arguments) and is checked both ways there: no
salvaged call's marker lies in code markdown-it-py reports (a fence, a code span, HTML code),
and a call in plain paragraph text is salvaged. One text in ``--stream-every`` is also
streamed in random pieces and must give what ``salvage_text`` gives.

    python fuzz/mask_differential.py --count 1000000 --seed 0 [--out disagreements.jsonl]

Prints progress every ``--every`` texts and a summary: texts, calls taken, calls salvaged from
code (must be 0), stream mismatches (must be 0), and recall, the texts and markers where a call
in plain text was masked, by the fail-closed rule that may apply (``fail_closed_class``; the mask
fails closed by design where readings part, see ``toolrepair._salvage._mask``; ``none`` is a loss
no rule explains). Exits 1 on a call from code or a stream mismatch.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.property.mask_oracle import RefereeError, fail_closed_class, judge, markdown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", type=int, default=50_000)
    parser.add_argument("--stream-every", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write each disagreement as a JSON line")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kinds: collections.Counter[str] = collections.Counter()
    losses: collections.Counter[str] = collections.Counter()
    stream_mismatches = referee_crashes = texts_losing = taken = 0
    out = args.out.open("w") if args.out else None
    for i in range(1, args.count + 1):
        text = markdown(rng.choice, rng.randint)
        # Streamed for one text in --stream-every (the test suite streams every one).
        chunks = [rng.randint(1, 9) for _ in range(rng.randint(1, 6))] if i % args.stream_every == 0 else []
        try:
            got, found = judge(text, chunks)
            taken += got
        except RefereeError:
            referee_crashes += 1  # markdown-it-py itself raised: nothing to compare with
            found = []
        except AssertionError:
            stream_mismatches += 1
            found = []
            if out:
                out.write(json.dumps({"text": text, "chunks": chunks, "kind": "stream"}) + "\n")
                out.flush()
        if any(not d.salvaged for d in found):
            texts_losing += 1
            losses[fail_closed_class(text) or "none"] += 1
        for d in found:
            kinds[f"{d.kind}:{'salvaged' if d.salvaged else 'masked'}"] += 1
            if out:
                out.write(
                    json.dumps({"text": d.text, "marker": d.marker, "kind": d.kind, "salvaged": d.salvaged}) + "\n"
                )
                out.flush()
        if i % args.every == 0:
            print(
                f"{i} texts, calls taken {taken}, disagreements {dict(kinds)}, "
                f"texts losing a call {texts_losing} {dict(losses)}, "
                f"stream mismatches {stream_mismatches}, referee crashes {referee_crashes}",
                flush=True,
            )
    from_code = sum(n for k, n in kinds.items() if k.endswith(":salvaged"))
    print(
        f"done: {args.count} texts (seed {args.seed}), calls taken {taken}, calls from code {from_code}, "
        f"texts losing a plain call {texts_losing} {dict(losses)}, disagreements {dict(kinds)}, "
        f"stream mismatches {stream_mismatches}, referee crashes {referee_crashes}",
        flush=True,
    )
    return 1 if from_code or stream_mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
