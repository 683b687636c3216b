"""`toolrepair serve` as users start it, and the proxy stack imported only when it is used."""

from __future__ import annotations

import gc
import json
import logging
import socket
import subprocess
import sys
import urllib.request
from typing import Any

import pytest

from toolrepair import cli


def test_import_toolrepair_does_not_import_the_proxy_stack() -> None:
    script = (
        "import sys, toolrepair, toolrepair.cli; toolrepair.cli.build_parser(); "
        "print(sorted(m for m in ('starlette', 'uvicorn', 'httpx', 'toolrepair.proxy._app') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_without_the_extra_serve_names_it() -> None:
    script = "import sys; sys.modules['starlette'] = None\nfrom toolrepair.cli import main\nsys.exit(main(['serve', '--upstream', 'http://127.0.0.1:1/v1']))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 1
    assert out.stderr.startswith("toolrepair: error: ")
    assert "pip install 'toolrepair[proxy]'" in out.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve"], "--upstream"),
        (["serve", "--upstream", "u", "--port", "x"], "expected a number"),
        (["serve", "--upstream", "u", "--timeout", "0"], "expected a positive number"),
        (["serve", "--upstream", "u", "--profile", "cloud"], "invalid choice"),
        (["serve", "--upstream", "u", "--reasoning", "hidden"], "invalid choice"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "toolrepair: error: " in err


def test_bad_upstream_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--upstream", "localhost:11434"]) == 1
    assert capsys.readouterr().err == (
        "toolrepair: error: upstream must be an http:// or https:// URL, not 'localhost:11434'\n"
    )


def test_an_unknown_model_profile_is_refused_with_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--upstream", "http://x/v1", "--model-profile", "qwen"]) == 1
    err = capsys.readouterr().err
    assert "Unknown model profile 'qwen'. Did you mean 'qwen3'?" in err


def test_defaults_bind_loopback() -> None:
    args = cli.build_parser().parse_args(["serve", "--upstream", "http://x/v1"])
    assert (args.host, args.port, args.profile, args.annotate, args.max_reprompts, args.api_key) == (
        "127.0.0.1",
        8787,
        "local",
        False,
        0,
        None,
    )
    assert (args.model_profile, args.reasoning) == (None, "separate")


def test_options_reach_the_app_and_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    ran: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.update(app=app, frozen=gc.get_freeze_count(), **kw))
    frozen: list[bool] = []
    real_freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True) or real_freeze())
    proxy_logger = logging.getLogger("toolrepair.proxy")
    monkeypatch.setattr(proxy_logger, "handlers", [])  # the handler serve adds is dropped afterwards
    monkeypatch.setattr(proxy_logger, "level", proxy_logger.level)
    argv = [
        "serve",
        "--upstream",
        "http://127.0.0.1:1/v1",
        "--host",
        "0.0.0.0",
        "--port",
        "9000",
        "--profile",
        "hosted",
        "--annotate",
        "--max-reprompts",
        "2",
        "--timeout",
        "1.5",
        "--max-body",
        "10",
        "--max-reply",
        "11",
        "--max-line",
        "12",
        "--api-key",
        "k",
        "--model-profile",
        "gpt-oss",
        "--reasoning",
        "inline",
    ]
    assert cli.main(argv) == 0
    assert (ran["host"], ran["port"], ran["access_log"]) == ("0.0.0.0", 9000, False)
    # The start-up heap is frozen before the server runs (no full-collection pauses over it).
    gc.unfreeze()
    assert frozen == [True] and ran["frozen"] > 0
    config = ran["app"].state.config
    assert (config.max_reply, config.max_line, config.model_profile, config.reasoning) == (11, 12, "gpt-oss", "inline")
    assert (config.profile, config.annotate, config.max_reprompts, config.timeout, config.max_body, config.api_key) == (
        "hosted",
        True,
        2,
        1.5,
        10,
        "k",
    )
    # The request line is on; httpx's own per-request INFO line stays off.
    assert proxy_logger.isEnabledFor(logging.INFO) and len(proxy_logger.handlers) == 1
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_command_line(upstream: Any) -> None:
    """The contract's command, as a process: /health, then a repaired reply; stopped at the end."""
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolrepair",
            "serve",
            "--upstream",
            f"{upstream.url}/v1",
            "--port",
            str(port),
            "--annotate",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Wait for the "Uvicorn running" line rather than polling on a clock.
        assert process.stderr is not None
        for line in process.stderr:
            if "Uvicorn running on http://127.0.0.1:" in line:
                break
        else:
            pytest.fail("serve exited before listening")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as response:
            assert response.status == 200 and json.load(response)["status"] == "ok"
        from .replies import TOOLS

        body = json.dumps({"model": "vllm/whole/qwen3_xml", "messages": [], "tools": TOOLS}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions", data=body, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.load(response)
            assert response.headers["x-toolrepair"] == "repaired=1, salvaged=1, refused=0"
        assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "web_search"
        assert reply["toolrepair"]["salvaged"] == 1
    finally:
        process.terminate()
        _, rest = process.communicate(timeout=30)
    # One line per request, the proxy's own: httpx's per-request INFO line is not let through.
    lines = [line for line in rest.splitlines() if "/v1/" in line]
    assert len(lines) == 1 and " toolrepair.proxy POST /v1/chat/completions 200 " in lines[0], rest


# -- where the API key comes from -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "file_text", "environ", "key", "warned"),
    [
        ([], None, {}, None, False),
        ([], None, {"TOOLREPAIR_API_KEY": "from-env"}, "from-env", False),
        ([], None, {"TOOLREPAIR_API_KEY": ""}, None, False),
        (["--api-key-file", "{file}"], "from-file\n", {"TOOLREPAIR_API_KEY": "from-env"}, "from-file", False),
        (["--api-key-file", "{file}"], "  spaced \r\nsecond line\n", {}, "spaced", False),
        (["--api-key", "on-argv"], None, {"TOOLREPAIR_API_KEY": "from-env"}, "on-argv", True),
    ],
)
def test_api_key_sources(
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    file_text: str | None,
    environ: dict[str, str],
    key: str | None,
    warned: bool,
) -> None:
    from toolrepair.proxy._cli import api_key

    path = tmp_path / "key"
    if file_text is not None:
        path.write_text(file_text)
    argv = ["serve", "--upstream", "http://x/v1", *(f.format(file=path) for f in flags)]
    assert api_key(cli.build_parser().parse_args(argv), environ) == key
    err = capsys.readouterr().err
    assert ("visible to other users" in err) is warned
    if warned:
        assert "--api-key-file" in err and "TOOLREPAIR_API_KEY" in err


@pytest.mark.parametrize(
    ("file_text", "message"),
    [(None, "cannot read the API key"), ("\n", "is empty"), (b"\xff\xfe", "cannot read the API key")],
)
def test_api_key_file_refused(tmp_path: Any, capsys: pytest.CaptureFixture[str], file_text: Any, message: str) -> None:
    path = tmp_path / "key"
    if isinstance(file_text, bytes):
        path.write_bytes(file_text)
    elif file_text is not None:
        path.write_text(file_text)
    assert cli.main(["serve", "--upstream", "http://x/v1", "--api-key-file", str(path)]) == 1
    assert message in capsys.readouterr().err


def test_api_key_and_its_file_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--upstream", "http://x/v1", "--api-key", "k", "--api-key-file", "f"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_bad_upstream_url_hides_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--upstream", "ftp://me:pw@host/v1?k=v"]) == 1
    err = capsys.readouterr().err
    assert "pw" not in err and "k=v" not in err and "ftp://***@host/v1?***" in err
