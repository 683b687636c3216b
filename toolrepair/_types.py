"""Value types: every result toolrepair hands back is a frozen, slotted dataclass."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ._safe_text import json_text

__all__ = [
    "BindFailure",
    "RejectReason",
    "Rejection",
    "Repair",
    "RepairEvent",
    "SalvageResult",
    "ToolCall",
    "ToolOutcome",
    "ToolSpec",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call to run: the offered name and decoded arguments.

    ``repairs`` are the repairs made while reading a salvaged call (its name as the model
    wrote it, payload repairs): a registry running the call records and budgets them like
    its own. They are provenance, not part of the call: equality ignores them.

    >>> ToolCall("web_search", {"query": "cats"}).to_openai()["function"]["name"]
    'web_search'
    """

    name: str
    arguments: dict[str, Any]
    id: str | None = None
    dialect: str = "native"
    span: tuple[int, int] | None = None
    repairs: tuple[RepairEvent, ...] = field(default=(), compare=False, kw_only=True)

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {
                "name": self.name,
                "arguments": json_text(self.arguments),
            },
        }


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool known by its JSON Schema alone, or a schema wrapping a callable.

    >>> ToolSpec("web_search", {"type": "object", "properties": {"query": {"type": "string"}}}).name
    'web_search'
    """

    name: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    description: str = ""
    fn: Callable[..., Any] | None = None


class RejectReason(StrEnum):
    """Why a candidate call found in text was not turned into a call: a closed set, so an audit
    can count every miss. A member is its string (``RejectReason.TRUNCATED == "truncated"``),
    and prints and compares as one.

    >>> RejectReason("not-offered") is RejectReason.NOT_OFFERED
    True
    """

    NOT_OFFERED = "not-offered"  # the name is not in the allowlist (after normalising)
    UNDECODABLE = "undecodable"  # the call's markup does not read as its format
    UNDECODABLE_ARGUMENTS = "undecodable-arguments"  # the arguments are not one JSON object (or a key twice)
    TRUNCATED = "truncated"  # the reply ends inside the call
    AMBIGUOUS = "ambiguous"  # the text reads as two different calls (a value holding the format's tags)
    # the call (or the Markdown line it is on: the code mask cannot decide) is longer than
    # ``Limits.max_call_chars``
    TOO_LARGE = "too-large"
    TOO_DEEP = "too-deep"  # the arguments nest deeper than ``Limits.max_depth``
    NON_LITERAL = "non-literal"  # a pythonic argument that is an expression, not a literal
    NOT_A_CALL = "not-a-call"  # the marker opened a payload that is not a call (data, a plugin's code)
    MALFORMED_ID = "malformed-id"  # a call id that names no function (Kimi's `functions.NAME:IDX`)
    IN_CODE = "in-code"  # the marker lies inside Markdown code
    IN_REASONING = "in-reasoning"  # the marker lies inside a reasoning region or a content-only channel
    DENIED = "denied"  # refused by the registry's policy
    UNTRUSTED = "untrusted"  # text marked untrusted (a tool's own output) is never salvaged
    INPUT_TOO_LARGE = "input-too-large"  # the whole reply is longer than ``Limits.max_input_chars``

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class Rejection:
    """A candidate call found in text that was not turned into a call, and why.

    ``reason`` is a ``RejectReason`` (a string given is checked against the set: an unknown
    one is a ``ValueError``, so no reason goes uncounted)."""

    text: str
    span: tuple[int, int]
    dialect: str
    reason: RejectReason
    name: str | None = None

    def __post_init__(self) -> None:
        if type(self.reason) is not RejectReason:
            object.__setattr__(self, "reason", RejectReason(self.reason))


@dataclass(frozen=True, slots=True)
class SalvageResult:
    """Calls recovered from text, the text for the user, the model's reasoning, and what was
    refused.

    ``content`` is the text outside accepted calls (and their markers), reasoning regions and
    chat-channel markup; ``reasoning`` the text of the reasoning regions, in order, markers
    excluded (each region stripped at its ends, regions joined by a blank line).
    """

    calls: tuple[ToolCall, ...]
    content: str
    rejected: tuple[Rejection, ...] = ()
    reasoning: str = ""

    def __bool__(self) -> bool:
        return bool(self.calls)


@dataclass(frozen=True, slots=True)
class RepairEvent:
    """One repair toolrepair made silently, for logs and audits.

    ``kind`` is one of ``name``, ``decode``, ``coerce``, ``rename``, ``salvage``, or ``repeat``
    (a call answered instead of run: the same call ran ``max_repeats`` times; ``before`` is that count).
    """

    kind: str
    message: str
    tool: str | None = None
    before: Any = None
    after: Any = None
    path: str | None = None


@dataclass(frozen=True, slots=True)
class BindFailure:
    """Arguments that cannot bind to a tool's signature, with what it expects."""

    message: str
    tool: str
    expected_parameters: dict[str, list[str]] | None = None


@dataclass(frozen=True, slots=True)
class Repair:
    """The result of ``repair_call``: exactly one of ``call`` and ``error`` is set."""

    call: ToolCall | None
    error: Any = None  # ToolExecutionError | None; typed loosely to keep _types below _errors
    events: tuple[RepairEvent, ...] = ()

    def __bool__(self) -> bool:
        return self.call is not None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What running one call gave: the raw value, and the string the model sees."""

    call: ToolCall
    ok: bool
    value: Any
    content: str
    error: Any = None  # ToolExecutionError | None
    events: tuple[RepairEvent, ...] = ()
