"""toolrepair.integrations.openai_agents against real openai-agents: Runner.run / run_streamed
over a scripted fake Model (the SDK's own Model interface), wrapped by ToolRepair."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

import toolrepair as tr

pytest.importorskip("agents")
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
from agents.models.fake_id import FAKE_RESPONSES_ID
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseReasoningTextDeltaEvent,
    ResponseTextDeltaEvent,
)

from toolrepair.integrations.openai_agents import ToolRepair

RAN: list[tuple[str, Any]] = []
HERMES = '<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'


@function_tool
def web_search(query: str, limit: int = 3) -> str:
    """Search the web."""
    RAN.append(("web_search", (query, limit)))
    return f"{limit} results for {query}"


@function_tool
def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(("delete_file", path))
    return "deleted"


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"No such file: {path}")


def _call(name: str, arguments: str, call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", call_id=call_id, name=name, arguments=arguments, id=f"fc_{call_id}", status="completed"
    )


def _text(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage.model_validate(
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    )


class ScriptedModel(Model):
    """A fake model: each turn's output items, in order; it records what it was sent."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script = iter(script)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=next(self.script), usage=Usage(), response_id=None)

    async def stream_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.inputs.append(input)
        output = next(self.script)
        response = Response(
            id="resp_1",
            created_at=0,
            model="fake",
            object="response",
            output=output,
            parallel_tool_calls=True,
            tool_choice="auto",
            tools=[],
        )
        yield ResponseCreatedEvent(
            type="response.created", response=response.model_copy(update={"output": []}), sequence_number=0
        )
        seq = 0
        for item in output:
            if isinstance(item, ResponseOutputMessage):
                text = item.content[0].text
                for start in range(0, len(text), 7):  # the text in 7-character deltas
                    seq += 1
                    yield ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=item.id,
                        output_index=0,
                        content_index=0,
                        delta=text[start : start + 7],
                        sequence_number=seq,
                        logprobs=[],
                    )
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=seq + 1)


SCRIPT = [
    [_call("WebSearch", '{"query": "cats", "limit": "2",}', "c_drift")],  # drifted name, broken JSON
    [_text("Again. " + HERMES.format(name="web_search", arguments='{"query": "dogs"}'))],  # a text call
    [_call("image_search", '{"query": "otters"}', "c_unknown")],  # a tool never offered
    [_call("web_search", '{"query": "otters"}', "c_next")],  # ... the next turn succeeds
    [_call("delete_file", '{"path": "/"}', "c_denied"), _call("ReadFile", '{"path": "/x"}', "c_fail")],
    [_text("Done.")],
]


def _check(model: ScriptedModel, final: Any) -> None:
    assert RAN == [("web_search", ("cats", 2)), ("web_search", ("dogs", 3)), ("web_search", ("otters", 3))]
    outputs: dict[str, str] = {}
    for sent in model.inputs:
        if isinstance(sent, list):
            outputs.update(
                {
                    i["call_id"]: i["output"]
                    for i in sent
                    if isinstance(i, dict) and i.get("type") == "function_call_output"
                }
            )
    assert outputs["c_drift"] == "2 results for cats"
    assert outputs["c_unknown"] == (
        "Tool 'image_search' not found. Did you mean 'web_search'? "
        "Available tools: ['delete_file', 'read_file', 'web_search']"
    )
    assert outputs["c_next"] == "3 results for otters"
    assert outputs["c_denied"] == "Tool 'delete_file' is not allowed."
    assert outputs["c_fail"] == "No such file: /x"  # a tool's own error, through the formatter
    [salvaged] = [k for k in outputs if k.startswith("call_")]
    assert outputs[salvaged] == "3 results for dogs"
    assert final == "Done."


def _agent(model: ScriptedModel, repair: ToolRepair) -> Agent:
    RAN.clear()
    return Agent(name="scripted", model=repair.model(model), tools=[web_search, delete_file, read_file])


def test_a_run_through_every_case() -> None:
    model, repair = ScriptedModel(SCRIPT), ToolRepair(deny=["delete_file"])
    result = asyncio.run(Runner.run(_agent(model, repair), "find things", run_config=repair.run_config()))
    _check(model, result.final_output)


def test_a_streamed_run_never_shows_the_markup() -> None:
    model, repair = ScriptedModel(SCRIPT), ToolRepair(deny=["delete_file"])

    async def main() -> tuple[str, Any]:
        result = Runner.run_streamed(_agent(model, repair), "find things", run_config=repair.run_config())
        shown = []
        async for event in result.stream_events():
            if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent):
                shown.append(event.data.delta)
        return "".join(shown), result.final_output

    shown, final = asyncio.run(main())
    assert shown == "Again. Done." and "<tool_call>" not in shown
    _check(model, final)


@pytest.mark.parametrize(
    "policy", [{"allow": ["web_search"]}, {"before_call": lambda call: call.name != "delete_file"}]
)
def test_a_denied_call_never_runs_whatever_the_policy(policy: dict) -> None:
    model = ScriptedModel(
        [
            [_call("DeleteFile", '{"path": "/"}', "c1")],
            [_text(HERMES.format(name="delete_file", arguments='{"path": "/b"}'))],
            [_text("OK.")],
        ]
    )
    repair = ToolRepair(**policy)
    result = asyncio.run(Runner.run(_agent(model, repair), "x", run_config=repair.run_config()))
    assert RAN == [] and result.final_output == "OK."
    outputs = [
        i["output"]
        for sent in model.inputs
        if isinstance(sent, list)
        for i in sent
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    assert len(outputs) == 3 and all(o.startswith("Tool 'delete_file' ") for o in outputs)  # replayed history repeats


def test_a_given_registry_and_the_formatter_defaults() -> None:
    from agents.run_config import ToolErrorFormatterArgs

    def lookup(query: str) -> str:
        return query

    repair = ToolRepair(tr.ToolRegistry([lookup]))
    assert repair.registry_for([]).names == ["lookup"]
    args = ToolErrorFormatterArgs(
        kind="approval_rejected",
        tool_type="function",
        tool_name="x",
        call_id="c",
        default_message="no",
        run_context=None,
    )
    assert repair.tool_error_formatter(args) is None
    config = repair.run_config(workflow_name="w")
    assert config.tool_not_found_behavior == "return_error_to_model" and config.workflow_name == "w"


def test_held_text_is_shown_at_completion_and_the_wrapper_delegates() -> None:
    model, repair = ScriptedModel([[_text("Almost a call: <tool_call>{")]]), ToolRepair()
    wrapped = repair.model(model)

    async def main() -> list[Any]:
        events = [
            e
            async for e in wrapped.stream_response(
                None,
                "x",
                None,
                [web_search],
                None,
                [],
                None,
                previous_response_id=None,
                conversation_id=None,
                prompt=None,
            )
        ]
        assert wrapped.get_retry_advice(None) is None
        await wrapped.close()
        await wrapped._cleanup_on_run_end(object())
        return events

    events = asyncio.run(main())
    shown = "".join(e.delta for e in events if isinstance(e, ResponseTextDeltaEvent))
    assert shown == "Almost a call: <tool_call>{"  # never a call: held, then shown whole
    assert events[0].type == "response.created"


# -- reasoning read from the text ------------------------------------------------------------------
def _items(output: list[Any]) -> list[tuple[str, str]]:
    """Each output item as (type, its text): a message's text, a reasoning item's, a call's name."""
    out = []
    for item in output:
        if item.type == "message":
            out.append(("message", "".join(part.text for part in item.content)))
        elif item.type == "reasoning":
            out.append(("reasoning", "".join(part.text for part in item.content or [])))
        else:
            out.append((item.type, item.name))
    return out


DOGS = HERMES.format(name="web_search", arguments='{"query": "dogs"}')
# (the model's first turn, the output items the runner gets, tools run)
REASONING_CASES = [
    ("<think>Plan.</think>Answer.", [("reasoning", "Plan."), ("message", "Answer.")], []),
    ("Plan.</think>\n\nAnswer.", [("reasoning", "Plan."), ("message", "Answer.")], []),
    (
        "<think>Look it up.</think>\n" + DOGS,
        [("reasoning", "Look it up."), ("message", ""), ("function_call", "web_search")],
        [("web_search", ("dogs", 3))],
    ),
    ("Answer, no reasoning.", [("message", "Answer, no reasoning.")], []),
]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(("text", "items", "ran"), REASONING_CASES)
def test_reasoning_in_the_text_is_a_reasoning_item(text: str, items: list[Any], ran: list[Any], streamed: bool) -> None:
    model, repair = ScriptedModel([[_text(text)], [_text("Done.")]]), ToolRepair()
    agent = _agent(model, repair)

    async def main() -> tuple[Any, str, str]:
        if not streamed:
            return await Runner.run(agent, "x", run_config=repair.run_config()), "", ""
        result = Runner.run_streamed(agent, "x", run_config=repair.run_config())
        shown, thought = [], []
        async for event in result.stream_events():
            if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent):
                shown.append(event.data.delta)
            elif event.type == "raw_response_event" and isinstance(event.data, ResponseReasoningTextDeltaEvent):
                thought.append(event.data.delta)
                assert event.data.item_id == FAKE_RESPONSES_ID
        return result, "".join(shown), "".join(thought)

    result, shown, thought = asyncio.run(main())
    first = result.raw_responses[0].output
    assert (_items(first), RAN) == (items, ran)
    assert result.final_output == ("Done." if ran else items[-1][1])  # a call runs, then the next turn
    reasoning = [i for i in first if i.type == "reasoning"]
    assert all(i.id == FAKE_RESPONSES_ID for i in reasoning)
    if streamed:
        assert "<think>" not in shown and "</think>" not in shown and "Plan." not in shown
        assert thought == "".join(text for kind, text in items if kind == "reasoning")


def test_a_reply_with_a_native_call_keeps_its_text_as_written() -> None:
    """Salvage (reasoning too) runs only on a reply with no native call."""
    text = "<think>Plan.</think>Calling."
    model, repair = (
        ScriptedModel([[_text(text), _call("web_search", '{"query": "x"}', "c1")], [_text("Done.")]]),
        (ToolRepair()),
    )
    result = asyncio.run(Runner.run(_agent(model, repair), "x", run_config=repair.run_config()))
    assert _items(result.raw_responses[0].output) == [("message", text), ("function_call", "web_search")]
    assert result.final_output == "Done." and RAN == [("web_search", ("x", 3))]


def test_the_reasoning_id_is_the_sdk_s_own_for_items_no_provider_named() -> None:
    from toolrepair.integrations import openai_agents

    assert openai_agents._NO_PROVIDER_ID == FAKE_RESPONSES_ID


def test_with_a_model_profile_text_streams_as_it_comes() -> None:
    """With the reply's model profile known, text that cannot be a call is shown as it comes
    (reasoning waits for the reply's end: ``ToolRegistry.stream`` holds all from its first
    event that is not text, whether the reply is one marked untrusted being known only then)."""

    def web_search(query: str, limit: int = 3) -> str:
        return query

    text = "Here is the answer, written out at some length."
    model = ScriptedModel([[_text(text)]])
    repair = ToolRepair(tr.ToolRegistry([web_search], model="qwen3"))

    async def main() -> list[Any]:
        result = Runner.run_streamed(_agent(model, repair), "x", run_config=repair.run_config())
        return [e.data async for e in result.stream_events() if e.type == "raw_response_event"]

    events = asyncio.run(main())
    texts = [(i, e.delta) for i, e in enumerate(events) if isinstance(e, ResponseTextDeltaEvent)]
    completed = next(i for i, e in enumerate(events) if isinstance(e, ResponseCompletedEvent))
    assert "".join(delta for _, delta in texts) == text
    assert len(texts) > 1 and texts[0][0] < completed - 1  # released before the reply ended
