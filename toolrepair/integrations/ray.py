"""Ray Data: ``fix_dataset`` runs ``toolrepair fix`` over a ``ray.data.Dataset`` of JSON lines.

The dataset holds one JSON Lines line per row in a string column (``ray.data.read_text``'s
``text``). Each worker is a ``FixBatches`` actor that builds its tool tables once and fixes
whole batches; every batch also yields its ``AuditReport``, and the reports are merged (the
merge is associative, so the order batches finish in does not matter). Rows come out
exactly as ``toolrepair fix`` writes the same lines: byte for byte when nothing changes.

>>> import ray                                                           # doctest: +SKIP
>>> ds = ray.data.read_text("s3://bucket/logs/")                         # doctest: +SKIP
>>> fixed, report = fix_dataset(ds, tools=tool_definitions, workers=8)   # doctest: +SKIP
>>> fixed.write_text("s3://bucket/fixed/")  # hypothetical: see docs/scale.md   # doctest: +SKIP

``read_text`` decodes UTF-8 and drops blank lines; ``toolrepair fix`` keeps both (a line that
is not UTF-8 is a bad record there, an error here).
"""

from __future__ import annotations

import json
from typing import Any

from .._audit import fix_line
from .._records import RecordFixer
from .._report import AuditReport, Tally
from ._common import require

__all__ = ["REPORT_COLUMN", "FixBatches", "fix_dataset"]

#: The column each batch's report travels in (its first row; the others are empty).
REPORT_COLUMN = "toolrepair_report"


class FixBatches:
    """The callable class ``map_batches`` runs: one ``RecordFixer`` per worker, built once.

    Takes and returns ``pyarrow.Table`` batches: ``column`` fixed, plus ``REPORT_COLUMN``.
    """

    def __init__(self, tools: Any = None, column: str = "text") -> None:
        self.fixer = RecordFixer(tools)
        self.column = column

    def __call__(self, batch: Any) -> Any:
        pa = require("pyarrow", "ray")
        lines = batch.column(self.column).to_pylist()
        tally = Tally()
        out = []
        fixer = self.fixer
        for line in lines:
            fixed, _ = fix_line(fixer, line, tally) if line is not None else (None, None)
            out.append(line if fixed is None else fixed)
        reports = [""] * len(out)
        if reports:
            reports[0] = json.dumps(tally.freeze().to_dict())
        return batch.set_column(batch.schema.get_field_index(self.column), self.column, pa.array(out)).append_column(
            REPORT_COLUMN, pa.array(reports, pa.string())
        )


def fix_dataset(
    dataset: Any,
    *,
    tools: Any = None,
    column: str = "text",
    workers: int | tuple[int, int] = 1,
    batch_size: int | None = 4096,
    preserve_order: bool = True,
    **map_batches_args: Any,
) -> tuple[Any, AuditReport]:
    """(the fixed dataset, materialized; the merged report) for a dataset of JSON lines.

    ``tools`` as for ``toolrepair.fix_record``; ``workers`` is the number of ``FixBatches``
    actors (or a ``(min, max)`` autoscaling range); other keywords go to ``map_batches``
    (``num_cpus=`` per actor, for instance: on a cluster as small as its actors, give them
    less than a CPU each so the read tasks can run too). With ``preserve_order`` (the default)
    the dataset's ``DataContext`` and the current one keep row order, so rows line up with the
    input's. The dataset
    is computed here, once, because the report needs every batch.
    """
    ray_data = require("ray.data", "ray")
    if preserve_order:
        # A dataset keeps the context it was made with; the current one covers what comes after.
        for context in (getattr(dataset, "context", None), ray_data.DataContext.get_current()):
            if context is not None:
                context.execution_options.preserve_order = True
    pool = (
        ray_data.ActorPoolStrategy(size=workers)
        if isinstance(workers, int)
        else ray_data.ActorPoolStrategy(min_size=workers[0], max_size=workers[1])
    )
    mapped = dataset.map_batches(
        FixBatches,
        fn_constructor_kwargs={"tools": tools, "column": column},
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=pool,
        zero_copy_batch=True,
        **map_batches_args,
    ).materialize()
    tally = Tally()
    for batch in mapped.select_columns([REPORT_COLUMN]).iter_batches(batch_format="pyarrow", batch_size=None):
        for text in batch.column(0).to_pylist():
            if text:
                tally.add(AuditReport.from_dict(json.loads(text)))
    return mapped.drop_columns([REPORT_COLUMN]), tally.freeze()
