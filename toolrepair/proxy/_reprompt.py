"""The self-repair round trip: the turn a reprompt appends, carrying toolrepair's corrective text."""

from __future__ import annotations

from typing import Any

from ._report import Note

__all__ = ["corrective_turn"]

_NOT_RUN = "Not run: correct the other calls of this turn, then call again."


def corrective_turn(message: dict[str, Any], notes: list[Note], *, missing_call: str | None) -> list[dict[str, Any]]:
    """The assistant turn as returned (calls repaired or as written), a ``tool`` message answering
    each of its calls (the corrective text for a refused one), and a ``user`` message with what
    has no call to answer: refused text calls and ``missing_call`` (tool_choice unmet).

    >>> turn = corrective_turn({"role": "assistant", "content": "Hi"}, [], missing_call="Call a tool.")
    >>> [m["role"] for m in turn], turn[1]["content"]
    (['assistant', 'user'], 'Call a tool.')
    """
    by_id = {note.tool_call_id: note.message for note in notes if note.tool_call_id is not None}
    assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    turn = [assistant]
    calls = [tc for tc in message.get("tool_calls") or () if isinstance(tc, dict)]
    if calls:
        # Every call of the turn needs an answer with its id, or the API refuses the history.
        calls = [{**tc, "id": tc.get("id") or f"call_toolrepair_{i}"} for i, tc in enumerate(calls)]
        assistant["tool_calls"] = calls
        turn.extend({"role": "tool", "tool_call_id": tc["id"], "content": by_id.get(tc["id"], _NOT_RUN)}
                    for tc in calls)
    # Refused calls are not in the turn (never delivered): their corrective text goes in the user message.
    answered = {tc["id"] for tc in calls}
    loose = [note.message for note in notes if note.tool_call_id is None or note.tool_call_id not in answered]
    if missing_call is not None:
        loose.append(missing_call)
    if loose:
        turn.append({"role": "user", "content": "\n".join(loose)})
    return turn
