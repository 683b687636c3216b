"""bind_check: will these arguments bind to the tool's signature, and if not, what does it expect?"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ._errors import format_expected
from ._spec import ToolInfo, expected_from_schema, inspect_tool
from ._types import BindFailure

__all__ = ["bind_check", "split_positional"]


def split_positional(sig: inspect.Signature, arguments: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Positional-only parameters cannot be passed by keyword: move them to a list."""
    if not any(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in sig.parameters.values()):
        return [], dict(arguments)
    rest = dict(arguments)
    positional: list[Any] = []
    for p in sig.parameters.values():
        if p.kind is not inspect.Parameter.POSITIONAL_ONLY or p.name not in rest:
            break
        positional.append(rest.pop(p.name))
    return positional, rest


def _schema_failure(info: ToolInfo, arguments: Mapping[str, Any]) -> str | None:
    schema = info.schema
    expected = expected_from_schema(schema)
    missing = [r for r in expected["required"] if r not in arguments]
    if missing:
        return f"missing a required argument: {missing[0]!r}"
    props = schema.get("properties")
    if schema.get("additionalProperties") is False and isinstance(props, Mapping):
        extra = [k for k in arguments if k not in props]
        if extra:
            return f"got an unexpected keyword argument {extra[0]!r}"
    return None


def bind_check(tool: Any, arguments: Mapping[str, Any]) -> BindFailure | None:
    """None when ``arguments`` bind to ``tool``; else the binding error with the expected parameters.

    Only genuine binding failures (missing, extra, misnamed keys) are reported: nothing is
    called. Where no signature or schema can be read, it returns None (fail closed: no
    made-up hint; the tool's own error will speak).

    >>> def web_search(query: str, limit: int = 5) -> str: ...
    >>> print(bind_check(web_search, {"q": "cats"}).message)  # doctest: +NORMALIZE_WHITESPACE
    missing a required argument: 'query'. Expected parameters for 'web_search' — required: ['query'],
    optional: ['limit'].
    """
    info = inspect_tool(tool)
    sig = info.signature
    if sig is None:
        if info.target is not None and info.call_style == "kwargs":
            return None
        problem = _schema_failure(info, arguments)
        if problem is None:
            return None
        expected = expected_from_schema(info.schema)
    else:
        positional, rest = split_positional(sig, arguments)
        try:
            sig.bind(*positional, **rest)
        except TypeError as exc:
            problem = str(exc)
        else:
            return None
        expected = info.expected or {"required": [], "optional": []}
    return BindFailure(f"{problem}. {format_expected(info.name, expected)}", info.name, expected)
