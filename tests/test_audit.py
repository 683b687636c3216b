"""`toolrepair audit`: every record shape, gzip and stdin, bad lines, the table, bounded memory."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolrepair import _logio, _report, cli
from toolrepair._audit import process_lines
from toolrepair._records import RecordFixer
from toolrepair._report import AuditReport, Tally
from toolrepair.cli import main

TOOLS = "web_search,calculator"


def hermes(name: str, args: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"


def openai_call(name: str, arguments: str, ident: str = "c1") -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"object": "chat.completion", "choices": [{"index": i, "message": m} for i, m in enumerate(messages)]}


def assistant(content: Any = None, tool_calls: list[Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        msg["tool_calls"] = tool_calls
    return msg


def anthropic(*blocks: dict[str, Any], typed: bool = False) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": list(blocks)}
    if typed:
        msg = {"id": "msg_1", "type": "message", **msg, "stop_reason": "tool_use"}
    return msg


def tool_use(name: str, args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": args}


def run(argv: list[str], stdin: Any = None) -> tuple[int, str]:
    out = io.StringIO()
    status = main(argv, stdin=stdin, stdout=out)
    return status, out.getvalue()


def run_json(argv: list[str], stdin: Any = None) -> dict[str, Any]:
    status, out = run([*argv, "--json"], stdin)
    assert status == 0
    result: dict[str, Any] = json.loads(out)
    return result


def jsonl(*objs: Any) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs)


# -- one reply of each shape -----------------------------------------------------------------
SHAPES: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "openai completion, clean call",
        completion(assistant(None, [openai_call("web_search", '{"query": "cats"}')])),
        {"replies": 1, "native_calls": 1, "repaired_calls": 0, "clean_calls": 1, "by_repair": {}},
    ),
    (
        "openai completion, drifted name and broken JSON",
        completion(assistant(None, [openai_call("WebSearch", "{'query': 'cats',}")])),
        {"native_calls": 1, "repaired_calls": 1, "by_repair": {"name": 1, "decode": 1}},
    ),
    (
        "openai completion, two choices are two replies",
        completion(assistant("hi"), assistant(None, [openai_call("calculator", "{}")])),
        {"replies": 2, "native_calls": 1, "empty_replies": 1},
    ),
    (
        "openai completion, unknown tool",
        completion(assistant(None, [openai_call("web_serch", "{}")])),
        {"unrepairable_calls": 1, "unrepairable": {"not-found": 1}, "top_rejected_names": [["web_serch", 1]]},
    ),
    (
        "openai completion, truncated arguments",
        completion(assistant(None, [openai_call("web_search", '{"query": "ca')])),
        {"unrepairable_calls": 1, "unrepairable": {"arguments:truncated": 1}},
    ),
    (
        "openai completion, a call that is not an object",
        completion(assistant(None, ["web_search"])),
        {"native_calls": 1, "unrepairable": {"malformed": 1}},
    ),
    (
        "bare assistant message, text call salvaged",
        assistant("Sure." + hermes("web_search", {"query": "cats"})),
        {"replies": 1, "native_calls": 0, "salvaged_calls": 1, "replies_salvaged": 1, "by_dialect": {"hermes": 1}},
    ),
    (
        "bare assistant message, native calls win over text",
        assistant(hermes("web_search", {"query": "x"}), [openai_call("calculator", '{"expression": "1"}')]),
        {"native_calls": 1, "salvaged_calls": 0, "replies_salvaged": 0},
    ),
    (
        "bare assistant message, legacy function_call",
        {"role": "assistant", "content": None, "function_call": {"name": "calculator", "arguments": "{}"}},
        {"native_calls": 1, "clean_calls": 1},
    ),
    (
        "bare assistant message, content parts",
        assistant([{"type": "text", "text": hermes("calculator", {"expression": "2"})}]),
        {"salvaged_calls": 1},
    ),
    (
        "text call for a tool never offered",
        {"text": hermes("rm_rf", {"path": "/"})},
        {
            "salvaged_calls": 0,
            "rejected": 1,
            "by_rejection_reason": {"not-offered": 1},
            "top_rejected_names": [["rm_rf", 1]],
            "empty_replies": 1,
        },
    ),
    (
        "text call inside a fence is not a call",
        {"text": "```\n" + hermes("web_search", {"query": "x"}) + "\n```"},
        {"salvaged_calls": 0, "empty_replies": 1},
    ),
    (
        "anthropic message, tool_use",
        anthropic({"type": "text", "text": "Let me look."}, tool_use("web_search", {"query": "cats"})),
        {"native_calls": 1, "clean_calls": 1},
    ),
    (
        "anthropic typed message, drifted name",
        anthropic(tool_use("Calculator", {"expression": "1"}), typed=True),
        {"native_calls": 1, "repaired_calls": 1, "by_repair": {"name": 1}},
    ),
    (
        "anthropic message, text only, salvaged",
        anthropic(
            {"type": "thinking", "thinking": hermes("web_search", {})},
            {"type": "text", "text": hermes("web_search", {"query": "x"})},
        ),
        {"salvaged_calls": 1, "by_dialect": {"hermes": 1}},
    ),
    ("text object", {"text": "just prose"}, {"replies": 1, "empty_replies": 1}),
    ("bare JSON string", "plain prose with no call", {"replies": 1, "empty_replies": 1}),
    (
        "ollama chat response",
        {
            "model": "qwen2.5",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "web_search", "arguments": {"query": "x"}}}],
            },
        },
        {"native_calls": 1, "clean_calls": 1},
    ),
    (
        "responses api output",
        {
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "ok"}]},
                {"type": "function_call", "name": "web-search", "arguments": '{"query": "x"}', "call_id": "c"},
            ]
        },
        {"native_calls": 1, "repaired_calls": 1, "by_repair": {"name": 1}},
    ),
]


@pytest.mark.parametrize(("obj", "expected"), [(o, e) for _, o, e in SHAPES], ids=[s[0] for s in SHAPES])
def test_shapes(obj: Any, expected: dict[str, Any]) -> None:
    got = run_json(["audit", "-", "--tools", TOOLS], io.StringIO(json.dumps(obj) + "\n"))
    assert got["bad_records"] == 0
    for key, value in expected.items():
        assert got[key] == value, key


MIXED = jsonl(
    completion(
        assistant(
            None, [openai_call("WebSearch", "{'query': 'cats',}"), openai_call("calculator", '{"expression": "1+1"}')]
        )
    ),
    assistant("Sure." + hermes("web_search", {"query": "x"}) + hermes("delete_all", {})),
    anthropic(tool_use("delete_all", {})),
    "not json at all",
    {"text": "hello"},
    "",
    {"role": "user", "content": "hi"},
    assistant(None, [openai_call("calculator", '{"expression": "1+')]),
)

MIXED_EXPECTED = {
    "records": 7,
    "replies": 5,
    "bad_records": 2,
    "bad_line_numbers": [4, 7],
    "records_changed": 2,
    "bad_record_reasons": {"not-a-record": 1, "not-json": 1},
    "salvaged_left_as_text": 0,
    "results_linked": 0,
    "replies_with_native_calls": 3,
    "replies_salvaged": 1,
    "empty_replies": 1,
    "native_calls": 4,
    "clean_calls": 1,
    "repaired_calls": 1,
    "unrepairable_calls": 2,
    "salvaged_calls": 1,
    "rejected": 1,
    "by_repair": {"name": 1, "decode": 1},
    "unrepairable": {"not-found": 1, "arguments:truncated": 1},
    "by_dialect": {"hermes": 1},
    "by_rejection_reason": {"not-offered": 1},
    "top_rejected_names": [["delete_all", 2]],
    "rejected_names_approximate": False,
}


def write(path: Path, text: str, *, compress: bool = False) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("log.jsonl", False),
        ("log.jsonl.gz", True),
        ("log-without-suffix", True),  # gzip found by its magic bytes
        ("plain.gz", False),  # a misleading suffix: the bytes decide
    ],
)
def test_files_exact_counts(tmp_path: Path, name: str, compress: bool) -> None:
    path = write(tmp_path / name, MIXED, compress=compress)
    assert run_json(["audit", str(path), "--tools", TOOLS]) == MIXED_EXPECTED


@pytest.mark.parametrize("compress", [False, True])
def test_stdin_bytes(compress: bool) -> None:
    data = MIXED.encode()
    stdin = io.TextIOWrapper(io.BytesIO(gzip.compress(data) if compress else data), encoding="utf-8")
    assert run_json(["audit", "-", "--tools", TOOLS], stdin) == MIXED_EXPECTED


def test_stdin_text_stream() -> None:
    assert run_json(["audit", "-", "--tools", TOOLS], io.StringIO(MIXED)) == MIXED_EXPECTED


def test_any_accepts_every_name() -> None:
    got = run_json(["audit", "-", "--any"], io.StringIO(MIXED))
    assert got["native_calls"] == 4
    assert got["unrepairable"] == {"arguments:truncated": 1}
    assert got["by_repair"] == {"decode": 1}
    assert got["salvaged_calls"] == 2
    assert got["rejected"] == 0
    assert got["top_rejected_names"] == []


def test_any_call_without_a_name() -> None:
    got = run_json(["audit", "-", "--any"], io.StringIO(jsonl(assistant(None, [{"function": {"arguments": "{}"}}]))))
    assert got["unrepairable"] == {"no-name": 1}


# -- bad lines -------------------------------------------------------------------------------
BAD = [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "a message is a JSON number, not an object"),
    ("null", "a JSON null is not a record of model replies"),
    ('{"foo": 1}', "not a recognised record shape"),
    ('{"role": "user", "content": "hi"}', "a 'user' message is not a model reply"),
    ('{"choices": [{"delta": {}}]}', "a choice without a message"),
    ('{"role": "assistant", "content": 5}', "content is a JSON number"),
    ('{"role": "assistant", "tool_calls": "x"}', "tool_calls is not a list"),
    ("[" * 100_000, "nested too deeply"),
]


@pytest.mark.parametrize(("line", "why"), BAD, ids=[b[1] for b in BAD])
def test_bad_line_reported_with_number(line: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(["audit", "-", "--any"], io.StringIO(jsonl({"text": "ok"}, line, {"text": "ok"})))
    assert got["bad_records"] == 1
    assert got["replies"] == 2
    err = capsys.readouterr().err
    assert err.startswith("toolrepair: <stdin>:2")
    assert why in err
    assert "Traceback" not in err


def test_invalid_utf8_is_a_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "\xff\xfe"}\n')
    got = run_json(["audit", str(path), "--any"])
    assert (got["replies"], got["bad_records"]) == (1, 1)
    assert f"{path}:2: not valid UTF-8 (byte 0xff at offset 10)" in capsys.readouterr().err


def test_bad_lines_reported_up_to_a_cap(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(["audit", "-", "--any", "--json"], io.StringIO('{"text": "ok"}\n' + "x\n" * 50))
    got = json.loads(out)
    assert (status, got["bad_records"]) == (0, 50)
    assert got["bad_line_numbers"] == list(range(2, 22))
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 21
    assert err[19] == "toolrepair: <stdin>:21:1: not valid JSON: Expecting value"
    assert err[20] == "toolrepair: <stdin>: ... and 30 more bad records"


# -- exit status -----------------------------------------------------------------------------
def test_missing_file_is_one_line_and_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(["audit", str(tmp_path / "nope.jsonl"), "--any"])
    err = capsys.readouterr().err
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and "cannot read" in err and "No such file" in err


def test_directory_is_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", str(tmp_path), "--any"])[0] == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_truncated_gzip_is_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(gzip.compress(jsonl({"text": "ok"}).encode() * 100)[:-30])
    assert run(["audit", str(path), "--any"])[0] == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "log.jsonl"],  # neither --tools nor --any
        ["audit", "log.jsonl", "--tools", "a", "--any"],  # both
        ["audit", "log.jsonl", "--tools", " , "],  # no names
        ["audit"],  # no file
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv, stdin=io.StringIO(""), stdout=io.StringIO()) == 2
    assert "toolrepair: error: " in capsys.readouterr().err


# -- the table -------------------------------------------------------------------------------
def test_table(tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", MIXED)
    status, out = run(["audit", str(path), "--tools", TOOLS])
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == f"toolrepair audit: {path}"

    def row(label: str) -> list[str]:
        k = len(label.split())
        [found] = [
            ln.split()
            for ln in lines
            if ln.split()[:k] == label.split() and ln.split()[k : k + 1] and ln.split()[k][0].isdigit()
        ]
        return found[k:]

    assert row("records") == ["7"]
    assert row("bad records (left as they were)") == ["2", "28.6%"]
    assert row("records fix changes") == ["2", "28.6%"]
    assert row("replies") == ["5"]
    assert row("with native calls") == ["3", "60.0%"]
    assert row("with calls salvaged from text") == ["1", "20.0%"]
    assert row("with no call") == ["1", "20.0%"]
    assert row("native calls") == ["4"]
    assert row("valid as sent") == ["1", "25.0%"]
    assert row("repaired") == ["1", "25.0%"]
    assert row("name") == ["1", "25.0%"]
    assert row("decode") == ["1", "25.0%"]
    assert row("cannot be repaired") == ["2", "50.0%"]
    assert row("not-found") == ["1", "25.0%"]
    assert row("arguments:truncated") == ["1", "25.0%"]
    assert row("calls salvaged from text") == ["1"]
    assert row("hermes") == ["1", "100.0%"]
    assert row("left as text (no field for calls)") == ["0", "0.0%"]
    assert row("tool results linked to new ids") == ["0"]
    assert row("candidates rejected") == ["1"]
    assert row("not-offered") == ["1", "100.0%"]
    assert "most common refused names" in lines
    assert row("'delete_all'") == ["2"]


def test_table_of_an_empty_log() -> None:
    status, out = run(["audit", "-", "--any"], io.StringIO(""))
    assert status == 0
    assert "toolrepair audit: <stdin>" in out
    assert "refused names" not in out
    assert " -" in out  # percentages of zero totals are a dash, not a division by zero


def test_top_five_names_most_common_first() -> None:
    names = ["a"] * 6 + ["b"] * 5 + ["c"] * 4 + ["d"] * 3 + ["e"] * 2 + ["f"]
    log = jsonl(*({"text": hermes(n, {})} for n in names))
    got = run_json(["audit", "-", "--tools", "x"], io.StringIO(log))
    assert got["top_rejected_names"] == [["a", 6], ["b", 5], ["c", 4], ["d", 3], ["e", 2]]


# -- progress --------------------------------------------------------------------------------
class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_tty(monkeypatch: pytest.MonkeyPatch, argv: list[str], stdin: Any = None) -> tuple[str, str]:
    monkeypatch.setattr(_logio, "TTY_EVERY", (256, 1 << 40))
    err, out = FakeTTY(), io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    main(argv, stdin=stdin or io.StringIO(), stdout=out)
    return out.getvalue(), err.getvalue()


def test_progress_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "log.jsonl", jsonl(*({"text": "prose"} for _ in range(2000))))
    out, drawn = run_tty(monkeypatch, ["audit", str(path), "--any", "--json"])
    assert drawn.count("\r[") == 2000 // 256  # one redraw per 256 records, counted, not timed
    assert "%" in drawn and "lines" in drawn
    assert drawn.endswith("\r\x1b[K")  # the line is cleared before the result is printed
    assert json.loads(out)["replies"] == 2000


def test_progress_on_a_pipe_without_size(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(jsonl(*({"text": "p"} for _ in range(600))).encode()))
    _, err = run_tty(monkeypatch, ["audit", "-", "--any", "--json"], stdin)
    assert "MiB read" in err


@pytest.mark.parametrize(
    ("every", "lines"),
    [
        ((500, 1 << 40), ["500 lines", "1,000 lines", "1,500 lines", "2,000 lines"]),  # by records
        ((1 << 40, 14 * 700), ["700 lines", "1,400 lines"]),  # by bytes: 14 a line
    ],
)
@pytest.mark.parametrize("verb", ["audit", "fix"])
def test_progress_lines_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    every: tuple[int, int],
    lines: list[str],
    verb: str,
) -> None:
    monkeypatch.setattr(_logio, "LOG_EVERY", every)
    log = jsonl(*({"text": "p"} for _ in range(2000))).encode()
    assert len(log) == 2000 * 14
    argv = ["audit", "-", "--any", "--json"] if verb == "audit" else ["fix", "-", "-o", "-", "--any", "--json"]
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert main(argv, stdin=io.TextIOWrapper(io.BytesIO(log)), stdout=stdout) == 0
    err = capsys.readouterr().err.splitlines()
    progress = [line for line in err if line.startswith(f"toolrepair {verb}: <stdin>: ")]
    assert [line.split("read  ")[1] for line in progress] == lines
    # Bytes read on stdin are counted too (no file size to ask).
    assert progress[0].startswith(f"toolrepair {verb}: <stdin>: 0.0 MiB read")


def test_progress_lines_of_a_file_give_the_share_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_logio, "LOG_EVERY", (1000, 1 << 40))
    path = write(tmp_path / "log.jsonl", jsonl(*({"text": "prose"} for _ in range(2000))))
    assert run(["audit", str(path), "--any", "--json"])[0] == 0
    progress = [line for line in capsys.readouterr().err.splitlines() if line.startswith("toolrepair audit: ")]
    assert len(progress) == 2 and all("% of 0.0 MiB)" in line for line in progress)


def test_silent_when_stderr_is_not_a_terminal_and_the_log_is_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "log.jsonl", jsonl(*({"text": "prose"} for _ in range(2000))))
    assert run(["audit", str(path), "--any", "--json"])[0] == 0
    assert capsys.readouterr().err == ""  # under LOG_EVERY: nothing to say


def test_bad_lines_clear_the_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(('{"text": "ok"}\n' + "x\n" * 600).encode()))
    _, err = run_tty(monkeypatch, ["audit", "-", "--any", "--json"], stdin)
    assert "\r\x1b[Ktoolrepair: <stdin>:257" not in err  # only the first 20 are printed
    assert "... and 580 more bad records" in err


# -- bounded state ---------------------------------------------------------------------------
def test_rejected_names_are_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_report, "NAME_COUNTER_LIMIT", 50)
    monkeypatch.setattr(_report, "NAME_COUNTER_KEEP", 10)
    tally = Tally()
    for _ in range(5):
        tally.refuse_name("frequent")
    for i in range(200):
        tally.refuse_name(f"invented_{i}")
    assert len(tally.rejected_names) <= 50
    assert tally.rejected_names.most_common(1) == [("frequent", 5)]
    report = tally.freeze()
    assert report.to_json()["rejected_names_approximate"] is True
    # Merging keeps the bound and the flag.
    merged = report.merge(report)
    assert len(merged.rejected_names) <= 50 and merged.names_pruned
    assert dict(merged.rejected_names)["frequent"] == 10


def test_long_names_are_cut() -> None:
    tally = Tally()
    tally.refuse_name("x" * 10_000)
    assert [len(n) for n in tally.rejected_names] == [_report.MAX_NAME_CHARS]


def _log_lines(n: int) -> Iterator[bytes]:
    """About 2 KB a line: a mix of every outcome, generated on the fly (nothing is kept)."""
    prose = ("The model explains its plan in some detail before it answers. " * 30).encode()
    shapes = [
        json.dumps(completion(assistant(None, [openai_call("WebSearch", "{'query': 'cats',}")]))).encode(),
        json.dumps(assistant("Sure." + hermes("web_search", {"query": "x"}))).encode(),
        json.dumps(anthropic(tool_use("delete_all", {}))).encode(),
        b"not json",
    ]
    for i in range(n):
        yield (
            shapes[i % 4][:-1] + b', "pad": "' + prose + b'", "i": ' + str(i).encode() + b"}\n"
            if i % 4 != 3
            else b"not json " + prose + b"\n"
        )


def _peak(n: int, fixing: bool) -> tuple[int, AuditReport]:
    fixer = RecordFixer(["web_search"])
    sink = (lambda _line: None) if fixing else None
    process_lines(_log_lines(8), fixer, write=sink)  # warm caches outside the measurement
    tracemalloc.start()
    try:
        report = process_lines(_log_lines(n), fixer, write=sink, on_bad_line=lambda _n, _w: None).freeze()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, report


@pytest.mark.parametrize("fixing", [False, True], ids=["audit", "fix"])
def test_memory_is_flat_in_the_log_size(fixing: bool) -> None:
    n = 1_000  # ~2 MB; 4n is ~8 MB
    small_peak, small = _peak(n, fixing)
    large_peak, large = _peak(4 * n, fixing)
    assert large.replies == 4 * small.replies == 3 * n
    assert large.bad_records == n
    assert large.records_changed == 4 * small.records_changed == 2 * n
    assert large_peak / small_peak < 1.5, (small_peak, large_peak)
    assert large_peak < 2_000_000  # a few lines' worth, not the log's 20 MB


def test_small_paths() -> None:
    tally = Tally()
    tally.refuse_name(None)
    tally.refuse_name("")
    assert not tally.rejected_names
    # A string block is text; an empty reply is a reply with no call.
    lines = [json.dumps(assistant(["plain ", hermes("a", {})])), json.dumps(assistant(None))]
    got = process_lines(lines, RecordFixer(["a"])).freeze()
    assert (got.replies, got.salvaged_calls, got.empty_replies) == (2, 1, 1)
    assert _logio._position(None) is None
    assert _logio.isatty(object()) is False
    assert cli.MAX_REPORTED_BAD_LINES == 20


# -- validators are compiled once per schema, not per record --------------------------------------
def test_validators_are_compiled_once_per_distinct_schema() -> None:
    from toolrepair import audit_records
    from toolrepair._args import _schema

    schemas = [
        {"type": "object", "properties": {"q": {"type": "string"}}},
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        {"type": "object", "properties": {"x": {"type": "boolean"}}},
    ]
    records = []
    for i in range(300):
        schema = schemas[i % 3]
        tools = [{"type": "function", "function": {"name": f"t{i % 3}", "parameters": schema}}]
        call = {"id": f"c{i}", "type": "function", "function": {"name": f"T{i % 3}", "arguments": "{}"}}
        records.append(json.dumps({"tools": tools, "messages": [{"role": "assistant", "tool_calls": [call]}]}))
    _schema._compile_cached.cache_clear()
    report = audit_records(records)
    again = audit_records(records)  # a second job over the same schemas compiles nothing new
    assert report.repaired_calls == 300 and again == report
    # CompiledSchema (the validator) is built on a cache miss only: one per distinct schema.
    info = _schema._compile_cached.cache_info()
    assert (info.misses, info.currsize) == (len(schemas), len(schemas))
