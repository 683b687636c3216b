"""toolrepair: repairs LLM tool calls.

Name drift, broken arguments, tool calls written as text, unserialisable results, and typos
in tool lists: fixed where the intent is unambiguous, or answered with a message that tells
the model exactly what to fix. Sans-I/O: it never calls a model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from ._bind import bind_check
from ._errors import ArgumentError, InputTooLargeError, ToolExecutionError, ToolRepairError, ToolResolutionError
from ._limits import Limits
from ._names import normalize_name, resolve_tool_names, suggest_names
from ._registry import ToolRegistry
from ._repair import repair_call
from ._result import serialize_result
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
    from ._history import HistoryReport, repair_history
    from ._report import AuditReport
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

__version__ = "0.1.0"


# Names imported on first use, by the module that defines them: most programs never call the
# log tools or repair a history, and one that repairs only native calls never salvages a text;
# importing each is not free (the salvage engine alone is about half of `import toolrepair`).
_LAZY: Final[dict[str, str]] = {
    **dict.fromkeys(("audit_records", "fix_record"), "_audit"),
    **dict.fromkeys(("HistoryReport", "repair_history"), "_history"),
    "AuditReport": "_report",
    **dict.fromkeys(
        (
            "DIALECTS",
            "ANY_TOOL",
            "MODEL_PROFILES",
            "NEED_MORE",
            "AnyTool",
            "Dialect",
            "Found",
            "Gate",
            "ModelProfile",
            "NeedMore",
            "RawCall",
            "ReadContext",
            "ReasoningDelta",
            "StreamSalvager",
            "TagDialect",
            "TextDelta",
            "ToolCallReady",
            "model_profile",
            "salvage_text",
        ),
        "_salvage",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
