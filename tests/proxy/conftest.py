"""Servers for the proxy's tests: one scripted upstream and one proxy for the package's run,
more proxies where a test needs other options. Every server is stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")

from toolrepair.proxy import create_app

from .servers import Running, Upstream


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    with Running(up.app) as running:
        up.url = running.url  # type: ignore[attr-defined]
        yield up
        up.release.set()


@pytest.fixture(scope="session")
def proxy(upstream: Upstream) -> Iterator[str]:
    app = create_app(upstream=f"{upstream.url}/v1", annotate=False, timeout=30)  # type: ignore[attr-defined]
    with Running(app) as running:
        yield running.url


@pytest.fixture
def start_proxy(upstream: Upstream) -> Iterator[object]:
    """Start a proxy with other options: ``start_proxy(timeout=0.2)`` -> its URL."""
    stack: list[Running] = []

    def start(**options: object) -> str:
        options.setdefault("upstream", f"{upstream.url}/v1")  # type: ignore[attr-defined]
        running = Running(create_app(**options))  # type: ignore[arg-type]
        stack.append(running.__enter__())
        return running.url

    yield start
    upstream.release.set()
    for running in reversed(stack):
        running.__exit__(None, None, None)
    upstream.release.clear()
