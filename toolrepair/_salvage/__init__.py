"""Salvage: tool calls written as text, in every dialect open models emit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._base import ANY_TOOL, NEED_MORE, AnyTool, Dialect, Found, Gate, NeedMore, RawCall, ReadContext
from ._engine import SalvagePass, config_for, salvage_text
from ._profiles import MODEL_PROFILES, ModelProfile, model_profile
from ._stream import ReasoningDelta, StreamSalvager, TextDelta, ToolCallReady
from .tag import TagDialect

if TYPE_CHECKING:
    from ._registry import BUILTIN, DIALECTS


def __getattr__(name: str) -> Any:
    """``BUILTIN`` and ``DIALECTS`` on first use: the table of built-ins imports every dialect
    module, a third of ``import toolrepair`` if done eagerly (PEP 562)."""
    if name in ("BUILTIN", "DIALECTS"):
        from . import _registry

        return getattr(_registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
