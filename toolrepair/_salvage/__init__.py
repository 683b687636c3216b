"""Salvage: tool calls written as text, in every dialect open models emit."""

from __future__ import annotations

from ._base import ANY_TOOL, NEED_MORE, AnyTool, Dialect, Found, Gate, NeedMore, RawCall, ReadContext
from ._engine import SalvagePass, config_for, salvage_text
from ._registry import BUILTIN, DIALECTS
from ._stream import StreamSalvager, TextDelta, ToolCallReady
from .tag import TagDialect

__all__ = [
    "ANY_TOOL",
    "BUILTIN",
    "DIALECTS",
    "NEED_MORE",
    "AnyTool",
    "Dialect",
    "Found",
    "Gate",
    "NeedMore",
    "RawCall",
    "ReadContext",
    "SalvagePass",
    "StreamSalvager",
    "TagDialect",
    "TextDelta",
    "ToolCallReady",
    "config_for",
    "salvage_text",
]
