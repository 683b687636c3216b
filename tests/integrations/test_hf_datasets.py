"""HF datasets: `Dataset.map(batched=True, num_proc=2)` over a JSON Lines set gives exactly the
output and the report of `toolrepair fix` on the same lines (the example's code, run as is)."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolrepair.cli import main

pytest.importorskip("datasets")

from scale_data import TOOLS, mixed_lines

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hf_datasets_fix.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("hf_datasets_fix", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hf_datasets_fix"] = module  # the worker processes find fix_batch by name
    spec.loader.exec_module(module)
    return module


def test_map_with_two_processes_equals_the_cli(tmp_path: Path) -> None:
    example = load_example()
    lines = mixed_lines(400)
    parts = []
    for k in range(2):
        part = tmp_path / f"part-{k}.jsonl"
        part.write_text("".join(line + "\n" for line in lines[k * 200 : (k + 1) * 200]), encoding="utf-8")
        parts.append(str(part))
    report = example.fix_files(
        parts, str(tmp_path / "hf.jsonl"), tools=TOOLS, num_proc=2, cache_dir=str(tmp_path / "cache")
    )

    whole, tools, out = tmp_path / "all.jsonl", tmp_path / "tools.json", tmp_path / "cli.jsonl"
    whole.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tools.write_text(json.dumps(TOOLS))
    stdout = io.StringIO()
    assert main(["fix", str(whole), "-o", str(out), "--tools-file", str(tools), "--json"], stdout=stdout) == 0
    cli_report = json.loads(stdout.getvalue())

    assert (tmp_path / "hf.jsonl").read_bytes() == out.read_bytes()
    assert {**report.to_json(), "bad_line_numbers": cli_report["bad_line_numbers"]} == cli_report
    assert report.records == 400 and report.records_changed > 0 and report.bad_records == 50


def test_fix_batch_alone() -> None:
    example = load_example()
    assert example.fix_batch({"text": []}) == {"text": [], example.REPORT: []}
    got = example.fix_batch({"text": ['{"text": "x"}', "bad"]})
    assert got["text"] == ['{"text": "x"}', "bad"]
    assert json.loads(got[example.REPORT][0])["bad_records"] == 1 and got[example.REPORT][1] == ""
