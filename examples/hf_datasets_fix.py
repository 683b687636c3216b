"""Fix a JSON Lines dataset with Hugging Face `datasets`, in parallel, exactly as `toolrepair fix` would.

    pip install 'toolrepair[datasets]'
    python examples/hf_datasets_fix.py IN.jsonl [MORE.jsonl ...] -o OUT.jsonl [--tools-file tools.json]

The set is loaded as text (one row per line) so that every record comes back byte for byte
when there is nothing to fix; `Dataset.map(batched=True, num_proc=N)` runs `fix_batch` in N
processes. Each batch returns its fixed lines and, in the first row of an extra column, its
report; the reports are merged at the end (the merge is associative, so batches and processes
may finish in any order). The output file and report equal the command's on the same input.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import toolrepair as tr

REPORT = "toolrepair_report"


def fix_batch(batch: dict[str, list[Any]], tools: Any = None) -> dict[str, list[Any]]:
    """One batch of lines: the fixed lines, and the batch's report in its first row."""
    fixed, reports = [], []
    for line in batch["text"]:
        out, report = tr.fix_record(line, tools=tools)
        fixed.append(out)
        reports.append(report)
    column = [""] * len(fixed)
    if column:
        column[0] = json.dumps(tr.AuditReport.combine(reports).to_dict())
    return {"text": fixed, REPORT: column}


def fix_files(
    paths: list[str], output: str, *, tools: Any = None, num_proc: int = 2, cache_dir: str | None = None
) -> tr.AuditReport:
    """Fix ``paths`` (in order) into ``output``; returns the merged report."""
    import datasets

    ds = datasets.load_dataset("text", data_files=paths, split="train", cache_dir=cache_dir)
    fixed = ds.map(
        fix_batch,
        batched=True,
        batch_size=1000,
        num_proc=num_proc,
        fn_kwargs={"tools": tools},
        load_from_cache_file=False,
        desc="toolrepair fix",
    )
    report = tr.AuditReport.combine(tr.AuditReport.from_dict(json.loads(text)) for text in fixed[REPORT] if text)
    with open(output, "w", encoding="utf-8", newline="") as out:
        for line in fixed["text"]:
            out.write(line + "\n")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--tools-file")
    parser.add_argument("--num-proc", type=int, default=2)
    args = parser.parse_args()
    tools = None
    if args.tools_file:
        with open(args.tools_file, encoding="utf-8") as handle:
            tools = json.load(handle)
    report = fix_files(args.inputs, args.output, tools=tools, num_proc=args.num_proc)
    print(json.dumps(report.to_json(), indent=2))


if __name__ == "__main__":
    main()
