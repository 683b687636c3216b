"""Properties of repair_history over generated histories, judged by validators written by others.

Valid histories (OpenAI and Anthropic shapes) are generated, then corrupted the ways trimming
and replaying corrupt them: the head cut, a middle deleted, a tool cancelled (its result
gone), a result duplicated or stripped of its id, argument JSON broken, ``content: ""`` beside
the calls, Anthropic results put after text. The repaired history must pass ``turnsafe``'s
and ``tool-call-repair``'s validators and the SDKs' request types; a valid one comes back equal.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import turnsafe
from hypothesis import given
from hypothesis import strategies as st

import toolrepair as tr

from .history_oracles import MISSING_WHEEL, sdk_accepts, tool_call_repair

words = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(lambda s: "w" + s.strip())
names = st.sampled_from(["get_weather", "search", "add"])
arguments = st.dictionaries(st.sampled_from(["q", "city", "n"]), st.integers(-5, 5) | words, max_size=3)


@st.composite
def histories(draw: st.DrawFn, shape: str) -> list[dict[str, Any]]:
    """A valid history: user turns, each followed by tool rounds and a closing reply."""
    out: list[dict[str, Any]] = []
    serial = 0
    for _ in range(draw(st.integers(1, 3))):
        out.append({"role": "user", "content": draw(words)})
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                serial += 1
                calls.append((f"{'toolu' if shape == 'anthropic' else 'call'}_{serial}", draw(names), draw(arguments)))
            text = draw(st.none() | words)
            order = draw(st.permutations(range(len(calls))))
            if shape == "openai":
                out.append(
                    {
                        "role": "assistant",
                        "content": text,
                        "tool_calls": [
                            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                            for i, n, a in calls
                        ],
                    }
                )
                out += [{"role": "tool", "tool_call_id": calls[k][0], "content": draw(words)} for k in order]
            else:
                head = [{"type": "text", "text": text}] if text else []
                out.append(
                    {
                        "role": "assistant",
                        "content": head + [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls],
                    }
                )
                results = [{"type": "tool_result", "tool_use_id": calls[k][0], "content": draw(words)} for k in order]
                tail = [{"type": "text", "text": draw(words)}] if draw(st.booleans()) else []
                out.append({"role": "user", "content": results + tail})
        out.append(
            {
                "role": "assistant",
                "content": draw(words) if shape == "openai" else [{"type": "text", "text": draw(words)}],
            }
        )
    return out


BROKEN_ARGUMENTS = ["{'q': 1,}", '{"q": 1,}', "", '{"q": ', "[1, 2]", "not json", '"{\\"q\\": 2}"', "{q: 1}"]


def _results(msg: dict[str, Any]) -> list[Any]:
    content = msg.get("content")
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


def _fits(kind: str, msg: dict[str, Any]) -> bool:
    """Whether corruption ``kind`` can be applied to ``msg``."""
    if kind in ("cancel", "duplicate", "no-id"):
        return msg.get("role") == "tool" or bool(_results(msg))
    if kind in ("arguments", "empty"):
        return bool(msg.get("tool_calls")) or any(
            isinstance(b, dict) and b.get("type") == "tool_use" for b in msg.get("content") or []
        )
    if kind == "not-first":
        return bool(_results(msg))
    return True


@st.composite
def corrupted(draw: st.DrawFn, shape: str) -> list[dict[str, Any]]:
    history = copy.deepcopy(draw(histories(shape)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["head", "middle", "cancel", "duplicate", "no-id", "arguments", "empty", "not-first"])
        )
        fitting = [i for i, msg in enumerate(history) if _fits(kind, msg)]
        if not fitting:
            continue
        at = draw(st.sampled_from(fitting))
        msg = history[at]
        if kind == "head":
            del history[: at + 1]
        elif kind == "middle":
            del history[at : at + draw(st.integers(1, 3))]
        elif msg.get("role") == "tool":  # cancel, duplicate, no-id on an OpenAI result
            if kind == "cancel":
                del history[at]
            elif kind == "duplicate":
                history.insert(at + 1, copy.deepcopy(msg))
            else:
                msg.pop("tool_call_id", None)
        elif kind in ("cancel", "duplicate", "no-id"):  # on an Anthropic result block
            block = draw(st.sampled_from(_results(msg)))
            if kind == "cancel":
                msg["content"].remove(block)
            elif kind == "duplicate":
                msg["content"].append(copy.deepcopy(block))
            else:
                block.pop("tool_use_id", None)
        elif kind == "arguments":
            for call in msg.get("tool_calls") or []:
                call["function"]["arguments"] = draw(st.sampled_from(BROKEN_ARGUMENTS))
            for block in msg["content"] if isinstance(msg.get("content"), list) else []:
                if block.get("type") == "tool_use":
                    block["input"] = draw(st.sampled_from(BROKEN_ARGUMENTS))
        elif kind == "empty":
            if shape == "openai":
                msg["content"] = ""
            else:
                msg["content"].insert(0, {"type": "text", "text": ""})
        else:  # not-first
            msg["content"] = [{"type": "text", "text": "w"}, *msg["content"]]
    return history


def _tool_call_repair_violations(messages: list[Any], shape: str) -> list[Any]:
    oracle = tool_call_repair()
    if oracle is None:
        pytest.skip(MISSING_WHEEL)
    violations: list[Any] = oracle.validate(messages, format=shape)
    return violations


def _check_repaired(history: list[Any], shape: str) -> list[Any]:
    before = copy.deepcopy(history)
    fixed, report = tr.repair_history(history, shape=shape)  # type: ignore[arg-type]
    assert history == before  # never mutated
    verdict = turnsafe.validate(fixed, provider=shape)
    assert verdict.ok, verdict.errors
    assert _tool_call_repair_violations(fixed, shape) == []
    sdk_accepts(fixed, shape)
    for msg in fixed:  # every argument string is a JSON object
        for call in msg.get("tool_calls") or []:
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
    again, second = tr.repair_history(fixed, shape=shape)  # type: ignore[arg-type]
    assert again == fixed and not second  # idempotent
    assert bool(report) == (fixed != history)
    return fixed


@given(histories("openai"))
def test_valid_openai_history_comes_back_equal(history: list[Any]) -> None:
    assert turnsafe.validate(history, provider="openai").ok
    assert _tool_call_repair_violations(history, "openai") == []
    fixed, report = tr.repair_history(history)
    assert fixed == history and not report


@given(histories("anthropic"))
def test_valid_anthropic_history_comes_back_equal(history: list[Any]) -> None:
    assert turnsafe.validate(history, provider="anthropic").ok
    assert _tool_call_repair_violations(history, "anthropic") == []
    fixed, report = tr.repair_history(history)
    assert fixed == history and not report


@given(corrupted("openai"))
def test_corrupted_openai_history_is_repaired(history: list[Any]) -> None:
    _check_repaired(history, "openai")


@given(corrupted("anthropic"))
def test_corrupted_anthropic_history_is_repaired(history: list[Any]) -> None:
    _check_repaired(history, "anthropic")


@given(corrupted("openai"))
def test_dropping_unanswered_calls_is_valid_too(history: list[Any]) -> None:
    fixed, report = tr.repair_history(history, shape="openai", unanswered="drop")
    assert turnsafe.validate(fixed, provider="openai").ok
    assert _tool_call_repair_violations(fixed, "openai") == []
    assert not report.count("placeholder-added")


def test_the_oracles_see_what_is_broken() -> None:
    """The oracles are not vacuous: each refuses a history the repair fixes."""
    broken = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
    ]
    assert not turnsafe.validate(broken, provider="openai").ok
    assert _tool_call_repair_violations(broken, "openai")
    blocks = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "w"}, {"type": "tool_result", "tool_use_id": "x", "content": "r"}],
        }
    ]
    assert not turnsafe.validate(blocks, provider="anthropic").ok
    assert _tool_call_repair_violations(blocks, "anthropic")
    with pytest.raises(ValueError, match="tool_use_id"):
        sdk_accepts([{"role": "user", "content": [{"type": "tool_result", "content": "r"}]}], "anthropic")
    with pytest.raises(ValueError, match="tool_call_id"):
        sdk_accepts([{"role": "tool", "content": "r"}], "openai")
