"""Policy entries and namespaces: deny/allow entries resolve like names when the registry is
built; only the documented model namespaces and configured servers' prefixes are stripped;
any other prefix is an unknown tool. Every entry point (execute, aexecute, run, arun,
repair_call, salvage + run, calls + run) meets the same rule."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._names import MODEL_NAMESPACES, NAMESPACE_SEPARATORS, NameTable, resolve_policy_names

RAN: list[str] = []


def delete_file(path: str) -> str:
    RAN.append(path)
    return "deleted"


def web_search(query: str) -> str:
    return f"results for {query}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _refused_everywhere(registry: tr.ToolRegistry, name: str, kind: str) -> None:
    """``name`` with ``path`` runs nowhere, and every entry point says ``kind``."""
    arguments = {"path": "/"}
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute(name, arguments)
    assert info.value.kind == kind, info.value
    with pytest.raises(tr.ToolExecutionError) as ainfo:
        asyncio.run(registry.aexecute(name, arguments))
    assert ainfo.value.kind == kind
    for outcome in (
        registry.run({"name": name, "arguments": arguments}),
        asyncio.run(registry.arun({"name": name, "arguments": json.dumps(arguments)})),
    ):
        assert not outcome.ok and outcome.error is not None and outcome.error.kind == kind
    repair = tr.repair_call({"name": name, "arguments": arguments}, registry)
    assert repair.call is None and repair.error.kind == kind
    text = "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"
    for call in [*registry.salvage(text).calls, *registry.calls(text)]:
        assert not registry.run(call).ok
    assert RAN == []


# -- A: deny and allow entries ----------------------------------------------------------------
# Every spelling of `delete_file` a user may write in a deny list.
DENY_SPELLINGS = [
    "delete_file",
    "DeleteFile",
    "deleteFile",
    "delete-file",
    "Delete File",
    "DELETE_FILE",
    "delete__file",
    "functions.delete_file",
    "FUNCTIONS.DeleteFile",
    "default_api:delete_file",
    "tools/delete-file",
    "multi_tool_use__delete_file",
    "ｄｅｌｅｔｅ＿ｆｉｌｅ",
    "delete\u200bfile",
    "\ufeffdelete_file",
]
# Every way a model may call it.
CALL_SPELLINGS = [
    "delete_file",
    "DeleteFile",
    "delete-file",
    "functions.delete_file",
    "default_api.DeleteFile",
    "tools:delete_file",
    "multi_tool_use/delete_file",
    "ＤｅｌｅｔｅＦｉｌｅ",
]


@pytest.mark.parametrize("entry", DENY_SPELLINGS)
def test_every_spelling_of_a_deny_entry_denies_the_tool(entry: str) -> None:
    registry = tr.ToolRegistry([web_search, delete_file], deny=[entry], max_repairs=100, strict=True)
    assert registry.deny == frozenset({"delete_file"})
    for name in CALL_SPELLINGS:
        _refused_everywhere(registry, name, "denied")
    assert registry.execute("web_search", {"query": "x"}) == "results for x"


@pytest.mark.parametrize("entry", DENY_SPELLINGS)
def test_every_spelling_of_an_allow_entry_allows_only_that_tool(entry: str) -> None:
    registry = tr.ToolRegistry([web_search, delete_file], allow=[entry, "web_search"], max_repairs=100, strict=True)
    assert registry.allow == frozenset({"delete_file", "web_search"})
    assert registry.execute("DeleteFile", {"path": "p"}) == "deleted"
    assert RAN == ["p"]
    RAN.clear()
    only_search = tr.ToolRegistry([web_search, delete_file], allow=["WebSearch"], max_repairs=100, strict=True)
    assert only_search.allow == frozenset({"web_search"})
    for name in CALL_SPELLINGS:
        _refused_everywhere(only_search, name, "denied")


UNMATCHED = [
    ("delete_fil", "deny entry 'delete_fil' matches no tool. Did you mean 'delete_file'?"),
    ("rm_rf", "deny entry 'rm_rf' matches no tool."),
    ("dry_run.delete_file", "deny entry 'dry_run.delete_file' matches no tool. Did you mean 'delete_file'?"),
    ("dеlete_file", "deny entry 'dеlete_file' matches no tool."),  # Cyrillic е
]


@pytest.mark.parametrize(("entry", "message"), UNMATCHED)
def test_an_unmatched_entry_is_an_error_in_strict_mode(entry: str, message: str) -> None:
    with pytest.raises(tr.ToolResolutionError) as info:
        tr.ToolRegistry([web_search, delete_file], deny=[entry], strict=True)
    assert str(info.value).startswith(message)
    assert str(info.value).endswith("Available tools: ['delete_file', 'web_search']")
    assert info.value.unknown == [entry]
    with pytest.raises(tr.ToolResolutionError) as allow_info:
        tr.ToolRegistry([web_search, delete_file], allow=[entry], strict=True)
    assert str(allow_info.value).startswith(message.replace("deny", "allow", 1))


@pytest.mark.parametrize(("entry", "message"), UNMATCHED)
def test_an_unmatched_entry_is_a_warning_otherwise(entry: str, message: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolrepair"):
        registry = tr.ToolRegistry([web_search, delete_file], deny=[entry, "delete_file", entry], strict=False)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith(message)
    assert registry.deny == frozenset({"delete_file"})


@pytest.mark.parametrize(("env", "raises"), [("1", True), ("true", True), ("YES", True), ("0", False), ("", False)])
def test_strictness_follows_the_environment(monkeypatch: pytest.MonkeyPatch, env: str, raises: bool) -> None:
    monkeypatch.setenv("TOOLREPAIR_STRICT_TOOLS", env)
    if raises:
        with pytest.raises(tr.ToolResolutionError):
            tr.ToolRegistry([delete_file], deny=["delete_fil"])
    else:
        assert tr.ToolRegistry([delete_file], deny=["delete_fil"]).deny == frozenset()
    assert tr.ToolRegistry([delete_file], deny=["delete_fil"], strict=False).deny == frozenset()


def read_file(path: str) -> str:
    return "r"


def readfile(path: str) -> str:
    return "rf"


def test_an_ambiguous_entry_denies_every_tool_it_may_mean_and_allows_none(caplog: pytest.LogCaptureFixture) -> None:
    tools = [read_file, readfile, web_search]
    assert tr.ToolRegistry(tools, deny=["ReadFile"], strict=True).deny == frozenset({"read_file", "readfile"})
    with pytest.raises(tr.ToolResolutionError, match=r"allow entry 'ReadFile' matches several tools"):
        tr.ToolRegistry(tools, allow=["ReadFile"], strict=True)
    with caplog.at_level(logging.WARNING, logger="toolrepair"):
        registry = tr.ToolRegistry(tools, allow=["ReadFile", "web_search"], strict=False)
    assert registry.allow == frozenset({"web_search"})
    assert "write the one meant exactly" in caplog.text
    # Exact entries still pick one.
    assert tr.ToolRegistry(tools, allow=["readfile"], strict=True).allow == frozenset({"readfile"})


@pytest.mark.parametrize("bad", ["delete_file", b"delete_file"])
def test_a_single_string_is_not_a_list_of_names(bad: Any) -> None:
    with pytest.raises(TypeError, match="collection of tool names"):
        tr.ToolRegistry([delete_file], deny=bad)


def test_entries_must_be_strings() -> None:
    with pytest.raises(TypeError, match="entries must be tool names"):
        tr.ToolRegistry([delete_file], deny=[delete_file])


def test_no_list_is_no_policy() -> None:
    table = NameTable(["a"])
    assert resolve_policy_names(None, table, kind="allow") is None
    assert tr.ToolRegistry([delete_file]).allow is None
    assert tr.ToolRegistry([delete_file]).deny == frozenset()
    assert tr.ToolRegistry([delete_file], allow=[], strict=True).allow == frozenset()  # allow nothing


# -- B: namespaces ----------------------------------------------------------------------------
UNKNOWN_PREFIXES = [
    "dry_run",
    "simulate",
    "never",
    "mock",
    "undo",
    "test",
    "sandbox",
    "fake",
    "preview",
    "not",
    "mcp",
    "server",
    "myserver",
    "x",
    "DRY_RUN",
    "Dry-Run",
    "function",
    "tool",
    "api",
    "functionsx",
    "functions_dry_run",
]


def _all_forms(prefix: str, name: str) -> list[str]:
    return [prefix + sep + name for sep in NAMESPACE_SEPARATORS]


@pytest.mark.parametrize("prefix", UNKNOWN_PREFIXES)
def test_an_unknown_prefix_is_an_unknown_tool(prefix: str) -> None:
    registry = tr.ToolRegistry([web_search, delete_file], max_repairs=100)
    for name in [prefix + "-delete_file", prefix + "_DeleteFile", "functions." + prefix + ".delete_file"]:
        _refused_everywhere(registry, name, "not-found")
    for name in [*_all_forms(prefix, "delete_file"), *_all_forms(prefix, "DeleteFile")]:
        _refused_everywhere(registry, name, "not-found")
        with pytest.raises(tr.ToolExecutionError) as info:
            registry.execute(name, {"path": "/"})
        assert str(info.value) == (
            f"Tool {name!r} not found. Did you mean 'delete_file'? Available tools: ['delete_file', 'web_search']"
        )
        assert info.value.suggestion == "delete_file"
        assert info.value.available_tools == ["delete_file", "web_search"]


@pytest.mark.parametrize(
    "namespace", [*MODEL_NAMESPACES, "Functions", "FUNCTIONS", "Default-Api", "DefaultApi", "multi-tool-use", "TOOLS"]
)
@pytest.mark.parametrize("sep", NAMESPACE_SEPARATORS)
def test_documented_namespaces_resolve(namespace: str, sep: str) -> None:
    registry = tr.ToolRegistry([web_search, delete_file], max_repairs=100)
    assert registry.execute(namespace + sep + "web_search", {"query": "q"}) == "results for q"
    assert registry.execute("functions" + sep + namespace + sep + "WebSearch", {"query": "q"}) == "results for q"
    call = {"name": namespace + sep + "web_search", "arguments": {"query": "q"}}
    salvaged = registry.salvage("<tool_call>" + json.dumps(call) + "</tool_call>")
    assert [c.name for c in salvaged.calls] == ["web_search"]


# A configured server: a registered name carries its prefix.
SERVER_TOOLS = [
    tr.ToolSpec("github__create_issue", fn=lambda **kw: "issue"),
    tr.ToolSpec("read_file", fn=read_file),
    tr.ToolSpec("mcp__files__rm", fn=lambda **kw: "rm"),
]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("github__create_issue", "github__create_issue"),
        ("github.create_issue", "github__create_issue"),
        ("github/create_issue", "github__create_issue"),
        ("github:CreateIssue", "github__create_issue"),
        ("GitHub__create-issue", "github__create_issue"),
        ("mcp__github__create_issue", "github__create_issue"),
        ("functions.github.create_issue", "github__create_issue"),
        ("functions.mcp__github__create_issue", "github__create_issue"),
        ("files__rm", "mcp__files__rm"),
        ("files.rm", "mcp__files__rm"),
        ("mcp.files.rm", "mcp__files__rm"),
        ("github__read_file", None),  # a server's prefix reaches only its own tools
        ("files__read_file", None),
        ("gitlab__create_issue", None),  # not a configured server
        ("mcp__gitlab__create_issue", None),
        ("dry_run.github__create_issue", None),
        ("github.dry_run.create_issue", None),
        ("mcp__create_issue", None),
        ("github__files__rm", None),
        ("a.b.c.d.e.f", None),
        ("__init__", None),
        ("functions.", None),
        (".delete_file", None),
    ],
)
def test_configured_server_prefixes(name: str, expected: str | None) -> None:
    table = NameTable(t.name for t in SERVER_TOOLS)
    assert table.resolve(name)[0] == expected
    registry = tr.ToolRegistry(SERVER_TOOLS, max_repairs=100)
    outcome = registry.run({"name": name, "arguments": {}})
    if expected is None:
        assert outcome.error is not None and outcome.error.kind == "not-found"
    else:
        assert outcome.call.name == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "<|start|>assistant<|channel|>commentary to=functions.dry_run.delete_file <|constrain|>json"
            '<|message|>{"path": "/"}<|call|>',
            "not-offered",
        ),
        (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.dry_run.delete_file:0"
            '<|tool_call_argument_begin|>{"path": "/"}<|tool_call_end|><|tool_calls_section_end|>',
            "not-offered",
        ),
        ('<tool_call>{"name": "simulate/delete_file", "arguments": {"path": "/"}}</tool_call>', "not-offered"),
        ("[never.delete_file(path='/')]", None),
        ('<function=mock__delete_file>{"path": "/"}</function>', None),
    ],
)
def test_salvage_readers_strip_no_other_prefix(text: str, expected: str | None) -> None:
    registry = tr.ToolRegistry([delete_file], max_repairs=100)
    result = registry.salvage(text)
    assert result.calls == ()
    if expected is not None:
        assert [r.reason for r in result.rejected] == [expected]
    direct = tr.salvage_text(text, ["delete_file"])
    assert direct.calls == ()


_PREFIX = st.from_regex(r"[A-Za-z][A-Za-z0-9_\-]{0,12}", fullmatch=True).filter(
    lambda p: tr.normalize_name(p) not in {n.replace("_", "") for n in MODEL_NAMESPACES}
)
_TOOL = st.from_regex(r"[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,6}){0,2}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(_PREFIX, st.sampled_from(NAMESPACE_SEPARATORS), _TOOL)
def test_an_unknown_prefix_never_runs_the_tool(prefix: str, sep: str, tool: str) -> None:
    ran: list[str] = []
    spec = tr.ToolSpec(tool, fn=lambda **kw: ran.append(tool))
    registry = tr.ToolRegistry([spec], max_repairs=100)
    name = prefix + sep + tool
    if tr.normalize_name(name) == tr.normalize_name(tool):
        return  # `a__b` against a tool `a_b` is the tool's own name written differently
    outcome = registry.run({"name": name, "arguments": {}})
    assert not outcome.ok and outcome.error.kind == "not-found"
    assert ran == []
    text = "<tool_call>" + json.dumps({"name": name, "arguments": {}}) + "</tool_call>"
    assert tr.salvage_text(text, [tool]).calls == ()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(MODEL_NAMESPACES), st.sampled_from(NAMESPACE_SEPARATORS), _TOOL)
def test_a_documented_namespace_always_resolves(namespace: str, sep: str, tool: str) -> None:
    table = NameTable([tool, "other_tool_zz"])
    assert table.resolve(namespace + sep + tool) == (tool, True)


@pytest.mark.parametrize(
    ("offered", "name", "expected"),
    [
        (["functions.lookup", "lookup_b"], "functions.lookup", "functions.lookup"),  # exact always wins
        (["functions.lookup"], "Functions.Lookup", "functions.lookup"),  # its own spelling, normalised
        (["functions.lookup"], "functions__lookup", None),  # `functions` names no server
        (["a.b.c"], "a/b/c", None),  # three parts: no server prefix to read
        (["a.b.c"], "A.B.C", "a.b.c"),  # its own spelling, normalised
    ],
)
def test_offered_names_that_only_look_namespaced(offered: list[str], name: str, expected: str | None) -> None:
    table = NameTable(offered)
    assert table.resolve(name)[0] == expected
    assert len(table) == len(offered)
