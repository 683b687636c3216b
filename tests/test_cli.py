"""The `toolrepair salvage` command: JSON out, one-line errors, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolrepair.cli import main

REPLY = 'Sure.<tool_call>{"name": "WebSearch", "arguments": {"query": "cats"}}</tool_call>'


def run(argv: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    status = main(argv, stdin=io.StringIO(stdin), stdout=out)
    return status, out.getvalue()


@pytest.mark.parametrize(
    ("argv", "calls", "content", "rejected"),
    [
        (["salvage", "--tools", "web_search"], [("web_search", {"query": "cats"})], "Sure.", []),
        (["salvage", "-", "--tools", "web_search, calculator"], [("web_search", {"query": "cats"})], "Sure.", []),
        (["salvage", "--any"], [("WebSearch", {"query": "cats"})], "Sure.", []),
        (["salvage", "--tools", "calculator"], [], REPLY, ["not-offered"]),
        (["salvage", "--tools", "web_search", "--dialects", "function_tag"], [], REPLY, []),
        (["salvage", "--tools", "web_search", "--pretty"], [("web_search", {"query": "cats"})], "Sure.", []),
    ],
)
def test_salvage_from_stdin(argv: list[str], calls: list[tuple[str, dict[str, str]]], content: str,
                            rejected: list[str]) -> None:
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
        (["salvage", "missing-file.txt", "--tools", "a"], 1, "toolrepair: error: No such file or directory"),
        (["salvage", "--tools", "a", "--any"], 2, "not allowed with argument"),
        (["salvage"], 2, "one of the arguments --tools --any is required"),
        (["salvage", "--tools", " , "], 2, "expected a comma-separated list of tool names"),
        (["salvage", "--tools", "a", "--dialects", "nope"], 2, "unknown dialect(s) ['nope']"),
        (["bogus"], 2, "invalid choice"),
    ],
)
def test_errors_are_one_line(argv: list[str], status: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) if status == 2 else contextlib.nullcontext():
        assert main(argv, stdin=io.StringIO(""), stdout=io.StringIO()) == status
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 3  # usage line(s) + the error


def test_python_dash_m(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "toolrepair", "salvage", "--tools", "web_search"],
                          input=REPLY, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["calls"][0]["function"]["name"] == "web_search"
    bad = subprocess.run([sys.executable, "-m", "toolrepair", "salvage", str(tmp_path / "nope"), "--any"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1
