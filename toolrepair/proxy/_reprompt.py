"""The self-repair round trip: the turn a reprompt appends, carrying toolrepair's corrective text."""

from __future__ import annotations

from typing import Any

from ._report import Note

__all__ = ["answers", "corrective_turn", "missing_call"]

_NOT_RUN = "Not run: correct the other calls of this turn, then call again."


def corrective_turn(message: dict[str, Any], notes: list[Note], *, missing_call: str | None) -> list[dict[str, Any]]:
    """The assistant turn as returned (calls repaired or as written), a ``tool`` message answering
    each of its calls (the corrective text for a refused one), and a ``user`` message with what
    has no call to answer: refused text calls and ``missing_call`` (tool_choice unmet).

    >>> turn = corrective_turn({"role": "assistant", "content": "Hi"}, [], missing_call="Call a tool.")
    >>> [m["role"] for m in turn], turn[1]["content"]
    (['assistant', 'user'], 'Call a tool.')
    """
    assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    turn = [assistant]
    calls = [tc for tc in message.get("tool_calls") or () if isinstance(tc, dict)]
    answered, loose = answers([tc.get("id") for tc in calls], notes, missing_call)
    if calls:
        assistant["tool_calls"] = [{**tc, "id": ident} for tc, (ident, _) in zip(calls, answered, strict=True)]
        turn.extend({"role": "tool", "tool_call_id": ident, "content": text} for ident, text in answered)
    if loose:
        turn.append({"role": "user", "content": "\n".join(loose)})
    return turn


def answers(ids: list[Any], notes: list[Note], missing_call: str | None) -> tuple[list[tuple[str, str]], list[str]]:
    """What a reprompt says, in any API's shape: an answer for each call of the turn, by id
    (the corrective text of a refused one; a call without an id gets one, as every call needs
    an answer with its id or the API refuses the history), and the corrections that answer
    no call (refused calls, which are not in the turn, and ``missing_call``).

    >>> answered, loose = answers(["call_1", None], [Note("call_1", "x", "Tool 'x' not found.")], None)
    >>> answered[0], answered[1][0], loose
    (('call_1', "Tool 'x' not found."), 'call_toolrepair_1', [])
    """
    by_id = {note.tool_call_id: note.message for note in notes if note.tool_call_id is not None}
    answered = []
    for i, raw in enumerate(ids):
        ident = raw if isinstance(raw, str) and raw else f"call_toolrepair_{i}"
        answered.append((ident, by_id.get(ident, _NOT_RUN)))
    # Refused calls are not in the turn (never delivered): their corrective text answers no call.
    delivered = {ident for ident, _ in answered}
    loose = [note.message for note in notes if note.tool_call_id is None or note.tool_call_id not in delivered]
    if missing_call is not None:
        loose.append(missing_call)
    return answered, loose


def missing_call(names: list[str]) -> str:
    """The instruction a reprompt sends when ``tool_choice`` required a call and none came."""
    if len(names) == 1:
        return f"You must call the tool {names[0]!r} now, as a tool call."
    return f"You must call one of the tools {sorted(names)!r} now, as a tool call."
