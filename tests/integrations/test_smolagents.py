"""toolrepair.integrations.smolagents against real smolagents: a ToolCallingAgent over a scripted
smolagents Model (whole replies and streamed ones), wrapped by ToolRepairModel."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

import toolrepair as tr

pytest.importorskip("smolagents")
from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageStreamDelta,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

from toolrepair.integrations.smolagents import ToolRepairModel

RAN: list[tuple[str, Any]] = []
HERMES = '<tool_call>{{"name": "{name}", "arguments": {arguments}}}</tool_call>'


@tool
def web_search(query: str, limit: int = 3) -> str:
    """Search the web.

    Args:
        query: what to search for.
        limit: how many results.
    """
    RAN.append(("web_search", (query, limit)))
    return f"{limit} results for {query}"


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: the file.
    """
    RAN.append(("delete_file", path))
    return "deleted"


def _native(name: str, arguments: Any, ident: str) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        tool_calls=[
            ChatMessageToolCall(
                id=ident, type="function", function=ChatMessageToolCallFunction(name=name, arguments=arguments)
            )
        ],
    )


def _text(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


class ScriptedModel(Model):
    """A fake smolagents model: one reply per step; it records what each step was sent."""

    def __init__(self, script: list[ChatMessage]) -> None:
        super().__init__(model_id="scripted")
        self.script = copy.deepcopy(script)  # replies are changed in place as an agent reads them
        self.seen: list[Any] = []

    def generate(
        self,
        messages: Any,
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        self.seen.append(messages)
        return self.script.pop(0)

    def generate_stream(self, messages: Any, **kwargs: Any) -> Iterator[ChatMessageStreamDelta]:
        self.seen.append(messages)
        reply = self.script.pop(0)
        if reply.tool_calls:
            yield ChatMessageStreamDelta(
                content=None, tool_calls=[_delta(i, tc) for i, tc in enumerate(reply.tool_calls)]
            )
            return
        text = reply.content or ""
        for start in range(0, len(text), 5):
            yield ChatMessageStreamDelta(content=text[start : start + 5])


def _delta(index: int, tc: ChatMessageToolCall) -> Any:
    from smolagents.models import ChatMessageToolCallStreamDelta

    return ChatMessageToolCallStreamDelta(index=index, id=tc.id, type="function", function=tc.function)


SCRIPT = [
    _native("WebSearch", '{"query": "cats", "limit": "2",}', "c_drift"),  # drifted name, broken JSON
    _text("Again. " + HERMES.format(name="web_search", arguments='{"query": "dogs"}')),  # a text call
    _native("image_search", '{"query": "otters"}', "c_unknown"),  # a tool never offered
    _native("web_search", '{"query": "otters"}', "c_next"),  # ... the next turn succeeds
    _native("DeleteFile", '{"path": "/"}', "c_denied"),  # denied by policy
    _text(HERMES.format(name="final_answer", arguments='{"answer": "Done."}')),
]


def _sent(model: ScriptedModel, step: int) -> str:
    return "\n".join(str(m.content) for m in model.seen[step])


def _run(*, stream: bool, **policy: Any) -> tuple[ScriptedModel, Any]:
    RAN.clear()
    model = ScriptedModel(SCRIPT)
    agent = ToolCallingAgent(
        tools=[web_search, delete_file],
        model=ToolRepairModel(model, **policy),
        max_steps=8,
        verbosity_level=0,
        stream_outputs=stream,
    )
    return model, agent.run("find things")


@pytest.mark.parametrize("stream", [False, True])
def test_an_agent_run_through_every_case(stream: bool) -> None:
    model, answer = _run(stream=stream, deny=["delete_file"])
    assert answer == "Done."
    assert RAN == [("web_search", ("cats", 2)), ("web_search", ("dogs", 3)), ("web_search", ("otters", 3))]
    assert "2 results for cats" in _sent(model, 1)
    assert "3 results for dogs" in _sent(model, 2)
    # smolagents' own error for an unknown tool reaches the model; the next step succeeds.
    assert "image_search" in _sent(model, 3)
    assert "3 results for otters" in _sent(model, 4)
    assert "Tool 'delete_file' is not allowed." in _sent(model, 5)


@pytest.mark.parametrize(
    "policy", [{"allow": ["web_search", "final_answer"]}, {"before_call": lambda call: call.name != "delete_file"}]
)
def test_a_denied_text_call_never_runs(policy: dict) -> None:
    RAN.clear()
    model = ScriptedModel(
        [
            _text(
                HERMES.format(name="delete_file", arguments='{"path": "/"}')
                + HERMES.format(name="web_search", arguments='{"query": "x"}')
            ),
            _native("final_answer", {"answer": "OK."}, "c_end"),
        ]
    )
    agent = ToolCallingAgent(
        tools=[web_search, delete_file], model=ToolRepairModel(model, **policy), max_steps=4, verbosity_level=0
    )
    assert agent.run("x") == "OK."
    assert RAN == []  # one refused call: none of the reply runs
    sent = _sent(model, 1)
    assert "Tool 'delete_file' " in sent and "No call of this reply was run" in sent


def test_streamed_text_never_shows_the_markup() -> None:
    model = ScriptedModel([_text("Let me look. " + HERMES.format(name="WebSearch", arguments='{"query": "x"}'))])
    deltas = list(ToolRepairModel(model, tr.ToolRegistry([web_search])).generate_stream([], tools_to_call_from=[]))
    shown = "".join(d.content or "" for d in deltas)
    assert shown == "Let me look. " and "<tool_call>" not in shown
    [call] = [tc for d in deltas for tc in d.tool_calls or []]
    assert call.function.name == "web_search" and call.id.startswith("call_")


def test_text_without_a_usable_call_gets_a_corrective_error() -> None:
    wrapper = ToolRepairModel(ScriptedModel([]), tr.ToolRegistry([web_search]))
    with pytest.raises(
        ValueError, match=r"No tool call was found in the reply: call one of the tools \['web_search'\]"
    ):
        wrapper.parse_tool_calls(_text("I think I am done."))
    with pytest.raises(ValueError, match=r"Tool 'image_search' not found. Did you mean 'web_search'\?"):
        wrapper.parse_tool_calls(_text(HERMES.format(name="image_search", arguments='{"query": "x"}')))
    # A call inside a code fence stays text, though smolagents' own parser would run it.
    with pytest.raises(ValueError, match="No tool call was found"):
        wrapper.parse_tool_calls(_text('```json\n{"name": "web_search", "arguments": {"query": "x"}}\n```'))
