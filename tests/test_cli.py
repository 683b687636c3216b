"""The `toolrepair` command: salvage's JSON, and every rough edge of the command line (one
message style, the right line and column, exit statuses that say whether anything was read)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import toolrepair
from toolrepair.cli import main

REPLY = 'Sure.<tool_call>{"name": "WebSearch", "arguments": {"query": "cats"}}</tool_call>'


def run(argv: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    status = main(argv, stdin=io.StringIO(stdin), stdout=out)
    return status, out.getvalue()


def test_salvage_an_opt_in_dialect_by_name() -> None:
    reply = 'Action: web_search\nAction Input: {"query": "cats"}'
    assert json.loads(run(["salvage", "--tools", "web_search"], reply)[1])["calls"] == []
    status, out = run(["salvage", "--tools", "web_search", "--dialects", "react"], reply)
    got = json.loads(out)
    assert status == 0 and [c["function"]["name"] for c in got["calls"]] == ["web_search"]
    assert got["calls"][0]["dialect"] == "react"


@pytest.mark.parametrize(
    ("argv", "calls", "content", "rejected"),
    [
        (["salvage", "--tools", "web_search"], [("web_search", {"query": "cats"})], "Sure.", []),
        (["salvage", "-", "--tools", "web_search, calculator"], [("web_search", {"query": "cats"})], "Sure.", []),
        (["salvage", "--any"], [("WebSearch", {"query": "cats"})], "Sure.", []),
        (["salvage", "--tools", "calculator"], [], REPLY, ["not-offered"]),
        (["salvage", "--tools", "web_search", "--dialects", "function_tag"], [], REPLY, []),
        # An opt-in dialect is reachable by name: this reply is not its format, so no call.
        (["salvage", "--tools", "web_search", "--dialects", "react,cline"], [], REPLY, []),
        (["salvage", "--tools", "web_search", "--pretty"], [("web_search", {"query": "cats"})], "Sure.", []),
    ],
)
def test_salvage_from_stdin(
    argv: list[str], calls: list[tuple[str, dict[str, str]]], content: str, rejected: list[str]
) -> None:
    status, out = run(argv, REPLY)
    assert status == 0
    got = json.loads(out)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in got["calls"]] == calls
    assert all(c["type"] == "function" and c["id"].startswith("call_") for c in got["calls"])
    assert got["content"] == content
    assert [r["reason"] for r in got["rejected"]] == rejected


def test_masks_can_be_switched_off() -> None:
    fenced = "```\n" + REPLY + "\n```"
    assert json.loads(run(["salvage", "--tools", "web_search"], fenced)[1])["calls"] == []
    on = json.loads(run(["salvage", "--tools", "web_search", "--no-mask-fences"], fenced)[1])
    assert len(on["calls"]) == 1
    thought = "<think>" + REPLY + "</think>"
    on = json.loads(run(["salvage", "--tools", "web_search", "--no-mask-reasoning"], thought)[1])
    assert len(on["calls"]) == 1


def test_salvage_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "reply.txt"
    path.write_text(REPLY, encoding="utf-8")
    status, out = run(["salvage", str(path), "--tools", "web_search"])
    assert status == 0 and json.loads(out)["content"] == "Sure."


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (
            ["salvage", "missing-file.txt", "--tools", "a"],
            1,
            "toolrepair: error: cannot read missing-file.txt: No such file or directory",
        ),
        (["salvage", "--tools", "a", "--any"], 2, "toolrepair: error: argument --any: not allowed with argument"),
        (["salvage"], 2, "toolrepair: error: one of the arguments --tools --tools-file --any is required"),
        (["audit", "in.jsonl"], 2, "toolrepair: error: one of the arguments --tools --tools-file --any is required"),
        # fix refuses a missing tool option exactly as audit does (it used to copy its input unchanged).
        (
            ["fix", "in.jsonl", "-o", "out.jsonl"],
            2,
            "toolrepair: error: one of the arguments --tools --tools-file --any is required",
        ),
        (["salvage", "--tools", " , "], 2, "expected a comma-separated list of tool names"),
        (["salvage", "--tools", "a", "--dialects", "nope"], 2, "unknown dialect(s) ['nope']"),
        (["bogus"], 2, "toolrepair: error: argument COMMAND: invalid choice: 'bogus'"),
        ([], 2, "toolrepair: error: a command is required (salvage, audit, fix, serve)"),
        (["fix", "in.jsonl"], 2, "toolrepair: error: the following arguments are required: -o/--output"),
        (["audit", "x", "--tools-file", "t.json", "--any"], 2, "not allowed with argument"),
    ],
)
def test_errors_are_one_line(argv: list[str], status: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv, stdin=io.StringIO(""), stdout=io.StringIO()) == status
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("toolrepair: error: ")  # one prefix, whichever verb
    if status == 2:
        assert lines[0].startswith("usage: toolrepair")  # usage errors say how to call it
    else:
        assert len(lines) == 1


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"]) == (0, f"toolrepair {toolrepair.__version__}\n")


# (the bad line, the message after "<stdin>:2", as json.loads places it)
JSON_ERRORS = [
    ('{"text": ', ":10: not valid JSON: Expecting value"),
    ('{"text": "a\tb"}', ":12: not valid JSON: Invalid control character"),
    ('{"text": "x",}', ":14: not valid JSON: Expecting property name enclosed in double quotes"),
    ('{"text": "x"} junk', ":15: not valid JSON: Extra data"),
    ('{"text": "x"\r', ":13: not valid JSON: Expecting ',' delimiter"),
    ("[" * 100_000, ": not valid JSON: nested too deeply"),
    ('{"text": 1}', ": not a recognised record shape (no choices, messages, conversations, content or text)"),
]


@pytest.mark.parametrize(("line", "message"), JSON_ERRORS, ids=[m for _, m in JSON_ERRORS])
@pytest.mark.parametrize("verb", [["audit", "-", "--any"], ["fix", "-", "-o", "-", "--any"]], ids=["audit", "fix"])
def test_bad_line_messages_match_json_loads(
    verb: list[str], line: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = '{"text": "ok"}\n' + line + "\n"
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert main(verb, stdin=io.TextIOWrapper(io.BytesIO(data.encode())), stdout=out) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "toolrepair: <stdin>:2" + message
    assert " at at " not in err and " at:" not in err
    if ":" in message[1:4]:  # the column is the one json.loads reports for the line alone
        with pytest.raises(ValueError, match=f"column {message[1 : message.index(':', 1)]} "):
            json.loads(line.rstrip("\r"))
    if verb[0] == "fix":
        out.flush()
        assert out.buffer.getvalue() == data.encode()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "verb", [["audit", "{}", "--any"], ["fix", "{}", "-o", "{}.out", "--any"]], ids=["audit", "fix"]
)
@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"x\ny\n", 1),  # every line bad: nothing could be read
        (b'\xff\xfe\n{"text": \n', 1),  # binary garbage too
        (b"x\n" + b'{"text": "ok"}\n', 0),  # one good record is enough
        (b"", 0),  # an empty log is read, and empty
        (b"\n  \n", 0),  # blank lines are not records
    ],
)
def test_exit_status_says_whether_anything_was_read(
    tmp_path: Path, verb: list[str], data: bytes, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    argv = [a.format(path) for a in verb]
    assert main(argv, stdout=io.StringIO()) == status
    err = capsys.readouterr().err
    assert ("toolrepair: error: no record of" in err) == (status == 1)
    if verb[0] == "fix":
        assert (tmp_path / "log.jsonl.out").read_bytes() == data  # bad records are written unchanged


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_salvage_refuses_invalid_utf8_like_audit(tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = b"Sure.\xff\xfe<tool_call>"
    path = tmp_path / "reply.bin"
    path.write_bytes(data)
    argv = ["salvage", str(path) if how == "file" else "-", "--any"]
    stdout = io.StringIO()
    assert main(argv, stdin=io.TextIOWrapper(io.BytesIO(data)), stdout=stdout) == 1
    assert stdout.getvalue() == ""
    err = capsys.readouterr().err
    assert err.endswith("is not valid UTF-8 (byte 0xff at offset 5)\n") and err.count("\n") == 1
    # audit counts the same bytes as a bad record, with the same words.
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"text": "' + data + b'"}\n')
    assert main(["audit", str(log), "--any"], stdout=io.StringIO()) == 1
    assert "not valid UTF-8 (byte 0xff at offset 15)" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["file", "stdin", "text stdin"])
def test_salvage_over_the_input_limit_is_an_error(tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    limit = ["--max-input-chars", "100"]
    path = tmp_path / "big.txt"
    path.write_text("é" * 101, encoding="utf-8")
    stdin: io.TextIOBase = io.TextIOWrapper(io.BytesIO(path.read_bytes())) if how == "stdin" else io.StringIO("é" * 101)
    stdout = io.StringIO()
    assert main(["salvage", str(path) if how == "file" else "-", "--any", *limit], stdin=stdin, stdout=stdout) == 1
    assert stdout.getvalue() == ""  # nothing echoed
    assert "is longer than salvage's input limit of 100 characters" in capsys.readouterr().err
    path.write_text("é" * 100, encoding="utf-8")
    assert main(["salvage", str(path), "--any", *limit], stdout=io.StringIO()) == 0


def test_python_dash_m(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolrepair", "salvage", "--tools", "web_search"],
        input=REPLY,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["calls"][0]["function"]["name"] == "web_search"
    bad = subprocess.run(
        [sys.executable, "-m", "toolrepair", "salvage", str(tmp_path / "nope"), "--any"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1


def test_console_entry_point() -> None:
    """The `toolrepair` script is `toolrepair.cli:main`, run the way the script runs it."""
    from importlib.metadata import entry_points

    [script] = [e for e in entry_points(group="console_scripts") if e.name == "toolrepair"]
    assert script.value == "toolrepair.cli:main"
    code = "import sys; from toolrepair.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, f"toolrepair {toolrepair.__version__}\n")
    bare = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert bare.returncode == 2 and bare.stderr.startswith("usage: toolrepair")
