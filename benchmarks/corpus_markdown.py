"""A generated corpus of ordinary Markdown with no tool call, for the salvage benchmarks.

What assistants write every day: paragraphs with links ``[text](url)``, inline code, ``[1]``
citations, ``{x}`` placeholders, ``<br>`` breaks, bullet lists, ``key: value`` lines, headings,
and a fenced JSON block every few paragraphs. It is generated from a fixed seed, by rules that
know nothing of the salvage engine (no marker of any dialect is placed on purpose).

    python benchmarks/corpus_markdown.py [SIZE] > sample.md
"""

from __future__ import annotations

import json
import random
import sys

__all__ = ["markdown"]

WORDS = (
    "the",
    "model",
    "returns",
    "a",
    "list",
    "of",
    "results",
    "for",
    "each",
    "query",
    "and",
    "then",
    "summarises",
    "them",
    "with",
    "care",
    "about",
    "sources",
    "weather",
    "in",
    "paris",
    "is",
    "mild",
    "today",
    "config",
    "option",
    "value",
    "server",
    "request",
    "response",
    "user",
    "data",
    "table",
)
KEYS = ("name", "status", "region", "timeout", "retries", "owner", "version", "note")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
    for _ in range(rng.randint(0, 3)):
        k = rng.randrange(len(words))
        kind = rng.randrange(6)
        if kind == 0:
            words[k] = f"[{words[k]}](https://example.com/{rng.choice(WORDS)}/{rng.randint(1, 999)})"
        elif kind == 1:
            words[k] = f"`{rng.choice(WORDS)}_{rng.choice(WORDS)}()`"
        elif kind == 2:
            words[k] = f"{words[k]} [{rng.randint(1, 12)}]"
        elif kind == 3:
            words[k] = f"{{{rng.choice(WORDS)}}}"
        elif kind == 4:
            words[k] = f"{words[k]}<br>"
        else:
            words[k] = f"**{words[k]}**"
    return " ".join(words).capitalize() + rng.choice((".", ".", ".", "?", "!", ":"))


def _block(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
    if kind == 1:
        return "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
    if kind == 2:
        return "\n".join(
            f"{rng.choice(KEYS)}: {rng.choice(WORDS)} {rng.randint(0, 99)}" for _ in range(rng.randint(2, 6))
        )
    if kind == 3:
        return "#" * rng.randint(1, 3) + " " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).title()
    return " ".join(_sentence(rng) for _ in range(rng.randint(1, 3)))


def _json_fence(rng: random.Random) -> str:
    value = {
        rng.choice(KEYS): rng.choice((rng.randint(0, 1000), rng.choice(WORDS), [1, 2, 3], {"a": True}))
        for _ in range(rng.randint(2, 5))
    }
    return "```json\n" + json.dumps(value, indent=2) + "\n```"


def markdown(n_chars: int = 1_000_000, seed: int = 17) -> str:
    """About ``n_chars`` characters (cut at a block boundary past it) of generated Markdown."""
    rng = random.Random(seed)
    blocks: list[str] = []
    size = 0
    while size < n_chars:
        block = _json_fence(rng) if rng.randrange(5) == 0 else _block(rng)
        blocks.append(block)
        size += len(block) + 2
    return "\n\n".join(blocks) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000))
