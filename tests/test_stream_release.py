"""How soon a stream releases a call, counted in characters fed (no clocks), and the README's
streaming snippet run as written."""

from __future__ import annotations

import asyncio
import itertools
import json
import pathlib
import re
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr
from toolrepair._salvage._base import Found, ReadContext
from toolrepair._salvage._engine import END_STABLE
from toolrepair._salvage._registry import by_name

TRAIL = " and then some text after the call."

# (profile, a call as the model family writes it): each ends at its last byte.
CALLS = [
    ("qwen3", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}</tool_call>'),
    (
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "gpt-oss",
        "<|channel|>analysis<|message|>Weather, then.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
    ),
    ("llama4", '[get_weather(city="Paris", days=3)]'),
    ("mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": {"from": 1, "to": 3}}'),
    ("mistral", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    # Long calls whose values hold many characters a call may end with (code): the re-reads
    # those cost never spend what the read at the call's closer needs.
    (
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\n"
        + "if (a > b) { c[0](); }\n" * 60
        + "</parameter>\n</function>\n</tool_call>",
    ),
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": {"city": "' + "{x} <y> " * 150 + '"}}</tool_call>'),
    (
        "deepseek-v3.2",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        + "".join(f'<｜DSML｜parameter name="p{i}" string="true">v{i}</｜DSML｜parameter>\n' for i in range(30))
        + "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    ),
]


def fed_after_close(
    profile: str, call: str, lead: str = "Let me check.\n", stream: tr.StreamSalvager | None = None
) -> int | None:
    """Characters fed after the call's last byte before its ToolCallReady, one at a time
    (None: only at close()); ``stream`` defaults to a StreamSalvager with ``profile``."""
    text = lead + call + TRAIL
    s = tr.StreamSalvager(["get_weather"], model=profile) if stream is None else stream
    for i in range(len(text)):
        for event in s.feed(text[i]):
            if isinstance(event, tr.ToolCallReady):
                assert event.call.span is not None
                return i + 1 - event.call.span[1]
    assert any(isinstance(e, tr.ToolCallReady) for e in s.close())
    return None


@pytest.mark.parametrize(("profile", "call"), CALLS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CALLS)])
def test_with_a_profile_a_call_is_released_the_moment_it_closes(profile: str, call: str) -> None:
    lead = "" if profile == "gpt-oss" else "Let me check.\n"
    span = tr.salvage_text(lead + call + TRAIL, ["get_weather"], model=profile).calls[0].span
    assert span is not None and span[1] == len(lead) + len(call)
    assert fed_after_close(profile, call, lead) == 0


def get_weather(city: str, days: Any = None) -> str:
    return f"sunny in {city}"


# One call of each family the registry's stream must release as the salvager does.
REGISTRY_FAMILIES = {"hermes": "Hermes", "qwen3-coder": "Qwen3-Coder XML", "gpt-oss": "harmony"}
REGISTRY_FAMILIES |= {"llama4": "Llama", "mistral": "Mistral"}
REGISTRY_CALLS = [next(c for c in CALLS if c[0] == p) for p in REGISTRY_FAMILIES]


@pytest.mark.parametrize(("profile", "call"), REGISTRY_CALLS, ids=list(REGISTRY_FAMILIES.values()))
def test_the_registry_stream_releases_a_call_the_moment_it_closes(profile: str, call: str) -> None:
    # The registry's stream drives the same salvager: with its model profile, the call's event
    # comes with the call's last character, also once tool results have been marked untrusted
    # (every run outcome is), as long as none begins as the reply does.
    lead = "" if profile == "gpt-oss" else "Let me check.\n"
    registry = tr.ToolRegistry([get_weather], model=profile)
    assert fed_after_close(profile, call, lead, registry.stream()) == 0
    assert registry.run(tr.ToolCall("get_weather", {"city": "Rome"})).ok  # its content is marked now
    registry.mark_untrusted(lead[:3] + "something else entirely")
    assert fed_after_close(profile, call, lead, registry.stream()) == 0


def test_the_registry_stream_holds_calls_while_a_marked_text_begins_as_the_reply() -> None:
    # Fail closed: while a marked text may yet be the whole reply, its calls wait; the reply that
    # is one comes back as text, as `salvage` gives it, and one that leaves it behind goes on.
    profile, call = REGISTRY_CALLS[0]
    reply = "Let me check.\n" + call + TRAIL
    registry = tr.ToolRegistry([get_weather], model=profile)
    registry.mark_untrusted(reply)
    s = registry.stream()
    events = [e for ch in reply for e in s.feed(ch)]
    assert not [e for e in events if not isinstance(e, tr.TextDelta)]  # all waits but the text before
    events += s.close()
    assert not [e for e in events if isinstance(e, tr.ToolCallReady)]
    assert "".join(e.text for e in events if isinstance(e, tr.TextDelta)) == reply == registry.salvage(reply).content
    # A reply that parts from the marked text (here after 118 characters) is released before
    # close(), at the first power of two past where they part (prefix digests at 1, 2, 4, ...).
    registry = tr.ToolRegistry([get_weather], model=profile)
    registry.mark_untrusted("Let me check.\n" + call + " and then other words")
    end = len("Let me check.\n" + call)
    assert (end, fed_after_close(profile, call, stream=registry.stream())) == (108, 128 - 108)


def test_a_text_marked_after_the_release_does_not_take_the_call_back() -> None:
    profile, call = REGISTRY_CALLS[0]
    reply = "Let me check.\n" + call + TRAIL
    registry = tr.ToolRegistry([get_weather], model=profile)
    s = registry.stream()
    end = len(reply) - len(TRAIL)
    released = [e for ch in reply[:end] for e in s.feed(ch)]
    assert [e.call.name for e in released if isinstance(e, tr.ToolCallReady)] == ["get_weather"]
    registry.mark_untrusted(reply)  # after the call went: the rest comes back as text
    rest = [e for ch in reply[end:] for e in s.feed(ch)] + s.close()
    assert not [e for e in rest if isinstance(e, tr.ToolCallReady)]
    assert "".join(e.text for e in rest if isinstance(e, tr.TextDelta)) == TRAIL


def test_llama3_json_waits_for_one_character_of_its_grammar() -> None:
    # `<|python_tag|>{...}` may go on with `; {...}`: the call closes at the next non-space.
    call = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert fed_after_close("llama3", call, "") == 2  # the space and the `a` after it


def test_without_a_profile_calls_wait_for_close() -> None:
    # The documented rule: a lone `</think>` could still make all before it reasoning.
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    s = tr.StreamSalvager(["get_weather"])
    assert [e for ch in "Hi " + call + TRAIL for e in s.feed(ch)] == []
    assert [type(e) for e in s.close()] == [tr.TextDelta, tr.ToolCallReady, tr.TextDelta]


def work(text: str, delta: int = 1) -> int:
    s = tr.StreamSalvager(["a"], model="hermes")
    for i in range(0, len(text), delta):
        s.feed(text[i : i + delta])
    s.close()
    return s.work.total


@pytest.mark.parametrize("filler", ["}", ">", "]}", "x", "</tool_call>"])
def test_releasing_at_once_stays_linear(filler: str) -> None:
    # Re-reads triggered by characters a call may end with, or by its closer, are budgeted: a
    # candidate full of them costs a constant factor of its length, never its length squared.
    def reply(n: int) -> str:
        return (
            "Sure. " + '<tool_call>{"name": "a", "arguments": {"q": "' + filler * (n // len(filler)) + '"}}</tool_call>'
        )

    small, large = work(reply(20_000)), work(reply(40_000))
    assert large / small < 2.5


# -- the README's streaming snippet, as written --------------------------------------------------

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def readme_snippet() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Streaming") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize("registry_stream", [False, True])
def test_readme_streaming_snippet_runs_its_tool_before_close(registry_stream: bool) -> None:
    # As written, and with the registry's own stream (the README says it releases as soon).
    log: list[str] = []

    def web_search(query: str) -> str:
        log.append(f"ran {query}")
        return "results"

    reply = (
        "<think>The user wants cats.</think>\n\nLet me look. <tool_call>\n"
        + json.dumps({"name": "web_search", "arguments": {"query": "cats"}})
        + "\n</tool_call>\nDone."
    )

    async def model_stream_of(text: str) -> AsyncIterator[str]:
        for i in range(0, len(text), 4):
            yield text[i : i + 4]
        log.append("stream ended")

    shown: list[str] = []
    namespace: dict[str, Any] = {
        "tr": tr,
        "registry": tr.ToolRegistry([web_search], model="qwen3" if registry_stream else None),
        "model_stream": model_stream_of(reply),
        "show": shown.append,
    }
    snippet = readme_snippet().replace("    ...\n", "    pass\n")
    if registry_stream:
        line = 'salvager = tr.StreamSalvager(registry.names, model="qwen3")'
        assert line in snippet
        snippet = snippet.replace(line, "salvager = registry.stream()")
    body = textwrap.indent(snippet, "    ")
    exec(compile(f"async def _main():\n{body}", str(README), "exec"), namespace)  # the snippet, as written
    asyncio.run(namespace["_main"]())
    assert log == ["ran cats", "stream ended"]  # the tool ran before the reply ended
    assert "".join(shown) == "The user wants cats." + "Let me look. " + "\nDone."


# -- the readers that need no settling character -------------------------------------------------

CORPUS = pathlib.Path(__file__).resolve().parents[1] / ".." / "shared" / "conformance" / "corpus.jsonl"
CASES: list[dict[str, Any]] = (
    [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    if CORPUS.exists()
    else []
)
SUFFIXES = ["", " ", "  \n", ";", "; ", "x", "\n{", "<", "}", "]", "<|call|>", "\n\nDone."]


@pytest.mark.skipif(not CASES, reason="conformance corpus not present")
@pytest.mark.parametrize("name", END_STABLE)
def test_end_stable_readers_never_take_in_what_follows_a_call(name: str) -> None:
    # The claim behind releasing without a settling character: once such a reader has read a
    # call ending at the text's end, more text never changes that answer. Both contexts: the
    # XML-family readers answer only with a model profile (``decided``) before seeing what
    # follows their wrapper's closer; without one they wait for it (values never cut short).
    dialect = by_name(name)
    checked = 0
    for case in CASES:
        text = case["text"]
        for call in tr.salvage_text(text, tr.ANY_TOOL, dialects=[name]).calls:
            assert call.span is not None
            s, e = call.span
            marker = next((m for m in dialect.markers if text[s:].lower().startswith(m)), None)
            if marker is None:
                continue
            for ctx in (ReadContext(final=False), ReadContext(final=False, decided=True)):
                first = dialect.read(text[:e], s, s + len(marker), ctx)
                if not isinstance(first, Found) or not first.calls:
                    continue
                for suffix in SUFFIXES:
                    assert dialect.read(text[:e] + suffix, s, s + len(marker), ctx) == first, (text, suffix, ctx)
                checked += 1
    # python_tag reads on to the next non-space itself (a `;` may follow): nothing to check.
    family = name.partition("_")[0]
    assert checked or name == "python_tag" or not any(c["calls"] for c in CASES if family in c["dialect"])


@given(
    case=st.sampled_from([*CALLS, (None, CALLS[1][1])]),
    points=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_settled_never_passes_a_call_not_yet_released(case: tuple[str | None, str], points: list[int]) -> None:
    # `settled`: every call starting before it has been released, and it only grows; without a
    # profile nothing is settled before close() (a lone close could still change everything).
    profile, call = case
    text = "Sure. " + call + TRAIL + call
    spans = [c.span for c in tr.salvage_text(text, ["get_weather"], model=profile).calls]
    bounds = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
    stream = tr.StreamSalvager(["get_weather"], model=profile)
    released: list[Any] = []
    fed = last = 0
    for a, b in itertools.pairwise(bounds):
        released += [e.call.span for e in stream.feed(text[a:b]) if isinstance(e, tr.ToolCallReady)]
        fed = b
        assert last <= stream.settled <= fed
        last = stream.settled
        assert [s for s in spans if s is not None and s[0] < last] == released[
            : len([s for s in spans if s and s[0] < last])
        ]
        assert profile is not None or last == 0
    released += [e.call.span for e in stream.close() if isinstance(e, tr.ToolCallReady)]
    assert (stream.settled, released) == (len(text), spans)


# Real XML-family replies with their model's profile: (case dialect prefix, profile).
XML_PROFILES = [
    ("qwen3_coder", "qwen3-coder"),
    ("glm4", "glm"),
    ("minimax_m2", "minimax"),
    ("deepseek_v32_dsml", "deepseek-v3.2"),
    ("deepseek_v4_dsml", "deepseek-v3.2"),
]
WRAPPER_CLOSERS = ("</tool_call>", "</minimax:tool_call>", "calls>")


@pytest.mark.skipif(not CASES, reason="conformance corpus not present")
def test_real_xml_calls_with_their_profile_are_released_at_their_wrappers_closer() -> None:
    checked = 0
    for case in CASES:
        profile = next((p for prefix, p in XML_PROFILES if case["dialect"].startswith(prefix)), None)
        if profile is None:
            continue
        text = case["text"]
        allowed = [c["name"] for c in case["calls"]] or tr.ANY_TOOL
        s = tr.StreamSalvager(allowed, model=profile)
        released: list[tuple[tr.ToolCall, int | None]] = []
        for i, ch in enumerate(text):
            released += [(e.call, i + 1) for e in s.feed(ch) if isinstance(e, tr.ToolCallReady)]
        released += [(e.call, None) for e in s.close() if isinstance(e, tr.ToolCallReady)]
        assert tuple(c for c, _ in released) == tr.salvage_text(text, allowed, model=profile).calls, text
        for call, at in released:
            assert call.span is not None
            end = call.span[1]
            if end < len(text) and text[:end].lower().endswith(WRAPPER_CLOSERS):
                assert at == end, (text, call)
                checked += 1
    assert checked
