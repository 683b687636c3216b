"""`fix_record`, `audit_records`, `AuditReport.merge` and `toolrepair fix`: every record shape."""

from __future__ import annotations

import copy
import gzip
import io
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._records import tool_specs
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
    }
]


def hermes(name: str, args: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"


CALL = hermes("web_search", {"query": "cats", "limit": "5"})  # "5" is coerced to 5


def ids_of(record: Any) -> list[str]:
    """Every id fix wrote, in order, wherever the shape keeps them."""
    out: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("id", "tool_call_id", "tool_use_id") and isinstance(v, str) and "_" in v[:6]:
                    out.append(v)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(record)
    return out


def without_ids(record: Any) -> Any:
    if isinstance(record, dict):
        return {k: ("ID" if k in ("id", "tool_call_id", "tool_use_id") else without_ids(v)) for k, v in record.items()}
    if isinstance(record, list):
        return [without_ids(v) for v in record]
    return record


ARGS = '{"query": "cats", "limit": 5}'

# (id, record in, record out with every written id as "ID", report fields)
FIXED: list[tuple[str, Any, Any, dict[str, int]]] = [
    (
        "openai completion",
        {
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Sure. " + CALL}, "finish_reason": "stop"}
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "Sure.",
                        "tool_calls": [
                            {"id": "ID", "type": "function", "function": {"name": "web_search", "arguments": ARGS}}
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
        {"salvaged_calls": 1, "records_changed": 1},
    ),
    (
        "bare assistant message, content parts",
        {"role": "assistant", "content": [{"type": "text", "text": CALL}], "tool_calls": None},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "ID", "type": "function", "function": {"name": "web_search", "arguments": ARGS}}],
        },
        {"salvaged_calls": 1},
    ),
    (
        "message list, results linked in order",
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": CALL + hermes("web_search", {"query": "dogs"})},
            {"role": "tool", "content": "r1"},
            {"role": "tool", "content": "r2"},
            {"role": "assistant", "content": "done"},
        ],
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "ID", "type": "function", "function": {"name": "web_search", "arguments": ARGS}},
                    {
                        "id": "ID",
                        "type": "function",
                        "function": {"name": "web_search", "arguments": '{"query": "dogs"}'},
                    },
                ],
            },
            {"role": "tool", "content": "r1", "tool_call_id": "ID"},
            {"role": "tool", "content": "r2", "tool_call_id": "ID"},
            {"role": "assistant", "content": "done"},
        ],
        {"salvaged_calls": 2, "results_linked": 2, "replies": 2, "empty_replies": 1},
    ),
    (
        "fine-tuning record, its own tools win, drifted native name repaired",
        {
            "tools": [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}],
            "messages": [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "GetTime", "arguments": "{'tz': 'UTC',}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "noon"},
            ],
        },
        {
            "tools": [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}],
            "messages": [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "ID", "type": "function", "function": {"name": "get_time", "arguments": '{"tz": "UTC"}'}}
                    ],
                },
                {"role": "tool", "tool_call_id": "ID", "content": "noon"},
            ],
        },
        {"repaired_calls": 1, "salvaged_calls": 0, "results_linked": 0},
    ),
    (
        "sharegpt, text before the call kept",
        {
            "conversations": [
                {"from": "human", "value": "q"},
                {"from": "gpt", "value": "Let me look. " + CALL},
                {"from": "observation", "value": "r"},
            ]
        },
        {
            "conversations": [
                {"from": "human", "value": "q"},
                {"from": "gpt", "value": "Let me look."},
                {
                    "from": "function_call",
                    "value": '{"name": "web_search", "arguments": {"query": "cats", "limit": 5}}',
                },
                {"from": "observation", "value": "r"},
            ]
        },
        {"salvaged_calls": 1},
    ),
    (
        "sharegpt, a call alone replaces the turn; a native call's arguments repaired",
        {
            "conversations": [
                {"from": "gpt", "value": CALL},
                {"from": "function_call", "value": '{"name": "web_search", "arguments": {"query": "x", "limit": "2"}}'},
            ]
        },
        {
            "conversations": [
                {
                    "from": "function_call",
                    "value": '{"name": "web_search", "arguments": {"query": "cats", "limit": 5}}',
                },
                {"from": "function_call", "value": '{"name": "web_search", "arguments": {"query": "x", "limit": 2}}'},
            ]
        },
        {"salvaged_calls": 1, "repaired_calls": 1},
    ),
    (
        "anthropic message, thinking kept, stop reason",
        {
            "type": "message",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "On it. " + CALL}],
        },
        {
            "type": "message",
            "role": "assistant",
            "stop_reason": "tool_use",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "On it."},
                {"type": "tool_use", "id": "ID", "name": "web_search", "input": {"query": "cats", "limit": 5}},
            ],
        },
        {"salvaged_calls": 1},
    ),
    (
        "anthropic conversation, tool_result linked",
        {
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "text", "text": CALL}]},
                {"role": "user", "content": [{"type": "tool_result", "content": "r"}]},
            ]
        },
        {
            "messages": [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "ID", "name": "web_search", "input": {"query": "cats", "limit": 5}}
                    ],
                },
                {"role": "user", "content": [{"type": "tool_result", "content": "r", "tool_use_id": "ID"}]},
            ]
        },
        {"salvaged_calls": 1, "results_linked": 1},
    ),
    (
        "anthropic native tool_use, drifted name",
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "WebSearch", "input": {"query": "x"}}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "ID", "name": "web_search", "input": {"query": "x"}}],
        },
        {"repaired_calls": 1},
    ),
    (
        "a call in another spelling is written back under its own keys",
        {"role": "assistant", "tool_calls": [{"tool_name": "WebSearch", "tool_input": {"query": "x", "limit": "2"}}]},
        {"role": "assistant", "tool_calls": [{"tool_name": "web_search", "tool_input": {"query": "x", "limit": 2}}]},
        {"repaired_calls": 1},
    ),
    (
        "ollama chat response: arguments stay an object",
        {"model": "m", "message": {"role": "assistant", "content": CALL}},
        {
            "model": "m",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "ID",
                        "type": "function",
                        "function": {"name": "web_search", "arguments": {"query": "cats", "limit": 5}},
                    }
                ],
            },
        },
        {"salvaged_calls": 1},
    ),
]

# Records fix must give back byte for byte (as lines) and as the same object.
UNCHANGED: list[tuple[str, Any, dict[str, int]]] = [
    ("plain text reply", {"role": "assistant", "content": "Just prose."}, {"empty_replies": 1}),
    (
        "clean native call",
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "web_search", "arguments": '{"query":"x"}'}}
            ],
        },
        {"clean_calls": 1},
    ),
    (
        "native calls win over text",
        {
            "role": "assistant",
            "content": CALL,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "x"}'}}
            ],
        },
        {"clean_calls": 1, "salvaged_calls": 0},
    ),
    ("call inside a fence", {"role": "assistant", "content": "```\n" + CALL + "\n```"}, {"empty_replies": 1}),
    ("call inside reasoning", {"role": "assistant", "content": "<think>" + CALL + "</think>ok"}, {"empty_replies": 1}),
    ("tool not offered", {"role": "assistant", "content": hermes("rm_rf", {})}, {"rejected": 1}),
    (
        "invalid arguments leave the turn as text",
        {"role": "assistant", "content": hermes("web_search", {"limit": "many"})},
        {"rejected": 1, "salvaged_calls": 0},
    ),
    (
        "unknown native name",
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "nope", "arguments": "{}"}}],
        },
        {"unrepairable_calls": 1},
    ),
    ("text object: no field for calls", {"text": CALL}, {"salvaged_calls": 1, "salvaged_left_as_text": 1}),
    (
        "responses object",
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": CALL}]}]},
        {"salvaged_left_as_text": 1},
    ),
    (
        "sharegpt without calls",
        {"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]},
        {"empty_replies": 1},
    ),
    ("fine-tuning record without assistant turns", {"messages": [{"role": "user", "content": "q"}]}, {"replies": 0}),
    ("unicode kept as written", {"role": "assistant", "content": "caf\u00e9 \u2603"}, {"empty_replies": 1}),
]


@pytest.mark.parametrize(("record", "expected", "counts"), [f[1:] for f in FIXED], ids=[f[0] for f in FIXED])
def test_fix_every_shape(record: Any, expected: Any, counts: dict[str, int]) -> None:
    before = copy.deepcopy(record)
    fixed, report = tr.fix_record(record, tools=TOOLS)
    assert record == before  # never mutated
    assert without_ids(fixed) == expected
    assert report.records == 1 and report.records_changed == 1 and report.bad_records == 0
    for key, value in counts.items():
        assert getattr(report, key) == value, key
    # The same record as a JSON line gives the same record, the same ids, the same report.
    line = json.dumps(record)
    fixed_line, line_report = tr.fix_record(line, tools=TOOLS)
    assert json.loads(fixed_line) == fixed and line_report == report
    # Ids are derived from the record: the same record always gets the same ones, distinct within it.
    ids = ids_of(fixed)
    assert ids == ids_of(tr.fix_record(record, tools=TOOLS)[0])
    written = [i for i in ids if not i.startswith(("c1", "t"))]
    assert len(set(written)) == len(set(written))
    # Fixing is idempotent: a fixed record has nothing left to fix.
    again, again_report = tr.fix_record(fixed_line, tools=TOOLS)
    assert again is fixed_line and again_report.records_changed == 0
    # An audit counts exactly what the fix does.
    assert tr.audit_records([record], tools=TOOLS) == report


@pytest.mark.parametrize(("record", "counts"), [u[1:] for u in UNCHANGED], ids=[u[0] for u in UNCHANGED])
def test_unchanged_records_are_byte_identical(record: Any, counts: dict[str, int]) -> None:
    fixed, report = tr.fix_record(record, tools=TOOLS)
    assert fixed is record
    assert report.records_changed == 0 and report.bad_records == 0
    for key, value in counts.items():
        assert getattr(report, key) == value, key
    for line in (json.dumps(record, indent=1).replace("\n", " ") + "\r\n", json.dumps(record, ensure_ascii=False)):
        assert tr.fix_record(line, tools=TOOLS)[0] is line
        raw = line.encode()
        assert tr.fix_record(raw, tools=TOOLS)[0] is raw


BAD_RECORDS = [
    "{not json",
    '{"text": ',
    "[1]",
    "null",
    '{"foo": 1}',
    '{"role": "user", "content": "x"}',
    '{"choices": [{"delta": {}}]}',
    '{"role": "assistant", "content": 5}',
    '{"role": "assistant", "tool_calls": 1}',
    '{"conversations": [1]}',
    '{"conversations": [{"from": "gpt", "value": 1}]}',
    '{"tools": 5, "text": "x"}',
    '{"tools": [{"function": {}}], "text": "x"}',
    '{"tools": [{"name": "f", "parameters": []}], "text": "x"}',
    '{"tools": "not json", "text": "x"}',
    b'{"text": "\xff"}',
]


@pytest.mark.parametrize("line", BAD_RECORDS, ids=[repr(b)[:40] for b in BAD_RECORDS])
def test_bad_records_come_back_as_they_were(line: str | bytes) -> None:
    fixed, report = tr.fix_record(line, tools=TOOLS)
    assert fixed is line
    assert (report.records, report.bad_records, report.replies) == (1, 1, 0)


def test_a_bare_json_string_line_is_text_only() -> None:
    line = json.dumps(CALL)  # a str record is a line: the reply text alone is its JSON string
    fixed, report = tr.fix_record(line, tools=TOOLS)
    assert fixed is line and report.salvaged_left_as_text == 1


def test_a_bad_decoded_record_is_counted() -> None:
    record = {"foo": 1}
    assert tr.fix_record(record) == (
        record,
        tr.AuditReport(records=1, bad_records=1, bad_record_reasons=(("not-a-record", 1),)),
    )


def test_blank_lines_are_not_records() -> None:
    assert tr.fix_record("  \n") == ("  \n", tr.AuditReport())
    assert tr.audit_records(["", b"\n", '{"text": "x"}']).records == 1


def test_fixed_line_keeps_its_ending() -> None:
    line = json.dumps({"role": "assistant", "content": CALL})
    for ending in ("", "\n", "\r\n"):
        fixed, _ = tr.fix_record(line + ending, tools=TOOLS)
        assert fixed.endswith(ending) and not fixed[: len(fixed) - len(ending)].endswith(("\n", "\r"))
        raw, _ = tr.fix_record((line + ending).encode(), tools=TOOLS)
        assert raw == fixed.encode()


def test_lone_surrogate_stays_escaped() -> None:
    line = '{"role": "assistant", "content": "\\ud800 ' + CALL.replace('"', '\\"') + '"}'
    fixed, report = tr.fix_record(line, tools=TOOLS)
    assert report.records_changed == 1
    assert "\\ud800" in fixed
    fixed.encode("utf-8")
    # A bytes line gives the same line as bytes (encoded once), its ending kept.
    raw, _ = tr.fix_record((line + "\r\n").encode(), tools=TOOLS)
    assert raw == (fixed + "\r\n").encode("ascii")


def test_tools_forms() -> None:
    assert [s.name for s in tool_specs('[{"name": "a", "input_schema": {"type": "object"}}, "b"]')] == ["a", "b"]
    for bad in ({"name": "a"}, 5, "[1"):
        with pytest.raises(ValueError):
            tool_specs(bad)

    def web_search(query: str) -> str:
        return query

    record = {"role": "assistant", "content": hermes("web_search", {"query": "x"})}
    assert tr.fix_record(record, tools=[web_search])[1].salvaged_calls == 1
    assert tr.fix_record(record, tools=["web_search"])[1].salvaged_calls == 1
    # No tools at all: nothing is offered, so no text call becomes a call.
    assert tr.fix_record(record)[1].rejected == 1
    # ANY_TOOL: any name, arguments decoded only.
    _, report = tr.fix_record(
        {"role": "assistant", "tool_calls": [{"function": {"name": "whatever", "arguments": "{'a': 1,}"}}]},
        tools=tr.ANY_TOOL,
    )
    assert report.by_repair == (("decode", 1),)


# -- properties --------------------------------------------------------------------------------
def report_st() -> st.SearchStrategy[tr.AuditReport]:
    small = st.integers(0, 50)
    pairs = st.dictionaries(st.sampled_from(["a", "b", "name", "decode", "hermes"]), st.integers(1, 9), max_size=3)
    return st.builds(
        lambda ints, counters, pruned: tr.AuditReport.from_dict({**ints, **counters, "names_pruned": pruned}),
        st.fixed_dictionaries(
            dict.fromkeys(
                ("records", "bad_records", "replies", "native_calls", "salvaged_calls", "rejected", "results_linked"),
                small,
            )
        ),
        st.fixed_dictionaries(
            dict.fromkeys(("by_repair", "unrepairable", "by_dialect", "by_rejection_reason", "rejected_names"), pairs)
        ),
        st.booleans(),
    )


@given(report_st(), report_st(), report_st())
def test_merge_is_associative_with_identity(a: tr.AuditReport, b: tr.AuditReport, c: tr.AuditReport) -> None:
    assert a.merge(b).merge(c) == a.merge(b.merge(c))
    assert a.merge(tr.AuditReport()) == a == tr.AuditReport().merge(a)
    assert a.merge(b) == b.merge(a)
    assert tr.AuditReport.combine([a, b, c]) == a.merge(b).merge(c)
    assert tr.AuditReport.from_dict(a.to_dict()) == a
    assert pickle.loads(pickle.dumps(a)) == a


LINE_POOL = (
    [json.dumps(r) for _, r, _, _ in FIXED]
    + [json.dumps(r) for _, r, _ in UNCHANGED]
    + [b for b in BAD_RECORDS if isinstance(b, str)]
    + ["", "   "]
)


@given(st.lists(st.sampled_from(LINE_POOL), max_size=30), st.integers(1, 7))
def test_fix_never_drops_reorders_or_duplicates(lines: list[str], shards: int) -> None:
    """Line i of the output is the fix of line i of the input; the reports of any split merge
    into the report of the whole."""
    outs = [tr.fix_record(line, tools=TOOLS) for line in lines]
    assert len(outs) == len(lines)
    for line, (fixed, report) in zip(lines, outs, strict=True):
        if report.records_changed:
            assert json.loads(fixed) == tr.fix_record(json.loads(line), tools=TOOLS)[0]
        else:
            assert fixed is line
    whole = tr.audit_records(lines, tools=TOOLS)
    assert tr.AuditReport.combine(r for _, r in outs) == whole
    parts = [tr.audit_records(lines[i::shards], tools=TOOLS) for i in range(shards)]
    assert tr.AuditReport.combine(parts) == whole


def test_api_is_picklable() -> None:
    from toolrepair._records import RecordFixer

    fixer = pickle.loads(pickle.dumps(RecordFixer(TOOLS)))
    assert isinstance(fixer, RecordFixer)
    assert pickle.loads(pickle.dumps(tr.fix_record)) is tr.fix_record


# -- the command -------------------------------------------------------------------------------
def jsonl(records: list[Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def fix_cli(tmp_path: Path, data: bytes, *extra: str, name: str = "out.jsonl") -> tuple[int, bytes, str]:
    src = tmp_path / "in.jsonl"
    src.write_bytes(data)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / name
    stdout = io.StringIO()
    status = main(["fix", str(src), "-o", str(out), "--tools-file", str(tools), *extra], stdout=stdout)
    written = out.read_bytes() if out.exists() else b""
    return status, written, stdout.getvalue()


def test_cli_fix_equals_the_library(tmp_path: Path) -> None:
    records = [r for _, r, _, _ in FIXED] + [r for _, r, _ in UNCHANGED]
    data = jsonl(records) + b"not json\n"
    status, written, out = fix_cli(tmp_path, data, "--json")
    assert status == 0
    expected = [tr.fix_record(line, tools=TOOLS) for line in data.splitlines(keepends=True)]
    assert written == b"".join(f for f, _ in expected)
    report = json.loads(out)
    assert report == {
        **tr.AuditReport.combine(r for _, r in expected).to_json(),
        "bad_line_numbers": [len(records) + 1],
    }
    assert report["records_changed"] == len(FIXED)


def test_cli_fix_of_a_clean_file_is_a_copy(tmp_path: Path) -> None:
    data = jsonl([r for _, r, _ in UNCHANGED]).replace(b"\n", b"\r\n", 3) + b'{"text": "no newline at the end"}'
    status, written, out = fix_cli(tmp_path, data)
    assert (status, written) == (0, data)
    assert out.startswith("toolrepair fix: ")
    assert "records fix changes" in out


def test_cli_fix_gzip_both_ways(tmp_path: Path) -> None:
    data = jsonl([FIXED[0][1], UNCHANGED[0][1]])
    status, written, _ = fix_cli(tmp_path, gzip.compress(data), name="out.jsonl.gz")
    assert status == 0
    plain = fix_cli(tmp_path, data)[1]
    assert gzip.decompress(written) == plain
    assert written == fix_cli(tmp_path, gzip.compress(data), name="out.jsonl.gz")[1]  # reproducible


def test_cli_fix_stdin_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    data = jsonl([FIXED[0][1]])
    stdin = io.TextIOWrapper(io.BytesIO(data))
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert main(["fix", "-", "-o", "-", "--tools", "web_search"], stdin=stdin, stdout=out) == 0
    out.flush()
    written = out.buffer.getvalue()  # type: ignore[attr-defined]
    assert json.loads(written)["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "web_search"
    assert "toolrepair fix: <stdin> -> -" in capsys.readouterr().err  # the table goes to stderr


def test_cli_fix_refuses_to_overwrite_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.jsonl"
    data = jsonl([FIXED[0][1]])
    src.write_bytes(data)
    alias = tmp_path / "sub" / ".." / "in.jsonl"
    (tmp_path / "sub").mkdir()
    for out in (src, alias):
        assert main(["fix", str(src), "-o", str(out), "--tools", "web_search"], stdout=io.StringIO()) == 1
        assert "toolrepair: error: refusing to write" in capsys.readouterr().err
    assert src.read_bytes() == data


@pytest.mark.parametrize(
    ("tools_text", "message"),
    [
        (None, "cannot read"),
        ("[1", "is not a JSON list of tool definitions"),
        ('[{"function": {}}]', "tool definition 0 has no name"),
        ('[{"name": "f", "parameters": {"type": "nonsense"}}]', "tool 'f'"),
    ],
)
def test_cli_bad_tools_file(
    tmp_path: Path, tools_text: str | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "tools.json"
    if tools_text is not None:
        tools.write_text(tools_text)
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"text": "x"}\n')
    for verb in (["fix", str(src), "-o", str(tmp_path / "o")], ["audit", str(src)]):
        assert main([*verb, "--tools-file", str(tools)], stdout=io.StringIO()) == 1
        err = capsys.readouterr().err
        assert err.startswith("toolrepair: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_cli_fix_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"text": "x"}\n')
    assert main(["fix", str(src), "-o", str(tmp_path / "no" / "dir.jsonl"), "--any"], stdout=io.StringIO()) == 1
    assert "toolrepair: error: cannot write" in capsys.readouterr().err


def test_cli_fix_truncated_gzip_leaves_no_output(tmp_path: Path) -> None:
    status, written, _ = fix_cli(tmp_path, gzip.compress(jsonl([FIXED[0][1]]) * 50)[:-30])
    assert (status, written) == (1, b"")
    assert not list(tmp_path.glob("out.jsonl*"))


def test_audit_tools_file_counts_coercions_and_renames(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    log = jsonl(
        [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "WebSearch", "arguments": '{"query": "x", "limit": "3"}'},
                    }
                ],
            }
        ]
    )
    out = io.StringIO()
    assert (
        main(["audit", "-", "--tools-file", str(tools), "--json"], stdin=io.TextIOWrapper(io.BytesIO(log)), stdout=out)
        == 0
    )
    assert json.loads(out.getvalue())["by_repair"] == {"name": 1, "coerce": 1}
    out = io.StringIO()
    assert (
        main(["audit", "-", "--tools", "web_search", "--json"], stdin=io.TextIOWrapper(io.BytesIO(log)), stdout=out)
        == 0
    )
    assert json.loads(out.getvalue())["by_repair"] == {"name": 1}  # names alone: no schema, no coercion


def test_ids_are_unique_within_a_record_even_for_identical_turns() -> None:
    turn = {"role": "assistant", "content": CALL + CALL}
    record = {
        "messages": [
            turn,
            {"role": "tool", "content": "a"},
            {"role": "tool", "content": "b"},
            dict(turn),
            {"role": "tool", "content": "c"},
        ]
    }
    fixed, report = tr.fix_record(record, tools=TOOLS)
    ids = [c["id"] for m in fixed["messages"] for c in m.get("tool_calls", [])]
    linked = [m["tool_call_id"] for m in fixed["messages"] if m["role"] == "tool"]
    assert len(ids) == len(set(ids)) == 4
    assert linked[:3] == ids[:3] and report.results_linked == 3
    # The second turn's second call has no result: the pairing answers it with a placeholder.
    assert linked[3] == ids[3] and dict(report.by_repair)["history:placeholder-added"] == 1
    # The same turn in another record gets the same ids: they come from the turn, not the file.
    assert tr.fix_record({"messages": [turn]}, tools=TOOLS)[0]["messages"][0]["tool_calls"][0]["id"] == ids[0]


def test_small_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolrepair import _audit, _records
    from toolrepair._records import RecordFixer
    from toolrepair._report import Tally

    # A definition without parameters takes any object; an unreadable ShareGPT call is malformed.
    assert tool_specs([{"name": "f"}])[0].parameters == {"type": "object"}
    _, report = tr.fix_record({"conversations": [{"from": "function_call", "value": "{oops"}]}, tools=["f"])
    assert report.unrepairable == (("malformed", 1),)
    # One valid call beside an invalid one: the turn stays text, both are counted.
    record = {"role": "assistant", "content": CALL + hermes("web_search", {"limit": "many"})}
    fixed, report = tr.fix_record(record, tools=TOOLS)
    assert fixed is record
    assert dict(report.by_rejection_reason) == {"invalid-arguments": 1, "beside-an-invalid-call": 1}
    # The caches stay bounded.
    monkeypatch.setattr(_records, "TOOLS_CACHE_SIZE", 1)
    monkeypatch.setattr(_audit, "FIXER_CACHE_SIZE", 1)
    fixer = RecordFixer()
    for name in ("a", "b", "c"):
        fixer.run({"tools": [name], "text": "x"}, Tally(), write=False)
        tr.fix_record('{"text": "x"}', tools=[name])
    assert len(fixer._cache) == 1 and len(_audit._fixers) == 1
    # An owned record is fixed in place.
    mine = {"role": "assistant", "content": CALL}
    assert RecordFixer(TOOLS).fix(mine, Tally(), owned=True) is mine and "tool_calls" in mine
    with pytest.raises(ValueError, match="not AuditReport fields"):
        tr.AuditReport.from_dict({"nope": 1})
