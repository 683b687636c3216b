"""Anthropic: repair Messages API ``tool_use`` blocks; format ``tool_result`` blocks.

Works on ``anthropic.types.Message`` objects and plain dicts alike, reading them through
``model_dump``, so nothing here imports ``anthropic``; the ``anthropic`` extra installs the SDK.

>>> import toolrepair as tr
>>> def web_search(query: str) -> str: ...
>>> msg = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
...        "name": "WebSearch", "input": {"query": "cats"}}]}
>>> repair_message(msg, tr.ToolRegistry([web_search]))["content"][0]["name"]
'web_search'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall, ToolOutcome
from ._common import as_dict, rejection_errors, stable_id

__all__ = ["repair_message", "tool_calls", "tool_result_block"]

ERRORS_KEY = "toolrepair_errors"


def repair_message(message: Any, registry: ToolRegistry) -> dict[str, Any]:
    """An assistant message, as a dict, with its ``tool_use`` blocks repaired.

    ``tool_use`` blocks get the offered name and repaired ``input``; ids are kept. With no
    ``tool_use`` block, calls written as text in ``text`` blocks are salvaged into ``tool_use``
    blocks placed after the text they came from, with ``toolu_…`` ids derived from that text
    (the same message always gives the same ids); the text loses them, an emptied text block
    is dropped, and ``stop_reason`` ``end_turn`` becomes ``tool_use``. Calls that cannot be
    repaired are left out and listed under ``"toolrepair_errors"`` (``tool_use_id``, ``name``,
    ``message``): remove that key before sending the message back.
    """
    out = as_dict(message)
    blocks: list[dict[str, Any]] = list(out.get("content") or [])
    errors: list[dict[str, Any]] = []
    new_blocks: list[dict[str, Any]] = []
    if any(block.get("type") == "tool_use" for block in blocks):
        for block in blocks:
            if block.get("type") != "tool_use":
                new_blocks.append(block)
                continue
            repair = registry.repair({"name": block.get("name"), "arguments": block.get("input"),
                                      "id": block.get("id")})
            if repair.call is None:
                errors.append({"tool_use_id": block.get("id"), "name": block.get("name"),
                               "message": str(repair.error)})
                continue
            new_blocks.append({**block, "name": repair.call.name, "input": repair.call.arguments})
    else:
        salvaged_any = False
        for block in blocks:
            text = block.get("text") if block.get("type") == "text" else None
            if not isinstance(text, str) or not text:
                new_blocks.append(block)
                continue
            result = registry.salvage(text)
            errors.extend(rejection_errors(result, registry, "tool_use_id"))
            if not result.calls:
                new_blocks.append(block)
                continue
            rest = result.content.strip()
            if rest:  # the API refuses empty text blocks
                new_blocks.append({**block, "text": rest})
            for i, call in enumerate(result.calls):
                ident = stable_id("toolu_", text, i)
                repair = registry.repair(ToolCall(call.name, call.arguments, ident, call.dialect, call.span))
                if repair.call is None:
                    errors.append({"tool_use_id": ident, "name": call.name, "message": str(repair.error)})
                    continue
                salvaged_any = True
                new_blocks.append({"type": "tool_use", "id": ident, "name": repair.call.name,
                                   "input": repair.call.arguments})
        if salvaged_any and out.get("stop_reason") == "end_turn":
            out["stop_reason"] = "tool_use"  # loops that branch on stop_reason then run the calls
    if "content" in out:
        out["content"] = new_blocks
    if errors:
        out[ERRORS_KEY] = errors
    return out


def tool_result_block(outcome: ToolOutcome) -> dict[str, Any]:
    """The ``tool_result`` content block answering one call; ``is_error`` is set on failures."""
    ident = outcome.call.id
    if not ident:
        raise ValueError(
            f"the outcome of {outcome.call.name!r} has no tool_use id to answer: run the "
            "tool_use block (or its ToolCall) from the repaired message, which carries it"
        )
    return {"type": "tool_result", "tool_use_id": ident, "content": outcome.content, "is_error": not outcome.ok}


def tool_calls(repaired: Mapping[str, Any]) -> list[ToolCall]:
    """The calls to run from ``repair_message``'s result, in order, ids kept."""
    return [ToolCall(block["name"], dict(block.get("input") or {}), block.get("id"))
            for block in repaired.get("content") or [] if block.get("type") == "tool_use"]
