"""Salvage: tool calls written as text, in every dialect open models emit."""

from __future__ import annotations

from ._base import ANY_TOOL, NEED_MORE, AnyTool, Dialect, Found, Gate, NeedMore, RawCall, ReadContext
from ._engine import SalvagePass, config_for, salvage_text
from ._profiles import MODEL_PROFILES, ModelProfile, model_profile
from ._registry import BUILTIN, DIALECTS
from ._stream import ReasoningDelta, StreamSalvager, TextDelta, ToolCallReady
from .tag import TagDialect

__all__ = [
    "ANY_TOOL",
    "BUILTIN",
    "DIALECTS",
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
    "SalvagePass",
    "StreamSalvager",
    "TagDialect",
    "TextDelta",
    "ToolCallReady",
    "config_for",
    "model_profile",
    "salvage_text",
]
