"""toolrepair: repairs LLM tool calls.

Name drift, broken arguments, tool calls written as text, unserialisable results, and typos
in tool lists: fixed where the intent is unambiguous, or answered with a message that tells
the model exactly what to fix. Sans-I/O: it never calls a model.
"""

from __future__ import annotations

from ._audit import audit_records, fix_record
from ._bind import bind_check
from ._errors import ArgumentError, InputTooLargeError, ToolExecutionError, ToolRepairError, ToolResolutionError
from ._limits import Limits
from ._names import normalize_name, resolve_tool_names, suggest_names
from ._registry import ToolRegistry
from ._repair import repair_call
from ._report import AuditReport
from ._result import serialize_result
from ._salvage import (
    ANY_TOOL,
    DIALECTS,
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
from ._types import BindFailure, Rejection, Repair, RepairEvent, SalvageResult, ToolCall, ToolOutcome, ToolSpec

__version__ = "0.1.0"

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
    "InputTooLargeError",
    "Limits",
    "ModelProfile",
    "NeedMore",
    "RawCall",
    "ReadContext",
    "ReasoningDelta",
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
    "resolve_tool_names",
    "salvage_text",
    "serialize_result",
    "suggest_names",
)
