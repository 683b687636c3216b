"""`toolrepair audit` and `toolrepair fix` on a generated log, against reading it.

The log mixes what real logs hold: chat completions with native calls (some drifted or broken),
replies with calls written as text, and plain prose. The baseline ("floor") is reading the
file line by line and `json.loads` of every line: the least any audit must do. Floor, audit and
fix run in turn, best of N each, so a busy spell of a shared machine slows all three alike;
wall and CPU time are both shown (CPU time leaves out waiting for a core, so it moves less).
Peak RSS is measured in child processes on the log and on a log four times its size: flat
memory means the two peaks are about equal.

    python benchmarks/bench_audit.py [--lines 100000] [--repeat 3] [--ray] [--stages]
    python benchmarks/bench_audit.py --kinds [--instructions]

``--kinds`` prints issue 31's per-kind ratios (CPU time; with ``--instructions``, instructions
under callgrind on logs of at most 2,000 lines, the same on a busy machine). Counted, the logs given
schemas also print the reading proposed for them: the target of the same log without a schema
plus jsonschema's own cost of validating its calls.

With ``--stages`` it splits ``audit --tools-file`` into the floor, salvage, call repair (and
jsonschema within it) and the record walk, each timed alone in turn.

With ``--ray`` (extra ``ray``) it also fixes the log with Ray Data on a local Ray of two CPUs,
with one and two ``FixBatches`` actors, against one process, and splits Ray's time into its
stages: starting Ray, reading the file into blocks, the fix itself, and bringing rows back.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import machine
from toolrepair.cli import main

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
        },
    },
]

PROSE = (
    "The answer depends on the period you look at; here is a summary of the main points, "
    "with the sources I found most reliable. "
)


def _record(rng: random.Random, i: int) -> dict[str, object]:
    kind = i % 10
    msg: dict[str, object]
    if kind < 4:  # native calls: mostly clean, some drifted or with broken JSON
        # Arguments differ from line to line, as in real logs: nothing is answered from a cache.
        name, args = (
            ("web_search", f'{{"query": "cats {i}", "limit": {i % 20}}}')
            if kind < 3
            else ("WebSearch", f"{{'query': 'x{i}',}}")
        )
        msg = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}],
        }
    elif kind < 6:  # a call written as text
        call = json.dumps({"name": "calculator", "arguments": {"expression": f"{i} * 2"}})
        msg = {"role": "assistant", "content": f"Let me compute that.\n<tool_call>\n{call}\n</tool_call>"}
    else:  # prose
        msg = {"role": "assistant", "content": PROSE * rng.randint(1, 3)}
    return {
        "id": f"chatcmpl-{i}",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    }


def write_log(path: Path, lines: int, seed: int = 0, kinds: tuple[int, ...] = tuple(range(10))) -> int:
    """``lines`` records; ``kinds`` picks which of ``_record``'s ten kinds (0-2 clean native calls,
    3 a drifted one, 4-5 text calls, 6-9 prose) the log holds, in turn."""
    rng = random.Random(seed)
    with path.open("wb") as out:
        for i in range(lines):
            kind = kinds[i % len(kinds)]
            out.write(json.dumps(_record(rng, kind + 10 * i)).encode() + b"\n")
    return path.stat().st_size


#: Clean native calls' target; the proposed reading of the real-schema one adds jsonschema's cost to it.
NATIVE_TARGET = 3.5
#: The logs of issue 31's per-kind targets: (label, _record kinds, tools given, target vs floor).
KIND_LOGS = [
    ("records with no call", (6, 7, 8, 9), "names", 3.0),
    ("clean native calls", (0, 1, 2), "names", NATIVE_TARGET),
    ("clean native calls, real schema", (0, 1, 2), "schemas", None),  # floor + jsonschema's own cost
    ("text calls", (4, 5), "names", 8.0),
    ("mixed log", tuple(range(10)), "schemas", 5.0),
]


def jsonschema_cost(path: Path) -> Callable[[], None]:
    """jsonschema's own validation of the native calls in ``path`` named as a schema is and with
    JSON arguments, as the audit validates them: every call of a log of clean native calls; of
    a mixed log, a lower bound (its drifted and broken calls, and the calls salvaged from text,
    are validated by the audit too, after their repair)."""
    import jsonschema

    validators = {
        t["function"]["name"]: jsonschema.Draft202012Validator(t["function"]["parameters"])  # type: ignore[index]
        for t in TOOLS
    }
    calls = []
    with path.open("rb") as handle:
        for line in handle:
            for call in json.loads(line)["choices"][0]["message"].get("tool_calls") or []:
                validator = validators.get(call["function"]["name"])
                try:
                    arguments = json.loads(call["function"]["arguments"])
                except ValueError:
                    continue
                if validator is not None:
                    calls.append((validator, arguments))

    def run() -> None:
        for validator, args in calls:
            validator.is_valid(args)

    return run


def bench_kinds(tmp: str, lines: int, repeat: int, tools_file: Path) -> None:
    """issue 31's per-kind targets: each log's audit CPU time against its own floor."""
    from toolrepair._audit import process_lines
    from toolrepair._records import RecordFixer

    print(f"# audit per kind of log ({lines:,} lines each; CPU time, best of {repeat}; x its floor)")
    given = {"names": ["web_search", "calculator"], "schemas": TOOLS}
    for label, kinds, tools, target in KIND_LOGS:
        path = Path(tmp, f"kind-{kinds[0]}.jsonl")
        write_log(path, lines, kinds=kinds)
        fixer = RecordFixer(given[tools])

        def audit(path: Path = path, fixer: RecordFixer = fixer) -> None:
            with path.open("rb") as handle:
                process_lines(handle, fixer)

        fns: list[Callable[[], object]] = [lambda path=path: floor(path), audit]
        if target is None:
            fns.append(jsonschema_cost(path))
        cpu = best_in_turn(fns, repeat, time.process_time)
        if target is None:
            bound = (cpu[0] + cpu[2]) / cpu[0]
            print(f"{label:<34} {cpu[1] / cpu[0]:6.2f}x   target <= floor + jsonschema = {bound:.2f}x")
        else:
            print(f"{label:<34} {cpu[1] / cpu[0]:6.2f}x   target <= {target}x")


def count_kinds(tmp: str, lines: int) -> None:
    """issue 31's per-kind targets in instructions (``--kinds --instructions``): each log's audit
    against its own floor, each a callgrind run less one that only builds the fixer and warms it."""
    from benchmarks._common import instructions

    root = Path(__file__).resolve().parents[1]
    paths = [str(root), *(p for p in sys.path if p.endswith("site-packages"))]
    print(f"# audit per kind of log ({lines:,} lines each; instructions under callgrind; x its floor)")
    for label, kinds, tools, target in KIND_LOGS:
        path = Path(tmp, f"kind-{kinds[0]}.jsonl")
        write_log(path, lines, kinds=kinds)
        warm = Path(tmp, f"warm-{kinds[0]}.jsonl")
        write_log(warm, 20, seed=1, kinds=kinds)
        setup = (
            "from pathlib import Path\nfrom benchmarks import bench_audit as b\n"
            "from toolrepair._audit import process_lines\nfrom toolrepair._records import RecordFixer\n"
            f"fixer = RecordFixer({'b.TOOLS' if tools == 'schemas' else repr(['web_search', 'calculator'])})\n"
            f"process_lines(Path({str(warm)!r}).open('rb'), fixer)\np = Path({str(path)!r})\n"
        )
        runs = ["b.floor(p)\n", "process_lines(p.open('rb'), fixer)\n"]
        if tools == "schemas":
            runs.append("run = b.jsonschema_cost(p)\nrun()\n")
        base = instructions(setup, path=paths)
        if base is None:
            print("valgrind is not installed: no instruction counts")
            return
        cost = [(instructions(setup + code, path=paths) or 0) - base for code in runs]
        # With schemas, jsonschema's own cost (less building its validators and reading the log
        # for it), in floors: the proposed reading adds it to the target of the same log without.
        own = 0.0
        if tools == "schemas":
            own = cost[2] - ((instructions(setup + "run = b.jsonschema_cost(p)\n", path=paths) or 0) - base)
            own /= cost[0]
        if target is None:
            line = f"target <= floor + jsonschema = {1 + own:.2f}x (proposed: {NATIVE_TARGET}x + jsonschema = {NATIVE_TARGET + own:.2f}x)"
        elif own:
            line = f"target <= {target}x (proposed: {target}x + jsonschema = {target + own:.2f}x)"
        else:
            line = f"target <= {target}x"
        print(f"{label:<34} {cost[1] / cost[0]:6.2f}x   {line}", flush=True)


def floor(path: Path) -> None:
    loads = json.loads
    with path.open("rb") as handle:
        for line in handle:
            loads(line)


def best_in_turn(
    fns: list[Callable[[], object]],
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    bests = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            start = clock()
            fn()
            bests[k] = min(bests[k], clock() - start)
    return bests


def best_in_turn_both(fns: list[Callable[[], object]], repeat: int) -> tuple[list[float], list[float]]:
    """Best wall and best CPU seconds of each, in turn. On a shared machine the CPU time of
    this one process is the steadier figure: it leaves out the time spent waiting for a core."""
    walls = [float("inf")] * len(fns)
    cpus = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            cpus[k] = min(cpus[k], time.process_time() - cpu)
            walls[k] = min(walls[k], time.perf_counter() - wall)
    return walls, cpus


def stages(log: Path, tools: object, repeat: int) -> list[tuple[str, float]]:
    """Seconds of each stage of ``audit`` on ``log`` alone, best of ``repeat`` in turn: the floor,
    the whole audit, salvage of every text it salvages, the repair of every call (native and
    salvaged) and, within that repair, jsonschema's validation of the repaired arguments.
    What is left of the audit is the record walk. Results are dropped as they come, as the
    audit drops them (keeping 30k results would bill the garbage collector to a stage)."""
    from toolrepair import salvage_text
    from toolrepair._audit import process_lines
    from toolrepair._records import RecordFixer, _read, _turns
    from toolrepair._repair import coerce_call

    fixer = RecordFixer(tools)
    tables = fixer._default
    assert tables.index is not None
    texts: list[str] = []
    calls: list[object] = []
    with log.open("rb") as handle:
        for line in handle:
            for turn in _turns(json.loads(line)):
                native, text = _read(turn)
                if native:
                    calls.extend(native)
                elif text:
                    texts.append(text)
    calls.extend(c for t in texts for c in salvage_text(t, tables.allowed).calls)
    checks = [
        (tables.index.schema(r.call.name), r.call.arguments)
        for r in (coerce_call(tables.index, c)[0] for c in calls)
        if r.call is not None
    ]  # type: ignore[arg-type]

    def audit_lines(path: Path, fixer: RecordFixer) -> None:
        with path.open("rb") as handle:
            process_lines(handle, fixer)

    def each(fn: Callable[[object], object], items: list[object]) -> Callable[[], None]:
        def run() -> None:
            for item in items:
                fn(item)

        return run

    index, allowed = tables.index, tables.allowed
    # The inputs above are long-lived: keep them out of the collector's scans, which would
    # otherwise bill each stage for walking tens of thousands of kept objects.
    gc.collect()
    gc.freeze()
    runs: list[tuple[str, Callable[[], object]]] = [
        ("floor: read + json.loads", lambda: floor(log)),
        ("audit (process_lines)", lambda: audit_lines(log, fixer)),
        (f"  salvage_text ({len(texts):,} texts)", each(lambda t: salvage_text(t, allowed), texts)),  # type: ignore[arg-type]
        (f"  coerce_call ({len(calls):,} calls)", each(lambda c: coerce_call(index, c), calls)),  # type: ignore[arg-type]
        ("    of which jsonschema", each(lambda sa: sa[0]._validator.is_valid(sa[1]), checks)),  # type: ignore[index]
    ]
    try:
        times = best_in_turn([fn for _, fn in runs], repeat, time.process_time)
    finally:
        gc.unfreeze()
    return [(label, t) for (label, _), t in zip(runs, times, strict=True)]


def peak_rss_kib(argv: list[str]) -> int:
    """Peak RSS of the command run in a fresh child (KiB, as getrusage reports on Linux)."""
    code = (
        "import resource, sys; from toolrepair.cli import main; "
        "main(sys.argv[1:], stdout=open('/dev/null', 'w')); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, check=True)
    return int(done.stdout.split()[-1])


def bench_ray(log: Path, out: Path, tools: list[object], lines: int, one_process: float) -> None:
    import ray
    import ray.data

    from toolrepair.integrations.ray import fix_dataset

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    t_init = time.perf_counter() - start
    try:
        print(f"ray {ray.__version__}: ray.init {t_init:.1f} s (not counted below)")
        for workers in (1, 2):
            start = time.perf_counter()
            blocks = ray.data.read_text(str(log)).materialize()
            t_read = time.perf_counter() - start
            start = time.perf_counter()
            fixed, report = fix_dataset(blocks, tools=tools, workers=workers, num_cpus=0.5, batch_size=4096)
            t_fix = time.perf_counter() - start
            start = time.perf_counter()
            with out.open("w", encoding="utf-8") as handle:
                for batch in fixed.iter_batches(batch_format="pyarrow", batch_size=None):
                    for line in batch.column("text").to_pylist():
                        handle.write(line + "\n")
            t_back = time.perf_counter() - start
            total = t_read + t_fix + t_back
            print(
                f"ray, {workers} actor(s): {total:6.2f} s = read {t_read:.2f} + fix {t_fix:.2f} + rows back "
                f"{t_back:.2f};  {lines / total:9,.0f} lines/s, {one_process / total:.2f}x one process "
                f"({report.records:,} records)"
            )
    finally:
        ray.shutdown()


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="also time Ray Data with 1 and 2 actors")
    parser.add_argument("--stages", action="store_true", help="also split audit --tools-file into its stages")
    parser.add_argument(
        "--kinds",
        action="store_true",
        help="only the per-kind ratios (no call, clean native, real schema, text calls, mixed)",
    )
    parser.add_argument(
        "--instructions", action="store_true", help="with --kinds: count instructions under callgrind (valgrind)"
    )
    opts = parser.parse_args()
    if opts.kinds:
        with tempfile.TemporaryDirectory() as tmp:
            if opts.instructions:
                count_kinds(tmp, min(opts.lines, 2_000))
            else:
                bench_kinds(tmp, opts.lines, opts.repeat, Path(tmp, "tools.json"))
        return
    with tempfile.TemporaryDirectory() as tmp:
        log, big, out = Path(tmp, "log.jsonl"), Path(tmp, "big.jsonl"), Path(tmp, "out.jsonl")
        tools = Path(tmp, "tools.json")
        tools.write_text(json.dumps(TOOLS))
        size = write_log(log, opts.lines)
        sink = io.StringIO

        names = ["--tools", "web_search,calculator"]
        schemas = ["--tools-file", str(tools)]
        runs: list[tuple[str, Callable[[], object]]] = [("floor: read + json.loads", lambda: floor(log))]
        for verb in ("audit", "fix"):
            for label, given in (("--tools", names), ("--tools-file", schemas)):
                argv = [verb, str(log), *(["-o", str(out)] if verb == "fix" else []), *given, "--json"]
                runs.append((f"{verb} {label}", lambda argv=argv: main(argv, stdout=sink())))
        times, cpus = best_in_turn_both([fn for _, fn in runs], opts.repeat)
        print(f"# bench_audit: {opts.lines:,} lines, {size / 1e6:.1f} MB; {machine()}")
        print(f"{'':<34} {'seconds':>9} {'lines/s':>11} {'vs floor':>9} {'cpu s':>8} {'cpu vs floor':>13}")
        for (label, _), t, c in zip(runs, times, cpus, strict=True):
            print(f"{label:<34} {t:9.3f} {opts.lines / t:11,.0f} {t / times[0]:8.2f}x {c:8.3f} {c / cpus[0]:12.2f}x")
        if opts.ray:
            one = times[[label for label, _ in runs].index("fix --tools-file")]
            bench_ray(log, out, TOOLS, opts.lines, one)
        write_log(big, 4 * opts.lines, seed=1)
        for verb in ("audit", "fix"):
            argv = [verb] + (["-o", str(out)] if verb == "fix" else []) + ["--tools-file", str(tools), "--json"]
            small_rss = peak_rss_kib([argv[0], str(log), *argv[1:]])
            big_rss = peak_rss_kib([argv[0], str(big), *argv[1:]])
            print(
                f"peak RSS {verb}: {small_rss / 1024:.1f} MiB on {size / 1e6:.0f} MB, "
                f"{big_rss / 1024:.1f} MiB on {big.stat().st_size / 1e6:.0f} MB"
            )
        # Last: its inputs grow this process, whose peak RSS a child started later inherits.
        if opts.stages:
            split = stages(log, TOOLS, opts.repeat)
            base = split[0][1]
            walk = split[1][1] - base - split[2][1] - split[3][1]
            print(f"# audit --tools-file by stage (CPU us per line; x floor), {opts.lines:,} lines")
            for label, t in [*split, ("  record walk (the rest)", walk)]:
                print(f"{label:<34} {t / opts.lines * 1e6:9.2f} {t / base:8.2f}x")


if __name__ == "__main__":
    main_bench()
