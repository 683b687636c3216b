"""Real model outputs that users pasted into public bug reports, salvaged as a careful reader would.

``tests/data/real_outputs.jsonl`` holds one report per line: its ``source`` URL, the model's
``text`` as the report shows it (escapes of a JSON-encoded error body decoded), the tool names
the report offered (``allowed``), the calls a careful reader expects (``expected``, possibly
none: fenced examples, reasoning, truncation) and a ``note``. A row with ``not_salvaged``
is one the project chose not to read, with the reason: it must give no call at all (a
refusal, never a guess), and the reason stays documented beside the text.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import toolrepair as tr

TABLE = pathlib.Path(__file__).parent / "data" / "real_outputs.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines()]


def test_the_table_is_the_size_it_claims() -> None:
    assert len(ROWS) >= 90
    assert all(row["source"].startswith("https://github.com/") for row in ROWS)
    assert all(set(row) <= {"source", "text", "allowed", "expected", "note", "not_salvaged"} for row in ROWS)
    # Each kind of answer is represented: calls, no call, and documented refusals.
    assert any(row["expected"] for row in ROWS) and any(not row["expected"] for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['source'].split('github.com/')[1]}" for i, r in enumerate(ROWS)])
def test_real_output(row: dict[str, Any]) -> None:
    result = tr.salvage_text(row["text"], row["allowed"])
    got = [{"name": c.name, "arguments": c.arguments} for c in result.calls]
    if "not_salvaged" in row:
        assert got == [], row["not_salvaged"]
        return
    assert got == row["expected"], row["note"]
    # What was cut out is exactly the calls: the rest of the reply is left for the user.
    assert len(result.content) <= len(row["text"])
    for call in result.calls:
        assert call.name in row["allowed"]


@pytest.mark.parametrize(
    "row", [r for r in ROWS if "not_salvaged" not in r], ids=lambda r: r["source"].split("github.com/")[1]
)
def test_real_output_streamed_one_character_at_a_time(row: dict[str, Any]) -> None:
    stream = tr.StreamSalvager(row["allowed"])
    events = [e for ch in row["text"] for e in stream.feed(ch)] + stream.close()
    got = [{"name": e.call.name, "arguments": e.call.arguments} for e in events if isinstance(e, tr.ToolCallReady)]
    assert got == row["expected"]
