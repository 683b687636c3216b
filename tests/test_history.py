"""repair_history: one table row per rule (input, expected output, change kinds), both shapes."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import toolrepair as tr
from toolrepair._history import PLACEHOLDER, HistoryChange, HistoryChangeKind, resolve_shape

U = {"role": "user", "content": "hi"}
DONE = {"role": "assistant", "content": "done"}


def tc(ident: str | None, name: str = "f", arguments: Any = "{}") -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if ident is not None:
        call["id"] = ident
    return call


def a(*calls: dict[str, Any], content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def t(ident: str | None, content: str = "ok") -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "tool", "content": content}
    if ident is not None:
        msg["tool_call_id"] = ident
    return msg


def ph(ident: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": ident, "content": PLACEHOLDER}


def tu(ident: str, name: str = "f", input: Any = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": {} if input is None else input}


def aa(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def r(ident: str, content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": ident, "content": content}


def pr(ident: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": ident, "content": PLACEHOLDER, "is_error": True}


def ub(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


TEXT = {"type": "text", "text": "more"}

K = HistoryChangeKind
# (id, history, expected, kinds of the changes in order)
OPENAI: list[tuple[str, list[Any], list[Any], list[str]]] = [
    (
        "valid, two calls",
        [U, a(tc("a"), tc("b")), t("b"), t("a"), DONE],
        [U, a(tc("a"), tc("b")), t("b"), t("a"), DONE],
        [],
    ),
    (
        "valid, plain chat",
        [{"role": "system", "content": "s"}, U, DONE],
        [{"role": "system", "content": "s"}, U, DONE],
        [],
    ),
    (
        "cancelled tool: placeholder",
        [U, a(tc("a"), tc("b")), t("a"), U],
        [U, a(tc("a"), tc("b")), t("a"), ph("b"), U],
        ["placeholder-added"],
    ),
    ("trimmed tail: placeholder", [U, a(tc("a"))], [U, a(tc("a")), ph("a")], ["placeholder-added"]),
    ("head cut: orphans dropped", [t("a"), t("b"), DONE], [DONE], ["orphan-result-dropped"] * 2),
    ("deleted middle: orphan after a user turn", [U, t("x"), DONE], [U, DONE], ["orphan-result-dropped"]),
    (
        "result for another call in the zone",
        [U, a(tc("a")), t("a"), t("zz")],
        [U, a(tc("a")), t("a")],
        ["orphan-result-dropped"],
    ),
    (
        "duplicated result",
        [U, a(tc("a")), t("a"), t("a", "again")],
        [U, a(tc("a")), t("a")],
        ["duplicate-result-dropped"],
    ),
    (
        "result without id linked",
        [U, a(tc("a"), tc("b")), t("a"), t(None, "rb")],
        [U, a(tc("a"), tc("b")), t("a"), {"role": "tool", "content": "rb", "tool_call_id": "b"}],
        ["result-linked"],
    ),
    (
        "result without id and no call left",
        [U, a(tc("a")), t("a"), t(None)],
        [U, a(tc("a")), t("a")],
        ["orphan-result-dropped"],
    ),
    ("result after a user message moved up", [U, a(tc("a")), U, t("a")], [U, a(tc("a")), t("a"), U], ["result-moved"]),
    (
        "broken argument JSON normalised",
        [U, a(tc("a", arguments="{'q': 1,}")), t("a")],
        [U, a(tc("a", arguments='{"q": 1}')), t("a")],
        ["arguments-normalised"],
    ),
    (
        "arguments as an object written as JSON",
        [U, a(tc("a", arguments={"q": "é"})), t("a")],
        [U, a(tc("a", arguments='{"q": "é"}')), t("a")],
        ["arguments-normalised"],
    ),
    ("empty arguments", [U, a(tc("a", arguments="")), t("a")], [U, a(tc("a")), t("a")], ["arguments-normalised"]),
    (
        "undecodable arguments: call and result dropped",
        [U, a(tc("a", arguments='{"q":'), tc("b")), t("a"), t("b")],
        [U, a(tc("b")), t("b")],
        ["call-dropped", "orphan-result-dropped"],
    ),
    (
        "only call undecodable: message dropped",
        [U, a(tc("a", arguments="[1]")), t("a"), DONE],
        [U, DONE],
        ["call-dropped", "message-dropped", "orphan-result-dropped"],
    ),
    ("content '' beside tool_calls", [U, a(tc("a"), content=""), t("a")], [U, a(tc("a")), t("a")], ["content-nulled"]),
    ("content [] beside tool_calls", [U, a(tc("a"), content=[]), t("a")], [U, a(tc("a")), t("a")], ["content-nulled"]),
    (
        "empty tool_calls removed",
        [U, {"role": "assistant", "content": "x", "tool_calls": []}],
        [U, {"role": "assistant", "content": "x"}],
        ["call-dropped"],
    ),
    (
        "call without a name dropped",
        [U, a({"id": "a", "type": "function", "function": {}}, tc("b")), t("b")],
        [U, a(tc("b")), t("b")],
        ["call-dropped"],
    ),
    ("call without an id gets one", [U, a(tc(None))], None, ["id-assigned", "placeholder-added"]),
    (
        "duplicate id in one turn renamed",
        [U, a(tc("a"), tc("a", "g")), t("a")],
        None,
        ["id-renamed", "placeholder-added"],
    ),
    (
        "an earlier orphan with the call's id is not its result",
        [t("a"), U, a(tc("a"))],
        [U, a(tc("a")), ph("a")],
        ["orphan-result-dropped", "placeholder-added"],
    ),
    (
        "id reused by a later turn is valid for OpenAI",
        [U, a(tc("a")), t("a"), a(tc("a")), t("a")],
        [U, a(tc("a")), t("a"), a(tc("a")), t("a")],
        [],
    ),
]

ANTHROPIC: list[tuple[str, list[Any], list[Any], list[str]]] = [
    (
        "valid",
        [U, aa({"type": "text", "text": "x"}, tu("a")), ub(r("a"), TEXT), aa({"type": "text", "text": "y"})],
        [U, aa({"type": "text", "text": "x"}, tu("a")), ub(r("a"), TEXT), aa({"type": "text", "text": "y"})],
        [],
    ),
    (
        "results not first",
        [U, aa(tu("a"), tu("b")), ub(TEXT, r("a"), r("b"))],
        [U, aa(tu("a"), tu("b")), ub(r("a"), r("b"), TEXT)],
        ["result-moved"],
    ),
    (
        "cancelled tool",
        [U, aa(tu("a"), tu("b")), ub(r("a"))],
        [U, aa(tu("a"), tu("b")), ub(r("a"), pr("b"))],
        ["placeholder-added"],
    ),
    (
        "unanswered before a plain user turn",
        [U, aa(tu("a")), U],
        [U, aa(tu("a")), ub(pr("a"), {"type": "text", "text": "hi"})],
        ["placeholder-added"],
    ),
    ("trimmed tail", [U, aa(tu("a"))], [U, aa(tu("a")), ub(pr("a"))], ["placeholder-added"]),
    ("head cut, text kept", [ub(r("a"), TEXT), aa(TEXT)], [ub(TEXT), aa(TEXT)], ["orphan-result-dropped"]),
    ("head cut, message emptied", [ub(r("a")), aa(TEXT)], [aa(TEXT)], ["orphan-result-dropped", "message-dropped"]),
    (
        "results spread over two user messages",
        [U, aa(tu("a"), tu("b")), ub(r("a")), ub(r("b"), TEXT)],
        [U, aa(tu("a"), tu("b")), ub(r("a"), r("b")), ub(TEXT)],
        ["result-moved"],
    ),
    (
        "second user message emptied",
        [U, aa(tu("a"), tu("b")), ub(r("a")), ub(r("b"))],
        [U, aa(tu("a"), tu("b")), ub(r("a"), r("b"))],
        ["result-moved", "message-dropped"],
    ),
    (
        "result after the next assistant message",
        [U, aa(tu("a")), aa(tu("b")), ub(r("a"), r("b"))],
        [U, aa(tu("a")), ub(r("a")), aa(tu("b")), ub(r("b"))],
        ["result-moved"],
    ),
    (
        "duplicated result",
        [U, aa(tu("a")), ub(r("a"), r("a", "x"))],
        [U, aa(tu("a")), ub(r("a"))],
        ["duplicate-result-dropped"],
    ),
    (
        "input as a JSON string",
        [U, aa(tu("a", input='{"q": 1,}')), ub(r("a"))],
        [U, aa(tu("a", input={"q": 1})), ub(r("a"))],
        ["arguments-normalised"],
    ),
    (
        "undecodable input",
        [U, aa(TEXT, tu("a", input='{"q')), ub(r("a"), TEXT)],
        [U, aa(TEXT), ub(TEXT)],
        ["call-dropped", "orphan-result-dropped"],
    ),
    (
        "blank text block beside a call",
        [U, aa({"type": "text", "text": " "}, tu("a")), ub(r("a"))],
        [U, aa(tu("a")), ub(r("a"))],
        ["content-nulled"],
    ),
    ("blank text in a plain reply", [U, aa({"type": "text", "text": ""}, TEXT)], [U, aa(TEXT)], ["content-nulled"]),
    (
        "reply of blank text only",
        [U, aa({"type": "text", "text": ""}), U],
        [U, U],
        ["content-nulled", "message-dropped"],
    ),
    (
        "empty user messages dropped",
        [
            U,
            {"role": "user", "content": []},
            aa(TEXT),
            {"role": "user", "content": " "},
            ub({"type": "text", "text": ""}, TEXT),
        ],
        [U, aa(TEXT), ub(TEXT)],
        ["message-dropped", "message-dropped", "content-nulled"],
    ),
    (
        "empty user message in a zone dropped",
        [U, aa(tu("a")), ub(r("a")), {"role": "user", "content": []}],
        [U, aa(tu("a")), ub(r("a"))],
        ["message-dropped"],
    ),
    (
        "a reply in string content is not a calling turn",
        [U, {"role": "assistant", "content": "x"}, U],
        [U, {"role": "assistant", "content": "x"}, U],
        [],
    ),
    (
        "result moved out of a later message, which empties",
        [U, aa(tu("a")), U, aa(TEXT), ub(r("a"))],
        [U, aa(tu("a")), ub(r("a"), {"type": "text", "text": "hi"}), aa(TEXT)],
        ["result-moved", "message-dropped"],
    ),
    (
        "string user content beside results kept",
        [U, aa(tu("a")), {"role": "user", "content": "also"}],
        [U, aa(tu("a")), ub(pr("a"), {"type": "text", "text": "also"})],
        ["placeholder-added"],
    ),
]


def kinds(report: tr.HistoryReport) -> list[str]:
    return [c.kind.value for c in report.changes]


@pytest.mark.parametrize(("history", "expected", "want"), [row[1:] for row in OPENAI], ids=[row[0] for row in OPENAI])
def test_openai_rules(history: list[Any], expected: list[Any] | None, want: list[str]) -> None:
    before = copy.deepcopy(history)
    fixed, report = tr.repair_history(history)
    assert history == before  # never mutated
    assert report.shape == "openai"
    assert sorted(kinds(report)) == sorted(want)
    if expected is not None:
        assert fixed == expected
    assert bool(report) == bool(want)
    again, second = tr.repair_history(fixed)  # idempotent
    assert again == fixed and not second


@pytest.mark.parametrize(
    ("history", "expected", "want"), [row[1:] for row in ANTHROPIC], ids=[row[0] for row in ANTHROPIC]
)
def test_anthropic_rules(history: list[Any], expected: list[Any], want: list[str]) -> None:
    before = copy.deepcopy(history)
    fixed, report = tr.repair_history(history, shape="anthropic")
    assert history == before
    assert sorted(kinds(report)) == sorted(want)
    assert fixed == expected
    again, second = tr.repair_history(fixed, shape="anthropic")
    assert again == fixed and not second


def test_ids_written_are_distinct_and_paired() -> None:
    fixed, report = tr.repair_history([U, a(tc(None), tc(None, "g")), a(tc("a"), tc("a"))])
    calls = [c["id"] for m in fixed if m["role"] == "assistant" for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in fixed if m["role"] == "tool"]
    assert len(set(calls)) == 4 and sorted(calls) == sorted(answered)
    assert report.count("id-assigned") == 2 and report.count(K.ID_RENAMED) == 1


def test_anthropic_id_reused_across_turns_is_renamed_with_its_result() -> None:
    history = [U, aa(tu("a")), ub(r("a", "one")), aa(tu("a")), ub(r("a", "two"))]
    fixed, report = tr.repair_history(history)
    new = fixed[3]["content"][0]["id"]
    assert new != "a" and fixed[4]["content"] == [r(new, "two")] and fixed[2]["content"] == [r("a", "one")]
    assert kinds(report) == ["id-renamed"] and report.changes[0].index == 3


def test_unanswered_drop() -> None:
    fixed, report = tr.repair_history([U, a(tc("a"), tc("b")), t("a"), U], unanswered="drop")
    assert fixed == [U, a(tc("a")), t("a"), U]
    assert report.changes == (HistoryChange(K.CALL_DROPPED, 1, "b", "the call has no result"),)
    fixed, report = tr.repair_history([U, a(tc("a")), U], unanswered="drop")
    assert fixed == [U, U] and kinds(report) == ["call-dropped", "message-dropped"]
    fixed, _ = tr.repair_history([U, a(tc("a"), content="keep"), U], unanswered="drop")
    assert fixed == [U, {"role": "assistant", "content": "keep"}, U]
    fixed, _ = tr.repair_history([U, aa(TEXT, tu("a")), U], unanswered="drop")
    assert fixed == [U, aa(TEXT), U]


CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'


def test_text_call_takes_the_id_its_result_already_carries() -> None:
    history = [U, {"role": "assistant", "content": "ok " + CALL}, t("x1", "sunny"), DONE]
    fixed, report = tr.repair_history(history, tools=["get_weather"])
    assert fixed[1] == {
        "role": "assistant",
        "content": "ok",
        "tool_calls": [tc("x1", "get_weather", '{"city": "Oslo"}')],
    }
    assert fixed[2] == t("x1", "sunny")
    assert report.changes == (HistoryChange(K.CALL_MADE_NATIVE, 1, "x1", "a call written as text made native"),)
    # Without tools nothing is salvaged (no allowlist): the result answers nothing and goes.
    plain, report = tr.repair_history(history)
    assert plain == [U, history[1], DONE] and kinds(report) == ["orphan-result-dropped"]


def test_text_calls_in_anthropic_blocks_made_native() -> None:
    history = [U, aa({"type": "text", "text": CALL}), ub(r("t1", "sunny"))]
    fixed, report = tr.repair_history(history, tools=["get_weather"])
    assert fixed[1] == aa(tu("t1", "get_weather", {"city": "Oslo"}))
    assert fixed[2] == ub(r("t1", "sunny")) and kinds(report) == ["call-made-native"]


def test_text_call_without_result_ids_is_linked() -> None:
    history = [U, {"role": "assistant", "content": CALL}, t(None, "sunny")]
    fixed, report = tr.repair_history(history, tools=["get_weather"])
    ident = fixed[1]["tool_calls"][0]["id"]
    assert fixed[2] == {"role": "tool", "content": "sunny", "tool_call_id": ident}
    assert kinds(report) == ["call-made-native", "result-linked"]


def test_anthropic_text_call_result_without_id_linked() -> None:
    history = [U, aa({"type": "text", "text": CALL}), ub({"type": "tool_result", "content": "sunny"})]
    fixed, report = tr.repair_history(history, tools=["get_weather"])
    ident = fixed[1]["content"][0]["id"]
    assert fixed[2] == ub(r(ident, "sunny")) and kinds(report) == ["call-made-native", "result-linked"]


def test_native_calls_repaired_against_tools() -> None:
    history = [U, a(tc("a", "GetWeather", "{'city': 'Oslo'}")), t("a")]
    fixed, report = tr.repair_history(history, tools=["get_weather"])
    assert fixed[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    assert kinds(report) == ["call-repaired"]


@pytest.mark.parametrize(
    ("history", "shape"),
    [
        ([U], "openai"),
        ([U, t("a")], "openai"),
        ([U, {"role": "assistant", "content": "x", "tool_calls": None}], "openai"),
        ([ub(r("a"))], "anthropic"),
        ([U, aa(TEXT)], "anthropic"),
        ([], "openai"),
    ],
)
def test_shape_detection(history: list[Any], shape: str) -> None:
    assert resolve_shape(history, "auto") == shape


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ("not a list", {}, TypeError, "list of message mappings"),
        ({"role": "user"}, {}, TypeError, "list of message mappings"),
        (5, {}, TypeError, "list of message mappings"),
        ([U, "x"], {}, TypeError, r"messages\[1\] is a str"),
        ([U], {"shape": "gemini"}, ValueError, "shape must be"),
        ([U], {"unanswered": "keep"}, ValueError, "unanswered must be"),
        ([t("a"), ub(r("a"))], {}, ValueError, "mixes"),
    ],
)
def test_bad_input_is_a_clear_error(args: Any, kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        tr.repair_history(args, **kwargs)


def test_bad_tools_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="tool definition 0 has no name"):
        tr.repair_history([U], tools=[{"type": "function", "function": {}}])
    with pytest.raises(TypeError, match="not a chat history: content is a JSON number"):
        tr.repair_history([U, {"role": "assistant", "content": 5}], tools=["f"])


def test_generators_and_mappings_accepted() -> None:
    from types import MappingProxyType

    fixed, _ = tr.repair_history(m for m in [MappingProxyType(U), DONE])
    assert fixed == [U, DONE] and all(type(m) is dict for m in fixed)


def test_report_count_and_order() -> None:
    _, report = tr.repair_history([t("z"), U, a(tc("a", arguments="{'q': 1}"), content=""), t("a"), t("a")])
    assert [c.index for c in report.changes] == sorted(c.index for c in report.changes)
    assert report.count("orphan-result-dropped") == 1 and report.count(K.DUPLICATE_RESULT_DROPPED) == 1
    with pytest.raises(AttributeError):
        report.changes[0].kind = K.CALL_DROPPED  # type: ignore[misc]


def test_fix_record_pairs_conversations_but_leaves_a_closing_call() -> None:
    record = {"messages": [U, a(tc("a")), t("a"), t("a"), a(tc("b"))]}
    fixed, report = tr.fix_record(json.dumps(record), tools=["f"])
    assert json.loads(fixed) == {"messages": [U, a(tc("a")), t("a"), a(tc("b"))]}
    assert dict(report.by_repair) == {"history:duplicate-result-dropped": 1}
    audit = tr.audit_records([record], tools=["f"])
    assert dict(audit.by_repair) == dict(report.by_repair) and audit.records_changed == 1
    # A record that is not a conversation, or mixes both shapes, is not paired.
    assert tr.fix_record(json.dumps(a(tc("a"))), tools=["f"])[1].records_changed == 0
    mixed = [U, t("x"), ub(r("y"))]
    assert tr.fix_record(mixed, tools=["f"])[1].records_changed == 0
