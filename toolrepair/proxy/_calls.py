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


def repair_native(tool_call: dict[str, Any], registry: ToolRegistry, tally: Tally) -> dict[str, Any]:
    """A native ``tool_calls`` entry with the offered name and repaired arguments (a JSON
    string), or unchanged when it cannot be repaired (the refusal noted in ``tally``)."""
    fn = tool_call.get("function")
    if tool_call.get("type", "function") != "function" or not isinstance(fn, dict):
        return tool_call  # custom (free-form) tools have no schema to repair against
    repair = registry.repair({"id": tool_call.get("id"), "function": fn})
    if repair.call is None:
        ident = tool_call.get("id")
        name = fn.get("name")
        tally.refuse(Note(ident if isinstance(ident, str) else None, name if isinstance(name, str) else None,
                          str(repair.error)))
        return tool_call
    if not repair.events:
        return tool_call  # nothing changed: the bytes the model wrote stay
    tally.repaired += 1
    return {**tool_call, "function": {**fn, "name": repair.call.name, "arguments": _dumps(repair.call.arguments)}}


def salvaged_id(call: ToolCall, index: int) -> str:
    """``call_…`` from the call itself and its place in the reply: the streamed and the whole
    reply give the same id, and a replayed reply the same ids again."""
    return stable_id("call_", f"{call.name}\x00{_dumps(call.arguments)}\x00{call.span}", index)


def repair_salvaged(call: ToolCall, index: int, registry: ToolRegistry, tally: Tally) -> dict[str, Any]:
    """A call salvaged from text, repaired like a native one, as an OpenAI ``tool_calls`` entry.

    One the schema refuses keeps the name and arguments the model wrote (the refusal noted)."""
    ident = salvaged_id(call, index)
    tally.salvaged += 1
    repair = registry.repair(ToolCall(call.name, call.arguments, ident, call.dialect, call.span))
    if repair.call is None:
        tally.refuse(Note(ident, call.name, str(repair.error)))
        written = call
    else:
        if repair.events:
            tally.repaired += 1
        written = repair.call
    return {"id": ident, "type": "function", "function": {"name": written.name, "arguments": _dumps(written.arguments)}}


def finish_reason(upstream: Any, calls: int) -> Any:
    """``"tool_calls"`` once the reply carries a call, else what the upstream said."""
    return "tool_calls" if calls else upstream
