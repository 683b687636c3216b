"""Run every benchmark, print one table, and record it in benchmarks/README.md.

    pip install -e '.[bench]' && python benchmarks/run_all.py [--no-readme] [--only salvage,peers]
    python benchmarks/run_all.py --instructions [--only import,work]

``--instructions`` runs, instead, every script's instruction-count mode (callgrind, where
valgrind is installed): the figures of issue 31 (start-up, Markdown, streams, work per
character, the audit per kind of log) as ratios that are the same on a busy machine as on a
quiet one. It prints only (the README's table is of wall-clock ratios); it takes 20-40 minutes.

Each bench_*.py runs in its own process (so one's imports and caches cannot skew another's
timings); a script that is missing or fails is noted in the table, never fatal. The table goes
between the README's ``<!-- results:start -->`` and ``<!-- results:end -->`` markers, with the
date and the machine: timings are only comparable within one run, which is why every script
reports ratios to a baseline measured beside it.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"
BENCHES = ("dispatch", "salvage", "args", "stream", "peers")
# Each script's instruction-count mode: its arguments (issue 31's figures).
COUNTED: dict[str, tuple[str, ...]] = {
    "import": ("--instructions",),
    "salvage": ("--instructions",),
    "stream": ("--instructions",),
    "work": ("--instructions",),
    "audit": ("--kinds", "--instructions"),
}
TIMEOUT_SECONDS = 1800


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line() -> str:
    return f"{platform.platform()}; {cpu_model()}; {platform.python_implementation()} {platform.python_version()}"


def run_one(name: str, args: tuple[str, ...] = ()) -> tuple[str, float]:
    script = HERE / f"bench_{name}.py"
    if not script.exists():
        return f"(bench_{name}.py not present: skipped)\n", 0.0
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            cwd=HERE.parent,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"(bench_{name}.py took longer than {TIMEOUT_SECONDS} s: skipped)\n", time.perf_counter() - started
    elapsed = time.perf_counter() - started
    out = done.stdout if done.stdout.endswith("\n") or not done.stdout else done.stdout + "\n"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        out += f"(bench_{name}.py failed with status {done.returncode}: {last})\n"
    return out, elapsed


def table(names: list[str], counted: bool = False) -> str:
    sections = []
    for name in names:
        print(f"running bench_{name}.py ...", file=sys.stderr, flush=True)
        out, elapsed = run_one(name, COUNTED[name] if counted else ())
        sections.append(f"== bench_{name}.py ({elapsed:.0f} s)\n{out}")
    return "\n".join(sections)


def record(text: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{START}\nMeasured {stamp} on {machine_line()}.\n\n```text\n{text.rstrip()}\n```\n{END}"
    readme = README.read_text(encoding="utf-8") if README.exists() else f"# Benchmarks\n\n{START}\n{END}\n"
    if START in readme and END in readme:
        head, rest = readme.split(START, 1)
        tail = rest.split(END, 1)[1]
        readme = head + block + tail
    else:
        readme = readme.rstrip() + "\n\n" + block + "\n"
    README.write_text(readme, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="Run every benchmark and print one table.")
    parser.add_argument("--no-readme", action="store_true", help="print only; leave benchmarks/README.md alone")
    parser.add_argument("--only", default=None, help=f"comma-separated subset of: {', '.join(BENCHES)}")
    parser.add_argument(
        "--instructions", action="store_true", help=f"instruction counts instead: {', '.join(COUNTED)} (prints only)"
    )
    args = parser.parse_args()
    every = COUNTED if args.instructions else BENCHES
    names = list(every) if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    known = (
        (lambda n: n in COUNTED) if args.instructions else (lambda n: n in BENCHES or (HERE / f"bench_{n}.py").exists())
    )
    unknown = [n for n in names if not known(n)]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    text = table(names, counted=args.instructions)
    print(f"toolrepair benchmarks — {machine_line()}\n")
    print(text)
    if not args.no_readme and not args.instructions:
        record(text)
        print(f"(written to {README.relative_to(HERE.parent)})", file=sys.stderr)


if __name__ == "__main__":
    main()
