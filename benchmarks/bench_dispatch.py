"""Overhead of ToolRegistry.execute over a bare call of the same function, in one run.

    python benchmarks/bench_dispatch.py

Target: a valid call costs under 10 µs of overhead.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_together, machine, row

import toolrepair as tr


def web_search(query: str, limit: int = 5) -> str:
    return query


def main() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=10**9)
    args = {"query": "cats", "limit": 3}
    # The baseline and every subject in turn, in one loop.
    bare, valid, drift, namespaced, as_json, outcome = best_together(
        lambda: web_search(**args),
        lambda: registry.execute("web_search", args),
        lambda: registry.execute("WebSearch", args),
        lambda: registry.execute("functions.web_search", args),
        lambda: registry.execute("web_search", '{"query": "cats", "limit": 3}'),
        lambda: registry.run({"name": "web_search", "arguments": args}),
    )
    print(f"dispatch overhead — {machine()}")
    print(row("bare call web_search(**args) (baseline)", bare, bare))
    print(row("execute, valid call", valid, bare, f"overhead {(valid - bare) * 1e6:.2f} µs (target < 10 µs)"))
    print(row("execute, drifted name 'WebSearch'", drift, bare, f"overhead {(drift - bare) * 1e6:.2f} µs"))
    print(row("execute, 'functions.web_search'", namespaced, bare))
    print(row("execute, arguments as a JSON string", as_json, bare))
    print(row("run -> ToolOutcome (serialised result)", outcome, bare))


if __name__ == "__main__":
    main()
