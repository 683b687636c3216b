"""toolrepair: repairs LLM tool calls.

Name drift, broken arguments, tool calls written as text, unserialisable results, and typos
in tool lists: fixed where the intent is unambiguous, or answered with a message that tells
the model exactly what to fix. Sans-I/O: it never calls a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._bind import bind_check
from ._errors import ArgumentError, InputTooLargeError, ToolExecutionError, ToolRepairError, ToolResolutionError
from ._history import HistoryReport, repair_history
from ._limits import Limits
from ._names import normalize_name, resolve_tool_names, suggest_names
from ._registry import ToolRegistry
from ._repair import repair_call
from ._report import AuditReport
from ._result import serialize_result
from ._salvage import (
    ANY_TOOL,
    MODEL_PROFILES,
    NEED_MORE,
    AnyTool,
    Dialect,
    Found,
    Gate,
    ModelProfile,
    NeedMore,
    RawCall,
    ReadContext,
    ReasoningDelta,
    StreamSalvager,
    TagDialect,
    TextDelta,
    ToolCallReady,
    model_profile,
    salvage_text,
)
from ._types import (
    BindFailure,
    Rejection,
    RejectReason,
    Repair,
    RepairEvent,
    SalvageResult,
    ToolCall,
    ToolOutcome,
    ToolSpec,
)

if TYPE_CHECKING:
    from ._audit import audit_records, fix_record
    from ._salvage import DIALECTS

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The log and dataset functions (and the record walker, log I/O and splicing behind them)
    # are imported on first use: most programs never call them, and importing them is not free.
    if name in ("audit_records", "fix_record"):
        from . import _audit

        return getattr(_audit, name)
    if name == "DIALECTS":  # the table of built-in dialects imports every dialect module
        from . import _salvage

        return _salvage.DIALECTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = (
    "ANY_TOOL",
    "DIALECTS",
    "MODEL_PROFILES",
    "NEED_MORE",
    "AnyTool",
    "ArgumentError",
    "AuditReport",
    "BindFailure",
    "Dialect",
    "Found",
    "Gate",
    "HistoryReport",
    "InputTooLargeError",
    "Limits",
    "ModelProfile",
    "NeedMore",
    "RawCall",
    "ReadContext",
    "ReasoningDelta",
    "RejectReason",
    "Rejection",
    "Repair",
    "RepairEvent",
    "SalvageResult",
    "StreamSalvager",
    "TagDialect",
    "TextDelta",
    "ToolCall",
    "ToolCallReady",
    "ToolExecutionError",
    "ToolOutcome",
    "ToolRegistry",
    "ToolRepairError",
    "ToolResolutionError",
    "ToolSpec",
    "__version__",
    "audit_records",
    "bind_check",
    "fix_record",
    "model_profile",
    "normalize_name",
    "repair_call",
    "repair_history",
    "resolve_tool_names",
    "salvage_text",
    "serialize_result",
    "suggest_names",
)
