"""normalize_name, suggest_names, split_namespace, NameTable, resolve_tool_names."""

from __future__ import annotations

import logging

import pytest

import toolrepair as tr
from toolrepair._names import NameTable, split_namespace


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("web_search", "websearch"),
        ("WebSearch", "websearch"),
        ("web-search", "websearch"),
        ("Web Search", "websearch"),
        ("WEB_SEARCH", "websearch"),
        ("  web_search\t", "websearch"),
        ("ｗｅｂ＿ｓｅａｒｃｈ", "websearch"),  # fullwidth letters fold under NFKC
        ("web\u200bsearch", "websearch"),  # zero-width space
        ("web\u200dsearch", "websearch"),  # zero-width joiner
        ("\u202eweb_search", "websearch"),  # bidi override
        ("\ufeffweb_search", "websearch"),  # BOM
        ("Straße", "strasse"),  # casefold, not lower
        ("wеb_search", "wеbsearch"),  # Cyrillic е stays Cyrillic
        ("web.search", "web.search"),  # dots mark namespaces, they are kept
        ("", ""),
    ],
)
def test_normalize_name(name: str, key: str) -> None:
    assert tr.normalize_name(name) == key


def test_cyrillic_lookalike_never_normalises_to_latin() -> None:
    assert tr.normalize_name("wеb_search") != tr.normalize_name("web_search")
    assert tr.normalize_name("сalculator") != tr.normalize_name("calculator")


@pytest.mark.parametrize(
    ("name", "candidates", "expected"),
    [
        ("READ_FILE", ["read_file", "web_search"], ["read_file"]),
        ("search_web", ["web_search", "read_file"], ["web_search"]),
        ("translate_text", ["create_ticket", "read_file"], []),
        ("web_serch", ["web_search", "calculator"], ["web_search"]),
        ("WebSearch", ["web_search", "websearch", "calculator"], ["web_search", "websearch"]),
        ("functions.web_search", ["web_search", "calculator"], ["web_search"]),
        ("calcuator", ["calculator", "web_search"], ["calculator"]),
        ("zzz", [], []),
    ],
)
def test_suggest_names(name: str, candidates: list[str], expected: list[str]) -> None:
    assert tr.suggest_names(name, candidates) == expected


def test_suggest_names_limits() -> None:
    pool = ["tool_a", "tool_b", "tool_c", "tool_d"]
    assert len(tr.suggest_names("tool_x", pool)) == 3
    assert tr.suggest_names("tool_x", pool, n=1) == ["tool_a"]
    assert tr.suggest_names("tool_x", pool, n=0) == []
    assert tr.suggest_names("tool_x", pool, cutoff=0.99) == []


@pytest.mark.parametrize(
    ("name", "bare"),
    [
        ("functions.web_search", "web_search"),
        ("default_api.web_search", "web_search"),
        ("server__web_search", "web_search"),
        ("mcp__server__web_search", "web_search"),
        ("server/web_search", "web_search"),
        ("server:web_search", "web_search"),
        ("web_search", None),
        ("__init__", None),
        (".web_search", None),
        ("web_search.", None),
    ],
)
def test_split_namespace(name: str, bare: str | None) -> None:
    assert split_namespace(name) == bare


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("web_search", ("web_search", False)),
        ("WebSearch", ("web_search", True)),
        ("functions.web_search", ("web_search", True)),
        ("default_api.WebSearch", ("web_search", True)),
        ("srv__web-search", (None, False)),  # `srv` names no configured server
        ("wеb_search", (None, False)),
        ("unknown", (None, False)),
        ("read_file", ("read_file", False)),
        ("ReadFile", (None, False)),  # two offered names share the key: ambiguous
        ("readfile", ("readfile", False)),  # but exact names always win
    ],
)
def test_name_table(name: str, expected: tuple[str | None, bool]) -> None:
    table = NameTable(["web_search", "read_file", "readfile"])
    assert table.resolve(name) == expected


CATALOGUE = {"web_search": "WS", "read_file": "RF", "calculator": "CALC"}


def test_resolve_tool_names_known() -> None:
    assert tr.resolve_tool_names(["read_file", "web_search"], CATALOGUE) == ["RF", "WS"]


def test_resolve_tool_names_from_iterable_of_tools() -> None:
    def web_search(query: str) -> str:
        return query

    class Calc:
        name = "calculator"

        def run(self, expression: str) -> str:
            return expression

    calc = Calc()
    assert tr.resolve_tool_names(["calculator", "web_search"], [web_search, calc]) == [calc, web_search]


def test_resolve_tool_names_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolrepair"):
        got = tr.resolve_tool_names(["web_serch", "read_file", "zzzzzz"], CATALOGUE, strict=False)
    assert got == ["RF"]
    messages = [r.getMessage() for r in caplog.records]
    assert "Unknown tool 'web_serch'. Did you mean 'web_search'?" in messages
    assert "Unknown tool 'zzzzzz'." in messages


def test_resolve_tool_names_on_unknown_replaces_warning(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[list[str], dict[str, list[str]]]] = []
    with caplog.at_level(logging.WARNING, logger="toolrepair"):
        got = tr.resolve_tool_names(["web_serch", "calculator"], CATALOGUE, on_unknown=lambda u, s: seen.append((u, s)))
    assert got == ["CALC"]
    assert seen == [(["web_serch"], {"web_serch": ["web_search"]})]
    assert not caplog.records


def test_resolve_tool_names_strict() -> None:
    with pytest.raises(tr.ToolResolutionError) as info:
        tr.resolve_tool_names(["web_serch", "read_fil", "a", "b"], CATALOGUE, strict=True)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.unknown == ["web_serch", "read_fil", "a", "b"]
    assert err.suggestions == {"web_serch": ["web_search"], "read_fil": ["read_file"], "a": []}
    assert str(err).startswith(
        "Unknown tool 'web_serch'. Did you mean 'web_search'? Unknown tool 'read_fil'. Did you mean 'read_file'? "
        "Unknown tool 'a'. And 1 more. Available tools: "
    )


@pytest.mark.parametrize(
    ("names", "start"),
    [
        (["web_serch"], "Unknown tool 'web_serch'. Did you mean 'web_search'? Available tools: ["),
        (["zzzzzz"], "Unknown tool 'zzzzzz'. Available tools: ["),
        (
            ["web_serch", "zzzzzz"],
            "Unknown tool 'web_serch'. Did you mean 'web_search'? Unknown tool 'zzzzzz'. Available",
        ),
    ],
)
def test_resolution_error_message_is_the_warning_sentence(names: list[str], start: str) -> None:
    with pytest.raises(tr.ToolResolutionError) as info:
        tr.resolve_tool_names(names, CATALOGUE, strict=True)
    assert str(info.value).startswith(start)


@pytest.mark.parametrize(
    ("value", "raises"), [("1", True), ("true", True), ("YES", True), ("0", False), ("", False), ("no", False)]
)
def test_resolve_tool_names_env(monkeypatch: pytest.MonkeyPatch, value: str, raises: bool) -> None:
    monkeypatch.setenv("TOOLREPAIR_STRICT_TOOLS", value)
    if raises:
        with pytest.raises(tr.ToolResolutionError):
            tr.resolve_tool_names(["web_serch"], CATALOGUE)
    else:
        assert tr.resolve_tool_names(["web_serch"], CATALOGUE) == []
    # an explicit `strict` wins over the environment
    assert tr.resolve_tool_names(["web_serch"], CATALOGUE, strict=False) == []


def test_resolve_tool_names_reports_each_unknown_once() -> None:
    seen: list[list[str]] = []
    tr.resolve_tool_names(["x", "x"], CATALOGUE, on_unknown=lambda u, s: seen.append(u))
    assert seen == [["x"]]
