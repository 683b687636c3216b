"""The one reader of call shapes: which keys of a mapping name a call, its arguments and its id.

Native calls (``repair_call``, ``ToolRegistry.run``), logs (``audit_records``, ``fix_record``)
and call-shaped JSON found by salvage all read a call object here, through one table, so a
call means the same thing however it arrived. Reading decodes nothing: arguments come back as
they were written (an object, a JSON string, anything) for the caller's own rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._types import ToolCall

__all__ = ["CALL_KEYS", "ID_KEYS", "WRAPPER_DEPTH", "CallKeys", "CallShape", "call_parts", "read_call_shape"]


@dataclass(frozen=True, slots=True)
class CallKeys:
    """One spelling of a call object: the key of its name and the keys of its arguments."""

    name: str
    arguments: tuple[str, ...]


# One row per spelling, in precedence order. The first row whose name key holds a string names
# the call; its own argument keys are tried first, then every other row's, in table order.
CALL_KEYS: Final[tuple[CallKeys, ...]] = (
    CallKeys("name", ("arguments", "parameters", "args", "input")),
    CallKeys("tool", ("arguments", "parameters", "args", "input")),
    # LangChain; smolagents' JSON blobs; LlamaIndex's ToolSelection (tool_kwargs)
    CallKeys("tool_name", ("tool_input", "tool_arguments", "tool_kwargs")),
    CallKeys("function_name", ("arguments",)),
    CallKeys("function", ("params",)),  # MemGPT / Letta: the name itself under "function"
    CallKeys("action", ("action_input",)),  # ReAct JSON blobs
)
ID_KEYS: Final = ("id", "tool_call_id", "tool_id")  # tool_id: LlamaIndex's ToolSelection
# OpenAI's `{"id", "type": "function", "function": {"name", "arguments"}}`: the call is inside.
WRAPPER_KEY: Final = "function"
# Levels a payload may add above a call's arguments: `{"tool_calls": [{"function": {"name": ...,
# "arguments": {...}}}]}` puts them at level 5. Salvage reads payloads to `max_depth` plus this
# (a safety bound only) and then holds the arguments themselves to `max_depth`, as for a native call.
WRAPPER_DEPTH: Final = 4


def _argument_order(table: tuple[CallKeys, ...]) -> dict[str, tuple[str, ...]]:
    every = tuple(dict.fromkeys(key for row in table for key in row.arguments))
    return {row.name: tuple(dict.fromkeys(row.arguments + every)) for row in table}


_ARGUMENT_KEYS: Final = _argument_order(CALL_KEYS)


@dataclass(frozen=True, slots=True)
class CallShape:
    """What a call object says, undecoded.

    ``name`` is None when no name key holds a string; ``arguments_key`` is the key the
    arguments were read from (None when there is none, and ``arguments`` is then None).
    """

    name: str | None
    arguments: Any
    arguments_key: str | None
    id: str | None
    wrapped: bool


def read_call_shape(obj: Mapping[str, Any]) -> CallShape:
    """The name, arguments and id of a call object, by ``CALL_KEYS``. O(rows).

    >>> read_call_shape({"id": "c1", "function": {"name": "f", "arguments": "{}"}})
    CallShape(name='f', arguments='{}', arguments_key='arguments', id='c1', wrapped=True)
    >>> read_call_shape({"tool_name": "f", "tool_input": {"q": 1}}).arguments
    {'q': 1}
    """
    # Plain loops, no generators: salvage reads every call-shaped payload here (about 1 us).
    ident = None
    for key in ID_KEYS:
        value = obj.get(key)
        if isinstance(value, str):
            ident = value
            break
    inner = obj.get(WRAPPER_KEY)
    # Unwrapped only when the inner mapping names a call: a "function" key may hold other data.
    # (None and dict first: ABC checks are slow, and decoded JSON holds dicts or nothing here.)
    wrapped = False
    if inner is not None and (type(inner) is dict or isinstance(inner, Mapping)):
        for row in CALL_KEYS:
            if isinstance(inner.get(row.name), str):
                wrapped = True
                break
    source: Mapping[str, Any] = inner if wrapped else obj  # type: ignore[assignment]
    for row in CALL_KEYS:
        name = source.get(row.name)
        if isinstance(name, str):
            for key in _ARGUMENT_KEYS[row.name]:
                if key in source:
                    return CallShape(name, source[key], key, ident, wrapped)
            return CallShape(name, None, None, ident, wrapped)
    for key in _ARGUMENT_KEYS[CALL_KEYS[0].name]:  # no name: data, or a call missing its name
        if key in source:
            return CallShape(None, source[key], key, ident, wrapped)
    return CallShape(None, None, None, ident, wrapped)


def call_parts(call: ToolCall | Mapping[str, Any]) -> tuple[str, Any, str | None, str, tuple[int, int] | None]:
    """(name, raw arguments, id, dialect, span) of a ``ToolCall`` or a call object; the name is
    ``""`` when none is given. Raises ``TypeError`` for anything else.

    >>> call_parts({"name": "f", "args": '{"q": 1}'})
    ('f', '{"q": 1}', None, 'native', None)
    """
    if isinstance(call, ToolCall):
        return call.name, call.arguments, call.id, call.dialect, call.span
    if type(call) is not dict and not isinstance(call, Mapping):  # dict first: ABC checks are slow
        raise TypeError(f"a call is a ToolCall or a mapping, not {type(call).__name__}")
    shape = read_call_shape(call)
    return shape.name or "", shape.arguments, shape.id, "native", None
