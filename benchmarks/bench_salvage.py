"""salvage_text against baselines measured in the same run.

    python benchmarks/bench_salvage.py

- 1 MB of prose with no marker, as a ratio to ``text.lower()`` of the same text (target <= 1.0x);
- a 2 KB reply with three Hermes calls, as a ratio to ``json.loads`` of the three payloads
  (target <= 3x);
both with every built-in dialect enabled, and with the seed dialects alone for comparison.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best, machine, row

import toolrepair as tr

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "while", "a", "model", "explains", "its", "plan", "and", "then", "answers", "the", "question", "with", "some", "care", "about", "the", "details", "of", "the", "weather", "in", "paris"]


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
        json.dumps({"name": "web_search", "arguments": {"query": "weather in Paris tomorrow", "limit": 5,
                                                         "filters": {"lang": "en", "safe": True}}}),
        json.dumps({"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": 3}}),
        json.dumps({"name": "calculator", "arguments": {"expression": "(21 * 9 / 5) + 32"}}),
    ]
    parts = [prose(500, 1), "\n<tool_call>\n", payloads[0], "\n</tool_call>\n", prose(300, 2),
             "\n<tool_call>\n", payloads[1], "\n</tool_call>\n", prose(300, 3), "\n<tool_call>\n",
             payloads[2], "\n</tool_call>\n", prose(400, 4)]
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


def main() -> None:
    allowed = ["web_search", "get_weather", "calculator"]
    text = prose(1_000_000)
    reply, payloads = reply_with_three_calls()
    assert len(tr.salvage_text(reply, allowed).calls) == 3
    assert tr.salvage_text(text, allowed).calls == ()

    lower = best(text.lower, repeat=9)
    clean_all = best(lambda: tr.salvage_text(text, allowed), repeat=9)
    clean_seed = best(lambda: tr.salvage_text(text, allowed, dialects=["hermes", "function_tag", "json"]), repeat=9)
    loads = best(lambda: [json.loads(p) for p in payloads])
    reply_all = best(lambda: tr.salvage_text(reply, allowed))
    reply_seed = best(lambda: tr.salvage_text(reply, allowed, dialects=["hermes", "function_tag", "json"]))
    assert [c.arguments for c in floor_extractor(reply, allowed).calls] == [
        c.arguments for c in tr.salvage_text(reply, allowed).calls
    ]
    floor = best(lambda: floor_extractor(reply, allowed))

    print(f"salvage — {machine()}; {len(tr.DIALECTS)} built-in dialects")
    print(row("text.lower(), 1 MB prose (baseline)", lower, lower))
    print(row("salvage_text, 1 MB prose, all dialects", clean_all, lower, "target <= 1.0x"))
    print(row("salvage_text, 1 MB prose, seed dialects", clean_seed, lower))
    print(row(f"json.loads x3 payloads ({sum(map(len, payloads))} B) (baseline)", loads, loads))
    print(row(f"salvage_text, {len(reply)} B reply, 3 calls, all dialects", reply_all, loads, "target <= 3x"))
    print(row(f"salvage_text, {len(reply)} B reply, 3 calls, seed dialects", reply_seed, loads))
    print(row("  reference: minimal Hermes-only extractor (floor)", floor, loads))


if __name__ == "__main__":
    main()
