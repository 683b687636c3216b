"""Repeated calls: the same call (resolved name, canonical arguments) runs at most
``max_repeats`` times per turn, or per conversation outside a turn; the next is answered with
the corrective message, recorded as a ``repeat`` RepairEvent, through every entry point."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._repeats import DEFAULT_MAX_REPEATS, RepeatCounter, call_key, repeat_message

RUNS: list[Any] = []


def web_search(query: str, limit: int = 5) -> str:
    RUNS.append((query, limit))
    return f"results for {query}"


async def async_search(query: str) -> str:
    RUNS.append(query)
    return query


def broken(x: int) -> str:
    RUNS.append(x)
    raise RuntimeError("down")


@pytest.fixture(autouse=True)
def _clear() -> None:
    RUNS.clear()


MESSAGE = (
    "Call 'web_search' with the same arguments has already run 3 times; its result will not change. "
    "Use the earlier result or change the arguments."
)


def test_the_fourth_identical_call_is_answered_not_run() -> None:
    registry = tr.ToolRegistry([web_search])
    assert registry.max_repeats == DEFAULT_MAX_REPEATS == 3
    outcomes = [registry.run({"name": "web_search", "arguments": {"query": "cats"}}) for _ in range(5)]
    assert [o.ok for o in outcomes] == [True, True, True, False, False]
    refused = outcomes[3]
    assert refused.content == MESSAGE and refused.error.kind == "repeat" and refused.error.tool_name == "web_search"
    assert refused.call.name == "web_search" and refused.value is None
    assert len(RUNS) == 3
    repeats = [e for e in registry.events if e.kind == "repeat"]
    assert [(e.tool, e.before, e.message) for e in repeats] == [("web_search", 3, MESSAGE)] * 2


# Spellings of one call: all the same call once repaired and canonicalised.
SAME_CALL = [
    ("web_search", {"query": "cats"}),
    ("WebSearch", {"query": "cats"}),
    ("functions.web_search", '{"query": "cats"}'),
    ("web_search", "{'query': 'cats',}"),
    ("web_search", {"query": "cats", "limit": 5}),  # the default written out is another call
    ("web_search", {"query": "cats", "limit": "5"}),  # coerced to 5: the same as the one before
    ("web_search", {"limit": 5, "query": "cats"}),  # key order
    ("web_search", '{"limit": 5.0, "query": "cats"}'),
]


def test_spellings_of_one_call_count_as_one_call() -> None:
    registry = tr.ToolRegistry([web_search], max_repairs=100, max_repeats=4)
    oks = [registry.run({"name": n, "arguments": a}).ok for n, a in SAME_CALL]
    # The first four are {"query": "cats"}, the last four {"query": "cats", "limit": 5}.
    assert oks == [True, True, True, True] * 2
    assert not registry.run({"name": "WebSearch", "arguments": {"query": "cats"}}).ok
    assert not registry.run({"name": "web_search", "arguments": {"query": "cats", "limit": 5}}).ok
    assert registry.run({"name": "web_search", "arguments": {"query": "dogs"}}).ok  # other arguments
    assert len(RUNS) == 9


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"query": "x"}, {"query": "x "}),
        ({"query": "1"}, {"query": 1}),
        ({"query": "x", "limit": 1}, {"query": "x", "limit": True}),
        ({"query": "x"}, {"query": "X"}),
    ],
)
def test_different_arguments_are_different_calls(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert call_key("f", a) != call_key("f", b)
    assert call_key("f", a) != call_key("g", a)


def test_every_entry_point_answers_a_repeat() -> None:
    registry = tr.ToolRegistry([web_search, async_search], max_repeats=1)
    assert registry.execute("web_search", {"query": "q"}) == "results for q"
    with pytest.raises(tr.ToolExecutionError) as info:
        registry.execute("web_search", {"query": "q"})
    assert info.value.kind == "repeat" and str(info.value).startswith(
        "Call 'web_search' with the same arguments has already run once;"
    )
    with pytest.raises(tr.ToolExecutionError, match="already run once"):
        asyncio.run(registry.aexecute("web_search", {"query": "q"}))
    assert not asyncio.run(registry.arun({"name": "web_search", "arguments": {"query": "q"}})).ok
    assert asyncio.run(registry.aexecute("async_search", {"query": "a"})) == "a"
    assert not asyncio.run(registry.arun({"name": "async_search", "arguments": {"query": "a"}})).ok
    text = '<tool_call>{"name": "web_search", "arguments": {"query": "q"}}</tool_call>'
    assert [registry.run(c).error.kind for c in registry.salvage(text).calls] == ["repeat"]
    assert [registry.run(c).error.kind for c in registry.calls(text)] == ["repeat"]
    # repair never runs a tool, so it neither counts nor refuses
    assert tr.repair_call({"name": "web_search", "arguments": {"query": "q"}}, registry).call is not None
    assert RUNS == [("q", 5), "a"]


def test_a_failing_tool_counts_as_run() -> None:
    registry = tr.ToolRegistry([broken], max_repeats=2)
    kinds = [registry.run({"name": "broken", "arguments": {"x": 1}}).error.kind for _ in range(3)]
    assert kinds == ["tool-error", "tool-error", "repeat"]
    assert RUNS == [1, 1]


def test_refused_calls_do_not_count() -> None:
    registry = tr.ToolRegistry([web_search], max_repeats=1, deny=["web_search"])
    for _ in range(3):
        assert registry.run({"name": "web_search", "arguments": {"query": "q"}}).error.kind == "denied"
    bad = tr.ToolRegistry([web_search], max_repeats=1)
    for _ in range(3):
        assert bad.run({"name": "web_search", "arguments": {"limit": 1}}).error.kind == "arguments"
    assert bad.run({"name": "web_search", "arguments": {"query": "q"}}).ok
    assert RUNS == [("q", 5)]


def test_each_turn_counts_afresh_and_outside_turns_the_conversation_counts() -> None:
    registry = tr.ToolRegistry([web_search], max_repeats=2)
    call = {"name": "web_search", "arguments": {"query": "q"}}
    for _ in range(3):
        with registry.turn():
            assert [registry.run(call).ok for _ in range(3)] == [True, True, False]
    # outside any turn: the registry's conversation, from its first call on
    assert [registry.run(call).ok for _ in range(3)] == [True, True, False]
    with registry.turn():  # a turn has its own count
        assert registry.run(call).ok
    assert not registry.run(call).ok
    assert len(RUNS) == 3 * 2 + 2 + 1


def test_none_disables() -> None:
    registry = tr.ToolRegistry([web_search], max_repeats=None)
    assert all(registry.run({"name": "web_search", "arguments": {"query": "q"}}).ok for _ in range(20))
    assert not [e for e in registry.events if e.kind == "repeat"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True])
def test_max_repeats_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_repeats"):
        tr.ToolRegistry([web_search], max_repeats=bad)


def test_on_repair_sees_the_repeat() -> None:
    seen: list[tr.RepairEvent] = []
    registry = tr.ToolRegistry([web_search], max_repeats=1, on_repair=seen.append)
    registry.run({"name": "web_search", "arguments": {"query": "q"}})
    registry.run({"name": "web_search", "arguments": {"query": "q"}})
    assert [e.kind for e in seen] == ["repeat"]


@pytest.mark.parametrize(("runs", "phrase"), [(1, "once"), (2, "twice"), (3, "3 times"), (10, "10 times")])
def test_repeat_message(runs: int, phrase: str) -> None:
    assert repeat_message("f", runs) == (
        f"Call 'f' with the same arguments has already run {phrase}; its result "
        "will not change. Use the earlier result or change the arguments."
    )


def test_call_key_survives_unsortable_and_odd_arguments() -> None:
    mixed = {1: "a", "b": 2}
    assert call_key("f", mixed) == call_key("f", dict(mixed))  # type: ignore[arg-type]
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert call_key("f", cyclic) == call_key("f", cyclic)
    assert call_key("f", {"d": object}) == call_key("f", {"d": object})
    assert call_key("f", {"s": "\ud800"}) != call_key("f", {"s": "\ud801"})  # lone surrogates hash


def test_the_counter_is_bounded() -> None:
    counter = RepeatCounter(limit=3)
    for key in (b"a", b"b", b"c", b"d"):
        assert counter.admit(key, 1) is None
    assert counter.count(b"a") == 0  # forgotten, the oldest
    assert counter.admit(b"d", 1) == 1
    assert counter.admit(b"b", 1) == 1


def test_threads_of_one_turn_share_the_count() -> None:
    registry = tr.ToolRegistry([web_search], max_repeats=3)
    call = {"name": "web_search", "arguments": {"query": "q"}}
    with registry.turn(), ThreadPoolExecutor(8) as pool:
        oks = list(pool.map(lambda _: registry.run(call).ok, range(40)))
    assert oks.count(True) == 3 and len(RUNS) == 3


def test_tasks_of_one_turn_share_the_count() -> None:
    registry = tr.ToolRegistry([async_search], max_repeats=2)

    async def main() -> list[bool]:
        with registry.turn():
            outs = await asyncio.gather(
                *(registry.arun({"name": "async_search", "arguments": {"query": "q"}}) for _ in range(10))
            )
        return [o.ok for o in outs]

    assert sorted(asyncio.run(main())) == [False] * 8 + [True] * 2


@settings(max_examples=60, deadline=None)
@given(
    max_repeats=st.integers(1, 5),
    plan=st.lists(st.sampled_from(["a", "b", "A", "c"]), max_size=30),
    threads=st.integers(1, 4),
)
def test_a_call_never_runs_more_than_max_repeats_times(max_repeats: int, plan: list[str], threads: int) -> None:
    ran: list[str] = []
    lock = threading.Lock()

    def tool(q: str) -> str:
        with lock:
            ran.append(q.lower())
        return q

    registry = tr.ToolRegistry(
        [tr.ToolSpec("t", {"type": "object", "properties": {"q": {"type": "string"}}}, fn=tool)],
        max_repeats=max_repeats,
    )
    calls = [{"name": "t", "arguments": {"q": q.lower()}} for q in plan]
    with registry.turn(), ThreadPoolExecutor(threads) as pool:
        ctx = contextvars.copy_context()
        outcomes = list(pool.map(lambda c: ctx.copy().run(registry.run, c), calls))
    for q in set(ran):
        assert ran.count(q) == min(max_repeats, [c["arguments"]["q"] for c in calls].count(q))
    assert sum(o.ok for o in outcomes) == len(ran)
    refused = [o for o in outcomes if not o.ok]
    assert all(o.error.kind == "repeat" for o in refused)


# -- audit: repeated calls within one record --------------------------------------------------
def _native_turn(*arguments: str, name: str = "f") -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": a}}
            for i, a in enumerate(arguments)
        ],
    }


def _text_turn(arguments: str, name: str = "f") -> dict[str, Any]:
    return {"role": "assistant", "content": f'<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'}


@pytest.mark.parametrize(
    ("messages", "repeated"),
    [
        ([_native_turn('{"q": 1}', '{"q": 1}', '{"q": 1}')], 0),  # three: within the default
        ([_native_turn(*['{"q": 1}'] * 5)], 2),
        ([_native_turn('{"q": 1}', '{"q": 1}'), _native_turn('{"q": 1}', '{"q": 1}')], 1),  # across turns
        ([_native_turn('{"q": 1}', '{"q": 1,}', "{'q': 1}", '{"q": 1}', name="F")], 1),  # spellings, one call
        ([_native_turn('{"q": 1}', '{"q": 2}', '{"q": 3}', '{"q": 4}')], 0),  # different arguments
        ([_text_turn('{"q": 1}')] * 6, 3),  # salvaged calls count alike
        ([_native_turn('{"q": 1}', '{"q": 1}'), _text_turn('{"q": 1}'), _text_turn('{"q": 1}')], 1),
        # Keys wait until a record has a fourth call; repeats before and after that count alike.
        ([_native_turn('{"q": 1}', '{"q": 1}', '{"q": 1}', '{"q": 2}', '{"q": 1}')], 1),
        ([_native_turn('{"q": 2}', '{"q": 3}', '{"q": 4}', '{"q": 1}', '{"q": 1}', '{"q": 1}', '{"q": 1}')], 1),
        ([_native_turn('{"q": 1}'), _text_turn('{"q": 1}'), _native_turn('{"q": 1}', '{"q": 1}', '{"q": 1}')], 2),
    ],
)
def test_audit_counts_calls_repeated_past_the_default(messages: list[Any], repeated: int) -> None:
    report = tr.audit_records([{"messages": messages}], tools=["f"])
    assert report.repeated_calls == repeated
    assert tr.fix_record({"messages": messages}, tools=["f"])[1].repeated_calls == repeated


@pytest.mark.parametrize(("calls", "keyed"), [(1, 0), (3, 0), (4, 4), (6, 6)])
def test_audit_keys_calls_only_past_the_default(monkeypatch: pytest.MonkeyPatch, calls: int, keyed: int) -> None:
    """A record of at most DEFAULT_MAX_REPEATS calls cannot repeat one past it: no call is keyed."""
    import toolrepair._records as records

    seen: list[str] = []
    real = records.call_key

    def counting(name: str, arguments: Any) -> bytes:
        seen.append(name)
        return real(name, arguments)

    monkeypatch.setattr(records, "call_key", counting)
    record = {"messages": [_native_turn(*[f'{{"q": {i}}}' for i in range(calls)])]}
    assert tr.audit_records([record], tools=["f"]).repeated_calls == 0
    assert len(seen) == keyed


def test_audit_counts_per_record_and_merges() -> None:
    record = {"messages": [_native_turn(*['{"q": 1}'] * 3)]}
    assert tr.audit_records([record] * 4, tools=["f"]).repeated_calls == 0  # never four in one record
    heavy = {"messages": [_native_turn(*['{"q": 1}'] * 4)]}
    one = tr.audit_records([heavy], tools=["f"])
    assert one.merge(one).repeated_calls == 2
    assert tr.AuditReport.from_dict(one.to_dict()) == one


def test_call_key_of_arguments_json_cannot_write() -> None:
    big = 10**5000  # past CPython's int-string limit
    assert call_key("f", {"n": big}) == call_key("f", {"n": big})
    assert call_key("f", {"n": big}) != call_key("f", {"n": big + 1})

    class NoRepr:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    odd = {1: NoRepr(), "a": 1}
    assert call_key("f", odd) != call_key("f", odd)  # a call like no other: never a repeat
    assert call_key("f", {"v": NoRepr()}) != call_key("f", {"v": NoRepr()})  # JSON's default=repr raises
    registry = tr.ToolRegistry([tr.ToolSpec("t", {"type": "object"}, fn=lambda **kw: "ok")], max_repeats=1)
    assert registry.run({"name": "t", "arguments": {"n": big}}).ok
    assert registry.run({"name": "t", "arguments": {"n": big}}).error.kind == "repeat"


# Checks of calls carrying one id, in order: ("vet", arguments) is an integration's reply-time
# admit, ("dispatch", arguments) a dispatch hook's, ("run", arguments) registry.run. Expected:
# the number of runs counted after all of them.
CAT, DOG = {"query": "cats"}, {"query": "dogs"}
ONE_ID = [
    ([("vet", CAT), ("run", CAT)], 1),  # vetted, then run: one call
    ([("vet", CAT), ("vet", CAT), ("dispatch", CAT)], 1),  # the same reply checked again, then dispatched
    ([("vet", CAT), ("run", CAT), ("vet", CAT), ("run", CAT)], 2),  # the same id next turn: a new call
    ([("dispatch", CAT), ("vet", CAT)], 2),  # dispatched at once: the next with its id is new
    ([("run", CAT), ("run", CAT)], 2),  # run twice is two runs
    ([("vet", CAT), ("vet", DOG)], 2),  # the id reused for other arguments: another call
]


@pytest.mark.parametrize(("checks", "counted"), ONE_ID)
def test_one_id_checked_again_counts_once_until_it_runs(checks: list[tuple[str, Any]], counted: int) -> None:
    registry = tr.ToolRegistry([web_search], max_repeats=10)
    for kind, arguments in checks:
        call = tr.ToolCall("web_search", arguments, "c1")
        if kind == "run":
            assert registry.run(call).ok
        else:
            assert registry.admit(call, dispatch=kind == "dispatch") is None
    assert sum(registry._conversation.count(call_key("web_search", a)) for a in (CAT, DOG)) == counted


def test_a_count_given_back() -> None:
    counter = RepeatCounter()
    assert counter.admit(b"k", 2) is None and counter.admit(b"k", 2) is None and counter.admit(b"k", 2) == 2
    counter.release(b"k")
    assert counter.count(b"k") == 1 and counter.admit(b"k", 2) is None
    counter.release(b"k")
    counter.release(b"k")
    counter.release(b"never")  # nothing to give back: nothing happens
    assert counter.count(b"k") == 0 and counter.count(b"never") == 0
