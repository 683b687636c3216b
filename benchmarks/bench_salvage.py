"""salvage_text against baselines measured in the same run, each pair timed in turn.

    python benchmarks/bench_salvage.py [--instructions | --scan]

``--instructions`` counts the two Markdown rows in CPU instructions under callgrind instead
(valgrind must be installed): each run less one that only builds the corpus and warms the
package, so the ratios are the same on a busy machine as on a quiet one. It also counts the
marker search alone (``search_all``): every subgroup's search crossing the text once, the
least any pass of this design costs, whatever else it does.

``--scan`` times that search subgroup by subgroup against ``text.lower()``, and beside it the
one-pass alternatives: one search of every subgroup's pattern joined in one alternation, and
one character class of every anchor (a floor under any one-pass regex scan, which then still
has to verify each marker).

Targets (issue 17, "Speed after the change"), every ratio from one ``best_together`` loop in
which the baseline and the subject take turns, so a busy spell slows both alike:

- 1 MB of prose without an anchor character: <= 0.5x ``text.lower()``;
- 1 MB of ordinary Markdown with no call (``corpus_markdown``: links, inline code, citations,
  ``key: value`` lines, ``{x}``, ``<br>``, a fenced JSON block every few paragraphs):
  <= 10x ``text.lower()``; with one Hermes call at its end <= 15x (issue 31);
- a 2 KB reply with three Hermes calls: <= 6x ``json.loads`` of its three payloads;
- a refused candidate costs at most three accepted ones: ``'<tool_call>{' * n`` per marker
  <= 3x the 2 KB reply's cost per call.

Where the Markdown time goes (CPython 3.11, instructions counted under callgrind, so load does
not move them): ``text.lower()`` of the corpus is 5.9-6.8 M instructions, ``salvage_text`` 214-236 M
(35-36x; it was 1,170 M, 197x, while the code mask was asked about every marker first). With
one call at its end 1,271 M (187x; 1,343 M, 198x, before ``_lead``): the code mask then reads
every line, 1,032 M of it, about 31,800 instructions a line (34,000 before), Python calls at
about 1,500 instructions each (a plain paragraph run 5,000 a line, a list item line 55,000,
a paragraph line with a code span, ``<br>`` or link 130,000-160,000 with its blank line, a
fenced JSON block of ten lines 177,000). Since the runs (``_WIDE``) take bullet items,
headings, whole fences, code spans, one-word tags and link tails too, one call at the end is
641 M (99-102x): the mask 404 M, about 12,400 a line; 500 lines are still read one by one. Of
that, the run matches are 112 M and finding the spans and fences in them 75 M (regex engine),
the rest Python: a region per fence line and span (17,198), a ``_plain`` call per run.
Of the no-call cost, about 38 % is the marker search alone: each of the 13 marker subgroups'
searches crosses the text once at one to two ns a character, and nine of them (``<`` twice,
``:`` twice, ``[`` three times, ``>``, ``{``) do: 89 M instructions counted by itself
(``search_all``, 15x ``text.lower()``), much of it the ``{`` and ``[`` subgroups' gated hits (a
Python frame each) that the markerless ``json`` dialect's gates let through; one search of
their union is dearer still in ``re`` (``--scan``). Without the markerless ``json``
dialect the no-call row is 79 M (13x); with it 237 M (36-40x: ``lower()`` itself counts
6.0-6.6 M from run to run): two thirds of it are that dialect's, its ``{`` and ``[`` gated hits
and the 1,317 data braces of the fenced JSON blocks it reads (a pop, one reader call, one JSON
decode, one call-shape reading each). The 2 KB reply: 0.69 M instructions
against 0.053-0.058 M (by hash seed) for ``json.loads`` of its payloads (12-13x; 6x would be
about 0.33 M): the marker scan 0.22 M (0.10 M building it, of which 0.04 M regex searches;
0.12 M for its four pops, mostly Python), the Hermes reader 0.20 M for its three reads, the
code mask 0.13 M for its three answers, the rest of the pass (taking the calls, the result)
0.14 M. The reader and the mask alone spend the whole 6x budget.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_together, instructions, machine, row
from corpus_markdown import markdown

import toolrepair as tr
from toolrepair._salvage._engine import config_for

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "a",
    "model",
    "explains",
    "its",
    "plan",
    "and",
    "then",
    "answers",
    "the",
    "question",
    "with",
    "some",
    "care",
    "about",
    "the",
    "details",
    "of",
    "the",
    "weather",
    "in",
    "paris",
]
ALLOWED = ["web_search", "get_weather", "calculator"]
REFUSED_N = 2000
# Every built-in dialect but the markerless `json`, which reads every brace that may open an object.
MARKED = [name for name in tr.DIALECTS if name != "json"]
LAST_CALL = '<tool_call>\n{"name": "web_search", "arguments": {"query": "x"}}\n</tool_call>\n'


def prose(n_chars: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))).capitalize() + ". "
        out.append(sentence)
        size += len(sentence)
    return "".join(out)[:n_chars]


def reply_with_three_calls() -> tuple[str, list[str]]:
    payloads = [
        json.dumps(
            {
                "name": "web_search",
                "arguments": {
                    "query": "weather in Paris tomorrow",
                    "limit": 5,
                    "filters": {"lang": "en", "safe": True},
                },
            }
        ),
        json.dumps({"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": 3}}),
        json.dumps({"name": "calculator", "arguments": {"expression": "(21 * 9 / 5) + 32"}}),
    ]
    parts = [
        prose(500, 1),
        "\n<tool_call>\n",
        payloads[0],
        "\n</tool_call>\n",
        prose(300, 2),
        "\n<tool_call>\n",
        payloads[1],
        "\n</tool_call>\n",
        prose(300, 3),
        "\n<tool_call>\n",
        payloads[2],
        "\n</tool_call>\n",
        prose(400, 4),
    ]
    return "".join(parts), payloads


_SCAN = json.JSONDecoder(strict=False).scan_once


def floor_extractor(text: str, allowed: list[str]) -> tr.SalvageResult:
    """Reference, not a competitor: the least a Python extractor can do on this reply alone
    (Hermes tags only, no masks, no other dialect, exact names, no error handling). What
    salvage_text costs beyond this is its generality: forty dialects, masks, the allowlist."""
    names = set(allowed)
    calls, cuts, pos = [], [], 0
    while (p := text.find("<tool_call>", pos)) != -1:
        i = p + 11
        while text[i] in " \n":
            i += 1
        value, j = _SCAN(text, i)
        k = text.find("</tool_call>", j)
        end = k + 12
        if value["name"] in names:
            calls.append(tr.ToolCall(value["name"], value["arguments"], None, "hermes", (p, end)))
            cuts.append((p, end))
        pos = end
    out, prev = [], 0
    for s, e in cuts:
        out.append(text[prev:s].rstrip())
        prev = e
    out.append(text[prev:])
    return tr.SalvageResult(tuple(calls), "".join(out), ())


def verdict(ratio: float, limit: float) -> str:
    return f"target <= {limit:g}x: {'met' if ratio <= limit else 'NOT MET'}"


def count_markdown() -> None:
    """The Markdown rows in instructions (``--instructions``)."""
    here = Path(__file__).resolve().parent
    paths = [str(here.parent), str(here), *(p for p in sys.path if p.endswith("site-packages"))]
    setup = "import toolrepair as tr, bench_salvage as b\nmd = b.markdown(1_000_000)\nmdc = md + b.LAST_CALL\n"
    # Every pattern the mask builds on first use (and `regex` with them), out of the counts: a
    # slice of the same corpus read to a call at its end.
    setup += "tr.salvage_text(md[:20_000] + b.LAST_CALL, b.ALLOWED)\n"
    setup += "tr.salvage_text(md[:20_000] + b.LAST_CALL, b.ALLOWED, dialects=b.MARKED)\n"
    base = instructions(setup, path=paths)
    if base is None:
        print("valgrind is not installed")
        return
    lower = (instructions(setup + "md.lower()\n", path=paths) or 0) - base
    print(f"salvage — {machine()}; instructions under callgrind")
    print(f"{'text.lower(), 1 MB Markdown (baseline)':<52} {lower:14,}")
    for label, code, limit in (
        ("salvage_text, 1 MB Markdown, no call", "tr.salvage_text(md, b.ALLOWED)\n", 10),
        ("salvage_text, 1 MB Markdown, one call at its end", "tr.salvage_text(mdc, b.ALLOWED)\n", 15),
    ):
        got = (instructions(setup + code, path=paths) or 0) - base
        print(f"{label:<52} {got:14,} {got / lower:8.2f}x  {verdict(got / lower, limit)}", flush=True)
    # The floor under the no-call row: the marker search alone, every subgroup crossing the text;
    # and the no-call row without the one dialect that reads data braces.
    for label, code in (
        ("  no call: the marker search alone (--scan)", "b.search_all(md)\n"),
        ("  no call, every dialect but the markerless json", "tr.salvage_text(md, b.ALLOWED, dialects=b.MARKED)\n"),
    ):
        got = (instructions(setup + code, path=paths) or 0) - base
        print(f"{label:<52} {got:14,} {got / lower:8.2f}x", flush=True)


def search_all(text: str) -> int:
    """What every pass over ``text`` costs at least: each marker subgroup's search crossing it
    once, from each possible start found to the next (the scan's own ``next_start``), as the
    default configuration (every built-in dialect, both masks) compiles them. The hits found."""
    return sum(crossing(sub, text) for sub in config_for(None).finder.subgroups)


def crossing(sub: Any, text: str) -> int:
    """One subgroup's search crossing ``text``, from each possible start to the next; its hits."""
    hits = 0
    q = sub.next_start(text, 0)
    while q != -1:
        hits += 1
        q = sub.next_start(text, q + 1)
    return hits


def union_search(text: str) -> int:
    """The same possible starts found by one search of every subgroup's pattern joined in one
    alternation (``MarkerFinder.possible``), from each match to the next: the one-pass design."""
    possible, hits = config_for(None).finder.possible, 0
    m = possible(text, 0)
    while m is not None:
        hits += 1
        m = possible(text, m.start() + 1)
    return hits


def anchor_class(text: str) -> int:
    """A floor under any one-pass regex scan: every anchor character found by one character
    class, no marker verified."""
    anchors = config_for(None).finder.anchors
    return len(re.findall("[" + "".join(map(re.escape, anchors)) + "]", text))


def scan() -> None:
    """``--scan``: where the Markdown floor lies (issue 31, item 2). The marker search alone,
    subgroup by subgroup, and the one-pass alternatives, against ``text.lower()`` in one run."""
    md = markdown(1_000_000)
    finder = config_for(None).finder
    print(f"marker search — {machine()}; {len(finder.subgroups)} subgroups; 1 MB Markdown")
    fns = [md.lower, lambda: search_all(md), lambda: union_search(md), lambda: anchor_class(md)]
    fns += [lambda: tr.salvage_text(md, ALLOWED), lambda: tr.salvage_text(md, ALLOWED, dialects=MARKED)]
    lower, alone, union, charset, whole, others = best_together(*fns, repeat=5)
    print(row("text.lower() (baseline)", lower, lower))
    print(row(f"every subgroup's search ({search_all(md):,} starts)", alone, lower))
    print(row(f"one search of their union ({union_search(md):,} starts)", union, lower))
    print(row(f"one character class of the anchors ({anchor_class(md):,})", charset, lower))
    print(row("salvage_text, no call (target <= 10x)", whole, lower))
    print(row("  the same without the markerless `json` dialect", others, lower))
    for k, sub in enumerate(finder.subgroups):
        base, got = best_together(md.lower, lambda sub=sub: crossing(sub, md), repeat=3)
        print(row(f"  subgroup {k}: {sub.anchor!r} at {sub.offset}, {len(sub.entries)} markers", got, base))


def main() -> None:
    if "--instructions" in sys.argv[1:]:
        count_markdown()
        return
    if "--scan" in sys.argv[1:]:
        scan()
        return
    clean = prose(1_000_000)
    md = markdown(1_000_000)
    md_call = md + LAST_CALL  # the mask then reads every line before the call
    reply, payloads = reply_with_three_calls()
    refused = "<tool_call>{" * REFUSED_N
    assert len(tr.salvage_text(reply, ALLOWED).calls) == 3
    assert tr.salvage_text(clean, ALLOWED).calls == () and tr.salvage_text(md, ALLOWED).calls == ()
    assert len(tr.salvage_text(refused, ALLOWED).rejected) == REFUSED_N
    assert len(tr.salvage_text(md_call, ALLOWED).calls) == 1
    assert [c.arguments for c in floor_extractor(reply, ALLOWED).calls] == [
        c.arguments for c in tr.salvage_text(reply, ALLOWED).calls
    ]

    print(f"salvage — {machine()}; {len(tr.DIALECTS)} built-in dialects")
    lower, clean_t = best_together(clean.lower, lambda: tr.salvage_text(clean, ALLOWED), repeat=9)
    print(row("text.lower(), 1 MB prose (baseline)", lower, lower))
    print(row("salvage_text, 1 MB prose, no anchor character", clean_t, lower, verdict(clean_t / lower, 0.5)))
    lower_md, md_t = best_together(md.lower, lambda: tr.salvage_text(md, ALLOWED), repeat=5)
    print(row(f"text.lower(), {len(md) // 1000} KB Markdown (baseline)", lower_md, lower_md))
    print(row(f"salvage_text, {len(md) // 1000} KB Markdown, no call", md_t, lower_md, verdict(md_t / lower_md, 10)))
    lower_md, md_call_t = best_together(md.lower, lambda: tr.salvage_text(md_call, ALLOWED), repeat=3)
    label = f"salvage_text, {len(md) // 1000} KB Markdown, one call at its end"
    print(row(label, md_call_t, lower_md, verdict(md_call_t / lower_md, 15)))
    loads, reply_t, floor = best_together(
        lambda: [json.loads(p) for p in payloads],
        lambda: tr.salvage_text(reply, ALLOWED),
        lambda: floor_extractor(reply, ALLOWED),
    )
    print(row(f"json.loads x3 payloads ({sum(map(len, payloads))} B) (baseline)", loads, loads))
    print(row(f"salvage_text, {len(reply)} B reply, 3 Hermes calls", reply_t, loads, verdict(reply_t / loads, 6)))
    print(row("  reference: minimal Hermes-only extractor (floor)", floor, loads))
    per_call, refused_t = best_together(
        lambda: tr.salvage_text(reply, ALLOWED), lambda: tr.salvage_text(refused, ALLOWED), repeat=7
    )
    per_call /= 3
    per_refused = refused_t / REFUSED_N
    print(row("2 KB reply, per accepted call (baseline)", per_call, per_call))
    print(
        row(
            f"'<tool_call>{{' * {REFUSED_N}, per refused marker",
            per_refused,
            per_call,
            verdict(per_refused / per_call, 3),
        )
    )


if __name__ == "__main__":
    main()
