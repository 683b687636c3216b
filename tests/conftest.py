"""Shared fixtures: a few tools written the way users write them."""

from __future__ import annotations

import pathlib

import pytest

CORPUS = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "corpus.jsonl"


def web_search(query: str, limit: int = 5) -> str:
    """Search the web."""
    return f"results for {query} ({limit})"


def calculator(expression: str) -> float:
    """Evaluate arithmetic."""
    raise ZeroDivisionError("division by zero")


@pytest.fixture
def tools() -> list[object]:
    return [web_search, calculator]
