"""Tool-call arguments: decoding (lenient JSON, ``_decode``) and schema coercion and
validation (``_schema``). Both halves are pure; every failure is an
:class:`~toolrepair._errors.ArgumentError` with a ``reason`` code.
"""

from ._decode import (
    FINITE_SCAN,
    check_nesting,
    decode_arguments,
    decode_value,
    decode_value_at,
)
from ._schema import CompiledSchema, compile_schema

__all__ = [
    "FINITE_SCAN",
    "CompiledSchema",
    "check_nesting",
    "compile_schema",
    "decode_arguments",
    "decode_value",
    "decode_value_at",
]
