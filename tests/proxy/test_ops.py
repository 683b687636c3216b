"""Operating the proxy: /metrics (Prometheus and OpenTelemetry), /ready, unknown paths, the log
line of a broken stream, and the command line's checks (port, banner, upstream URL)."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

import httpx
import pytest

from toolrepair import cli
from toolrepair.proxy import create_app
from toolrepair.proxy._cli import banner
from toolrepair.proxy._config import upstream_warning
from toolrepair.proxy._metrics import Metrics, outcome_of, route_of
from toolrepair.proxy._report import Note, Tally

from .replies import TOOLS
from .servers import Running

prometheus_parser = pytest.importorskip("prometheus_client.parser")


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in prometheus_parser.text_string_to_metric_families(text):
        for sample in family.samples:
            out[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return out


def _chat(url: str, model: str, **extra: Any) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **extra}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)


def test_metrics_count_requests_calls_repairs_and_latency(start_proxy: Any) -> None:
    url = start_proxy(metrics=True)
    assert _chat(url, "vllm/whole/hermes").status_code == 200
    assert _chat(url, "vllm/whole/native_mixed").status_code == 200
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        timeout=30,
        json={"model": "vllm/token/mistral", "messages": [], "tools": TOOLS, "stream": True},
    ) as response:
        response.read()
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        timeout=30,
        json={"model": "fault/cut", "messages": [], "tools": TOOLS, "stream": True},
    ) as response:
        response.read()
    assert _chat(url, "fault/500").status_code == 500
    httpx.get(f"{url}/v1/models", timeout=30)
    response = httpx.get(f"{url}/metrics", timeout=30)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)

    def value(name: str, **labels: str) -> float:
        return samples.get((name, tuple(sorted(labels.items()))), 0.0)

    requests = "toolrepair_proxy_requests_total"
    assert value(requests, route="chat_completions", stream="false", outcome="ok") == 2
    assert value(requests, route="chat_completions", stream="true", outcome="ok") == 1
    assert value(requests, route="chat_completions", stream="true", outcome="stream_fault") == 1
    assert value(requests, route="chat_completions", stream="false", outcome="proxy_error") == 1
    assert value(requests, route="passthrough", stream="false", outcome="ok") == 1
    calls = "toolrepair_proxy_tool_calls_total"
    assert value(calls, source="salvaged", result="repaired") == 1  # hermes: "3" -> 3
    assert value(calls, source="salvaged", result="passed") == 2  # mistral's two
    assert value(calls, source="native", result="passed") == 1
    assert value(calls, source="native", result="refused") == 1  # send_email, not offered
    assert value("toolrepair_proxy_refusals_total", reason="not-found") == 1
    assert value("toolrepair_proxy_salvaged_calls_total", dialect="mistral") == 2
    assert value("toolrepair_proxy_salvaged_calls_total", dialect="hermes") == 1
    assert value("toolrepair_proxy_repairs_total", kind="coerce") == 1
    assert value("toolrepair_proxy_added_seconds_count", route="chat_completions") == 5
    assert value("toolrepair_proxy_upstream_seconds_count", route="passthrough") == 1
    # bounded labels: no tool name or model name is ever a label value
    assert not any("web_search" in str(key) or "vllm/" in str(key) for key in samples)


def test_metrics_off_by_default_and_behind_the_api_key(start_proxy: Any) -> None:
    assert httpx.get(f"{start_proxy()}/metrics", timeout=30).status_code == 404
    url = start_proxy(metrics=True, api_key="k")
    assert httpx.get(f"{url}/metrics", timeout=30).status_code == 401
    response = httpx.get(f"{url}/metrics", headers={"authorization": "Bearer k"}, timeout=30)
    assert response.status_code == 200 and "toolrepair_proxy_requests_total" in response.text


def test_two_apps_count_apart(start_proxy: Any) -> None:
    first, second = start_proxy(metrics=True), start_proxy(metrics=True)
    _chat(first, "vllm/whole/prose")
    counted = _samples(httpx.get(f"{second}/metrics", timeout=30).text)
    assert not any(name == "toolrepair_proxy_requests_total" for name, _ in counted)


def test_reprompts_counted() -> None:
    metrics = Metrics(otel=False)
    metrics.observe(
        route="messages", stream=False, status=200, fault=None, tally=Tally(reprompts=2), upstream=None, total=0.1
    )
    samples = _samples(metrics.exposition().decode())
    assert samples["toolrepair_proxy_reprompts_total", ()] == 2
    assert ("toolrepair_proxy_added_seconds_count", (("route", "messages"),)) not in samples


def test_unbounded_values_are_counted_as_other() -> None:
    tally = Tally()
    tally.dialects["my_custom_dialect"] += 1
    tally.repair_kinds["surprise"] += 1
    tally.outcomes["native", "weird"] += 1
    tally.notes.append(Note(None, "x", "m", reason="a-new-reason"))
    metrics = Metrics(otel=False)
    metrics.observe(route="responses", stream=True, status=200, fault=None, tally=tally, upstream=0.2, total=0.3)
    samples = _samples(metrics.exposition().decode())
    assert samples["toolrepair_proxy_salvaged_calls_total", (("dialect", "other"),)] == 1
    assert samples["toolrepair_proxy_repairs_total", (("kind", "other"),)] == 1
    assert samples["toolrepair_proxy_tool_calls_total", (("result", "other"), ("source", "native"))] == 1
    assert samples["toolrepair_proxy_refusals_total", (("reason", "other"),)] == 1


@pytest.mark.parametrize(
    ("status", "fault", "outcome"),
    [
        (200, None, "ok"),
        (200, "broken", "stream_fault"),
        (499, None, "client_disconnected"),
        (400, None, "client_error"),
        (401, None, "client_error"),
        (502, None, "upstream_error"),
        (504, None, "upstream_error"),
        (500, None, "proxy_error"),
        (304, None, "ok"),
    ],
)
def test_outcomes(status: int, fault: str | None, outcome: str) -> None:
    assert outcome_of(status, fault) == outcome


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/v1/chat/completions", "chat_completions"),
        ("/v1/messages", "messages"),
        ("/v1/responses", "responses"),
        ("/v1/models", "passthrough"),
        ("/v1/anything/at/all", "passthrough"),
    ],
)
def test_routes(path: str, route: str) -> None:
    assert route_of(path) == route


def test_opentelemetry_gets_the_same_counts() -> None:
    sdk_metrics = pytest.importorskip("opentelemetry.sdk.metrics")
    export = pytest.importorskip("opentelemetry.sdk.metrics.export")
    reader = export.InMemoryMetricReader()
    provider = sdk_metrics.MeterProvider(metric_readers=[reader])
    metrics = Metrics(meter_provider=provider)
    tally = Tally(salvaged=1, reprompts=1)
    tally.outcomes["salvaged", "repaired"] += 1
    tally.dialects["hermes"] += 1
    tally.repair_kinds["coerce"] += 1
    metrics.observe(route="messages", stream=True, status=200, fault=None, tally=tally, upstream=0.5, total=0.52)
    data = reader.get_metrics_data()
    points = {m.name: m.data.data_points for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert {p.attributes["outcome"]: p.value for p in points["toolrepair.proxy.requests"]} == {"ok": 1}
    assert [(dict(p.attributes), p.value) for p in points["toolrepair.proxy.tool_calls"]] == [
        ({"source": "salvaged", "result": "repaired"}, 1)
    ]
    assert [p.value for p in points["toolrepair.proxy.salvaged_calls"]] == [1]
    assert [p.value for p in points["toolrepair.proxy.reprompts"]] == [1]
    assert [p.count for p in points["toolrepair.proxy.added.duration"]] == [1]
    assert points["toolrepair.proxy.upstream.duration"][0].sum == pytest.approx(0.5)


# -- readiness, unknown paths, the log line ------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_ready_checks_the_upstream(start_proxy: Any) -> None:
    url = start_proxy()
    response = httpx.get(f"{url}/ready", timeout=30)
    assert response.status_code == 200 and response.json()["status"] == "ready"
    with Running(create_app(upstream=f"http://127.0.0.1:{_closed_port()}/v1")) as down:
        response = httpx.get(f"{down.url}/ready", timeout=30)
        assert response.status_code == 503 and response.json()["reason"].startswith("unreachable")
        assert httpx.get(f"{down.url}/health", timeout=30).status_code == 200  # liveness: the proxy is up


def test_unknown_local_path_is_an_openai_shaped_404(proxy: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="toolrepair.proxy"):
        response = httpx.post(f"{proxy}/chat/completions", json={}, timeout=30)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "not_found" and f"{proxy}/v1" in error["message"]
    assert any("POST /chat/completions 404" in r.getMessage() for r in caplog.records)


class _Lines(logging.Handler):
    """The proxy's log lines, and an event set when one for ``path`` is written (a streamed
    request logs when its body ends, on the server's thread)."""

    def __init__(self, path: str) -> None:
        super().__init__(logging.INFO)
        self.path, self.lines, self.seen = path, [], threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage()
        self.lines.append(line)
        if f" {self.path} " in line:
            self.seen.set()


def test_a_broken_stream_says_so_in_its_log_line(proxy: str) -> None:
    logger = logging.getLogger("toolrepair.proxy")
    lines = _Lines("/v1/chat/completions")
    logger.addHandler(lines)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        with httpx.stream(
            "POST",
            f"{proxy}/v1/chat/completions",
            timeout=30,
            json={"model": "fault/malformed", "messages": [], "tools": TOOLS, "stream": True},
        ) as response:
            for _ in response.iter_lines():
                pass
        assert lines.seen.wait(30)
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)
    line = next(line for line in lines.lines if " /v1/chat/completions " in line)
    assert " fault=malformed " in line
    assert "this is not an event" not in line  # never the upstream's bytes


# -- the command line ------------------------------------------------------------------------------
@pytest.mark.parametrize("port", ["0", "65536", "99999", "-1"])
def test_port_out_of_range(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--upstream", "http://x/v1", "--port", port]) == 2
    assert "a port is 1 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "line"),
    [
        ("127.0.0.1", "OpenAI base URL http://127.0.0.1:8787/v1 (Anthropic: http://127.0.0.1:8787)"),
        ("::1", "OpenAI base URL http://[::1]:8787/v1 (Anthropic: http://[::1]:8787)"),
    ],
)
def test_banner(host: str, line: str) -> None:
    assert banner(host, 8787) == f"toolrepair serve: {line}\n"


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://127.0.0.1:11434/v1", False),
        ("http://127.0.0.1:11434/v1/", False),
        ("http://h/api/v1", False),
        ("https://h/v1beta/openai", False),
        ("http://h/openai/v2", False),
        ("http://127.0.0.1:11434", True),
        ("http://h/", True),
        ("http://h/api", True),
        ("http://h/version", True),
    ],
)
def test_upstream_without_a_version_path_is_warned(url: str, warned: bool) -> None:
    assert (upstream_warning(url) is not None) == warned


def test_serve_prints_the_banner_and_the_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    import uvicorn

    ran: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.update(app=app, **kw))
    monkeypatch.setattr("gc.freeze", lambda: None)
    proxy_logger = logging.getLogger("toolrepair.proxy")
    monkeypatch.setattr(proxy_logger, "handlers", [])
    monkeypatch.setattr(proxy_logger, "level", proxy_logger.level)
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:11434", "--port", "9001", "--metrics"]) == 0
    assert "OpenAI base URL http://127.0.0.1:9001/v1" in capsys.readouterr().out
    assert any("has no version path" in r.getMessage() for r in caplog.records)
    assert ran["app"].state.config.metrics is True
