"""Fuzz every public entry point with one invariant: it returns a value or raises a
``ToolRepairError`` (``salvage_text``, ``StreamSalvager`` and ``serialize_result``: returns).
One differential check too: ``salvage_text`` and ``StreamSalvager`` (the one pass, whole and fed in pieces) agree.

With atheris (``pip install atheris``), libFuzzer drives it, coverage-guided::

    python fuzz/fuzz_toolrepair.py -max_total_time=60
    python fuzz/fuzz_toolrepair.py -runs=100000

Without atheris it falls back to a deterministic random-input loop with the same invariant::

    python fuzz/fuzz_toolrepair.py --runs 20000 [--seconds 25] [--seed 0]

Any other exception is a bug: libFuzzer saves the input as ``crash-*``; the fallback loop
prints the input and exits with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
from typing import Any

try:
    import atheris
except ImportError:  # the fallback loop below needs nothing but the standard library
    atheris = None

if atheris is not None:
    with atheris.instrument_imports():
        import toolrepair as tr
        from toolrepair._args import decode_arguments
else:
    import toolrepair as tr
    from toolrepair._args import decode_arguments

# Byte 0xFF splits the input; every other piece picks one of these, so the fuzzer reaches
# dialect syntax without having to guess multi-byte markers.
MARKERS = (
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "</function>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    ":",
    ",",
    "=",
    "\\",
    "\n",
    "```",
    "~~~",
    "<think>",
    "</think>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "functools[",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|channel|>",
    "to=functions.",
    "<|message|>",
    "<|call|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|tool_call_start|>",
    "<parameter=",
    "<invoke name=",
    "<arg_key>",
    '"name": "sink"',
    '"arguments": ',
    "[sink(",
    "a=",
    "open(",
    "lambda",
    "NaN",
    "\ud800",
    "\x00",
    "\u200b",
    "Sink",
    "functions.sink",
)


def sink(a: Any = None, b: str = "", n: int = 0) -> str:
    return "ok"


async def asink(a: Any = None) -> str:
    return "ok"


REGISTRY = tr.ToolRegistry([sink, asink], max_repairs=1000)


def text_of(data: bytes) -> str:
    """Decode with surrogateescape (lone surrogates reach the library) and splice markers."""
    pieces = data.split(b"\xff")
    out = []
    for i, piece in enumerate(pieces):
        rest = piece
        if i % 2 and piece:
            out.append(MARKERS[piece[0] % len(MARKERS)])
            rest = piece[1:]
        out.append(rest.decode("utf-8", "surrogateescape"))
    return "".join(out)


def expect_documented(fn: Any, *args: Any) -> None:
    with contextlib.suppress(tr.ToolRepairError):  # documented errors are answers
        fn(*args)


def one_input(data: bytes) -> None:
    """The invariant, on one input. The first byte picks the entry point."""
    if not data:
        return
    which, text = data[0] % 6, text_of(data[1:])
    if which == 0:
        result = tr.salvage_text(text, tr.ANY_TOOL)
        assert isinstance(result, tr.SalvageResult)
        # Differential: the one pass over the whole text and the same pass fed in pieces.
        allowed = ["sink", "web_search"]
        masks = {"mask_fences": bool(data[0] & 8), "mask_reasoning": bool(data[0] & 16)}
        whole = tr.salvage_text(text, allowed, **masks)
        stream = tr.StreamSalvager(allowed, **masks)
        events = [e for i in range(0, len(text), 7) for e in stream.feed(text[i : i + 7])] + stream.close()
        assert [e.call for e in events if isinstance(e, tr.ToolCallReady)] == list(whole.calls)
        assert "".join(e.text for e in events if isinstance(e, tr.TextDelta)) == whole.content
    elif which == 1:
        stream = tr.StreamSalvager(["sink"])
        step = 1 + data[0] // 6 % 17
        for i in range(0, len(text), step):
            stream.feed(text[i : i + step])
        stream.close()
    elif which == 2:
        expect_documented(decode_arguments, text)
        expect_documented(decode_arguments, data[1:])
    elif which == 3:
        name, _, arguments = text.partition("\n")
        tr.repair_call({"name": name, "arguments": arguments}, REGISTRY)
        expect_documented(REGISTRY.execute, "sink", arguments)
        assert isinstance(REGISTRY.run({"name": name, "arguments": arguments}).content, str)
    elif which == 4:
        assert isinstance(asyncio.run(REGISTRY.arun({"name": "asink", "arguments": text})).content, str)
    else:
        value: Any = text
        for byte in data[1:16]:  # a small nested value shaped by the input
            value = [value] if byte & 1 else {"error" if byte & 2 else str(byte): value}
        assert isinstance(tr.serialize_result(value, max_chars=data[0] * 10 or None), str)


def fallback(runs: int, seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    start, done = time.monotonic(), 0
    while done < runs and time.monotonic() - start < seconds:
        size = rng.choice((8, 64, 512, 4096))
        data = bytes(rng.choice((0xFF, rng.randrange(256), rng.randrange(32, 127))) for _ in range(rng.randrange(size)))
        try:
            one_input(data)
        except Exception:
            print(f"escaped on input {data!r}", file=sys.stderr)
            raise
        done += 1
    print(f"fuzz: {done} inputs executed in {time.monotonic() - start:.1f} s, no exception escaped (random-input loop)")
    return 0


def main() -> int:
    if atheris is not None and not any(a.startswith("--") for a in sys.argv[1:]):
        atheris.Setup(sys.argv, one_input)
        atheris.Fuzz()  # exits the process; libFuzzer prints the number of runs
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=float("inf"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    return fallback(args.runs, args.seconds, args.seed)


if __name__ == "__main__":
    sys.exit(main())
