"""Anthropic Messages (``POST /v1/messages``), repaired whole and streamed: pure, no I/O.

The reply's content blocks, in order:

* ``tool_use``: the name repaired to an offered one, ``input`` decoded and coerced to the tool's
  ``input_schema`` (``repair_call``, the rule every route shares); a refused call is left as
  written and noted.
* ``text``: until the first native ``tool_use``, calls written as text are salvaged
  (``TextCalls``) into ``tool_use`` blocks with ``toolu_`` ids, placed where they stood in the
  text: ``text, tool_use, text``. An empty text block is dropped (the API refuses one in a
  history). Text after a native call passes as it is.
  Reasoning read from a text block (``<think>`` and the other conventions) goes into a
  ``thinking`` block of its own where it stood (``--reasoning separate``: ``thinking_delta``s,
  an empty ``signature``, as no model signed it); ``inline`` leaves it in the text as written,
  ``drop`` drops it (``_reasoning``).
* everything else (``thinking``, ``redacted_thinking``, server tool blocks): passed through,
  never salvaged from.

``stop_reason`` is ``tool_use`` once a call is sent. A whole reply is repaired by running its
blocks through the same ``MessagesStream`` a stream goes through (each block as one start,
one delta and one stop): one implementation, so what a client accumulates from the stream
equals the whole reply. Cost: O(reply + calls), the salvage engine's bound.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .._registry import ToolRegistry
from .._salvage import ModelProfile
from .._salvage._base import ReasoningBuilder
from .._types import ToolSpec
from ._calls import repair_call
from ._config import Reasoning
from ._report import Note, Tally
from ._reprompt import answers
from ._textcalls import Piece, TextCalls, Thought
from ._tools import EMPTY_SCHEMA, Choice, RequestTools, bad_request, offered_tools

__all__ = ["MessagesStream", "corrective_messages", "message_tools", "repair_message_body"]

PREFIX = "toolu_"


# -- the request's tools ---------------------------------------------------------------------
def _spec(tool: Any, i: int) -> ToolSpec | None:
    if not isinstance(tool, Mapping):
        raise bad_request(f"tools[{i}] must be an object", f"tools[{i}]")
    if tool.get("type", "custom") != "custom":
        return None  # a server tool (web_search_…, bash_…): the API runs it, there is no schema to repair to
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise bad_request(f"tools[{i}].name must be a non-empty string", f"tools[{i}].name")
    schema = tool.get("input_schema", EMPTY_SCHEMA)
    if not isinstance(schema, Mapping):
        raise bad_request(f"tools[{i}].input_schema must be a JSON Schema object", f"tools[{i}].input_schema")
    description = tool.get("description")
    return ToolSpec(name, schema, description if isinstance(description, str) else "")


_CHOICES: dict[Any, Choice] = {"auto": "auto", "any": "required", "tool": "named", "none": "none"}


def message_tools(
    body: Mapping[str, Any], profile: Literal["local", "hosted"], model: ModelProfile | None = None
) -> RequestTools:
    """The Messages request's ``tools`` and ``tool_choice`` (``auto``, ``any``, ``tool``,
    ``none``), read like a chat request's. O(total size of the schemas)."""
    tools = body.get("tools")
    if tools is None:
        return RequestTools(None)
    if not isinstance(tools, list):
        raise bad_request("tools must be an array", "tools")
    raw = body.get("tool_choice") or {"type": "auto"}
    choice = _CHOICES.get(raw.get("type")) if isinstance(raw, Mapping) else None
    named = raw.get("name") if isinstance(raw, Mapping) else None
    if choice is None or (choice == "named" and not isinstance(named, str)):
        raise bad_request(
            "tool_choice must be {'type': 'auto' | 'any' | 'none'} or {'type': 'tool', 'name': ...}", "tool_choice"
        )
    specs = [spec for i, tool in enumerate(tools) if (spec := _spec(tool, i)) is not None]
    return offered_tools(specs, choice, named if choice == "named" else None, profile, model)


# -- the reply -------------------------------------------------------------------------------
@dataclass(slots=True)
class _Text:
    text: TextCalls
    start: dict[str, Any]  # the upstream's block start, its text emptied
    out: int | None = None  # the output index of the text block open now
    thought: int | None = None  # the output index of the thinking block read from it, open now


@dataclass(slots=True)
class _Tool:
    start: dict[str, Any]
    parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Other:
    out: int


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class MessagesStream:
    """Repairs one streamed Messages reply: ``feed`` each event's data (parsed), send what it
    returns (each a data object whose ``type`` is its event name), ``close`` at the end.

    Text blocks are opened when their first visible text is released, so no empty one is
    sent; a native ``tool_use`` is held until its block stops, then sent repaired as one
    start, one ``input_json_delta`` and one stop. ``blocks`` is the content sent, whole.

    >>> import toolrepair as tr
    >>> s = MessagesStream(tr.ToolRegistry([tr.ToolSpec("f")]), Tally())
    >>> [e["type"] for e in s.feed({"type": "content_block_start", "index": 0,
    ...                             "content_block": {"type": "text", "text": "Hi"}})]
    []
    >>> [e["type"] for e in s.close()]
    ['content_block_start', 'content_block_delta', 'content_block_stop']

    The text waits while a later lone ``</think>`` could still make it reasoning (the
    salvager's rule without a model profile); ``close`` releases it in its own block.
    """

    __slots__ = ("_blocks", "_native", "_reasoning", "_registry", "blocks", "calls", "finished", "tally")

    def __init__(self, registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate") -> None:
        self._registry = registry
        self.tally = tally
        self._reasoning: Reasoning = reasoning
        self._blocks: dict[Any, _Text | _Tool | _Other] = {}  # by the upstream's index
        self._native = False  # a native tool_use has started: no more salvage
        self.blocks: list[dict[str, Any]] = []  # what was sent, whole, by output index
        self.calls = 0
        self.finished = False

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind == "content_block_start":
            return self._start(event)
        state = self._blocks.get(event.get("index"))
        if kind == "content_block_delta" and state is not None:
            return self._delta(state, event)
        if kind == "content_block_stop" and state is not None:
            del self._blocks[event.get("index")]
            return self._stop(state, event)
        if kind == "message_delta":
            out = self.close()
            delta = event.get("delta")
            if isinstance(delta, dict) and self.calls:
                event = {**event, "delta": {**delta, "stop_reason": "tool_use"}}
            return [*out, event]
        if kind == "message_stop":
            self.finished = True
        return [event]  # message_start, ping, error, and what this proxy does not know

    def close(self) -> list[dict[str, Any]]:
        """What is still held (blocks the upstream never stopped), as stopped blocks."""
        out: list[dict[str, Any]] = []
        for state in list(self._blocks.values()):
            out.extend(self._stop(state, {"type": "content_block_stop"}))
        self._blocks.clear()
        return out

    # -- blocks ------------------------------------------------------------------------------
    def _start(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        block = event.get("content_block")
        index = event.get("index")
        if not isinstance(block, dict):
            return [event]
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text", ""), str):
            text = TextCalls(self._registry, self.tally, PREFIX, salvage=not self._native, reasoning=self._reasoning)
            state = self._blocks[index] = _Text(text, {**block, "text": ""})
            return self._pieces(state, text.feed(block.get("text", "")))
        if kind == "tool_use":
            self._native = True
            self._blocks[index] = _Tool(block)
            return []
        out = len(self.blocks)
        self._blocks[index] = _Other(out)
        self.blocks.append(block)
        return [{**event, "index": out}]

    def _delta(self, state: _Text | _Tool | _Other, event: dict[str, Any]) -> list[dict[str, Any]]:
        delta = event.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        if isinstance(state, _Other):
            return [{**event, "index": state.out}]
        if isinstance(state, _Tool):
            if delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                state.parts.append(delta["partial_json"])
            return []
        if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            return self._pieces(state, state.text.feed(delta["text"]))
        # citations_delta and the like belong to the text block open now
        out = self._open(state, [])
        return [*out, {**event, "index": state.out}]

    def _stop(self, state: _Text | _Tool | _Other, event: dict[str, Any]) -> list[dict[str, Any]]:
        if isinstance(state, _Other):
            return [{**event, "index": state.out}]
        if isinstance(state, _Tool):
            return self._tool(state)
        out = self._pieces(state, state.text.close())
        out.extend(self._close_text(state))
        return out

    def _tool(self, state: _Tool) -> list[dict[str, Any]]:
        start = state.start
        given = start.get("input")
        # The streamed JSON text; for a whole block, its input (a string some servers send as written).
        written = "".join(state.parts) if state.parts else given if isinstance(given, str) else _dumps(given or {})
        repair = repair_call(
            {"id": start.get("id"), "name": start.get("name"), "arguments": written}, self._registry, self.tally
        )
        fixed = repair.call
        if fixed is None:  # refused (noted): never delivered as a call
            return []
        if not repair.events:  # unchanged: as the model wrote it
            return self._call({**start, "input": {}}, written, _loaded(written, start.get("input")))
        return self._call({**start, "name": fixed.name, "input": {}}, _dumps(fixed.arguments), fixed.arguments)

    def _call(self, start: dict[str, Any], partial: str, whole: Any) -> list[dict[str, Any]]:
        out = len(self.blocks)
        self.blocks.append({**start, "input": whole})
        self.calls += 1
        return [
            {"type": "content_block_start", "index": out, "content_block": start},
            {
                "type": "content_block_delta",
                "index": out,
                "delta": {"type": "input_json_delta", "partial_json": partial},
            },
            {"type": "content_block_stop", "index": out},
        ]

    def _pieces(self, state: _Text, pieces: list[Piece]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for piece in pieces:
            if isinstance(piece, str):
                out = self._open(state, out)
                self.blocks[state.out]["text"] += piece  # type: ignore[index]
                out.append(
                    {"type": "content_block_delta", "index": state.out, "delta": {"type": "text_delta", "text": piece}}
                )
            elif isinstance(piece, Thought):
                out.extend(self._think(state, piece.text))
            else:
                out.extend(self._close_text(state))
                out.extend(
                    self._call(
                        {"type": "tool_use", "id": piece.id, "name": piece.name, "input": {}},
                        _dumps(piece.arguments),
                        piece.arguments,
                    )
                )
        return out

    def _think(self, state: _Text, text: str) -> list[dict[str, Any]]:
        """Reasoning read from the text: into the thinking block open now, or a new one."""
        out = self._close_text(state)
        if state.thought is None:
            # The blank line that joins reasoning regions in one string: a block of its own needs none.
            text = text.removeprefix(ReasoningBuilder.SEPARATOR)
            state.thought = len(self.blocks)
            self.blocks.append({"type": "thinking", "thinking": "", "signature": ""})
            out.append(
                {
                    "type": "content_block_start",
                    "index": state.thought,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
        self.blocks[state.thought]["thinking"] += text
        out.append(
            {
                "type": "content_block_delta",
                "index": state.thought,
                "delta": {"type": "thinking_delta", "thinking": text},
            }
        )
        return out

    def _open(self, state: _Text, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out.extend(self._close_thought(state))
        if state.out is None:
            state.out = len(self.blocks)
            self.blocks.append(dict(state.start))
            out.append({"type": "content_block_start", "index": state.out, "content_block": dict(state.start)})
        return out

    def _close_text(self, state: _Text) -> list[dict[str, Any]]:
        """The block open now, text or thinking (one at most), stopped."""
        if state.out is None:
            return self._close_thought(state)
        out, state.out = state.out, None
        return [{"type": "content_block_stop", "index": out}]

    def _close_thought(self, state: _Text) -> list[dict[str, Any]]:
        if state.thought is None:
            return []
        out, state.thought = state.thought, None
        return [{"type": "content_block_stop", "index": out}]


def _loaded(written: str, fallback: Any) -> Any:
    try:
        return json.loads(written)
    except (ValueError, RecursionError):
        return fallback


def _as_events(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A whole reply's blocks as the events a stream would carry: one start, delta, stop each."""
    events: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            events.append({"type": "content_block_start", "index": i, "content_block": {**block, "text": ""}})
            events.append(
                {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}
            )
        else:  # a tool_use carries its input in the start, as some servers stream it
            events.append({"type": "content_block_start", "index": i, "content_block": block})
        events.append({"type": "content_block_stop", "index": i})
    return events


def repair_message_body(
    body: dict[str, Any], registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate"
) -> dict[str, Any]:
    """A whole ``message`` reply with its content repaired (see the module docstring); a body
    that is not a message, or whose content is not a list of blocks, unchanged."""
    content = body.get("content")
    if body.get("type", "message") != "message" or not isinstance(content, list):
        return body
    if not all(isinstance(block, dict) for block in content):
        return body
    stream = MessagesStream(registry, tally, reasoning)
    for event in _as_events(content):
        stream.feed(event)
    stream.close()
    stop = "tool_use" if stream.calls else body.get("stop_reason")
    return {**body, "content": stream.blocks, "stop_reason": stop}


# -- asking again ----------------------------------------------------------------------------
def corrective_messages(
    body: dict[str, Any], reply: dict[str, Any], notes: list[Note], missing_call: str | None
) -> dict[str, Any]:
    """The request again, its ``messages`` followed by the reply as the assistant turn and a
    user turn answering each ``tool_use`` with a ``tool_result`` (``is_error`` with the
    corrective text for a refused call), and the loose corrections as text."""
    content = [block for block in reply.get("content") or () if isinstance(block, dict)]
    # A refused call is never delivered, so the reply lacks it; the model's own turn had it:
    # it goes back as the model wrote it (name and id), answered with its corrective text.
    present = {block.get("id") for block in content if block.get("type") == "tool_use"}
    content.extend(
        {"type": "tool_use", "id": note.tool_call_id, "name": note.name or "", "input": {}}
        for note in notes
        if note.tool_call_id is not None and note.tool_call_id not in present
    )
    ids = [block.get("id") for block in content if block.get("type") == "tool_use"]
    answered, loose = answers(ids, notes, missing_call)
    user: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": ident, "content": text, "is_error": True} for ident, text in answered
    ]
    user.extend({"type": "text", "text": text} for text in loose)
    messages = body.get("messages")
    history = list(messages) if isinstance(messages, list) else []
    turn = [
        {"role": "assistant", "content": content or [{"type": "text", "text": "(no reply)"}]},
        {"role": "user", "content": user or [{"type": "text", "text": "Try again."}]},
    ]
    return {**body, "messages": history + turn}
