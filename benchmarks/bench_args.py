"""Argument decoding and schema application, timed against json.loads in the same run.

Run: python benchmarks/bench_args.py
Targets: 200-byte valid object <= 1.3x json.loads; 20 KB valid object <= 1.1x json.loads;
apply() of a typical 5-property object <= 25 us.
"""

from __future__ import annotations

import itertools
import json
import timeit
from collections.abc import Callable

from toolrepair._args import compile_schema, decode_arguments

REPEAT = 15


def best_us(function: Callable[[], object], number: int) -> float:
    """Best-of-REPEAT time per call, in microseconds."""
    return min(timeit.repeat(function, number=number, repeat=REPEAT)) / number * 1e6


def best_pair_us(baseline: Callable[[], object], ours: Callable[[], object], number: int) -> tuple[float, float]:
    """Best-of-REPEAT times of two calls, interleaved so that a busy machine slows both alike."""
    best_baseline = best_ours = float("inf")
    for _ in range(REPEAT):
        best_baseline = min(best_baseline, timeit.timeit(baseline, number=number))
        best_ours = min(best_ours, timeit.timeit(ours, number=number))
    return best_baseline / number * 1e6, best_ours / number * 1e6


def loops_for(function: Callable[[], object]) -> int:
    """Enough calls per timing to run for about 0.05 s."""
    number, _ = timeit.Timer(function).autorange()
    return max(1, number // 4)


SMALL = json.dumps(
    {
        "query": "weather in Paris tomorrow morning",
        "limit": 5,
        "unit": "celsius",
        "tags": ["forecast", "travel"],
        "include_hourly": True,
        "location": {"lat": 48.8566, "lon": 2.3522},
        "lang": "en",
    }
)

# A tool call that writes a file: one long string full of escapes, the common large case.
CODE = "".join(f'def f{i}(x):\n    return {{"k{i}": x * {i}, "s": "a\\tb"}}\n\n' for i in range(400))
LARGE_TEXT = json.dumps({"path": "src/generated.py", "content": CODE[:19_900], "overwrite": True})
# Many small records: more than 100 brackets, so the depth walk runs.
LARGE_RECORDS = json.dumps(
    {"rows": [{"id": i, "name": f"item {i}", "price": i * 1.5, "tags": ["a", "b"]} for i in range(260)]}
)

BROKEN = {
    "trailing comma": '{"query": "cats", "limit": 5,}',
    "single quotes": "{'query': 'cats', 'limit': 5}",
    "python literals": '{"query": "cats", "safe": True, "page": None}',
    "unquoted keys": '{query: "cats", limit: 5}',
    "comments": '{"query": "cats", // what to find\n "limit": 5 /* max */}',
    "missing comma": '{"query": "cats" "limit": 5}',
    "smart quotes": "{“query”: “cats”, “limit”: 5}",
    "invalid escape": '{"path": "C:\\Users\\me\\file.txt"}',
    "unescaped quotes": '{"text": "He said "hi" to me", "n": 1}',
    "doubled braces": '{{"query": "cats", "limit": 5}}',
    "double encoded": json.dumps(json.dumps({"query": "cats", "limit": 5})),
    "code fence": '```json\n{"query": "cats", "limit": 5}\n```',
    "truncated (refused)": '{"query": "cats", "limit": ',
    "prose (refused)": "Sure! I will search for cats now.",
}

SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to search for"},
        "limit": {"type": "integer", "minimum": 1},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "strict": {"type": "boolean"},
    },
    "required": ["query"],
    "additionalProperties": False,
}
ARGS = {"query": "cats", "limit": 5, "unit": "celsius", "tags": ["a", "b"], "strict": True}
ARGS_TO_FIX = {"Query": "cats", "limit": "5", "unit": "Celsius", "tags": '["a", "b"]', "strict": "true"}


def decode_or_error(text: str) -> Callable[[], object]:
    def run() -> object:
        try:
            return decode_arguments(text)
        except ValueError as error:
            return error

    return run


def main() -> None:
    rows: list[tuple[str, str, str, str]] = []

    for label, text, target in (
        ("valid 200 B", SMALL, 1.3),
        ("valid 20 KB (file content)", LARGE_TEXT, 1.1),
        ("valid 20 KB (260 records)", LARGE_RECORDS, 1.1),
    ):
        baseline_call = lambda text=text: json.loads(text)  # noqa: E731
        ours_call = lambda text=text: decode_arguments(text)  # noqa: E731
        baseline, ours = best_pair_us(baseline_call, ours_call, loops_for(baseline_call))
        ratio = ours / baseline
        verdict = "ok" if ratio <= target else "OVER"
        rows.append(
            (
                f"decode {label} ({len(text)} chars)",
                f"{ours:9.2f}",
                f"{ratio:5.2f}x json.loads",
                f"<= {target}x {verdict}",
            )
        )

    for label, text in BROKEN.items():
        call = decode_or_error(text)
        rows.append((f"decode broken: {label}", f"{best_us(call, loops_for(call)):9.2f}", "", ""))

    compiled = compile_schema(SCHEMA)
    for label, args in (("valid", ARGS), ("rename + 4 coercions", ARGS_TO_FIX)):
        call = lambda args=args: compiled.apply(args, tool="search")  # noqa: E731
        spent = best_us(call, loops_for(call))
        verdict = ("ok" if spent <= 25 else "OVER") if label == "valid" else ""
        rows.append((f"apply 5 properties, {label}", f"{spent:9.2f}", "", "<= 25 us " + verdict if verdict else ""))
    fresh = itertools.count()
    cold = best_us(lambda: compile_schema({**SCHEMA, "title": f"tool {next(fresh)}"}), 20)
    rows.append(("compile_schema, new schema (metaschema check)", f"{cold:9.2f}", "", ""))
    warm = best_us(lambda: compile_schema(SCHEMA), 2000)
    rows.append(("compile_schema, same content again (cached)", f"{warm:9.2f}", "", ""))

    width = max(len(row[0]) for row in rows)
    print(f"{'case':<{width}}  {'us/call':>9}  {'ratio':<19}  target")
    print("-" * (width + 48))
    for name, spent_text, ratio_text, target_text in rows:
        print(f"{name:<{width}}  {spent_text}  {ratio_text:<19}  {target_text}")


if __name__ == "__main__":
    main()
