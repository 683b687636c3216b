"""Ray Data on a local Ray (2 CPUs) over a sharded JSON Lines set: the same output and report
as the single-process `toolrepair fix` (differential), and the callable class alone."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolrepair as tr
from toolrepair.cli import main

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pa = pytest.importorskip("pyarrow")

from scale_data import TOOLS, mixed_lines  # noqa: E402

from toolrepair.integrations.ray import REPORT_COLUMN, FixBatches, fix_dataset  # noqa: E402

# Ray's own deprecations (its DataContext warns about its own defaults) are not ours to fix.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray"),
    pytest.mark.filterwarnings("ignore::FutureWarning:ray"),
]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


def cli_fix(tmp_path: Path, data: bytes) -> tuple[bytes, dict[str, Any]]:
    src, out, tools = tmp_path / "all.jsonl", tmp_path / "cli.jsonl", tmp_path / "tools.json"
    src.write_bytes(data)
    tools.write_text(json.dumps(TOOLS))
    stdout = io.StringIO()
    assert main(["fix", str(src), "-o", str(out), "--tools-file", str(tools), "--json"], stdout=stdout) == 0
    return out.read_bytes(), json.loads(stdout.getvalue())


def test_fix_dataset_equals_the_cli(local_ray: None, tmp_path: Path) -> None:
    lines = mixed_lines(600)
    shards = [lines[i : i + 200] for i in range(0, 600, 200)]
    paths = []
    for k, shard in enumerate(shards):
        path = tmp_path / f"part-{k}.jsonl"
        path.write_text("".join(line + "\n" for line in shard), encoding="utf-8")
        paths.append(str(path))
    expected, report = cli_fix(tmp_path, "".join(line + "\n" for line in lines).encode())

    ds = ray.data.read_text(paths)
    fixed, got = fix_dataset(ds, tools=TOOLS, workers=2, batch_size=64, num_cpus=0.5)
    rows = [row["text"] for row in fixed.iter_rows()]
    assert "".join(r + "\n" for r in rows).encode() == expected
    assert {**got.to_json(), "bad_line_numbers": report["bad_line_numbers"]} == report
    assert got.records == 600 and got.records_changed > 0 and got.bad_records > 0
    assert fixed.columns() == ["text"]


def test_fix_batches_alone() -> None:
    lines = mixed_lines(20)
    fixer = FixBatches(tools=TOOLS)
    batch = fixer(pa.table({"text": lines, "other": list(range(20))}))
    assert batch.column_names == ["text", "other", REPORT_COLUMN]
    assert batch.column("text").to_pylist() == [tr.fix_record(line, tools=TOOLS)[0] for line in lines]
    reports = batch.column(REPORT_COLUMN).to_pylist()
    assert all(r == "" for r in reports[1:])
    assert tr.AuditReport.from_dict(json.loads(reports[0])) == tr.audit_records(lines, tools=TOOLS)
    empty = fixer(pa.table({"text": pa.array([], pa.string())}))
    assert empty.num_rows == 0
    nulls = fixer(pa.table({"text": pa.array([None, lines[0]], pa.string())}))
    assert nulls.column("text").to_pylist()[0] is None
