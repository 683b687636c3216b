"""What the README quotes is what the code prints."""

from __future__ import annotations

import pathlib
import re

import pytest

import toolrepair as tr

README = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def web_search(query: str) -> str:
    return query


def test_the_strict_resolution_message_is_quoted_exactly() -> None:
    quoted = re.search(r"strict=True\)\n# ToolResolutionError: (.+)\n", README)
    assert quoted is not None
    with pytest.raises(tr.ToolResolutionError) as raised:
        tr.resolve_tool_names(["web_serch"], {"web_search": web_search}, strict=True)
    assert str(raised.value) == quoted.group(1)


def test_the_module_clash_section_names_the_check() -> None:
    assert "### Installed beside `tool-call-repair`" in README
    assert "hasattr(toolrepair, 'ToolRegistry')" in README
    assert hasattr(tr, "ToolRegistry") and tr.__file__.endswith("__init__.py")
