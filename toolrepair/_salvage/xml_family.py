"""Dialect family index: the pythonic and XML-style dialects, in precedence order.

Where two read one marker, the earlier reads first and the payload decides: Qwen3-Coder takes
``<tool_call>`` bodies that open ``<function=``, GLM those that open with a bare name (Hermes,
registered before this family, takes JSON bodies); the pythonic LFM2 reader takes
``<|tool_call_start|>[name(`` and leaves JSON arrays to the JSON family.
"""

from __future__ import annotations

from ._base import Dialect
from .glm import GLM
from .invoke_xml import ANTHROPIC_XML, DSML, GLIMMER, MINICPM5, MINIMAX_M2, MINIMAX_M3, STEP3
from .kimi_xtml import KIMI_K3
from .name_tag import FUNCTION_NAME_TAG, QWEN_AGENT
from .pythonic import LFM2_PYTHONIC, LLAMA4_PYTHONIC, OLMO3, PYTHONIC
from .qwen_xml import QWEN3_CODER, SEED_OSS

__all__ = ["DIALECTS"]

DIALECTS: tuple[Dialect, ...] = (
    QWEN3_CODER,
    GLM,
    FUNCTION_NAME_TAG,
    SEED_OSS,
    MINIMAX_M2,
    MINIMAX_M3,
    DSML,
    STEP3,
    GLIMMER,
    MINICPM5,
    KIMI_K3,
    QWEN_AGENT,
    ANTHROPIC_XML,  # before OLMo 3: the payload decides (`<invoke` bodies here, pythonic there)
    LLAMA4_PYTHONIC,
    OLMO3,
    LFM2_PYTHONIC,
    PYTHONIC,
)
