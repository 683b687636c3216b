"""Start-up: `import toolrepair` and `toolrepair --version` against `import json` and `python -c pass`.

Each figure is the best of N fresh interpreters (``subprocess``), the interpreters run in turn
so a busy spell of a shared machine slows all of them alike. The import cost of a module is the
interpreter with it less the interpreter without it (``python -c pass``), so the site start-up
of this machine (its ``.pth`` files) is left out of both sides of the ratio. Byte code is
written on a first run and read after, as in an installed package.

    python benchmarks/bench_import.py [--repeat 30] [--instructions]

``--instructions`` counts instructions under callgrind instead (where valgrind is installed):
each import less ``pass``, the same on a busy machine as on a quiet one; it also shows what
the first salvage adds (the engine, then the table of built-in dialects), not judged.

Prints the ratios and ``python -X importtime``'s cumulative microseconds for ``toolrepair``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import instructions, machine

ROOT = Path(__file__).resolve().parents[1]
SITE = [p for p in sys.path if p.endswith("site-packages")]
# ``-S``: no site start-up (this machine's .pth files import json, certifi and more before any
# user code); the package paths are put back by hand, and the import is timed in the process.
PROBE = (
    "import sys, time; sys.path[:0] = {paths!r}; t = time.perf_counter(); import {module}; "
    "print(time.perf_counter() - t)"
)


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its byte code
    return out


def import_seconds(module: str) -> float:
    code = PROBE.format(paths=[str(ROOT), *SITE], module=module)
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env(), check=True, capture_output=True, text=True)
    return float(out.stdout)


def run_seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=dict(env(), PYTHONPATH=str(ROOT)), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def importtime() -> int:
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import toolrepair"],
        env=dict(env(), PYTHONPATH=str(ROOT)),
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    match = re.search(r"\|\s*(\d+) \| toolrepair$", err, re.MULTILINE)
    return int(match.group(1)) if match else -1


def counted() -> None:
    paths = [str(ROOT), *SITE]
    for module in FULL:  # byte code written first, as in an installed package
        import_seconds(module)
    base = instructions("pass", path=paths)
    if base is None:
        print("valgrind is not installed: no instruction counts")
        return
    cost = {m: (instructions(f"import {m}", path=paths) or base) - base for m in FULL}
    print(f"# start-up in instructions (callgrind, each import less `pass`); {machine()}")
    for module, count in cost.items():
        print(f"import {module:<38} {count:>14,}  {count / cost['json']:5.1f}x")
    print(f"import toolrepair / import json: {cost['toolrepair'] / cost['json']:6.2f}x   target <= 5x")


# What the import leaves for first use, shown beside it (not judged): the salvage engine (the
# first reply salvaged or streamed) and the table of every built-in dialect (the first marker).
FULL = ("json", "toolrepair", "toolrepair._salvage", "toolrepair._salvage._registry")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    args = parser.parse_args()
    if args.instructions:
        counted()
        return
    imports = ("json", "toolrepair")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "toolrepair --version": [sys.executable, "-m", "toolrepair", "--version"],
    }
    for module in imports:  # warm: byte code written, files in the page cache
        import_seconds(module)
    best = dict.fromkeys((*imports, *commands), float("inf"))
    for _ in range(args.repeat):
        for module in imports:
            best[module] = min(best[module], import_seconds(module))
        for name, argv in commands.items():
            best[name] = min(best[name], run_seconds(argv))
    print(f"# start-up, best of {args.repeat} fresh interpreters each; {machine()}")
    for name, seconds in best.items():
        print(f"{('import ' + name) if name in imports else name:<24} {seconds * 1e3:8.2f} ms")
    print(f"import toolrepair / import json: {best['toolrepair'] / best['json']:6.1f}x   target <= 5x")
    print(f"toolrepair --version / python -c pass: {best['toolrepair --version'] / best['python -c pass']:6.2f}x")
    print(f"python -X importtime -c 'import toolrepair': cumulative {importtime():,} us for toolrepair")


if __name__ == "__main__":
    main()
