"""One error hierarchy; every error carries structured fields as well as its message."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ArgumentError",
    "InputTooLargeError",
    "ToolExecutionError",
    "ToolRepairError",
    "ToolResolutionError",
    "format_expected",
]


def format_expected(tool: str, expected: dict[str, list[str]]) -> str:
    """The parameter hint appended to binding and validation errors.

    >>> format_expected("web_search", {"required": ["query"], "optional": ["limit"]})
    "Expected parameters for 'web_search' — required: ['query'], optional: ['limit']."
    """
    return f"Expected parameters for {tool!r} — required: {expected['required']!r}, optional: {expected['optional']!r}."


class ToolRepairError(Exception):
    """Base of every error toolrepair raises on purpose."""


class ToolExecutionError(ToolRepairError):
    """A call that could not be run, or a tool that failed; the message is for the model.

    ``kind`` says which: ``not-found``, ``arguments``, ``bind``, ``tool-error``, ``denied``,
    ``repeat`` (the same call ran ``max_repeats`` times already).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "tool-error",
        tool_name: str | None = None,
        available_tools: Sequence[str] | None = None,
        suggestion: str | None = None,
        expected_parameters: dict[str, list[str]] | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.tool_name = tool_name
        self.available_tools = list(available_tools) if available_tools is not None else None
        self.suggestion = suggestion
        self.expected_parameters = expected_parameters
        self.path = path

    def __str__(self) -> str:
        return self.message


class ToolResolutionError(ToolRepairError, ValueError):
    """Unknown names in a tool list at start-up (strict mode)."""

    def __init__(self, message: str, *, unknown: list[str], suggestions: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.unknown = unknown
        self.suggestions = suggestions


class ArgumentError(ToolRepairError, ValueError):
    """Arguments that cannot be decoded or do not fit the schema.

    ``reason`` is a short code (``truncated``, ``undecodable``, ``empty``, ``not-an-object``,
    ``too-deep``, ``too-large``, ``type``, ``unknown-key``, ``missing``, ``ambiguous``, ``enum``,
    ``constraint``, ``duplicate-key``);
    ``path`` is the dotted argument path when one applies; ``position`` the offset in the text.
    """

    def __init__(self, message: str, *, reason: str, path: str | None = None, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.path = path
        self.position = position

    def __str__(self) -> str:
        return self.message


class InputTooLargeError(ArgumentError):
    """Argument text beyond ``Limits.max_argument_chars`` (``reason`` is ``too-large``).

    Raised by argument decoding, so a registry reports it as a ``ToolExecutionError`` whose
    ``__cause__`` it is. ``size`` is the input's length (characters, or bytes for bytes input)
    and ``limit`` the bound it passed. Salvage never raises it: a reply beyond
    ``Limits.max_input_chars`` is one ``input-too-large`` Rejection.
    """

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message, reason="too-large")
        self.size = size
        self.limit = limit
