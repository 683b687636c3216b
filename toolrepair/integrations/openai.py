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
from .._safe_text import json_text
from .._types import ToolCall, ToolOutcome
from ._common import Vetted, as_dict, joined_reasoning, vet, vet_text

__all__ = [
    "function_call_output",
    "repair_chat_message",
    "repair_response_items",
    "tool_calls",
    "tool_result_message",
]

ERRORS_KEY = "toolrepair_errors"


def _dumps(arguments: Mapping[str, Any]) -> str:
    return json_text(arguments)


def repair_chat_message(message: Any, registry: ToolRegistry) -> dict[str, Any]:
    """A Chat Completions assistant message, as a dict, with its tool calls repaired.

    Native ``tool_calls`` get the offered name and repaired arguments (re-serialised as a JSON
    string); ids are kept. With no native calls, calls written as text in ``content`` are
    salvaged: ``content`` loses them and each gets an id ``call_…`` derived from the content,
    so the same message always gives the same ids. A call that cannot be repaired, or that the
    registry's policy refuses, stays in ``tool_calls`` as the model wrote it (the API wants an
    answer for every call) and is listed under ``"toolrepair_errors"`` (``tool_call_id``,
    ``name``, ``message`` and ``tool_message``, the ``tool`` message that answers it). Remove
    that key before sending the message back, then send the ``tool_message``s with the results
    of ``tool_calls(repaired)``, which leaves the refused calls out.

    Given a whole ``ChatCompletion``, every choice's message is repaired (a choice whose text
    became calls gets ``finish_reason`` ``tool_calls``) and the completion comes back as a dict.
    """
    out = as_dict(message)
    if "choices" in out:
        return _repair_completion(out, registry)
    if out.get("role", "assistant") != "assistant" or not ({"content", "tool_calls"} & out.keys()):
        raise TypeError(
            "repair_chat_message expects an assistant message (completion.choices[0].message) "
            f"or a ChatCompletion, not {type(message).__name__} with keys {sorted(out)}"
        )
    errors: list[dict[str, Any]] = []
    native = out.get("tool_calls") or []
    if native:
        _set_calls(out, "tool_calls", [_repaired_tool_call(tool_call, registry, errors) for tool_call in native])
    elif isinstance(out.get("content"), str) and out["content"]:
        _salvage_content(out, registry, errors)
    if errors:
        out[ERRORS_KEY] = errors
    return out


def _salvage_content(out: dict[str, Any], registry: ToolRegistry, errors: list[dict[str, Any]]) -> None:
    """The calls written in the message's text content into ``tool_calls``, the content without
    them; refused calls (kept as calls) and rejected ones go to ``errors``."""
    # Refused candidates (a tool never offered, arguments that cannot be read) are refused calls
    # too, each with its answer ready, so the loop answers them and the model can fix them.
    text = vet_text(registry, out["content"], "call_", answer_rejected=True)
    errors.extend(_chat_error(v) for v in text.calls if v.error is not None)
    if text.calls:
        out["content"] = text.content or None
        if text.reasoning:  # where vLLM and SGLang put it, after what the server sent there
            out["reasoning_content"] = joined_reasoning(out.get("reasoning_content"), text.reasoning)
        _set_calls(out, "tool_calls", [v.call.to_openai() for v in text.calls])


def _repaired_tool_call(
    tool_call: dict[str, Any], registry: ToolRegistry, errors: list[dict[str, Any]]
) -> dict[str, Any]:
    """A function tool call with the offered name and repaired arguments; a custom tool call,
    and a refused one (its error added to ``errors``), as written."""
    fn = tool_call.get("function")
    if tool_call.get("type", "function") != "function" or not isinstance(fn, dict):
        return tool_call  # custom (free-form) tools have no schema to repair against
    vetted = vet(registry, (fn.get("name"), fn.get("arguments"), tool_call.get("id")))
    if vetted.error is not None:
        errors.append(_chat_error(vetted))
        return tool_call
    return {**tool_call, "function": {**fn, "name": vetted.call.name, "arguments": _dumps(vetted.call.arguments)}}


def _chat_error(vetted: Vetted) -> dict[str, Any]:
    return {
        "tool_call_id": vetted.call.id,
        "name": vetted.call.name,
        "message": vetted.message,
        "tool_message": {"role": "tool", "tool_call_id": vetted.call.id, "content": vetted.message},
    }


def _repair_completion(completion: dict[str, Any], registry: ToolRegistry) -> dict[str, Any]:
    choices: list[dict[str, Any]] = []
    for choice in completion.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            choices.append(choice)
            continue
        fixed = repair_chat_message(message, registry)
        new_choice = {**choice, "message": fixed}
        if fixed.get("tool_calls") and not message.get("tool_calls") and choice.get("finish_reason") == "stop":
            new_choice["finish_reason"] = "tool_calls"  # loops that branch on it then run the calls
        choices.append(new_choice)
    return {**completion, "choices": choices}


def _set_calls(out: dict[str, Any], key: str, calls: list[dict[str, Any]]) -> None:
    # The API rejects an empty tool_calls array: no calls means no key.
    if calls:
        out[key] = calls
    else:
        out.pop(key, None)


def tool_result_message(outcome: ToolOutcome) -> dict[str, Any]:
    """The Chat Completions ``tool`` message answering one call (``registry.run``'s outcome)."""
    return {"role": "tool", "tool_call_id": _require_id(outcome), "content": outcome.content}


def repair_response_items(
    items: Any, registry: ToolRegistry, *, dispatch: bool = False, id_seed: str = "", reasoning_id: str | None = None
) -> dict[str, Any]:
    """Responses API output items (or a ``Response``), as dicts, with ``function_call``s repaired.

    Returns ``{"output": [...], "toolrepair_errors": [...]}``. Each ``function_call`` keeps its
    ``call_id`` and gets the offered name and re-serialised ``arguments``. With no
    ``function_call`` at all, calls written as text in ``output_text`` parts are salvaged into
    ``function_call`` items placed after their message, with ``call_…`` ids derived from the text.
    A call that cannot be repaired or that policy refuses stays as written and is listed under
    ``toolrepair_errors`` (``call_id``, ``name``, ``message`` and ``output_item``, the
    ``function_call_output`` that answers it); ``tool_calls`` leaves it out.

    ``dispatch=True``: the calls returned run without another check (an agent runner that
    dispatches them itself), so for ``max_repeats`` a later call reusing an id is a new call.
    ``id_seed`` goes into the ids of salvaged calls with their text (say, the turn's position in
    the conversation), for a runner that runs each call id once in a conversation.
    ``reasoning_id``: reasoning read from an ``output_text`` part (``<think>…</think>`` and the
    rest) leaves its text, calls or not, and becomes a ``reasoning`` item with this id (its text
    in one ``reasoning_text`` content part) placed before the message; without it the part's
    text is left as written when it holds no call.
    """
    source = getattr(items, "output", items)
    if isinstance(items, Mapping) and "output" in items:
        source = items["output"]
    output = [as_dict(item) for item in source]
    errors: list[dict[str, Any]] = []
    if any(item.get("type") == "function_call" for item in output):
        fixed = [_repaired_function_call(item, registry, errors, dispatch) for item in output]
        return {"output": fixed, ERRORS_KEY: errors}
    result_items: list[dict[str, Any]] = []
    for item in output:
        salvaged: list[dict[str, Any]] = []
        if item.get("type") == "message":
            for part in item.get("content") or []:
                salvaged.extend(
                    _salvaged_from_part(
                        part, registry, errors, dispatch=dispatch, id_seed=id_seed, reasoning_id=reasoning_id
                    )
                )
        # The reasoning read from a message goes before it, as a model that sends it apart
        # sends it; the calls after it.
        result_items.extend(s for s in salvaged if s["type"] == "reasoning")
        result_items.append(item)
        result_items.extend(s for s in salvaged if s["type"] != "reasoning")
    return {"output": result_items, ERRORS_KEY: errors}


def _repaired_function_call(
    item: dict[str, Any], registry: ToolRegistry, errors: list[dict[str, Any]], dispatch: bool
) -> dict[str, Any]:
    """A ``function_call`` item with the offered name and repaired arguments; any other item,
    and a refused call (its error added to ``errors``), as written."""
    if item.get("type") != "function_call":
        return item
    vetted = vet(registry, (item.get("name"), item.get("arguments"), item.get("call_id")), dispatch=dispatch)
    if vetted.error is not None:
        errors.append(_response_error(vetted))
        return item
    return {**item, "name": vetted.call.name, "arguments": _dumps(vetted.call.arguments)}


def _salvaged_from_part(
    part: dict[str, Any],
    registry: ToolRegistry,
    errors: list[dict[str, Any]],
    *,
    dispatch: bool,
    id_seed: str,
    reasoning_id: str | None,
) -> list[dict[str, Any]]:
    """The ``function_call`` items salvaged from an ``output_text`` part, which loses their
    text (refusals go to ``errors``), and with ``reasoning_id`` the ``reasoning`` item read
    from it; none for any other part."""
    text = part.get("text") if part.get("type") == "output_text" else None
    if not isinstance(text, str) or not text:
        return []
    # Refused candidates become refused calls (their error keyed by call_id), so that an agent
    # loop answers a text call to a tool never offered instead of ending on its markup.
    vetted_text = vet_text(registry, text, "call_", answer_rejected=True, dispatch=dispatch, id_seed=id_seed)
    thought = reasoning_id is not None and bool(vetted_text.reasoning)
    if not (vetted_text.calls or thought):
        return []
    part["text"] = vetted_text.remainder  # the content once calls (or reasoning) are cut
    items: list[dict[str, Any]] = []
    if thought:
        items.append(
            {
                "type": "reasoning",
                "id": reasoning_id,
                "summary": [],
                "content": [{"type": "reasoning_text", "text": vetted_text.reasoning}],
            }
        )
    for vetted in vetted_text.calls:
        if vetted.error is not None:
            errors.append(_response_error(vetted))
        items.append(
            {
                "type": "function_call",
                "call_id": vetted.call.id,
                "name": vetted.call.name,
                "arguments": _dumps(vetted.call.arguments),
                "status": "completed",
            }
        )
    return items


def _response_error(vetted: Vetted) -> dict[str, Any]:
    return {
        "call_id": vetted.call.id,
        "name": vetted.call.name,
        "message": vetted.message,
        "output_item": {"type": "function_call_output", "call_id": vetted.call.id, "output": vetted.message},
    }


def function_call_output(outcome: ToolOutcome) -> dict[str, Any]:
    """The Responses API ``function_call_output`` input item answering one call."""
    return {"type": "function_call_output", "call_id": _require_id(outcome), "output": outcome.content}


def tool_calls(repaired: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[ToolCall]:
    """The calls to run from ``repair_chat_message``'s or ``repair_response_items``' result:
    the refused ones (listed under ``toolrepair_errors``) are left out.

    For Responses items the id is the ``call_id`` (what ``function_call_output`` must echo),
    not the item's own ``id``.
    """
    if isinstance(repaired, Mapping):
        refused = {e.get("tool_call_id", e.get("call_id")) for e in repaired.get(ERRORS_KEY) or []} - {None}
        if "output" in repaired:
            return _function_calls(repaired["output"], refused)
        return [
            ToolCall(tc["function"]["name"], json.loads(tc["function"]["arguments"]), tc.get("id"))
            for tc in repaired.get("tool_calls") or []
            if tc.get("type", "function") == "function" and tc.get("id") not in refused
        ]
    return _function_calls(repaired, set())


def _function_calls(items: Iterable[Mapping[str, Any]], refused: set[Any]) -> list[ToolCall]:
    return [
        ToolCall(item["name"], json.loads(item["arguments"]), item.get("call_id"))
        for item in items
        if item.get("type") == "function_call" and item.get("call_id") not in refused
    ]


def _require_id(outcome: ToolOutcome) -> str:
    ident = outcome.call.id
    if not ident:
        raise ValueError(
            f"the outcome of {outcome.call.name!r} has no call id to answer: run the ToolCall "
            "(or the dict) from the repaired message, which carries it"
        )
    return ident
