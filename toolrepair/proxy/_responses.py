"""OpenAI Responses (``POST /v1/responses``), repaired whole and streamed: pure, no I/O.

The reply's ``output`` items, in order:

* ``function_call``: the name repaired to an offered one, ``arguments`` decoded, coerced to the
  tool's ``parameters`` and written back as a JSON string (``repair_call``, the rule every
  route shares); a refused call is left as written and noted. ``call_id`` and ``id`` are kept.
* ``message``: until the first native ``function_call``, calls written as text in its
  ``output_text`` parts are salvaged (``TextCalls``) into ``function_call`` items with ``call_``
  ids, placed where they stood: ``message, function_call, message`` (the message after a call
  gets the id ``<id>_<n>``). An emptied part, and a message left with no part, are dropped.
  Reasoning read from an ``output_text`` part (``<think>`` and the rest) is never a source of
  calls; under ``--reasoning separate`` it becomes a ``reasoning`` item where it stood (its
  text in one ``reasoning_text`` content part, streamed as ``response.reasoning_text.delta``;
  the message after it gets the next ``<id>_<n>``), ``inline`` leaves it in the text as written,
  ``drop`` drops it.
* everything else (``reasoning``, hosted tools' items): passed through, never salvaged from.

A whole response is repaired by running its items through the same ``ResponsesStream`` a
stream goes through (each item as its added, delta and done events): one implementation, so
the ``response.completed`` a client receives, the items it accumulates and the whole reply
agree. Cost: O(reply + calls), the salvage engine's bound.
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

__all__ = ["ResponsesStream", "corrective_input", "repair_response_body", "response_tools"]

PREFIX = "call_"
_LIFECYCLE_END = frozenset({"response.completed", "response.incomplete", "response.failed"})


# -- the request's tools ---------------------------------------------------------------------
def _spec(tool: Any, i: int) -> ToolSpec | None:
    if not isinstance(tool, Mapping):
        raise bad_request(f"tools[{i}] must be an object", f"tools[{i}]")
    if tool.get("type") != "function":
        return None  # hosted tools (web_search, file_search, mcp, …) and custom tools: no schema
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise bad_request(f"tools[{i}].name must be a non-empty string", f"tools[{i}].name")
    schema = tool.get("parameters") or EMPTY_SCHEMA
    if not isinstance(schema, Mapping):
        raise bad_request(f"tools[{i}].parameters must be a JSON Schema object", f"tools[{i}].parameters")
    description = tool.get("description")
    return ToolSpec(name, schema, description if isinstance(description, str) else "")


def response_tools(
    body: Mapping[str, Any], profile: Literal["local", "hosted"], model: ModelProfile | None = None
) -> RequestTools:
    """The Responses request's function ``tools`` and ``tool_choice``. A ``tool_choice`` that
    forces a hosted tool (or ``allowed_tools``) turns repair off: the proxy cannot tell which
    function calls it allows, so it repairs nothing rather than guess. O(size of the schemas)."""
    tools = body.get("tools")
    if tools is None:
        return RequestTools(None)
    if not isinstance(tools, list):
        raise bad_request("tools must be an array", "tools")
    raw = body.get("tool_choice", "auto")
    choice: Choice
    named: str | None = None
    if raw in ("auto", "none", "required", None):
        choice = raw or "auto"
    elif isinstance(raw, Mapping) and raw.get("type") == "function" and isinstance(raw.get("name"), str):
        choice, named = "named", raw["name"]
    elif isinstance(raw, Mapping) and isinstance(raw.get("type"), str):
        return RequestTools(None)
    else:
        raise bad_request(
            "tool_choice must be 'auto', 'none', 'required' or {'type': 'function', 'name': ...}", "tool_choice"
        )
    specs = [spec for i, tool in enumerate(tools) if (spec := _spec(tool, i)) is not None]
    return offered_tools(specs, choice, named, profile, model)


# -- the reply -------------------------------------------------------------------------------
@dataclass(slots=True)
class _Message:
    item: dict[str, Any]  # the upstream's item as added
    segments: int = 0  # output messages made from it so far
    out: int | None = None  # the output index of the message open now
    part: int | None = None  # the content index of its output_text part open now
    text: TextCalls | None = None  # the upstream part being read
    thought: int | None = None  # the output index of the reasoning item read from it, open now
    upstream_part: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class _Call:
    item: dict[str, Any]
    parts: list[str] = field(default_factory=list)
    done: str | None = None  # the arguments as the done event gave them


@dataclass(slots=True)
class _Other:
    out: int


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class ResponsesStream:
    """Repairs one streamed Responses reply: ``feed`` each event's data (parsed), send what it
    returns (each a data object whose ``type`` is its event name), ``close`` at the end.

    Output items are renumbered as items are added and dropped; a message is added when its
    first visible text is released (no empty message or part is sent); a native
    ``function_call`` is held until its item is done, then sent repaired as its added,
    arguments delta, arguments done and done events. ``output`` is the output sent, whole; it
    replaces the ``output`` of ``response.completed`` (and ``.incomplete``, ``.failed``).
    ``sequence_number`` is renumbered in order.

    >>> import toolrepair as tr
    >>> s = ResponsesStream(tr.ToolRegistry([tr.ToolSpec("f")]), Tally())
    >>> s.feed({"type": "response.output_item.added", "output_index": 0,
    ...         "item": {"type": "message", "id": "m", "role": "assistant", "content": []}})
    []
    """

    __slots__ = ("_items", "_native", "_reasoning", "_registry", "_sequence", "calls", "finished", "output", "tally")

    def __init__(self, registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate") -> None:
        self._registry = registry
        self.tally = tally
        self._reasoning: Reasoning = reasoning
        self._items: dict[Any, _Message | _Call | _Other] = {}  # by the upstream's output_index
        self._native = False
        self._sequence = 0
        self.output: list[dict[str, Any]] = []
        self.calls = 0
        self.finished = False

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        return [self._numbered(e) for e in self._feed(event)]

    def close(self) -> list[dict[str, Any]]:
        """What is still held (items the upstream never finished), as done items."""
        return [self._numbered(e) for e in self._close()]

    def _numbered(self, event: dict[str, Any]) -> dict[str, Any]:
        if "sequence_number" in event or event.get("type", "").startswith("response."):
            event = {**event, "sequence_number": self._sequence}
            self._sequence += 1
        return event

    def _feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind in _LIFECYCLE_END:
            out = self._close()
            response = event.get("response")
            if isinstance(response, dict):
                event = {**event, "response": {**response, "output": self.output}}
            self.finished = True
            return [*out, event]
        index = event.get("output_index")
        if kind == "response.output_item.added":
            return self._added(event)
        state = self._items.get(index)
        if state is None:
            return [event]  # lifecycle events, errors, what this proxy does not know
        if isinstance(state, _Other):
            if kind == "response.output_item.done":
                del self._items[index]
                item = event.get("item")
                self.output[state.out] = item if isinstance(item, dict) else self.output[state.out]
            return [{**event, "output_index": state.out}]
        if isinstance(state, _Call):
            return self._call_event(index, state, event)
        return self._message_event(index, state, event)

    def _close(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for index, state in list(self._items.items()):
            if isinstance(state, _Message):
                out.extend(self._message_event(index, state, {"type": "response.output_item.done", "item": state.item}))
            elif isinstance(state, _Call):
                out.extend(self._call_event(index, state, {"type": "response.output_item.done", "item": state.item}))
        self._items.clear()
        return out

    def _added(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        item = event.get("item")
        index = event.get("output_index")
        if not isinstance(item, dict):
            return [event]
        if item.get("type") == "message":
            self._items[index] = _Message(item)
            return []
        if item.get("type") == "function_call":
            self._native = True
            self._items[index] = _Call(item)
            return []
        out = len(self.output)
        self._items[index] = _Other(out)
        self.output.append(item)
        return [{**event, "output_index": out}]

    # -- function calls ----------------------------------------------------------------------
    def _call_event(self, index: Any, state: _Call, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind == "response.function_call_arguments.delta" and isinstance(event.get("delta"), str):
            state.parts.append(event["delta"])
        elif kind == "response.function_call_arguments.done" and isinstance(event.get("arguments"), str):
            state.done = event["arguments"]
        elif kind == "response.output_item.done":
            del self._items[index]
            item = event.get("item")
            final = item if isinstance(item, dict) else state.item
            written = final.get("arguments")
            if not isinstance(written, str) or not written:
                written = state.done if state.done is not None else "".join(state.parts)
            repair = repair_call(
                {"id": final.get("call_id"), "name": final.get("name"), "arguments": written},
                self._registry,
                self.tally,
            )
            fixed = repair.call
            if fixed is None:  # refused (noted): never delivered as a call
                return []
            if not repair.events:
                return self._function_call({**final, "arguments": written})
            return self._function_call({**final, "name": fixed.name, "arguments": _dumps(fixed.arguments)})
        return []  # held until the call is complete

    def _function_call(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        out = len(self.output)
        done = {**item, "status": item.get("status") or "completed"}
        self.output.append(done)
        self.calls += 1
        ident = item.get("id")
        arguments = item.get("arguments", "")
        return [
            {
                "type": "response.output_item.added",
                "output_index": out,
                "item": {**item, "arguments": "", "status": "in_progress"},
            },
            {
                "type": "response.function_call_arguments.delta",
                "item_id": ident,
                "output_index": out,
                "delta": arguments,
            },
            {
                "type": "response.function_call_arguments.done",
                "item_id": ident,
                "output_index": out,
                "name": item.get("name"),
                "arguments": arguments,
            },
            {"type": "response.output_item.done", "output_index": out, "item": done},
        ]

    # -- messages ----------------------------------------------------------------------------
    def _message_event(self, index: Any, state: _Message, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind == "response.content_part.added":
            part = event.get("part")
            part = part if isinstance(part, dict) else {}
            if part.get("type") == "output_text" and isinstance(part.get("text", ""), str):
                state.upstream_part = {**part, "text": ""}
                state.text = TextCalls(
                    self._registry, self.tally, PREFIX, salvage=not self._native, reasoning=self._reasoning
                )
                return self._pieces(state, state.text.feed(part.get("text", "")))
            out = self._open_message(state, [])  # a refusal part: kept in the message open now
            message = self.output[state.out]  # type: ignore[index]
            message["content"].append(part)
            return [
                *out,
                {
                    **event,
                    "item_id": message.get("id"),
                    "output_index": state.out,
                    "content_index": len(message["content"]) - 1,
                },
            ]
        if kind == "response.output_text.delta" and state.text is not None:
            delta = event.get("delta")
            return self._pieces(state, state.text.feed(delta)) if isinstance(delta, str) else []
        if kind == "response.content_part.done" and state.text is not None:
            text, state.text = state.text, None
            return [*self._pieces(state, text.close()), *self._close_thought(state), *self._close_part(state)]
        if kind == "response.output_item.done":
            del self._items[index]
            held: list[dict[str, Any]] = []
            if state.text is not None:
                text, state.text = state.text, None
                held.extend(self._pieces(state, text.close()))
                held.extend(self._close_part(state))
            held.extend(self._close_thought(state))
            item = event.get("item")
            return [*held, *self._close_message(state, item if isinstance(item, dict) else state.item)]
        if kind in ("response.output_text.done", "response.content_part.done"):
            return []  # sent by this proxy when its own part closes
        if state.out is None or kind == "response.output_text.annotation.added":
            return []  # annotations point into text as the model wrote it: not sent
        return [{**event, "output_index": state.out}]

    def _pieces(self, state: _Message, pieces: list[Piece]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for piece in pieces:
            if isinstance(piece, Thought):
                out.extend(self._think(state, piece.text))
                continue
            out.extend(self._close_thought(state))
            if isinstance(piece, str):
                out = self._open_part(state, out)
                message = self.output[state.out]  # type: ignore[index]
                message["content"][state.part]["text"] += piece
                out.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": message.get("id"),
                        "output_index": state.out,
                        "content_index": state.part,
                        "delta": piece,
                        "logprobs": [],
                    }
                )
            else:
                out.extend(self._close_part(state))
                out.extend(self._close_message(state, {"status": "completed"}))  # the text before the call
                ident = piece.id or ""
                out.extend(
                    self._function_call(
                        {
                            "type": "function_call",
                            "id": "fc_" + ident.removeprefix(PREFIX),
                            "call_id": ident,
                            "name": piece.name,
                            "arguments": _dumps(piece.arguments),
                            "status": "completed",
                        }
                    )
                )
        return out

    def _think(self, state: _Message, text: str) -> list[dict[str, Any]]:
        """Reasoning read from the text: into the reasoning item open now, or a new one after
        the message so far (closed: what follows is a message of its own, as after a call)."""
        out = [*self._close_part(state), *self._close_message(state, {"status": "completed"})]
        if state.thought is None:
            # The blank line that joins reasoning regions in one string: an item of its own needs none.
            text = text.removeprefix(ReasoningBuilder.SEPARATOR)
            state.thought = len(self.output)
            item: dict[str, Any] = {
                "type": "reasoning",
                "id": f"rs_{state.thought}",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": ""}],
                "status": "in_progress",
            }
            self.output.append(item)
            out.append({"type": "response.output_item.added", "output_index": state.thought, "item": _copied(item)})
        open_item = self.output[state.thought]
        open_item["content"][0]["text"] += text
        out.append(
            {
                "type": "response.reasoning_text.delta",
                "item_id": open_item["id"],
                "output_index": state.thought,
                "content_index": 0,
                "delta": text,
            }
        )
        return out

    def _close_thought(self, state: _Message) -> list[dict[str, Any]]:
        if state.thought is None:
            return []
        out, state.thought = state.thought, None
        item = self.output[out]
        item["status"] = "completed"
        common = {"item_id": item["id"], "output_index": out, "content_index": 0}
        return [
            {"type": "response.reasoning_text.done", **common, "text": item["content"][0]["text"]},
            {"type": "response.output_item.done", "output_index": out, "item": _copied(item)},
        ]

    def _open_message(self, state: _Message, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if state.out is None:
            state.out = len(self.output)
            ident = state.item.get("id")
            if state.segments and isinstance(ident, str):
                ident = f"{ident}_{state.segments}"
            state.segments += 1
            message = {**state.item, "id": ident, "content": [], "status": "in_progress"}
            self.output.append(message)
            out.append({"type": "response.output_item.added", "output_index": state.out, "item": dict(message)})
        return out

    def _open_part(self, state: _Message, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = self._open_message(state, out)
        if state.part is None:
            message = self.output[state.out]  # type: ignore[index]
            message["content"].append(
                dict(state.upstream_part or {"type": "output_text", "text": "", "annotations": []})
            )
            state.part = len(message["content"]) - 1
            out.append(
                {
                    "type": "response.content_part.added",
                    "item_id": message.get("id"),
                    "output_index": state.out,
                    "content_index": state.part,
                    "part": dict(state.upstream_part),
                }
            )
        return out

    def _close_part(self, state: _Message) -> list[dict[str, Any]]:
        if state.part is None or state.out is None:
            return []
        message = self.output[state.out]
        part, state.part = message["content"][state.part], None
        common = {"item_id": message.get("id"), "output_index": state.out, "content_index": len(message["content"]) - 1}
        return [
            {"type": "response.output_text.done", **common, "text": part["text"], "logprobs": []},
            {"type": "response.content_part.done", **common, "part": dict(part)},
        ]

    def _close_message(self, state: _Message, item: dict[str, Any]) -> list[dict[str, Any]]:
        if state.out is None:
            return []
        out, state.out = state.out, None
        message = self.output[out]
        message["status"] = item.get("status") or "completed"
        return [{"type": "response.output_item.done", "output_index": out, "item": dict(message)}]


def _copied(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning item as sent now: its content parts copied (the item grows after)."""
    return {**item, "content": [dict(part) for part in item["content"]]}


def _as_events(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A whole response's items as the events a stream would carry."""
    events: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if item.get("type") == "message" and isinstance(item.get("content"), list):
            events.append({"type": "response.output_item.added", "output_index": i, "item": {**item, "content": []}})
            for part in item["content"]:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(text, str):
                    events.append(
                        {"type": "response.content_part.added", "output_index": i, "part": {**part, "text": ""}}
                    )
                    events.append({"type": "response.output_text.delta", "output_index": i, "delta": text})
                    events.append({"type": "response.content_part.done", "output_index": i})
                else:
                    events.append({"type": "response.content_part.added", "output_index": i, "part": part})
        else:
            events.append({"type": "response.output_item.added", "output_index": i, "item": item})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    return events


def repair_response_body(
    body: dict[str, Any], registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate"
) -> dict[str, Any]:
    """A whole ``response`` with its output repaired (see the module docstring); a body that is
    not a response, or whose output is not a list of items, unchanged."""
    output = body.get("output")
    if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
        return body
    stream = ResponsesStream(registry, tally, reasoning)
    for event in _as_events(output):
        stream.feed(event)
    stream.close()
    return {**body, "output": stream.output}


# -- asking again ----------------------------------------------------------------------------
def corrective_input(
    body: dict[str, Any], reply: dict[str, Any], notes: list[Note], missing_call: str | None
) -> dict[str, Any]:
    """The request again, its ``input`` followed by the reply's output items and a
    ``function_call_output`` answering each call (the corrective text for a refused one),
    then the loose corrections as a user message."""
    items = [item for item in reply.get("output") or () if isinstance(item, dict)]
    calls = [item for item in items if item.get("type") == "function_call"]
    answered, loose = answers([item.get("call_id") for item in calls], notes, missing_call)
    given = body.get("input")
    history: list[Any] = (
        [{"role": "user", "content": given}]
        if isinstance(given, str)
        else list(given)
        if isinstance(given, list)
        else []
    )
    turn: list[dict[str, Any]] = [{k: v for k, v in item.items() if k != "status"} for item in items]
    turn.extend({"type": "function_call_output", "call_id": ident, "output": text} for ident, text in answered)
    if loose:
        turn.append({"role": "user", "content": "\n".join(loose)})
    return {**body, "input": history + turn}
