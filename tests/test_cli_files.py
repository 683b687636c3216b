"""The command's files under hostile conditions: what OUT may be, the temporary file, records that
make the walk fail, and lines too long to hold."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import toolrepair as tr
from toolrepair import _logio
from toolrepair._audit import process_lines
from toolrepair._limits import Limits
from toolrepair._logio import LongLine, bounded_lines, char_count
from toolrepair._records import RecordFixer
from toolrepair.cli import main

CALL = '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>'
FIXABLE = json.dumps({"role": "assistant", "content": CALL}) + "\n"
CLEAN = '{"text": "no call"}\n'


def fix(src: Path, out: str, *extra: str) -> int:
    return main(["fix", str(src), "-o", out, "--tools", "web_search", *extra], stdout=io.StringIO())


def log(tmp_path: Path, text: str = FIXABLE + CLEAN) -> Path:
    src = tmp_path / "in.jsonl"
    src.write_text(text, encoding="utf-8")
    return src


def leftovers(folder: Path, *expected: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in expected)


# -- item 11: OUT is a regular file, a new path, or - -----------------------------------------------
def test_out_that_is_not_a_regular_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = log(tmp_path)
    target = tmp_path / "target.txt"
    target.write_text("keep me")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    cases = [
        (tmp_path / "link", "a symbolic link"),
        (tmp_path / "dangling", "a symbolic link"),
        (tmp_path / "fifo", "a FIFO"),
        (tmp_path / "folder", "a folder"),
        (Path("/dev/null"), "a character device"),
    ]
    for out, kind in cases:
        before = os.lstat(out)
        assert fix(src, str(out)) == 1
        err = capsys.readouterr().err
        assert (
            err == f"toolrepair: error: refusing to write {out}: it is {kind}, not a regular file "
            "(give a regular file or - for stdout)\n"
        )
        after = os.lstat(out)
        assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)
    assert target.read_text() == "keep me"
    assert leftovers(tmp_path, "in.jsonl", "target.txt", "link", "dangling", "fifo", "folder") == []


def test_out_regular_file_is_replaced_and_keeps_its_mode(tmp_path: Path) -> None:
    src = log(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text("old")
    out.chmod(0o640)
    inode = out.stat().st_ino
    assert fix(src, str(out)) == 0
    assert out.stat().st_ino != inode  # a new file renamed into place, not the old one rewritten
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert json.loads(out.read_text().splitlines()[0])["tool_calls"][0]["function"]["name"] == "web_search"
    assert leftovers(tmp_path, "in.jsonl", "out.jsonl") == []


def test_new_out_gets_the_mode_open_would_give(tmp_path: Path) -> None:
    src = log(tmp_path)
    old = os.umask(0o027)
    try:
        assert fix(src, str(tmp_path / "new.jsonl")) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.jsonl").stat().st_mode) == 0o640


# -- item 12: the temporary file ---------------------------------------------------------------------
def test_planted_symlinks_at_guessable_temp_names_are_never_written_through(tmp_path: Path) -> None:
    data = FIXABLE + CLEAN
    src = log(tmp_path, data)
    out = tmp_path / "out.jsonl"
    planted = [f"out.jsonl.tmp{os.getpid()}", "out.jsonl.tmp", ".out.jsonl.part", "out.jsonl.part"]
    for name in planted:
        (tmp_path / name).symlink_to(src)
    assert fix(src, str(out)) == 0
    assert src.read_text() == data  # the input is intact
    assert all((tmp_path / name).is_symlink() for name in planted)
    assert leftovers(tmp_path, "in.jsonl", "out.jsonl", *planted) == []


class InterruptedStdin(io.StringIO):
    """A text stdin (no byte buffer) whose reader is interrupted after ``after`` lines, or that
    runs ``during`` once it has been read that far: the write loop is under way by then."""

    def __init__(self, text: str, after: int, during: Any = None) -> None:
        super().__init__(text)
        self.after, self.during, self.read_lines = after, during, 0

    def readline(self, size: int | None = -1) -> str:
        self.read_lines += 1
        if self.read_lines == self.after + 1:
            if self.during is None:
                raise KeyboardInterrupt
            self.during()
        return super().readline(size)


@pytest.mark.parametrize("existing", [False, True])
def test_ctrl_c_leaves_no_temporary_file_and_no_half_out(tmp_path: Path, existing: bool) -> None:
    out = tmp_path / "out.jsonl"
    if existing:
        out.write_text("the previous output\n")
    stdin = InterruptedStdin(FIXABLE * 50, after=20)
    status = main(["fix", "-", "-o", str(out), "--any"], stdin=stdin, stdout=io.StringIO())
    assert status == 130
    assert stdin.read_lines == 21  # interrupted inside the loop, after 20 records were written
    assert (out.read_text() if existing else out.exists()) == ("the previous output\n" if existing else False)
    assert leftovers(tmp_path, "out.jsonl") == []


def test_out_swapped_for_a_symlink_during_the_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    target = tmp_path / "target.txt"
    target.write_text("keep me")

    def swap() -> None:
        out.symlink_to(target)

    stdin = InterruptedStdin(FIXABLE * 5, after=2, during=swap)
    assert main(["fix", "-", "-o", str(out), "--any"], stdin=stdin, stdout=io.StringIO()) == 1
    assert "refusing to write" in capsys.readouterr().err
    assert out.is_symlink() and target.read_text() == "keep me"
    assert leftovers(tmp_path, "out.jsonl", "target.txt") == []


def test_errors_name_out_not_the_temporary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = log(tmp_path)
    out = tmp_path / "missing" / "out.jsonl"
    assert fix(src, str(out)) == 1
    assert capsys.readouterr().err == f"toolrepair: error: cannot write {out}: No such file or directory\n"


# -- item 13: a record that makes the walk fail is counted and copied --------------------------------
def nested_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def deep_record(levels: int) -> dict[str, Any]:
    return {
        "tools": [{"type": "function", "function": {"name": "web_search", "parameters": nested_schema(levels)}}],
        "messages": [{"role": "assistant", "content": CALL}],
    }


@pytest.mark.parametrize("levels", [150, 450])
def test_a_schema_nested_too_deep_is_a_counted_bad_record(levels: int) -> None:
    record = deep_record(levels)
    fixed, report = tr.fix_record(record)
    assert fixed is record
    assert (report.records, report.bad_records, dict(report.bad_record_reasons)) == (1, 1, {"bad-tools": 1})
    line = json.dumps(record)
    assert tr.fix_record(line) == (line, report)
    assert tr.audit_records([record, line]).bad_records == 2


def test_schema_depth_is_read_from_limits() -> None:
    # 64 levels of properties (129 of JSON) describe arguments within the default 64: accepted.
    assert tr.fix_record(deep_record(63))[1].records_changed == 1
    assert tr.fix_record(deep_record(64))[1].bad_records == 0
    assert tr.fix_record(deep_record(65))[1].bad_records == 1
    fixer = RecordFixer(None, Limits(max_depth=8))
    tally = process_lines([json.dumps(deep_record(9)), json.dumps(deep_record(8))], fixer)
    assert (tally.bad_records, tally.records_changed) == (1, 1)


def test_the_run_goes_on_past_a_record_the_walk_fails_on(tmp_path: Path) -> None:
    # Limits(max_depth=200) lets a schema of 200 levels through the depth check; the validator
    # then overflows the stack on it. That record is counted as failed and copied; the others are fixed.
    bad = json.dumps(deep_record(200)) + "\n"
    src = log(tmp_path, FIXABLE + bad + FIXABLE)
    out = tmp_path / "out.jsonl"
    stdout = io.StringIO()
    status = main(
        ["fix", str(src), "-o", str(out), "--tools", "web_search", "--max-depth", "200", "--json"], stdout=stdout
    )
    assert status == 0
    report = json.loads(stdout.getvalue())
    assert (report["records"], report["bad_records"], report["records_changed"]) == (3, 1, 2)
    assert report["bad_record_reasons"] == {"failed": 1}
    assert out.read_text().splitlines(keepends=True)[1] == bad


# -- item 15: a line longer than the limit is never held whole ---------------------------------------
class CountingReader(io.BytesIO):
    """Records the largest piece a reader asked for and got."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.largest_request = self.largest_piece = 0

    def readline(self, size: int | None = -1) -> bytes:
        assert size is not None and size > 0  # never an unbounded read
        self.largest_request = max(self.largest_request, size)
        piece = super().readline(size)
        self.largest_piece = max(self.largest_piece, len(piece))
        return piece


@pytest.mark.parametrize("length", [10_000, 100_003])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_an_over_long_line_is_copied_in_chunks(length: int, ending: bytes) -> None:
    limits = Limits(max_input_chars=200)
    long = b'{"text": "' + b"x" * length + b'"}'
    data = FIXABLE.encode() + long + b"\n" + CLEAN.encode() + long + ending
    reader = CountingReader(data)
    written: list[bytes | str] = []
    tally = process_lines(
        bounded_lines(reader, limits.max_input_chars, chunk=64),
        RecordFixer(["web_search"], limits),
        write=written.append,
    )
    assert b"".join(p if isinstance(p, bytes) else p.encode() for p in written[:1]) != FIXABLE.encode()  # fixed
    assert b"".join(p for p in written[1:] if isinstance(p, bytes)) == long + b"\n" + CLEAN.encode() + long + ending
    cap = 4 * 200 + 2
    assert reader.largest_request == cap and reader.largest_piece <= cap  # flat: never the line's length
    assert max(len(p) for p in written) <= cap
    assert len(written) >= 2 * ((length - cap) // 64)  # the long lines went through in chunks
    assert (tally.records, tally.bad_records, dict(tally.bad_record_reasons)) == (4, 2, {"too-large": 2})
    assert tally.records_changed == 1


def test_an_audit_skips_an_over_long_line_without_holding_it() -> None:
    reader = CountingReader(b'{"text": "' + b"y" * 50_000 + b'"}\n' + CLEAN.encode())
    tally = process_lines(bounded_lines(reader, 30, chunk=256), RecordFixer(None, Limits(max_input_chars=30)))
    assert (tally.records, tally.bad_records, tally.replies) == (2, 1, 1)
    assert reader.largest_piece <= 256


@pytest.mark.parametrize("text", ["x" * 100, "é" * 100, "€" * 100, "𝄞" * 100])
@pytest.mark.parametrize("over", [False, True])
def test_the_limit_counts_characters_not_bytes(text: str, over: bool) -> None:
    record = json.dumps(text, ensure_ascii=False)  # a bare JSON string: a record of len(text) + 2 characters
    assert char_count(record.encode()) == char_count(record) == len(text) + 2
    limits = Limits(max_input_chars=len(record) - over)
    for stream in (io.BytesIO(record.encode() + b"\n"), io.StringIO(record + "\n")):
        lines = list(bounded_lines(stream, limits.max_input_chars))
        assert len(lines) == 1 and not isinstance(lines[0], LongLine)  # up to 4 bytes a character: read whole
        tally = process_lines(lines, RecordFixer(None, limits))
        assert (tally.records, tally.bad_records) == (1, int(over))


def test_cli_copies_an_over_long_line_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_logio, "CHUNK_BYTES", 128)
    long = '{"text": "' + "z" * 5000 + '"}\n'
    src = log(tmp_path, FIXABLE + long + CLEAN)
    out = tmp_path / "out.jsonl"
    stdout = io.StringIO()
    assert fix(src, str(out), "--max-input-chars", "200", "--json") == 0
    lines = out.read_text().splitlines(keepends=True)
    assert lines[1:] == [long, CLEAN] and "tool_calls" in lines[0]
    assert (
        "toolrepair: " + str(src) + ":2: longer than Limits.max_input_chars (200 characters)" in capsys.readouterr().err
    )
    assert main(["audit", str(src), "--any", "--max-input-chars", "200", "--json"], stdout=stdout) == 0
    assert json.loads(stdout.getvalue())["bad_record_reasons"] == {"too-large": 1}


# -- issue 30: salvage reads --tools-file too ----------------------------------------------------------
def test_salvage_tools_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "web_search", "parameters": {}}}]))
    out = io.StringIO()
    assert main(["salvage", "--tools-file", str(tools)], stdin=io.StringIO(CALL), stdout=out) == 0
    assert [c["function"]["name"] for c in json.loads(out.getvalue())["calls"]] == ["web_search"]
    tools.write_text('[{"function": {}}]')
    assert main(["salvage", "--tools-file", str(tools)], stdin=io.StringIO(CALL), stdout=io.StringIO()) == 1
    assert capsys.readouterr().err == f"toolrepair: error: {tools}: tool definition 0 has no name\n"


def test_out_under_a_file_is_an_error_naming_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = log(tmp_path)
    out = f"{src}/out.jsonl"  # a path through a regular file: lstat says "not a directory"
    assert fix(src, out) == 1
    assert capsys.readouterr().err == f"toolrepair: error: cannot write {out}: Not a directory\n"


def test_decoded_records_that_make_the_walk_fail_are_counted() -> None:
    # A tools value nested deeper than json's encoder goes (its cache key), and a record too deep
    # to copy before fixing: both are bad records of a decoded value, never an exception.
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    record = {"tools": deep, "messages": [{"role": "assistant", "content": CALL}]}
    fixed, report = tr.fix_record(record)
    assert fixed is record and dict(report.bad_record_reasons) == {"bad-tools": 1}
    record = {"meta": deep, "messages": [{"role": "assistant", "content": CALL}]}
    fixed, report = tr.fix_record(record, tools=["web_search"])
    assert fixed is record and dict(report.bad_record_reasons) == {"failed": 1}


@pytest.mark.parametrize("value", ["0", "x", "-3"])
def test_limit_flags_take_whole_numbers(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "-", "--any", "--max-depth", value], stdin=io.StringIO(""), stdout=io.StringIO()) == 2
    assert f"expected a whole number >= 1, got {value!r}" in capsys.readouterr().err


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(("max_depth", "clean", "unrepairable"), [(8, 0, 1), (10, 1, 0)])
def test_a_native_calls_arguments_are_held_to_the_fixers_limits(max_depth: int, clean: int, unrepairable: int) -> None:
    # One Limits for every check: the arguments (10 levels with their object) are held to the
    # fixer's max_depth, not the default's.
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "web_search", "arguments": json.dumps({"q": _nested(9)})},
    }
    record = {"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]}
    report = process_lines([json.dumps(record)], RecordFixer(["web_search"], Limits(max_depth=max_depth))).freeze()
    assert (report.clean_calls, report.unrepairable_calls) == (clean, unrepairable)
