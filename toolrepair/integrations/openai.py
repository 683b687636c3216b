"""OpenAI: repair Chat Completions messages and Responses API items; format tool results.

Works on SDK objects (``openai.types.chat.ChatCompletionMessage``, ``openai.types.responses``
items) and on plain dicts alike, reading them through ``model_dump``, so nothing here imports
``openai``; the ``openai`` extra installs the SDK the tests build those objects with.

>>> import toolrepair as tr
>>> def web_search(query: str) -> str: ...
>>> msg = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
...        "function": {"name": "WebSearch", "arguments": "{'query': 'cats',}"}}]}
>>> repair_chat_message(msg, tr.ToolRegistry([web_search]))["tool_calls"][0]["function"]
{'name': 'web_search', 'arguments': '{"query": "cats"}'}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._registry import ToolRegistry
from .._types import ToolCall, ToolOutcome
from ._common import as_dict, rejection_errors, stable_id

__all__ = [
    "function_call_output",
    "repair_chat_message",
    "repair_response_items",
    "tool_calls",
    "tool_result_message",
]

ERRORS_KEY = "toolrepair_errors"


def _dumps(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def _cut(text: str) -> str | None:
    text = text.strip()
    return text or None


def repair_chat_message(message: Any, registry: ToolRegistry) -> dict[str, Any]:
    """A Chat Completions assistant message, as a dict, with its tool calls repaired.

    Native ``tool_calls`` get the offered name and repaired arguments (re-serialised as a JSON
    string); ids are kept. With no native calls, calls written as text in ``content`` are
    salvaged: ``content`` loses them and each gets an id ``call_…`` derived from the content,
    so the same message always gives the same ids. Calls that cannot be repaired are left out
    and listed under ``"toolrepair_errors"`` (``tool_call_id``, ``name``, ``message``): remove
    that key before sending the message back, and tell the model the messages instead.
    """
    out = as_dict(message)
    errors: list[dict[str, Any]] = []
    native = out.get("tool_calls") or []
    if native:
        kept: list[dict[str, Any]] = []
        for tool_call in native:
            fn = tool_call.get("function")
            if tool_call.get("type", "function") != "function" or not isinstance(fn, dict):
                kept.append(tool_call)  # custom (free-form) tools have no schema to repair against
                continue
            repair = registry.repair({"id": tool_call.get("id"), "function": fn})
            if repair.call is None:
                errors.append({"tool_call_id": tool_call.get("id"), "name": fn.get("name"),
                               "message": str(repair.error)})
                continue
            kept.append({**tool_call, "function": {**fn, "name": repair.call.name,
                                                   "arguments": _dumps(repair.call.arguments)}})
        _set_calls(out, "tool_calls", kept)
    elif isinstance(out.get("content"), str) and out["content"]:
        text: str = out["content"]
        result = registry.salvage(text)
        if result.calls or result.rejected:
            salvaged: list[dict[str, Any]] = []
            for i, call in enumerate(result.calls):
                ident = stable_id("call_", text, i)
                repair = registry.repair(ToolCall(call.name, call.arguments, ident, call.dialect, call.span))
                if repair.call is None:
                    errors.append({"tool_call_id": ident, "name": call.name, "message": str(repair.error)})
                    continue
                salvaged.append(ToolCall(repair.call.name, repair.call.arguments, ident).to_openai())
            errors.extend(rejection_errors(result, registry, "tool_call_id"))
            if result.calls:
                out["content"] = _cut(result.content)
            _set_calls(out, "tool_calls", salvaged)
    if errors:
        out[ERRORS_KEY] = errors
    return out


def _set_calls(out: dict[str, Any], key: str, calls: list[dict[str, Any]]) -> None:
    # The API rejects an empty tool_calls array: no calls means no key.
    if calls:
        out[key] = calls
    else:
        out.pop(key, None)


def tool_result_message(outcome: ToolOutcome) -> dict[str, Any]:
    """The Chat Completions ``tool`` message answering one call (``registry.run``'s outcome)."""
    return {"role": "tool", "tool_call_id": _require_id(outcome), "content": outcome.content}


def repair_response_items(items: Any, registry: ToolRegistry) -> dict[str, Any]:
    """Responses API output items (or a ``Response``), as dicts, with ``function_call``s repaired.

    Returns ``{"output": [...], "toolrepair_errors": [...]}``. Each ``function_call`` keeps its
    ``call_id`` and gets the offered name and re-serialised ``arguments``. With no
    ``function_call`` at all, calls written as text in ``output_text`` parts are salvaged into
    ``function_call`` items placed after their message, with ``call_…`` ids derived from the text.
    Calls that cannot be repaired are left out and listed under ``toolrepair_errors``
    (``call_id``, ``name``, ``message``).
    """
    source = getattr(items, "output", items)
    if isinstance(items, Mapping) and "output" in items:
        source = items["output"]
    output = [as_dict(item) for item in source]
    errors: list[dict[str, Any]] = []
    if any(item.get("type") == "function_call" for item in output):
        kept: list[dict[str, Any]] = []
        for item in output:
            if item.get("type") != "function_call":
                kept.append(item)
                continue
            repair = registry.repair({"name": item.get("name"), "arguments": item.get("arguments"),
                                      "id": item.get("call_id")})
            if repair.call is None:
                errors.append({"call_id": item.get("call_id"), "name": item.get("name"),
                               "message": str(repair.error)})
                continue
            kept.append({**item, "name": repair.call.name, "arguments": _dumps(repair.call.arguments)})
        return {"output": kept, ERRORS_KEY: errors}
    result_items: list[dict[str, Any]] = []
    for item in output:
        result_items.append(item)
        if item.get("type") != "message":
            continue
        for part in item.get("content") or []:
            text = part.get("text") if part.get("type") == "output_text" else None
            if not isinstance(text, str) or not text:
                continue
            result = registry.salvage(text)
            errors.extend(rejection_errors(result, registry, "call_id"))
            if not result.calls:
                continue
            part["text"] = result.content.strip()
            for i, call in enumerate(result.calls):
                ident = stable_id("call_", text, i)
                repair = registry.repair(ToolCall(call.name, call.arguments, ident, call.dialect, call.span))
                if repair.call is None:
                    errors.append({"call_id": ident, "name": call.name, "message": str(repair.error)})
                    continue
                result_items.append({"type": "function_call", "call_id": ident, "name": repair.call.name,
                                     "arguments": _dumps(repair.call.arguments), "status": "completed"})
    return {"output": result_items, ERRORS_KEY: errors}


def function_call_output(outcome: ToolOutcome) -> dict[str, Any]:
    """The Responses API ``function_call_output`` input item answering one call."""
    return {"type": "function_call_output", "call_id": _require_id(outcome), "output": outcome.content}


def tool_calls(repaired: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[ToolCall]:
    """The calls to run from ``repair_chat_message``'s or ``repair_response_items``' result.

    For Responses items the id is the ``call_id`` (what ``function_call_output`` must echo),
    not the item's own ``id``.
    """
    if isinstance(repaired, Mapping):
        if "output" in repaired:
            return tool_calls(repaired["output"])
        return [ToolCall(tc["function"]["name"], json.loads(tc["function"]["arguments"]), tc.get("id"))
                for tc in repaired.get("tool_calls") or [] if tc.get("type", "function") == "function"]
    return [ToolCall(item["name"], json.loads(item["arguments"]), item.get("call_id"))
            for item in repaired if item.get("type") == "function_call"]


def _require_id(outcome: ToolOutcome) -> str:
    ident = outcome.call.id
    if not ident:
        raise ValueError(
            f"the outcome of {outcome.call.name!r} has no call id to answer: run the ToolCall "
            "(or the dict) from the repaired message, which carries it"
        )
    return ident
