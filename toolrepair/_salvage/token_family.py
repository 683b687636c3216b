"""Dialect family index: the special-token dialects, in precedence order.

DeepSeek V3 reads before V3.1 (they share tokens; the payload decides, and Step-3's
``<steptml:invoke>`` bodies under the same tokens fall through to the XML family).
"""

from __future__ import annotations

from ._base import Dialect
from .deepseek import DEEPSEEK_V3, DEEPSEEK_V31
from .gemma import FUNCTIONGEMMA, GEMMA4
from .harmony import HARMONY
from .kimi import KIMI_K2

__all__ = ["DIALECTS"]

DIALECTS: tuple[Dialect, ...] = (DEEPSEEK_V3, DEEPSEEK_V31, KIMI_K2, HARMONY, GEMMA4, FUNCTIONGEMMA)
