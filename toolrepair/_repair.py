"""repair_call: one call in, a call the tool can take (or the message that says why not) out."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ._args import CompiledSchema, check_nesting, compile_schema, decode_arguments
from ._callshape import call_parts
from ._errors import ArgumentError, ToolExecutionError, format_expected
from ._limits import DEFAULT_LIMITS, Limits
from ._log import logger
from ._names import NameTable, suggest_names
from ._spec import ToolInfo, inspect_tool, iter_tools, schema_for_callable
from ._types import Repair, RepairEvent, ToolCall

__all__ = ["Entry", "ToolIndex", "coerce_call", "not_found_error", "repair_call"]


@dataclass(frozen=True, slots=True)
class Entry:
    """A registered tool with everything dispatch needs precomputed once."""

    info: ToolInfo
    schema: CompiledSchema
    expected: dict[str, list[str]]
    # Positional-only parameters must be passed positionally (see _bind.split_positional).
    positional_only: bool
    # False when the schema was derived from this very signature: validation already
    # guarantees the arguments bind, so the per-call `Signature.bind` is skipped.
    needs_bind: bool


def _entry(info: ToolInfo) -> Entry:
    sig = info.signature
    positional_only = sig is not None and any(
        p.kind is inspect.Parameter.POSITIONAL_ONLY for p in sig.parameters.values()
    )
    derived = (
        sig is not None
        and info.call_style == "kwargs"
        and info.target is not None
        and dict(info.schema) == schema_for_callable(info.target, sig)
    )
    try:
        schema = compile_schema(info.schema)
    except (TypeError, ValueError) as exc:  # fail at registration, naming the tool, not per call
        raise ValueError(f"tool {info.name!r}: {exc}") from exc
    return Entry(
        info,
        schema,
        info.expected or {"required": [], "optional": []},
        positional_only,
        sig is not None and info.call_style == "kwargs" and not derived,
    )


class ToolIndex:
    """Immutable look-up tables over a set of tools, built once: exact names, normalised keys.

    Name resolution is O(len(name)) after construction: two dict look-ups and one split.
    """

    __slots__ = ("_entries", "names", "sorted_names", "table")

    def __init__(self, tools: Iterable[Any]) -> None:
        entries: dict[str, Entry] = {}
        for tool in iter_tools(tools):
            info = inspect_tool(tool)
            if info.name in entries:
                raise ValueError(f"two tools are named {info.name!r}")
            entries[info.name] = _entry(info)
        self._entries = entries
        self.table = NameTable(entries)
        self.names: tuple[str, ...] = tuple(entries)
        self.sorted_names: list[str] = sorted(entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def info(self, name: str) -> ToolInfo:
        return self._entries[name].info

    def entry(self, name: str) -> Entry:
        return self._entries[name]

    def schema(self, name: str) -> CompiledSchema:
        return self._entries[name].schema

    def maybe_resolve(self, name: str) -> tuple[str | None, bool]:
        """(offered name, repaired?) or (None, False). Exact names always win; drift to a
        normalised key two tools share never dispatches."""
        return self.table.resolve(name)


def not_found_error(name: str, index: ToolIndex) -> ToolExecutionError:
    """`Tool 'X' not found. Did you mean 'y'? Available tools: [...]`"""
    hints = suggest_names(name, index.names, n=1)
    suggestion = hints[0] if hints else None
    hint = f" Did you mean {suggestion!r}?" if suggestion else ""
    return ToolExecutionError(
        f"Tool {name!r} not found.{hint} Available tools: {index.sorted_names!r}",
        kind="not-found",
        tool_name=name,
        available_tools=index.sorted_names,
        suggestion=suggestion,
    )


def coerce_call(
    index: ToolIndex,
    call: ToolCall | Mapping[str, Any],
    *,
    allow_silent: bool = True,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Repair, bool]:
    """The repair, and whether it was silent (name or arguments changed). With
    ``allow_silent=False`` a call that would need any repair gets the corrective error.

    A salvaged call's ``repairs`` (made while reading it) count exactly like repairs made
    here: a drifted name it carries gets the not-found message under the name the model
    wrote, its payload repairs the corrective argument message."""
    raw_name, raw_args, ident, dialect, span = call_parts(call)
    carried = call.repairs if isinstance(call, ToolCall) else ()
    events: list[RepairEvent] = []
    name, renamed = index.maybe_resolve(raw_name)
    if name is None or (renamed and not allow_silent):
        return Repair(None, not_found_error(raw_name, index), ()), False
    if carried and not allow_silent:
        written = next((e.before for e in carried if e.kind == "name" and isinstance(e.before, str)), None)
        if written is not None:
            return Repair(None, not_found_error(written, index), ()), False
    if renamed:
        message = f"Self-repaired tool name {raw_name!r} -> {name!r}"
        logger().debug(message)
        events.append(RepairEvent("name", message, name, raw_name, name))
    events.extend(carried)
    entry = index.entry(name)
    expected = entry.expected
    try:
        arguments, decode_events = decode_arguments(raw_args, limits=limits)
        arguments, schema_events = entry.schema.apply(arguments, tool=name, max_depth=limits.max_depth)
        if schema_events:  # a string coerced to an array or object may have made it deeper
            check_nesting(arguments, limits.max_depth, finite=False)
    except ArgumentError as exc:
        message = exc.message if exc.message.endswith(".") else exc.message + "."
        error = ToolExecutionError(
            f"{message} {format_expected(name, expected)}",
            kind="arguments",
            tool_name=name,
            expected_parameters=expected,
            path=exc.path,
        )
        error.__cause__ = exc
        return Repair(None, error, tuple(events)), False
    if decode_events:  # most calls decode clean: no generator to run
        events.extend(replace(e, tool=name) if e.tool is None else e for e in decode_events)
    events.extend(schema_events)
    if events and not allow_silent:
        changes = "; ".join(e.message for e in events)
        return Repair(
            None,
            ToolExecutionError(
                f"Arguments for {name!r} need correcting: {changes}. {format_expected(name, expected)}",
                kind="arguments",
                tool_name=name,
                expected_parameters=expected,
            ),
            (),
        ), False
    for event in carried:  # logged as the native name repair is, once the call is accepted
        logger().debug(event.message)
    return Repair(ToolCall(name, arguments, ident, dialect, span), None, tuple(events)), bool(events)


def repair_call(call: ToolCall | Mapping[str, Any], tools: Any) -> Repair:
    """Repair one call against ``tools`` (a ToolRegistry, or any iterable of tools).

    >>> def web_search(query: str) -> str: ...
    >>> repair_call({"name": "WebSearch", "arguments": '{"query": "cats",}'}, [web_search]).call.name
    'web_search'
    """
    repair = getattr(tools, "repair", None)
    if callable(repair) and hasattr(tools, "_index"):
        result: Repair = repair(call)
        return result
    return coerce_call(ToolIndex(tools), call)[0]  # a plain list of tools: the default Limits
