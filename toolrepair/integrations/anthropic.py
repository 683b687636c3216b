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
from ._common import Vetted, as_dict, vet, vet_text

__all__ = ["repair_message", "tool_calls", "tool_result_block"]

ERRORS_KEY = "toolrepair_errors"


def repair_message(message: Any, registry: ToolRegistry) -> dict[str, Any]:
    """An assistant message, as a dict, with its ``tool_use`` blocks repaired.

    ``tool_use`` blocks get the offered name and repaired ``input``; ids are kept. With no
    ``tool_use`` block, calls written as text (in ``text`` blocks, or in ``content`` given as a
    string) are salvaged into ``tool_use`` blocks placed after the text they came from, with
    ``toolu_…`` ids derived from that text (the same message always gives the same ids); the
    text loses them, an emptied text block is dropped, and ``stop_reason`` ``end_turn`` becomes
    ``tool_use``. A call that cannot be repaired, or that the registry's policy refuses, stays
    as the model wrote it and is listed under ``"toolrepair_errors"`` (``tool_use_id``,
    ``name``, ``message`` and ``tool_result``, the block that answers it): remove that key
    before sending the message back, and send those blocks with the results of
    ``tool_calls(repaired)``, which leaves the refused calls out.
    """
    out = as_dict(message)
    content = out.get("content")
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    errors: list[dict[str, Any]] = []
    salvaged_any = False
    if any(block.get("type") == "tool_use" for block in blocks):
        new_blocks = [_repaired_block(block, registry, errors) for block in blocks]
    else:
        new_blocks = []
        for block in blocks:
            salvaged = _maybe_salvaged_blocks(block, registry, errors)
            salvaged_any = salvaged_any or salvaged is not None
            new_blocks.extend([block] if salvaged is None else salvaged)
        if salvaged_any and out.get("stop_reason") == "end_turn":
            out["stop_reason"] = "tool_use"  # loops that branch on stop_reason then run the calls
    if isinstance(content, list) or salvaged_any:
        out["content"] = new_blocks
    if errors:
        out[ERRORS_KEY] = errors
    return out


def _repaired_block(block: dict[str, Any], registry: ToolRegistry, errors: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``tool_use`` block with the offered name and repaired input; any other block, and a
    refused call (its error added to ``errors``), as written."""
    if block.get("type") != "tool_use":
        return block
    vetted = vet(registry, (block.get("name"), block.get("input"), block.get("id")))
    if vetted.error is not None:
        errors.append(_error(vetted))
        return block
    return {**block, "name": vetted.call.name, "input": vetted.call.arguments}


def _maybe_salvaged_blocks(
    block: dict[str, Any], registry: ToolRegistry, errors: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """What a text block becomes when calls are salvaged from it: its text without them, then
    a ``tool_use`` block per call; None when it holds none (refusals go to ``errors``)."""
    text = block.get("text") if block.get("type") == "text" else None
    if not isinstance(text, str) or not text:
        return None
    # Refused candidates are refused calls too, their tool_result ready (see the OpenAI twin).
    vetted_text = vet_text(registry, text, "toolu_", answer_rejected=True)
    if not vetted_text.calls:
        return None
    out = [{**block, "text": vetted_text.content}] if vetted_text.content else []  # the API refuses empty text
    for vetted in vetted_text.calls:
        if vetted.error is not None:
            errors.append(_error(vetted))
        out.append({"type": "tool_use", "id": vetted.call.id, "name": vetted.call.name, "input": vetted.call.arguments})
    return out


def _error(vetted: Vetted) -> dict[str, Any]:
    return {
        "tool_use_id": vetted.call.id,
        "name": vetted.call.name,
        "message": vetted.message,
        "tool_result": {
            "type": "tool_result",
            "tool_use_id": vetted.call.id,
            "content": vetted.message,
            "is_error": True,
        },
    }


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
    """The calls to run from ``repair_message``'s result, in order, ids kept; the refused ones
    (listed under ``toolrepair_errors``) are left out."""
    refused = {e.get("tool_use_id") for e in repaired.get(ERRORS_KEY) or []} - {None}
    content = repaired.get("content")
    return [
        ToolCall(block["name"], dict(block.get("input") or {}), block.get("id"))
        for block in (content if isinstance(content, list) else [])
        if block.get("type") == "tool_use" and block.get("id") not in refused
    ]
