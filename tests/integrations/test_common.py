"""toolrepair.integrations._common: what every framework adapter shares (no framework needed)."""

from __future__ import annotations

import pytest

import toolrepair as tr
from tests.integrations.conftest import HERMES, web_search
from toolrepair.integrations._common import (
    PendingMessages,
    VettedStream,
    as_dict,
    rejection_errors,
    require,
    vet,
    vet_text,
)


def delete_file(path: str) -> str:
    raise AssertionError("a denied tool ran")


def test_require_names_the_extra() -> None:
    with pytest.raises(
        ImportError,
        match=r"needs smolagents \(missing module 'toolrepair_no_such_module'\): "
        r"pip install 'toolrepair\[smolagents\]'",
    ):
        require("toolrepair_no_such_module", "smolagents")


def test_as_dict_refuses_what_is_not_a_payload() -> None:
    assert as_dict({"a": [1]}) == {"a": [1]}
    with pytest.raises(TypeError, match="expected a mapping or an SDK model, not int"):
        as_dict(3)


@pytest.mark.parametrize(
    ("call", "ok", "name", "arguments", "message"),
    [
        (("WebSearch", '{"query": "x",}', "c1"), True, "web_search", {"query": "x"}, ""),
        (
            ("delete_file", {"path": "/"}, "c2"),
            False,
            "delete_file",
            {"path": "/"},
            "Tool 'delete_file' is not allowed.",
        ),
        (
            ("nope", "[1, 2]", "c3"),
            False,
            "nope",
            {},
            "Tool 'nope' not found. Available tools: ['delete_file', 'web_search']",
        ),
        (("web_search", '{"query": ', "c4"), False, "web_search", {}, None),
        ((None, None, 7), False, "", {}, None),
    ],
)
def test_vet_keeps_the_id_and_the_model_spelling_of_a_refused_call(call, ok, name, arguments, message) -> None:
    registry = tr.ToolRegistry([web_search, delete_file], deny=["delete_file"])
    vetted = vet(registry, call)
    assert (vetted.ok, vetted.call.name, vetted.call.arguments) == (ok, name, arguments)
    assert vetted.call.id == (call[2] if isinstance(call[2], str) else None)
    if message is not None:
        assert vetted.message == message
    assert bool(vetted.message) is not ok


def test_vet_text_and_the_stream_agree_on_calls_and_refusals() -> None:
    registry = tr.ToolRegistry([web_search, delete_file], deny=["delete_file"])
    text = (
        "Sure. "
        + HERMES.format(name="web_search", arguments='{"query": "x"}')
        + HERMES.format(name="DeleteFile", arguments='{"path": "/"}')
        + HERMES.format(name="nope", arguments="{}")
    )
    whole = vet_text(registry, text, "call_")
    assert whole.content == 'Sure. <tool_call>{"name": "nope", "arguments": {}}</tool_call>'  # refused: stays text
    assert [v.ok for v in whole.calls] == [True, False]
    assert whole.calls[0].call.id == vet_text(registry, text, "call_").calls[0].call.id  # stable
    assert [r.reason for r in whole.rejected] == ["not-offered"]
    stream = VettedStream(registry, "call_")
    items = [i for ch in text for i in stream.feed(ch)] + stream.close()
    calls = [i for i in items if not isinstance(i, str)]
    assert [(v.call.name, v.ok) for v in calls] == [("web_search", True), ("delete_file", False)]
    assert "".join(i for i in items if isinstance(i, str)).startswith("Sure.")


def test_rejection_errors_name_the_refused_text_calls() -> None:
    registry = tr.ToolRegistry([web_search])
    result = registry.salvage(HERMES.format(name="web_serch", arguments="{}") + '<tool_call>{"name": ')
    errors = rejection_errors(result, registry, "tool_call_id")
    assert errors[0] == {
        "tool_call_id": None,
        "name": "web_serch",
        "reason": "not-offered",
        "message": "Tool 'web_serch' not found. Did you mean 'web_search'? Available tools: ['web_search']",
    }
    assert all(e["message"] for e in errors)


def test_pending_messages_are_bounded_oldest_first() -> None:
    pending = PendingMessages()
    for i in range(PendingMessages.LIMIT + 2):
        pending.put(f"k{i}", str(i))
    assert pending.pop("k0") is None and pending.pop("k1") is None
    assert pending.pop(f"k{PendingMessages.LIMIT + 1}") == str(PendingMessages.LIMIT + 1)
    assert pending.pop(None) is None


@pytest.mark.parametrize(("screen_only", "calls"), [(True, 0), (False, 1)])
def test_a_screen_hides_calls_without_counting_them(screen_only: bool, calls: int) -> None:
    from toolrepair._repeats import call_key

    registry = tr.ToolRegistry([web_search])
    screen = VettedStream(registry, "call_", screen_only=screen_only)
    out = screen.feed("Now " + HERMES.format(name="web_search", arguments='{"query": "x"}') + " done.") + screen.close()
    assert "".join(i for i in out if isinstance(i, str)) == "Now  done."
    # Hidden only, not vetted: the finished reply, vetted on its own, is the one count.
    assert len(out) - sum(isinstance(i, str) for i in out) == calls
    assert registry._conversation.count(call_key("web_search", {"query": "x"})) == calls
