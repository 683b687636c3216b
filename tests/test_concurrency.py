"""One registry shared by threads and by asyncio tasks: right results, every repair event
recorded exactly once, and a repair budget per turn that never leaks into another turn."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

import toolrepair as tr

THREADS = 8
CALLS_PER_WORKER = 200


def web_search(query: str, limit: int = 5) -> str:
    return f"{query}:{limit}"


async def fetch(url: str) -> str:
    await asyncio.sleep(0)  # a real suspension point: tasks interleave here
    return f"fetched {url}"


def make_registry(max_repairs: int = 2) -> tuple[tr.ToolRegistry, list[tr.RepairEvent]]:
    seen: list[tr.RepairEvent] = []
    lock = threading.Lock()

    def on_repair(event: tr.RepairEvent) -> None:
        with lock:
            seen.append(event)

    return tr.ToolRegistry([web_search, fetch], max_repairs=max_repairs, on_repair=on_repair, max_repeats=None), seen


def test_threads_get_their_own_results_and_every_event_once() -> None:
    # Each call repairs exactly one thing (the name), outside any turn: one event per call.
    registry, seen = make_registry()
    barrier = threading.Barrier(THREADS)

    def worker(w: int) -> list[str]:
        barrier.wait()  # start together so the calls really interleave
        return [registry.execute("WebSearch", {"query": f"w{w}-{i}"}) for i in range(CALLS_PER_WORKER)]

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    for w, got in enumerate(results):
        assert got == [f"w{w}-{i}:5" for i in range(CALLS_PER_WORKER)]
    total = THREADS * CALLS_PER_WORKER
    assert len(registry.events) == len(seen) == total
    assert Counter(e.kind for e in registry.events) == {"name": total}
    assert Counter(map(id, registry.events)) == Counter(map(id, seen))  # the same events, each once


def test_threads_each_in_their_own_turn_have_their_own_budget() -> None:
    registry, _ = make_registry(max_repairs=2)
    barrier = threading.Barrier(THREADS)

    def worker(w: int) -> list[bool]:
        with registry.turn():
            barrier.wait()  # every turn is open at once
            oks = [registry.run({"name": "WebSearch", "arguments": {"query": f"{w}"}}).ok for _ in range(5)]
            barrier.wait()
            return oks

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    # Two silent repairs per turn, then the corrective error: in every thread, not 16 in total.
    assert results == [[True, True, False, False, False]] * THREADS
    assert len(registry.events) == 2 * THREADS


def test_threads_sharing_one_turn_share_its_budget_exactly() -> None:
    # A turn's budget is one counter under a lock: N threads racing for it spend it exactly.
    # Threads do not inherit context variables; each runs in a copy of the turn's context.
    registry, _ = make_registry(max_repairs=50)
    barrier = threading.Barrier(THREADS)
    with registry.turn():
        ctx = contextvars.copy_context()

        def worker(_: int) -> int:
            barrier.wait()
            return sum(
                ctx.copy().run(registry.run, {"name": "WebSearch", "arguments": {"query": "q"}}).ok for _ in range(20)
            )

        with ThreadPoolExecutor(THREADS) as pool:
            assert sum(pool.map(worker, range(THREADS))) == 50
    assert len(registry.events) == 50


def test_exact_calls_never_spend_the_budget_under_contention() -> None:
    registry, _ = make_registry(max_repairs=1)
    barrier = threading.Barrier(THREADS)

    def worker(w: int) -> tuple[int, bool]:
        with registry.turn():
            barrier.wait()
            exact = sum(registry.run({"name": "web_search", "arguments": {"query": "q"}}).ok for _ in range(50))
            drift = registry.run({"name": "WebSearch", "arguments": {"query": "q"}}).ok
            return exact, drift

    with ThreadPoolExecutor(THREADS) as pool:
        assert list(pool.map(worker, range(THREADS))) == [(50, True)] * THREADS


def test_asyncio_tasks_each_in_their_own_turn() -> None:
    registry, seen = make_registry(max_repairs=2)
    tasks_n = 64

    async def task(t: int) -> list[tuple[bool, str]]:
        with registry.turn():
            out = []
            for _ in range(4):
                outcome = await registry.arun({"name": "Fetch", "arguments": {"url": f"u{t}"}})
                out.append((outcome.ok, outcome.content))
                await asyncio.sleep(0)
            return out

    async def main() -> list[list[tuple[bool, str]]]:
        return await asyncio.gather(*(task(t) for t in range(tasks_n)))

    results = asyncio.run(main())
    for t, got in enumerate(results):
        assert [ok for ok, _ in got] == [True, True, False, False]
        assert [c for ok, c in got if ok] == [f"fetched u{t}"] * 2
    assert len(registry.events) == len(seen) == 2 * tasks_n


def test_asyncio_tasks_outside_a_turn_all_repair_and_record_once() -> None:
    registry, seen = make_registry()
    tasks_n = 200

    async def main() -> list[str]:
        return list(await asyncio.gather(*(registry.aexecute("FETCH", {"url": f"u{t}"}) for t in range(tasks_n))))

    assert asyncio.run(main()) == [f"fetched u{t}" for t in range(tasks_n)]
    assert len(registry.events) == len(seen) == tasks_n


def test_tasks_inherit_their_parents_turn_but_not_each_others() -> None:
    # asyncio copies the context into each task: a task created inside a turn shares that
    # turn's budget; sibling tasks opening turns of their own do not see each other's.
    registry, _ = make_registry(max_repairs=3)

    async def drift() -> bool:
        return (await registry.arun({"name": "WebSearch", "arguments": {"query": "q"}})).ok

    async def main() -> list[bool]:
        with registry.turn():
            return await asyncio.gather(*(drift() for _ in range(5)))

    assert sorted(asyncio.run(main())) == [False, False, True, True, True]


def test_nested_turns_restore_the_outer_budget() -> None:
    registry, _ = make_registry(max_repairs=1)
    drift = {"name": "WebSearch", "arguments": {"query": "q"}}
    with registry.turn():
        with registry.turn():
            assert registry.run(drift).ok
            assert not registry.run(drift).ok
        assert registry.run(drift).ok  # the outer turn's budget was untouched by the inner one
        assert not registry.run(drift).ok
        with registry.turn():
            assert registry.run(drift).ok
        assert not registry.run(drift).ok
    assert registry.run(drift).ok and registry.run(drift).ok  # outside a turn: each call its own


def test_a_turn_ends_even_when_its_body_raises() -> None:
    registry, _ = make_registry(max_repairs=1)
    drift = {"name": "WebSearch", "arguments": {"query": "q"}}
    with registry.turn():
        assert registry.run(drift).ok
        with pytest.raises(KeyError), registry.turn():
            raise KeyError("boom")
        assert not registry.run(drift).ok  # back in the outer, spent turn


def test_threads_mixing_salvage_and_dispatch() -> None:
    registry, _ = make_registry()
    reply = 'On it.<tool_call>{"name": "WebSearch", "arguments": {"query": "%d"}}</tool_call>'
    barrier = threading.Barrier(THREADS)

    def worker(w: int) -> list[str]:
        barrier.wait()
        out = []
        for i in range(50):
            (call,) = registry.calls(reply % (w * 1000 + i))
            out.append(registry.run(call).content)
        return out

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    assert results == [[f"{w * 1000 + i}:5" for i in range(50)] for w in range(THREADS)]
    # Salvage resolved the drifted name; the call carried that repair and dispatch recorded it.
    events = registry.events
    assert len(events) == THREADS * 50
    assert {(e.kind, e.before, e.after) for e in events} == {("name", "WebSearch", "web_search")}


def test_untrusted_marks_from_many_threads_are_all_kept() -> None:
    registry, _ = make_registry()

    def worker(w: int) -> None:
        for i in range(100):
            registry.mark_untrusted(f"<tool_call>{w}-{i}</tool_call>")

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(worker, range(THREADS)))
    assert all(
        registry.salvage(f"<tool_call>{w}-{i}</tool_call>").rejected[0].reason == "untrusted"
        for w in range(THREADS)
        for i in range(100)
    )


# -- threads a turn starts without passing its context (issue 18: budget across threads) --------
def _in_pool(calls: list[dict[str, object]], registry: tr.ToolRegistry) -> list[tr.ToolOutcome]:
    barrier = threading.Barrier(len(calls))

    def one(call: dict[str, object]) -> tr.ToolOutcome:
        barrier.wait()  # all eight in flight at once
        return registry.run(call)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(one, calls))


def _in_threads(calls: list[dict[str, object]], registry: tr.ToolRegistry) -> list[tr.ToolOutcome]:
    barrier = threading.Barrier(len(calls))
    out: list[tr.ToolOutcome | None] = [None] * len(calls)

    def one(i: int) -> None:
        barrier.wait()
        out[i] = registry.run(calls[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [o for o in out if o is not None]


def _in_executor(calls: list[dict[str, object]], registry: tr.ToolRegistry) -> list[tr.ToolOutcome]:
    barrier = threading.Barrier(len(calls))

    def one(call: dict[str, object]) -> tr.ToolOutcome:
        barrier.wait()
        return registry.run(call)

    async def main() -> list[tr.ToolOutcome]:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(len(calls)) as pool:
            return list(await asyncio.gather(*(loop.run_in_executor(pool, one, c) for c in calls)))

    return asyncio.run(main())


@pytest.mark.parametrize("start", [_in_pool, _in_threads, _in_executor], ids=["pool", "thread", "run_in_executor"])
def test_threads_a_turn_starts_spend_its_one_budget(start: object) -> None:
    registry, seen = make_registry(max_repairs=2)
    calls: list[dict[str, object]] = [{"name": "WebSearch", "arguments": {"query": str(i)}} for i in range(8)]
    with registry.turn():
        outcomes = start(calls, registry)  # type: ignore[operator]
    assert sorted(o.ok for o in outcomes) == [False] * 6 + [True] * 2
    assert {o.error.kind for o in outcomes if not o.ok} == {"not-found"}
    assert all("Did you mean 'web_search'?" in o.content for o in outcomes if not o.ok)
    assert len(registry.events) == len(seen) == 2
    # The turn is over: a thread's call outside any turn has a budget of its own again.
    assert all(o.ok for o in _in_pool(calls, registry))


def test_threads_of_one_of_several_open_turns_fail_closed() -> None:
    # Two turns open at once (two request threads); a worker thread started without the
    # context cannot be attributed to either, so it gets no silent repair, and neither turn's
    # own budget is spent by it.
    registry, _ = make_registry(max_repairs=1)
    both_open = threading.Barrier(2)
    workers_done = threading.Barrier(2)

    def request(_: int) -> tuple[bool, bool, bool]:
        with registry.turn():
            both_open.wait()
            box: list[bool] = []
            worker = threading.Thread(
                target=lambda: box.append(registry.run({"name": "WebSearch", "arguments": {"query": "w"}}).ok)
            )
            worker.start()
            worker.join()
            workers_done.wait()  # neither turn closes before both workers have run
            mine = registry.run({"name": "WebSearch", "arguments": {"query": "t"}}).ok
            again = registry.run({"name": "WebSearch", "arguments": {"query": "t"}}).ok
            return box[0], mine, again

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(request, range(2))) == [(False, True, False)] * 2


def test_a_copied_context_names_its_turn_among_several() -> None:
    registry, _ = make_registry(max_repairs=1)
    both_open = threading.Barrier(2)

    def request(_: int) -> list[bool]:
        with registry.turn():
            both_open.wait()
            ctx = contextvars.copy_context()
            with ThreadPoolExecutor(2) as pool:
                futures = [
                    pool.submit(ctx.copy().run, registry.run, {"name": "WebSearch", "arguments": {"query": "q"}})
                    for _ in range(3)
                ]
                oks = sorted(f.result().ok for f in futures)
            both_open.wait()
            return oks

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(request, range(2))) == [[False, False, True]] * 2
