"""Value types: every result toolrepair hands back is a frozen, slotted dataclass."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._safe_text import json_text

__all__ = [
    "BindFailure",
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


@dataclass(frozen=True, slots=True)
class Rejection:
    """A candidate call found in text that was not turned into a call, and why."""

    text: str
    span: tuple[int, int]
    dialect: str
    reason: str
    name: str | None = None


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

    ``kind`` is one of ``name``, ``decode``, ``coerce``, ``rename``, ``salvage``.
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
