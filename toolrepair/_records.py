"""One record of a log or dataset, read and (for ``fix``) rewritten in one walk.

The shapes, each an assistant turn or several:

- an OpenAI chat completion (``{"choices": [{"message": ...}]}``; each choice is a reply);
- a bare assistant message (``content``, ``tool_calls``, the legacy ``function_call``), an
  Ollama chat response (``{"message": {...}}``), or an Anthropic message (``content`` a list of
  ``text`` / ``tool_use`` blocks, with or without ``"type": "message"``);
- a conversation: a JSON list of messages or ``{"messages": [...]}`` (a fine-tuning record),
  OpenAI-style (``role: "tool"`` results) or Anthropic-style (``tool_result`` blocks);
- ShareGPT: ``{"conversations": [{"from": "gpt", "value": ...}, {"from": "function_call"}, ...]}``;
- read only (no field for native calls, so ``fix`` leaves them): an OpenAI Responses object,
  ``{"text": ...}`` / ``{"response": ...}``, a bare JSON string.

Audit and fix are the same walk: an audit counts what a fix would write. Native calls are
repaired as ``ToolRegistry.repair`` does (unlimited budget, no policy); text is salvaged only
when a reply has no native calls (the project's rule), and each salvaged call is repaired
against the tools' schemas too. A record's own ``tools`` field wins over the tools the job was
given: it is what the model was offered.

A written call gets an id derived from its turn's text, the turn's place in the record and the
call's place in the turn, so any engine fixing the same record writes the same ids.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, TypeGuard

from ._args import check_nesting, decode_arguments
from ._callshape import CALL_KEYS, WRAPPER_KEY, call_parts, read_call_shape
from ._errors import ArgumentError
from ._history import pair_history, resolve_shape
from ._ids import stable_id
from ._limits import DEFAULT_LIMITS, Limits, limits_with
from ._names import NameTable
from ._repair import ToolIndex, coerce_call
from ._repeats import DEFAULT_MAX_REPEATS, call_key
from ._report import Tally
from ._salvage import ANY_TOOL, AnyTool
from ._salvage._engine import SalvageConfig, _allowlist, config_for, salvage_reply
from ._types import ToolCall, ToolSpec

__all__ = ["BadRecord", "RecordFixer", "tool_specs"]

#: Distinct ``tools`` fields whose tables a fixer keeps (a dataset usually has a handful).
TOOLS_CACHE_SIZE = 256
_ASSISTANT = frozenset(("assistant", "model"))
_SHAREGPT_ASSISTANT = frozenset(("gpt", "assistant", "model"))


# Decoded JSON's other types: never a Mapping, answered without the ABC check.
_NOT_MAPS: Final = frozenset((list, str, int, float, bool, type(None)))


def _is_map(obj: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(obj, Mapping)``, with decoded JSON's types answered first (an ABC check
    runs a Python frame, ``ABCMeta.__instancecheck__``)."""
    kind = type(obj)
    return kind is dict or (kind not in _NOT_MAPS and isinstance(obj, Mapping))


class BadRecord(ValueError):
    """A record that is not a shape this module reads; it is counted (under ``kind``) and left
    as it was."""

    def __init__(self, message: str, kind: str = "not-a-record") -> None:
        super().__init__(message)
        self.kind = kind


# -- tools -----------------------------------------------------------------------------------
def tool_specs(definitions: Any, limits: Limits = DEFAULT_LIMITS) -> list[Any]:
    """Tools from OpenAI-style (``{"type": "function", "function": {...}}``), flat
    (``{"name", "parameters"}``) or Anthropic (``{"name", "input_schema"}``) definitions, a JSON
    string of a list of them (ShareGPT's ``tools``), tool names, or any tool ``ToolRegistry``
    takes; raises ``ValueError`` naming the definition that cannot be read.

    >>> [s.name for s in tool_specs([{"type": "function", "function": {"name": "f", "parameters": {}}}])]
    ['f']
    """
    if isinstance(definitions, (str, bytes)):
        try:
            definitions = json.loads(definitions)
        except ValueError as exc:
            raise ValueError(f"tools is not a JSON list of tool definitions: {exc}") from None
    if isinstance(definitions, Mapping) or not isinstance(definitions, Iterable):
        raise ValueError(f"tools is a {type(definitions).__name__}, not a list of tool definitions")
    out: list[Any] = []
    for i, item in enumerate(definitions):
        if isinstance(item, str):
            out.append(ToolSpec(item, {"type": "object"}))
        elif isinstance(item, Mapping):
            out.append(_spec_of_definition(item, i, limits))
        else:
            out.append(item)
    return out


def _spec_of_definition(item: Mapping[str, Any], i: int, limits: Limits) -> ToolSpec:
    fn = item.get("function")
    body = fn if isinstance(fn, Mapping) else item
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool definition {i} has no name")
    schema = next((body[k] for k in ("parameters", "input_schema", "inputSchema") if k in body), None)
    if schema is None:
        schema = {"type": "object"}
    if not isinstance(schema, Mapping):
        raise ValueError(f"tool {name!r}: parameters is a {type(schema).__name__}, not a JSON Schema object")
    _check_schema_depth(name, schema, limits)
    description = body.get("description")
    return ToolSpec(name, schema, description if isinstance(description, str) else "")


def _check_schema_depth(name: str, schema: Mapping[str, Any], limits: Limits) -> None:
    """Refuse a schema nested deeper than any arguments within ``limits`` need, before a
    validator recurses through it (jsonschema recurses once per level and would overflow).

    A level of arguments costs a schema at most two levels of JSON (``properties`` and the
    property's own object), so ``2 * max_depth + 1`` levels describe every value the limit lets
    through. The check is ``check_nesting``'s iterative walk: O(size), no recursion.
    """
    allowed = 2 * limits.max_depth + 1
    try:
        check_nesting(schema, allowed, finite=False)
    except ArgumentError:
        raise ValueError(
            f"tool {name!r}: parameters nest deeper than {allowed} levels (2 * Limits.max_depth + 1)"
        ) from None


class _Tables:
    """What one set of tools needs, built once: the repair index and the salvage allowlist.
    ``index`` is None for ANY_TOOL (names accepted as written, arguments decoded only).
    ``names`` and ``config`` are what ``salvage_text`` would resolve on every reply: the
    allowlist's name table and the default salvage configuration (``salvage_reply`` takes them)."""

    __slots__ = ("allowed", "config", "index", "names")

    def __init__(self, tools: Any, limits: Limits) -> None:
        self.config: SalvageConfig = config_for(None)
        self.names: NameTable | AnyTool = ANY_TOOL
        if tools is ANY_TOOL:
            self.index: ToolIndex | None = None
            self.allowed: tuple[str, ...] | AnyTool = ANY_TOOL
        else:
            self.index = ToolIndex(tool_specs(tools, limits) if tools is not None else ())
            self.allowed = self.index.names
            table = _allowlist(self.allowed)
            assert table is not None  # a tuple of names always has a table (None is ANY_TOOL's)
            self.names = table


# -- the fixer ---------------------------------------------------------------------------------
class RecordFixer:
    """Audits and fixes records against ``tools`` (the tools where a record declares none:
    definitions, names or tools; ``ANY_TOOL`` for any name; None for none). Holds the tables
    of its tools and of the ``tools`` fields it met; pickles as its ``tools`` alone.
    """

    __slots__ = ("_cache", "_default", "_tools", "limits")

    def __init__(self, tools: Any = None, limits: Limits | None = None) -> None:
        self._tools = tools
        self.limits = limits_with(limits)  # DEFAULT_LIMITS for None; not a Limits: TypeError here
        self._default = _Tables(tools, self.limits)
        self._cache: dict[str, _Tables] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (RecordFixer, (self._tools, self.limits))

    def _tables_of(self, obj: Any) -> _Tables:
        declared = obj.get("tools") if _is_map(obj) else None
        if declared is None:
            return self._default
        try:
            key = declared if isinstance(declared, str) else json.dumps(declared, sort_keys=True, default=repr)
        except RecursionError:  # deeper than json's encoder goes: far past any schema depth allowed
            raise BadRecord("tools: nested too deeply to read", "bad-tools") from None
        tables = self._cache.get(key)
        if tables is None:
            try:
                tables = _Tables(declared, self.limits)
            except (TypeError, ValueError) as exc:
                raise BadRecord(f"tools: {exc}", "bad-tools") from None
            if len(self._cache) >= TOOLS_CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = tables
        return tables

    def run(self, obj: Any, tally: Tally, *, write: bool, pair: bool = True) -> bool:
        """Count ``obj`` into ``tally``; with ``write``, fix it in place. True when a fix changes it.
        ``pair``: a conversation's calls and results are then paired as ``repair_history`` pairs them.

        Raises ``BadRecord`` (nothing counted but the caller's bad record) when the shape is
        not one this module reads. O(size of the record) plus salvage's linear scan of its text.
        """
        tables = self._tables_of(obj)
        read = [(turn, *_read(turn)) for turn in _turns(obj)]  # the whole shape before any count
        job = _Job(tables, tally, write, obj, self.limits)
        for turn, calls, text in read:
            job.turn(turn, calls, text)
        if pair and _messages_of(obj) is not None:
            target = obj
            if not write:  # audit counts what a fix would write: pair a copy, fixed first
                target = copy.deepcopy(obj)
                if job.changed:
                    twin = _Job(tables, Tally(), True, target, self.limits)
                    for turn, calls, text in [(turn, *_read(turn)) for turn in _turns(target)]:
                        twin.turn(turn, calls, text)
            _pair_conversation(target, tally, job)
        if job.changed:
            tally.records_changed += 1
        return job.changed

    def fix(self, obj: Any, tally: Tally, *, owned: bool) -> Any | None:
        """The fixed record, or None when nothing changes. ``owned``: ``obj`` may be mutated."""
        if owned:
            return obj if self.run(obj, tally, write=True) else None
        if not self.run(obj, tally, write=False):
            return None
        fixed = copy.deepcopy(obj)
        self.run(fixed, Tally(), write=True)
        return fixed


def _messages_of(obj: Any) -> list[Any] | None:
    """The message list of a conversation record (as ``_turns`` reads it), else None."""
    if isinstance(obj, list):
        return obj
    if _is_map(obj) and not isinstance(obj.get("choices"), list) and isinstance(obj.get("messages"), list):
        return obj["messages"]  # type: ignore[no-any-return]
    return None


def _pair_conversation(obj: Any, tally: Tally, job: _Job) -> None:
    """A conversation's calls and results paired in place, as ``repair_history`` pairs them, each
    change counted in ``by_repair`` as ``history:<kind>``. A history mixing both shapes is left."""
    messages = _messages_of(obj)
    assert messages is not None
    try:
        shape = resolve_shape(messages, "auto")
    except ValueError:
        return
    changes: list[Any] = []
    # A closing assistant call is a fine-tuning record's label, not a lost result: left open.
    paired = pair_history(messages, shape, changes=changes, answer_last=False)
    if changes:
        job.changed = True
        tally.by_repair.update(f"history:{change.kind.value}" for change in changes)
        messages[:] = paired


# -- turns -------------------------------------------------------------------------------------
class _Turn:
    """One assistant turn: where it lives and how its calls are written back."""

    __slots__ = ("after", "choice", "kind", "msg", "owner", "pos")

    def __init__(
        self,
        kind: str,
        msg: Any,
        *,
        owner: Any = None,
        pos: int = 0,
        choice: Any = None,
        after: list[Any] | None = None,
    ) -> None:
        # kind: "openai", "ollama", "anthropic", "sharegpt", "sharegpt_call", "text".
        self.kind, self.msg, self.owner, self.pos, self.choice, self.after = kind, msg, owner, pos, choice, after


def _is_anthropic(msg: Mapping[str, Any]) -> bool:
    if "tool_calls" in msg or "function_call" in msg:
        return False
    content = msg.get("content")
    return msg.get("type") == "message" or isinstance(content, list)


def _turns(obj: Any) -> list[_Turn]:
    if isinstance(obj, str):
        return [_Turn("text", obj)]
    if isinstance(obj, list):
        return _conversation(obj)
    if not _is_map(obj):
        raise BadRecord(f"a JSON {_json_type(obj)} is not a record of model replies")
    for key, is_shape, read in _RECORD_SHAPES:
        value = obj.get(key)
        if is_shape(value):
            return read(obj, value)
    if "content" in obj or "tool_calls" in obj or "function_call" in obj:
        _check_assistant(obj)
        return [_Turn("anthropic" if _is_anthropic(obj) else "openai", obj)]
    for key in ("text", "response"):
        if isinstance(obj.get(key), str):
            return [_Turn("text", obj[key])]
    raise BadRecord("not a recognised record shape (no choices, messages, conversations, content or text)")


def _choice_turns(obj: Mapping[str, Any], choices: list[Any]) -> list[_Turn]:
    out = []
    for choice in choices:
        msg = choice.get("message") if _is_map(choice) else None
        if not _is_map(msg):
            raise BadRecord("a choice without a message")
        _check_assistant(msg)
        out.append(_Turn("openai", msg, choice=choice))
    return out


def _ollama_turns(obj: Mapping[str, Any], message: Mapping[str, Any]) -> list[_Turn]:
    _check_assistant(message)
    return [_Turn("ollama", message)]


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


# The record shapes told by one key, first match wins: (key, test of its value, the turns).
_RECORD_SHAPES: tuple[tuple[str, Callable[[Any], bool], Callable[[Mapping[str, Any], Any], list[_Turn]]], ...] = (
    ("choices", _is_list, _choice_turns),  # a chat completion
    ("messages", _is_list, lambda obj, messages: _conversation(messages)),  # a fine-tuning conversation
    ("conversations", _is_list, lambda obj, turns: _sharegpt(turns)),  # ShareGPT
    ("output", _is_list, lambda obj, output: [_Turn("text", obj)]),  # a Responses object, read by _read_text
    ("message", _is_map, _ollama_turns),  # an Ollama chat reply
)


def _json_type(obj: Any) -> str:
    return {list: "array", dict: "object", int: "number", float: "number", bool: "boolean", type(None): "null"}.get(
        type(obj), type(obj).__name__
    )


def _check_assistant(msg: Mapping[str, Any]) -> None:
    role = msg.get("role")
    if role is not None and role not in _ASSISTANT:
        raise BadRecord(f"a {role!r} message is not a model reply")


def _conversation(messages: list[Any]) -> list[_Turn]:
    anthropic = None
    for msg in messages:
        if not _is_map(msg):
            raise BadRecord(f"a message is a JSON {_json_type(msg)}, not an object")
        if msg.get("role") == "tool" or "tool_calls" in msg or "function_call" in msg:
            anthropic = False
            break
    out = []
    for pos, msg in enumerate(messages):
        if msg.get("role") in _ASSISTANT:
            is_anthropic = _is_anthropic(msg) if anthropic is None else anthropic
            out.append(_Turn("anthropic" if is_anthropic else "openai", msg, owner=messages, pos=pos, after=messages))
    return out


def _sharegpt(turns: list[Any]) -> list[_Turn]:
    out = []
    for pos, turn in enumerate(turns):
        if not _is_map(turn):
            raise BadRecord(f"a conversation turn is a JSON {_json_type(turn)}, not an object")
        who = turn.get("from")
        if who in _SHAREGPT_ASSISTANT or who == "function_call":
            if not isinstance(turn.get("value"), str):
                raise BadRecord(f"a {who!r} turn whose value is not text")
            out.append(_Turn("sharegpt" if who != "function_call" else "sharegpt_call", turn, owner=turns, pos=pos))
    return out


# -- reading a turn ----------------------------------------------------------------------------
def _text_of_content(content: Any, calls: list[Any] | None) -> str:
    """The reply text of a message's ``content``; ``tool_use`` blocks go to ``calls``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRecord(f"content is a JSON {_json_type(content)}, not text or a list of blocks")
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif _is_map(block):
            kind = block.get("type")
            if kind in ("text", "output_text") and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind in ("tool_use", "function_call") and calls is not None:
                calls.append(block)
            # Other blocks (thinking, images, refusals) hold no call and no salvageable text:
            # reasoning is never salvaged.
    return "".join(parts)


def _read(turn: _Turn) -> tuple[list[Any], str]:
    """(native calls, text) of a turn."""
    return _READERS.get(turn.kind, _read_message)(turn.msg)


def _read_text(msg: Any) -> tuple[list[Any], str]:
    """A bare text, or a Responses object, whose items are messages and function calls."""
    if not _is_map(msg):
        return [], msg
    blocks = [
        b
        for item in msg["output"]
        if _is_map(item) and item.get("type") == "message"
        for b in (item.get("content") or [])
    ]
    text = _text_of_content(blocks, None)
    return [i for i in msg["output"] if _is_map(i) and i.get("type") == "function_call"], text


def _read_sharegpt_call(msg: Any) -> tuple[list[Any], str]:
    try:
        value = json.loads(msg["value"])
    except ValueError:
        return [None], ""  # one call that cannot be read
    return (list(value) if isinstance(value, list) else [value]), ""


def _read_message(msg: Any) -> tuple[list[Any], str]:
    """An OpenAI, Ollama or Anthropic message: calls from its content blocks, ``tool_calls``
    and the legacy ``function_call``."""
    calls: list[Any] = []
    text = _text_of_content(msg.get("content"), calls)
    tool_calls = msg.get("tool_calls")
    if isinstance(tool_calls, list):
        calls.extend(tool_calls)
    elif tool_calls is not None:
        raise BadRecord("tool_calls is not a list")
    legacy = msg.get("function_call")
    if _is_map(legacy):
        calls.append(legacy)
    return calls, text


_READERS: dict[str, Callable[[Any], tuple[list[Any], str]]] = {
    "text": _read_text,
    "sharegpt": lambda msg: ([], msg["value"]),
    "sharegpt_call": _read_sharegpt_call,
}


# -- one record's work -------------------------------------------------------------------------
class _Job:
    __slots__ = (
        "changed",
        "index",
        "limits",
        "ordinal",
        "record",
        "repeats",
        "tables",
        "tally",
        "unkeyed",
        "write",
    )

    def __init__(self, tables: _Tables, tally: Tally, write: bool, record: Any, limits: Limits) -> None:
        self.tables, self.index, self.limits = tables, tables.index, limits
        self.tally, self.write, self.record = tally, write, record
        self.changed = False
        self.ordinal = 0  # of the turn in the record
        self.repeats: dict[bytes, int] = {}  # call_key -> calls so far in this record
        # The record's calls not yet keyed, None once they are (see _count_repeat).
        self.unkeyed: list[ToolCall] | None = []

    def _count_repeat(self, call: ToolCall) -> None:
        """Count a call made again past DEFAULT_MAX_REPEATS within the record, keyed as the
        registry keys it (``call_key``: resolved name, canonical arguments).

        A key can pass DEFAULT_MAX_REPEATS only in a record with more calls than that, so the
        first calls wait unkeyed and are keyed together when one more comes: a record's usual
        one or two calls never pay for a canonical dump and a digest. The count is the same."""
        unkeyed = self.unkeyed
        if unkeyed is not None:
            unkeyed.append(call)
            if len(unkeyed) <= DEFAULT_MAX_REPEATS:
                return
            self.unkeyed = None
            for waiting in unkeyed:
                self._key(waiting)
            return
        self._key(call)

    def _key(self, call: ToolCall) -> None:
        key = call_key(call.name, call.arguments)
        seen = self.repeats[key] = self.repeats.get(key, 0) + 1
        if seen > DEFAULT_MAX_REPEATS:
            self.tally.repeated_calls += 1

    def _touch(self) -> None:
        self.changed = True

    def turn(self, turn: _Turn, calls: list[Any], text: str) -> None:
        tally = self.tally
        tally.replies += 1
        self.ordinal += 1
        if not calls:
            self._salvage(turn, text)
            return
        tally.replies_with_native += 1
        fixed = [self._native(call) for call in calls]
        if any(f is not None for f in fixed) and turn.kind != "text":
            self._touch()
            if self.write:
                _write_native(turn, calls, fixed)

    def _salvage(self, turn: _Turn, text: str) -> None:
        """Count (and, when writing, make native) the calls written as text in a turn that has none."""
        tally = self.tally
        tables = self.tables
        # salvage_text with what it resolves per call resolved once (``_Tables``).
        result = salvage_reply(text, tables.names, tables.config, self.limits) if text else None
        if result is None:
            tally.empty_replies += 1
            return
        repaired = self._repair_salvaged(result.calls) if result.calls else None
        self._count_rejections(result.rejected)
        if repaired is None:
            tally.empty_replies += 1
            return
        tally.replies_salvaged += 1
        tally.salvaged_calls += len(repaired)
        for call in repaired:
            tally.by_dialect[call.dialect] += 1
            self._count_repeat(call)
        if turn.kind == "text":
            tally.salvaged_left_as_text += len(repaired)
            return
        self._touch()
        # From the turn's text and its place in the record: unique within the record, the same
        # wherever the record is fixed, and O(text) (no second serialisation of the record).
        prefix = "toolu_" if turn.kind == "anthropic" else "call_"
        source = f"{self.ordinal}\x00{text}"
        # Results already written after the turn keep their ids: the calls take them, in order.
        kept = _result_ids_after(turn) if turn.after is not None else []
        # An audit writes no id: it counts the results they would link, which needs only how
        # many there are (a SHA-256 of the turn's text per call spared).
        ids = [
            kept[k] if k < len(kept) else stable_id(prefix, source, k) if self.write else ""
            for k in range(len(repaired))
        ]
        if self.write:
            _write_salvaged(turn, repaired, ids, result.content.strip())
        if turn.after is not None:
            tally.results_linked += _link_results(turn, ids[len(kept) :], write=self.write)

    def _count_rejections(self, rejected: Iterable[Any]) -> None:
        tally = self.tally
        for rejection in rejected:
            tally.rejected += 1
            tally.by_rejection_reason[rejection.reason] += 1
            tally.refuse_name(rejection.name)

    def _repair_salvaged(self, calls: tuple[ToolCall, ...]) -> list[ToolCall] | None:
        """The salvaged calls repaired against the schemas, or None when one cannot be: then
        the turn is left as text (its content cannot be cut around one call alone)."""
        if self.index is None:
            return list(calls)
        out: list[ToolCall] = []
        failed = 0
        for call in calls:
            repair, _ = coerce_call(self.index, call, allow_silent=True, limits=self.limits)
            if repair.call is None:
                failed += 1
            else:
                out.append(repair.call)
        if not failed:
            return out
        tally = self.tally
        tally.rejected += len(calls)
        tally.by_rejection_reason["invalid-arguments"] += failed
        if len(calls) > failed:
            tally.by_rejection_reason["beside-an-invalid-call"] += len(calls) - failed
        return None

    def _native(self, call: Any) -> ToolCall | None:
        """Count one native call; the repaired call when it needs rewriting, else None."""
        tally = self.tally
        tally.native_calls += 1
        if not _is_map(call):
            tally.unrepairable_calls += 1
            tally.unrepairable["malformed"] += 1
            return None
        if self.index is None:
            return self._native_any(call)
        repair, _ = coerce_call(self.index, call, allow_silent=True, limits=self.limits)
        if repair.call is None:
            error = repair.error
            kind = getattr(error, "kind", "error")
            cause = getattr(error, "__cause__", None)
            if isinstance(cause, ArgumentError):
                kind = f"{kind}:{cause.reason}"
            tally.unrepairable_calls += 1
            tally.unrepairable[kind] += 1
            if kind == "not-found":
                tally.refuse_name(call_parts(call)[0])
            return None
        return self._count_events({e.kind for e in repair.events}, repair.call)

    def _native_any(self, call: Mapping[str, Any]) -> ToolCall | None:
        # ANY_TOOL: every name is accepted as written, so only the arguments can need repair.
        name, raw_args, *_ = call_parts(call)
        tally = self.tally
        if not name:
            tally.unrepairable_calls += 1
            tally.unrepairable["no-name"] += 1
            return None
        try:
            arguments, events = decode_arguments(raw_args)
        except ArgumentError as exc:
            tally.unrepairable_calls += 1
            tally.unrepairable[f"arguments:{exc.reason}"] += 1
            return None
        return self._count_events({e.kind for e in events}, ToolCall(name, arguments))

    def _count_events(self, kinds: set[str], call: ToolCall) -> ToolCall | None:
        tally = self.tally
        self._count_repeat(call)
        if kinds:
            tally.repaired_calls += 1
            tally.by_repair.update(kinds)
            return call
        tally.clean_calls += 1
        return None


# -- writing -----------------------------------------------------------------------------------
def _write_call(call: dict[str, Any], fixed: ToolCall) -> None:
    """The repaired name and arguments into a native call, under the keys the one reader of
    call shapes read them from (a JSON string of arguments stays a string, an object an object)."""
    shape = read_call_shape(call)
    body = call[WRAPPER_KEY] if shape.wrapped else call
    name_key = next((row.name for row in CALL_KEYS if isinstance(body.get(row.name), str)), CALL_KEYS[0].name)
    body[name_key] = fixed.name
    key = shape.arguments_key or CALL_KEYS[0].arguments[0]
    body[key] = fixed.arguments if _is_map(shape.arguments) else json.dumps(fixed.arguments, ensure_ascii=False)


def _sharegpt_calls(calls: list[Any]) -> str:
    """A ShareGPT ``function_call`` value: one call as an object, several as a list."""
    return json.dumps(calls if len(calls) > 1 else calls[0], ensure_ascii=False)


def _write_native(turn: _Turn, calls: list[Any], fixed: list[ToolCall | None]) -> None:
    if turn.kind == "sharegpt_call":
        # ShareGPT's function_call value holds arguments as an object.
        turn.msg["value"] = _sharegpt_calls(
            [c if f is None else {"name": f.name, "arguments": f.arguments} for c, f in zip(calls, fixed, strict=True)]
        )
        return
    for call, repaired in zip(calls, fixed, strict=True):
        if repaired is not None:
            _write_call(call, repaired)


def _write_salvaged(turn: _Turn, calls: list[ToolCall], ids: list[str], content: str) -> None:
    """The salvaged calls into the turn in its own format, the text left around them as its content."""
    write = _SALVAGED_WRITERS.get(turn.kind, _write_salvaged_openai)
    write(turn, calls, ids, content)


def _write_salvaged_sharegpt(turn: _Turn, calls: list[ToolCall], ids: list[str], content: str) -> None:
    """A ``function_call`` turn after the reply (ShareGPT has no ids), which it replaces when no text is left."""
    msg = turn.msg
    new = {
        "from": "function_call",
        "value": _sharegpt_calls([{"name": c.name, "arguments": c.arguments} for c in calls]),
    }
    # Earlier turns may have grown the list: find this turn by identity.
    pos = next(i for i, t in enumerate(turn.owner) if t is msg)
    if content:
        msg["value"] = content
        turn.owner.insert(pos + 1, new)
    else:
        turn.owner[pos] = new


def _write_salvaged_anthropic(turn: _Turn, calls: list[ToolCall], ids: list[str], content: str) -> None:
    """``tool_use`` blocks after the other blocks; the text blocks become one, where the first was."""
    msg = turn.msg
    blocks = msg.get("content")
    kept: list[Any] = []
    text_at = None
    for block in blocks if isinstance(blocks, list) else [blocks]:
        is_text = isinstance(block, str) or (
            _is_map(block) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
        if not is_text:
            kept.append(block)
        elif text_at is None:
            text_at = len(kept)
            if content:
                kept.append({"type": "text", "text": content})
    kept.extend(
        {"type": "tool_use", "id": i, "name": c.name, "input": c.arguments} for c, i in zip(calls, ids, strict=True)
    )
    msg["content"] = kept
    if msg.get("stop_reason") == "end_turn":
        msg["stop_reason"] = "tool_use"


def _write_salvaged_openai(turn: _Turn, calls: list[ToolCall], ids: list[str], content: str) -> None:
    """``tool_calls`` (Ollama's arguments an object, OpenAI's a JSON string) and the text left as content."""
    msg = turn.msg
    as_object = turn.kind == "ollama"
    msg["tool_calls"] = [
        {
            "id": i,
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": c.arguments if as_object else json.dumps(c.arguments, ensure_ascii=False),
            },
        }
        for c, i in zip(calls, ids, strict=True)
    ]
    old = msg.get("content")
    if isinstance(old, list):
        msg["content"] = [{"type": "text", "text": content}] if content else None
    else:
        msg["content"] = content or None
    if turn.choice is not None and turn.choice.get("finish_reason") == "stop":
        turn.choice["finish_reason"] = "tool_calls"


_SALVAGED_WRITERS: dict[str, Callable[[_Turn, list[ToolCall], list[str], str], None]] = {
    "sharegpt": _write_salvaged_sharegpt,
    "anthropic": _write_salvaged_anthropic,
}


def _link_results(turn: _Turn, ids: list[str], *, write: bool) -> int:
    """Give the tool results right after ``turn`` that have no id the new ids, in order; the
    number given (counted alike when not ``write``)."""
    messages = turn.after
    assert messages is not None
    if turn.kind == "anthropic":
        # Anthropic: tool_result blocks in the user message that follows.
        nxt = messages[turn.pos + 1] if turn.pos + 1 < len(messages) else None
        content = nxt.get("content") if _is_map(nxt) and nxt.get("role") == "user" else None
        unlinked = (
            [
                block
                for block in content
                if isinstance(block, dict) and block.get("type") == "tool_result" and not block.get("tool_use_id")
            ]
            if isinstance(content, list)
            else []
        )
        return _give_ids(unlinked, "tool_use_id", ids, write=write)
    # OpenAI: the run of tool messages that follows.
    results = list(itertools.takewhile(lambda msg: msg.get("role") == "tool", messages[turn.pos + 1 :]))
    return _give_ids([msg for msg in results if not msg.get("tool_call_id")], "tool_call_id", ids, write=write)


def _result_ids_after(turn: _Turn) -> list[str]:
    """The distinct ids the tool results right after ``turn`` carry, in order."""
    messages = turn.after
    assert messages is not None
    if turn.kind == "anthropic":
        nxt = messages[turn.pos + 1] if turn.pos + 1 < len(messages) else None
        content = nxt.get("content") if _is_map(nxt) and nxt.get("role") == "user" else None
        found = (
            [b.get("tool_use_id") for b in content if _is_map(b) and b.get("type") == "tool_result"]
            if (isinstance(content, list))
            else []
        )
    else:
        found = [
            m.get("tool_call_id")
            for m in itertools.takewhile(
                lambda msg: _is_map(msg) and msg.get("role") == "tool", messages[turn.pos + 1 :]
            )
        ]
    return list(dict.fromkeys(i for i in found if isinstance(i, str) and i))


def _give_ids(results: list[dict[str, Any]], key: str, ids: list[str], *, write: bool) -> int:
    linked = min(len(results), len(ids))
    if write:
        for result, ident in zip(results, ids[:linked], strict=False):
            result[key] = ident
    return linked
