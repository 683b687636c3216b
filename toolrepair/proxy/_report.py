"""What the proxy did to one reply: counts for the `x-toolrepair` header, notes for the model."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Note", "Tally"]


@dataclass(frozen=True, slots=True)
class Note:
    """A call left as the model wrote it, and the corrective text a reprompt would send."""

    tool_call_id: str | None  # None for a call written as text that was refused
    name: str | None
    message: str
    reason: str = "error"  # ToolExecutionError.kind (not-found, arguments, bind, denied, ...): a bounded set


@dataclass(slots=True)
class Tally:
    """The counts of one reply (mutable while the reply is repaired).

    >>> t = Tally(repaired=1, salvaged=2)
    >>> t.header()
    'repaired=1, salvaged=2, refused=0'
    """

    repaired: int = 0  # calls whose name or arguments were changed
    salvaged: int = 0  # calls recovered from text into tool_calls
    refused: int = 0  # calls left as written: not repairable without guessing
    reprompts: int = 0  # round trips asking the model to correct itself
    tool_choice_unmet: bool = False  # tool_choice required a call and the reply has none
    notes: list[Note] = field(default_factory=list)
    # For /metrics: every key is from a bounded set (never a tool or model name).
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (native|salvaged, passed|repaired|refused)
    repair_kinds: Counter[str] = field(default_factory=Counter)  # RepairEvent.kind
    dialects: Counter[str] = field(default_factory=Counter)  # dialect of each salvaged call

    def refuse(self, note: Note) -> None:
        self.refused += 1
        self.notes.append(note)

    def header(self) -> str:
        parts = [f"repaired={self.repaired}", f"salvaged={self.salvaged}", f"refused={self.refused}"]
        if self.reprompts:
            parts.append(f"reprompts={self.reprompts}")
        if self.tool_choice_unmet:
            parts.append("tool_choice=unmet")
        return ", ".join(parts)

    def annotation(self) -> dict[str, Any]:
        """The `toolrepair` field `--annotate` adds to a body."""
        return {
            "repaired": self.repaired,
            "salvaged": self.salvaged,
            "refused": self.refused,
            "reprompts": self.reprompts,
            "tool_choice_unmet": self.tool_choice_unmet,
            "notes": [{"tool_call_id": n.tool_call_id, "name": n.name, "message": n.message} for n in self.notes],
        }
