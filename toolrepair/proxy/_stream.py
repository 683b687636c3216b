"""A streamed chat completion, repaired chunk by chunk on top of ``StreamSalvager``: pure, no I/O.

Feed each upstream ``chat.completion.chunk`` (parsed JSON) to ``StreamRepair.feed`` and send
the chunks it returns; call ``close`` at the end of the stream. What a client assembles from the
output equals ``repair_completion`` of the same reply sent whole: the text goes through the same
salvage engine, and each call through the same ``repair_native``/``repair_salvaged``.

* content: fed to a ``StreamSalvager`` (text forwarded as soon as it is safe, a salvaged call
  emitted as one ``tool_calls`` delta with ``index``, ``id``, ``type`` and ``function``).
* native ``tool_calls``: accumulated per ``index``; a call is complete when a later index
  starts or the choice finishes, and is then repaired and emitted whole. Once native calls
  start, held text is released and later text passes as it is (salvage runs only on replies
  without native calls).
* salvaged calls: without a model profile, from the first one on everything waits for the
  choice's end, so that native calls after them still make the reply one with native calls,
  as whole. With a profile each goes out the moment it closes; native calls that begin after
  one went out are refused and noted (never delivered): the client already has calls read
  from the text, and two sources of calls in one reply is the reading that runs more.
* reasoning the salvager reads in the content (``<think>`` and the other conventions) goes out
  as ``reasoning_content`` deltas, after any the upstream sent itself, as whole replies give it;
  ``reasoning`` ``"inline"`` leaves it in the content as written, ``"drop"`` drops it
  (``_reasoning``).
* everything else in a delta (``role``, ``reasoning_content``, ``reasoning``, ``refusal``) and
  chunks without choices (``usage``) pass through untouched.

Cost: O(total delta size + chunks) per stream, StreamSalvager's bound.
"""

from __future__ import annotations

from typing import Any

from .._registry import ToolRegistry
from .._salvage import ReasoningDelta, TextDelta, ToolCallReady
from ..integrations._common import REASONING_SEPARATOR
from ._calls import finish_reason, repair_native, repair_salvaged
from ._config import Reasoning
from ._reasoning import ContentEvents, content_salvager
from ._report import Note, Tally

__all__ = ["MalformedChunk", "StreamRepair"]


class MalformedChunk(ValueError):
    """An upstream chunk whose shape the proxy cannot read without guessing: a choice that is not
    an object, an ``index`` that is not a non-negative integer, content or calls after the
    choice's ``finish_reason``, a delta, content or call piece of the wrong type. The stream then
    ends with the documented error event and ``[DONE]``, never a cut connection."""


def _index(value: Any, where: str) -> int:
    if value is None:
        return 0
    if type(value) is not int or value < 0:
        raise MalformedChunk(f"{where} must be a non-negative integer, not {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


_KINDS: dict[type, str] = {str: "a string", dict: "an object", list: "an array"}


def _optional(value: Any, kind: type, where: str) -> Any:
    """``value`` when it is None or a ``kind``; MalformedChunk otherwise."""
    if value is not None and not isinstance(value, kind):
        raise MalformedChunk(f"{where} must be {_KINDS[kind]}, not {_shown(value)}")
    return value


_REPLACED = frozenset({"content", "tool_calls"})
_CHOICE_OWN = frozenset({"index", "delta", "finish_reason"})


class _NativeCall:
    """A native call being streamed: its name and arguments kept as the pieces that came, joined
    once when it is complete (``+=`` on each piece copies everything before it: quadratic)."""

    __slots__ = ("arguments", "id", "name", "sent", "type")

    def __init__(self) -> None:
        self.id: str | None = None
        self.type = "function"
        self.name: list[str] = []
        self.arguments: list[str] = []
        self.sent = False

    def tool_call(self) -> dict[str, Any]:
        """The ``tool_calls`` entry, as the upstream would have sent it whole. O(its length)."""
        call: dict[str, Any] = {
            "type": self.type,
            "function": {"name": "".join(self.name), "arguments": "".join(self.arguments)},
        }
        return call if self.id is None else {"id": self.id, **call}


class _Choice:
    """One choice's state: its salvager, its native calls being written, what went out."""

    __slots__ = (
        "calls",
        "committed",
        "done",
        "held",
        "native",
        "pending",
        "raw",
        "reasoned",
        "salvaged",
        "salvager",
        "shown",
        "stranded",
    )

    def __init__(self, salvager: ContentEvents | None) -> None:
        self.salvager = salvager
        # Deltas released by a chunk that then proved malformed: sent by ``close()``, never lost.
        self.stranded: list[dict[str, Any]] = []
        self.raw: list[str] = []  # the content as the upstream sent it, while salvage runs
        self.shown: list[str] = []  # the salvager's text sent before its first call
        # From the first salvaged call on, events wait for the choice's end: a native call after
        # them means the reply has native calls, and then nothing is salvaged (as whole).
        self.held: list[Any] | None = None
        self.native: dict[int, _NativeCall] = {}  # upstream index -> call so far
        self.pending: list[_NativeCall] = []  # calls not sent yet, in order
        self.calls = 0  # tool_calls deltas emitted (the next one's index)
        self.salvaged = 0
        self.committed = False  # a salvaged call went out: native calls after it are refused
        self.done = False
        # "upstream": the upstream sent reasoning_content of its own; "salvaged": reasoning read
        # from the content went out (after the upstream's, a blank line apart, as whole).
        self.reasoned: str | None = None


class StreamRepair:
    """Repairs one streamed reply.

    >>> import toolrepair as tr
    >>> repair = StreamRepair(tr.ToolRegistry([tr.ToolSpec("web_search")]), Tally())
    >>> repair.feed({"id": "x", "choices": [{"index": 0, "delta": {"content": "Hi"}}]})
    []
    >>> [c["choices"][0]["delta"] for c in repair.close()]
    [{'content': 'Hi'}]

    Without a model profile, text is held while a later lone ``</think>`` could still make it
    reasoning (the salvager's rule); ``close`` releases it.
    """

    __slots__ = ("_base", "_choices", "_early", "_reasoning", "_registry", "tally")

    def __init__(self, registry: ToolRegistry, tally: Tally, reasoning: Reasoning = "separate") -> None:
        self._registry = registry
        self.tally = tally
        self._reasoning: Reasoning = reasoning
        # A model profile: salvaged calls go out as they close (see the module docstring).
        self._early = registry.model is not None
        self._choices: dict[Any, _Choice] = {}
        self._base: dict[str, Any] = {}  # the last chunk's id, model, ...: for what close() sends

    @property
    def finished(self) -> bool:
        """Every choice seen has its finish_reason (a stream may then end without [DONE])."""
        return bool(self._choices) and all(state.done for state in self._choices.values())

    @property
    def calls(self) -> int:
        """Tool calls emitted so far, over every choice."""
        return sum(state.calls for state in self._choices.values())

    def report_chunk(self) -> dict[str, Any]:
        """A last chunk with no choices carrying the ``toolrepair`` annotation (``--annotate``)."""
        return {**self._base, "choices": [], "toolrepair": self.tally.annotation()}

    def _choice(self, index: Any) -> _Choice:
        state = self._choices.get(index)
        if state is None:
            salvager = None
            if self._registry.profile != "hosted":
                salvager = ContentEvents(content_salvager(self._registry), self._reasoning)
            state = self._choices[index] = _Choice(salvager)
        return state

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """The chunks to send for one upstream chunk (none while text is held)."""
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return [chunk]
        base = self._base = {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
        out: list[dict[str, Any]] = []
        for choice in choices:
            if not isinstance(choice, dict):
                raise MalformedChunk(f"a choice must be an object, not {_shown(choice)}")
            out.extend(self._feed_choice(base, choice))
        if "usage" in chunk:
            if out:
                out[-1]["usage"] = chunk["usage"]
            else:
                out.append({**base, "choices": [], "usage": chunk["usage"]})
        return out

    def close(self) -> list[dict[str, Any]]:
        """What is still held when the stream ends without a finish_reason (cut short)."""
        out: list[dict[str, Any]] = []
        for index, state in self._choices.items():
            if not state.done:
                deltas = [*state.stranded, *self._flush(state)]
                out.extend(
                    {**self._base, "choices": [{"index": index, "delta": d, "finish_reason": None}]} for d in deltas
                )
        return out

    def _feed_choice(self, base: dict[str, Any], choice: dict[str, Any]) -> list[dict[str, Any]]:
        index = _index(choice.get("index"), "a choice's index")
        state = self._choice(index)
        delta: dict[str, Any] = _optional(choice.get("delta"), dict, "a choice's delta") or {}
        native = _optional(delta.get("tool_calls"), list, "delta.tool_calls")
        content = _optional(delta.get("content"), str, "delta.content")
        if state.done and (native or content):
            raise MalformedChunk(f"choice {index} has content or tool calls after its finish_reason")
        head = {k: v for k, v in delta.items() if k not in _REPLACED}
        extra = {k: v for k, v in choice.items() if k not in _CHOICE_OWN}
        if head.get("reasoning_content") and state.reasoned is None:
            state.reasoned = "upstream"
        deltas: list[dict[str, Any]] = []
        if native:
            if state.salvager is not None and not state.committed:
                deltas.extend(self._unsalvaged(state))  # native calls: salvage stops, what it held is text
            try:
                deltas.extend(self._native(state, native))
            except MalformedChunk:
                state.stranded.extend(deltas)  # the text it released still goes out, before the error
                raise
        if content:
            if state.salvager is not None:
                state.raw.append(content)
                deltas.extend(self._events(state, state.salvager.feed(content), early=self._early))
            else:
                deltas.append({"content": content})
        upstream_finish = choice.get("finish_reason")
        if upstream_finish is not None:
            deltas.extend(self._flush(state))
            state.done = True
        deltas = _merge(deltas)
        if head or extra or upstream_finish is not None:
            if not deltas or head.keys() & deltas[0].keys():
                deltas.insert(0, {})  # the upstream's own fields are never overwritten
            deltas[0] = {**head, **deltas[0]}
        chunks = [{**base, "choices": [{"index": index, "delta": d, "finish_reason": None}]} for d in deltas]
        if chunks:
            chunks[0]["choices"][0].update(extra)
            if upstream_finish is not None:
                chunks[-1]["choices"][0]["finish_reason"] = finish_reason(upstream_finish, state.calls)
        return chunks

    def _events(self, state: _Choice, events: list[Any], *, early: bool = False) -> list[dict[str, Any]]:
        """The salvager's events: text before its first call goes out at once; from that call
        on, everything is held until the choice ends (``_release``) or native calls begin,
        unless ``early`` (a model profile, and more of the reply may come): then the call goes
        out at once too."""
        deltas: list[dict[str, Any]] = []
        for event in events:
            if state.held is None and isinstance(event, TextDelta):
                state.shown.append(event.text)
                deltas.append({"content": event.text})
            elif state.held is None and isinstance(event, ReasoningDelta):
                deltas.append(self._reasoned(state, event.text))
            elif state.held is None and early and isinstance(event, ToolCallReady):
                deltas.extend(self._salvaged(state, event))
            else:
                if state.held is None:
                    state.held = []
                state.held.append(event)
        return deltas

    def _release(self, state: _Choice) -> list[dict[str, Any]]:
        """The held events, the choice having ended without native calls: calls and text."""
        held, state.held = state.held or [], None
        deltas: list[dict[str, Any]] = []
        for event in held:
            if isinstance(event, TextDelta):
                deltas.append({"content": event.text})
            elif isinstance(event, ReasoningDelta):
                deltas.append(self._reasoned(state, event.text))
            else:
                deltas.extend(self._salvaged(state, event))
        return deltas

    def _salvaged(self, state: _Choice, event: ToolCallReady) -> list[dict[str, Any]]:
        tool_call = repair_salvaged(event.call, state.salvaged, self._registry, self.tally)
        state.salvaged += 1
        if tool_call is None:  # a refused call is never delivered
            return []
        state.committed = True
        return [self._call_delta(state, tool_call)]

    def _reasoned(self, state: _Choice, text: str) -> dict[str, Any]:
        """Reasoning read from the content, sent as ``reasoning_content`` (as whole replies)."""
        if state.reasoned == "upstream":
            text = REASONING_SEPARATOR + text
        state.reasoned = "salvaged"
        return {"reasoning_content": text}

    def _unsalvaged(self, state: _Choice) -> list[dict[str, Any]]:
        """Native calls began: salvage stops and what it held goes out as the text the upstream
        wrote (as the whole reply keeps its content when it has native calls). O(content)."""
        assert state.salvager is not None
        deltas = self._events(state, state.salvager.close())
        state.salvager = None
        if state.held is not None:
            raw, shown = "".join(state.raw), "".join(state.shown)
            # The text already sent is the raw text's start unless the salvager rewrote it (chat
            # markup): then the rest from the first call's marker on.
            first = next(e for e in state.held if not isinstance(e, (TextDelta, ReasoningDelta)))
            start = len(shown) if raw.startswith(shown) else (first.call.span or (0, 0))[0]
            state.held = None
            if raw[start:]:
                deltas.append({"content": raw[start:]})
        state.raw, state.shown = [], []
        return deltas

    def _call_delta(self, state: _Choice, tool_call: dict[str, Any]) -> dict[str, Any]:
        delta = {"tool_calls": [{"index": state.calls, **tool_call}]}
        state.calls += 1
        return delta

    def _native(self, state: _Choice, pieces: list[Any]) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = []
        for piece in pieces:
            if not isinstance(piece, dict):
                raise MalformedChunk(f"a tool_calls entry must be an object, not {_shown(piece)}")
            index = _index(piece.get("index"), "a tool_calls entry's index")
            fn = _optional(piece.get("function"), dict, "a tool_calls entry's function")
            for key in ("name", "arguments"):
                _optional((fn or {}).get(key), str, f"function.{key}")
            call = state.native.get(index)
            if call is None:
                # A new index: the calls before it are complete.
                deltas.extend(self._emit_native(state))
                call = state.native[index] = _NativeCall()
                state.pending.append(call)
            elif call.sent:  # its call went out when a later index began: not silently dropped
                raise MalformedChunk(f"tool call {index} continued after a later call began")
            if isinstance(piece.get("id"), str):
                call.id = piece["id"]
            if isinstance(piece.get("type"), str):
                call.type = piece["type"]
            if fn is not None:
                if fn.get("name"):
                    call.name.append(fn["name"])
                if fn.get("arguments"):
                    call.arguments.append(fn["arguments"])
        return deltas

    def _emit_native(self, state: _Choice) -> list[dict[str, Any]]:
        pending, state.pending = state.pending, []
        for call in pending:
            call.sent = True
        if state.committed and pending:  # calls read from the text went out first: see the module docstring
            for call in pending:
                self._refuse_after_salvage(call)
            return []
        repaired = (repair_native(call.tool_call(), self._registry, self.tally) for call in pending)
        return [self._call_delta(state, tool_call) for tool_call in repaired if tool_call is not None]

    def _refuse_after_salvage(self, call: _NativeCall) -> None:
        name = "".join(call.name) or None
        self.tally.refuse(
            Note(
                call.id,
                name,
                f"Tool call {name!r} was not delivered: the reply's calls written as text had "
                "already been sent, and one reply takes its calls from one source.",
                "mixed-calls",
            )
        )
        self.tally.outcomes["native", "refused"] += 1

    def _flush(self, state: _Choice) -> list[dict[str, Any]]:
        deltas = self._emit_native(state)
        if state.salvager is not None:
            deltas.extend(self._events(state, state.salvager.close()))
            deltas.extend(self._release(state))
        return deltas


def _merge(deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent text deltas as one."""
    out: list[dict[str, Any]] = []
    for delta in deltas:
        if out and "content" in delta and "content" in out[-1] and len(out[-1]) == 1:
            out[-1] = {"content": out[-1]["content"] + delta["content"]}
        else:
            out.append(delta)
    return out
