"""toolrepair.integrations.pydantic_ai, streamed: one script of model turns driven by every way
pydantic-ai runs an agent (``run``, ``run_stream``, ``iter`` with ``node.stream``,
``run_stream_events``) through the framework's own loop, over a real ``FunctionModel`` that
answers whole (``function``) and streamed (``stream_function``) with the same pieces."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

import toolrepair as tr

pytest.importorskip("pydantic_ai")
from pydantic_ai import Agent
from pydantic_ai.messages import (
    FinalResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    RetryPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel

from toolrepair.integrations.pydantic_ai import ToolRepair

RAN: list[str] = []
CALL = '<tool_call>{{"name": "{name}", "arguments": {{"query": "{query}"}}}}</tool_call>'
Piece = str | dict[int, Any]


def web_search(query: str) -> str:
    """Search the web."""
    RAN.append(query)
    return f"results for {query}"


def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(path)
    return "deleted"


def _model(turns: list[list[Piece]], seen: list[ModelMessage]) -> FunctionModel:
    """Each turn's pieces, streamed as they are or joined into one whole TextPart."""
    replies = iter(turns)

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages[-1])
        return ModelResponse(parts=[TextPart("".join(p for p in next(replies) if isinstance(p, str)))])

    async def streamed(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Piece]:
        seen.append(messages[-1])
        for piece in next(replies):
            yield piece

    return FunctionModel(whole, stream_function=streamed)


async def _run(agent: Agent) -> tuple[Any, list[ModelMessage], list[Any]]:
    result = await agent.run("go")
    return result.output, result.all_messages(), []


async def _run_stream(agent: Agent) -> tuple[Any, list[ModelMessage], list[Any]]:
    async with agent.run_stream("go") as result:
        output = await result.get_output()
    return output, result.all_messages(), []


async def _iter(agent: Agent) -> tuple[Any, list[ModelMessage], list[Any]]:
    events: list[Any] = []
    async with agent.iter("go") as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    events.extend([e async for e in stream])
    assert run.result is not None
    return run.result.output, run.result.all_messages(), events


async def _iter_nodes(agent: Agent) -> tuple[Any, list[ModelMessage], list[Any]]:
    async with agent.iter("go") as run:
        async for _ in run:
            pass
    assert run.result is not None
    return run.result.output, run.result.all_messages(), []


async def _events(agent: Agent) -> tuple[Any, list[ModelMessage], list[Any]]:
    async with agent.run_stream_events("go") as stream:
        events = [e async for e in stream]
    final = events[-1].result
    return final.output, final.all_messages(), events


DRIVERS: dict[str, Callable[[Agent], Awaitable[tuple[Any, list[ModelMessage], list[Any]]]]] = {
    "run": _run,
    "run_stream": _run_stream,
    "iter": _iter,
    "iter, nodes not streamed": _iter_nodes,
    "run_stream_events": _events,
}


def _answers(message: ModelMessage) -> list[tuple[str, str]]:
    """What the model was told about each call of its last turn."""
    assert isinstance(message, ModelRequest)
    return [
        (p.tool_name or "", p.model_response() if isinstance(p, RetryPromptPart) else str(p.content))
        for p in message.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    ]


def _kinds(messages: list[ModelMessage]) -> list[list[str]]:
    return [[type(p).__name__ for p in m.parts] for m in messages if isinstance(m, ModelResponse)]


def _shown(events: list[Any]) -> str:
    """Every piece of text and thinking a consumer of the events sees."""
    out = []
    for event in events:
        if isinstance(event, PartStartEvent) and isinstance(event.part, (TextPart, ThinkingPart)):
            out.append(event.part.content)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            out.append(event.delta.content_delta)
    return "".join(out)


PARIS = CALL.format(name="web_search", query="Paris")
# (turns, expected output, tools run, answers per later turn, part kinds per response)
CASES = {
    "a text call": (
        [["<tool_call>", '{"name": "web_search", ', '"arguments": {"query": "Paris"}}</tool_call>'], ["Sunny."]],
        "Sunny.",
        ["Paris"],
        [[("web_search", "results for Paris")]],
        [["ToolCallPart"], ["TextPart"]],
    ),
    "reasoning, then a text call": (
        [["<think>Look it ", "up.</think>\n", PARIS[:20], PARIS[20:]], ["Sunny."]],
        "Sunny.",
        ["Paris"],
        [[("web_search", "results for Paris")]],
        [["ThinkingPart", "ToolCallPart"], ["TextPart"]],
    ),
    "reasoning, then the answer": (
        [["<think>Sim", "ple.</think>", " Hello."]],
        "Hello.",
        [],
        [],
        [["ThinkingPart", "TextPart"]],
    ),
    "a tool never offered, then the right one": (
        [
            [CALL.format(name="image_search", query="otters")],
            [CALL.format(name="web_search", query="otters")],
            ["Otters."],
        ],
        "Otters.",
        ["otters"],
        None,  # pydantic-ai's own retry prompt: checked below
        [["ToolCallPart"], ["ToolCallPart"], ["TextPart"]],
    ),
    "a call denied by policy": (
        [['<tool_call>{"name": "delete_file", "arguments": {"path": "/"}}</tool_call>'], ["OK."]],
        "OK.",
        [],
        [[("delete_file", "Tool 'delete_file' is not allowed.")]],
        [["ToolCallPart"], ["TextPart"]],
    ),
    "the same call four times": (
        [[PARIS] * 4, ["Done."]],
        "Done.",
        ["Paris"] * 3,
        None,  # the fourth is the repeat answer: checked below
        [["ToolCallPart"] * 4, ["TextPart"]],
    ),
    "plain text": ([["Just ", "text."]], "Just text.", [], [], [["TextPart"]]),
}


@pytest.mark.parametrize("driver", list(DRIVERS))
@pytest.mark.parametrize("case", list(CASES))
def test_every_way_of_running_answers_the_same(case: str, driver: str) -> None:
    turns, output, ran, answers, kinds = CASES[case]
    seen: list[ModelMessage] = []
    RAN.clear()
    agent = Agent(_model(turns, seen), tools=[web_search, delete_file], capabilities=[ToolRepair(deny=["delete_file"])])
    got, history, events = asyncio.run(DRIVERS[driver](agent))
    assert (got, RAN, _kinds(history)) == (output, ran, kinds)
    later = [_answers(m) for m in seen[1:]]
    if answers is not None:
        assert later == answers
    elif case == "the same call four times":
        [results] = later
        assert results[:3] == [("web_search", "results for Paris")] * 3
        assert results[3][0] == "web_search" and "has already run 3 times" in results[3][1]
    else:
        [(name, retry)], second = later
        assert name == "image_search" and "Unknown tool name: 'image_search'" in retry and "'web_search'" in retry
        assert second == [("web_search", "results for otters")]
    # What a consumer of the events sees: never the markup, reasoning as thinking.
    shown = _shown(events)
    assert "<tool_call>" not in shown and "<think>" not in shown and "</think>" not in shown
    if events and case.startswith("reasoning"):
        assert any(isinstance(e, PartStartEvent) and isinstance(e.part, ThinkingPart) for e in events)


def test_the_history_keeps_what_each_part_holds() -> None:
    RAN.clear()
    turns: list[list[Piece]] = [["<think>Plan: ", "search.</think>", PARIS], ["<think>Done.</think>Sunny."]]
    for driver in ("run", "run_stream"):
        agent = Agent(_model([list(t) for t in turns], []), tools=[web_search], capabilities=[ToolRepair()])
        output, history, _ = asyncio.run(DRIVERS[driver](agent))
        first, last = [m for m in history if isinstance(m, ModelResponse)]
        assert output == "Sunny."
        assert first.parts[0] == ThinkingPart(content="Plan: search.")
        assert isinstance(first.parts[1], ToolCallPart) and first.parts[1].args == {"query": "Paris"}
        assert last.parts == [ThinkingPart(content="Done."), TextPart(content="Sunny.")]


def test_ids_are_the_same_streamed_and_whole() -> None:
    ids = []
    for driver in ("run", "run_stream", "run_stream_events"):
        agent = Agent(_model([[PARIS], ["Sunny."]], []), tools=[web_search], capabilities=[ToolRepair()])
        _, history, _ = asyncio.run(DRIVERS[driver](agent))
        ids.append([p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolCallPart)])
    assert ids[0] == ids[1] == ids[2] and len(ids[0]) == 1


def test_text_beside_a_call_under_run_stream_is_the_output_as_for_a_native_call() -> None:
    """pydantic-ai's ``run_stream`` ends at the first text part (a native call after text does
    the same); the call still runs under the default ``end_strategy``. ``run`` goes on."""
    turns: list[list[Piece]] = [["Let me look. ", PARIS], ["Sunny."]]
    for driver, output in (("run", "Sunny."), ("run_stream", "Let me look. "), ("run_stream_events", "Sunny.")):
        RAN.clear()
        agent = Agent(_model([list(t) for t in turns], []), tools=[web_search], capabilities=[ToolRepair()])
        got, _, _ = asyncio.run(DRIVERS[driver](agent))
        assert (got, RAN) == (output, ["Paris"])
    RAN.clear()
    native: list[list[Piece]] = [
        ["Let me look.", {1: DeltaToolCall(name="web_search", json_args='{"query": "Paris"}')}],
        ["Sunny."],
    ]
    agent = Agent(_model(native, []), tools=[web_search])
    assert asyncio.run(_run_stream(agent))[0] == "Let me look." and RAN == ["Paris"]


def _native_turns() -> list[list[Piece]]:
    return [
        [
            {0: DeltaThinkingPart(content="Thinking ")},
            {0: DeltaThinkingPart(content="it over.")},
            {1: DeltaToolCall(name="web_search", json_args='{"query": ', tool_call_id="n1")},
            {1: DeltaToolCall(json_args='"cats"}')},
        ],
        ["Cats."],
    ]


def test_parts_that_are_not_text_stream_as_they_come() -> None:
    """A reply with no text: the events a consumer sees are the ones it would see without the
    capability, delta for delta."""
    views = []
    for capabilities in ([], [ToolRepair()]):
        RAN.clear()
        agent = Agent(_model(_native_turns(), []), tools=[web_search], capabilities=capabilities)
        output, _, events = asyncio.run(_events(agent))
        views.append(
            (
                output,
                list(RAN),
                [
                    (type(e).__name__, getattr(e, "index", None), type(getattr(e, "delta", None)).__name__)
                    for e in events
                    if isinstance(e, (PartStartEvent, PartDeltaEvent, PartEndEvent, FinalResultEvent))
                ],
            )
        )
    assert views[0] == views[1] and views[0][:2] == ("Cats.", ["cats"])


def test_a_reply_with_a_native_call_has_nothing_salvaged_from_its_text() -> None:
    """As for a whole reply: salvage runs only when the reply has no native call, which is
    known only at its end (here the native call comes after the text)."""
    turns: list[list[Piece]] = [
        ["Hi ", PARIS, {1: DeltaToolCall(name="web_search", json_args='{"query": "x"}', tool_call_id="n1")}, "!"],
        ["Bye."],
    ]
    RAN.clear()
    agent = Agent(_model(turns, []), tools=[web_search], capabilities=[ToolRepair()])
    output, history, events = asyncio.run(_events(agent))
    first = next(m for m in history if isinstance(m, ModelResponse))
    assert output == "Bye." and RAN == ["x"]
    assert [type(p).__name__ for p in first.parts] == ["TextPart", "ToolCallPart"]
    assert first.parts[0].content == f"Hi {PARIS}!"  # the text part got more after the call began
    assert _shown(events) == f"Hi {PARIS}!Bye."


def test_text_that_comes_back_after_another_part_is_kept() -> None:
    """A text part that gets more text after another part started (pydantic-ai sends it to the
    old part's index) is held on its own and handed on when the reply ends: no text is lost."""
    turns: list[list[Piece]] = [["Hi ", {1: DeltaThinkingPart(content="Hmm.")}, "there"], ["Bye."]]
    agent = Agent(_model(turns, []), tools=[web_search], capabilities=[ToolRepair()])
    output, history, events = asyncio.run(_events(agent))
    first = next(m for m in history if isinstance(m, ModelResponse))
    assert output == "Hi there"  # pydantic-ai joins the text parts
    assert [(type(p).__name__, p.content) for p in first.parts] == [
        ("TextPart", "Hi "),
        ("ThinkingPart", "Hmm."),
        ("TextPart", "there"),
    ]
    assert _shown(events) == "Hi Hmm.there"


def test_a_given_registry_and_the_stream_s_own_fields() -> None:
    """With a registry given, the stream reads against it; the wrapped stream's usage, model
    name and timestamp are the response's."""
    registry = tr.ToolRegistry([web_search], deny=["web_search"])
    RAN.clear()
    agent = Agent(_model([[PARIS], ["No."]], []), tools=[web_search], capabilities=[ToolRepair(registry)])

    output, history, _ = asyncio.run(_run_stream(agent))
    first = next(m for m in history if isinstance(m, ModelResponse))
    assert (output, RAN) == ("No.", [])
    assert _answers(history[2]) == [("web_search", "Tool 'web_search' is not allowed.")]
    assert first.model_name == "function:whole:streamed" and first.usage.output_tokens > 0


def test_cancelling_the_stream_cancels_the_model_s() -> None:
    turns: list[list[Piece]] = [
        [
            "Hello.",
            {1: DeltaToolCall(name="web_search", json_args='{"query": ', tool_call_id="n1")},
            {1: DeltaToolCall(json_args='"x"}')},
        ],
    ]
    agent = Agent(_model(turns, []), tools=[web_search], capabilities=[ToolRepair()])

    async def main() -> tuple[bool, Any]:
        async with agent.run_stream("go") as result:
            await result.cancel()
            return result.cancelled, result.all_messages()[-1]

    cancelled, last = asyncio.run(main())
    assert cancelled and isinstance(last, ModelResponse) and last.state == "interrupted"


@pytest.mark.parametrize("driver", ["run", "run_stream", "run_stream_events"])
def test_pydantic_ai_s_test_model_gets_its_reasoning_as_thinking(driver: str) -> None:
    """``TestModel`` streams its text word by word: the reasoning in it is a ThinkingPart."""
    model = TestModel(custom_output_text="<think>Let me see. Yes.</think> The answer is four.", call_tools=[])
    agent = Agent(model, tools=[web_search], capabilities=[ToolRepair()])
    output, history, _ = asyncio.run(DRIVERS[driver](agent))
    response = next(m for m in history if isinstance(m, ModelResponse))
    assert output == "The answer is four."
    assert response.parts == [ThinkingPart(content="Let me see. Yes."), TextPart(content="The answer is four.")]


def test_screen_stream_makes_run_stream_every_request() -> None:
    """``screen_stream=True``: ``run()`` streams (a model that only streams serves it) through
    the same reading."""
    turns = iter([[PARIS], ["Sunny."]])

    async def only_streams(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in next(turns):
            yield piece

    RAN.clear()
    agent = Agent(
        FunctionModel(stream_function=only_streams), tools=[web_search], capabilities=[ToolRepair(screen_stream=True)]
    )
    assert asyncio.run(agent.run("go")).output == "Sunny." and RAN == ["Paris"]
