"""``repair_history``: a chat history made acceptable to strict servers, every change typed.

What strict servers refuse, and what is done about it (one rule each):

- a call with no result (a cancelled tool, a trimmed tail): answered with a placeholder result
  (Anthropic: ``is_error: true``; OpenAI tool messages have no such field, so the text says it),
  or, with ``unanswered="drop"``, the call is removed;
- a result that answers no call before it (a trimmed head, a deleted middle): dropped;
  a second result for the same call: dropped; a result without an id: given the id of the
  first unanswered call of its turn; a result for the turn's call placed after other messages:
  moved up to its turn;
- a call written as text (with ``tools``): made native, as ``fix_record`` does; when the
  results after it already carry ids, the native calls take those ids, so they stay paired;
- argument strings that are not JSON: decoded by the one argument decoder and written back as
  JSON; arguments it cannot decode fail closed: the call is removed (its results with it);
- ``content: ""`` (or ``[]``) beside ``tool_calls``: ``null``; an empty ``tool_calls`` list: removed;
  blank Anthropic text blocks: removed;
- Anthropic ``tool_result`` blocks: first in the user message right after their call
  (results spread over the following user messages are gathered there); a call id already
  used earlier in the history (Anthropic requires them unique): renamed, with its results.

A valid history comes back equal to its input, and the input is never mutated. Linear in the
size of the history, plus the argument decoder's linear pass over each arguments string.
"""

from __future__ import annotations

import bisect
import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Literal

from ._args import decode_arguments
from ._errors import ArgumentError
from ._ids import stable_id

__all__ = [
    "PLACEHOLDER",
    "HistoryChange",
    "HistoryChangeKind",
    "HistoryReport",
    "pair_history",
    "repair_history",
    "resolve_shape",
]

Shape = Literal["openai", "anthropic"]

#: The result given to a call that has none. It says what happened, so the next model turn
#: neither trusts a result that never came nor repeats the call blindly.
PLACEHOLDER: Final = (
    "Error: this tool call has no result in the conversation "
    "(it was cancelled or its result was lost). Call the tool again if it is still needed."
)


class HistoryChangeKind(StrEnum):
    """What one change did (a ``str``: ``change.kind == "placeholder-added"`` works)."""

    PLACEHOLDER_ADDED = "placeholder-added"
    CALL_DROPPED = "call-dropped"
    ORPHAN_RESULT_DROPPED = "orphan-result-dropped"
    DUPLICATE_RESULT_DROPPED = "duplicate-result-dropped"
    RESULT_LINKED = "result-linked"
    RESULT_MOVED = "result-moved"
    CALL_MADE_NATIVE = "call-made-native"
    CALL_REPAIRED = "call-repaired"
    ARGUMENTS_NORMALISED = "arguments-normalised"
    ID_ASSIGNED = "id-assigned"
    ID_RENAMED = "id-renamed"
    CONTENT_NULLED = "content-nulled"
    MESSAGE_DROPPED = "message-dropped"


@dataclass(frozen=True, slots=True)
class HistoryChange:
    """One change: its kind, the index in the input of the message it is about (for an added
    result, the message of its call), the call id concerned (None when there is none), and why."""

    kind: HistoryChangeKind
    index: int
    call_id: str | None
    detail: str


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """The changes ``repair_history`` made, in message order; falsy when there are none.

    >>> _, report = repair_history([{"role": "user", "content": "hi"}])
    >>> bool(report), report.shape
    (False, 'openai')
    """

    shape: Shape
    changes: tuple[HistoryChange, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changes)

    def count(self, kind: HistoryChangeKind | str) -> int:
        """How many changes are of ``kind``."""
        return sum(1 for change in self.changes if change.kind == kind)


K = HistoryChangeKind


# -- shape -------------------------------------------------------------------------------------
def _blocks(msg: Mapping[str, Any]) -> list[Any]:
    content = msg.get("content")
    return content if isinstance(content, list) else []


def _is_block(block: Any, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind


def resolve_shape(messages: Sequence[Mapping[str, Any]], shape: str) -> Shape:
    """``shape``, or for ``"auto"`` the one the history's tool markers show: ``role: "tool"`` or
    ``tool_calls`` are OpenAI's, ``tool_use`` / ``tool_result`` blocks Anthropic's. With neither,
    an assistant message whose content is a list of blocks reads as Anthropic, else OpenAI.
    Raises ``ValueError`` for an unknown shape or a history that mixes both."""
    if shape in ("openai", "anthropic"):
        return shape  # type: ignore[return-value]
    if shape != "auto":
        raise ValueError(f"shape must be 'auto', 'openai' or 'anthropic', not {shape!r}")
    openai = anthropic = listed = False
    for msg in messages:
        if msg.get("role") == "tool" or "tool_calls" in msg:
            openai = True
        if any(_is_block(b, "tool_use") or _is_block(b, "tool_result") for b in _blocks(msg)):
            anthropic = True
        listed = listed or (msg.get("role") == "assistant" and isinstance(msg.get("content"), list))
    if openai and anthropic:
        raise ValueError("the history mixes OpenAI tool messages and Anthropic tool blocks; pass shape=")
    if openai or anthropic:
        return "openai" if openai else "anthropic"
    return "anthropic" if listed else "openai"


# -- the public entry point ----------------------------------------------------------------------
def repair_history(
    messages: Iterable[Mapping[str, Any]],
    *,
    tools: Any = None,
    shape: Literal["auto", "openai", "anthropic"] = "auto",
    unanswered: Literal["placeholder", "drop"] = "placeholder",
) -> tuple[list[dict[str, Any]], HistoryReport]:
    """The history repaired (a new list; ``messages`` is not touched) and what changed.

    ``tools`` (definitions, names or tools, as ``fix_record`` takes them) enables making calls
    written as text native and repairing native calls against the tools' schemas; without it
    text is left as text. Raises ``TypeError`` when ``messages`` is not a list of mappings and
    ``ValueError`` for a bad ``shape`` or ``unanswered``.

    >>> history = [{"role": "user", "content": "weather?"},
    ...            {"role": "assistant", "content": "", "tool_calls": [
    ...                {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{'city': 'Oslo'}"}}]}]
    >>> fixed, report = repair_history(history)
    >>> fixed[1]["content"], fixed[1]["tool_calls"][0]["function"]["arguments"], fixed[2]["role"]
    (None, '{"city": "Oslo"}', 'tool')
    >>> [c.kind.value for c in report.changes]
    ['arguments-normalised', 'placeholder-added', 'content-nulled']
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be a list of message mappings, not {type(messages).__name__}")
    if unanswered not in ("placeholder", "drop"):
        raise ValueError(f"unanswered must be 'placeholder' or 'drop', not {unanswered!r}")
    work: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise TypeError(f"messages[{i}] is a {type(msg).__name__}, not a mapping")
        work.append(copy.deepcopy(dict(msg)))
    resolved = resolve_shape(work, shape)
    changes: list[HistoryChange] = []
    if tools is not None:
        changes += _native_from_text(work, tools)
    out = pair_history(work, resolved, unanswered=unanswered, changes=changes)
    changes.sort(key=lambda change: change.index)  # stable: each message's changes keep their order
    return out, HistoryReport(resolved, tuple(changes))


def _native_from_text(work: list[dict[str, Any]], tools: Any) -> list[HistoryChange]:
    """Text calls made native and native calls repaired against ``tools``, by the record fixer
    (the one implementation of both); each changed assistant message reported."""
    # Imported here: the record fixer imports this module for its own pairing step.
    from ._records import BadRecord, RecordFixer
    from ._report import Tally

    before = [(_call_ids(msg), json.dumps(msg, sort_keys=True, default=repr)) for msg in work]
    try:
        RecordFixer(tools).run(work, Tally(), write=True, pair=False)
    except BadRecord as exc:
        raise TypeError(f"not a chat history: {exc}") from None
    changes = []
    for i, msg in enumerate(work):
        ids, dumped = before[i]
        if json.dumps(msg, sort_keys=True, default=repr) == dumped:
            continue
        if msg.get("role") != "assistant":  # a result given the id of the call made native
            for item in (msg, *_blocks(msg)):
                ident = item.get("tool_call_id") or item.get("tool_use_id") if isinstance(item, dict) else None
                if isinstance(ident, str):
                    changes.append(HistoryChange(K.RESULT_LINKED, i, ident, "a result given the id of its call"))
            continue
        if ids:
            changes.append(HistoryChange(K.CALL_REPAIRED, i, None, "calls repaired against the tools"))
            continue
        for ident in _call_ids(msg):
            changes.append(HistoryChange(K.CALL_MADE_NATIVE, i, ident, "a call written as text made native"))
    return changes


def _call_ids(msg: Mapping[str, Any]) -> list[Any]:
    calls = msg.get("tool_calls")
    ids = [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    return ids + [b.get("id") for b in _blocks(msg) if _is_block(b, "tool_use")]


# -- pairing -------------------------------------------------------------------------------------
class _Pairing:
    """One pass over the history (already a private copy, so it may be changed in place).

    Every message is visited once; a result is found by id through ``results``, and the turn
    that may claim it is bounded by the next turn calling the same id (``calls_at``), so the
    pass is O(messages + calls + results * log(turns))."""

    def __init__(
        self,
        msgs: list[dict[str, Any]],
        anthropic: bool,
        unanswered: str,
        changes: list[HistoryChange],
        answer_last: bool,
    ) -> None:
        self.msgs, self.anthropic, self.drop = msgs, anthropic, unanswered == "drop"
        self.answer_last = answer_last
        self.changes = changes
        self.claimed: set[tuple[int, int]] = set()  # (message, item) of results a turn took
        self.used_ids: set[str] = set()  # call ids of earlier turns (Anthropic wants them unique)
        # id -> [(message, item)] of results; id -> sorted indices of the turns calling it.
        self.results: dict[str, list[tuple[int, int]]] = {}
        self.calls_at: dict[str, list[int]] = {}
        for j, msg in enumerate(msgs):
            for k, item in enumerate(self._result_items(msg)):
                rid = self._result_id(item)
                if isinstance(rid, str):
                    self.results.setdefault(rid, []).append((j, k))
            if msg.get("role") == "assistant":
                for ident in _call_ids(msg):
                    if isinstance(ident, str):
                        self.calls_at.setdefault(ident, []).append(j)

    def note(self, kind: HistoryChangeKind, index: int, call_id: str | None, detail: str) -> None:
        self.changes.append(HistoryChange(kind, index, call_id, detail))

    # -- what a result is, per shape
    def _result_items(self, msg: Mapping[str, Any]) -> list[Any]:
        if self.anthropic:
            return [b for b in _blocks(msg) if _is_block(b, "tool_result")] if msg.get("role") == "user" else []
        return [msg] if msg.get("role") == "tool" else []

    def _result_id(self, item: Any) -> Any:
        return item.get("tool_use_id" if self.anthropic else "tool_call_id")

    def _set_result_id(self, item: dict[str, Any], ident: str) -> None:
        item["tool_use_id" if self.anthropic else "tool_call_id"] = ident

    def _placeholder(self, ident: str) -> dict[str, Any]:
        if self.anthropic:
            return {"type": "tool_result", "tool_use_id": ident, "content": PLACEHOLDER, "is_error": True}
        return {"role": "tool", "tool_call_id": ident, "content": PLACEHOLDER}

    # -- the pass
    def run(self) -> list[dict[str, Any]]:
        msgs, out = self.msgs, []
        i = 0
        while i < len(msgs):
            msg = msgs[i]
            role = msg.get("role")
            if role == "assistant":
                calls = self._calls(i, msg)
                if calls is None:  # not a calling turn
                    kept = self._plain_assistant(i, msg)
                    if kept is not None:
                        out.append(kept)
                    i += 1
                    continue
                end = self._zone_end(i)
                out += self._turn(i, msg, calls, end)
                i = end
                continue
            kept = self._leftover(i, msg)
            if kept is not None:
                out.append(kept)
            i += 1
        return out

    def _zone_end(self, i: int) -> int:
        """One past the messages where the results of turn ``i`` belong (OpenAI: the run of
        tool messages; Anthropic: the run of user messages, which the API reads as one)."""
        role = "user" if self.anthropic else "tool"
        j = i + 1
        while j < len(self.msgs) and self.msgs[j].get("role") == role:
            j += 1
        return j

    # -- calls
    def _calls(self, i: int, msg: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The turn's calls, normalised (ids, arguments); None when the message makes none."""
        if self.anthropic:
            content = msg.get("content")
            if not isinstance(content, list):
                return None
            blocks = [b for b in content if _is_block(b, "tool_use")]
            if not blocks:
                return None
        else:
            calls = msg.get("tool_calls")
            if calls is None:
                return None
            if not isinstance(calls, list) or not calls:
                del msg["tool_calls"]
                self.note(K.CALL_DROPPED, i, None, "an empty or malformed tool_calls field removed")
                return None
            blocks = calls
        kept: list[dict[str, Any]] = []
        seen: set[str] = set()
        for k, call in enumerate(blocks):
            if self._call_ok(i, k, call, seen):
                kept.append(call)
        return kept

    def _call_ok(self, i: int, k: int, call: Any, seen: set[str]) -> bool:
        """Normalise one call in place; False when it must be removed (reported)."""
        body = call if self.anthropic else (call.get("function") if isinstance(call, dict) else None)
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(call, dict) or not isinstance(name, str) or not name:
            self.note(K.CALL_DROPPED, i, None, "a call with no name")
            return False
        assert isinstance(body, dict)
        key = "input" if self.anthropic else "arguments"
        raw = body.get(key)
        ident = call.get("id")
        if not isinstance(ident, str) or not ident:
            ident = stable_id("toolu_" if self.anthropic else "call_", f"{i}\x00{name}\x00{raw!r}", k)
            call["id"] = ident
            self.note(K.ID_ASSIGNED, i, ident, "a call without an id")
        elif ident in seen or (self.anthropic and ident in self.used_ids):
            new = stable_id("toolu_" if self.anthropic else "call_", f"{i}\x00{ident}", k)
            where = "in this turn" if ident in seen else "earlier"
            self.note(K.ID_RENAMED, i, new, f"id {ident!r} already used {where}")
            call["id"] = new
            if ident not in seen:  # reused from an earlier turn: this turn's results go with it
                self._rename_results(i, ident, new)
            ident = new
        seen.add(ident)
        arguments: dict[str, Any]
        try:
            if isinstance(raw, str) and not raw.strip():
                arguments, detail = {}, "empty arguments"
            else:
                arguments, events = decode_arguments(raw)
                detail = "; ".join(e.message for e in events)
        except ArgumentError as exc:
            self.note(K.CALL_DROPPED, i, ident, f"arguments cannot be decoded: {exc}")
            return False
        want_text = not self.anthropic
        if detail or isinstance(raw, str) != want_text:
            body[key] = json.dumps(arguments, ensure_ascii=False) if want_text else arguments
            self.note(K.ARGUMENTS_NORMALISED, i, ident, detail or "arguments written as JSON")
        return True

    def _rename_results(self, i: int, old: str, new: str) -> None:
        """Results for ``old`` after turn ``i`` and before the next turn calling it now answer ``new``."""
        bound = self._bound(i, old)
        for j, k in self.results.get(old, ()):
            if i < j < bound:
                self._set_result_id(self._result_items(self.msgs[j])[k], new)
                self.results.setdefault(new, []).append((j, k))

    def _bound(self, i: int, ident: str) -> int:
        """The index of the next turn after ``i`` that calls ``ident`` (its results are its own)."""
        turns = self.calls_at.get(ident, [])
        at = bisect.bisect_right(turns, i)
        return turns[at] if at < len(turns) else len(self.msgs)

    # -- a calling turn
    def _turn(self, i: int, msg: dict[str, Any], calls: list[dict[str, Any]], end: int) -> list[dict[str, Any]]:
        ids = [c["id"] for c in calls]
        wanted = set(ids)
        answered: dict[str, Any] = {}
        kept: list[tuple[int, Any]] = []  # (message it came from, or -1), result: in their own order
        unlinked: list[tuple[int, Any]] = []
        for j in range(i + 1, end):
            for k, item in enumerate(self._result_items(self.msgs[j])):
                if (j, k) in self.claimed:
                    continue
                self.claimed.add((j, k))
                rid = self._result_id(item)
                if not isinstance(rid, str) or not rid:
                    unlinked.append((j, item))
                elif rid in answered:
                    self.note(K.DUPLICATE_RESULT_DROPPED, j, rid, "a second result for the same call")
                elif rid in wanted:
                    answered[rid] = item
                    kept.append((j, item))
                else:
                    self.note(K.ORPHAN_RESULT_DROPPED, j, rid, "answers no call of the turn before it")
        open_ids = [ident for ident in ids if ident not in answered]
        for (j, item), ident in zip(unlinked, open_ids, strict=False):
            self._set_result_id(item, ident)
            answered[ident] = item
            kept.append((j, item))
            self.note(K.RESULT_LINKED, j, ident, "a result without an id given its call's")
        for j, _ in unlinked[len(open_ids) :]:
            self.note(K.ORPHAN_RESULT_DROPPED, j, None, "a result without an id, and no call left to answer")
        for ident in ids:
            if ident not in answered:
                later = self._later_result(i, end, ident)
                if later is not None:
                    answered[ident] = later[1]
                    kept.append(later)
        missing = [ident for ident in ids if ident not in answered]
        if not self.answer_last and i == len(self.msgs) - 1:
            missing = []  # a record's closing call (a fine-tuning label) is left open
        if missing and self.drop:
            gone = set(missing)
            calls = [c for c in calls if c["id"] not in gone]
            for ident in missing:
                self.note(K.CALL_DROPPED, i, ident, "the call has no result")
        else:
            for ident in missing:
                kept.append((-1, self._placeholder(ident)))
                self.note(K.PLACEHOLDER_ADDED, i, ident, "the call has no result")
        self.used_ids.update(c["id"] for c in calls)
        head = self._write_calls(i, msg, calls)
        return ([head] if head is not None else []) + self._write_results(i, end, kept)

    def _later_result(self, i: int, end: int, ident: str) -> tuple[int, Any] | None:
        """The first unclaimed result for ``ident`` after the turn's zone and before the next turn
        calling the same id, claimed and reported as moved; None when there is none."""
        bound = self._bound(i, ident)
        for j, k in self.results.get(ident, ()):
            if end <= j < bound and (j, k) not in self.claimed:
                self.claimed.add((j, k))
                self.note(K.RESULT_MOVED, j, ident, "a result placed after other messages moved up to its call")
                return j, self._result_items(self.msgs[j])[k]
        return None

    def _write_calls(self, i: int, msg: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The assistant message with ``calls`` as its calls; None when nothing is left of it."""
        if self.anthropic:
            keep = {id(c) for c in calls}
            content = [b for b in msg["content"] if not _is_block(b, "tool_use") or id(b) in keep]
            if len(content) != len(msg["content"]):
                msg["content"] = content
            return self._plain_assistant(i, msg)
        if len(calls) != len(msg["tool_calls"]):
            msg["tool_calls"] = calls
        if not calls:
            del msg["tool_calls"]
            if msg.get("content") in (None, "", []) and not msg.get("function_call") and not msg.get("audio"):
                self.note(K.MESSAGE_DROPPED, i, None, "no calls and no content left")
                return None
        elif msg.get("content") in ("", []):
            msg["content"] = None
            self.note(K.CONTENT_NULLED, i, None, "empty content beside tool_calls")
        return msg

    def _write_results(self, i: int, end: int, results: list[tuple[int, Any]]) -> list[dict[str, Any]]:
        """The messages of the turn's zone with ``results`` ((message it came from, or -1 for a
        placeholder), result) as its results."""
        items = [item for _, item in results]
        if not self.anthropic:
            return items  # the zone holds tool messages only: all in results, or dropped
        out: list[dict[str, Any]] = []
        for j in range(i + 1, end):
            msg = self.msgs[j]
            old = msg.get("content")
            has_results = isinstance(old, list) and any(_is_block(b, "tool_result") for b in old)
            if not has_results and (j > i + 1 or not items):
                tidy = self._plain_user(j, msg)  # no result was or goes here
                if tidy is not None:
                    out.append(tidy)
                continue
            if isinstance(old, list):
                rest = self._without_blank_text(j, [b for b in old if not _is_block(b, "tool_result")])
            else:
                rest = [{"type": "text", "text": old}] if isinstance(old, str) and old.strip() else []
            if j > i + 1 or not items:
                content = rest
            else:
                content = items + rest
                lead = {id(b) for b in old_results_first(old)}
                if any(i + 1 < j0 < end or (j0 == i + 1 and id(item) not in lead) for j0, item in results):
                    self.note(K.RESULT_MOVED, j, None, "tool_result blocks first in the message after their call")
            if content == old:
                out.append(msg)
            elif content:
                msg["content"] = content
                out.append(msg)
            else:
                self.note(K.MESSAGE_DROPPED, j, None, "no content left")
        if end == i + 1 and items:
            out.append({"role": "user", "content": items})
        return out

    def _without_blank_text(self, index: int, blocks: list[Any]) -> list[Any]:
        kept = [b for b in blocks if not (_is_block(b, "text") and not str(b.get("text", "")).strip())]
        if len(kept) != len(blocks):
            self.note(K.CONTENT_NULLED, index, None, "blank text blocks removed")
        return kept

    # -- other messages
    def _plain_assistant(self, i: int, msg: dict[str, Any]) -> dict[str, Any] | None:
        if not self.anthropic or not isinstance(msg.get("content"), list):
            return msg
        content = self._without_blank_text(i, msg["content"])
        if len(content) == len(msg["content"]):
            return msg
        if not content:
            self.note(K.MESSAGE_DROPPED, i, None, "no content left")
            return None
        msg["content"] = content
        return msg

    def _plain_user(self, j: int, msg: dict[str, Any]) -> dict[str, Any] | None:
        """An Anthropic user message without results: blank text blocks removed, and the message
        when nothing is left (the API refuses an empty user message)."""
        content = msg.get("content")
        if isinstance(content, list):
            kept = self._without_blank_text(j, content)
            if kept:
                if len(kept) != len(content):
                    msg["content"] = kept
                return msg
        elif not (content is None or (isinstance(content, str) and not content.strip())):
            return msg
        self.note(K.MESSAGE_DROPPED, j, None, "an empty user message")
        return None

    def _leftover(self, j: int, msg: dict[str, Any]) -> dict[str, Any] | None:
        """A message outside any turn's zone: its results answer nothing before them."""
        items = self._result_items(msg)
        if not items:
            return self._plain_user(j, msg) if self.anthropic and msg.get("role") == "user" else msg
        if not self.anthropic:
            if (j, 0) not in self.claimed:
                self.note(K.ORPHAN_RESULT_DROPPED, j, _str_or_none(self._result_id(msg)), "answers no call before it")
            return None
        for k, item in enumerate(items):
            if (j, k) not in self.claimed:
                self.note(
                    K.ORPHAN_RESULT_DROPPED,
                    j,
                    _str_or_none(self._result_id(item)),
                    "answers no call in the message before it",
                )
        content = [b for b in msg["content"] if not _is_block(b, "tool_result")]
        content = self._without_blank_text(j, content)
        if not content:
            self.note(K.MESSAGE_DROPPED, j, None, "no content left")
            return None
        msg["content"] = content
        return msg


def old_results_first(content: Any) -> list[Any]:
    """The leading run of ``tool_result`` blocks of ``content``."""
    out = []
    for block in content if isinstance(content, list) else ():
        if not _is_block(block, "tool_result"):
            break
        out.append(block)
    return out


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def pair_history(
    msgs: list[dict[str, Any]],
    shape: Shape,
    *,
    unanswered: str = "placeholder",
    changes: list[HistoryChange] | None = None,
    answer_last: bool = True,
) -> list[dict[str, Any]]:
    """The pairing rules over ``msgs``, which it may change in place (pass a copy you own); the
    repaired list, its changes appended to ``changes``. ``answer_last=False`` leaves the calls of
    a closing assistant message unanswered (a record's label, not a lost result).
    ``repair_history`` is the public face."""
    return _Pairing(msgs, shape == "anthropic", unanswered, [] if changes is None else changes, answer_last).run()
