"""Dialect family index: the JSON-bodied dialects, in precedence order.

Each reads a JSON payload after its own tokens. Where two share a marker (``{`` for
``generic_json`` and ``functionary``'s first call; ``[`` for ``xlam`` and the markerless
``json``), the stricter reads first and the payload decides.
"""

from __future__ import annotations

from ._base import Dialect
from .cohere import COHERE, COMMAND_R_PLUS
from .functionary import FUNCTIONARY
from .json_blocks import JsonBlock
from .llama import GENERIC_JSON, PYTHON_TAG
from .mistral import MISTRAL
from .tool_calls import TOOL_CALLS
from .xlam import XLAM

__all__ = [
    "APERTUS",
    "DIALECTS",
    "FUNCTOOLS",
    "GIGACHAT",
    "GRANITE",
    "GRANITE_20B",
    "INTERNLM2",
    "LFM2_JSON",
    "LONGCAT",
    "NEMOTRON",
]

# IBM Granite 3.0: `<|tool_call|>[...]`, always an array (3.1's `<tool_call>[...]` is hermes).
GRANITE = JsonBlock("granite", ("<|tool_call|>",), shape="array")
# granite-20b-functioncalling: `<function_call> {...}` per call, one per line, no closing tag.
GRANITE_20B = JsonBlock("granite_20b", ("<function_call>",), close="</function_call>", shape="object")
# InternLM2 / 2.5 / Intern-S1: `<|action_start|><|plugin|>{...}<|action_end|>`; the
# `<|interpreter|>` plugin carries code, not a call.
INTERNLM2 = JsonBlock(
    "internlm2",
    ("<|action_start|>",),
    close="<|action_end|>",
    shape="object",
    lead=(("<|action_start|>", ("<|plugin|>",)),),
)
# NVIDIA Nemotron Nano v2: `<TOOLCALL>[...]</TOOLCALL>`.
NEMOTRON = JsonBlock("nemotron", ("<toolcall>",), close="</toolcall>")
# Meituan LongCat-Flash: hermes with its own tag.
LONGCAT = JsonBlock("longcat", ("<longcat_tool_call>",), close="</longcat_tool_call>")
# Swiss AI Apertus: `<|tools_prefix|>[{"NAME": {...}}]<|tools_suffix|>`.
APERTUS = JsonBlock(
    "apertus",
    ("<|tools_prefix|>",),
    close="<|tools_suffix|>",
    shape="array",
    name_as_key=True,
    reasoning=(("<|inner_prefix|>", "<|inner_suffix|>"),),
)
# GigaChat 3: a role switch `<|message_sep|>\n\nfunction call<|role_sep|>\n{...}`, then EOS
# `</s>`; 3.1: `<|function_call|>{...}`. One call object with `arguments`.
GIGACHAT = JsonBlock(
    "gigachat",
    ("<|message_sep|>", "<|function_call|>"),
    close="</s>",
    shape="object",
    require_arguments=True,
    lead=(("<|message_sep|>", ("function call", "<|role_sep|>")),),
)
# Liquid LFM2: `<|tool_call_start|>[{...}]<|tool_call_end|>`; a pythonic list inside the same
# tokens is another dialect's (None here).
LFM2_JSON = JsonBlock(
    "lfm2_json",
    ("<|tool_call_start|>",),
    close="<|tool_call_end|>",
    shape="array",
    other_shape="none",
    objects_only=True,
)
# Phi-4-mini `functools[...]`, FireFunction v2 ` functools[...]`.
FUNCTOOLS = JsonBlock("functools", ("functools[",), shape="array")

DIALECTS: tuple[Dialect, ...] = (
    MISTRAL,
    PYTHON_TAG,
    GRANITE,
    GRANITE_20B,
    INTERNLM2,
    TOOL_CALLS,
    NEMOTRON,
    LONGCAT,
    COHERE,
    COMMAND_R_PLUS,
    APERTUS,
    GIGACHAT,
    LFM2_JSON,
    FUNCTOOLS,
    GENERIC_JSON,
    FUNCTIONARY,
    XLAM,
)
