"""One call of a reply, repaired against the request's tools: the rule both reply shapes share.

Non-streaming and streaming replies go through these two functions alone, so a call comes out
the same whichever way the upstream sent it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._registry import ToolRegistry
from .._types import Repair, ToolCall
from ..integrations._common import stable_id
from ._report import Note, Tally

__all__ = ["finish_reason", "repair_call", "repair_native", "repair_salvaged", "salvaged_call", "salvaged_id"]


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
    repair = repair_call({"id": tool_call.get("id"), "function": fn}, registry, tally)
    if repair.call is None:
        return None
    if not repair.events:
        return tool_call  # nothing changed: the bytes the model wrote stay
    return {**tool_call, "function": {**fn, "name": repair.call.name, "arguments": _dumps(repair.call.arguments)}}


def repair_call(call: Mapping[str, Any], registry: ToolRegistry, tally: Tally) -> Repair:
    """One native call of any reply shape (read by the one reader of call shapes), repaired and
    counted in ``tally``: every route's native calls go through here. ``call`` None: refused
    (the refusal noted; never delivered, on any route); no ``events``: nothing needed changing,
    so the bytes the model wrote stay."""
    repair = registry.repair(call)
    if repair.call is None:
        ident, name = call.get("id"), _name_of(call)
        tally.refuse(
            Note(
                ident if isinstance(ident, str) else None,
                name,
                str(repair.error),
                getattr(repair.error, "kind", "error"),
            )
        )
        tally.outcomes["native", "refused"] += 1
    elif not repair.events:
        tally.outcomes["native", "passed"] += 1
    else:
        tally.repaired += 1
        tally.outcomes["native", "repaired"] += 1
        tally.repair_kinds.update(event.kind for event in repair.events)
    return repair


def _name_of(call: Mapping[str, Any]) -> str | None:
    fn = call.get("function")
    name = fn.get("name") if isinstance(fn, Mapping) else call.get("name")
    return name if isinstance(name, str) else None


def salvaged_id(call: ToolCall, index: int, prefix: str = "call_") -> str:
    """``call_…`` (or ``prefix…``) from the call itself and its place in the reply: the streamed
    and the whole reply give the same id, and a replayed reply the same ids again."""
    return stable_id(prefix, f"{call.name}\x00{_dumps(call.arguments)}\x00{call.span}", index)


def salvaged_call(
    call: ToolCall, index: int, registry: ToolRegistry, tally: Tally, prefix: str = "call_"
) -> ToolCall | None:
    """A call salvaged from text, repaired like a native one, with its stable id: every route's
    salvaged calls go through here.

    None when the schema or policy refuses it (the refusal noted in ``tally``): a refused call
    is never delivered as a call, on any route, as a refused native call is not."""
    ident = salvaged_id(call, index, prefix)
    tally.salvaged += 1
    tally.dialects[call.dialect] += 1
    repair = registry.repair(ToolCall(call.name, call.arguments, ident, call.dialect, call.span))
    if repair.call is None:
        tally.refuse(Note(ident, call.name, str(repair.error), getattr(repair.error, "kind", "error")))
        tally.outcomes["salvaged", "refused"] += 1
        return None
    if repair.events:
        tally.repaired += 1
        tally.outcomes["salvaged", "repaired"] += 1
        tally.repair_kinds.update(event.kind for event in repair.events)
    else:
        tally.outcomes["salvaged", "passed"] += 1
    return replace(repair.call, id=ident)


def repair_salvaged(call: ToolCall, index: int, registry: ToolRegistry, tally: Tally) -> dict[str, Any] | None:
    """``salvaged_call`` as an OpenAI ``tool_calls`` entry; None when refused (never delivered)."""
    written = salvaged_call(call, index, registry, tally)
    if written is None:
        return None
    return {
        "id": written.id,
        "type": "function",
        "function": {"name": written.name, "arguments": _dumps(written.arguments)},
    }


def finish_reason(upstream: Any, calls: int) -> Any:
    """The reply's ``finish_reason`` once repaired: ``"length"`` stays (the reply was cut by the
    token limit: never ``"tool_calls"`` for a call it cut); else ``"tool_calls"`` when the reply
    carries a call; ``"stop"`` for an upstream ``"tool_calls"`` whose calls were all refused."""
    if upstream == "length":
        return upstream
    if calls:
        return "tool_calls"
    return "stop" if upstream == "tool_calls" else upstream
