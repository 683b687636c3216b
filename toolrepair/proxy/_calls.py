"""One call of a reply, repaired against the request's tools: the rule both reply shapes share.

Non-streaming and streaming replies go through these two functions alone, so a call comes out
the same whichever way the upstream sent it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall
from ..integrations._common import stable_id
from ._report import Note, Tally

__all__ = ["finish_reason", "repair_native", "repair_salvaged", "salvaged_id"]


def _dumps(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def repair_native(tool_call: dict[str, Any], registry: ToolRegistry, tally: Tally) -> dict[str, Any] | None:
    """A native ``tool_calls`` entry with the offered name and repaired arguments (a JSON
    string); None when it cannot be repaired (a tool not offered, arguments cut short or
    invalid): the refusal is noted in ``tally``, and the call is never delivered, so no client
    runs it (a stream merge would run a cut-off call with ``{}``)."""
    fn = tool_call.get("function")
    if tool_call.get("type", "function") != "function" or not isinstance(fn, dict):
        return tool_call  # custom (free-form) tools have no schema to repair against
    repair = registry.repair({"id": tool_call.get("id"), "function": fn})
    if repair.call is None:
        ident = tool_call.get("id")
        name = fn.get("name")
        tally.refuse(Note(ident if isinstance(ident, str) else None, name if isinstance(name, str) else None,
                          str(repair.error)))
        return None
    if not repair.events:
        return tool_call  # nothing changed: the bytes the model wrote stay
    tally.repaired += 1
    return {**tool_call, "function": {**fn, "name": repair.call.name, "arguments": _dumps(repair.call.arguments)}}


def salvaged_id(call: ToolCall, index: int) -> str:
    """``call_…`` from the call itself and its place in the reply: the streamed and the whole
    reply give the same id, and a replayed reply the same ids again."""
    return stable_id("call_", f"{call.name}\x00{_dumps(call.arguments)}\x00{call.span}", index)


def repair_salvaged(call: ToolCall, index: int, registry: ToolRegistry, tally: Tally) -> dict[str, Any] | None:
    """A call salvaged from text, repaired like a native one, as an OpenAI ``tool_calls`` entry;
    None when the schema refuses it (noted in ``tally``, never delivered: as a native one)."""
    ident = salvaged_id(call, index)
    tally.salvaged += 1
    repair = registry.repair(ToolCall(call.name, call.arguments, ident, call.dialect, call.span))
    if repair.call is None:
        tally.refuse(Note(ident, call.name, str(repair.error)))
        return None
    if repair.events:
        tally.repaired += 1
    written = repair.call
    return {"id": ident, "type": "function", "function": {"name": written.name, "arguments": _dumps(written.arguments)}}


def finish_reason(upstream: Any, calls: int) -> Any:
    """The reply's ``finish_reason`` once repaired: ``"length"`` stays (the reply was cut by the
    token limit: never ``"tool_calls"`` for a call it cut); else ``"tool_calls"`` when the reply
    carries a call; ``"stop"`` for an upstream ``"tool_calls"`` whose calls were all refused."""
    if upstream == "length":
        return upstream
    if calls:
        return "tool_calls"
    return "stop" if upstream == "tool_calls" else upstream
