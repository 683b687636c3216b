"""A whole (non-streaming) chat completion, repaired: pure, no I/O."""

from __future__ import annotations

from typing import Any

from .._registry import ToolRegistry
from ..integrations._common import joined_reasoning, rejection_errors
from ._calls import finish_reason, repair_native, repair_salvaged
from ._config import Reasoning
from ._reasoning import whole_fields
from ._report import Note, Tally

__all__ = ["repair_completion", "repair_message"]


def repair_message(
    message: dict[str, Any], registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate"
) -> tuple[dict[str, Any], int]:
    """The assistant message repaired, and how many calls it carries now.

    Native calls are repaired in place. With none, calls written as text in ``content`` are
    salvaged into ``tool_calls`` and ``content`` keeps the rest (None when nothing is left):
    reasoning read from the content moves to ``reasoning_content`` (``reasoning`` "separate";
    "inline" leaves it in the content as written, "drop" drops it: ``_reasoning``), chat-channel
    markup is cut, and a text call that is refused stays in ``content`` as written.
    O(len(content) + calls).
    """
    native = message.get("tool_calls")
    if isinstance(native, list) and native:
        # A refused call is left out (never delivered, so never run); the rest are repaired.
        calls = [
            out
            for tc in native
            if (out := repair_native(tc, registry, tally) if isinstance(tc, dict) else tc) is not None
        ]
        if not calls:
            return {k: v for k, v in message.items() if k != "tool_calls"}, 0
        return {**message, "tool_calls": calls}, len(calls)
    content = message.get("content")
    if not isinstance(content, str) or not content:
        return message, 0
    result = registry.salvage(content)
    for error in rejection_errors(result, registry, "tool_call_id"):
        tally.refuse(Note(None, error["name"], error["message"]))
    text, thought = whole_fields(content, result, reasoning)
    if not result.calls and not thought and text == content:
        return message, 0
    # The stream's rule, so both paths agree: content is the text outside calls, reasoning and
    # channel markup; reasoning goes apart, as the engines send it, after any the upstream sent.
    out = {**message, "content": text or None}
    if thought:
        out["reasoning_content"] = joined_reasoning(message.get("reasoning_content"), thought)
    salvaged = [
        tc for i, call in enumerate(result.calls) if (tc := repair_salvaged(call, i, registry, tally)) is not None
    ]
    if not salvaged:
        return out, 0
    return {**out, "tool_calls": salvaged}, len(salvaged)


def repair_completion(
    body: dict[str, Any], registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate"
) -> dict[str, Any]:
    """A ``chat.completion`` body with every choice's message repaired (others unchanged)."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        return body
    out: list[Any] = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            out.append(choice)
            continue
        repaired, calls = repair_message(message, registry, tally, reasoning)
        out.append({**choice, "message": repaired, "finish_reason": finish_reason(choice.get("finish_reason"), calls)})
    return {**body, "choices": out}
